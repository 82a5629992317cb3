//! The direct receive path: a receiver with nothing queued reads its connections itself.
//!
//! Without it, a message that arrives while `recv` waits costs two wake-ups in a row: the I/O
//! thread's (epoll), which reads, decodes and writes the pipe, then the receiver's (the
//! mailbox eventfd). On an idle machine each wake-up of a sleeping core costs tens of
//! microseconds, so that second hop is most of the latency a request/reply exchange pays
//! above plain TCP. Here the waiting thread polls its connections' descriptors beside its
//! mailbox and, when one becomes readable and the I/O thread is not busy with that connection
//! (the session's mutex is only *tried*), reads and decodes the input on its own thread: one
//! wake-up per message, as with a plain socket.
//!
//! The I/O thread still owns every connection, so correctness never depends on this path:
//! whatever it cannot finish (a command frame, a full pipe, the end of the stream, an error, a
//! busy session) is left to the I/O thread, and the receiver falls back to waiting on its
//! mailbox for that connection. While the receiver waits on a connection, the I/O thread's
//! epoll registration stops reporting its input (`Owner::direct_arm`), or every message would
//! wake that thread too, for nothing, and it would hold the session just when the receiver
//! wants to write its reply; a guard gives the input back however the wait ends. Only sockets
//! with a few connections take this path: a fan-in socket keeps the I/O thread's batching, and
//! a wait never costs more than one `poll` over a handful of descriptors. The wait borrows
//! nothing of the socket ([`Watch`]), so a thread-safe socket's receiver runs it without the
//! socket's lock ([`SyncWait`]) while its other threads' calls go on, and `crate::poll` runs
//! one over a few sockets at once.
//!
//! Taking the input over and handing it back are an `epoll_ctl` each, on the path of every
//! exchange. So a receive (or a `crate::poll`) whose wait a message ended quickly (within
//! [`LEND_AFTER`]: an exchange) does not hand the input back: it stays lent to application threads
//! (`io/session/lease.rs`), and the next wait finds it taken over already. If no wait comes back for it within the lease, the I/O
//! thread takes it back, so input that arrives meanwhile waits in the kernel for at most
//! about two leases before the I/O thread reads it.
//!
//! Even one wake-up is most of a loopback round trip on a machine whose idle cores sleep: the
//! kernel delivers the bytes in microseconds, then the scheduler takes tens to run the thread
//! that waits for them. So a wait whose socket's recent waits were short (a request/reply
//! exchange, a burst) first keeps looking without sleeping, for up to
//! [`crate::opt::OXMQ_RECV_SPIN`] microseconds (50 by default), yielding the CPU between looks
//! so a runnable thread on that core (the peer, the sender's I/O thread) is not starved. A look
//! is a `poll` with a zero timeout, or over unix streams alone a read of each connection and a
//! look at the mailbox's commands in memory (see [`Watch::run`]). A wait
//! that outlasts that window sleeps as before, and the socket's next wait does not spin until
//! one ends within the window again: a socket that receives now and then never spins, and an
//! exchange pays at most one window of CPU per wait.

use super::{Socket, DIRECT_MAX};
use std::os::fd::RawFd;

/// The most descriptors [`Socket::wait_recv_also`] watches beside the socket's own.
pub const WAIT_ALSO_MAX: usize = 4;
use crate::pipe::{DirectRead, Owner, PipeId};
use crate::{Error, Result};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest wait after which a receive (or `crate::poll`) lends its connections' input to
/// its next wait (see the module comment): a wait as short as this is one of a quick exchange.
const LEND_AFTER: Duration = Duration::from_millis(1);

/// The default spin window (see the module comment).
const SPIN_DEFAULT_US: u32 = 50;
/// The largest window `OXMQ_RECV_SPIN` accepts: a second.
const SPIN_MAX_US: u32 = 1_000_000;

/// A socket's spin window and whether its last wait ended within it.
#[derive(Debug)]
pub(super) struct Spin {
    window: Duration,
    hot: bool,
}

