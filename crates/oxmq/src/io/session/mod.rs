//! A session: one peer link of a socket, as an I/O thread runs it.
//!
//! A session owns the I/O side of the socket's pipe and, while connected, a [`Conn`]: the
//! byte stream with its ZMTP state (`crates/zmtp`'s sans-IO [`zmtp::Connection`]). Its life:
//! (connect side) resolve → connect → handshake → data, and back to a reconnect timer
//! whenever the connection drops; (accept side) handshake → data → gone. Nothing accepted is
//! lost on close: when the socket closes its pipe end, the session keeps writing what is
//! queued (reconnecting if it must) until the pipe is drained or LINGER expires.
//!
//! The session is split by role:
//! * this file: the session's state ([`Link`]: what outlives a connection; [`State`]: where
//!   the connection is) and the I/O thread's entry points, which match the state once and
//!   hand a connected session to its [`Conn`];
//! * `conn`: one connection and its event handling; `read` and `write`: the data paths
//!   (decoding into the pipe through a [`zmtp::data::Sink`], encoding out of it); `buffers`:
//!   receive and send buffers; `deadline`: the connection's timer (handshake timeout,
//!   heartbeats); `direct`: what application threads run (see its opening comment);
//! * `reconnect` (when to try again), `close` (an orderly end without losing the last bytes),
//!   `hello` (HELLO_MSG, DISCONNECT_MSG), `raw` (STREAM's plain bytes).
//!
//! Entered by the I/O thread with the session's mutex held ([`Session::ready`],
//! [`Session::pipe_event`], [`Session::timer`], ...), and by application threads through
//! `direct`, which only ever try that mutex.

mod buffers;
mod close;
mod conn;
mod deadline;
mod direct;
#[cfg(any(fuzzing, test))]
pub(crate) mod fuzzing;
mod hello;
mod lease;
mod raw;
mod read;
mod reconnect;
mod write;

pub(crate) use direct::SessionOwner;

use super::config::SessionConfig;
use super::{Ctx, Timer};
use crate::io::counters::SessionCounters;
use crate::io::monitor::event as mon;
use crate::io::SocketHandle;
use crate::msg::{Msg, ROUTING_ID};
use crate::pipe::{pipe, PipeEnd, PipeId, Wake};
use crate::transport::connect::{spawn_lookup, Connector, Dial, Pending, Progress};
use crate::transport::stream::Stream;
use conn::Conn;
use mio::{Interest, Token};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a session keeps across its connections.
pub(super) struct Link {
    token: usize,
    serial: u64,
    endpoint_id: u64,
    socket: Arc<SocketHandle>,
    cfg: Box<SessionConfig>,
    /// What makes this session's connections (None on the accept side).
    dialer: Option<Box<dyn Connector>>,
    /// How monitor events name this connecting session once its first connection has ended:
    /// by the address that connection went to, as libzmq's new connecter does (it is made
    /// from the resolved address); until then, and with a SOCKS proxy, by the endpoint as
    /// given (`tcp://src;dst` included).
    event_addr: Option<SocketAddr>,
    /// The next reconnect interval (RECONNECT_IVL, doubled up to RECONNECT_IVL_MAX).
    ivl: i32,
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
    /// This session's counters (see `socket/stats.rs`): written only by whoever drives it.
    counters: Arc<SessionCounters>,
    /// The session's own timers queued in the reactor, its reconnect and its LINGER (at
    /// `timer_slot`), cancelled when the session ends first so that none is left behind. A
    /// connection's timers are the connection's (`Conn::cancel_timers`).
    timers: [Option<super::TimerKey>; 2],
}

/// Where a session keeps the key of its own timer `t` in `Link::timers` (None: a connection's
/// timer, kept by the connection).
fn timer_slot(t: &Timer) -> Option<usize> {
    match t {
        Timer::Reconnect => Some(0),
        Timer::Linger => Some(1),
        Timer::Deadline(_) | Timer::CloseCheck(_) | Timer::Lease(_) => None,
    }
}

/// Where the session's connection is.
enum State {
    /// Waiting for the reconnect timer.
    Idle,
    /// A resolver thread looks the endpoint's name up.
    Resolving,
    /// The tcp connect is under way, then (through a SOCKS_PROXY) the proxy's handshake.
    Connecting(Pending),
    Connected(Box<Conn>),
}

