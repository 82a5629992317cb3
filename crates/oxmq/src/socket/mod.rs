//! The socket: what every socket type shares, and the [`Pattern`] trait each type implements.
//!
//! A `Socket` lives on the application thread. It owns the socket ends of its pipes, drains its
//! mailbox for wake-ups and new peers, and implements blocking with timeouts by waiting on the
//! mailbox's eventfd. The messaging pattern (which pipe a message goes to, which pipe the next
//! message comes from) is delegated to a [`Pattern`], one file per socket type, assembled from
//! the routing pieces in [`lb`], [`fq`], [`dist`] and [`trie`].
//!
//! Contract: a `Socket` is used by one thread at a time (`&mut self`); it is `Send`, so it may
//! move between threads, but it is not `Sync`, exactly like a libzmq socket.

mod dealer;
mod dgram;
pub(crate) mod direct;
mod endpoints;
pub(crate) mod env;
mod kind;
mod pattern;
mod pipes;
mod sockopt;
pub use direct::WAIT_ALSO_MAX;
pub(crate) mod catchup;
mod clientserver;
mod dist;
mod draft;
pub(crate) mod follow;
mod fq;
#[cfg(test)]
mod harness;
pub(crate) mod inproc;
mod lb;
mod level;
pub(crate) mod metrics;
mod monitor;
pub(crate) mod options;
mod pair;
mod pipeline;
pub(crate) mod policy;
mod pubsub;
mod radiodish;
mod reqrep;
mod router;
mod singlepart;
mod slots;
pub(crate) mod stats;
mod stream;
mod threadsafe;
mod trie;
use pattern::pattern_for;
pub(crate) use pattern::Pattern;
pub(crate) use pipes::Pipes;
pub use threadsafe::{SyncGuard, SyncSocket};

use crate::error::{Error, Result};
use crate::io::{IoCmd, IoThread, Listening, SocketHandle};
use crate::mailbox::{Command, Mailbox};
use crate::msg::Msg;
use crate::opt;
use crate::pipe::{PipeEnd, PipeId, Read, Wake};
use crate::transport::connect::Dialer;
use crate::transport::endpoint::Endpoint;
use crate::transport::{listen, resolve};
use bytes::Bytes;
use env::Env;
use options::Options;
pub use stats::{PeerStats, SocketStats};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The socket types, numbered as in libzmq.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SocketType {
    /// Exclusive pair: one peer, both directions (RFC 31).
    Pair = 0,
    /// Publisher: each message to every subscriber whose subscription matches (RFC 29).
    Pub = 1,
    /// Subscriber: receives what matches its subscriptions.
    Sub = 2,
    /// Request: alternates send and receive with one of its peers at a time (RFC 28).
    Req = 3,
    /// Reply: receives a request, then sends its reply to the requester.
    Rep = 4,
    /// Dealer: round-robin sends, fair-queued receives, no envelope rules.
    Dealer = 5,
    /// Router: each message carries the routing id of the peer it came from or goes to.
    Router = 6,
    /// Pipeline receiver: fair-queues from its pushers (RFC 30).
    Pull = 7,
    /// Pipeline sender: round robin over its pullers.
    Push = 8,
    /// Publisher that receives its subscribers' subscriptions as messages.
    XPub = 9,
    /// Subscriber that sends subscriptions as messages.
    XSub = 10,
    /// Raw tcp: each message is a peer's routing id and bytes as they came, no ZMTP.
    Stream = 11,
    // Draft types (libzmq's draft API numbers). Single-part messages only; usable from
    // several threads through `SyncSocket`.
    /// Draft: thread-safe ROUTER for single-part messages, peers addressed by a u32 routing id on the message.
    Server = 12,
    /// Draft: thread-safe DEALER for single-part messages.
    Client = 13,
    /// Draft: publisher to groups (udp or ZMTP), single-part.
    Radio = 14,
    /// Draft: receives the groups it joined.
    Dish = 15,
    /// Draft: thread-safe PULL for single-part messages.
    Gather = 16,
    /// Draft: thread-safe PUSH for single-part messages.
    Scatter = 17,
    /// Raw udp datagrams as [address, body] messages (`dgram.rs`); not thread-safe, as libzmq.
    Dgram = 18,
    /// Draft: thread-safe, connects to many peers and addresses each by routing id.
    Peer = 19,
    /// Draft: thread-safe PAIR for single-part messages.
    Channel = 20,
}

