//! The engine's sessions on a simulated network and clock, for tests that never sleep (in the
//! manner of quinn-proto's test `Pair`).
//!
//! [`Net`] runs real sessions (`session/`) as an I/O thread would, without one: it holds their
//! timers on a clock that moves only when a test says so ([`Net::advance`]), takes their
//! commands from a detached [`IoThread`], and tells each session its stream is ready. The
//! streams are [`MemEnd`]s: in-memory links behind the [`ByteStream`] seam, which hand their
//! bytes out in small pieces and keep some of their own output back (as a TLS layer does),
//! so the sessions run over a layer exactly as they would over TLS or WebSocket. A link can be
//! cut (bytes vanish, no FIN: a cable pulled) and a listener taken down (connects refused).
//! The sockets are the test's own: it holds the socket end of each pipe a session attaches.

use super::config::{HandshakeOptions, LinkPolicy, SessionConfig};
use super::session::Session;
use super::{Ctx, IoCmd, IoThread, SocketHandle, Timer};
use crate::mailbox::{Command, Mailbox};
use crate::msg::Msg;
use crate::pipe::{PipeEnd, Read};
use crate::transport::connect::{Connector, Dial};
use crate::transport::stream::{ByteStream, Stream};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bytes a link carries each way before a writer must wait.
const LINK_CAPACITY: usize = 64 * 1024;
/// The most a [`MemEnd`] hands out per read: a layer gives its bytes in pieces.
const READ_PIECE: usize = 700;
/// The most a [`MemEnd`] keeps back of what it was given to write.
const KEEP_BACK: usize = 16 * 1024;

#[derive(Default)]
struct Dir {
    bytes: VecDeque<u8>,
    /// The writer ended its side (FIN).
    fin: bool,
}

#[derive(Default)]
struct LinkState {
    dirs: [Dir; 2],
    /// Cut: whatever is written vanishes, nothing arrives, no FIN is ever seen.
    cut: bool,
    /// Stalled: the readers read nothing (the link fills up, then the writers wait).
    stalled: bool,
    /// One end was dropped (closed): the other reads the end of the stream after the bytes.
    closed: [bool; 2],
    /// Bytes ever put on the link and taken off it: whether a round of the net moved any.
    moved: u64,
}

/// One end of an in-memory link, as a layered stream: it hands out at most [`READ_PIECE`]
/// bytes per read and keeps up to [`KEEP_BACK`] bytes of its output back until `flush` (or
/// the next write) moves them onto the link, as far as the link has room.
pub(crate) struct MemEnd {
    link: Arc<Mutex<LinkState>>,
    side: usize,
    kept: Vec<u8>,
    fin_pending: bool,
    /// Registered with the reactor in place of a socket (never polled: the net drives readiness).
    fd: OwnedFd,
}

/// A connected pair of ends.
fn mem_pair() -> (MemEnd, MemEnd) {
    let link = Arc::new(Mutex::new(LinkState::default()));
    LINKS.with(|l| l.borrow_mut().push(Arc::downgrade(&link)));
    let end = |side| MemEnd { link: link.clone(), side, kept: Vec::new(), fin_pending: false, fd: eventfd() };
    (end(0), end(1))
}

