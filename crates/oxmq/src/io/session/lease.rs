//! A connection's input lent to application threads between their waits (`socket/direct.rs`).
//!
//! A receive that waits on a connection takes its input over from the I/O thread
//! (`Session::direct_arm`) and hands it back when the wait ends, an `epoll_ctl` each. In a
//! quick exchange the next wait follows within microseconds, so a wait that ends quickly with
//! one message lends the input on instead (a wait that read a batch is a stream's, and the
//! I/O thread reads on while the receiver works through it): the I/O thread's registration stays without input, and the
//! next wait takes the input as it is, with no system call. The I/O thread takes a lent input
//! back once no wait has come for it for [`LEASE`], by a timer that the first lending asks for
//! (a command) and that moves on while lending goes on, through the waits too: an exchange
//! costs the I/O thread one wake-up per lease, not one per message. A wait that outlasts two
//! leases lets the timer go (a receiver blocked for long costs no wake-ups); its end asks
//! again. Anything that hands the input back meanwhile (a wait's read that must leave the rest
//! to the I/O thread) ends the lease with it.

use super::conn::Conn;
use super::Link;
use crate::io::{Ctx, IoCmd, Timer};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long a lent input stays lent without a wait on it.
pub(super) const LEASE: Duration = Duration::from_millis(1);

/// The lending state of one connection's input (under the session's mutex).
#[derive(Default)]
pub(super) struct Lease {
    /// A wait holds the input now (between `direct_arm` and `direct_disarm`).
    pub(super) watched: bool,
    /// The input is lent, until this time unless a wait renews it; kept while a wait holds
    /// it, as the time of the last lending.
    until: Option<Instant>,
    /// The I/O thread keeps the lease's timer, or was asked to (a command in flight).
    asked: bool,
    /// The lease's timer in the reactor.
    pub(super) timer: Option<crate::io::TimerKey>,
    /// Messages the pipe had taken when the current wait took the input.
    written_at_wait: u64,
}

impl Conn {
    /// A wait takes the input (lent or not).
    pub(super) fn lease_taken(&mut self, link: &Link) {
        self.lease.watched = true;
        self.lease.written_at_wait = link.pipe.as_ref().map_or(0, |p| p.written());
    }

    /// A wait that took the input ended: lends it on (with `lend`, the time the wait ended,
    /// while an application thread may still read it) or hands it back to the I/O thread.
    /// Only a wait that brought one message lends: one that read a batch is a stream's, whose
    /// reading the I/O thread takes off the receiver while it works through the batch.
    pub(super) fn lease_release(&mut self, link: &Link, lend: Option<Instant>) {
        self.lease.watched = false;
        let one = link.pipe.as_ref().is_some_and(|p| p.written() - self.lease.written_at_wait <= 1);
        let Some(ended) = lend.filter(|_| one && self.armed && self.direct_readable(link)) else {
            self.disarm(link);
            return;
        };
        self.lease.until = Some(ended + LEASE);
        link.owner.lent.store(true, Ordering::Relaxed);
        if !self.lease.asked {
            self.lease.asked = true;
            link.owner.io.send(IoCmd::Lease(link.id()));
        }
    }

    /// The input is handed back (`disarm`): no lease goes on.
    pub(super) fn lease_end(&mut self, link: &Link) {
        self.lease.until = None;
        link.owner.lent.store(false, Ordering::Relaxed);
    }

    /// The I/O thread's side of a lending's command: queues the lease's timer.
    pub(super) fn lease_asked(&mut self, link: &Link, ctx: &mut Ctx<'_>) {
        if self.lease.timer.is_some() {
            return;
        }
        match self.lease.until {
            Some(at) => self.lease.timer = Some(ctx.add_timer(at, link.token, link.serial, Timer::Lease(self.id))),
            None => self.lease.asked = false, // taken by a wait, or handed back, meanwhile
        }
    }

    /// The lease's timer fired: moved on while lending goes on, or the input taken back.
    pub(super) fn lease_due(&mut self, link: &Link, ctx: &mut Ctx<'_>) {
        self.lease.timer = None;
        let now = ctx.now();
        let next = match self.lease.until {
            // Handed back meanwhile.
            _ if !self.armed => None,
            // A wait of an exchange that goes on: look again a lease later.
            Some(at) if self.lease.watched && now < at + LEASE => Some(now + LEASE),
            // A long wait: its end asks again.
            _ if self.lease.watched => None,
            Some(at) if now < at => Some(at),
            Some(_) => {
                self.lapse(link);
                None
            }
            None => None,
        };
        match next {
            Some(at) => self.lease.timer = Some(ctx.add_timer(at, link.token, link.serial, Timer::Lease(self.id))),
            None => self.lease.asked = false,
        }
    }

    /// No wait came for the lent input within the lease: the I/O thread takes it back.
    fn lapse(&mut self, link: &Link) {
        link.counters.lease_lapse();
        // Input that came meanwhile is reported at once: the registration is edge-triggered,
        // and a change that adds a ready event queues it.
        self.disarm(link);
    }
}
