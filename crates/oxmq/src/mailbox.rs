//! A socket's mailbox: the only way other threads talk to a socket.
//!
//! I/O sessions, peer sockets (inproc) and the context post [`Command`]s here; the socket
//! drains them on its own thread at the start of each call and while it waits. The queue is a
//! mutex-protected `Vec` because commands are rare (a pipe waking from sleep, a new peer): the
//! message hot path never posts one. An `eventfd` is signalled when the queue goes from empty to
//! non-empty; a blocked call waits on it with `poll(2)`, and the same descriptor is the socket's
//! `ZMQ_FD` (readable while commands are pending: libzmq's edge-triggered contract).
//!
//! The eventfd is written after the queue's lock is released: the write wakes the owner, which
//! goes straight for the lock, and a sender still holding it would put the owner back to sleep
//! on the lock at once. So a drain can run between a post and its signal: `owed` counts the
//! signals posts have yet to write. A drain that finds one owed reads what has landed and
//! marks the mailbox [`LATE`]: the next look at it (any call into the socket, or a wait, which
//! sleeps until the write lands) reads the rest. No count is left behind to keep the
//! descriptor readable with nothing to do, and each post to an empty queue still writes, so an
//! edge-triggered `ZMQ_FD` user sees an edge for it. In level-triggered mode
//! ([`Mailbox::set_level`]) the descriptor must be readable the moment the socket is, so there
//! posts write under the lock.

use crate::pipe::{PipeEnd, PipeId, Wake};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::task::Waker;
use std::time::Instant;

/// Something a socket must act on.
// Attach carries a pipe end inline: attaches are rare beside wake-ups, and moving the end
// into a box would add an allocation to each.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Command {
    /// A pipe end woke up.
    Pipe(PipeId, Wake),
    /// A new peer: attach this pipe end. The peer's routing id is the pipe's first frame.
    /// `listener`: the id of the bound endpoint that accepted the connection (None for
    /// connects and inproc), so that unbinding it drops the connection's pipe at once.
    Attach { pipe: PipeEnd, endpoint: Option<String>, listener: Option<u64> },
    /// The context is shutting down.
    Stop,
    /// A followed endpoint has a lookup's answer waiting, or draining connections to look at
    /// (`socket/follow.rs`; at most one such command per endpoint is queued).
    Follow { group: u64 },
    /// The metrics exporter asks the socket to publish its counters (`metrics/`).
    Snapshot,
}

/// An eventfd: a counter the kernel can wait on.
pub(crate) struct Signaler {
    fd: OwnedFd,
}