pub(crate) struct Session {
    link: Link,
    state: State,
}

/// The connection failed; the session decides what comes next.
pub(super) struct Lost;

impl Drop for Session {
    fn drop(&mut self) {
        self.link.socket.io_stats.retire(&self.link.counters);
    }
}

impl Link {
    fn new(
        ctx: &Ctx<'_>,
        token: usize,
        serial: u64,
        endpoint_id: u64,
        socket: Arc<SocketHandle>,
        cfg: Box<SessionConfig>,
    ) -> Link {
        let counters = socket.io_stats.register();
        Link {
            token,
            serial,
            endpoint_id,
            ivl: cfg.reconnect_ivl,
            socket,
            cfg,
            dialer: None,
            event_addr: None,
            pipe: None,
            connected_before: false,
            skip_to_boundary: false,
            closing: false,
            drained: false,
            owner: SessionOwner::new(ctx.io.clone()),
            last_write: Instant::now(),
            reads_at_write: 0,
            counters,
            timers: [None, None],
        }
    }

    /// Queues the session's timer `t` (`Reconnect` or `Linger`) for `after` from now, in place
    /// of the one of that kind it had queued.
    fn set_timer(&mut self, ctx: &mut Ctx<'_>, after: Duration, t: Timer) {
        let slot = timer_slot(&t).expect("a session's own timer");
        if let Some(key) = self.timers[slot].take() {
            ctx.cancel_timer(key);
        }
        self.timers[slot] = Some(ctx.add_timer(ctx.now() + after, self.token, self.serial, t));
    }

    fn id(&self) -> PipeId {
        PipeId { slot: self.token, serial: self.serial }
    }

    /// Raises a monitor event about this session's connection: one atomic load unless monitored.
    #[inline]
    fn event(&self, ev: u64, value: u64, stream: Option<&Stream>, peer_id: &[u8]) {
        if self.socket.monitor.wants(ev) {
            self.event_slow(ev, value, stream, peer_id);
        }
    }

    #[cold]
    fn event_slow(&self, ev: u64, value: u64, stream: Option<&Stream>, peer_id: &[u8]) {
        let target = self.dialer.as_ref().map(|d| (d.given(), self.event_addr));
        crate::io::monitor::session_event(&self.socket.monitor, ev, value, stream, target, peer_id);
    }

    /// The link is up: give the socket a pipe (or reuse ours) whose first frame is the
    /// peer's routing id, carrying the connection's properties.
    fn attach_peer(
        &mut self,
        routing_id: bytes::Bytes,
        props: Option<Arc<crate::properties::Properties>>,
        addrs: (String, String),
    ) {
        self.ivl = self.cfg.reconnect_ivl;
        let mut id = Msg::from(routing_id);
        id.set_flags(ROUTING_ID);
        id.set_props(props);
        if let Some(p) = &mut self.pipe {
            p.write(id);
            p.flush();
            p.set_addrs(addrs.0, addrs.1);
            if self.connected_before {
                p.hiccup();
            }
        } else {
            // A fresh pipe per connection: accepted peers, IMMEDIATE, and ROUTER connects.
            let policy = &self.cfg.policy;
            let (mut socket_end, mut mine) = pipe(self.cfg.hwm);
            if policy.conflate != (false, false) {
                PipeEnd::conflate(policy.conflate, &mut socket_end, &mut mine);
            }
            mine.set_owner(self.owner.clone(), self.id());
            if let Some(m) = self.farewell() {
                socket_end.set_farewell(m);
            }
            if policy.probe {
                // PROBE_ROUTER's probe goes out now, not when the socket next takes commands.
                socket_end.write(Msg::new());
                socket_end.flush();
            }
            mine.write(id);
            mine.flush();
            mine.set_addrs(addrs.0, addrs.1);
            self.pipe = Some(mine);
            self.socket.mailbox.send(crate::mailbox::Command::Attach {
                pipe: socket_end,
                endpoint: self.dialer.as_ref().map(|d| d.given().to_string()),
                listener: self.dialer.is_none().then_some(self.endpoint_id),
            });
        }
        self.counters.connected(self.connected_before);
        self.connected_before = true;
    }
}