/// What the socket's other parts (its inproc peers, its followed endpoints, the metrics) need
/// to know of it: the I/O side's handle (which it dereferences to), its type, its metrics.
pub(crate) struct SocketShared {
    pub io: Arc<SocketHandle>,
    pub kind: SocketType,
    /// Labels and the last published counts for the metrics (`metrics/`).
    pub metrics: metrics::SocketCell,
}

impl std::ops::Deref for SocketShared {
    type Target = SocketHandle;
    fn deref(&self) -> &SocketHandle {
        &self.io
    }
}

/// Where a bind or connect went, for unbind/disconnect and close.
enum EndpointRec {
    Listener {
        given: String,
        resolved: String,
        io: Arc<IoThread>,
        id: u64,
        fd: RawFd,
    },
    Connect {
        given: String,
        io: Arc<IoThread>,
        id: u64,
    },
    /// A connect that follows DNS: its group's members are in `Socket::follow`.
    Follow {
        given: String,
        group: u64,
    },
    InprocBind {
        name: String,
    },
    InprocConnect {
        given: String,
    },
    /// A udp endpoint (RADIO connect, DISH or DGRAM bind): its engine thread ends with its pipe.
    Datagram {
        given: String,
        resolved: String,
    },
}

/// A ZeroMQ socket.
pub struct Socket {
    env: Arc<Env>,
    shared: Arc<SocketShared>,
    options: Options,
    pipes: Pipes,
    pattern: Box<dyn Pattern>,
    cmds: Vec<Command>,
    endpoints: Vec<EndpointRec>,
    last_endpoint: String,
    rcvmore: bool,
    next_endpoint_id: u64,
    /// Level-triggered readiness mode (`level.rs`).
    level: level::Level,
    /// Counters kept by the application thread (`stats.rs`).
    counters: stats::AppCounters,
    /// How long a blocking receive polls before it sleeps (`direct.rs`).
    spin: direct::Spin,
    /// The frame `recv_into` receives into before copying out, reused as a `zmq_msg_recv`
    /// loop reuses its `zmq_msg_t`: the connection's properties pass from one frame to the
    /// next without a reference count up and down per message.
    /// Boxed, so taking it out for the call and putting it back moves a pointer, not a frame.
    recv_buf: Option<Box<Msg>>,
    /// Connects that follow DNS (`follow.rs`).
    follow: follow::Follow,
    /// Publishers (PUB, XPUB, RADIO): the calling thread's last wait for input that the socket
    /// caught up after (`catchup.rs`); None for the other types.
    catch_up: Option<u64>,
}

impl Socket {
    pub(crate) fn new(env: Arc<Env>, kind: SocketType) -> Result<Socket> {
        let pattern = pattern_for(kind)?;
        let mailbox = Arc::new(Mailbox::new().map_err(Error::from)?);
        let id = env.register_socket(mailbox.clone())?;
        let mut options = Options::new(env.ipv6_default());
        options.ctx_max_msgsz = env.max_msgsz().map(|m| m.max(0) as u64);
        options.security.zap = Some(inproc::ZapThroughContext::handler(&env));
        if !env.blocky() {
            options.linger = 0;
        }
        let io = Arc::new(SocketHandle {
            id,
            mailbox,
            linger: AtomicI32::new(options.linger),
            monitor: crate::io::monitor::Monitor::new(),
            io_stats: Default::default(),
            disconnected: Default::default(),
        });
        let shared = Arc::new(SocketShared { io, kind, metrics: Default::default() });
        env.metrics.add(&shared);
        Ok(Socket {
            shared,
            env,
            options,
            pipes: Pipes::new(),
            pattern,
            cmds: Vec::new(),
            endpoints: Vec::new(),
            last_endpoint: String::new(),
            rcvmore: false,
            next_endpoint_id: 1,
            level: Default::default(),
            counters: Default::default(),
            spin: direct::Spin::new(),
            recv_buf: None,
            follow: Default::default(),
            catch_up: matches!(kind, SocketType::Pub | SocketType::XPub | SocketType::Radio).then_some(0),
        })
    }