impl Spin {
    pub(super) fn new() -> Spin {
        static DEFAULT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        let us = *DEFAULT.get_or_init(|| {
            // One CPU: spinning only keeps the peer that would answer off it.
            if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
                return 0;
            }
            std::env::var("OXMQ_RECV_SPIN_US")
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok())
                .map_or(SPIN_DEFAULT_US, |v| v.min(SPIN_MAX_US))
        });
        Spin { window: Duration::from_micros(u64::from(us)), hot: true }
    }

    pub(super) fn micros(&self) -> i32 {
        self.window.as_micros() as i32
    }

    /// `OXMQ_RECV_SPIN`: an int of microseconds, 0 to `SPIN_MAX_US`.
    pub(super) fn set(&mut self, value: &[u8]) -> Result<()> {
        let v = i32::from_ne_bytes(value.try_into().map_err(|_| Error::Invalid)?);
        if !(0..=SPIN_MAX_US as i32).contains(&v) {
            return Err(Error::Invalid);
        }
        self.window = Duration::from_micros(v as u64);
        self.hot = true;
        Ok(())
    }

    /// When a wait that starts at `start` stops spinning, if it spins at all.
    fn until(&self, start: Instant, deadline: Option<Instant>) -> Option<Instant> {
        if !self.hot || self.window.is_zero() {
            return None;
        }
        let end = start + self.window;
        Some(deadline.map_or(end, |d| d.min(end)))
    }

    /// A wait that started at `start` ended (with input, or at its deadline).
    fn ended(&mut self, start: Instant) {
        if !self.window.is_zero() {
            self.hot = start.elapsed() <= self.window;
        }
    }
}

impl Socket {
    /// Waits up to `timeout` (None: no limit) for something that may let `recv` succeed,
    /// reading the socket's connections on the calling thread where it can, without receiving.
    /// `Ok(())` when the socket's state changed (try `recv` again), `Err(Again)` at the timeout,
    /// `Err(Intr)` when a signal interrupted the wait, `Err(Term)` on shutdown. For bindings
    /// that wait in slices (to look for signals between them) instead of blocking in `recv`.
    pub fn wait_recv(&mut self, timeout: Option<std::time::Duration>) -> Result<()> {
        self.wait_recv_also(timeout, &[])
    }

    /// [`Socket::wait_recv`] that also ends, with `Ok(())`, when one of the descriptors in
    /// `also` (at most [`WAIT_ALSO_MAX`]) becomes readable: for a caller that receives from
    /// this socket and a few others, whose level-triggered descriptors
    /// ([`Socket::set_fd_level`]) it passes here. This socket keeps its direct receive path
    /// and spin; the others are looked at with the same `poll`. `Invalid` for too many.
    pub fn wait_recv_also(&mut self, timeout: Option<std::time::Duration>, also: &[RawFd]) -> Result<()> {
        if also.len() > WAIT_ALSO_MAX {
            return Err(Error::Invalid);
        }
        self.check_term()?;
        self.wait_input(timeout.map(|t| Instant::now() + t), also, false)?;
        crate::socket::catchup::waited_for_input();
        Ok(())
    }

    /// Waits for input until `deadline`, as [`Socket::wait`] does, reading the connections
    /// directly where it can. Returns once a command (a message among them) is processed, or
    /// once one of the descriptors in `also` is readable; `Err(Again)` on timeout, `Err(Term)`
    /// on shutdown, `Err(Intr)` on a signal. With `lend` (a receive that waits again whenever
    /// it finds nothing), a wait that a message ended within [`LEND_AFTER`] leaves the
    /// connections' input lent to this thread's next wait (see the module comment).
    pub(super) fn wait_input(&mut self, deadline: Option<Instant>, also: &[RawFd], lend: bool) -> Result<()> {
        self.level_before_wait();
        if self.shared.mailbox.has_pending() {
            return self.wait(deadline);
        }
        // Built in place: a watch is several hundred bytes, and a wait moved it twice.
        let mut watch = Watch::new(self.env.clone());
        if !self.fill_watch(&mut watch, also) {
            // Fan-in: the I/O thread batches better.
            return self.wait(deadline);
        }
        let start = Instant::now();
        let mut spin = self.spin.until(start, deadline);
        let spins = spin.is_some();
        let woke = watch.run(deadline, &mut spin)?;
        match woke {
            Woke::Mailbox => {
                if lend {
                    watch.lend_if_quick(start);
                }
                self.spin.ended(start);
                if spins {
                    self.counters.spun_waits += 1;
                }
                self.wait(deadline)
            }
            Woke::Also => {
                self.spin.ended(start);
                Ok(())
            }
            Woke::Timeout => {
                self.spin.ended(start);
                Err(Error::Again)
            }
            Woke::Idle => {
                let r = self.wait(deadline);
                self.spin.ended(start);
                r
            }
        }
    }