impl Session {
    pub(crate) fn serial(&self) -> u64 {
        self.link.serial
    }
    pub(crate) fn endpoint_id(&self) -> u64 {
        self.link.endpoint_id
    }
    pub(crate) fn socket_id(&self) -> u64 {
        self.link.socket.id
    }
    /// The peer sends this session subscriptions (or joins): its socket publishes.
    pub(crate) fn reads_subscriptions(&self) -> bool {
        self.link.cfg.policy.publishes
    }
    pub(crate) fn owner(&self) -> &Arc<SessionOwner> {
        &self.link.owner
    }

    /// The session of a connection a listener accepted (None: it could not start).
    pub(crate) fn accepted(
        ctx: &mut Ctx<'_>,
        token: usize,
        serial: u64,
        listener_id: u64,
        socket: Arc<SocketHandle>,
        cfg: Box<SessionConfig>,
        stream: Stream,
    ) -> Option<Session> {
        let mut s = Session { link: Link::new(ctx, token, serial, listener_id, socket, cfg), state: State::Idle };
        let c = Conn::start(&mut s.link, ctx, stream, false)?;
        s.link.event(mon::ACCEPTED, c.fd() as u64, Some(&c.stream), &[]);
        s.state = State::Connected(c);
        s.ready(ctx, true, true).then_some(s)
    }