    /// The socket's type.
    pub fn socket_type(&self) -> SocketType {
        self.shared.kind
    }

    fn check_term(&self) -> Result<()> {
        if self.env.is_terminating() {
            Err(Error::Term)
        } else {
            Ok(())
        }
    }

    // ----- binding and connecting -----

    /// Takes a pipe to a peer. `probe`: write PROBE_ROUTER's probe into it (false for pipes
    /// an I/O session made, which wrote the probe itself when the connection came up, so that
    /// it goes out at once rather than when this socket is next used).
    /// Made by the user's own `connect`: a message already in the pipe (an inproc binder's
    /// hello) is announced on the descriptor, since no command did (see [`Socket::arm`]).
    fn attach(&mut self, end: PipeEnd, endpoint: Option<String>, probe: bool) {
        if let Some(slot) = self.attach_from(end, endpoint, probe, None) {
            if self.pipes.has_data(slot) && self.level.mask == 0 {
                // A command, not a bare signal: the next look at ZMQ_EVENTS drains it, so the
                // descriptor does not stay readable for a level-triggered loop.
                self.shared.mailbox.poke();
            }
        }
    }

    /// [`Socket::attach`] for a pipe accepted by the listener `listener`.
    /// Returns the pipe's slot, None if the pattern refused it.
    fn attach_from(&mut self, end: PipeEnd, endpoint: Option<String>, probe: bool, listener: Option<u64>) -> Option<usize> {
        let slot = self.pipes.insert(end, endpoint);
        self.pipes.get(slot).listener = listener;
        let serial = self.pipes.get(slot).serial;
        self.pipes.get(slot).end.set_owner(self.shared.io.clone(), PipeId { slot, serial });
        if probe && self.options.probe_router && self.shared.kind.probes() {
            // PROBE_ROUTER: an empty message announces us to a ROUTER peer, ahead of anything
            // else (libzmq writes it when the pipe attaches).
            let end = &mut self.pipes.get(slot).end;
            end.write(Msg::new());
            end.flush();
        }
        self.pattern.attach(&mut self.pipes, slot);
        let kept = self.arm(slot);
        self.reap();
        (kept && matches!(self.pipes.slots.get(slot), Some(Some(_)))).then_some(slot)
    }

    /// A pipe may have been written before it had an owner (an inproc binder writes its
    /// routing id, and its hello, into the connector's pipe during `connect`): those flushes
    /// woke nobody, so its reader counts as awake, and the next message would not post a
    /// wake-up either: the socket's ZMQ_FD would never signal it to an event loop that looked
    /// at ZMQ_EVENTS before the connect. Looking at the pipe now puts an empty one's reader to
    /// sleep, so that message does signal. Returns false if the pattern refused the pipe.
    fn arm(&mut self, slot: usize) -> bool {
        let kept = matches!(self.pipes.slots.get(slot), Some(Some(_)));
        if kept {
            self.pipes.has_data(slot);
        }
        kept
    }

    /// Handles every pending command. Cheap when there are none (one atomic load).
    #[inline]
    fn process_commands(&mut self) {
        if self.shared.mailbox.has_pending() {
            self.process_commands_slow();
        }
    }

