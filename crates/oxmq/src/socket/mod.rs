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
pub(crate) mod env;
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
pub use threadsafe::{SyncGuard, SyncSocket};

use crate::error::{Error, Result};
use crate::io::{IoCmd, IoThread, SocketHandle};
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

impl SocketType {
    /// The type for a libzmq socket-type number.
    pub fn from_raw(n: i32) -> Option<SocketType> {
        Some(match n {
            0 => SocketType::Pair,
            1 => SocketType::Pub,
            2 => SocketType::Sub,
            3 => SocketType::Req,
            4 => SocketType::Rep,
            5 => SocketType::Dealer,
            6 => SocketType::Router,
            7 => SocketType::Pull,
            8 => SocketType::Push,
            9 => SocketType::XPub,
            10 => SocketType::XSub,
            11 => SocketType::Stream,
            12 => SocketType::Server,
            13 => SocketType::Client,
            14 => SocketType::Radio,
            15 => SocketType::Dish,
            16 => SocketType::Gather,
            17 => SocketType::Scatter,
            18 => SocketType::Dgram,
            19 => SocketType::Peer,
            20 => SocketType::Channel,
            _ => return None,
        })
    }

    /// libzmq's number for this type.
    pub fn as_raw(self) -> i32 {
        self as i32
    }

    /// The type as the codec names it on the wire; None for DGRAM, which speaks udp only.
    pub(crate) fn wire(self) -> Option<zmtp::SocketType> {
        Some(match self {
            SocketType::Pair => zmtp::SocketType::Pair,
            SocketType::Pub => zmtp::SocketType::Pub,
            SocketType::Sub => zmtp::SocketType::Sub,
            SocketType::Req => zmtp::SocketType::Req,
            SocketType::Rep => zmtp::SocketType::Rep,
            SocketType::Dealer => zmtp::SocketType::Dealer,
            SocketType::Router => zmtp::SocketType::Router,
            SocketType::Pull => zmtp::SocketType::Pull,
            SocketType::Push => zmtp::SocketType::Push,
            SocketType::XPub => zmtp::SocketType::XPub,
            SocketType::XSub => zmtp::SocketType::XSub,
            SocketType::Stream => zmtp::SocketType::Stream,
            SocketType::Server => zmtp::SocketType::Server,
            SocketType::Client => zmtp::SocketType::Client,
            SocketType::Radio => zmtp::SocketType::Radio,
            SocketType::Dish => zmtp::SocketType::Dish,
            SocketType::Gather => zmtp::SocketType::Gather,
            SocketType::Scatter => zmtp::SocketType::Scatter,
            SocketType::Peer => zmtp::SocketType::Peer,
            SocketType::Channel => zmtp::SocketType::Channel,
            SocketType::Dgram => return None,
        })
    }

    /// The types libzmq makes thread-safe (its draft types): only these may be wrapped in a
    /// [`SyncSocket`](crate::SyncSocket).
    pub fn is_thread_safe(self) -> bool {
        matches!(
            self,
            SocketType::Server
                | SocketType::Client
                | SocketType::Radio
                | SocketType::Dish
                | SocketType::Gather
                | SocketType::Scatter
                | SocketType::Peer
                | SocketType::Channel
        )
    }

    /// True for types that address peers by routing id and so need a fresh pipe per connection.
    pub(crate) fn routes_by_id(self) -> bool {
        matches!(self, SocketType::Router | SocketType::Stream)
    }
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

/// One attached pipe, as the socket sees it.
pub(crate) struct Slot {
    pub end: PipeEnd,
    pub serial: u64,
    /// The peer's routing id, once its first frame has been read (None: not yet).
    pub peer_id: Option<Bytes>,
    /// The endpoint this pipe came from (for `disconnect` of inproc peers).
    pub endpoint: Option<String>,
    /// The bound endpoint (listener id) that accepted this pipe's connection, for `unbind`.
    pub listener: Option<u64>,
}

/// The socket's pipes, indexed by slot. Patterns hold slot numbers.
pub(crate) struct Pipes {
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    next_serial: u64,
    /// Slots whose peer closed and whose inbound side is drained: detached after the current
    /// operation.
    retired: Vec<usize>,
    /// The send now being made will not wait: a full pipe is an EAGAIN for its caller (see
    /// [`Pipes::check_write_or_again`]).
    nonblocking: bool,
    /// Bumped each time the socket waits or is polled: a non-blocking send after that reads
    /// its peers' progress afresh, as libzmq's does after processing its commands.
    waits: u64,
    /// SERVER/PEER: the destination of the send being made by [`Socket::send_msg_to`] (0:
    /// the message's own routing id).
    pub(crate) route_to: u32,
}

impl Pipes {
    fn new() -> Pipes {
        Pipes {
            slots: Vec::new(),
            free: Vec::new(),
            next_serial: 1,
            retired: Vec::new(),
            nonblocking: false,
            waits: 0,
            route_to: 0,
        }
    }