impl Signaler {
    pub(crate) fn new() -> io::Result<Signaler> {
        // SAFETY: plain syscall; the returned descriptor is checked and then owned.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        Ok(Signaler { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    pub(crate) fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to our own eventfd. EAGAIN (counter at max)
        // still leaves it readable, which is all we need.
        unsafe { libc::write(self.fd.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
    }

    /// Resets the counter so the descriptor stops polling readable. Returns false when the
    /// counter was already zero.
    pub(crate) fn drain(&self) -> bool {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a valid u64 from our own non-blocking eventfd.
        unsafe { libc::read(self.fd.as_raw_fd(), &mut v as *mut u64 as *mut libc::c_void, 8) == 8 }
    }

    /// Waits until signalled or until `deadline` (None = forever). Returns false on timeout.
    pub(crate) fn wait(&self, deadline: Option<Instant>) -> io::Result<bool> {
        let timeout = poll_timeout(deadline);
        let mut pfd = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        let rc = unsafe { libc::poll(&mut pfd, 1, timeout) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(rc > 0)
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// `poll(2)`'s timeout in milliseconds for a deadline (None: -1, forever), rounded up so a
/// wait never ends a hair before the deadline and spins.
pub(crate) fn poll_timeout(deadline: Option<Instant>) -> i32 {
    match deadline {
        None => -1,
        Some(d) => {
            let now = Instant::now();
            if d <= now {
                0
            } else {
                (d - now).as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
            }
        }
    }
}

struct Queue {
    cmds: Vec<Command>,
    closed: bool,
    /// The eventfd was signalled, or a post owes it a signal, since it was last reset.
    signalled: bool,
    /// Tasks of the async layer waiting for this socket ([`WakerSlot`]): the next command
    /// wakes them instead of the eventfd. Empty unless an async socket went pending.
    wakers: [Option<Waker>; 2],
    /// Level-triggered readiness: posts signal under the lock.
    level: bool,
}

/// Which of a socket's two async waits a waker stands for: a task receiving and a task
/// sending may wait on one socket at the same time (a `Stream` and a `Sink` half).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "async"), allow(dead_code))]
pub(crate) enum WakerSlot {
    Recv = 0,
    Send = 1,
}

/// [`Mailbox::pending`]: commands are queued.
const CMDS: u8 = 1;
/// [`Mailbox::pending`]: a drain left a signal still owed (see the module's note).
const LATE: u8 = 2;

/// The command queue plus its signaler.
pub(crate) struct Mailbox {
    queue: Mutex<Queue>,
    /// [`CMDS`] and [`LATE`]; written under the queue lock.
    pending: AtomicU8,
    /// How many times the owner took commands ([`Mailbox::taken`]); written under the queue lock.
    taken: AtomicU64,
    /// The owning thread is awake and will look at `pending` before it sleeps (it is reading
    /// its connections itself, `socket/direct.rs`): a command posted meanwhile needs no signal.
    quiet: AtomicBool,
    /// Signals owed by posts and not yet written (see the module's note).
    owed: AtomicU32,
    signaler: Signaler,
}

impl Mailbox {
    pub(crate) fn new() -> io::Result<Mailbox> {
        Ok(Mailbox {
            queue: Mutex::new(Queue { cmds: Vec::new(), closed: false, signalled: false, wakers: [None, None], level: false }),
            pending: AtomicU8::new(0),
            taken: AtomicU64::new(0),
            quiet: AtomicBool::new(false),
            owed: AtomicU32::new(0),
            signaler: Signaler::new()?,
        })
    }

    /// Posts a command; signals the eventfd if the queue was empty. Callable from any thread.
    #[inline]
    pub(crate) fn send(&self, cmd: Command) {
        if self.post(cmd) {
            self.pay();
        }
    }

    /// Writes the signal a post owes.
    fn pay(&self) {
        self.signaler.signal();
        self.owed.fetch_sub(1, Ordering::Release);
    }

    /// Queues a command; returns true when the caller owes the eventfd its signal (written
    /// outside the lock, see the module's note).
    fn post(&self, cmd: Command) -> bool {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if q.closed {
            // The socket is gone: dropping the command closes any pipe end it carries, so the
            // sender learns through the pipe instead of waiting on a socket that never reads.
            drop(q);
            drop(cmd);
            return false;
        }
        let was_empty = q.cmds.is_empty();
        q.cmds.push(cmd);
        if was_empty {
            // SeqCst with `set_quiet`: either the owner's look at `pending` after it stops
            // being quiet sees this store, or this load sees it is no longer quiet and signals.
            self.pending.fetch_or(CMDS, Ordering::SeqCst);
            if !self.quiet.load(Ordering::SeqCst) {
                if q.wakers[0].is_some() || q.wakers[1].is_some() {
                    Self::wake_tasks(q);
                    return false;
                }
                q.signalled = true;
                if q.level {
                    self.signaler.signal();
                    return false;
                }
                self.owed.fetch_add(1, Ordering::Relaxed);
                return true;
            }
        }
        false
    }

    /// An async task waits for this socket: it is woken rather than the eventfd, outside the
    /// lock (a waker may run the task's executor code). The owner of a waker never sleeps on
    /// the eventfd, and every other wait looks at `pending` before it sleeps.
    #[cold]
    fn wake_tasks(mut q: std::sync::MutexGuard<'_, Queue>) {
        let [a, b] = std::mem::take(&mut q.wakers);
        drop(q);
        if let Some(w) = a {
            w.wake();
        }
        if let Some(w) = b {
            w.wake();
        }
    }

    /// The async layer's wait: registers `waker` for the next command unless one is queued
    /// already, in which case it returns true and registers nothing (the caller processes the
    /// queue and tries again). Under the queue lock, so a command is either seen here or wakes
    /// the waker: none is missed between the caller's attempt and its sleep.
    #[cfg_attr(not(feature = "async"), allow(dead_code))]
    pub(crate) fn register_waker(&self, slot: WakerSlot, waker: &Waker) -> bool {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if !q.cmds.is_empty() || q.closed {
            return true;
        }
        match &mut q.wakers[slot as usize] {
            Some(w) if w.will_wake(waker) => {}
            w => *w = Some(waker.clone()),
        }
        false
    }

    /// Forgets the wakers (the async socket lets its socket go: a blocking user waits on the
    /// eventfd, which a registered waker would keep silent).
    #[cfg_attr(not(feature = "async"), allow(dead_code))]
    pub(crate) fn clear_wakers(&self) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let old = std::mem::take(&mut q.wakers);
        drop(q);
        drop(old);
    }

    /// The owning thread marks the stretch in which it is awake and looks at `pending` before
    /// sleeping (its own direct reads post a command per message they deliver; the signal and
    /// its drain were two syscalls per message for a thread that was never asleep).
    #[inline]
    pub(crate) fn set_quiet(&self, quiet: bool) {
        self.quiet.store(quiet, Ordering::SeqCst);
    }

    /// Cheap check for the hot path, one load: commands are queued, or a signal is left to
    /// read.
    #[inline]
    pub(crate) fn has_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire) != 0
    }

    /// Commands are queued (a wait need not sleep); false when only a signal is left to read.
    #[inline]
    pub(crate) fn has_commands(&self) -> bool {
        self.pending.load(Ordering::Acquire) & CMDS != 0
    }

    /// Counts the drains that took commands: a caller that compares it before and after a
    /// call knows whether the call consumed commands (and the signal another thread may have
    /// been waiting for), which a look at `pending` before the call cannot tell when a command
    /// arrives during it.
    #[inline]
    pub(crate) fn taken(&self) -> u64 {
        self.taken.load(Ordering::Acquire)
    }

    /// Takes every pending command (into `out`, to reuse its allocation).
    pub(crate) fn drain_into(&self, out: &mut Vec<Command>) {
        if self.pending.load(Ordering::Acquire) == LATE && self.owed.load(Ordering::Acquire) != 0 {
            return; // no command, and the signal left to read has not landed yet
        }
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::swap(&mut q.cmds, out);
        if !out.is_empty() {
            self.taken.fetch_add(1, Ordering::Release);
        }
        // Reset under the lock: a sender that pushes after we release sees an empty queue and
        // signals again, so no command is left without a signal.
        let late = if self.reset(&mut q) { 0 } else { LATE };
        self.pending.store(late, Ordering::Release);
    }

    /// Reads the eventfd's signals under the queue lock. False while a post still owes one (it
    /// released the lock and has yet to write): the flag stays, for a later reset to read it.
    fn reset(&self, q: &mut Queue) -> bool {
        if !q.signalled {
            return true;
        }
        let owed = self.owed.load(Ordering::Acquire) != 0;
        self.signaler.drain();
        q.signalled = owed;
        !owed
    }

    /// As [`Mailbox::drain_into`], but leaves the eventfd as it is: in level-triggered
    /// readiness mode the socket decides itself when the descriptor stops being readable
    /// ([`Mailbox::clear_if_idle`]).
    pub(crate) fn drain_into_keep(&self, out: &mut Vec<Command>) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::swap(&mut q.cmds, out);
        self.pending.store(0, Ordering::Release);
        if !out.is_empty() {
            self.taken.fetch_add(1, Ordering::Release);
        }
    }

    /// Level-triggered readiness on (the socket's `OXMQ_FD_LEVEL`) or off.
    pub(crate) fn set_level(&self, on: bool) {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).level = on;
    }

