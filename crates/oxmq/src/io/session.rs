//! A session: one peer connection of a socket, as the I/O thread runs it.
//!
//! A session owns the I/O side of the socket's pipe and, while connected, the byte stream with
//! its ZMTP state. Its life: (connect side) resolve → connect → handshake → active, and back to
//! a reconnect timer whenever the connection drops; (accept side) handshake → active → gone.
//!
//! The data path: bytes read from the stream are parsed in place (`zmtp::parse_header`); small
//! bodies are copied into inline [`Msg`]s, large ones are split off the receive buffer without
//! copying; whole messages are written to the pipe and published once per read batch. Outbound,
//! messages are taken from the pipe and encoded into one batch buffer (large bodies are written
//! from their own memory with `writev`), so one system call carries many messages under load.
//!
//! Nothing accepted is lost on close: when the socket closes its pipe end, the session keeps
//! writing what is queued (reconnecting if it must) until the pipe is drained or LINGER expires.
//!
//! Concerns in submodules with small hooks here: `raw` (a STREAM socket's session skips ZMTP
//! and moves plain bytes), `heartbeat` (PING/PONG timers; the data path only counts reads),
//! `close` (a closing tcp connection ends without a reset that would lose its last bytes),
//! `legacy` (ZMTP 1.0/2.0 peers), `reconnect` (when a connecting session tries again and when
//! it gives up) and `hello` (the messages a connection opens and closes with).

mod close;
pub(super) mod heartbeat;
mod hello;
mod legacy;
mod raw;
mod reconnect;

use super::{pace, Ctx, IoThread, Timer, TimerKey};
use crate::monitor::event as mon;
use crate::msg::{Msg, COMMAND, INLINE_CAP, ROUTING_ID};
use crate::pipe::{pipe, PipeEnd, PipeId, Read, Wake};
use crate::socket::options::Options;
use crate::socket::stats::SessionCounters;
use crate::socket::{hwm, SocketShared, SocketType};
use crate::transport::endpoint::{Endpoint, Host};
use crate::transport::resolve::{self, ConnectAddrs};
use crate::transport::socks::Socks5;
use crate::transport::stream::Stream;
use bytes::{Buf, BytesMut};
use mio::{Interest, Token};
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Read buffer allocation unit.
const READ_CHUNK: usize = 64 * 1024;
/// Read buffer allocation unit once large frames arrive.
const LARGE_READ_CHUNK: usize = 256 * 1024;
/// Stop encoding once this much is batched (the kernel takes it in one write).
const WRITE_BATCH: usize = 64 * 1024;
/// Bodies at least this large are written from their own memory instead of being copied.
const ZERO_COPY_MIN: usize = 8 * 1024;
/// Large bodies gathered into one `writev` at most (bounded by the iovec array).
const MAX_BIGS: usize = 16;
/// Bytes of large bodies gathered into one `writev` at most.
const BIG_BATCH: usize = 1024 * 1024;
/// Bytes read per turn before yielding to other sessions.
const READ_BUDGET: usize = 1024 * 1024;
/// Frames one multi-part message may have before the peer is considered hostile.
const MAX_PARTS: usize = 1 << 20;

struct Conn {
    stream: Stream,
    handshake: Option<zmtp::Handshake>,
    version: zmtp::Version,
    rx: BytesMut,
    /// Mid-size bodies (over `INLINE_CAP`, up to `chunk::MAX_PIECE`) are copied out of `rx`
    /// into pieces of this connection's chunk: a copy and a local count instead of splitting
    /// each body off `rx` (an advance, a split with its atomic increment and a freeze, then a
    /// vtable call and an atomic decrement to drop it), which cost more than the copy.
    carver: crate::chunk::Carver,
    tx: Vec<u8>,
    tx_pos: usize,
    /// Large bodies written straight from their messages, each with the `tx` offset it goes
    /// after (its header is the last thing in `tx` before that offset).
    bigs: std::collections::VecDeque<(usize, Msg)>,
    /// Bytes of the first large body already written.
    big_off: usize,
    /// Bytes queued in `bigs`, not yet written.
    big_bytes: usize,
    /// Receive buffer growth step: larger once large frames are seen, so one read carries
    /// several of them (small-message connections keep the small footprint).
    read_chunk: usize,
    /// Receive buffers given up while large bodies split off them were still held, reused
    /// once the application has dropped those bodies (see [`Conn::grow_rx`]), each with the
    /// size of its allocation.
    spare_rx: Vec<(BytesMut, usize)>,
    /// The size of `rx`'s allocation when `grow_rx` made or reclaimed it (None: grown by
    /// `reserve`, size unknown, never kept as a spare).
    rx_alloc: Option<usize>,
    writable: bool,
    /// Frames of an incoming multi-part message not yet complete.
    partial: Vec<Msg>,
    /// A complete message the pipe had no room for.
    held: Vec<Msg>,
    /// More input may be waiting in the kernel (we stopped before EAGAIN).
    read_pending: bool,
    /// We are in the middle of sending a multi-part message.
    out_mid: bool,
    /// CURVE: seals every outgoing frame and opens every incoming one (None for NULL/PLAIN).
    cipher: Option<zmtp::Cipher>,
    /// The ZAP request in flight while the handshake waits for a verdict.
    zap: Option<super::zap::ZapClient>,
    /// The peer's address (tcp: its IP), for ZAP and the Peer-Address property.
    peer_address: String,
    /// The peer's routing id once handshaken (for monitor events).
    peer_id: bytes::Bytes,
    /// The errno that ended the connection (EPIPE for an orderly close), for monitor events.
    io_errno: i32,
    /// Heartbeat state; the data path only counts reads into it.
    beat: heartbeat::Beat,
    /// A command frame the application thread's direct read decoded: commands need the I/O
    /// thread (timers, replies), which handles it before decoding further.
    deferred: Option<Msg>,
    /// The application thread's direct read met a broken stream or a hostile frame: the I/O
    /// thread ends the connection at its next turn.
    failed: bool,
    /// An application thread waits on this connection's input itself (`direct_arm`): the I/O
    /// thread's epoll registration does not report it meanwhile.
    armed: bool,
    /// The events the I/O thread's registration reports now (`READ_EVENTS`, `WRITE_EVENTS`).
    interest: u32,
    /// Closing: everything is written and the write side shut down; the connection waits to
    /// close without a reset (see `close`).
    fin_sent: bool,
}

/// epoll events for input (what mio's READABLE registers).
const READ_EVENTS: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;
/// epoll events for room to write.
const WRITE_EVENTS: u32 = libc::EPOLLOUT as u32;

impl Conn {
    /// Brings the I/O thread's registration in line with what it needs: input unless an
    /// application thread waits on it, room to write only while a write is blocked. A change
    /// that adds an event already ready queues it, so nothing is missed; and since room to
    /// write is asked for only after EAGAIN, giving input back never queues a spurious
    /// writable event (which would wake the I/O thread for nothing).
    fn update_interest(&mut self, io: &IoThread, token: usize) -> bool {
        let want = if self.armed { 0 } else { READ_EVENTS } | if self.writable { 0 } else { WRITE_EVENTS };
        if want == self.interest {
            return true;
        }
        let ok = io.set_interest(self.stream.fd(), token, want).is_ok();
        if ok {
            self.interest = want;
        }
        ok
    }
}

enum State {
    /// Waiting for the reconnect timer.
    Idle,
    Resolving,
    /// The tcp connect is under way, then (through a SOCKS_PROXY) the proxy's handshake.
    Connecting(Stream, Option<Box<Socks5>>),
    Connected(Box<Conn>),
}

pub(crate) struct Session {
    token: usize,
    serial: u64,
    endpoint_id: u64,
    socket: Arc<SocketShared>,
    options: Box<Options>,
    /// Where to connect (None on the accept side).
    target: Option<(Endpoint, String)>,
    /// The addresses of the current (or last) connect attempt.
    addrs: Option<ConnectAddrs>,
    /// How monitor events name this connecting session once its first connection has ended:
    /// by the address that connection went to, as libzmq's new connecter does (it is made
    /// from the resolved address); until then, and with a SOCKS proxy, by the endpoint as
    /// given (`tcp://src;dst` included).
    event_addr: Option<SocketAddr>,
    ivl: i32,
    state: State,
    pipe: Option<PipeEnd>,
    /// The pipe has connected at least once (a later connection is a hiccup).
    connected_before: bool,
    /// Drop outbound frames until a message boundary (the previous connection died mid-message).
    skip_to_boundary: bool,
    /// The socket closed its end: deliver what is queued, then go.
    closing: bool,
    /// The pipe reported closed and empty: nothing more to send.
    drained: bool,
    /// The owner registered for this session's pipe ends.
    owner: Arc<SessionOwner>,
    /// When bytes were last written, and the connection's read count then: the application
    /// writes directly only to a quiet connection or in an exchange, so a stream keeps the I/O
    /// thread's batching.
    last_write: Instant,
    reads_at_write: u64,
    /// The handshake's deadline, cancelled once the handshake is over or the connection gone
    /// (an accept churn would otherwise keep one timer per connection for HANDSHAKE_IVL).
    handshake_timer: Option<TimerKey>,
    /// This session's counters (see `socket/stats.rs`): written only by whoever drives it.
    counters: Arc<SessionCounters>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.socket.io_stats.retire(&self.counters);
    }
}

impl Session {
    pub(crate) fn serial(&self) -> u64 {
        self.serial
    }
    pub(crate) fn endpoint_id(&self) -> u64 {
        self.endpoint_id
    }
    pub(crate) fn socket_id(&self) -> u64 {
        self.socket.id
    }

    pub(crate) fn owner(&self) -> &Arc<SessionOwner> {
        &self.owner
    }