    fn insert(&mut self, end: PipeEnd, endpoint: Option<String>) -> usize {
        let serial = self.next_serial;
        self.next_serial += 1;
        let slot = Slot { end, serial, peer_id: None, endpoint, listener: None };
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        }
    }

    fn remove(&mut self, i: usize) -> Option<Slot> {
        let s = self.slots.get_mut(i)?.take();
        if s.is_some() {
            self.free.push(i);
        }
        s
    }

    fn valid(&self, id: PipeId) -> bool {
        matches!(self.slots.get(id.slot), Some(Some(s)) if s.serial == id.serial)
    }

    #[inline]
    pub(crate) fn get(&mut self, i: usize) -> &mut Slot {
        // Patterns only hold slots the socket attached and has not detached yet.
        self.slots[i].as_mut().expect("pattern holds a detached slot")
    }

    /// Reads the next frame from a pipe. A routing-id frame (always the first frame a session
    /// writes) is absorbed into the slot; a pipe found closed and drained is retired.
    #[inline(always)]
    pub(crate) fn read(&mut self, i: usize) -> Read {
        loop {
            let slot = self.get(i);
            match slot.end.read() {
                Read::Msg(m) if m.is_routing_id() => {
                    slot.peer_id = Some(m.into_bytes());
                }
                Read::Closed => {
                    if !self.retired.contains(&i) {
                        self.retired.push(i);
                    }
                    return Read::Closed;
                }
                r => return r,
            }
        }
    }

    /// [`Pipes::read`] into `out` (its old frame dropped): true when a frame was read, false
    /// when the pipe is empty or closed (and then retired, as by `read`).
    #[inline(always)]
    pub(crate) fn read_into(&mut self, i: usize, out: &mut Msg) -> bool {
        loop {
            let slot = self.get(i);
            match slot.end.read_into(out) {
                None => return true,
                Some(Read::Msg(m)) if m.is_routing_id() => {
                    slot.peer_id = Some(m.into_bytes());
                }
                Some(Read::Msg(m)) => {
                    out.replace_with(m);
                    return true;
                }
                Some(Read::Closed) => {
                    if !self.retired.contains(&i) {
                        self.retired.push(i);
                    }
                    return false;
                }
                Some(Read::Empty) => return false,
            }
        }
    }

    /// Makes sure the routing-id frame has been absorbed if it has arrived; returns the id.
    pub(crate) fn identify(&mut self, i: usize) -> Option<Bytes> {
        let slot = self.get(i);
        if slot.peer_id.is_none() && slot.end.has_data() {
            match slot.end.read() {
                Read::Msg(m) if m.is_routing_id() => slot.peer_id = Some(m.into_bytes()),
                // Not a routing id first: a peer without one (inproc from a pattern that does
                // not send it). Identify as anonymous and drop the frame: libzmq never puts a
                // data frame before the identity either.
                Read::Msg(_) => slot.peer_id = Some(Bytes::new()),
                _ => {}
            }
        }
        self.get(i).peer_id.clone()
    }

    #[inline]
    pub(crate) fn check_write(&mut self, i: usize) -> bool {
        self.get(i).end.check_write()
    }

    /// [`Pipes::check_write`] where a refusal becomes EAGAIN for the sender (never a drop):
    /// in a non-blocking send the reader's progress is read lazily, as libzmq's sender sees
    /// it ([`PipeEnd::check_write_lazy`]).
    #[inline]
    pub(crate) fn check_write_or_again(&mut self, i: usize) -> bool {
        let lazy = self.nonblocking();
        self.get(i).end.check_write_as(lazy)
    }

    /// While the send being made will not wait, the socket's wait count for
    /// [`PipeEnd::check_write_lazy`] (see [`Pipes::check_write_or_again`]); None otherwise.
    #[inline(always)]
    pub(crate) fn nonblocking(&self) -> Option<u64> {
        self.nonblocking.then_some(self.waits)
    }

    /// The pipe end of slot `i`, for a pattern that does several things with it in a row
    /// (one slot lookup instead of one per step).
    #[inline(always)]
    pub(crate) fn end(&mut self, i: usize) -> &mut PipeEnd {
        &mut self.get(i).end
    }

    #[inline(always)]
    pub(crate) fn write(&mut self, i: usize, msg: Msg) {
        self.get(i).end.write(msg)
    }