    #[cold]
    fn process_commands_slow(&mut self) {
        let mut cmds = std::mem::take(&mut self.cmds);
        if self.level.mask == 0 {
            self.shared.mailbox.drain_into(&mut cmds);
        } else {
            self.shared.mailbox.drain_into_keep(&mut cmds);
            self.level_drained(cmds.len());
        }
        for cmd in cmds.drain(..) {
            match cmd {
                Command::Pipe(id, what) => {
                    if !self.pipes.valid(id) {
                        continue; // a stale wake-up for a slot since reused
                    }
                    match what {
                        Wake::Read => self.pattern.read_activated(&mut self.pipes, id.slot),
                        Wake::Write => self.pattern.write_activated(&mut self.pipes, id.slot),
                        Wake::Hiccup => self.pattern.hiccuped(&mut self.pipes, id.slot),
                        Wake::Closed => {
                            if self.pipes.has_data(id.slot) {
                                // Deliver what the peer sent before closing; the pattern's
                                // read of the last message retires the pipe.
                                self.pattern.read_activated(&mut self.pipes, id.slot);
                                // Types that never read (PUSH, PUB with nothing pending)
                                // would not find out: retire those now.
                                self.pattern.write_activated(&mut self.pipes, id.slot);
                            } else if !self.pipes.retired.contains(&id.slot) {
                                self.pipes.retired.push(id.slot);
                            }
                        }
                    }
                }
                Command::Attach { pipe, endpoint, listener } => {
                    // A connection accepted by an endpoint unbound meanwhile is dropped with
                    // whatever it brought (zmq_unbind discards the endpoint's queue).
                    if let Some(l) = listener {
                        if !self.endpoints.iter().any(|e| matches!(e, EndpointRec::Listener { id, .. } if *id == l)) {
                            continue;
                        }
                    }
                    // Pipes from I/O sessions (tcp, ipc: a target or no endpoint) carry their
                    // probe already; inproc ones do not.
                    let probe = endpoint.as_deref().is_some_and(|e| e.starts_with("inproc://"));
                    self.attach_from(pipe, endpoint, probe, listener);
                }
                Command::Stop => {}
                Command::Follow { group } => self.follow_event(group),
                Command::Snapshot => {
                    let s = self.metrics_snapshot();
                    self.shared.metrics.publish(s);
                }
            }
        }
        self.cmds = cmds;
        self.reap();
    }

    /// Detaches pipes whose peers are gone (almost always none: one inlined check).
    #[inline(always)]
    fn reap(&mut self) {
        if !self.pipes.retired.is_empty() {
            self.reap_slow();
        }
    }

    /// `Pattern::has_in`, with the pipes it found closed and drained detached first when it
    /// found nothing: detaching may leave something to receive that no wake-up will announce
    /// (ROUTER_NOTIFY's notice that a peer left, after the peer's last message).
    fn has_in_now(&mut self) -> bool {
        if self.pattern.has_in(&mut self.pipes) {
            return true;
        }
        if self.pipes.retired.is_empty() {
            return false;
        }
        self.reap_slow();
        self.pattern.has_in(&mut self.pipes)
    }

    #[cold]
    fn reap_slow(&mut self) {
        while let Some(i) = self.pipes.retired.pop() {
            if self.pipes.slots.get(i).map(|s| s.is_some()) == Some(true) {
                // The peer is gone for good: what it never took from the queue is lost.
                self.counters.dropped_disconnected += self.pipes.get(i).end.queued_out();
                self.pattern.detach(&mut self.pipes, i);
                self.pipes.remove(i);
            }
        }
    }