    /// Raises a monitor event about this connection: one atomic load unless monitored.
    #[inline]
    fn event(&self, ev: u64, value: u64) {
        if self.socket.monitor.wants(ev) {
            self.event_slow(ev, value);
        }
    }

    #[cold]
    fn event_slow(&self, ev: u64, value: u64) {
        let (stream, peer_id) = match &self.state {
            State::Connected(c) => (Some(&c.stream), &c.peer_id[..]),
            State::Connecting(s, _) => (Some(s), &[][..]),
            _ => (None, &[][..]),
        };
        let target = self.target.as_ref().map(|(_, given)| (given.as_str(), self.event_addr));
        crate::monitor::session_event(&self.socket.monitor, ev, value, stream, target, peer_id);
    }

    /// The connection's descriptor, for monitor events.
    fn fd(&self) -> u64 {
        match &self.state {
            State::Connected(c) => c.stream.fd() as u64,
            State::Connecting(s, _) => s.fd() as u64,
            _ => crate::monitor::NO_FD,
        }
    }

    /// The application thread's send path (see [`SessionOwner`]): writes what the socket
    /// flushed, on the calling thread. Returns false when the I/O thread must handle it
    /// instead: not connected yet, closing, or the write failed (the I/O thread meets the same
    /// error and runs the reconnect logic, which needs its event loop).
    fn direct_write(&mut self) -> bool {
        if self.closing {
            return false;
        }
        let reads = match &self.state {
            State::Connected(c) if c.handshake.is_none() && c.writable => c.beat.reads,
            _ => return false,
        };
        // A stream is the I/O thread's to batch; a reply, an answer or a sporadic message goes direct
        // (see `pace`).
        let now = Instant::now();
        if pace::write_pending() {
            // Behind the thread's own write that the I/O thread has yet to make (see `pace`).
            pace::handed_over(now);
            return false;
        }
        // A publisher reads only subscriptions: what it writes next answers none of them.
        let publishes = matches!(self.socket.kind, SocketType::Pub | SocketType::XPub | SocketType::Radio);
        let reply = (reads != self.reads_at_write && !publishes) || pace::answering();
        let since_write = now.saturating_duration_since(self.last_write);
        if !pace::may_write_direct(reply, since_write, pace::since_direct(now), pace::rest_of_round()) {
            pace::handed_over(now);
            return false;
        }
        let ok = self.write_side(true).is_ok();
        // Stamped when the write is over: a write can take longer than QUIET (loopback runs
        // the receiver's protocol processing inside it), and stamped at its start, the
        // thread's next message would find it quiet again and write directly too, one
        // system call per message to each connection of a round.
        pace::wrote_direct(Instant::now());
        ok
    }

    /// A waiting receiver takes this connection's input over (see [`Session::direct_read`]):
    /// returns the descriptor to poll, and the I/O thread's registration stops reporting input
    /// until [`Session::direct_disarm`]. None while only the I/O thread may read.
    fn direct_arm(&mut self) -> Option<std::os::fd::RawFd> {
        let token = self.token;
        let State::Connected(c) = &self.state else { return None };
        if !self.direct_readable(c) {
            return None;
        }
        let State::Connected(c) = &mut self.state else { return None };
        c.armed = true;
        if !c.update_interest(&self.owner.io, token) {
            c.armed = false;
            return None;
        }
        Some(c.stream.fd())
    }

    /// The receiver stopped waiting: input is the I/O thread's again (any that arrived
    /// meanwhile is reported to it at once).
    fn direct_disarm(&mut self) {
        if let State::Connected(c) = &mut self.state {
            if c.armed {
                c.armed = false;
                c.update_interest(&self.owner.io, self.token);
            }
        }
    }

    /// The descriptor a publisher's sending thread polls before it reads this connection's
    /// input itself (`socket/catchup.rs`), while it may.
    fn catch_up_fd(&self) -> Option<std::os::fd::RawFd> {
        let State::Connected(c) = &self.state else { return None };
        self.direct_readable(c).then(|| c.stream.fd())
    }

    fn direct_readable(&self, c: &Conn) -> bool {
        !self.closing
            && self.socket.kind != SocketType::Stream
            && c.handshake.is_none()
            && c.held.is_empty()
            && c.deferred.is_none()
            && !c.failed
            && self.pipe.is_some()
    }

    /// The application thread's receive path (see [`SessionOwner`]): a receiver with nothing
    /// queued reads and decodes this connection's input itself, so a message that arrives while
    /// it waits costs one wake-up (its own) instead of two (the I/O thread's, then its). The
    /// I/O thread still owns the connection: whatever this path cannot finish (a command frame,
    /// a full pipe, the end of the stream, an error) is left in the session's state and handed
    /// to it with a command. Returns true if it read anything.
    fn direct_read(&mut self) -> bool {
        let State::Connected(c) = &self.state else { return false };
        if !self.direct_readable(c) {
            return false;
        }
        let mut read = false;
        let mut handoff = false;
        let mut drained;
        let mut budget = READ_BUDGET;
        loop {
            let State::Connected(c) = &mut self.state else { break };
            if c.rx.capacity() - c.rx.len() < 4096 {
                c.grow_rx(c.read_chunk);
            }
            let room = c.rx.capacity() - c.rx.len();
            match c.stream.read_into(&mut c.rx) {
                Ok(0) => {
                    // The end of the stream: the I/O thread closes the connection (what was
                    // decoded before it is in the pipe already).
                    c.io_errno = libc::EPIPE;
                    c.failed = true;
                    handoff = true;
                    break;
                }
                Ok(n) => {
                    // A read that left room took all the socket had: decode it and stop,
                    // without the read that would only say EAGAIN (the waiter's poll is
                    // level-triggered, and input given back to the I/O thread is reported
                    // to it at once).
                    drained = n < room;
                    read = true;
                    budget = budget.saturating_sub(n);
                    self.counters.wire_in(n);
                    self.counters.direct_read();
                    c.beat.reads += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    c.io_errno = e.raw_os_error().unwrap_or(libc::EIO);
                    c.failed = true;
                    handoff = true;
                    break;
                }
            }
            if self.decode(None).is_err() {
                if let State::Connected(c) = &mut self.state {
                    c.failed = true;
                }
                handoff = true;
                break;
            }
            let State::Connected(c) = &self.state else { break };
            if !self.direct_readable(c) || budget == 0 {
                handoff = true; // a command, a full pipe, or a long stream: over to the I/O thread
                break;
            }
            if drained {
                break;
            }
        }
        if let State::Connected(c) = &mut self.state {
            c.release_rx();
        }
        if let Some(p) = &mut self.pipe {
            p.flush();
            p.publish_written();
        }
        if handoff {
            self.direct_disarm();
            let State::Connected(c) = &mut self.state else { return read };
            c.read_pending = true;
            // A full pipe alone needs no command: the pipe asked its reader for a write
            // activation (`check_write`), which resumes the input (`direct_resume`, or the
            // I/O thread).
            let full_only = !c.held.is_empty() && !c.failed && c.deferred.is_none() && budget > 0;
            if !full_only {
                let id = PipeId { slot: self.token, serial: self.serial };
                self.owner.io.send(super::IoCmd::Pipe(id, Wake::Write));
            }
        }
        read
    }

    /// The application thread's side of a write activation: its socket read the inbound pipe
    /// down from the HWM where this session stopped. Rather than wake the I/O thread to resume
    /// (an eventfd write and two context switches per low-water mark of a stream that keeps
    /// the pipe full), the reading thread delivers the held message, decodes what is buffered
    /// and reads on, as [`Session::direct_read`]. False when the I/O thread must do it.
    fn direct_resume(&mut self) -> bool {
        {
            let State::Connected(c) = &mut self.state else { return false };
            if self.closing
                || c.handshake.is_some()
                || c.failed
                || c.deferred.is_some()
                || self.socket.kind == SocketType::Stream
            {
                return false;
            }
            let Some(p) = &mut self.pipe else { return false };
            if !deliver_held(c, p) {
                return true; // still full: the reader's next activation comes here again
            }
        }
        let decoded = self.decode(None);
        if let Some(p) = &mut self.pipe {
            p.flush();
            p.publish_written();
        }
        let State::Connected(c) = &mut self.state else { return false };
        if decoded.is_err() {
            c.failed = true;
            return false;
        }
        if c.deferred.is_some() {
            return false;
        }
        if !c.held.is_empty() {
            return true; // full again: as above
        }
        self.counters.direct_resume();
        self.direct_read();
        true
    }

