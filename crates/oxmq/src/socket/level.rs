//! Level-triggered readiness for the socket's descriptor (oxmq's option
//! [`opt::OXMQ_FD_LEVEL`]).
//!
//! By default `ZMQ_FD` follows libzmq's edge-triggered contract: it signals "look again", and
//! the user must read `ZMQ_EVENTS` and drain until `EAGAIN` before waiting on it again. With
//! `OXMQ_FD_LEVEL` set to an event mask (`POLLIN`, `POLLOUT` or both) the same descriptor is
//! readable exactly while the socket can receive (resp. send) without blocking, so a plain
//! level-triggered `select`/`poll`/`epoll` loop may handle one message per wake-up.
//!
//! How: the descriptor is the mailbox's eventfd. In this mode draining the mailbox leaves the
//! eventfd alone; at the end of each call into the socket ([`Socket::level_update`]) the
//! socket asks its pattern whether it is ready and makes the eventfd match: signalled if
//! ready, reset if not (under the mailbox lock, and only with no command queued, so a message
//! arriving at that moment still signals). Finding the pattern not ready puts its pipes'
//! readers to sleep, so the next message posts a command that signals the descriptor.
//!
//! The one imprecision: a peer event that brings no message (a connection, a disconnection,
//! room to send again) makes the descriptor readable until the next call into the socket
//! finds nothing and resets it: one wake-up per such event, never a spin.

use super::Socket;
use crate::opt;

/// The mode's state on the socket.
#[derive(Default)]
pub(crate) struct Level {
    /// Events the descriptor reports (0: edge-triggered, libzmq's contract).
    pub mask: i16,
    /// The eventfd is (or may be) signalled: a reset is needed when the socket is not ready.
    fd_set: bool,
}

impl Socket {
    /// Called at the end of every operation; costs one branch outside level mode.
    #[inline(always)]
    pub(super) fn level_hook(&mut self) {
        if self.level.mask != 0 {
            self.level_update();
        }
    }

    /// Makes the descriptor's state match the socket's readiness.
    #[inline(never)]
    pub(super) fn level_update(&mut self) {
        let mask = self.level.mask;
        let ready =
            (mask & opt::POLLIN != 0 && self.has_in_now()) || (mask & opt::POLLOUT != 0 && self.pattern.has_out(&mut self.pipes));
        let mailbox = &self.shared.mailbox;
        if ready {
            if !self.level.fd_set {
                mailbox.signal();
                self.level.fd_set = true;
            }
        } else if self.level.fd_set && mailbox.clear_if_idle() {
            self.level.fd_set = false;
        }
    }

    /// Commands were drained without touching the eventfd: it is readable now.
    #[inline]
    pub(super) fn level_drained(&mut self, n: usize) {
        if n > 0 {
            self.level.fd_set = true;
        }
    }

    /// Before blocking on the mailbox: a descriptor left readable for the user would wake
    /// the wait at once, forever.
    pub(super) fn level_before_wait(&mut self) {
        if self.level.mask != 0 && self.level.fd_set && self.shared.mailbox.clear_if_idle() {
            self.level.fd_set = false;
        }
    }

    /// Sets the mode (the option's value: an event mask, 0 for edge-triggered).
    pub(super) fn set_level(&mut self, value: &[u8]) -> crate::Result<()> {
        let v = i32::from_ne_bytes(value.try_into().map_err(|_| crate::Error::Invalid)?);
        if v & !((opt::POLLIN | opt::POLLOUT) as i32) != 0 {
            return Err(crate::Error::Invalid);
        }
        self.level.mask = v as i16;
        self.shared.mailbox.set_level(v != 0);
        // Start from a known state: reset unless commands are queued (then it stays readable
        // and they are processed just below).
        self.level.fd_set = !self.shared.mailbox.clear_if_idle();
        if v != 0 {
            self.process_commands();
            self.level_update();
        }
        Ok(())
    }
}

impl Socket {
    /// Sets `opt::OXMQ_FD_LEVEL`: with `events` = `opt::POLLIN` (and/or `opt::POLLOUT`),
    /// The events `OXMQ_FD_LEVEL` makes the descriptor report (0: edge-triggered).
    pub(crate) fn fd_level(&self) -> i16 {
        self.level.mask
    }

    /// Level-triggered readiness ([`opt::OXMQ_FD_LEVEL`]): with `opt::POLLIN` (`POLLOUT`),
    /// [`Socket::fd`] is readable exactly while the socket can receive (send) without
    /// blocking, so a level-triggered `epoll`/`poll` loop may handle one message per wake-up.
    /// `0` restores libzmq's edge-triggered contract.
    pub fn set_fd_level(&mut self, events: i16) -> crate::Result<()> {
        self.setsockopt(opt::OXMQ_FD_LEVEL, &i32::from(events).to_ne_bytes())
    }
}