    /// Waits for a command until `deadline`; `Err(Again)` on timeout, `Err(Term)` on shutdown.
    fn wait(&mut self, deadline: Option<Instant>) -> Result<()> {
        self.pipes.waits += 1;
        self.level_before_wait();
        if !self.shared.mailbox.has_commands() {
            let got = match self.shared.mailbox.wait(deadline) {
                Ok(g) => g,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Err(Error::Intr),
                Err(e) => return Err(e.into()),
            };
            self.check_term()?;
            if !got {
                return Err(Error::Again);
            }
        }
        self.process_commands_slow();
        self.check_term()
    }

    /// The async layer's wait (`crate::asynch`), after an attempt that could not proceed:
    /// registers `waker` to be woken by the socket's next command (a pipe waking, a new peer,
    /// shutdown) instead of the eventfd. Returns true, registering nothing, when a command is
    /// queued already: the caller tries again at once.
    #[cfg(feature = "async")]
    pub(crate) fn register_waker(&mut self, slot: crate::mailbox::WakerSlot, waker: &std::task::Waker) -> bool {
        self.pipes.waits += 1;
        self.shared.mailbox.register_waker(slot, waker)
    }

    /// Forgets the async layer's wakers, so that blocking waits are signalled again.
    #[cfg(feature = "async")]
    pub(crate) fn clear_wakers(&mut self) {
        self.shared.mailbox.clear_wakers();
    }

    // ----- sending and receiving -----

    /// Sends one frame: `flags` is `opt::DONTWAIT` and/or `opt::SNDMORE`. On success `msg` is
    /// left empty; on error it is untouched (as `zmq_msg_send`).
    ///
    /// A non-blocking send (`DONTWAIT`, or `SNDTIMEO` 0) to a pipe at its HWM sees the reader's
    /// progress as of at most a millisecond ago, as libzmq's does; see [`Socket::try_send_msg`].
    #[inline]
    pub fn send_msg(&mut self, msg: &mut Msg, flags: i32) -> Result<()> {
        let lazy = flags & opt::DONTWAIT != 0 || self.options.sndtimeo == 0;
        self.send_msg_as(msg, flags, lazy)
    }

    /// Sends one frame without waiting (`flags` as [`Socket::send_msg`]; `DONTWAIT` is
    /// implied), reading the peers' progress afresh: for a caller that waits between attempts
    /// itself, such as a binding that releases its interpreter's lock while it waits, and
    /// must not see a full pipe that has room.
    pub fn try_send_msg(&mut self, msg: &mut Msg, flags: i32) -> Result<()> {
        self.send_msg_as(msg, flags | opt::DONTWAIT, false)
    }