    /// Puts into the empty watch `w` the connections a wait can read on its own thread (at
    /// most [`DIRECT_MAX`]), taken over from the I/O thread until `w` is dropped, and their
    /// input already waiting read at once; with the mailbox and `also` (at most
    /// [`WAIT_ALSO_MAX`]) beside them. False for a socket with more connections and nothing
    /// in `also`: it waits on its mailbox alone.
    fn fill_watch(&mut self, w: &mut Watch, also: &[RawFd]) -> bool {
        for &fd in also {
            w.add_also(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
        }
        if w.add_socket(self, true) != Added::Read && also.is_empty() {
            return false;
        }
        w.arm();
        true
    }

    /// For a receive that will not wait (the async layer's, before it goes pending): reads the
    /// socket's connections once on the calling thread, as a wait's direct path does, without
    /// polling or taking their input over from the I/O thread. True if anything was read: try
    /// the receive again. A fan-in socket reads nothing here (its input is the I/O thread's).
    #[cfg(feature = "async")]
    pub(crate) fn read_now(&mut self) -> bool {
        let mut w = Watch::new(self.env.clone());
        if w.add_socket(self, true) != Added::Read {
            return false;
        }
        let mut read = false;
        for i in 0..w.n {
            read |= w.read(i) == DirectRead::Read;
        }
        read
    }

    /// One look of a receive that yields between looks (the async layer's spin): takes the
    /// socket's connections' input over from the I/O thread (or finds it lent already, at no
    /// cost), reads what waits there on the calling thread, then with `lend` lends the input on
    /// to the next look, which the I/O thread takes back if no look comes within the lease
    /// (`io/session/lease.rs`), or without it hands the input back. True if commands wait
    /// in the mailbox (what the look read, among them): try the receive again. A fan-in
    /// socket's look reads nothing (its input is the I/O thread's).
    #[cfg(feature = "async")]
    pub(crate) fn look(&mut self, lend: bool) -> bool {
        if self.shared.mailbox.has_pending() {
            return true;
        }
        let mut w = Watch::new(self.env.clone());
        // Arming reads each connection once.
        if !self.fill_watch(&mut w, &[]) {
            return false;
        }
        if lend {
            w.lend = Some(Instant::now());
        }
        w.pending()
    }

    /// An empty [`Watch`] in this socket's context (`poll`'s direct wait adds its sockets).
    pub(crate) fn new_watch(&self) -> Watch {
        Watch::new(self.env.clone())
    }

    /// The socket's spin window ([`crate::opt::OXMQ_RECV_SPIN`]), for the async layer's spin,
    /// which keeps its own rule of when to spin.
    #[cfg(feature = "async")]
    pub(crate) fn spin_window(&self) -> Duration {
        self.spin.window
    }

    /// When a wait starting at `start` stops spinning, if it spins (`poll`'s direct wait).
    pub(crate) fn spin_until(&self, start: Instant, deadline: Option<Instant>) -> Option<Instant> {
        self.spin.until(start, deadline)
    }

    /// A wait that started at `start` ended (`poll`'s direct wait).
    pub(crate) fn spin_ended(&mut self, start: Instant) {
        self.spin.ended(start);
    }
}

impl Socket {
    /// For a thread-safe socket's receiver about to wait: the wait [`Socket::wait_input`]
    /// would make, to be run without the socket's lock ([`SyncWait::run`]) and handed back
    /// after ([`Socket::sync_wait_done`]). None when commands are already queued, in
    /// level-triggered mode, or with too many connections: wait on the mailbox alone.
    pub(crate) fn sync_wait(&mut self, deadline: Option<Instant>) -> Option<SyncWait> {
        if self.level.mask != 0 || self.shared.mailbox.has_pending() {
            return None;
        }
        let mut watch = Watch::new(self.env.clone());
        if !self.fill_watch(&mut watch, &[]) {
            return None;
        }
        let start = Instant::now();
        let spin = self.spin.until(start, deadline);
        Some(SyncWait { watch, start, spins: spin.is_some(), spin, to_mailbox: false })
    }

