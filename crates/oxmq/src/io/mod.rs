//! I/O threads: each runs one reactor (mio/epoll) over listeners and sessions.
//!
//! Sockets never block on the network: they post [`IoCmd`]s (listen, connect, close) to an I/O
//! thread and exchange messages with its sessions through pipes. The thread sleeps in
//! `epoll_wait` until a descriptor is ready, a command arrives (an eventfd wake-up sent only
//! when the queue goes from empty to non-empty), or a timer (reconnect, handshake, linger) is
//! due. Everything it owns is single-threaded; the command queue is the only shared state.

pub(crate) mod config;
pub(crate) mod counters;
mod link;
pub(crate) mod monitor;
pub(crate) mod pace;
pub(crate) mod session;
#[cfg(test)]
mod sim;
pub(crate) mod udp;
mod zap;

pub(crate) use config::SessionConfig;
pub(crate) use link::LinkOptions;

use crate::mailbox::{Command, Mailbox};
use crate::pipe::{Owner, PipeEnd, PipeId, Wake};
use crate::transport::connect::{Connector, Role, Wrap};
use crate::transport::filter::AcceptFilters;
use crate::transport::listen::Listener;
use crate::transport::stream::Stream;
use mio::{Events, Interest, Poll, Token, Waker};
use session::Session;
use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the I/O side knows of a socket: where new pipes and wake-ups go, its LINGER, its
/// monitor and its sessions' counters. Shared by the socket and every session it has.
pub(crate) struct SocketHandle {
    pub id: u64,
    pub mailbox: Arc<Mailbox>,
    /// LINGER as of now: sessions read it when the socket closes.
    pub linger: std::sync::atomic::AtomicI32,
    /// The socket monitor's events and sink (`monitor.rs`).
    pub monitor: monitor::Monitor,
    /// The sessions' counters (`counters.rs`).
    pub io_stats: counters::IoStats,
    /// `disconnect` or `unbind` of a tcp or ipc endpoint was called while RECONNECT_STOP had
    /// `RECONNECT_STOP_AFTER_DISCONNECT`: from then on, connecting sessions given that flag end
    /// at a refused connect (`session/reconnect.rs`).
    pub disconnected: std::sync::atomic::AtomicBool,
}

impl Owner for SocketHandle {
    fn wake(&self, id: PipeId, what: Wake) {
        self.mailbox.send(Command::Pipe(id, what));
    }
}

/// How the context's I/O threads are named and scheduled (libzmq's thread options).
#[derive(Clone, Default)]
pub(crate) struct ThreadSetup {
    /// `THREAD_NAME_PREFIX` (an int, or up to 16 bytes through `set_bytes`): threads are
    /// named `<prefix>/oxmq-io-<n>`.
    pub(crate) name_prefix: Option<String>,
    /// `THREAD_AFFINITY_CPU_ADD`/`REMOVE`: the CPUs the threads may run on (empty: any).
    pub(crate) cpus: std::collections::BTreeSet<usize>,
    /// `THREAD_SCHED_POLICY` and `THREAD_PRIORITY`, applied with `pthread_setschedparam`.
    pub(crate) policy: Option<i32>,
    pub(crate) priority: Option<i32>,
}

/// What a socket (or a resolver thread) asks an I/O thread to do.
pub(crate) enum IoCmd {
    /// A bound listener to accept on, and the reactor's entry for it as is.
    Listen(Listening),
    Connect {
        id: u64,
        dialer: Box<dyn Connector>,
        socket: Arc<SocketHandle>,
        cfg: Box<SessionConfig>,
        pipe: Option<PipeEnd>,
    },
    /// A connection accepted by a listener on another I/O thread, handed to this one, the
    /// least loaded, to run its session (as libzmq spreads accepted connections).
    Adopt {
        listener_id: u64,
        socket: Arc<SocketHandle>,
        cfg: Box<SessionConfig>,
        stream: Stream,
    },
    /// unbind or disconnect: close the listener or connection and its sessions now.
    CloseEndpoint {
        id: u64,
    },
    /// The socket closed: close its listeners, let its sessions linger.
    SocketClosed {
        socket_id: u64,
    },
    Pipe(PipeId, Wake),
    /// An application thread lent a session's input on (`session/lease.rs`): keep the lease's
    /// timer.
    Lease(PipeId),
    /// An application thread waits while the I/O thread reads a session's input now (a
    /// connection in its handshake, which only the I/O thread may drive; `Owner::catch_up`).
    Turn(PipeId, Arc<Turned>),
    /// A resolver thread's answer for a connecting session's attempt.
    Resolved {
        token: usize,
        serial: u64,
        addrs: crate::error::Result<crate::transport::resolve::ConnectAddrs>,
    },
    Stop,
}