    #[inline(always)]
    fn send_msg_as(&mut self, msg: &mut Msg, flags: i32, lazy: bool) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        self.catch_up_before_send();
        // A frame over the context's MAX_MSGSZ, once the application set one, is one no oxmq
        // peer of that context accepts: its decoder would drop the connection and the message
        // with it. Refused here instead, so it is never silently lost (issue 19). Unset, there
        // is no bound, as in libzmq (issue 44).
        if self.options.ctx_max_msgsz.is_some_and(|max| msg.len() as u64 > max) {
            return Err(Error::MsgSize);
        }
        msg.set_more(flags & opt::SNDMORE != 0);
        // A unique body stays unique: only fan-out clones it (and freezes it first, in `Dist`
        // and XSUB's upstream), and a clone of a unique body is a copy, so nothing else needs
        // it shared. Freezing here cost ~40 instructions per 256 B message.
        // Counted before the pattern takes the frame, and taken back if it refuses it (a
        // refused frame is left untouched): nothing has to stay live across the call.
        self.counters.sent(msg.len(), msg.more());
        self.pipes.nonblocking = lazy;
        let r = self.pattern.send(&mut self.pipes, msg);
        self.pipes.nonblocking = false;
        let r = match r {
            Err(Error::Again) => self.send_blocking(msg, flags),
            r => r,
        };
        if r.is_err() {
            self.counters.unsent(msg.len(), msg.more());
        }
        self.reap();
        self.level_hook();
        r
    }

    /// The send could not go at once: wait for room unless DONTWAIT.
    fn send_blocking(&mut self, msg: &mut Msg, flags: i32) -> Result<()> {
        if flags & opt::DONTWAIT != 0 || self.options.sndtimeo == 0 {
            return Err(Error::Again);
        }
        let deadline = deadline(self.options.sndtimeo);
        loop {
            self.wait(deadline)?;
            match self.pattern.send(&mut self.pipes, msg) {
                Err(Error::Again) => continue,
                r => return r,
            }
        }
    }

    /// SERVER/PEER: [`Socket::send_msg`] to the peer `routing_id`, leaving the message's own
    /// routing id alone (0). Setting it on the message just before the send writes four bytes
    /// the send then reads back as part of a whole frame: a store-forwarding stall per message.
    /// `NotSup` on other types, `HostUnreach` for 0 or an unknown peer.
    #[inline]
    pub fn send_msg_to(&mut self, msg: &mut Msg, routing_id: u32, flags: i32) -> Result<()> {
        self.routed(routing_id, |s| s.send_msg(msg, flags))
    }

    /// [`Socket::try_send_msg`] as [`Socket::send_msg_to`] addresses it.
    #[inline]
    pub fn try_send_msg_to(&mut self, msg: &mut Msg, routing_id: u32, flags: i32) -> Result<()> {
        self.routed(routing_id, |s| s.try_send_msg(msg, flags))
    }

    #[inline(always)]
    fn routed(&mut self, routing_id: u32, send: impl FnOnce(&mut Socket) -> Result<()>) -> Result<()> {
        if !matches!(self.shared.kind, SocketType::Server | SocketType::Peer) {
            return Err(Error::NotSup);
        }
        if routing_id == 0 {
            return Err(Error::HostUnreach);
        }
        self.pipes.route_to = routing_id;
        let r = send(self);
        self.pipes.route_to = 0;
        r
    }

    /// Sends one frame from anything that converts into a [`Msg`].
    pub fn send(&mut self, data: impl Into<Msg>, flags: i32) -> Result<()> {
        let mut m = data.into();
        self.send_msg(&mut m, flags)
    }

    /// Sends a multi-part message: every part but the last goes with SNDMORE.
    pub fn send_multipart<I, T>(&mut self, parts: I, flags: i32) -> Result<()>
    where
        I: IntoIterator<Item = T>,
        T: Into<Msg>,
    {
        let mut it = parts.into_iter().peekable();
        while let Some(p) = it.next() {
            let f = if it.peek().is_some() { flags | opt::SNDMORE } else { flags & !opt::SNDMORE };
            self.send(p, f)?;
        }
        Ok(())
    }

    /// Receives one frame into `msg` (as `zmq_msg_recv`); on error `msg` is untouched.
    #[inline]
    pub fn recv_msg(&mut self, msg: &mut Msg, flags: i32) -> Result<()> {
        self.recv_msg_inline(msg, flags)
    }

    #[inline(always)]
    fn recv_msg_inline(&mut self, msg: &mut Msg, flags: i32) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        match self.pattern.recv_into(&mut self.pipes, msg) {
            Err(Error::Again) => {
                msg.replace_with(self.recv_wait(flags)?);
                Ok(())
            }
            r => {
                // As `received`, for a frame already in place.
                self.reap();
                r?;
                self.rcvmore = msg.more();
                self.counters.received(msg.len(), msg.more());
                self.level_hook();
                Ok(())
            }
        }
    }

    /// Receives one frame.
    #[inline(always)]
    pub fn recv(&mut self, flags: i32) -> Result<Msg> {
        self.check_term()?;
        self.process_commands();
        match self.pattern.recv(&mut self.pipes) {
            Err(Error::Again) => self.recv_wait(flags),
            r => self.received(r),
        }
    }

    /// Nothing to receive right now: EAGAIN, or wait (out of line, so `recv` stays small).
    #[inline(never)]
    fn recv_wait(&mut self, flags: i32) -> Result<Msg> {
        let r = self.recv_blocking(flags);
        self.level_hook();
        r
    }

    /// Nothing to receive at once: wait unless DONTWAIT.
    fn recv_blocking(&mut self, flags: i32) -> Result<Msg> {
        let may_wait = flags & opt::DONTWAIT == 0 && self.options.rcvtimeo != 0;
        let deadline = if may_wait { deadline(self.options.rcvtimeo) } else { None };
        let mut waited = false;
        loop {
            if !self.pipes.retired.is_empty() {
                // The attempt found pipes closed: detached before any wait, since that may
                // leave something to receive that no command will announce (ROUTER_NOTIFY's
                // notice that a peer left, after the peer's last message).
                self.reap_slow();
            } else if may_wait {
                self.wait_input(deadline, &[], true)?;
                self.pipes.waits += 1;
                waited = true;
            } else {
                return Err(Error::Again);
            }
            match self.pattern.recv(&mut self.pipes) {
                Err(Error::Again) => continue,
                r => {
                    if r.is_ok() && waited {
                        catchup::waited_for_input();
                    }
                    return self.received(r);
                }
            }
        }
    }

    #[inline]
    fn received(&mut self, r: Result<Msg>) -> Result<Msg> {
        self.reap();
        let m = r?;
        self.rcvmore = m.more();
        self.counters.received(m.len(), m.more());
        self.level_hook();
        Ok(m)
    }

    /// Receives one frame into `buf` (as `zmq_recv`): copies at most `buf.len()` bytes and
    /// returns the frame's full length, which may be larger (the rest is discarded).
    /// Goes through the patterns' `recv_into`, as `zmq_msg_recv` does, not `recv`.
    #[inline]
    pub fn recv_into(&mut self, buf: &mut [u8], flags: i32) -> Result<usize> {
        let mut m = self.recv_buf.take().unwrap_or_default();
        let r = self.recv_msg_inline(&mut m, flags);
        let r = r.map(|()| {
            let body: &[u8] = &m;
            let n = body.len().min(buf.len());
            if n <= 16 {
                // A call to memcpy costs more than the copy itself at these sizes.
                for (d, s) in buf[..n].iter_mut().zip(&body[..n]) {
                    *d = *s;
                }
            } else {
                buf[..n].copy_from_slice(&body[..n]);
            }
            body.len()
        });
        m.release_body();
        self.recv_buf = Some(m);
        r
    }

    /// Receives every frame of the next message.
    pub fn recv_multipart(&mut self, flags: i32) -> Result<Vec<Msg>> {
        let mut parts = vec![self.recv(flags)?];
        while self.rcvmore {
            // The rest of a message is already here: whole messages are delivered at once.
            parts.push(self.recv(flags & !opt::DONTWAIT)?);
        }
        Ok(parts)
    }

    /// True when the last frame received has more frames following.
    pub fn rcvmore(&mut self) -> bool {
        self.rcvmore
    }

    /// ZMQ_EVENTS: `opt::POLLIN` if a message can be received now, `opt::POLLOUT` if one can
    /// be sent now. Processes pending commands first, as libzmq does.
    pub fn events(&mut self) -> Result<i16> {
        self.check_term()?;
        self.process_commands();
        self.pipes.waits += 1;
        let mut ev = 0;
        if self.has_in_now() {
            ev |= opt::POLLIN;
        }
        if self.pattern.has_out(&mut self.pipes) {
            ev |= opt::POLLOUT;
        }
        self.reap();
        self.level_hook();
        Ok(ev)
    }

    /// ZMQ_FD: readable whenever [`Socket::events`] may have changed. Edge-triggered like
    /// libzmq's: after it polls readable, call `events()` and handle everything it reports
    /// (receive until `Error::Again`), since the descriptor signals changes, not state. With
    /// oxmq's option [`opt::OXMQ_FD_LEVEL`] set it is level-triggered instead: readable
    /// exactly while the socket can receive (`POLLIN`) or send (`POLLOUT`), see
    /// [`Socket::set_fd_level`].
    pub fn fd(&self) -> RawFd {
        self.shared.mailbox.fd()
    }

    /// ROUTER: whether the peer named `routing_id` can take a message now: `opt::POLLOUT`, or
    /// 0 when its queue is at the HWM (libzmq's draft `zmq_socket_get_peer_state`).
    /// `HostUnreach` for an unknown peer, `NotSup` on other socket types.
    pub fn peer_state(&mut self, routing_id: &[u8]) -> Result<i16> {
        self.check_term()?;
        self.process_commands();
        let r = self.pattern.peer_state(&mut self.pipes, routing_id);
        self.level_hook();
        r
    }

    /// Messages this socket dropped (PUB/RADIO at HWM, ROUTER with no route, malformed input).
    pub fn dropped_messages(&self) -> u64 {
        let d = self.pattern.drops();
        d.hwm + d.no_route + d.malformed
    }

    // ----- options -----
}