    pub(crate) fn accepted(
        ctx: &mut Ctx<'_>,
        token: usize,
        serial: u64,
        listener_id: u64,
        socket: Arc<SocketShared>,
        options: Box<Options>,
        stream: Stream,
    ) -> Option<Session> {
        let ivl = options.reconnect_ivl;
        let counters = socket.io_stats.register();
        let mut s = Session {
            token,
            serial,
            endpoint_id: listener_id,
            socket,
            options,
            target: None,
            addrs: None,
            event_addr: None,
            ivl,
            state: State::Idle,
            pipe: None,
            connected_before: false,
            skip_to_boundary: false,
            closing: false,
            drained: false,
            owner: SessionOwner::new(ctx.io.clone()),
            last_write: Instant::now(),
            reads_at_write: 0,
            handshake_timer: None,
            counters,
        };
        if s.begin_handshake(ctx, stream, false) {
            s.event(mon::ACCEPTED, s.fd());
            s.flush_handshake(ctx);
            Some(s)
        } else {
            None
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn connecting(
        ctx: &mut Ctx<'_>,
        token: usize,
        serial: u64,
        id: u64,
        endpoint: Endpoint,
        given: String,
        socket: Arc<SocketShared>,
        options: Box<Options>,
        pipe: Option<PipeEnd>,
    ) -> Session {
        let owner = SessionOwner::new(ctx.io.clone());
        if let Some(p) = &pipe {
            p.set_owner(owner.clone(), PipeId { slot: token, serial });
        }
        let ivl = options.reconnect_ivl;
        let counters = socket.io_stats.register();
        Session {
            token,
            serial,
            endpoint_id: id,
            socket,
            options,
            target: Some((endpoint, given)),
            addrs: None,
            event_addr: None,
            ivl,
            state: State::Idle,
            pipe,
            connected_before: false,
            skip_to_boundary: false,
            closing: false,
            drained: false,
            owner,
            last_write: Instant::now(),
            reads_at_write: 0,
            handshake_timer: None,
            counters,
        }
    }

    // ----- connecting -----

    /// Starts (or restarts) a connection attempt. Returns false if the session is finished.
    pub(crate) fn start_connect(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let Some(endpoint) = self.connect_endpoint() else {
            // A SOCKS_PROXY that is no tcp address: nothing to connect to, as an unknown host.
            self.event(mon::CLOSED, crate::monitor::NO_FD);
            return self.schedule_reconnect(ctx);
        };
        match endpoint {
            Endpoint::Tcp { host, port, source } if resolve::needs_lookup(&host, source.as_ref()) => {
                // Resolve off the I/O thread: a slow DNS answer must not stall other
                // connections. Re-resolved on every attempt so a moved peer is found.
                self.state = State::Resolving;
                let io = ctx.io.clone();
                let (token, serial, ipv6) = (self.token, self.serial, self.options.ipv6);
                let spawned = std::thread::Builder::new().name("oxmq-resolve".into()).spawn(move || {
                    let addrs = resolve::lookup(&host, port, source.as_ref(), ipv6);
                    io.send(super::IoCmd::Resolved { token, serial, addrs });
                });
                if spawned.is_err() {
                    self.schedule_reconnect(ctx);
                }
                true
            }
            Endpoint::Tcp { host, port, source } => {
                let addrs = resolve::lookup(&host, port, source.as_ref(), self.options.ipv6);
                self.resolved_now(ctx, addrs)
            }
            Endpoint::Ipc(path) => {
                let r = if let Some(name) = path.strip_prefix('@') {
                    use std::os::linux::net::SocketAddrExt;
                    std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
                        .and_then(|a| std::os::unix::net::UnixStream::connect_addr(&a))
                } else {
                    std::os::unix::net::UnixStream::connect(&path)
                };
                match r {
                    Ok(s) => {
                        let _ = s.set_nonblocking(true);
                        let stream = Stream::Ipc(mio::net::UnixStream::from_std(s));
                        if self.begin_handshake(ctx, stream, false) {
                            self.event(mon::CONNECTED, self.fd());
                            self.flush_handshake(ctx)
                        } else {
                            self.schedule_reconnect(ctx)
                        }
                    }
                    Err(e) => {
                        self.event(mon::CLOSED, crate::monitor::NO_FD);
                        self.connect_failed(ctx, e.raw_os_error())
                    }
                }
            }
            Endpoint::Inproc(_) => false,
        }
    }

    /// A resolver thread's answer for this session's attempt (see `start_connect`).
    pub(crate) fn resolved(&mut self, ctx: &mut Ctx<'_>, addrs: crate::error::Result<ConnectAddrs>) -> bool {
        if !matches!(self.state, State::Resolving) {
            return true;
        }
        self.resolved_now(ctx, addrs)
    }

    /// Connects to what resolving found. Nothing found (an unknown host, a source with no
    /// address: ENODEV) is a failed attempt with no socket, so no CLOSED event, as libzmq's
    /// connecter: it tries again after RECONNECT_IVL.
    fn resolved_now(&mut self, ctx: &mut Ctx<'_>, addrs: crate::error::Result<ConnectAddrs>) -> bool {
        match addrs {
            Ok(a) => {
                self.addrs = Some(a);
                self.connect_addr(ctx)
            }
            Err(_) => self.schedule_reconnect(ctx),
        }
    }

    fn connect_addr(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let Some(ConnectAddrs { dest, source }) = self.addrs else { return self.schedule_reconnect(ctx) };
        match connect_tcp(dest, &self.options, source) {
            Ok(s) => {
                let mut stream = Stream::Tcp(s);
                if ctx.registry.register(&mut stream, Token(self.token), Interest::READABLE | Interest::WRITABLE).is_err() {
                    return self.schedule_reconnect(ctx);
                }
                let socks = match self.socks_handshake() {
                    Ok(s) => s,
                    Err(_) => {
                        let _ = ctx.registry.deregister(&mut stream);
                        self.event(mon::CLOSED, crate::monitor::NO_FD);
                        return self.schedule_reconnect(ctx);
                    }
                };
                self.state = State::Connecting(stream, socks);
                self.event(mon::CONNECT_DELAYED, libc::EINPROGRESS as u64);
                true
            }
            Err(e) => {
                self.event(mon::CLOSED, crate::monitor::NO_FD);
                self.connect_failed(ctx, e.raw_os_error())
            }
        }
    }

    /// Where the stream goes: the endpoint, or for tcp with a SOCKS_PROXY set, the proxy (None
    /// when that is no tcp address). Its `src;` is the source bound before connecting: with a
    /// proxy, the proxy address's, and the endpoint's is not used.
    fn connect_endpoint(&self) -> Option<Endpoint> {
        let (endpoint, _) = self.target.as_ref()?;
        if self.options.socks_proxy.is_empty() || !matches!(endpoint, Endpoint::Tcp { .. }) {
            return Some(endpoint.clone());
        }
        match Endpoint::parse(&format!("tcp://{}", self.options.socks_proxy), false) {
            Ok(e @ Endpoint::Tcp { .. }) => Some(e),
            _ => None,
        }
    }

    /// The SOCKS5 handshake asking the proxy for the endpoint, when the stream goes through
    /// one. The endpoint's host goes to the proxy as written, unresolved.
    fn socks_handshake(&self) -> Result<Option<Box<Socks5>>, crate::transport::socks::SocksError> {
        let o = &self.options;
        match &self.target {
            Some((Endpoint::Tcp { host, port, .. }, _)) if !o.socks_proxy.is_empty() => {
                let host = match host {
                    Host::Ip(ip) => ip.to_string(),
                    Host::Name(n) => n.clone(),
                    Host::Any => return Err(crate::transport::socks::SocksError::Protocol),
                };
                Socks5::new(&host, *port, &o.socks_username, &o.socks_password).map(|s| Some(Box::new(s)))
            }
            _ => Ok(None),
        }
    }

    // ----- handshake -----

    fn begin_handshake(&mut self, ctx: &mut Ctx<'_>, mut stream: Stream, registered: bool) -> bool {
        stream.configure(&self.options);
        if !registered
            && ctx.registry.register(&mut stream, Token(self.token), Interest::READABLE | Interest::WRITABLE).is_err()
        {
            return false;
        }
        let kind = self.socket.kind;
        // A socket type without a ZMTP name (DGRAM) never gets a stream session.
        let Some(socket_type) = kind.wire() else { return false };
        let mechanism = self.options.security.mechanism();
        let peer_address = super::zap::peer_address(&stream);
        let config = zmtp::Config {
            socket_type,
            routing_id: self.options.routing_id.clone(),
            zap: super::zap::config(&self.options, &mechanism, &peer_address),
            mechanism,
            max_msg_size: self.options.max_msg_size(),
            properties: self.options.app_metadata.clone(),
        };
        let mut hs = zmtp::Handshake::new(config);
        let mut tx = Vec::with_capacity(256);
        hs.poll_transmit(&mut tx);
        self.state = State::Connected(Box::new(Conn {
            stream,
            handshake: Some(hs),
            version: zmtp::Version::V3_1,
            rx: BytesMut::with_capacity(READ_CHUNK),
            carver: crate::chunk::Carver::new(),
            tx,
            tx_pos: 0,
            bigs: std::collections::VecDeque::new(),
            big_off: 0,
            big_bytes: 0,
            read_chunk: READ_CHUNK,
            spare_rx: Vec::new(),
            rx_alloc: Some(READ_CHUNK),
            writable: true,
            partial: Vec::new(),
            held: Vec::new(),
            read_pending: true,
            out_mid: false,
            cipher: None,
            zap: None,
            peer_address,
            peer_id: bytes::Bytes::new(),
            io_errno: 0,
            beat: heartbeat::Beat::new(),
            deferred: None,
            failed: false,
            armed: false,
            interest: READ_EVENTS | WRITE_EVENTS,
            fin_sent: false,
        }));
        if self.socket.kind == SocketType::Stream {
            self.raw_begin(); // no greeting: the link is up
            return true;
        }
        if self.options.handshake_ivl > 0 {
            self.handshake_timer = Some(ctx.add_timer(
                Instant::now() + Duration::from_millis(self.options.handshake_ivl as u64),
                self.token,
                self.serial,
                Timer::Handshake,
            ));
        }
        true
    }

    fn flush_handshake(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.ready(ctx, true, true)
    }

    /// The handshake finished: set up the pipe and tell the socket. `props` travel on the
    /// routing-id frame, which the socket's pipe end keeps for the messages that follow. Out of
    /// line: it runs once per connection and must not weigh on the frame loop it is called from.
    #[inline(never)]
    fn on_handshake_done(&mut self, ctx: &mut Ctx<'_>, peer: zmtp::Peer, props: Arc<crate::properties::Properties>) {
        if let Some(t) = self.handshake_timer.take() {
            ctx.cancel_timer(t);
        }
        // CONNECT_ROUTING_ID, when given, names the peer instead of its announced identity.
        let subscribe_all = peer.implies_subscribe_all;
        let routing_id = match (&self.target, &self.options.link.connect_routing_id) {
            (Some(_), Some(id)) => id.clone(),
            _ => peer.routing_id.unwrap_or_default(),
        };
        if let State::Connected(c) = &mut self.state {
            c.version = peer.version;
            c.peer_id = routing_id.clone();
        }
        self.send_hello();
        self.attach_peer(routing_id, Some(props));
        if subscribe_all {
            legacy::subscribe_all(self.pipe.as_mut());
        }
        // After the socket has the pipe, as libzmq raises it after `engine_ready`: whoever
        // waits for this event and then calls into the socket finds the peer attached.
        self.event(mon::HANDSHAKE_SUCCEEDED, 0);
        self.heartbeat_start(ctx);
    }

    /// The link is up: give the socket a pipe (or reuse ours) whose first frame is the
    /// peer's routing id, carrying the connection's properties.
    fn attach_peer(&mut self, routing_id: bytes::Bytes, props: Option<Arc<crate::properties::Properties>>) {
        self.ivl = self.options.reconnect_ivl;
        let addrs = match &self.state {
            State::Connected(c) => Some(crate::monitor::stream_addrs(&c.stream)),
            _ => None,
        };
        if self.pipe.is_none() {
            // A fresh pipe per connection: accepted peers, IMMEDIATE, and ROUTER connects.
            let (mut socket_end, mut mine) = pipe([hwm(self.options.sndhwm), hwm(self.options.rcvhwm)]);
            if self.options.conflates(self.socket.kind) {
                PipeEnd::conflate(self.socket.kind, &mut socket_end, &mut mine);
            }
            mine.set_owner(self.owner.clone(), PipeId { slot: self.token, serial: self.serial });
            if let Some(m) = self.farewell() {
                socket_end.set_farewell(m);
            }
            if self.options.probe_router && crate::socket::probes(self.socket.kind) {
                // PROBE_ROUTER's probe goes out now, not when the socket next takes commands.
                socket_end.write(Msg::new());
                socket_end.flush();
            }
            let mut id = Msg::from(routing_id);
            id.set_flags(ROUTING_ID);
            id.set_props(props.clone());
            mine.write(id);
            mine.flush();
            if let Some((local, remote)) = addrs {
                mine.set_addrs(local, remote);
            }
            self.pipe = Some(mine);
            self.socket.mailbox.send(crate::mailbox::Command::Attach {
                pipe: socket_end,
                endpoint: self.target.as_ref().map(|t| t.1.clone()),
                listener: self.target.is_none().then_some(self.endpoint_id),
            });
        } else if let Some(p) = &mut self.pipe {
            let mut id = Msg::from(routing_id);
            id.set_flags(ROUTING_ID);
            id.set_props(props);
            p.write(id);
            p.flush();
            if let Some((local, remote)) = addrs {
                p.set_addrs(local, remote);
            }
            if self.connected_before {
                p.hiccup();
            }
        }
        self.counters.connected(self.connected_before);
        self.connected_before = true;
    }
}


/// Receives the wake-ups of a session's pipe. A read wake-up means the socket flushed
/// messages while the session was idle: rather than waking the I/O thread (two context
/// switches before the bytes leave), the flushing thread takes the session if it is free and
/// writes them itself. A write wake-up means the socket read its inbound queue down from the
/// HWM where the session stopped: the reading thread resumes the input itself
/// ([`Session::direct_resume`]). If the I/O thread holds the session, or anything the
/// application thread cannot finish happens, the wake-up goes to the I/O thread as before.
pub(crate) struct SessionOwner {
    io: Arc<IoThread>,
    me: std::sync::OnceLock<std::sync::Weak<std::sync::Mutex<Session>>>,
}

impl SessionOwner {
    pub(crate) fn new(io: Arc<IoThread>) -> Arc<SessionOwner> {
        Arc::new(SessionOwner { io, me: std::sync::OnceLock::new() })
    }

    /// Links the owner to the session it serves, once the session is shared.
    pub(crate) fn bind(&self, me: &Arc<std::sync::Mutex<Session>>) {
        let _ = self.me.set(Arc::downgrade(me));
    }
}

impl SessionOwner {
    /// Runs `f` on the session if it is free (the I/O thread is not using it) and still the
    /// one `id` names.
    fn try_with<R>(&self, id: PipeId, f: impl FnOnce(&mut Session) -> Option<R>) -> Option<R> {
        let s = self.me.get()?.upgrade()?;
        let mut s = s.try_lock().ok()?;
        if s.serial != id.serial {
            return None;
        }
        f(&mut s)
    }
}

impl SessionOwner {
    /// [`SessionOwner::try_with`], waiting for the session if the I/O thread has it.
    fn with_waiting<R>(&self, id: PipeId, f: impl FnOnce(&mut Session) -> Option<R>) -> Option<R> {
        let s = self.me.get()?.upgrade()?;
        let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
        if s.serial != id.serial {
            return None;
        }
        f(&mut s)
    }
}

impl crate::pipe::Owner for SessionOwner {
    fn direct_arm(&self, id: PipeId) -> Option<std::os::fd::RawFd> {
        self.try_with(id, |s| s.direct_arm())
    }

    fn direct_disarm(&self, id: PipeId) {
        // Waits for the session if the I/O thread has it: input must be handed back.
        if let Some(s) = self.me.get().and_then(|w| w.upgrade()) {
            let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
            if s.serial == id.serial {
                s.direct_disarm();
            }
        }
    }

    fn direct_read(&self, id: PipeId) -> bool {
        self.try_with(id, |s| Some(s.direct_read())).unwrap_or(false)
    }

    fn input_fd(&self, id: PipeId) -> Option<std::os::fd::RawFd> {
        self.with_waiting(id, |s| s.catch_up_fd())
    }

    fn catch_up(&self, id: PipeId, read: bool) {
        self.with_waiting(id, |s| (read && s.catch_up_fd().is_some()).then(|| s.direct_read()));
    }

    fn wake(&self, id: PipeId, what: Wake) {
        if what == Wake::Read || what == Wake::Write {
            if let Some(s) = self.me.get().and_then(|w| w.upgrade()) {
                if let Ok(mut s) = s.try_lock() {
                    let done = s.serial == id.serial
                        && if what == Wake::Read { s.direct_write() } else { s.direct_resume() };
                    if done {
                        return;
                    }
                }
            }
        }
        if what == Wake::Read {
            self.io.handed_write(super::IoCmd::Pipe(id, what));
        } else {
            self.io.send(super::IoCmd::Pipe(id, what));
        }
    }
}

/// Moves the message the inbound pipe had no room for into it, unflushed; false (and nothing
/// moved) while the pipe is still full, which registers for the next write activation.
fn deliver_held(c: &mut Conn, p: &mut PipeEnd) -> bool {
    if c.held.is_empty() {
        return true;
    }
    if !p.check_write() {
        return false;
    }
    for m in c.held.drain(..) {
        p.write(m);
    }
    true
}

/// Receive buffers a connection keeps for reuse, and the largest it keeps: a buffer grown to
/// hold one huge frame is let go, so a connection retains at most 4 MiB this way.
const RX_SPARES: usize = 4;
const RX_SPARE_MAX: usize = 1024 * 1024;

impl Conn {
    /// Makes room for `want` more bytes in `rx`.
    ///
    /// Once large bodies are split off `rx` without copying, the buffer is shared with them
    /// and growing it means a new allocation; the old one is freed when the application drops
    /// the last of those bodies, on its own thread. At 64 KiB messages that churn of 256 KiB
    /// blocks between two threads made glibc trim and refault its heap: up to 80 k page faults
    /// per 2 GB received and half the throughput, depending on which thread read. So a
    /// large-message connection keeps the buffers it gives up (a handle on each) and takes
    /// one back when nothing else holds it any more: no allocation, no free, no fault.
    fn grow_rx(&mut self, want: usize) {
        if self.read_chunk < LARGE_READ_CHUNK {
            if self.rx.capacity() == 0 {
                // Given back to the pool after the last read (`release_rx`): take one there.
                self.rx = pool::take(&pool::RX);
            }
            // A stream of small frames leaves a partial frame at the end of the buffer: moved
            // to the front, the same allocation takes the next reads. `reserve` reclaims only
            // room for all of `want`, so it would allocate anew at every refill, twice the size
            // (past glibc's mmap threshold: fresh pages, one fault per page read into).
            if self.rx.try_reclaim(want.min(READ_CHUNK / 2)) {
                return;
            }
            self.rx_alloc = None; // `reserve` may reallocate
            return self.rx.reserve(want);
        }
        if self.rx.try_reclaim(want) {
            return; // nothing else holds it: reused in place
        }
        let need = want + self.rx.len();
        let free = self.spare_rx.iter_mut().position(|(b, _)| {
            b.clear();
            b.try_reclaim(need)
        });
        let (mut next, alloc) = match free {
            Some(i) => self.spare_rx.swap_remove(i),
            None => (BytesMut::with_capacity(need), need),
        };
        // The unread part (a partial frame) moves over, as `reserve` would copy it.
        next.extend_from_slice(&self.rx);
        let mut old = std::mem::replace(&mut self.rx, next);
        old.clear();
        match std::mem::replace(&mut self.rx_alloc, Some(alloc)) {
            Some(size) if size <= RX_SPARE_MAX && self.spare_rx.len() < RX_SPARES => {
                self.spare_rx.push((old, size));
            }
            _ => {}
        }
    }

    /// Makes room for `want` more bytes of a frame larger than a spare buffer: the buffer
    /// grows in place where the allocator can (a large allocation is remapped, not copied) and
    /// at least doubles otherwise; it is not kept as a spare.
    fn grow_rx_frame(&mut self, want: usize) {
        self.rx_alloc = None;
        self.rx.reserve(want);
    }

    /// After a body larger than a spare buffer was split off `rx`: `rx` moves what it holds
    /// (what followed the body in the last read) to a buffer of its own, so the body is the
    /// only owner of its memory. Written through `zmq_msg_data`, it is then used in place, not
    /// copied first (copy on write of a shared body: 2 GiB more for a 2 GiB message).
    #[cold]
    #[inline(never)]
    fn rx_let_go(&mut self) {
        let mut next = BytesMut::with_capacity(self.rx.len().max(self.read_chunk));
        next.extend_from_slice(&self.rx);
        self.rx = next;
        self.rx_alloc = None;
    }

    /// After a read batch: a small-frame connection with nothing left in its receive buffer
    /// (no partial frame) gives the buffer to its thread's pool (`pool`) until its next read.
    fn release_rx(&mut self) {
        if self.rx.is_empty() && self.read_chunk < LARGE_READ_CHUNK && self.rx.capacity() > 0 {
            self.rx_alloc = None;
            pool::give(&pool::RX, std::mem::take(&mut self.rx));
        }
    }
}

/// Empty send and receive buffers of connections that have nothing in them, kept by the
/// thread that emptied them for the next connection it serves. A thread serving many
/// connections (a fan-out to 1,000 subscribers) then works in a few buffers, warm in its
/// cache, instead of one of each per connection: up to a batch each, every page faulted in on
/// first use and kept for the connection's life. Only a connection with bytes the kernel has
/// not taken, or a partial frame, holds a buffer of its own.
mod pool {
    use std::cell::RefCell;
    use std::thread::LocalKey;

    /// Buffers kept per thread and kind.
    const KEEP: usize = 4;

    pub(super) type Pool<T> = RefCell<Vec<T>>;

    thread_local! {
        pub(super) static TX: Pool<Vec<u8>> = const { RefCell::new(Vec::new()) };
        pub(super) static RX: Pool<bytes::BytesMut> = const { RefCell::new(Vec::new()) };
    }

    /// An empty buffer: a kept one if any (its capacity with it), else a new, unallocated one.
    pub(super) fn take<T: Default>(pool: &'static LocalKey<Pool<T>>) -> T {
        pool.try_with(|p| p.borrow_mut().pop()).ok().flatten().unwrap_or_default()
    }

    /// Keeps the empty buffer `buf` for the next `take` on this thread, unless enough are kept.
    pub(super) fn give<T>(pool: &'static LocalKey<Pool<T>>, buf: T) {
        let _ = pool.try_with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < KEEP {
                p.push(buf);
            }
        });
    }
}