    /// Makes the eventfd readable (level mode: the socket has something for its user).
    pub(crate) fn signal(&self) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.signalled = true;
        self.signaler.signal();
    }

    /// Resets the eventfd unless commands are queued. Under the queue lock, so a command
    /// posted at the same time either finds the queue empty after us and signals again, or is
    /// seen here and keeps the descriptor readable: no wake-up is lost. Returns true when the
    /// descriptor was reset; false also while a post's signal is still owed (the descriptor
    /// will be readable once it lands, and the next call resets it).
    pub(crate) fn clear_if_idle(&self) -> bool {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if !q.cmds.is_empty() {
            return false;
        }
        self.reset(&mut q)
    }

    /// Refuses further commands and returns those still queued (to be dropped by the caller
    /// outside the lock: dropping a pipe end wakes its peer).
    pub(crate) fn close(&self) -> Vec<Command> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.closed = true;
        self.pending.store(0, Ordering::Release);
        std::mem::take(&mut q.cmds)
    }

    pub(crate) fn wait(&self, deadline: Option<Instant>) -> io::Result<bool> {
        self.signaler.wait(deadline)
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.signaler.fd()
    }

    /// Wakes a waiter, and signals the descriptor, without a command of substance (used by
    /// the context on shutdown, and by a socket that wants its user to look again).
    pub(crate) fn poke(&self) {
        self.send(Command::Stop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn signal_is_level_until_drained() {
        let mb = Mailbox::new().unwrap();
        assert!(!mb.wait(Some(Instant::now())).unwrap());
        mb.send(Command::Stop);
        assert!(mb.has_pending());
        assert!(mb.wait(Some(Instant::now() + Duration::from_secs(5))).unwrap());
        let mut v = Vec::new();
        mb.drain_into(&mut v);
        assert_eq!(v.len(), 1);
        assert!(!mb.has_pending());
        assert!(!mb.wait(Some(Instant::now())).unwrap());
    }

    #[test]
    fn a_quiet_owner_gets_the_command_without_a_signal() {
        let mb = Mailbox::new().unwrap();
        mb.set_quiet(true);
        mb.send(Command::Stop);
        mb.set_quiet(false);
        assert!(mb.has_pending(), "the owner finds the command by looking");
        assert!(!mb.wait(Some(Instant::now())).unwrap(), "no signal while quiet");
        let mut v = Vec::new();
        mb.drain_into(&mut v);
        assert_eq!(v.len(), 1);
        mb.send(Command::Stop);
        assert!(mb.wait(Some(Instant::now())).unwrap(), "signalled again once awake");
    }

    /// The signal is written after the lock is released. Whether a drain (or level mode's
    /// reset) runs before or after it lands, the descriptor ends reset and the next post
    /// signals again; many rounds, so that both orders occur.
    #[test]
    fn a_drain_racing_the_signal_leaves_the_descriptor_reset() {
        let mb = std::sync::Arc::new(Mailbox::new().unwrap());
        let mut v = Vec::new();
        for round in 0..2_000 {
            assert!(mb.post(Command::Stop), "the first post owes the signal");
            assert!(!mb.post(Command::Stop), "the queue was not empty: nothing more is owed");
            let m2 = mb.clone();
            let payer = std::thread::spawn(move || m2.pay());
            v.clear();
            if round % 2 == 0 {
                mb.drain_into(&mut v);
                assert_eq!(v.len(), 2);
                payer.join().unwrap();
                if mb.has_pending() {
                    assert!(!mb.has_commands(), "only a signal left to read");
                    v.clear();
                    mb.drain_into(&mut v);
                    assert!(v.is_empty());
                }
            } else {
                mb.drain_into_keep(&mut v);
                assert_eq!(v.len(), 2);
                let reset = mb.clear_if_idle();
                payer.join().unwrap();
                assert!(reset || mb.clear_if_idle(), "reset once the signal landed");
            }
            assert!(!mb.has_pending());
            assert!(!mb.wait(Some(Instant::now())).unwrap(), "nothing left readable (round {round})");
            mb.send(Command::Stop);
            assert!(mb.wait(Some(Instant::now())).unwrap(), "the next post signals (round {round})");
            v.clear();
            mb.drain_into(&mut v);
        }
    }

    /// A count a user read off ZMQ_FD does not silence the mailbox, and level signals that
    /// repeat are reset by one read.
    #[test]
    fn a_stray_read_and_repeated_level_signals_leave_it_working() {
        let mb = Mailbox::new().unwrap();
        let mut v = Vec::new();
        mb.send(Command::Stop);
        mb.signaler.drain();
        mb.drain_into(&mut v);
        mb.send(Command::Stop);
        assert!(mb.wait(Some(Instant::now())).unwrap(), "still signalled after a stray read");
        v.clear();
        mb.drain_into(&mut v);
        assert_eq!(v.len(), 1);
        mb.signal();
        mb.signal();
        assert!(mb.clear_if_idle(), "one read resets any number of level signals");
        assert!(!mb.wait(Some(Instant::now())).unwrap());
        mb.set_level(true);
        assert!(!mb.post(Command::Stop), "level mode: the post signals itself, under the lock");
        assert!(mb.wait(Some(Instant::now())).unwrap(), "readable as soon as the post returns");
    }

    #[test]
    fn wakes_a_waiter_in_another_thread() {
        let mb = std::sync::Arc::new(Mailbox::new().unwrap());
        let m2 = mb.clone();
        let t = std::thread::spawn(move || m2.wait(Some(Instant::now() + Duration::from_secs(10))).unwrap());
        mb.send(Command::Stop);
        assert!(t.join().unwrap());
    }
}