impl Drop for Socket {
    fn drop(&mut self) {
        // Close: stop listening, hand lingering to the I/O sessions (they keep delivering
        // what is queued for up to LINGER ms), release the pipes, leave the context.
        self.shared.linger.store(self.options.linger, Ordering::Release);
        // The final counts stay in the metrics' totals for this socket's labels.
        let totals = self.metrics_totals();
        self.env.metrics.retire(&self.shared, totals);
        let leftover = self.shared.mailbox.close();
        drop(leftover);
        let mut ios: Vec<Arc<IoThread>> = Vec::new();
        for e in self.endpoints.drain(..) {
            match e {
                // Not CloseEndpoint: that ends the listener's sessions at once, while a close
                // must let them deliver what is queued (SocketClosed closes the listener and
                // leaves its sessions lingering).
                EndpointRec::Listener { io, fd, resolved, .. } => {
                    crate::io::monitor::listener_closed(&self.shared.monitor, fd, &resolved);
                    if !ios.iter().any(|t| Arc::ptr_eq(t, &io)) {
                        ios.push(io);
                    }
                }
                EndpointRec::Connect { io, .. } => {
                    if !ios.iter().any(|t| Arc::ptr_eq(t, &io)) {
                        ios.push(io);
                    }
                }
                // Its members are connects like the above; the group's resolver stops with
                // `self.follow`.
                EndpointRec::Follow { .. } => {
                    for io in self.follow.io_threads() {
                        if !ios.iter().any(|t| Arc::ptr_eq(t, io)) {
                            ios.push(io.clone());
                        }
                    }
                }
                EndpointRec::InprocBind { name } => inproc::unbind(&self.env, self.shared.id, &name),
                // Dropping the pipes (below) ends a udp engine.
                EndpointRec::InprocConnect { .. } | EndpointRec::Datagram { .. } => {}
            }
        }
        // Dropping the pipe ends publishes every complete message and wakes the peers.
        self.pipes.slots.clear();
        for io in ios {
            io.send(IoCmd::SocketClosed { socket_id: self.shared.id });
        }
        // The last event: after it, sessions still lingering raise none.
        self.shared.monitor.stop();
        self.env.unregister_socket(self.shared.id);
    }
}

/// Connections a waiting receiver reads itself at most (see `direct.rs`).
const DIRECT_MAX: usize = 4;

/// A HWM option value as a pipe limit (0 = unlimited).
pub(crate) fn hwm(v: i32) -> u64 {
    v.max(0) as u64
}

fn deadline(timeout_ms: i32) -> Option<Instant> {
    if timeout_ms < 0 {
        None
    } else {
        Some(Instant::now() + Duration::from_millis(timeout_ms as u64))
    }
}