    #[inline]
    pub(crate) fn flush(&mut self, i: usize) {
        self.get(i).end.flush()
    }

    /// [`PipeEnd::flush_through`]: for subscriptions and joins, which must be on the wire
    /// before the caller's next action.
    #[inline]
    pub(crate) fn flush_through(&mut self, i: usize) {
        self.get(i).end.flush_through()
    }

    /// [`PipeEnd::publish`]: the first half of a flush split across many pipes.
    #[inline]
    pub(crate) fn publish(&mut self, i: usize) -> bool {
        self.get(i).end.publish()
    }

    /// [`PipeEnd::wake_after_fence`]: the second half.
    #[inline]
    pub(crate) fn wake_after_fence(&mut self, i: usize) {
        self.get(i).end.wake_after_fence()
    }

    /// True when a message is ready to read. A routing-id frame at the head is absorbed
    /// first: it is not a message, and reporting it would make POLLIN lie. A pipe found closed
    /// and drained is retired, as by `read`: its last message may have been read already, and
    /// then no wake-up is left to report the close.
    pub(crate) fn has_data(&mut self, i: usize) -> bool {
        loop {
            let slot = self.get(i);
            match slot.end.peek() {
                None => {
                    // `closed` is set after the peer's last flush: look at the queue again.
                    if slot.end.peer_closed() && slot.end.peek().is_none() && !self.retired.contains(&i) {
                        self.retired.push(i);
                    }
                    return false;
                }
                Some(m) if m.is_routing_id() => {
                    if let Read::Msg(m) = slot.end.read() {
                        slot.peer_id = Some(m.into_bytes());
                    }
                }
                Some(_) => return true,
            }
        }
    }

    /// Closes a pipe from this side (e.g. a PAIR refusing a second peer, a ROUTER refusing a
    /// duplicate routing id). The caller must already have removed it from its structures.
    pub(crate) fn reject(&mut self, i: usize) {
        self.remove(i);
    }
}