    /// Takes back what a [`SyncWait`] learnt: whether the wait ended within the spin window.
    pub(crate) fn sync_wait_done(&mut self, w: SyncWait) {
        self.spin.ended(w.start);
        if w.to_mailbox && w.spins {
            self.counters.spun_waits += 1;
        }
    }
}

/// A receive wait of a thread-safe socket, run by its waiting thread without the socket's
/// lock so that the other threads' calls go on meanwhile: the direct receive path and spin
/// of [`Socket::wait_input`], then the mailbox.
pub(crate) struct SyncWait {
    watch: Watch,
    start: Instant,
    spin: Option<Instant>,
    spins: bool,
    /// The wait ended with commands in the mailbox (before the spin ran out, if it spun).
    to_mailbox: bool,
}

impl SyncWait {
    /// Waits until the socket may be able to do more, or `deadline` (`Ok` either way: the
    /// caller tries again and looks at the clock); `Err(Intr)` on a signal, `Err(Term)` on
    /// shutdown.
    pub(crate) fn run(&mut self, deadline: Option<Instant>) -> Result<()> {
        match self.watch.run(deadline, &mut self.spin)? {
            Woke::Mailbox => {
                self.to_mailbox = true;
                Ok(())
            }
            Woke::Also | Woke::Timeout => Ok(()),
            // An interrupted wait is `Error::Intr` (`From<io::Error>`).
            Woke::Idle => {
                self.watch.mailboxes[0].as_ref().expect("the socket's mailbox").wait(deadline).map(drop).map_err(Error::from)
            }
        }
    }
}

/// What ended a [`Watch::run`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Woke {
    /// Commands are waiting in the mailbox (a message, among them): process them.
    Mailbox,
    /// One of the caller's other descriptors is readable.
    Also,
    /// The deadline passed.
    Timeout,
    /// There is no connection to poll (inproc peers, or sessions the I/O thread holds), and
    /// the spin, if any, is over: wait on the mailbox.
    Idle,
}

/// Sockets one [`Watch`] waits on at most (`poll` over a few sockets).
pub(crate) const WATCH_SOCKETS: usize = 4;
/// Descriptors one [`Watch`] polls at most: the sockets' mailboxes, the caller's others, the
/// connections.
const WATCH_FDS: usize = WATCH_SOCKETS + WAIT_ALSO_MAX + DIRECT_MAX;

/// What [`Watch::add_socket`] took of a socket.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Added {
    /// Its mailbox and its connections (read on the waiting thread).
    Read,
    /// Its mailbox only: not asked to read, or more connections than the watch has room for
    /// (their input comes through the I/O thread).
    Mailbox,
    /// Nothing: the watch has no room for another socket.
    Full,
}