/// The end of an [`IoCmd::Turn`], for the thread waiting for it.
#[derive(Default)]
pub(crate) struct Turned {
    done: Mutex<bool>,
    cv: std::sync::Condvar,
}

impl Turned {
    fn set(&self) {
        *self.done.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
    }

    /// Waits for the turn, at most `limit` (the I/O thread may be stopping).
    pub(crate) fn wait(&self, limit: std::time::Duration) {
        let done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.cv.wait_timeout_while(done, limit, |d| !*d);
    }
}

pub(crate) struct IoThread {
    queue: Mutex<Vec<IoCmd>>,
    waker: Waker,
    /// The reactor is about to block in (or is in) `epoll_wait` and needs the waker for a new
    /// command; while it runs, it takes the queue before it next waits, so a command posted
    /// meanwhile costs no system call (a streaming sender's wake-ups, one per batch the I/O
    /// thread drains, were an eventfd write each).
    sleeping: std::sync::atomic::AtomicBool,
    /// Our own handle on the reactor's epoll set, for interest changes made from application
    /// threads (`Session::direct_arm`).
    registry: mio::Registry,
    poll: Mutex<Option<Poll>>,
    handle: Mutex<Option<JoinHandle<()>>>,
    /// Timers pending in the reactor, as of its last turn (a gauge for tests and diagnostics).
    timers_pending: std::sync::atomic::AtomicUsize,
    /// Sessions this thread runs or is about to adopt: its load, for placing accepted
    /// connections.
    sessions: std::sync::atomic::AtomicUsize,
    /// The context's I/O threads, this one among them (set once they have all started):
    /// where a listener may hand an accepted connection.
    siblings: std::sync::OnceLock<Vec<std::sync::Weak<IoThread>>>,
    /// The commands posted and carried out, so that an application thread's direct writes
    /// stay behind a write it handed over (`pace::write_pending`).
    progress: Arc<pace::Progress>,
}

const WAKER: Token = Token(usize::MAX);