/// The connection failed; the session decides what comes next.
struct Lost;

impl Session {
    // ----- events -----

    /// The stream is ready. Returns false when the session is finished.
    pub(crate) fn ready(&mut self, ctx: &mut Ctx<'_>, readable: bool, writable: bool) -> bool {
        let (mut readable, mut writable) = (readable, writable);
        if matches!(self.state, State::Connecting(..)) {
            if !writable && !readable {
                return true;
            }
            let State::Connecting(mut stream, mut socks) = std::mem::replace(&mut self.state, State::Idle) else {
                return true;
            };
            let error = match stream.take_error() {
                Ok(None) if stream.peer_connected() => None,
                Ok(None) => Some(None),
                Ok(Some(e)) | Err(e) => Some(e.raw_os_error()),
            };
            if let Some(errno) = error {
                self.event(mon::CLOSED, stream.fd() as u64);
                let _ = ctx.registry.deregister(&mut stream);
                return self.connect_failed(ctx, errno);
            }
            if let Some(s) = &mut socks {
                match socks_step(&mut stream, s) {
                    Ok(true) => {
                        // The proxy's last reply may have come with the peer's first bytes,
                        // and the stream's readiness edges were taken here.
                        (readable, writable) = (true, true);
                    }
                    Ok(false) => {
                        self.state = State::Connecting(stream, socks);
                        return true;
                    }
                    Err(_) => {
                        self.event(mon::CLOSED, stream.fd() as u64);
                        let _ = ctx.registry.deregister(&mut stream);
                        return self.schedule_reconnect(ctx);
                    }
                }
            }
            if !self.begin_handshake(ctx, stream, true) {
                return self.schedule_reconnect(ctx);
            }
            self.event(mon::CONNECTED, self.fd());
        }
        if self.in_close_wait() {
            return !self.may_close(ctx);
        }
        let State::Connected(c) = &mut self.state else { return true };
        if writable {
            c.writable = true;
        }
        if readable {
            c.read_pending = true;
        }
        match self.drive(ctx) {
            Ok(()) => !self.finished(ctx),
            Err(Lost) => self.connection_lost(ctx),
        }
    }

