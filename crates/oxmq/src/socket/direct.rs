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
//! a wait never costs more than one `poll` over a handful of descriptors.
//!
//! Even one wake-up is most of a loopback round trip on a machine whose idle cores sleep: the
//! kernel delivers the bytes in microseconds, then the scheduler takes tens to run the thread
//! that waits for them. So a wait whose socket's recent waits were short (a request/reply
//! exchange, a burst) first keeps polling without sleeping, for up to
//! [`crate::opt::OXMQ_RECV_SPIN`] microseconds (50 by default), yielding the CPU between polls
//! so a runnable thread on that core (the peer, the sender's I/O thread) is not starved. A wait
//! that outlasts that window sleeps as before, and the socket's next wait does not spin until
//! one ends within the window again: a socket that receives now and then never spins, and an
//! exchange pays at most one window of CPU per wait.

use super::{Socket, DIRECT_MAX};
use std::os::fd::RawFd;

/// The most descriptors [`Socket::wait_recv_also`] watches beside the socket's own.
pub const WAIT_ALSO_MAX: usize = 4;
use crate::pipe::{Owner, PipeId};
use crate::{Error, Result};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
        self.wait_input(timeout.map(|t| Instant::now() + t), also)?;
        crate::io::pace::waited_for_input();
        Ok(())
    }

    /// Waits for input until `deadline`, as [`Socket::wait`] does, reading the connections
    /// directly where it can. Returns once a command (a message among them) is processed, or
    /// once one of the descriptors in `also` is readable; `Err(Again)` on timeout, `Err(Term)`
    /// on shutdown, `Err(Intr)` on a signal.
    pub(super) fn wait_input(&mut self, deadline: Option<Instant>, also: &[RawFd]) -> Result<()> {
        self.level_before_wait();
        if self.shared.mailbox.has_pending() {
            return self.wait(deadline);
        }
        let k = also.len();
        let mut peers: [Option<(Arc<dyn Owner>, PipeId)>; DIRECT_MAX] = Default::default();
        let mut n = 0;
        for slot in self.pipes.slots.iter().flatten() {
            if let Some(peer) = slot.end.peer_owner() {
                if n == DIRECT_MAX {
                    // Fan-in: the I/O thread batches better.
                    if k == 0 {
                        return self.wait(deadline);
                    }
                    n = 0;
                    peers = Default::default();
                    break;
                }
                peers[n] = Some(peer);
                n += 1;
            }
        }
        // The mailbox, the caller's other descriptors (`fds[1..=k]`), then the connections.
        // Input already waiting in the kernel is read at once; the others are polled.
        let none = libc::pollfd { fd: -1, events: libc::POLLIN, revents: 0 };
        let mut fds = [none; DIRECT_MAX + 1 + WAIT_ALSO_MAX];
        fds[0].fd = self.shared.mailbox.fd();
        for (f, &fd) in fds[1..].iter_mut().zip(also) {
            f.fd = fd;
        }
        let mut who = [0usize; DIRECT_MAX + 1 + WAIT_ALSO_MAX];
        let mut m = 1 + k;
        let mut armed = Armed { peers: &peers, on: [false; DIRECT_MAX] };
        for (i, (owner, id)) in peers[..n].iter().flatten().enumerate() {
            if let Some(fd) = owner.direct_arm(*id) {
                armed.on[i] = true;
                self.read_direct(owner.as_ref(), *id);
                fds[m].fd = fd;
                who[m] = i;
                m += 1;
            }
        }
        let start = Instant::now();
        let mut spin = self.spin.until(start, deadline);
        loop {
            if self.shared.mailbox.has_pending() {
                self.spin.ended(start);
                if spin.is_some() {
                    self.counters.spun_waits += 1;
                }
                return self.wait(deadline);
            }
            // Readiness that brought no message (a peer's command, a partial frame) must not
            // stretch the wait past its deadline.
            if m > 1 && deadline.is_some_and(|d| Instant::now() >= d) {
                self.spin.ended(start);
                return Err(Error::Again);
            }
            if m == 1 {
                // No connection to poll (inproc peers, or sessions the I/O thread holds): the
                // input comes through the mailbox, which the spin watches without a syscall.
                match spin {
                    Some(until) if Instant::now() < until => {
                        std::thread::yield_now();
                        continue;
                    }
                    _ => {
                        let r = self.wait(deadline);
                        self.spin.ended(start);
                        return r;
                    }
                }
            }
            let timeout = match spin {
                Some(_) => 0,
                None => crate::mailbox::poll_timeout(deadline),
            };
            // SAFETY: `fds[..m]` are initialised pollfds that live across the call.
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), m as libc::nfds_t, timeout) };
            if rc < 0 {
                let e = std::io::Error::last_os_error();
                return Err(if e.kind() == std::io::ErrorKind::Interrupted { Error::Intr } else { e.into() });
            }
            self.check_term()?;
            if fds[1..=k].iter().any(|f| f.revents != 0) {
                self.spin.ended(start);
                return Ok(());
            }
            if rc == 0 {
                if let Some(until) = spin {
                    if Instant::now() < until {
                        std::thread::yield_now();
                    } else {
                        spin = None; // sleep from now on
                    }
                    continue;
                }
                self.spin.ended(start);
                return Err(Error::Again);
            }
            // Connections this thread could not read (busy, or input only the I/O thread may
            // handle) leave the set: the I/O thread delivers theirs through the mailbox.
            let mut j = 1 + k;
            while j < m {
                if fds[j].revents != 0 {
                    fds[j].revents = 0;
                    let (owner, id) = peers[who[j]].as_ref().expect("polled peers are gathered");
                    if !self.read_direct(owner.as_ref(), *id) {
                        armed.off(who[j]);
                        fds[j] = fds[m - 1];
                        who[j] = who[m - 1];
                        m -= 1;
                        continue;
                    }
                }
                j += 1;
            }
        }
    }
}

impl Socket {
    /// Reads one connection on this thread. The mailbox is quiet meanwhile: the read posts a
    /// command for each message it delivers to this very thread, which looks at the mailbox
    /// next anyway, so signalling the eventfd (and draining it) would only cost two syscalls.
    /// Not in level-triggered mode, where the eventfd's state is the user's readiness.
    fn read_direct(&self, owner: &dyn Owner, id: PipeId) -> bool {
        if self.level.mask != 0 {
            return owner.direct_read(id);
        }
        /// Ends the quiet stretch however the read ends.
        struct Quiet<'a>(&'a crate::mailbox::Mailbox);
        impl Drop for Quiet<'_> {
            fn drop(&mut self) {
                self.0.set_quiet(false);
            }
        }
        self.shared.mailbox.set_quiet(true);
        let _quiet = Quiet(&self.shared.mailbox);
        owner.direct_read(id)
    }
}

/// The connections a wait took input over from; dropping it gives the input back.
struct Armed<'a> {
    peers: &'a [Option<(Arc<dyn Owner>, PipeId)>; DIRECT_MAX],
    on: [bool; DIRECT_MAX],
}

impl Armed<'_> {
    fn off(&mut self, i: usize) {
        if std::mem::take(&mut self.on[i]) {
            if let Some((owner, id)) = &self.peers[i] {
                owner.direct_disarm(*id);
            }
        }
    }
}

impl Drop for Armed<'_> {
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