impl IoThread {
    /// Timers pending in this thread's reactor as of its last turn.
    pub(crate) fn timers_pending(&self) -> usize {
        self.timers_pending.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sessions this thread runs (or is about to adopt).
    pub(crate) fn sessions(&self) -> usize {
        self.sessions.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Tells each thread of a context which threads it may hand accepted connections to.
    pub(crate) fn set_siblings(threads: &[Arc<IoThread>]) {
        let all: Vec<_> = threads.iter().map(Arc::downgrade).collect();
        for t in threads {
            let _ = t.siblings.set(all.clone());
        }
    }

    /// The thread a new accepted connection goes to: the least loaded, this one on a tie (a
    /// context with one I/O thread never hands over). Counts the session in its load.
    fn place(self: &Arc<Self>) -> Arc<IoThread> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut best = self.clone();
        for t in self.siblings.get().into_iter().flatten().filter_map(std::sync::Weak::upgrade) {
            if t.sessions.load(Relaxed) < best.sessions.load(Relaxed) {
                best = t;
            }
        }
        best.sessions.fetch_add(1, Relaxed);
        best
    }

    /// The other threads of the context, for commands every thread must see.
    fn others(&self) -> Vec<Arc<IoThread>> {
        let me = self as *const IoThread;
        self.siblings
            .get()
            .into_iter()
            .flatten()
            .filter_map(std::sync::Weak::upgrade)
            .filter(|t| !std::ptr::eq(Arc::as_ptr(t), me))
            .collect()
    }

    /// An I/O thread's shared half with no thread running it: a test drives its sessions and
    /// takes its commands itself (`sim.rs`). Returns the poll whose registry sessions register
    /// with.
    #[cfg(test)]
    pub(crate) fn detached() -> io::Result<(Arc<IoThread>, Poll)> {
        let poll = Poll::new()?;
        let t = Arc::new(IoThread {
            queue: Mutex::new(Vec::new()),
            timers_pending: Default::default(),
            sessions: Default::default(),
            siblings: std::sync::OnceLock::new(),
            progress: Default::default(),
            waker: Waker::new(poll.registry(), WAKER)?,
            sleeping: std::sync::atomic::AtomicBool::new(false),
            registry: poll.registry().try_clone()?,
            poll: Mutex::new(None),
            handle: Mutex::new(None),
        });
        Ok((t, poll))
    }

    /// The commands posted to a detached thread since the last call (`sim.rs`).
    #[cfg(test)]
    pub(crate) fn take_commands(&self) -> Vec<IoCmd> {
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(crate) fn start(index: usize, setup: &ThreadSetup) -> io::Result<Arc<IoThread>> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        let registry = poll.registry().try_clone()?;
        let t = Arc::new(IoThread {
            queue: Mutex::new(Vec::new()),
            timers_pending: Default::default(),
            sessions: Default::default(),
            siblings: std::sync::OnceLock::new(),
            progress: Default::default(),
            waker,
            sleeping: std::sync::atomic::AtomicBool::new(false),
            registry,
            poll: Mutex::new(Some(poll)),
            handle: Mutex::new(None),
        });
        let t2 = t.clone();
        let poll = t.poll.lock().unwrap_or_else(|p| p.into_inner()).take();
        let name = match &setup.name_prefix {
            Some(p) => format!("{p}/oxmq-io-{index}"),
            None => format!("oxmq-io-{index}"),
        };
        let setup = setup.clone();
        let h = std::thread::Builder::new().name(name).spawn(move || {
            apply_thread_setup(&setup);
            if let Some(poll) = poll {
                Reactor::new(poll, t2).run();
            }
        })?;
        *t.handle.lock().unwrap_or_else(|p| p.into_inner()) = Some(h);
        Ok(t)
    }

    /// Posts a command; wakes the thread when the queue was empty and the thread sleeps (or
    /// is about to: see `Reactor::run`, which looks at the queue after saying so).
    /// Returns the command's number (see [`IoThread::handed_write`]).
    pub(crate) fn send(&self, cmd: IoCmd) -> u64 {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let was_empty = q.is_empty();
        q.push(cmd);
        let seq = self.progress.posted.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        drop(q);
        // SeqCst after the push (published by the unlock), against the reactor's SeqCst store
        // before it looks at the queue: either it finds this command, or we see it sleeping.
        if was_empty && self.sleeping.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = self.waker.wake();
        }
        seq
    }

    /// Posts a write an application thread hands over, and records it as that thread's last
    /// (see `pace`: its next writes stay behind it).
    pub(crate) fn handed_write(&self, cmd: IoCmd) {
        let seq = self.send(cmd);
        pace::handed_write(&self.progress, seq);
    }