/// What a socket type decides: where messages go and where they come from.
pub(crate) trait Pattern: Send {
    /// A new pipe. The pattern may reject it with [`Pipes::reject`].
    fn attach(&mut self, pipes: &mut Pipes, slot: usize);
    /// The pipe is going away: forget it.
    fn detach(&mut self, pipes: &mut Pipes, slot: usize);
    /// The pipe has messages again.
    fn read_activated(&mut self, pipes: &mut Pipes, slot: usize);
    /// The pipe has room again.
    fn write_activated(&mut self, pipes: &mut Pipes, slot: usize);
    /// The pipe was reconnected to a new peer (connect side); resend state.
    fn hiccuped(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    /// Sends a frame; on `Ok` the frame is taken out of `msg`. `Err(Again)` means "would block".
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()>;
    /// Receives a frame; `Err(Again)` means "nothing now".
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg>;
    /// `recv` into `out` (whose old frame is dropped; on `Err` it is left untouched): saves
    /// moving the frame through return values, several 56-byte copies per message. Patterns
    /// on the throughput path override it.
    #[inline]
    fn recv_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        out.replace_with(self.recv(pipes)?);
        Ok(())
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool;
    fn has_out(&mut self, pipes: &mut Pipes) -> bool;
    /// A type-specific option: `None` if the type does not know it.
    fn setsockopt(&mut self, _pipes: &mut Pipes, _option: i32, _value: &[u8]) -> Option<Result<()>> {
        None
    }
    fn getsockopt(&self, _option: i32) -> Option<Vec<u8>> {
        None
    }
    /// Messages dropped by policy (PUB at HWM, ROUTER with no route), for the counters.
    fn drops(&self) -> stats::Drops {
        stats::Drops::default()
    }
    /// OXMQ_DNS_FOLLOW: send nothing new to the pipe in `slot` (`stop`), or send to it again
    /// (its address came back), leaving the pipe attached for what it still has to deliver
    /// or to receive. True when the pattern did (load balancers); false when it cannot, and
    /// keeps using the pipe until the socket lets it go.
    fn stop_sending(&mut self, _pipes: &mut Pipes, _slot: usize, _stop: bool) -> bool {
        false
    }
    /// Fan-out types (PUB, XPUB, RADIO): the pipes subscribed to anything and the distinct
    /// subscriptions (groups); receiving ones (SUB, XSUB, DISH): 0 and their own. For the
    /// metrics; None for the other types.
    fn fanout(&self) -> Option<(u64, u64)> {
        None
    }
    /// RADIO: sends a single-part message to a group's members. Others: `NotSup`.
    fn send_group(&mut self, _pipes: &mut Pipes, _group: &[u8], _msg: &mut Msg) -> Result<()> {
        Err(Error::NotSup)
    }
    /// DISH: the group of the message `recv` returned last.
    fn last_group(&self) -> Option<Bytes> {
        None
    }
    /// DISH: joins (`true`) or leaves a group. Others: `NotSup`.
    fn join(&mut self, _pipes: &mut Pipes, _group: &[u8], _join: bool) -> Result<()> {
        Err(Error::NotSup)
    }
    /// PEER: the routing id given to the pipe attached last (0: none).
    fn last_peer_id(&self) -> u32 {
        0
    }
    /// ROUTER: `POLLOUT` when the peer with routing id `id` can take a message now (see
    /// [`Socket::peer_state`]). Others: `NotSup`.
    fn peer_state(&mut self, _pipes: &mut Pipes, _id: &[u8]) -> Result<i16> {
        Err(Error::NotSup)
    }
}

fn pattern_for(kind: SocketType) -> Result<Box<dyn Pattern>> {
    Ok(match kind {
        SocketType::Pair => Box::new(pair::Pair::new()),
        SocketType::Pub => Box::new(pubsub::Pub::new()),
        SocketType::Sub => Box::new(pubsub::Sub::new()),
        SocketType::Req => Box::new(reqrep::Req::new()),
        SocketType::Rep => Box::new(reqrep::Rep::new()),
        SocketType::Dealer => Box::new(dealer::Dealer::new()),
        SocketType::Router => Box::new(router::Router::new()),
        SocketType::Push => Box::new(pipeline::Push::new()),
        SocketType::Pull => Box::new(pipeline::Pull::new()),
        SocketType::XPub => Box::new(pubsub::Pub::xpub()),
        SocketType::XSub => Box::new(pubsub::Sub::xsub()),
        SocketType::Stream => Box::new(stream::Stream::new()),
        SocketType::Server => Box::new(clientserver::Server::new(false)),
        SocketType::Peer => Box::new(clientserver::Server::new(true)),
        SocketType::Client => Box::new(singlepart::SinglePart::new(dealer::Dealer::new())),
        SocketType::Scatter => Box::new(singlepart::SinglePart::new(pipeline::Push::new())),
        SocketType::Gather => Box::new(singlepart::SinglePart::new(pipeline::Pull::new())),
        SocketType::Channel => Box::new(singlepart::SinglePart::new(pair::Pair::new())),
        SocketType::Radio => Box::new(radiodish::Radio::new()),
        SocketType::Dish => Box::new(radiodish::Dish::new()),
        SocketType::Dgram => Box::new(dgram::Dgram::new()),
    })
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
        options.security.zap = Some(inproc::ZapThroughContext::new(&env));
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

    /// Accepts connections at `endpoint`.
    pub fn bind(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        if let Some(addr) = endpoint.strip_prefix("udp://") {
            return self.bind_udp(endpoint, addr);
        }
        let ep = Endpoint::parse(endpoint, true)?;
        self.check_stream_transport()?;
        self.shared.metrics.note_endpoint(endpoint);
        match ep {
            Endpoint::Inproc(name) => {
                inproc::bind(&self.env, &self.shared.io, self.shared.kind, &self.options, &name)?;
                self.endpoints.push(EndpointRec::InprocBind { name });
                self.last_endpoint = endpoint.to_string();
                // Take the pipes of sockets that connected before this bind now, as libzmq
                // does: a SUB's subscriptions (or a probe) go out at bind, not when this
                // socket is next used.
                self.process_commands();
            }
            ep => {
                let lo = policy::listen_options(&self.options);
                let (listener, resolved) = listen::listen(&ep, &lo)
                    .inspect_err(|e| crate::io::monitor::bind_failed(&self.shared.monitor, endpoint, e))?;
                let fd = listener.fd();
                self.shared
                    .monitor
                    .emit(crate::io::monitor::event::LISTENING, fd as u64, || crate::io::monitor::Addrs::bound(&resolved));
                let io = self.env.io_thread()?;
                let id = self.next_id();
                io.send(IoCmd::Listen {
                    id,
                    listener,
                    socket: self.shared.io.clone(),
                    cfg: Box::new(policy::session_config(self.shared.kind, &self.options)),
                    filters: lo.filters,
                    wrap: None,
                });
                self.endpoints.push(EndpointRec::Listener {
                    given: endpoint.to_string(),
                    resolved: resolved.clone(),
                    io,
                    id,
                    fd,
                });
                self.last_endpoint = resolved;
            }
        }
        Ok(())
    }

    /// DGRAM has no meaning over tcp, ipc or inproc: `NoCompatProto` (libzmq lets it bind
    /// there and carry raw bytes without addresses).
    fn check_stream_transport(&self) -> Result<()> {
        if self.shared.kind == SocketType::Dgram {
            return Err(Error::NoCompatProto);
        }
        Ok(())
    }

    fn next_id(&mut self) -> u64 {
        let id = (self.shared.id << 20) | self.next_endpoint_id;
        self.next_endpoint_id += 1;
        id
    }

    /// Connects to `endpoint`. The peer need not exist yet: the connection is retried every
    /// RECONNECT_IVL, and messages queue meanwhile (unless IMMEDIATE is set).
    pub fn connect(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        if let Some(addr) = endpoint.strip_prefix("udp://") {
            return self.connect_udp(endpoint, addr);
        }
        let ep = Endpoint::parse(endpoint, false)?;
        self.check_stream_transport()?;
        match ep {
            Endpoint::Inproc(name) => {
                let end = inproc::connect(&self.env, self.shared.kind, &self.options, &name)?;
                self.attach(end, Some(endpoint.to_string()), true);
                self.endpoints.push(EndpointRec::InprocConnect { given: endpoint.to_string() });
            }
            ep @ Endpoint::Tcp { host: crate::transport::endpoint::Host::Name(_), .. }
                if self.follow.enabled && self.options.socks_proxy.is_empty() =>
            {
                self.connect_followed(endpoint, ep)?;
            }
            ep => {
                let options = Box::new(self.options.clone());
                let (io, id) = self.connect_session(ep, endpoint, options)?;
                self.endpoints.push(EndpointRec::Connect { given: endpoint.to_string(), io, id });
            }
        }
        self.shared.metrics.note_endpoint(endpoint);
        // CONNECT_ROUTING_ID names one connection only (libzmq clears it the same way).
        self.options.link.connect_routing_id = None;
        self.last_endpoint = endpoint.to_string();
        Ok(())
    }

    /// Starts a connecting session to `ep` (tcp or ipc), named `given` in its events and its
    /// pipes, with `options`; returns its I/O thread and endpoint id (for `CloseEndpoint`).
    fn connect_session(&mut self, ep: Endpoint, given: &str, options: Box<Options>) -> Result<(Arc<IoThread>, u64)> {
        let io = self.env.io_thread()?;
        let id = self.next_id();
        // The pipe exists from the start so messages sent before the peer is up are
        // queued — libzmq's behaviour unless IMMEDIATE. Types that route by peer id get
        // a pipe per connection instead, created when the handshake completes, unless
        // CONNECT_ROUTING_ID names the peer now: then the pipe is made here under that
        // name, so the application can route to it at once (as libzmq allows).
        let kind = self.shared.kind;
        let named = options.link.connect_routing_id.clone();
        let by_id = kind.routes_by_id();
        let pipe = if options.immediate || (by_id && named.is_none()) {
            None
        } else {
            let (mut mine, mut theirs) = crate::pipe::pipe([hwm(options.sndhwm), hwm(options.rcvhwm)]);
            let conflate = policy::conflate(kind, &options);
            if conflate != (false, false) {
                PipeEnd::conflate(conflate, &mut mine, &mut theirs);
            }
            if let (true, Some(id)) = (by_id, named) {
                let mut id = Msg::from(id);
                id.set_flags(crate::msg::ROUTING_ID);
                theirs.write(id);
                theirs.flush();
            }
            self.attach(mine, Some(given.to_string()), true);
            Some(theirs)
        };
        let dialer = Dialer::new(ep, given.to_string(), policy::stream_options(&options));
        let cfg = Box::new(policy::session_config(kind, &options));
        io.send(IoCmd::Connect { id, dialer: Box::new(dialer), socket: self.shared.io.clone(), cfg, pipe });
        Ok((io, id))
    }

    /// Stops accepting at an endpoint given to `bind` (or reported by LAST_ENDPOINT).
    pub fn unbind(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        // A wildcard (port `*`, `ipc://*`) names no one endpoint: libzmq finds only what it
        // resolved to (ZMQ_LAST_ENDPOINT), so unbinding by the wildcard is ENOENT.
        let wildcard = endpoint.ends_with(":*") || endpoint == "ipc://*";
        let find = |endpoint: &str| {
            self.endpoints.iter().position(|e| match e {
                EndpointRec::Listener { given, resolved, .. } => (given == endpoint && !wildcard) || resolved == endpoint,
                EndpointRec::InprocBind { name } => endpoint.strip_prefix("inproc://") == Some(name.as_str()),
                EndpointRec::Datagram { given, resolved } => (given == endpoint && !wildcard) || resolved == endpoint,
                _ => false,
            })
        };
        let Some(pos) = find(endpoint).or_else(|| self.find_resolved(endpoint, find)) else {
            return Err(Self::not_found(endpoint, true));
        };
        match self.endpoints.remove(pos) {
            EndpointRec::Listener { io, id, fd, resolved, .. } => {
                crate::io::monitor::listener_closed(&self.shared.monitor, fd, &resolved);
                io.send(IoCmd::CloseEndpoint { id });
                self.note_disconnect();
                // The connections it accepted go now, with their inbound queues (zmq_unbind):
                // nothing more is read from them, even on this thread's direct receive path.
                let slots: Vec<usize> = (0..self.pipes.slots.len())
                    .filter(|&i| matches!(&self.pipes.slots[i], Some(s) if s.listener == Some(id)))
                    .collect();
                for i in slots {
                    self.pattern.detach(&mut self.pipes, i);
                    self.pipes.remove(i);
                }
            }
            EndpointRec::InprocBind { name } => inproc::unbind(&self.env, self.shared.id, &name),
            EndpointRec::Datagram { given, .. } => self.detach_endpoint(&given),
            _ => {}
        }
        Ok(())
    }

    /// Drops the connection made by `connect(endpoint)`, discarding what is queued for it.
    pub fn disconnect(&mut self, endpoint: &str) -> Result<()> {
        self.check_term()?;
        let find = |endpoint: &str| {
            self.endpoints.iter().position(|e| match e {
                EndpointRec::Connect { given, .. } | EndpointRec::InprocConnect { given } => given == endpoint,
                EndpointRec::Follow { given, .. } => given == endpoint,
                EndpointRec::Datagram { given, .. } => given == endpoint,
                _ => false,
            })
        };
        let Some(pos) = find(endpoint).or_else(|| self.find_resolved(endpoint, find)) else {
            return Err(Self::not_found(endpoint, false));
        };
        match self.endpoints.remove(pos) {
            EndpointRec::Connect { io, id, given } => {
                io.send(IoCmd::CloseEndpoint { id });
                self.detach_endpoint(&given);
                self.note_disconnect();
            }
            EndpointRec::InprocConnect { given } | EndpointRec::Datagram { given, .. } => self.detach_endpoint(&given),
            EndpointRec::Follow { group, .. } => {
                self.disconnect_followed(group);
                self.note_disconnect();
            }
            _ => {}
        }
        Ok(())
    }

    /// A tcp endpoint not found as written, looked for again as the address it names (libzmq's
    /// `resolve_tcp_addr`; blocks on the name service for a host name, as libzmq does).
    fn find_resolved(&self, endpoint: &str, find: impl Fn(&str) -> Option<usize>) -> Option<usize> {
        if !endpoint.starts_with("tcp://") {
            return None;
        }
        resolve::canonical(endpoint, self.options.ipv6).and_then(|c| find(&c))
    }

    /// The error for an endpoint `unbind` or `disconnect` did not find: ENOENT, unless it is
    /// not an endpoint at all (no `://`, an unknown transport, a bad ipc or inproc name). A tcp
    /// endpoint that names no address is ENOENT too, as in libzmq, which looks it up unresolved.
    fn not_found(endpoint: &str, bind: bool) -> Error {
        if endpoint.starts_with("udp://") || endpoint.starts_with("tcp://") {
            return Error::NoEnt;
        }
        match Endpoint::parse(endpoint, bind) {
            Err(e) => e,
            Ok(_) => Error::NoEnt,
        }
    }

    /// RECONNECT_STOP_AFTER_DISCONNECT: a tcp or ipc endpoint was let go, so this socket's
    /// connecting sessions stop at their next refused connect (libzmq 4.3.5 sets the same flag
    /// in `term_endpoint`, which inproc endpoints return before).
    fn note_disconnect(&self) {
        if self.options.link.reconnect_stop.after_disconnect() {
            self.shared.disconnected.store(true, Ordering::Relaxed);
        }
    }

    fn detach_endpoint(&mut self, endpoint: &str) {
        let slots: Vec<usize> = (0..self.pipes.slots.len())
            .filter(|&i| matches!(&self.pipes.slots[i], Some(s) if s.endpoint.as_deref() == Some(endpoint)))
            .collect();
        for i in slots {
            self.pattern.detach(&mut self.pipes, i);
            self.pipes.remove(i);
        }
    }

    // ----- commands -----

    /// Takes a pipe to a peer. `probe`: write PROBE_ROUTER's probe into it (false for pipes
    /// an I/O session made, which wrote the probe itself when the connection came up, so that
    /// it goes out at once rather than when this socket is next used).
    fn attach(&mut self, end: PipeEnd, endpoint: Option<String>, probe: bool) {
        self.attach_from(end, endpoint, probe, None)
    }

    /// [`Socket::attach`] for a pipe accepted by the listener `listener`.
    fn attach_from(&mut self, end: PipeEnd, endpoint: Option<String>, probe: bool, listener: Option<u64>) {
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
        self.reap();
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
                    self.attach_from(pipe, endpoint, probe, listener)
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
        if !self.shared.mailbox.has_pending() {
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

    #[inline]
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
                self.wait_input(deadline, &[])?;
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

    /// Sets an option (libzmq semantics; see [`crate::opt`]).
    pub fn setsockopt(&mut self, option: i32, value: &[u8]) -> Result<()> {
        // LINGER may be set after shutdown, so a program can close quickly (libzmq allows it).
        if option != opt::LINGER {
            self.check_term()?;
        }
        self.process_commands();
        if option == opt::OXMQ_FD_LEVEL {
            return self.set_level(value);
        }
        if option == opt::OXMQ_RECV_SPIN {
            return self.spin.set(value);
        }
        match option {
            opt::OXMQ_DNS_FOLLOW => {
                self.follow.enabled = match options::int_val(value)? {
                    0 => false,
                    1 => true,
                    _ => return Err(Error::Invalid),
                };
                return Ok(());
            }
            opt::OXMQ_DNS_IVL => {
                let v = options::int_val(value)?;
                if !(100..=86_400_000).contains(&v) {
                    return Err(Error::Invalid);
                }
                self.follow.ivl_ms = v;
                return Ok(());
            }
            opt::OXMQ_NAME => {
                let v = value.strip_suffix(&[0]).unwrap_or(value);
                if !metrics::valid_name(v) {
                    return Err(Error::Invalid);
                }
                self.shared.metrics.set_name(std::str::from_utf8(v).map_err(|_| Error::Invalid)?);
                return Ok(());
            }
            _ => {}
        }
        if let Some(r) = self.pattern.setsockopt(&mut self.pipes, option, value) {
            self.reap();
            return r;
        }
        let old_sndhwm = self.options.sndhwm;
        match self.options.set(option, value)? {
            true => {
                if option == opt::LINGER {
                    self.shared.linger.store(self.options.linger, Ordering::Release);
                }
                if option == opt::SNDHWM {
                    self.resize_send_queues(old_sndhwm);
                }
                Ok(())
            }
            false => Err(Error::Invalid),
        }
    }

    /// SNDHWM applies to the pipes that exist too, as in libzmq: each outbound queue's limit
    /// is this socket's SNDHWM plus what the peer adds to it (an inproc peer's RCVHWM), which
    /// is the old limit less the old SNDHWM. 0 on either part leaves the queue unlimited.
    fn resize_send_queues(&mut self, old_sndhwm: i32) {
        let new = hwm(self.options.sndhwm);
        let mut raised = Vec::new();
        for (i, slot) in self.pipes.slots.iter_mut().enumerate() {
            let Some(slot) = slot else { continue };
            let cur = slot.end.hwm();
            let limit = if cur == 0 && old_sndhwm != 0 {
                0 // the peer's part is unlimited
            } else if new == 0 {
                0
            } else {
                new + cur.saturating_sub(hwm(old_sndhwm))
            };
            slot.end.set_hwm(limit);
            if cur != 0 && (limit == 0 || limit > cur) {
                raised.push(i);
            }
        }
        // A queue that was full may take messages again: the pattern sends to it once more.
        for i in raised {
            self.pattern.write_activated(&mut self.pipes, i);
        }
    }

    /// Reads an option into `value`; returns the number of bytes written.
    pub fn getsockopt(&mut self, option: i32, value: &mut [u8]) -> Result<usize> {
        let v = self.get_bytes(option)?;
        if value.len() < v.len() {
            return Err(Error::Invalid);
        }
        value[..v.len()].copy_from_slice(&v);
        Ok(v.len())
    }

    /// Reads an option in its wire form (ints as 4 native-endian bytes; LAST_ENDPOINT
    /// NUL-terminated as libzmq returns it).
    pub fn get_bytes(&mut self, option: i32) -> Result<Vec<u8>> {
        if option != opt::LINGER {
            self.check_term()?;
        }
        let i = |n: i32| Ok(n.to_ne_bytes().to_vec());
        match option {
            opt::TYPE => return i(self.shared.kind.as_raw()),
            opt::RCVMORE => return i(self.rcvmore as i32),
            opt::FD => return i(self.fd()),
            opt::EVENTS => return i(self.events()? as i32),
            opt::OXMQ_FD_LEVEL => return i(self.level.mask as i32),
            opt::OXMQ_RECV_SPIN => return i(self.spin.micros()),
            opt::OXMQ_DNS_FOLLOW => return i(self.follow.enabled as i32),
            opt::OXMQ_DNS_IVL => return i(self.follow.ivl_ms),
            opt::OXMQ_NAME => {
                // NUL-terminated, as libzmq's string options.
                let mut v = self.shared.metrics.name().into_bytes();
                v.push(0);
                return Ok(v);
            }
            opt::LAST_ENDPOINT => {
                let mut v = self.last_endpoint.clone().into_bytes();
                v.push(0);
                return Ok(v);
            }
            _ => {}
        }
        if let Some(v) = self.pattern.getsockopt(option) {
            return Ok(v);
        }
        self.options.get(option).ok_or(Error::Invalid)
    }

    /// Sets an integer option.
    pub fn set_int(&mut self, option: i32, v: i32) -> Result<()> {
        self.setsockopt(option, &v.to_ne_bytes())
    }

    /// Reads an integer option.
    pub fn get_int(&mut self, option: i32) -> Result<i32> {
        let v = self.get_bytes(option)?;
        let a: [u8; 4] = v.as_slice().try_into().map_err(|_| Error::Invalid)?;
        Ok(i32::from_ne_bytes(a))
    }

    /// Sets a bytes option (ROUTING_ID, SUBSCRIBE, ...).
    pub fn set_bytes(&mut self, option: i32, v: &[u8]) -> Result<()> {
        self.setsockopt(option, v)
    }

    /// The endpoint of the last bind or connect, with wildcards resolved
    /// (`tcp://127.0.0.1:41234`).
    pub fn last_endpoint(&mut self) -> Result<String> {
        Ok(self.last_endpoint.clone())
    }

    /// Starts monitoring (as `zmq_socket_monitor`): version-1 events in `events` (a mask of
    /// [`crate::monitor::event`]s, at most [`crate::io::monitor::event::ALL`]) are sent by a PAIR
    /// socket bound at the inproc `endpoint`; connect a PAIR there to read them. `None` or
    /// `""` stops monitoring (MONITOR_STOPPED is sent if asked for). Starting again replaces
    /// the previous monitor. Errors: `ProtoNoSupport` for a transport other than inproc,
    /// `Invalid` for a bad endpoint or mask, `AddrInUse` if the endpoint is taken.
    pub fn monitor(&mut self, endpoint: Option<&str>, events: u64) -> Result<()> {
        self.monitor_versioned(endpoint, events, 1, SocketType::Pair)
    }

    /// Asks for the queue depths of every pipe: one PIPES_STATS event each, with the messages
    /// queued towards the peer and from it, and the connection's local and remote address
    /// (`zmq_socket_monitor_pipes_stats`). `Invalid` unless a monitor of version 2 or 3 wants
    /// PIPES_STATS; `Again` when there are no pipes.
    pub fn monitor_pipes_stats(&mut self) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        let m = &self.shared.monitor;
        if !m.wants(crate::io::monitor::event::PIPES_STATS) {
            return Err(Error::Invalid);
        }
        let mut any = false;
        for sl in self.pipes.slots.iter().flatten() {
            let (local, remote) = sl.end.addrs().unwrap_or_else(|| (sl.endpoint.clone().unwrap_or_default(), String::new()));
            let at = crate::io::monitor::Addrs { local, remote, bind_side: sl.listener.is_some(), routing_id: &[] };
            any = true;
            if !m.emit_values(crate::io::monitor::event::PIPES_STATS, &[sl.end.queued_out(), sl.end.queued_in()], &at) {
                return Err(Error::Invalid);
            }
        }
        self.level_hook();
        if any {
            Ok(())
        } else {
            Err(Error::Again)
        }
    }

    /// [`Socket::monitor`] with the message format `version` (1, 2 as libzmq's draft, or 3:
    /// version 2 plus the peer's routing id; see [`crate::monitor`]) and the monitor socket's
    /// type (PAIR, PUB or PUSH), as `zmq_socket_monitor_versioned`.
    pub fn monitor_versioned(&mut self, endpoint: Option<&str>, events: u64, version: u8, kind: SocketType) -> Result<()> {
        self.check_term()?;
        monitor::start(&self.shared.monitor, &self.env, endpoint, events, version, kind)
    }

    /// Subscribes a SUB socket to a prefix (`""` for everything).
    pub fn subscribe(&mut self, prefix: impl AsRef<[u8]>) -> Result<()> {
        self.setsockopt(opt::SUBSCRIBE, prefix.as_ref())
    }

    /// Removes one subscription to a prefix.
    pub fn unsubscribe(&mut self, prefix: impl AsRef<[u8]>) -> Result<()> {
        self.setsockopt(opt::UNSUBSCRIBE, prefix.as_ref())
    }
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