    /// The session of a `connect`; [`Session::start_connect`] begins it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn connecting(
        ctx: &mut Ctx<'_>,
        token: usize,
        serial: u64,
        id: u64,
        dialer: Box<dyn Connector>,
        socket: Arc<SocketHandle>,
        cfg: Box<SessionConfig>,
        pipe: Option<PipeEnd>,
    ) -> Session {
        let mut link = Link::new(ctx, token, serial, id, socket, cfg);
        if let Some(p) = &pipe {
            p.set_owner(link.owner.clone(), link.id());
        }
        link.pipe = pipe;
        link.dialer = Some(dialer);
        Session { link, state: State::Idle }
    }

    // ----- connecting -----

    /// Starts (or restarts) a connection attempt. Returns false if the session is finished.
    pub(crate) fn start_connect(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let Some(dialer) = &mut self.link.dialer else { return false };
        let dial = dialer.start();
        self.dialed(ctx, dial)
    }

    /// A resolver thread's answer for this session's attempt (see `start_connect`).
    pub(crate) fn resolved(
        &mut self,
        ctx: &mut Ctx<'_>,
        found: crate::error::Result<crate::transport::resolve::ConnectAddrs>,
    ) -> bool {
        if !matches!(self.state, State::Resolving) {
            return true;
        }
        let Some(dialer) = &mut self.link.dialer else { return false };
        let dial = dialer.resolved(found);
        self.dialed(ctx, dial)
    }

    /// Goes on with an attempt as far as it went. Nothing found (an unknown host, a source
    /// with no address: ENODEV) is a failed attempt with no socket, so no CLOSED event, as
    /// libzmq's connecter: it tries again after RECONNECT_IVL.
    fn dialed(&mut self, ctx: &mut Ctx<'_>, dial: Dial) -> bool {
        match dial {
            Dial::Lookup(lookup) => {
                // Resolved off the I/O thread: a slow DNS answer must not stall other
                // connections. Re-resolved on every attempt so a moved peer is found.
                self.state = State::Resolving;
                let io = ctx.io.clone();
                let (token, serial) = (self.link.token, self.link.serial);
                let done = move |addrs| {
                    io.send(super::IoCmd::Resolved { token, serial, addrs });
                };
                if spawn_lookup(lookup, done).is_err() {
                    return self.schedule_reconnect(ctx);
                }
                true
            }
            Dial::Pending(mut p) => {
                if ctx.registry.register(&mut p.stream, Token(self.link.token), Interest::READABLE | Interest::WRITABLE).is_err()
                {
                    return self.schedule_reconnect(ctx);
                }
                self.state = State::Connecting(p);
                self.link.event(mon::CONNECT_DELAYED, libc::EINPROGRESS as u64, None, &[]);
                true
            }
            Dial::Connected(stream) => match Conn::start(&mut self.link, ctx, stream, false) {
                Some(c) => {
                    self.link.event(mon::CONNECTED, c.fd() as u64, Some(&c.stream), &[]);
                    self.state = State::Connected(c);
                    self.ready(ctx, true, true)
                }
                None => self.schedule_reconnect(ctx),
            },
            Dial::NoProxy => {
                // A SOCKS_PROXY that is no tcp address: nothing to connect to, as an unknown host.
                self.link.event(mon::CLOSED, crate::io::monitor::NO_FD, None, &[]);
                self.schedule_reconnect(ctx)
            }
            Dial::Unreachable => self.schedule_reconnect(ctx),
            Dial::Failed(errno) => {
                self.link.event(mon::CLOSED, crate::io::monitor::NO_FD, None, &[]);
                self.connect_failed(ctx, errno)
            }
        }
    }

    /// The pending connect's stream is ready: Ok(edges_taken) once connected (see
    /// [`Progress::Connected`]), Err(keep) while it waits or after it failed.
    fn connect_progress(&mut self, ctx: &mut Ctx<'_>) -> Result<bool, bool> {
        let State::Connecting(p) = &mut self.state else { return Err(true) };
        let edges_taken = match p.progress() {
            Progress::Wait => return Err(true),
            Progress::Failed(errno) => {
                if let State::Connecting(mut p) = std::mem::replace(&mut self.state, State::Idle) {
                    self.link.event(mon::CLOSED, p.stream.fd() as u64, None, &[]);
                    let _ = ctx.registry.deregister(&mut p.stream);
                }
                return Err(self.connect_failed(ctx, errno));
            }
            Progress::Connected { edges_taken } => edges_taken,
        };
        let State::Connecting(p) = std::mem::replace(&mut self.state, State::Idle) else { return Err(true) };
        let fd = p.stream.fd();
        let stream = match p.into_stream() {
            Ok(s) => s,
            Err(e) => {
                // The transport's layer refused the stream: as a failed connect.
                self.link.event(mon::CLOSED, fd as u64, None, &[]);
                let _ = ctx.registry.deregister(&mut mio::unix::SourceFd(&fd));
                return Err(self.connect_failed(ctx, e.raw_os_error()));
            }
        };
        let Some(c) = Conn::start(&mut self.link, ctx, stream, true) else {
            return Err(self.schedule_reconnect(ctx));
        };
        self.link.event(mon::CONNECTED, c.fd() as u64, Some(&c.stream), &[]);
        self.state = State::Connected(c);
        Ok(edges_taken)
    }

    // ----- events -----

    /// The stream is ready. Returns false when the session is finished.
    pub(crate) fn ready(&mut self, ctx: &mut Ctx<'_>, readable: bool, writable: bool) -> bool {
        let (mut readable, mut writable) = (readable, writable);
        if matches!(self.state, State::Connecting(_)) {
            if !readable && !writable {
                return true;
            }
            match self.connect_progress(ctx) {
                // The proxy's last reply may have come with the peer's first bytes, and the
                // stream's readiness edges were taken by its handshake.
                Ok(true) => (readable, writable) = (true, true),
                Ok(false) => {}
                Err(keep) => return keep,
            }
        }
        let State::Connected(c) = &mut self.state else { return true };
        match c.ready(&mut self.link, ctx, readable, writable) {
            Ok(()) => !c.finished(&mut self.link, ctx),
            Err(Lost) => self.connection_lost(ctx),
        }
    }

    /// A wake-up of the session's pipe. Returns false when the session is finished.
    pub(crate) fn pipe_event(&mut self, ctx: &mut Ctx<'_>, what: Wake) -> bool {
        if what == Wake::Closed && !self.link.closing && !self.socket_closed(ctx) {
            return false;
        }
        match &mut self.state {
            State::Connected(c) => match c.pipe_event(&mut self.link, ctx, what) {
                Ok(()) => !c.finished(&mut self.link, ctx),
                Err(Lost) => self.connection_lost(ctx),
            },
            _ => !(self.link.closing && self.link.drained),
        }
    }

    /// The socket closed: deliver what is queued within LINGER, then finish.
    pub(crate) fn socket_closed(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let link = &mut self.link;
        if link.closing {
            return true;
        }
        link.closing = true;
        let linger = link.socket.linger.load(Ordering::Acquire);
        let nothing_to_send = match &mut link.pipe {
            None => true,
            Some(p) => !p.has_data() && p.peer_closed(),
        };
        let connected = matches!(&self.state, State::Connected(c) if c.is_established());
        if linger == 0 || nothing_to_send || (!connected && link.dialer.is_none()) {
            if nothing_to_send {
                link.drained = true;
            }
            if linger == 0 || !connected {
                return false;
            }
        }
        if linger > 0 {
            link.set_timer(ctx, Duration::from_millis(linger as u64), Timer::Linger);
        }
        match &mut self.state {
            State::Connected(c) => !c.finished(&mut self.link, ctx),
            _ => true,
        }
    }

    /// A timer of this session fired. Returns false when the session is finished.
    pub(crate) fn timer(&mut self, ctx: &mut Ctx<'_>, t: Timer) -> bool {
        if let Some(slot) = timer_slot(&t) {
            self.link.timers[slot] = None; // taken from the queue to fire
        }
        match t {
            Timer::Reconnect if matches!(self.state, State::Idle) => self.start_connect(ctx),
            Timer::Reconnect => true,
            Timer::Linger => false,
            Timer::CloseCheck(ms) => match &mut self.state {
                State::Connected(c) => c.close_check(&mut self.link, ctx, ms),
                _ => true,
            },
            Timer::Lease(conn) => {
                if let State::Connected(c) = &mut self.state {
                    if c.id == conn {
                        c.lease_due(&self.link, ctx);
                    }
                }
                true
            }
            Timer::Deadline(conn) => match &mut self.state {
                State::Connected(c) if c.id == conn => match c.deadline_due(&mut self.link, ctx) {
                    Ok(()) => true,
                    Err(Lost) => self.connection_lost(ctx),
                },
                _ => true, // set for an earlier connection
            },
        }
    }

    /// The context is terminating (every socket is closed). Returns true only for a session
    /// that still has messages or bytes to deliver within LINGER; anything else (a session
    /// whose close notice was missed, one with LINGER 0, one mid-handshake) ends now, so
    /// termination never waits on a session that has nothing left to do.
    pub(crate) fn keep_on_stop(&mut self) -> bool {
        let link = &mut self.link;
        let linger = link.socket.linger.load(Ordering::Acquire);
        let queued = match &mut link.pipe {
            Some(p) => p.has_data(),
            None => false,
        };
        // Encoded bytes still waiting for socket space count too: the last reply of a REP
        // that closes at once may sit there when the context terminates. So does a
        // connection waiting to close without losing its last bytes.
        let unwritten = matches!(&self.state, State::Connected(c) if !c.tx.is_empty() || c.in_close_wait());
        link.closing && linger != 0 && (queued || unwritten)
    }

    /// Releases the stream and every timer the session or its connection has queued (the
    /// session is being removed): a session that ends with its socket, mid-handshake, between
    /// reconnects, within its LINGER or with heartbeats on, must not leave a timer in the
    /// reactor to fire for nobody.
    pub(crate) fn shutdown(&mut self, ctx: &mut Ctx<'_>) {
        for key in self.link.timers.iter_mut().filter_map(Option::take) {
            ctx.cancel_timer(key);
        }
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Connected(mut c) => {
                c.cancel_timers(ctx);
                let _ = ctx.registry.deregister(&mut c.stream);
            }
            State::Connecting(mut p) => {
                let _ = ctx.registry.deregister(&mut p.stream);
            }
            _ => {}
        }
    }

    /// The stream failed or closed. Returns false when the session is finished.
    fn connection_lost(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let State::Connected(mut c) = std::mem::replace(&mut self.state, State::Idle) else { return true };
        // Some handshake failures end a connecting session for good (see `reconnect.rs`).
        let stop = c.stops_after_lost_handshake(&self.link);
        c.lost(&mut self.link, ctx);
        let link = &mut self.link;
        if link.dialer.is_none() {
            return false; // accept side: the peer will reconnect to us
        }
        if stop {
            link.pipe = None;
            return false;
        }
        // A pipe per connection unless the socket keeps the peer across reconnects (STREAM
        // and a ROUTER's connection named by CONNECT_ROUTING_ID keep it, as libzmq does).
        if !link.cfg.policy.keeps_pipe {
            link.pipe = None;
        }
        if link.closing && (link.drained || link.pipe.is_none()) {
            return false;
        }
        link.event_addr = link.dialer.as_ref().and_then(|d| d.last_destination());
        self.schedule_reconnect(ctx)
    }
}