    fn tx_empty(&self) -> bool {
        match &self.state {
            State::Connected(c) => c.tx_pos >= c.tx.len() && c.bigs.is_empty(),
            _ => true,
        }
    }

    /// Moves bytes both ways until the stream or the pipe would block.
    fn drive(&mut self, ctx: &mut Ctx<'_>) -> Result<(), Lost> {
        self.read_side(ctx)?;
        self.write_side(false)?;
        Ok(())
    }

    fn read_side(&mut self, ctx: &mut Ctx<'_>) -> Result<(), Lost> {
        let mut budget = READ_BUDGET;
        loop {
            // Parse what is buffered first: a handshake or messages may be complete already.
            self.decode(Some(&mut *ctx))?;
            let State::Connected(c) = &mut self.state else { return Ok(()) };
            if !c.held.is_empty() || !c.read_pending {
                break;
            }
            if budget == 0 {
                ctx.again.push(self.token);
                break;
            }
            if c.rx.capacity() - c.rx.len() < 4096 {
                c.grow_rx(c.read_chunk);
            }
            match c.stream.read_into(&mut c.rx) {
                Ok(0) => return lost(c, libc::EPIPE),
                Ok(n) => {
                    budget = budget.saturating_sub(n);
                    self.counters.wire_in(n);
                    c.beat.reads += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    c.read_pending = false;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return lost(c, e.raw_os_error().unwrap_or(libc::EIO)),
            }
        }
        if let State::Connected(c) = &mut self.state {
            c.release_rx();
        }
        if let Some(p) = &mut self.pipe {
            p.flush();
            p.publish_written();
        }
        Ok(())
    }

    /// Parses the receive buffer: handshake bytes, then frames.
    ///
    /// Frames are parsed with a cursor and the buffer is advanced once per batch, not once
    /// per frame; small bodies are copied out at the cursor, large ones are split off the
    /// buffer without copying (which needs the buffer advanced to them first).
    ///
    /// `ctx` is the I/O thread's; without it (the application thread's direct read, which
    /// only runs in the data phase) decoding stops at the first command frame and leaves it in
    /// `deferred` for the I/O thread.
    fn decode(&mut self, mut ctx: Option<&mut Ctx<'_>>) -> Result<(), Lost> {
        if self.socket.kind == SocketType::Stream {
            return self.raw_decode();
        }
        let max = self.options.max_msg_size();
        loop {
            let State::Connected(c) = &mut self.state else { return Ok(()) };
            if let Some(hs) = &mut c.handshake {
                let Some(ctx) = ctx.as_deref_mut() else { return Ok(()) };
                let id = PipeId { slot: self.token, serial: self.serial };
                let r = hs.handle_input(&c.rx).and_then(|n| {
                    c.rx.advance(n);
                    super::zap::step(hs, &mut c.zap, c.rx.len(), &self.options, ctx.io, id)
                });
                hs.poll_transmit(&mut c.tx);
                let resumed = match r {
                    Ok(resumed) => resumed,
                    // `_e` says why (`is_auth_failure`, `zap_status_code`, ...).
                    Err(_e) => {
                        // Let a refused peer read why (ERROR) before the connection closes.
                        let _ = c.stream.write_vectored(&[IoSlice::new(&c.tx[c.tx_pos..])]);
                        return Err(Lost);
                    }
                };
                if !hs.is_complete() {
                    if resumed {
                        continue;
                    }
                    return Ok(());
                }
                let peer = hs.peer().cloned().ok_or(Lost)?;
                let mut props = crate::properties::Properties::gather(&c.peer_address, peer.version, hs.zap_reply(), &peer.metadata);
                props.set_src_fd(c.stream.fd());
                c.cipher = hs.take_cipher();
                c.handshake = None;
                c.zap = None;
                self.on_handshake_done(ctx, peer, Arc::new(props));
                continue;
            }
            break;
        }
        let kind = self.socket.kind;
        let (token, serial) = (self.token, self.serial);
        let State::Connected(c) = &mut self.state else { return Ok(()) };
        let Some(p) = &mut self.pipe else { return Err(Lost) };
        if c.failed {
            return Err(Lost);
        }
        if let Some(ctx) = ctx.as_deref_mut() {
            if let Some(m) = c.deferred.take() {
                if command(kind, c, p, &m, ctx, (token, serial)).is_err() {
                    self.counters.protocol_error();
                    return Err(Lost);
                }
            }
        }
        let mut pos = 0usize;
        let version = c.version; // fixed per connection: read once, not per frame
        let result = loop {
            if !c.held.is_empty() {
                break Ok(()); // the pipe is full; resume on its write activation
            }
            let mut h = match zmtp::parse_header_for(version, &c.rx[pos..], max) {
                Ok(Some(h)) => h,
                Ok(None) => break Ok(()),
                Err(e) => {
                    if matches!(e, zmtp::FrameError::TooLarge { .. }) {
                        self.counters.oversized();
                    }
                    break Err(Lost);
                }
            };
            let avail = (c.rx.len() - pos) as u64;
            let total = h.header_len as u64 + h.body_len;
            if avail < total {
                // Grow towards the frame, but only by what has arrived: memory follows the
                // bytes that actually arrive, never the length a header claims. A step adds
                // at most what the buffer holds of the frame already (or 256 KiB), so the
                // buffer doubles as a large frame comes in and its bytes move O(1) times
                // each, not once per step (issue 44: 2 GiB in 256 KiB steps).
                c.rx.advance(pos);
                pos = 0;
                let want = (total - avail).min((READ_CHUNK as u64 * 4).max(avail)) as usize;
                if c.rx.capacity() - c.rx.len() < want {
                    if want > RX_SPARE_MAX {
                        c.grow_rx_frame(want);
                    } else {
                        // At least a whole read chunk: growing copies the partial frame into
                        // the new buffer, and a buffer sized to this frame alone would make the
                        // next frame straddle its end too (a copy of half a frame per large
                        // frame).
                        c.grow_rx(want.max(c.read_chunk));
                    }
                }
                break Ok(());
            }
            let len = h.body_len as usize;
            let body_at = pos + h.header_len;
            // The common case: a single-frame message for the pipe, built in its slot.
            if c.cipher.is_none() && !h.command && !h.more && c.partial.is_empty() && kind != SocketType::Push && kind != SocketType::Pub {
                if !p.check_write() {
                    let msg = plain_frame(c, &mut pos, body_at, len);
                    c.held.push(msg);
                } else if let Some(slot) = p.new_slot() {
                    plain_frame_into(c, &mut pos, body_at, len, slot);
                    // SAFETY: `plain_frame_into` wrote a single frame, MORE clear, no routing id.
                    unsafe { p.commit_frame(false, false) };
                } else {
                    let msg = plain_frame(c, &mut pos, body_at, len);
                    p.write(msg);
                }
                continue;
            }
            let mut msg = if let Some(cipher) = &mut c.cipher {
                match open_sealed(cipher, &mut c.rx, &mut pos, body_at, len, &mut h) {
                    Ok(m) => m,
                    Err(l) => break Err(l),
                }
            } else {
                plain_frame(c, &mut pos, body_at, len)
            };
            if h.command {
                let Some(ctx) = ctx.as_deref_mut() else {
                    // A reading application thread takes what only feeds the pipe (see
                    // `pipe_command`) and leaves the rest to the I/O thread.
                    match zmtp::Command::parse(&msg) {
                        Ok(cmd) if pipe_command(kind, p, &msg, &cmd) => continue,
                        _ => {
                            c.deferred = Some(msg);
                            break Ok(());
                        }
                    }
                };
                match command(kind, c, p, &msg, ctx, (token, serial)) {
                    Ok(()) => continue,
                    Err(l) => break Err(l),
                }
            }
            // Each branch above builds a fresh frame, MORE clear. Stored only when set: a
            // store to the flags just before the frame is copied into the pipe would stall
            // that copy (the wider load waits for the narrower store to reach the cache).
            if h.more {
                msg.set_more(true);
            }
            if h.more || !c.partial.is_empty() {
                if c.partial.len() >= MAX_PARTS {
                    break Err(Lost);
                }
                c.partial.push(msg);
                if h.more {
                    continue;
                }
                if kind == SocketType::Push || kind == SocketType::Pub && !is_subscription(&c.partial) {
                    c.partial.clear(); // PUSH never receives; PUB only subscriptions
                    continue;
                }
                if p.check_write() {
                    for m in c.partial.drain(..) {
                        p.write(m);
                    }
                } else {
                    std::mem::swap(&mut c.held, &mut c.partial);
                }
                continue;
            }
            // A single-frame message: PUSH and PUB take none but subscriptions.
            if kind == SocketType::Push || kind == SocketType::Pub && !matches!(msg.first(), Some(0) | Some(1)) {
                continue;
            }
            if p.check_write() {
                p.write(msg);
            } else {
                c.held.push(msg);
            }
        };
        if pos > 0 {
            c.rx.advance(pos);
        }
        if !c.held.is_empty() {
            p.flush();
        }
        if result.is_err() {
            // Every way out of the loop with an error is the peer breaking the protocol.
            self.counters.protocol_error();
        }
        result
    }

    /// Encodes queued messages and writes until the stream or the pipe would block.
    /// Writes what the pipe holds until the stream or the pipe would block. `direct`: the
    /// caller is a sending application thread (for the counters).
    fn write_side(&mut self, direct: bool) -> Result<(), Lost> {
        loop {
            let State::Connected(c) = &mut self.state else { return Ok(()) };
            if c.handshake.is_none() && !self.drained {
                if let Some(p) = &mut self.pipe {
                    let sub = matches!(self.socket.kind, SocketType::Sub | SocketType::XSub);
                    let raw = self.socket.kind == SocketType::Stream;
                    if c.tx.capacity() == 0 {
                        c.tx = pool::take(&pool::TX);
                    }
                    if raw {
                        raw::fill(c, p, &mut self.drained);
                    }
                    // The encoded frames' shares of their bodies, given back when the batch
                    // is encoded (dropped at the end of this block).
                    let mut rel = crate::chunk::Releases::new();
                    while !raw
                        && c.bigs.len() < MAX_BIGS
                        && c.tx.len() - c.tx_pos < WRITE_BATCH
                        && c.big_bytes < BIG_BATCH
                    {
                        // The frame is encoded where it lies in the pipe (CONFLATE ends, rare
                        // here, are read out as usual). What the socket has published is
                        // looked up once per batch, when nothing is encoded yet (see
                        // `PipeEnd::front`); the loop comes back after the write.
                        let refresh = c.tx_pos >= c.tx.len() && c.bigs.is_empty();
                        let skip = &mut self.skip_to_boundary;
                        let read = if p.conflating() {
                            match p.read() {
                                Read::Msg(mut m) => {
                                    take(c, skip, &mut m, sub);
                                    Ok(false) // read out already
                                }
                                other => Err(other),
                            }
                        } else {
                            p.front(refresh).map(|m| {
                                take(c, skip, m, sub);
                                true // still in the pipe
                            })
                        };
                        match read {
                            // SAFETY: `front` returned the frame just above, and nothing read
                            // since.
                            Ok(true) => unsafe { p.consume_front(&mut rel) },
                            Ok(false) => {}
                            Err(Read::Closed) => {
                                self.drained = true;
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                }
            }
            if c.tx_pos >= c.tx.len() && c.bigs.is_empty() {
                // Nothing left to write: the buffer goes back to this thread's pool.
                c.tx.clear();
                c.tx_pos = 0;
                if c.tx.capacity() > 0 {
                    pool::give(&pool::TX, std::mem::take(&mut c.tx));
                }
                return Ok(());
            }
            if !c.writable {
                return Ok(());
            }
            let n = {
                // The byte stream is tx[tx_pos..at0], big0[big_off..], tx[at0..at1], big1, ...
                let mut iov: [IoSlice<'_>; 2 * MAX_BIGS + 1] = [IoSlice::new(&[]); 2 * MAX_BIGS + 1];
                let mut k = 0;
                let mut start = c.tx_pos;
                for (i, (at, m)) in c.bigs.iter().enumerate() {
                    if *at > start {
                        iov[k] = IoSlice::new(&c.tx[start..*at]);
                        k += 1;
                    }
                    iov[k] = IoSlice::new(&m[if i == 0 { c.big_off } else { 0 }..]);
                    k += 1;
                    start = start.max(*at);
                }
                if start < c.tx.len() {
                    iov[k] = IoSlice::new(&c.tx[start..]);
                    k += 1;
                }
                match c.stream.write_vectored(&iov[..k]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        c.writable = false;
                        c.update_interest(&self.owner.io, self.token);
                        return Ok(());
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return lost(c, e.raw_os_error().unwrap_or(libc::EIO)),
                }
            };
            advance_written(c, n);
            self.counters.wire_out(n, direct);
            self.last_write = Instant::now();
            self.reads_at_write = c.beat.reads;
            if c.tx_pos >= c.tx.len() && c.bigs.is_empty() {
                c.tx.clear();
                c.tx_pos = 0;
            }
        }
    }

    /// The stream failed or closed.
    fn connection_lost(&mut self, ctx: &mut Ctx<'_>) -> bool {
        if let Some(t) = self.handshake_timer.take() {
            ctx.cancel_timer(t);
        }
        self.raw_lost();
        // Messages decoded in the batch that ended with EOF are complete: publish them. A
        // connect-side pipe outlives the connection, so nothing else would flush them.
        if let Some(p) = &mut self.pipe {
            p.flush();
        }
        if let State::Connected(c) = &self.state {
            // A handshake that failed says why (reported first, as libzmq does); one cut
            // short by the peer or the handshake timer has no detail.
            if let Some(hs) = &c.handshake {
                match hs.error() {
                    Some(e) => {
                        if let Some((ev, value)) = crate::monitor::handshake_failure(e) {
                            self.event(ev, value);
                        }
                    }
                    // No errno from the stream: the handshake timer ended it.
                    None => {
                        let errno = if c.io_errno != 0 { c.io_errno } else { libc::ETIMEDOUT };
                        self.event(mon::HANDSHAKE_FAILED_NO_DETAIL, errno as u64)
                    }
                }
            }
            self.event(mon::DISCONNECTED, self.fd());
        }
        // Some handshake failures end a connecting session for good (see `reconnect.rs`).
        let stop = self.stops_after_lost_handshake();
        let state = std::mem::replace(&mut self.state, State::Idle);
        if let State::Connected(mut c) = state {
            if c.handshake.is_some() {
                self.counters.handshake_failed();
            } else {
                self.counters.disconnected();
            }
            let _ = ctx.registry.deregister(&mut c.stream);
            if c.out_mid {
                // The peer saw part of a message; the next peer must not see the rest.
                self.skip_to_boundary = true;
            }
            // Messages that were encoded but not written are lost with the connection, as in
            // libzmq: TCP gives no acknowledgement to know what the peer received.
        }
        if self.target.is_none() {
            return false; // accept side: the peer will reconnect to us
        }
        if stop {
            self.pipe = None;
            return false;
        }
        // A pipe per connection: the socket forgets this peer. STREAM keeps its pipe, and so
        // the peer's routing id, across reconnects, as libzmq does; so does a ROUTER's
        // connection named by CONNECT_ROUTING_ID, whose pipe the socket made at connect.
        let named = self.options.link.connect_routing_id.is_some();
        if (self.socket.kind == SocketType::Router && !named) || self.options.immediate {
            self.pipe = None;
        }
        if self.closing && (self.drained || self.pipe.is_none()) {
            return false;
        }
        if self.options.socks_proxy.is_empty() {
            self.event_addr = self.addrs.map(|a| a.dest);
        }
        self.schedule_reconnect(ctx)
    }

    pub(crate) fn pipe_event(&mut self, ctx: &mut Ctx<'_>, what: Wake) -> bool {
        if self.in_close_wait() {
            return !self.may_close(ctx);
        }
        match what {
            Wake::Read | Wake::Hiccup => {}
            Wake::Write => {
                // Room in the inbound pipe: deliver the held message and resume reading.
                if let (State::Connected(c), Some(p)) = (&mut self.state, &mut self.pipe) {
                    if !c.held.is_empty() {
                        if !deliver_held(c, p) {
                            return true;
                        }
                        p.flush();
                    }
                }
            }
            Wake::Closed => {
                if !self.closing && !self.socket_closed(ctx) {
                    return false;
                }
            }
        }
        match &self.state {
            State::Connected(_) => match self.drive(ctx) {
                Ok(()) => !self.finished(ctx),
                Err(Lost) => self.connection_lost(ctx),
            },
            _ => !(self.closing && self.drained),
        }
    }

    /// The socket closed: deliver what is queued within LINGER, then finish.
    pub(crate) fn socket_closed(&mut self, ctx: &mut Ctx<'_>) -> bool {
        if self.closing {
            return true;
        }
        self.closing = true;
        let linger = self.socket.linger.load(Ordering::Acquire);
        let nothing_to_send = match &mut self.pipe {
            None => true,
            Some(p) => !p.has_data() && p.peer_closed(),
        };
        let connected = matches!(&self.state, State::Connected(c) if c.handshake.is_none());
        if linger == 0 || nothing_to_send || (!connected && self.target.is_none()) {
            if nothing_to_send {
                self.drained = true;
            }
            if linger == 0 || !connected {
                return false;
            }
        }
        if linger > 0 {
            ctx.add_timer(Instant::now() + Duration::from_millis(linger as u64), self.token, self.serial, Timer::Linger);
        }
        !self.finished(ctx)
    }

    pub(crate) fn timer(&mut self, ctx: &mut Ctx<'_>, t: Timer) -> bool {
        match t {
            Timer::Reconnect => {
                if matches!(self.state, State::Idle) {
                    return self.start_connect(ctx);
                }
                true
            }
            Timer::Handshake => {
                self.handshake_timer = None;
                if matches!(&self.state, State::Connected(c) if c.handshake.is_some()) {
                    return self.connection_lost(ctx);
                }
                true
            }
            Timer::Linger => false,
            Timer::CloseCheck(ms) => self.close_check(ctx, ms),
            Timer::Heartbeat(conn, due) => self.heartbeat_timer(ctx, conn, due),
        }
    }

    /// The context is terminating (every socket is closed). Returns true only for a session
    /// that still has messages or bytes to deliver within LINGER; anything else (a session
    /// whose close notice was missed, one with LINGER 0, one mid-handshake) ends now, so
    /// termination never waits on a session that has nothing left to do.
    pub(crate) fn keep_on_stop(&mut self) -> bool {
        let linger = self.socket.linger.load(Ordering::Acquire);
        let queued = match &mut self.pipe {
            Some(p) => p.has_data(),
            None => false,
        };
        // Encoded bytes still waiting for socket space count too: the last reply of a REP
        // that closes at once may sit there when the context terminates.
        // So does a connection waiting to close without losing its last bytes.
        self.closing && linger != 0 && (queued || !self.tx_empty() || self.in_close_wait())
    }

    /// Releases the stream (the session is being removed).
    pub(crate) fn shutdown(&mut self, registry: &mio::Registry) {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Connected(mut c) => {
                let _ = registry.deregister(&mut c.stream);
            }
            State::Connecting(mut s, _) => {
                let _ = registry.deregister(&mut s);
            }
            _ => {}
        }
    }
}

/// Moves a SOCKS5 handshake on as far as the stream allows: true once the proxy has connected
/// us, false when it must wait for the stream, `Err` when the proxy refused or failed.
fn socks_step(stream: &mut Stream, s: &mut Socks5) -> io::Result<bool> {
    let refused = |e: crate::transport::socks::SocksError| io::Error::new(io::ErrorKind::ConnectionRefused, format!("{e:?}"));
    loop {
        if !s.to_send().is_empty() {
            match stream.write_vectored(&[IoSlice::new(s.to_send())]) {
                Ok(n) => s.sent(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            continue;
        }
        if s.done() {
            return Ok(true);
        }
        // Exactly what the reply still lacks: what follows it is the peer's.
        let mut buf = [0u8; 262];
        let want = s.wants().min(buf.len());
        match stream.read_plain(&mut buf[..want]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => s.received(&buf[..n]).map_err(refused)?,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The stream failed with `errno` (kept for the monitor's events). Out of line: the read and
/// write loops stay as they were.
#[cold]
#[inline(never)]
fn lost(c: &mut Conn, errno: i32) -> Result<(), Lost> {
    c.io_errno = errno;
    Err(Lost)
}

/// A command frame in the data phase.
fn command(
    kind: SocketType,
    c: &mut Conn,
    p: &mut PipeEnd,
    body: &Msg,
    ctx: &mut Ctx<'_>,
    session: (usize, u64),
) -> Result<(), Lost> {
    let cmd = zmtp::Command::parse(body).map_err(|_| Lost)?;
    if pipe_command(kind, p, body, &cmd) {
        return Ok(());
    }
    match cmd {
        zmtp::Command::Ping { context, ttl } => {
            send_command(c, &zmtp::Command::Pong { context });
            heartbeat::ping_received(ctx, session, c, ttl);
        }
        zmtp::Command::Error { .. } => return Err(Lost),
        zmtp::Command::Ready(_) => return Err(Lost), // only valid in the handshake
        _ => {} // PONG, unknown commands: tolerated
    }
    Ok(())
}

/// A command that only goes into the pipe, as a message for the socket: a publisher's
/// SUBSCRIBE or CANCEL, a RADIO's JOIN or LEAVE. Needing nothing of the I/O thread, it is
/// taken by whichever thread decodes it, an application thread's direct read included (a
/// publisher catching up on its subscriptions before it sends, `socket/catchup.rs`). False
/// for every other command.
fn pipe_command(kind: SocketType, p: &mut PipeEnd, body: &Msg, cmd: &zmtp::Command) -> bool {
    match cmd {
        zmtp::Command::Subscribe(topic) | zmtp::Command::Cancel(topic)
            if matches!(kind, SocketType::Pub | SocketType::XPub) =>
        {
            let subscribe = body.get(1..10) == Some(b"SUBSCRIBE");
            let mut v = Vec::with_capacity(topic.len() + 1);
            v.push(subscribe as u8);
            v.extend_from_slice(topic);
            // Subscriptions bypass the HWM: losing one would silently stop a stream.
            p.write(Msg::from(v));
            true
        }
        zmtp::Command::Join(_) | zmtp::Command::Leave(_) if kind == SocketType::Radio => {
            // Up to the RADIO as a command-flagged message; bypasses the HWM like
            // subscriptions.
            let mut m = body.clone();
            m.set_flags(COMMAND);
            p.write(m);
            true
        }
        _ => false,
    }
}

/// Consumes `n` written bytes from the front of the outgoing stream (see `write_side`).
fn advance_written(c: &mut Conn, mut n: usize) {
    while n > 0 {
        let seg_end = c.bigs.front().map_or(c.tx.len(), |(at, _)| *at);
        if c.tx_pos < seg_end {
            let k = n.min(seg_end - c.tx_pos);
            c.tx_pos += k;
            n -= k;
            continue;
        }
        let Some((_, m)) = c.bigs.front() else { break };
        let k = n.min(m.len() - c.big_off);
        c.big_off += k;
        n -= k;
        if c.big_off == m.len() {
            c.big_bytes -= m.len();
            c.big_off = 0;
            c.bigs.pop_front();
        }
    }
}

/// True when a message is a subscription in the ZMTP 3.0 message form.
fn is_subscription(parts: &[Msg]) -> bool {
    parts.len() == 1 && matches!(parts[0].first(), Some(0) | Some(1))
}

/// One frame read for the wire: encoded, or skipped while `skip` says a message cut short by
/// a reconnect is still being passed over.
#[inline(always)]
fn take(c: &mut Conn, skip: &mut bool, m: &mut Msg, sub: bool) {
    if *skip {
        *skip = m.more();
    } else {
        encode(c, m, sub);
    }
}

/// Appends one frame to the batch (or takes a large body, to be written from its own memory).
/// The frame is read where it lies in the pipe, which drops it after. Always inlined into the
/// encoder's loop: a call costs a fifth of a small frame's encoding.
#[inline(always)]
fn encode(c: &mut Conn, m: &mut Msg, sub: bool) {
    if m.is_internal() {
        return encode_internal(c, m);
    }
    if c.cipher.is_some() {
        return encode_sealed(c, m, sub);
    }
    let more = m.more();
    if sub && !c.out_mid && !more && c.version >= zmtp::Version::V3_1 && matches!(m.first(), Some(0) | Some(1)) {
        // A SUB's subscription message becomes a SUBSCRIBE/CANCEL command for 3.1 peers.
        zmtp::encode_subscription(c.version, m[0] == 1, &m[1..], &mut c.tx);
        return;
    }
    c.out_mid = more;
    let len = m.len();
    if let Some((len8, buf)) = m.inline_body() {
        // One append per small frame, written straight into the batch's spare room: the short
        // header (flags, length; 1.0: length, flags), then the whole inline buffer with one fixed-size copy (no
        // length-dependent memcpy call), of which only the frame's length is kept.
        let at = c.tx.len();
        c.tx.reserve(INLINE_CAP + 2);
        // SAFETY: `reserve` made room for INLINE_CAP + 2 bytes past `at`, all written here
        // (the header bytes and the whole inline buffer) before `set_len` keeps the first
        // 2 + len8 of them (len8 <= INLINE_CAP); `buf` lives in the frame, not in `tx`.
        let (h0, h1) = legacy::short_header(c.version, more, len8);
        unsafe {
            let p = c.tx.as_mut_ptr().add(at);
            p.write(h0);
            p.add(1).write(h1);
            std::ptr::copy_nonoverlapping(buf.as_ptr(), p.add(2), INLINE_CAP);
            c.tx.set_len(at + 2 + len8 as usize);
        }
    } else if len >= ZERO_COPY_MIN {
        zmtp::encode_message_header(c.version, len, more, &mut c.tx);
        c.big_bytes += len;
        // What stays in the pipe keeps the frame's MORE flag: the pipe counts a message at the
        // frame without it, so an emptied middle frame would count as one message more than
        // the writer wrote, and the writer, at its HWM, would wait forever.
        let mut rest = Msg::new();
        rest.set_more(more);
        c.bigs.push_back((c.tx.len(), std::mem::replace(m, rest)));
    } else {
        // Header and body written straight into the batch's spare room: the header array
        // whole (a fixed-size copy), of which the body then overwrites what is not header.
        let mut hdr = [0u8; zmtp::legacy::MAX_HEADER_LEN];
        let n = zmtp::write_message_header(c.version, len, more, &mut hdr);
        let at = c.tx.len();
        c.tx.reserve(zmtp::legacy::MAX_HEADER_LEN + len);
        // SAFETY: `reserve` made room for MAX_HEADER_LEN + len bytes past `at`: the whole
        // header array, then `len` body bytes from `at + n` (n <= MAX_HEADER_LEN), all written
        // before `set_len` keeps the first n + len; the body lives in the frame, not in `tx`.
        unsafe {
            let p = c.tx.as_mut_ptr().add(at);
            std::ptr::copy_nonoverlapping(hdr.as_ptr(), p, zmtp::legacy::MAX_HEADER_LEN);
            std::ptr::copy_nonoverlapping(m.as_slice().as_ptr(), p.add(n), len);
            c.tx.set_len(at + n + len);
        }
    }
}

/// The frame of an unencrypted body of `len` bytes at `body_at` in the receive buffer, with
/// `*pos` moved past it.
#[inline(always)]
fn plain_frame(c: &mut Conn, pos: &mut usize, body_at: usize, len: usize) -> Msg {
    let mut m = MaybeUninit::uninit();
    plain_frame_into(c, pos, body_at, len, &mut m);
    // SAFETY: every branch of `plain_frame_into` writes `m`.
    unsafe { m.assume_init() }
}

/// [`plain_frame`] written into `out` (its old contents are not dropped): small bodies
/// inline, mid-size ones cut from the connection's chunk, large ones split off the buffer
/// without a copy. MORE is clear.
#[inline(always)]
fn plain_frame_into(c: &mut Conn, pos: &mut usize, body_at: usize, len: usize, out: &mut MaybeUninit<Msg>) {
    if len <= INLINE_CAP {
        *pos = body_at + len;
        match c.rx.get(body_at..body_at + INLINE_CAP) {
            // More bytes follow in the buffer (a stream): one fixed-size copy.
            Some(w) => out.write(Msg::inline_from_window(w.try_into().expect("INLINE_CAP bytes"), len)),
            None => out.write(Msg::copy_from(&c.rx[body_at..*pos])),
        };
    } else if len <= crate::chunk::MAX_PIECE {
        *pos = body_at + len;
        out.write(Msg::from_piece(c.carver.copy(&c.rx[body_at..*pos])));
    } else {
        c.rx.advance(body_at);
        *pos = 0;
        if len >= ZERO_COPY_MIN {
            c.read_chunk = LARGE_READ_CHUNK;
        }
        let body = c.rx.split_to(len).freeze();
        if len > RX_SPARE_MAX {
            c.rx_let_go();
        }
        out.write(Msg::from_bytes(body));
    }
}

/// CURVE: opens the MESSAGE at `rx[body_at..body_at + len]` in place. The frame's MORE and
/// COMMAND flags travel inside the box, so they replace the header's in `h`. Small bodies are
/// copied out at the cursor; large ones are split off the buffer without copying.
fn open_sealed(
    cipher: &mut zmtp::Cipher,
    rx: &mut BytesMut,
    pos: &mut usize,
    body_at: usize,
    len: usize,
    h: &mut zmtp::FrameHeader,
) -> Result<Msg, Lost> {
    if len.saturating_sub(zmtp::mechanism::curve::MESSAGE_OVERHEAD) <= INLINE_CAP {
        let (f, r) = cipher.open_in_place(&mut rx[body_at..body_at + len]).map_err(|_| Lost)?;
        *pos = body_at + len;
        (h.more, h.command) = (f.more, f.command);
        Ok(Msg::copy_from(&rx[body_at + r.start..body_at + r.end]))
    } else {
        rx.advance(body_at);
        *pos = 0;
        let f = cipher.open(rx.split_to(len)).map_err(|_| Lost)?;
        (h.more, h.command) = (f.more, f.command);
        Ok(Msg::from_bytes(f.body))
    }
}

/// CURVE: appends one frame sealed in a MESSAGE (SUB subscriptions as sealed commands).
fn encode_sealed(c: &mut Conn, m: &Msg, sub: bool) {
    let Some(cipher) = &mut c.cipher else { return };
    let more = m.more();
    // `seal` fails only once 2^64 frames have been sent (the nonce would repeat); nothing can
    // be sent safely after that, so the frame is dropped.
    if sub && !c.out_mid && !more && c.version >= zmtp::Version::V3_1 && matches!(m.first(), Some(0) | Some(1)) {
        let name: &[u8] = if m[0] == 1 { b"\x09SUBSCRIBE" } else { b"\x06CANCEL" };
        let mut body = Vec::with_capacity(name.len() + m.len() - 1);
        body.extend_from_slice(name);
        body.extend_from_slice(&m[1..]);
        let _ = cipher.seal(false, true, &body, &mut c.tx);
        return;
    }
    c.out_mid = more;
    let _ = cipher.seal(more, false, m, &mut c.tx);
}

/// Queues a data-phase command, sealed when CURVE is active.
fn send_command(c: &mut Conn, cmd: &zmtp::Command) {
    if c.version.is_legacy() {
        return; // ZMTP 1.0/2.0 have no commands
    }
    match &mut c.cipher {
        None => cmd.encode(&mut c.tx),
        Some(cipher) => {
            let mut body = Vec::new();
            cmd.encode_body(&mut body);
            let _ = cipher.seal(false, true, &body, &mut c.tx);
        }
    }
}

/// An internal frame from the socket: a routing-id frame is for the socket only (dropped);
/// a command body (DISH's JOIN/LEAVE) becomes one command frame, sealed under CURVE. Kept out
/// of line so the encoder's hot loop stays as small as it was.
#[cold]
#[inline(never)]
fn encode_internal(c: &mut Conn, m: &Msg) {
    if !m.is_command() || c.version.is_legacy() {
        return;
    }
    let body: &[u8] = m;
    match &mut c.cipher {
        None => zmtp::encode_frame(body, false, true, &mut c.tx),
        Some(cipher) => {
            let _ = cipher.seal(false, true, body, &mut c.tx);
        }
    }
}

/// Starts a non-blocking TCP connect, bound to BINDTODEVICE's interface and to a source
/// address when they are set. SNDBUF and RCVBUF are set before the connect, as libzmq does
/// (and as the listener does before `listen`): the window scale and clamp the handshake
/// negotiates follow the receive buffer then, whereas a buffer shrunk on an established
/// connection leaves a window the buffer cannot hold, and the stream crawls at one
/// retransmission timeout per window (8 KiB messages through 4 KiB buffers: a few a second).
fn connect_tcp(addr: SocketAddr, o: &Options, source: Option<SocketAddr>) -> std::io::Result<mio::net::TcpStream> {
    let device = &o.bound_device;
    if device.is_empty() && source.is_none() && o.sndbuf < 0 && o.rcvbuf < 0 {
        return mio::net::TcpStream::connect(addr);
    }
    let sock = socket2::Socket::new(socket2::Domain::for_address(addr), socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
    sock.set_cloexec(true)?;
    sock.set_nonblocking(true)?;
    crate::transport::set_buffer_sizes(&sock, o)?;
    if !device.is_empty() {
        sock.bind_device(Some(device))?;
    }
    if let Some(src) = source {
        // A fixed source port is reused by every reconnect, as libzmq's.
        sock.set_reuse_address(true)?;
        sock.bind(&src.into())?;
    }
    match sock.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(mio::net::TcpStream::from_std(sock.into()))
}