/// A wait over sockets' mailboxes and the connections it reads itself (see the module
/// comment), and other descriptors of the caller. It holds no borrow of the sockets, so a
/// thread-safe socket's waiter runs it without the socket's lock; dropping it gives the
/// connections' input back to the I/O thread.
pub(crate) struct Watch {
    env: std::sync::Arc<super::env::Env>,
    mailboxes: [Option<Arc<crate::mailbox::Mailbox>>; WATCH_SOCKETS],
    /// Per mailbox: reads may leave its descriptor unsignalled (see [`Watch::read`]); not in
    /// level-triggered mode, where its state is the user's readiness.
    quiet: [bool; WATCH_SOCKETS],
    /// Mailboxes: `fds[..s]` once armed.
    s: usize,
    also: [libc::pollfd; WAIT_ALSO_MAX],
    /// The caller's other descriptors: `fds[s..s + k]` once armed.
    k: usize,
    peers: [Option<(Arc<dyn Owner>, PipeId)>; DIRECT_MAX],
    /// The mailbox (index) of each peer's socket.
    mailbox_of: [usize; DIRECT_MAX],
    n: usize,
    /// Connections whose input this wait took over.
    on: [bool; DIRECT_MAX],
    /// Lend that input to the next wait instead of handing it back
    /// ([`Watch::lend_if_quick`]): when the wait ended.
    lend: Option<Instant>,
    fds: [libc::pollfd; WATCH_FDS],
    /// The connection (index into `peers`) each polled descriptor past the others belongs to.
    who: [usize; WATCH_FDS],
    /// Per connection: a read that finds nothing is as cheap as a poll (`Armed::reads_cheaply`).
    reads_cheaply: [bool; DIRECT_MAX],
    /// Descriptors polled.
    m: usize,
}

impl Watch {
    pub(crate) fn new(env: std::sync::Arc<super::env::Env>) -> Watch {
        let none = libc::pollfd { fd: -1, events: libc::POLLIN, revents: 0 };
        Watch {
            env,
            mailboxes: Default::default(),
            quiet: [false; WATCH_SOCKETS],
            s: 0,
            also: [none; WAIT_ALSO_MAX],
            k: 0,
            peers: Default::default(),
            mailbox_of: [0; DIRECT_MAX],
            n: 0,
            on: [false; DIRECT_MAX],
            lend: None,
            fds: [none; WATCH_FDS],
            who: [0; WATCH_FDS],
            reads_cheaply: [false; DIRECT_MAX],
            m: 0,
        }
    }

    /// Watches `sock`'s mailbox and, with `read`, reads its connections (all of them, or none
    /// if they do not fit). Before [`Watch::arm`].
    pub(crate) fn add_socket(&mut self, sock: &Socket, read: bool) -> Added {
        if self.s == WATCH_SOCKETS {
            return Added::Full;
        }
        let i = self.s;
        self.mailboxes[i] = Some(sock.shared.mailbox.clone());
        self.quiet[i] = sock.level.mask == 0;
        self.s += 1;
        if !read {
            return Added::Mailbox;
        }
        let first = self.n;
        for slot in sock.pipes.slots.iter().flatten() {
            if let Some(peer) = slot.end.peer_owner() {
                if self.n == DIRECT_MAX {
                    // Fan-in: the I/O thread batches better.
                    for p in &mut self.peers[first..] {
                        *p = None;
                    }
                    self.n = first;
                    return Added::Mailbox;
                }
                self.peers[self.n] = Some(peer);
                self.mailbox_of[self.n] = i;
                self.n += 1;
            }
        }
        Added::Read
    }

    /// Watches a descriptor of the caller's for the events in `pfd`; false when there are
    /// already [`WAIT_ALSO_MAX`]. Before [`Watch::arm`].
    pub(crate) fn add_also(&mut self, pfd: libc::pollfd) -> bool {
        if self.k == WAIT_ALSO_MAX {
            return false;
        }
        self.also[self.k] = libc::pollfd { revents: 0, ..pfd };
        self.k += 1;
        true
    }

    /// Takes the connections' input over from the I/O thread and reads what is already
    /// waiting; the watch is then ready to [`run`](Watch::run).
    pub(crate) fn arm(&mut self) {
        for i in 0..self.s {
            self.fds[i].fd = self.mailboxes[i].as_ref().expect("added mailboxes").fd();
        }
        self.fds[self.s..self.s + self.k].copy_from_slice(&self.also[..self.k]);
        self.m = self.s + self.k;
        for i in 0..self.n {
            let Some((owner, id)) = &self.peers[i] else { continue };
            if let Some(armed) = owner.direct_arm(*id) {
                self.on[i] = true;
                self.reads_cheaply[i] = armed.reads_cheaply;
                self.read(i);
                self.fds[self.m].fd = armed.fd;
                self.who[self.m] = i;
                self.m += 1;
            }
        }
    }