    /// Sets the events `fd` (registered under `token`) reports to this thread, edge-triggered
    /// as mio registers it. mio has no empty interest, which `Session::direct_arm` needs, so
    /// this is the raw `epoll_ctl`; mio keeps no state of its own about a registration.
    pub(crate) fn set_interest(&self, fd: std::os::fd::RawFd, token: usize, events: u32) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let mut ev = libc::epoll_event { events: events | libc::EPOLLET as u32, u64: token as u64 };
        // SAFETY: `ev` is a valid epoll_event for the duration of the call; the epoll
        // descriptor is owned by `self.registry`, and MOD changes only `fd`'s registration.
        let rc = unsafe { libc::epoll_ctl(self.registry.as_raw_fd(), libc::EPOLL_CTL_MOD, fd, &mut ev) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Asks the thread to exit once its lingering sessions are done, and waits for it.
    pub(crate) fn stop_and_join(&self) {
        let h = self.handle.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = h {
            self.send(IoCmd::Stop);
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }
}

impl Owner for IoThread {
    fn wake(&self, id: PipeId, what: Wake) {
        self.send(IoCmd::Pipe(id, what));
    }
}

pub(crate) enum Timer {
    Reconnect,
    Linger,
    /// The earliest deadline (handshake timeout, heartbeats) of one connection (the number
    /// tells connections of a session apart).
    Deadline(u64),
    /// A half-closed connection checks whether it may close (the number: this interval, ms).
    CloseCheck(u64),
    /// A connection's input lent to application threads is taken back unless a wait renewed
    /// the lease (`session/lease.rs`; the number tells connections apart).
    Lease(u64),
}

/// A listener an I/O thread accepts on: what a socket's bind hands over, kept as the
/// reactor's entry for it.
pub(crate) struct Listening {
    /// The endpoint's id in its socket (what `Unbind` names).
    pub(crate) id: u64,
    pub(crate) listener: Listener,
    pub(crate) socket: Arc<SocketHandle>,
    /// The configuration of each accepted connection's session.
    pub(crate) cfg: Box<SessionConfig>,
    pub(crate) filters: AcceptFilters,
    /// The layer accepted connections carry (a transport over tcp or ipc).
    pub(crate) wrap: Option<Wrap>,
}

enum Entry {
    Listener(Listening),
    /// Shared with the session's pipe owner, so an application thread can write for an idle
    /// session (the I/O thread locks it per event; the application only ever tries the lock).
    Session(Arc<Mutex<Session>>),
}

fn lock(s: &Mutex<Session>) -> std::sync::MutexGuard<'_, Session> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

fn share(s: Session) -> Arc<Mutex<Session>> {
    let owner = s.owner().clone();
    let arc = Arc::new(Mutex::new(s));
    owner.bind(&arc);
    arc
}

/// The per-thread event loop state, handed to sessions so they can register and set timers.
pub(crate) struct Ctx<'a> {
    pub registry: &'a mio::Registry,
    pub io: &'a Arc<IoThread>,
    timers: &'a mut BTreeMap<(Instant, u64), (usize, u64, Timer)>,
    timer_seq: &'a mut u64,
    /// Sessions that stopped early (read budget) and want another turn without a new event.
    pub again: &'a mut Vec<usize>,
    /// The time, when a test runs sessions on a simulated clock (`sim.rs`); None: the real one.
    clock: Option<Instant>,
}

/// Names one timer, for [`Ctx::cancel_timer`].
pub(crate) type TimerKey = (Instant, u64);

impl Ctx<'_> {
    /// The reactor's clock (a test's simulated one, in `sim.rs`).
    #[inline]
    pub(crate) fn now(&self) -> Instant {
        self.clock.unwrap_or_else(Instant::now)
    }

    pub(crate) fn add_timer(&mut self, at: Instant, token: usize, serial: u64, t: Timer) -> TimerKey {
        *self.timer_seq += 1;
        let key = (at, *self.timer_seq);
        self.timers.insert(key, (token, serial, t));
        key
    }

    /// Drops a timer that has not fired. A timer left to fire for a session that no longer
    /// needs it costs its entry until then: a connection churn must not pile them up.
    pub(crate) fn cancel_timer(&mut self, key: TimerKey) {
        self.timers.remove(&key);
    }
}

struct Reactor {
    poll: Poll,
    io: Arc<IoThread>,
    entries: Vec<Option<Entry>>,
    free: Vec<usize>,
    timers: BTreeMap<(Instant, u64), (usize, u64, Timer)>,
    timer_seq: u64,
    serial: u64,
    stopping: bool,
    again: Vec<usize>,
    /// By token: the session's input is subscriptions (a publisher's), handled before the
    /// other input of the same turn (see `run`).
    subscriptions: Vec<bool>,
    /// The events of a turn left for after the publishers' (token, readable, writable).
    later: Vec<(usize, bool, bool)>,
}

impl Reactor {
    fn new(poll: Poll, io: Arc<IoThread>) -> Reactor {
        Reactor {
            poll,
            io,
            entries: Vec::new(),
            free: Vec::new(),
            timers: BTreeMap::new(),
            timer_seq: 0,
            serial: 0,
            stopping: false,
            again: Vec::new(),
            subscriptions: Vec::new(),
            later: Vec::new(),
        }
    }