fn eventfd() -> OwnedFd {
    // SAFETY: eventfd returns a new descriptor or -1; the OwnedFd takes the new one.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    assert!(fd >= 0, "eventfd");
    // SAFETY: `fd` is a descriptor this function owns.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

impl MemEnd {
    fn state(&self) -> std::sync::MutexGuard<'_, LinkState> {
        self.link.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Moves kept-back output onto the link, as far as it has room. True when none is left.
    fn push(&mut self) -> bool {
        let link = self.link.clone();
        let mut st = link.lock().unwrap_or_else(|p| p.into_inner());
        if st.cut {
            self.kept.clear();
        } else {
            let room = LINK_CAPACITY.saturating_sub(st.dirs[self.side].bytes.len());
            let n = room.min(self.kept.len());
            st.dirs[self.side].bytes.extend(self.kept.drain(..n));
            st.moved += n as u64;
        }
        if self.kept.is_empty() && self.fin_pending {
            st.dirs[self.side].fin = true;
        }
        self.kept.is_empty()
    }
}

impl Drop for MemEnd {
    fn drop(&mut self) {
        self.state().closed[self.side] = true;
    }
}

impl ByteStream for MemEnd {
    fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn read_into(&mut self, buf: &mut bytes::BytesMut) -> io::Result<usize> {
        let mut st = self.state();
        let peer = 1 - self.side;
        if st.cut || st.stalled {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let dir = &mut st.dirs[peer];
        if dir.bytes.is_empty() {
            if dir.fin || st.closed[peer] {
                return Ok(0);
            }
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = dir.bytes.len().min(READ_PIECE).min(buf.capacity() - buf.len());
        let piece: Vec<u8> = dir.bytes.drain(..n).collect();
        buf.extend_from_slice(&piece);
        st.moved += n as u64;
        Ok(n)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.push();
        let room = KEEP_BACK.saturating_sub(self.kept.len());
        if room == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let mut taken = 0;
        for b in bufs {
            let n = b.len().min(room - taken);
            self.kept.extend_from_slice(&b[..n]);
            taken += n;
            if taken == room {
                break;
            }
        }
        self.push();
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<bool> {
        Ok(self.push())
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        self.fin_pending = true;
        self.push();
        Ok(())
    }

    fn unacknowledged(&self) -> Option<i32> {
        let st = self.state();
        Some((st.dirs[self.side].bytes.len() + self.kept.len()) as i32)
    }

    fn addrs(&self) -> (String, String) {
        (format!("sim://{}", self.side), format!("sim://{}", 1 - self.side))
    }

    fn peer_address(&self) -> String {
        String::new()
    }
}

/// What the net's connectors share with it.
#[derive(Default)]
struct Shared {
    /// Listeners accepting now, by name.
    up: HashMap<String, ()>,
    /// Server ends of connections made, for the net to accept.
    accepts: Vec<(String, MemEnd)>,
    /// Connect attempts: (name, the simulated time).
    attempts: Vec<(String, Instant)>,
    clock: Option<Instant>,
}

/// Connects to a listener of the net by name; refused (ECONNREFUSED) while it is down.
struct MemConnector {
    name: String,
    shared: Arc<Mutex<Shared>>,
}

impl Connector for MemConnector {
    fn given(&self) -> &str {
        &self.name
    }

    fn start(&mut self) -> Dial {
        let mut sh = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        let now = sh.clock.expect("clock set");
        sh.attempts.push((self.name.clone(), now));
        if !sh.up.contains_key(&self.name) {
            return Dial::Failed(Some(libc::ECONNREFUSED));
        }
        let (client, server) = mem_pair();
        sh.accepts.push((self.name.clone(), server));
        Dial::Connected(Stream::Layer(Box::new(client)))
    }
}

/// A socket as the test holds it: the I/O side's handle and the pipe ends its sessions
/// attached (in order).
pub(crate) struct Sock {
    pub handle: Arc<SocketHandle>,
    pub pipes: Vec<PipeEnd>,
}

impl Sock {
    fn new() -> Sock {
        let mailbox = Arc::new(Mailbox::new().expect("mailbox"));
        let handle = Arc::new(SocketHandle {
            id: 0,
            mailbox,
            linger: std::sync::atomic::AtomicI32::new(-1),
            monitor: super::monitor::Monitor::new(),
            io_stats: Default::default(),
            disconnected: Default::default(),
        });
        Sock { handle, pipes: Vec::new() }
    }

    /// Takes the pipes sessions attached since the last call.
    fn take_attached(&mut self) {
        let mut cmds = Vec::new();
        self.handle.mailbox.drain_into(&mut cmds);
        for c in cmds {
            if let Command::Attach { pipe, .. } = c {
                self.pipes.push(pipe);
            }
        }
    }

    /// Sends a one-frame message on pipe `i`.
    pub fn send(&mut self, i: usize, body: &[u8]) {
        let p = &mut self.pipes[i];
        p.write(Msg::copy_from(body));
        p.flush();
    }

    /// The data messages pipe `i` holds now (routing-id frames skipped).
    pub fn recv_all(&mut self, i: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Read::Msg(m) = self.pipes[i].read() {
            if !m.is_routing_id() {
                out.push(m.to_vec());
            }
        }
        out
    }
}

/// Sessions on a simulated network and clock.
pub(crate) struct Net {
    io: Arc<IoThread>,
    poll: mio::Poll,
    clock: Instant,
    timers: BTreeMap<(Instant, u64), (usize, u64, Timer)>,
    timer_seq: u64,
    again: Vec<usize>,
    sessions: Vec<Option<Arc<Mutex<Session>>>>,
    serial: u64,
    shared: Arc<Mutex<Shared>>,
    /// Listeners: name → (the accepting socket's index, its sessions' configuration; None:
    /// a mute listener that accepts and never answers).
    listeners: HashMap<String, (usize, Option<SessionConfig>)>,
    /// Streams a mute listener accepted (kept open, never read).
    mute: Vec<MemEnd>,
    pub socks: Vec<Sock>,
}

impl Net {
    pub fn new() -> Net {
        let (io, poll) = IoThread::detached().expect("detached I/O thread");
        let clock = Instant::now();
        let shared = Arc::new(Mutex::new(Shared { clock: Some(clock), ..Default::default() }));
        Net {
            io,
            poll,
            clock,
            timers: BTreeMap::new(),
            timer_seq: 0,
            again: Vec::new(),
            sessions: Vec::new(),
            serial: 0,
            shared,
            listeners: HashMap::new(),
            mute: Vec::new(),
            socks: Vec::new(),
        }
    }

    /// The time since the net was made.
    pub fn elapsed(&self, since: Instant) -> Duration {
        self.clock - since
    }

    /// The net's clock now.
    pub fn now(&self) -> Instant {
        self.clock
    }

    fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new socket; its index.
    pub fn socket(&mut self) -> usize {
        self.socks.push(Sock::new());
        self.socks.len() - 1
    }

    /// Socket `sock` listens at `name` with sessions made with `cfg`.
    pub fn listen(&mut self, sock: usize, name: &str, cfg: SessionConfig) {
        self.listeners.insert(name.to_string(), (sock, Some(cfg)));
        self.shared().up.insert(name.to_string(), ());
    }

    /// A listener at `name` that accepts connections and never says a word.
    pub fn listen_mute(&mut self, name: &str) {
        self.listeners.insert(name.to_string(), (0, None));
        self.shared().up.insert(name.to_string(), ());
    }

    /// Takes the listener at `name` down (connects are refused) or back up.
    pub fn set_listening(&mut self, name: &str, up: bool) {
        if up {
            self.shared().up.insert(name.to_string(), ());
        } else {
            self.shared().up.remove(name);
        }
    }

    /// Socket `sock` connects to `name`; the session starts at once (its pipe attaches when
    /// the handshake completes).
    pub fn connect(&mut self, sock: usize, name: &str, cfg: SessionConfig) {
        self.start_connect(sock, name, cfg, false);
    }

    /// [`Net::connect`] with the pipe made at once, as a socket's `connect` makes it when the
    /// socket keeps its peers across reconnects (no IMMEDIATE): the socket holds its end
    /// before any connection.
    pub fn connect_piped(&mut self, sock: usize, name: &str, cfg: SessionConfig) {
        self.start_connect(sock, name, cfg, true);
    }

    fn start_connect(&mut self, sock: usize, name: &str, cfg: SessionConfig, piped: bool) {
        let connector = Box::new(MemConnector { name: name.to_string(), shared: self.shared.clone() });
        let handle = self.socks[sock].handle.clone();
        let pipe = piped.then(|| {
            let (socket_end, session_end) = crate::pipe::pipe(cfg.hwm);
            self.socks[sock].pipes.push(socket_end);
            session_end
        });
        let t = self
            .add(|ctx, token, serial| Some(Session::connecting(ctx, token, serial, 1, connector, handle, Box::new(cfg), pipe)));
        if let Some(t) = t {
            self.with(t, |s, ctx| s.start_connect(ctx));
        }
        self.settle();
    }

    /// The connect attempts made so far, by name, with their times since `since`.
    pub fn attempts(&self, name: &str, since: Instant) -> Vec<Duration> {
        self.shared().attempts.iter().filter(|(n, t)| n == name && *t >= since).map(|(_, t)| *t - since).collect()
    }

    /// Cuts every link that exists now: bytes vanish both ways and no FIN is ever seen (a
    /// cable pulled). Links made later are whole.
    pub fn cut_links(&mut self) {
        for l in self.links() {
            l.lock().unwrap_or_else(|p| p.into_inner()).cut = true;
        }
    }

    /// Stalls every link that exists now: nothing is read from them any more, so they fill up
    /// and their writers wait.
    pub fn stall_links(&mut self) {
        for l in self.links() {
            l.lock().unwrap_or_else(|p| p.into_inner()).stalled = true;
        }
    }

    /// Lets the links stalled by [`Net::stall_links`] carry bytes again.
    pub fn resume_links(&mut self) {
        for l in self.links() {
            l.lock().unwrap_or_else(|p| p.into_inner()).stalled = false;
        }
    }

    /// The sessions' pending timers: how far ahead each is, and whether it is a connection's
    /// deadline (handshake timeout, heartbeats) rather than a reconnect, linger or close check.
    pub fn timers(&self) -> Vec<(Duration, bool)> {
        self.timers
            .iter()
            .map(|(&(at, _), (_, _, t))| (at.saturating_duration_since(self.clock), matches!(t, Timer::Deadline(_))))
            .collect()
    }

    fn links(&self) -> Vec<Arc<Mutex<LinkState>>> {
        LINKS.with(|l| l.borrow().iter().filter_map(std::sync::Weak::upgrade).collect())
    }

    /// Sessions alive now.
    pub fn sessions(&self) -> usize {
        self.sessions.iter().flatten().count()
    }

    fn ctx_parts(&mut self) -> Ctx<'_> {
        Ctx {
            registry: self.poll.registry(),
            io: &self.io,
            timers: &mut self.timers,
            timer_seq: &mut self.timer_seq,
            again: &mut self.again,
            clock: Some(self.clock),
        }
    }

    fn add(&mut self, make: impl FnOnce(&mut Ctx<'_>, usize, u64) -> Option<Session>) -> Option<usize> {
        self.serial += 1;
        let serial = self.serial;
        let token = self.sessions.len();
        self.sessions.push(None);
        let mut ctx = self.ctx_parts();
        let s = make(&mut ctx, token, serial)?;
        self.sessions[token] = Some(super::share(s));
        Some(token)
    }

    fn with(&mut self, token: usize, f: impl FnOnce(&mut Session, &mut Ctx<'_>) -> bool) {
        let Some(Some(s)) = self.sessions.get(token) else { return };
        let s = s.clone();
        let mut g = s.lock().unwrap_or_else(|p| p.into_inner());
        let mut ctx = self.ctx_parts();
        if !f(&mut g, &mut ctx) {
            g.shutdown(&mut ctx);
            drop(g);
            self.sessions[token] = None;
        }
    }

    /// Runs everything that can happen without time passing: accepts, commands, streams that
    /// can move bytes, until nothing changes.
    pub fn settle(&mut self) {
        for _ in 0..10_000 {
            let mut busy = false;
            let accepts = std::mem::take(&mut self.shared().accepts);
            for (name, end) in accepts {
                busy = true;
                let Some((sock, cfg)) = self.listeners.get(&name).cloned() else { continue };
                let Some(cfg) = cfg else {
                    self.mute.push(end);
                    continue;
                };
                let handle = self.socks[sock].handle.clone();
                let stream = Stream::Layer(Box::new(end));
                self.add(|ctx, t, serial| Session::accepted(ctx, t, serial, 2, handle, Box::new(cfg), stream));
            }
            for cmd in self.io.take_commands() {
                busy = true;
                match cmd {
                    IoCmd::Pipe(id, what) => self.with(id.slot, |s, ctx| s.serial() != id.serial || s.pipe_event(ctx, what)),
                    IoCmd::Turn(id, turned) => {
                        self.with(id.slot, |s, ctx| s.serial() != id.serial || s.ready(ctx, true, false));
                        turned.set();
                    }
                    IoCmd::Stop | IoCmd::Resolved { .. } => {}
                    _ => {}
                }
            }
            let before = self.link_bytes();
            for t in 0..self.sessions.len() {
                self.with(t, |s, ctx| s.ready(ctx, true, true));
            }
            for t in std::mem::take(&mut self.again) {
                self.with(t, |s, ctx| s.ready(ctx, true, true));
            }
            busy |= self.link_bytes() != before;
            for s in &mut self.socks {
                s.take_attached();
            }
            if !busy {
                return;
            }
        }
        panic!("the simulated network never settled");
    }

    /// What the links have moved and whether they ended, to tell whether a round did anything.
    fn link_bytes(&self) -> Vec<(u64, bool, bool)> {
        self.links()
            .iter()
            .map(|l| {
                let l = l.lock().unwrap_or_else(|p| p.into_inner());
                (l.moved, l.dirs[0].fin, l.dirs[1].fin)
            })
            .collect()
    }

    /// Moves the clock forward by `d`, firing the sessions' timers in order (each at its own
    /// time) and settling after each.
    pub fn advance(&mut self, d: Duration) {
        let end = self.clock + d;
        while let Some((&(at, seq), _)) = self.timers.iter().next() {
            if at > end {
                break;
            }
            let (token, serial, timer) = self.timers.remove(&(at, seq)).expect("present");
            self.clock = self.clock.max(at);
            self.shared().clock = Some(self.clock);
            self.with(token, |s, ctx| s.serial() != serial || s.timer(ctx, timer));
            self.settle();
        }
        self.clock = end;
        self.shared().clock = Some(self.clock);
        self.settle();
    }

    /// Advances in `step`s until `done` holds; the time it took (panics after `limit`).
    pub fn run_until(&mut self, step: Duration, limit: Duration, mut done: impl FnMut(&mut Net) -> bool) -> Duration {
        let start = self.clock;
        while !done(self) {
            assert!(self.clock - start < limit, "not done within {limit:?} of simulated time");
            self.advance(step);
        }
        self.clock - start
    }
}

thread_local! {
    /// The links made on this thread (each test runs its net on one thread).
    static LINKS: std::cell::RefCell<Vec<std::sync::Weak<Mutex<LinkState>>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The configuration of a session of a socket whose wire type is `wire`, with heartbeats
/// (interval, timeout in ms; 0: none) and a reconnect interval and its maximum.
pub(crate) fn config(wire: zmtp::SocketType, heartbeat: (i32, i32), reconnect: (i32, i32)) -> SessionConfig {
    let link = super::LinkOptions {
        heartbeat_ivl: heartbeat.0,
        heartbeat_timeout: if heartbeat.1 > 0 { heartbeat.1 } else { -1 },
        ..Default::default()
    };
    SessionConfig {
        policy: LinkPolicy::plain(wire),
        stream: Default::default(),
        link,
        handshake: HandshakeOptions {
            routing_id: bytes::Bytes::new(),
            mechanism: zmtp::Mechanism::Null,
            max_msg_size: None,
            properties: Vec::new(),
            zap_domain: bytes::Bytes::new(),
            zap_enforce_domain: false,
            zap: None,
            handshake_ivl: 30_000,
        },
        hwm: [1000, 1000],
        reconnect_ivl: reconnect.0,
        reconnect_ivl_max: reconnect.1,
    }
}

#[cfg(test)]
mod tests;