    /// Reads connection `i` on this thread. Its socket's mailbox is quiet meanwhile: the read
    /// posts a command for each message it delivers to the waiting thread, which looks at the
    /// mailbox next anyway, so signalling the eventfd (and draining it) would only cost two
    /// syscalls.
    fn read(&self, i: usize) -> DirectRead {
        let Some((owner, id)) = &self.peers[i] else { return DirectRead::Refused };
        let b = self.mailbox_of[i];
        let Some(mailbox) = self.mailboxes[b].as_deref().filter(|_| self.quiet[b]) else {
            return owner.direct_read(*id);
        };
        /// Ends the quiet stretch however the read ends.
        struct Quiet<'a>(&'a crate::mailbox::Mailbox);
        impl Drop for Quiet<'_> {
            fn drop(&mut self) {
                self.0.set_quiet(false);
            }
        }
        mailbox.set_quiet(true);
        let _quiet = Quiet(mailbox);
        owner.direct_read(*id)
    }

    /// Gives connection `i`'s input back to the I/O thread, or lends it on ([`Watch::lend_if_quick`]).
    fn off(&mut self, i: usize) {
        if std::mem::take(&mut self.on[i]) {
            if let Some((owner, id)) = &self.peers[i] {
                owner.direct_disarm(*id, self.lend);
            }
        }
    }

    /// For a caller that waits again at once: if the wait that began at `start` and that a
    /// message ended now was quick (within [`LEND_AFTER`]), the connections' input it took
    /// over stays lent to application threads when the watch ends (`Owner::direct_disarm`).
    pub(crate) fn lend_if_quick(&mut self, start: Instant) {
        let now = Instant::now();
        if now - start <= LEND_AFTER {
            self.lend = Some(now);
        }
    }

    /// Commands are queued on a mailbox. (One left with only a late signal to read is not
    /// looked at here: its descriptor polls readable once the signal lands.)
    fn pending(&self) -> bool {
        self.mailboxes[..self.s].iter().flatten().any(|m| m.has_commands())
    }

    /// Waits until `deadline`, polling without sleeping until `spin` (then `None`: sleep from
    /// there on), reading the connections that become readable. After [`Watch::arm`].
    ///
    /// While it spins over nothing but mailboxes and connections whose empty reads are cheap
    /// (`Armed::reads_cheaply`), it reads the connections instead of polling them: a poll that
    /// finds input is followed by the read that takes it, one system call more on the
    /// message's path, and the mailboxes need none (their commands are seen in memory).
    pub(crate) fn run(&mut self, deadline: Option<Instant>, spin: &mut Option<Instant>) -> Result<Woke> {
        let (s, k) = (self.s, self.k);
        // `arm` has just read every connection: the spin yields before it reads them again.
        let mut read_due = false;
        loop {
            if self.pending() {
                return Ok(Woke::Mailbox);
            }
            // Readiness that brought no message (a peer's command, a partial frame) must not
            // stretch the wait past its deadline.
            if self.m > s && deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(Woke::Timeout);
            }
            if self.m == s {
                // Nothing to poll but mailboxes: the input comes through them, which the spin
                // watches without a syscall.
                match *spin {
                    Some(until) if Instant::now() < until => {
                        std::thread::yield_now();
                        continue;
                    }
                    _ => return Ok(Woke::Idle),
                }
            }
            if let (Some(until), true) = (*spin, k == 0 && self.look_by_reading()) {
                if std::mem::replace(&mut read_due, true) && self.read_all() {
                    // What it decoded is in the mailboxes now (or a partial frame: read on).
                    continue;
                }
                if self.env.is_terminating() {
                    return Err(Error::Term);
                }
                if self.m == s {
                    continue; // every connection went back to the I/O thread
                }
                if Instant::now() < until {
                    std::thread::yield_now();
                } else {
                    *spin = None; // sleep from now on
                }
                continue;
            }
            let timeout = match spin {
                Some(_) => 0,
                None => crate::mailbox::poll_timeout(deadline),
            };
            // SAFETY: `fds[..m]` are initialised pollfds that live across the call.
            let rc = unsafe { libc::poll(self.fds.as_mut_ptr(), self.m as libc::nfds_t, timeout) };
            if rc < 0 {
                return Err(std::io::Error::last_os_error().into()); // EINTR is Error::Intr
            }
            if self.env.is_terminating() {
                return Err(Error::Term);
            }
            if self.fds[..s].iter().any(|f| f.revents != 0) {
                return Ok(Woke::Mailbox);
            }
            if self.fds[s..s + k].iter().any(|f| f.revents != 0) {
                return Ok(Woke::Also);
            }
            if rc == 0 {
                if let Some(until) = *spin {
                    if Instant::now() < until {
                        std::thread::yield_now();
                    } else {
                        *spin = None; // sleep from now on
                    }
                    continue;
                }
                return Ok(Woke::Timeout);
            }
            // Connections this thread could not read (busy, or input only the I/O thread may
            // handle) leave the set: the I/O thread delivers theirs through the mailbox.
            let mut j = s + k;
            while j < self.m {
                if self.fds[j].revents != 0 {
                    self.fds[j].revents = 0;
                    if self.read(self.who[j]) != DirectRead::Read {
                        self.drop_polled(j);
                        continue;
                    }
                }
                j += 1;
            }
        }
    }

    /// Every connection polled reads cheaply when empty (see [`Watch::run`]).
    fn look_by_reading(&self) -> bool {
        self.who[self.s + self.k..self.m].iter().all(|&i| self.reads_cheaply[i])
    }

    /// Reads every connection in the set (a look of the spin), dropping those this thread
    /// may not read: true if any read input.
    fn read_all(&mut self) -> bool {
        let mut read = false;
        let mut j = self.s + self.k;
        while j < self.m {
            match self.read(self.who[j]) {
                DirectRead::Read => read = true,
                DirectRead::Empty => {}
                DirectRead::Refused => {
                    self.drop_polled(j);
                    continue;
                }
            }
            j += 1;
        }
        read
    }

    /// Takes polled descriptor `j` (a connection's) out of the set and gives its input back
    /// to the I/O thread, which delivers it through the mailbox from then on.
    fn drop_polled(&mut self, j: usize) {
        self.off(self.who[j]);
        self.fds[j] = self.fds[self.m - 1];
        self.who[j] = self.who[self.m - 1];
        self.m -= 1;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        for i in 0..DIRECT_MAX {
            self.off(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(us: u64) -> Spin {
        Spin { window: Duration::from_micros(us), hot: true }
    }

    #[test]
    fn a_wait_longer_than_the_window_stops_the_next_from_spinning() {
        let mut s = spin(50);
        let now = Instant::now();
        assert_eq!(s.until(now, None), Some(now + Duration::from_micros(50)));
        s.ended(now - Duration::from_millis(5));
        assert_eq!(s.until(now, None), None, "cold after a long wait");
        s.ended(Instant::now());
        assert!(s.until(now, None).is_some(), "hot again after a short one");
    }

    #[test]
    fn the_spin_never_outlasts_the_deadline_and_a_zero_window_never_spins() {
        let s = spin(1_000);
        let now = Instant::now();
        let soon = now + Duration::from_micros(10);
        assert_eq!(s.until(now, Some(soon)), Some(soon));
        let mut off = spin(0);
        assert_eq!(off.until(now, None), None);
        off.ended(now - Duration::from_secs(1));
        assert_eq!(off.until(now, None), None);
    }

    #[test]
    fn the_option_round_trips_and_rearms() {
        let mut s = spin(50);
        s.ended(Instant::now() - Duration::from_secs(1));
        s.set(&7i32.to_ne_bytes()).unwrap();
        assert_eq!(s.micros(), 7);
        assert!(s.hot, "a new window starts hot");
        assert_eq!(s.set(&(-5i32).to_ne_bytes()), Err(Error::Invalid));
    }
}