    fn alloc(&mut self) -> usize {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.entries.push(None);
                self.entries.len() - 1
            }
        }
    }

    fn run(mut self) {
        let mut events = Events::with_capacity(256);
        let mut cmds = Vec::new();
        loop {
            let mut timeout = if !self.again.is_empty() {
                Some(Duration::ZERO)
            } else {
                self.timers.keys().next().map(|(at, _)| at.saturating_duration_since(Instant::now()))
            };
            self.io.timers_pending.store(self.timers.len(), std::sync::atomic::Ordering::Relaxed);
            // About to wait: from here a new command must wake us. One posted before this
            // store is in the queue, so look there first and do not block if it holds any.
            self.io.sleeping.store(true, std::sync::atomic::Ordering::SeqCst);
            if !self.io.queue.lock().unwrap_or_else(|p| p.into_inner()).is_empty() {
                timeout = Some(Duration::ZERO);
            }
            let polled = self.poll.poll(&mut events, timeout);
            self.io.sleeping.store(false, std::sync::atomic::Ordering::Relaxed);
            if let Err(e) = polled {
                if e.kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            // Subscriptions first: a subscription that reached the kernel before a message
            // that makes an application publish is in the publisher's pipe before that
            // message is in its socket's (as one libzmq I/O thread reading in order gives).
            for ev in events.iter() {
                let t = ev.token().0;
                if ev.token() == WAKER {
                    continue;
                }
                let (r, w) = (ev.is_readable() || ev.is_read_closed() || ev.is_error(), ev.is_writable());
                if self.subscriptions.get(t).copied().unwrap_or(false) {
                    self.dispatch(t, r, w);
                } else {
                    self.later.push((t, r, w));
                }
            }
            let later = std::mem::take(&mut self.later);
            for &(t, r, w) in &later {
                self.dispatch(t, r, w);
            }
            self.later = later;
            self.later.clear();
            let upto = {
                let mut q = self.io.queue.lock().unwrap_or_else(|p| p.into_inner());
                std::mem::swap(&mut *q, &mut cmds);
                self.io.progress.posted.load(std::sync::atomic::Ordering::Relaxed)
            };
            for cmd in cmds.drain(..) {
                self.command(cmd);
            }
            self.io.progress.done.store(upto, std::sync::atomic::Ordering::Release);
            self.fire_timers();
            let again = std::mem::take(&mut self.again);
            for t in again {
                self.dispatch(t, true, true);
            }
            if self.stopping && !self.entries.iter().any(|e| matches!(e, Some(Entry::Session(_)))) {
                break;
            }
        }
    }

    /// The reactor's state as sessions see it.
    fn ctx(&mut self) -> Ctx<'_> {
        Ctx {
            registry: self.poll.registry(),
            io: &self.io,
            timers: &mut self.timers,
            timer_seq: &mut self.timer_seq,
            again: &mut self.again,
            clock: None,
        }
    }

    fn with_session(&mut self, token: usize, f: impl FnOnce(&mut Session, &mut Ctx<'_>) -> bool) {
        let Some(Some(Entry::Session(s))) = self.entries.get(token) else { return };
        let s = s.clone();
        let mut ctx = self.ctx();
        let mut guard = lock(&s);
        let keep = f(&mut guard, &mut ctx);
        if !keep {
            guard.shutdown(&mut ctx);
            drop(guard);
            self.entries[token] = None;
            self.free.push(token);
            self.io.sessions.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// [`Reactor::with_session`] for a command that names its session by slot and serial: one
    /// for a session that has ended since (its slot reused) is ignored.
    fn with_named_session(&mut self, token: usize, serial: u64, f: impl FnOnce(&mut Session, &mut Ctx<'_>) -> bool) {
        self.with_session(token, |s, ctx| s.serial() != serial || f(s, ctx));
    }

    fn dispatch(&mut self, token: usize, readable: bool, writable: bool) {
        match self.entries.get_mut(token) {
            Some(Some(Entry::Listener(_))) => self.accept(token),
            Some(Some(Entry::Session(_))) => self.with_session(token, |s, ctx| s.ready(ctx, readable, writable)),
            _ => {}
        }
    }

    fn accept(&mut self, token: usize) {
        loop {
            let Some(Some(Entry::Listener(l))) = self.entries.get_mut(token) else { return };
            let stream = match &l.listener {
                Listener::Tcp(tl) => match tl.accept() {
                    Ok((s, _)) if !l.filters.admit_tcp(s.peer_addr().ok().map(|a| a.ip())) => {
                        // Refused by TCP_ACCEPT_FILTER: closed before any handshake.
                        drop(s);
                        continue;
                    }
                    Ok((s, _)) => {
                        let _ = s.set_nonblocking(true);
                        Stream::Tcp(mio::net::TcpStream::from_std(s))
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // EMFILE and friends: stop for now; the listener stays registered.
                    Err(e) => return monitor::accept_failed(&l.socket.monitor, &l.listener, &e),
                },
                Listener::Ipc(ul, _) => match ul.accept() {
                    Ok((s, _)) if !l.filters.admit_ipc(std::os::fd::AsRawFd::as_raw_fd(&s)) => {
                        // Refused by IPC_FILTER_UID/GID/PID.
                        drop(s);
                        continue;
                    }
                    Ok((s, _)) => {
                        let _ = s.set_nonblocking(true);
                        Stream::Ipc(mio::net::UnixStream::from_std(s))
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return monitor::accept_failed(&l.socket.monitor, &l.listener, &e),
                },
            };
            let stream = match &l.wrap {
                Some(w) => match w(stream, Role::Server) {
                    Ok(s) => s,
                    Err(_) => continue, // the layer refused it: closed before any handshake
                },
                None => stream,
            };
            let (socket, cfg, listener_id) = (l.socket.clone(), l.cfg.clone(), l.id);
            let to = self.io.place();
            if Arc::ptr_eq(&to, &self.io) {
                self.adopt(listener_id, socket, cfg, stream);
            } else {
                to.send(IoCmd::Adopt { listener_id, socket, cfg, stream });
            }
        }
    }

    /// Runs the session of an accepted connection (counted in this thread's load already).
    fn adopt(&mut self, listener_id: u64, socket: Arc<SocketHandle>, cfg: Box<SessionConfig>, stream: Stream) {
        let made = self.add_session(|ctx, t, serial| Session::accepted(ctx, t, serial, listener_id, socket, cfg, stream));
        if made.is_none() {
            self.io.sessions.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Makes a session under a new token and serial and keeps it; returns its token, or None
    /// (the token freed) when `make` gives none.
    fn add_session(&mut self, make: impl FnOnce(&mut Ctx<'_>, usize, u64) -> Option<Session>) -> Option<usize> {
        let t = self.alloc();
        self.serial += 1;
        let serial = self.serial;
        let mut ctx = self.ctx();
        match make(&mut ctx, t, serial) {
            Some(s) => {
                if self.subscriptions.len() <= t {
                    self.subscriptions.resize(t + 1, false);
                }
                self.subscriptions[t] = s.reads_subscriptions();
                self.entries[t] = Some(Entry::Session(share(s)));
                Some(t)
            }
            None => {
                self.free.push(t);
                None
            }
        }
    }

    fn command(&mut self, cmd: IoCmd) {
        match cmd {
            IoCmd::Listen(mut l) => {
                let t = self.alloc();
                let reg = match &mut l.listener {
                    Listener::Tcp(l) => {
                        let fd = std::os::fd::AsRawFd::as_raw_fd(l);
                        self.poll.registry().register(&mut mio::unix::SourceFd(&fd), Token(t), Interest::READABLE)
                    }
                    Listener::Ipc(l, _) => {
                        let fd = std::os::fd::AsRawFd::as_raw_fd(l);
                        self.poll.registry().register(&mut mio::unix::SourceFd(&fd), Token(t), Interest::READABLE)
                    }
                };
                if reg.is_err() {
                    self.free.push(t);
                    return;
                }
                self.entries[t] = Some(Entry::Listener(l));
                // Connections may already be waiting in the backlog (edge-triggered epoll only
                // reports new arrivals).
                self.accept(t);
            }
            IoCmd::Connect { id, dialer, socket, cfg, pipe } => {
                let made =
                    self.add_session(|ctx, t, serial| Some(Session::connecting(ctx, t, serial, id, dialer, socket, cfg, pipe)));
                if let Some(t) = made {
                    self.io.sessions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    self.with_session(t, |s, ctx| s.start_connect(ctx));
                }
            }
            IoCmd::Adopt { listener_id, socket, cfg, stream } => self.adopt(listener_id, socket, cfg, stream),
            IoCmd::CloseEndpoint { id } => {
                let mut listener = false;
                for t in 0..self.entries.len() {
                    match &self.entries[t] {
                        Some(Entry::Listener(l)) if l.id == id => {
                            self.close_listener(t);
                            listener = true;
                        }
                        Some(Entry::Session(s)) if lock(s).endpoint_id() == id => {
                            self.with_session(t, |_, _| false);
                        }
                        _ => {}
                    }
                }
                // Its connections that other threads adopted go too: the command follows
                // every hand-over this thread made, in each thread's queue.
                if listener {
                    for t in self.io.others() {
                        t.send(IoCmd::CloseEndpoint { id });
                    }
                }
            }
            IoCmd::SocketClosed { socket_id } => {
                let mut listener = false;
                for t in 0..self.entries.len() {
                    match &self.entries[t] {
                        Some(Entry::Listener(l)) if l.socket.id == socket_id => {
                            self.close_listener(t);
                            listener = true;
                        }
                        Some(Entry::Session(s)) if lock(s).socket_id() == socket_id => {
                            self.with_session(t, |s, ctx| s.socket_closed(ctx));
                        }
                        _ => {}
                    }
                }
                // As above: the sessions of connections this thread's listeners handed over.
                // A thread told twice (it also runs a connect of the socket) closes once.
                if listener {
                    for t in self.io.others() {
                        t.send(IoCmd::SocketClosed { socket_id });
                    }
                }
            }
            IoCmd::Pipe(id, what) => self.with_named_session(id.slot, id.serial, |s, ctx| s.pipe_event(ctx, what)),
            IoCmd::Lease(id) => self.with_named_session(id.slot, id.serial, |s, ctx| s.lease_asked(ctx)),
            IoCmd::Turn(id, turned) => {
                self.with_named_session(id.slot, id.serial, |s, ctx| s.ready(ctx, true, false));
                turned.set();
            }
            IoCmd::Resolved { token, serial, addrs } => self.with_named_session(token, serial, |s, ctx| s.resolved(ctx, addrs)),
            IoCmd::Stop => {
                self.stopping = true;
                for t in 0..self.entries.len() {
                    if matches!(self.entries[t], Some(Entry::Session(_))) {
                        self.with_session(t, |s, _| s.keep_on_stop());
                    }
                }
            }
        }
    }

    fn close_listener(&mut self, t: usize) {
        if let Some(Entry::Listener(l)) = self.entries[t].take() {
            match &l.listener {
                Listener::Tcp(tl) => {
                    let fd = std::os::fd::AsRawFd::as_raw_fd(tl);
                    let _ = self.poll.registry().deregister(&mut mio::unix::SourceFd(&fd));
                }
                Listener::Ipc(ul, path) => {
                    let fd = std::os::fd::AsRawFd::as_raw_fd(ul);
                    let _ = self.poll.registry().deregister(&mut mio::unix::SourceFd(&fd));
                    if let Some(p) = path {
                        p.remove();
                    }
                }
            }
            self.free.push(t);
        }
    }

    fn fire_timers(&mut self) {
        let now = Instant::now();
        while let Some(entry) = self.timers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (token, serial, timer) = entry.remove();
            if let Some(Some(Entry::Session(s))) = self.entries.get(token) {
                if lock(s).serial() == serial {
                    self.with_session(token, |s, ctx| s.timer(ctx, timer));
                }
            }
        }
    }
}

/// Applies the context's affinity and scheduling options to the calling (I/O) thread. As in
/// libzmq they are requests: a CPU the machine lacks or a policy the process may not use
/// leaves the thread as it was rather than failing the bind or connect that started it.
fn apply_thread_setup(setup: &ThreadSetup) {
    if !setup.cpus.is_empty() {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET only writes inside it
        // (indices past CPU_SETSIZE are skipped), and sched_setaffinity reads that many bytes.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in &setup.cpus {
                if cpu < libc::CPU_SETSIZE as usize {
                    libc::CPU_SET(cpu, &mut set);
                }
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
    if setup.policy.is_some() || setup.priority.is_some() {
        // SAFETY: pthread_self is this thread; the sched_param outlives both calls.
        unsafe {
            let mut policy = 0;
            let mut param: libc::sched_param = std::mem::zeroed();
            if libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param) == 0 {
                let policy = setup.policy.unwrap_or(policy);
                if let Some(p) = setup.priority {
                    param.sched_priority = p;
                }
                libc::pthread_setschedparam(libc::pthread_self(), policy, &param);
            }
        }
    }
}
