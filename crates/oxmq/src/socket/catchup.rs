//! A publisher catches up on its subscriptions before it sends what its thread waited for.
//!
//! A PUB (XPUB, RADIO) decides who gets a message from the subscriptions (joins) it has read.
//! Those arrive on its connections and are read by the I/O thread, which may be a wake-up
//! behind: the kernel holds the bytes and the I/O thread has not run yet. In libzmq that
//! does not show in a forwarding device (pyzmq's `ThreadMonitoredQueue`: a thread polls two
//! PAIR sockets and publishes a copy of each message on a PUB): one I/O thread reads every
//! connection of the context in the order input arrives, so a subscription sent before the
//! message that triggers a publication is read before that message. oxmq's direct receive path
//! (`direct.rs`) lets the waiting thread read the triggering message itself, ahead of the I/O
//! thread, and the subscription the subscriber sent just before could still be in the kernel
//! when the PUB sent: the copy went to nobody.
//!
//! So a thread that waited for input (a blocking receive or a poll that input ended) and then
//! publishes takes in, first, what the publisher's connections already hold: one `poll` over
//! their descriptors, a read on this thread of those with input, and for every connection a
//! wait for its session if the I/O thread holds it (it may have just read a subscription and
//! not yet put it into the pipe); then the socket processes what arrived as usual. A publisher
//! whose thread streams without waiting never pays for it; a sporadic one pays, per message it
//! sends after a wait, a `poll` over its connections and an uncontended lock per connection,
//! beside the wait's own system calls. Subscriptions that reach the kernel after the send began
//! still race with it, as in libzmq. A connection still in its handshake whose input is
//! waiting (its end may come with the first subscriptions) gets a turn of its I/O thread,
//! which only may drive it, and this thread waits for that turn. Accepted connections whose
//! handshake has not ended have no pipe in the socket yet and are not looked at.
//!
//! Two other pieces make the order hold end to end: a subscriber writes its subscriptions on
//! its own thread before `subscribe` (or the attach that sends them) returns
//! (`Pipes::flush_through`), and an I/O thread handles the input of publishers' connections
//! before the rest of the same turn.

use super::Socket;
use crate::pipe::{Owner, PipeId};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

thread_local! {
    /// The calling thread's last wait for input, as a process-wide serial (0: none yet), so
    /// that sockets used from several threads never mistake one thread's serial for another's.
    static EPOCH: Cell<u64> = const { Cell::new(0) };
}

static NEXT_EPOCH: AtomicU64 = AtomicU64::new(1);

/// The calling thread waited for input (a blocking receive or poll) and input came: its next
/// write answers it (`io::pace`), and a publisher it sends on next catches up first.
#[inline]
pub(crate) fn waited_for_input() {
    crate::io::pace::waited_for_input();
    EPOCH.with(|e| e.set(NEXT_EPOCH.fetch_add(1, Ordering::Relaxed)));
}

#[inline(always)]
fn epoch() -> u64 {
    EPOCH.with(Cell::get)
}

impl Socket {
    /// Before a publisher's send: catches up if its thread waited for input since it last did
    /// (one thread-local load otherwise).
    #[inline(always)]
    pub(super) fn catch_up_before_send(&mut self) {
        if self.catch_up.is_some_and(|seen| seen != epoch()) {
            self.catch_up_slow();
        }
    }

    #[cold]
    #[inline(never)]
    fn catch_up_slow(&mut self) {
        self.catch_up = Some(epoch());
        let mut peers: Vec<(Arc<dyn Owner>, PipeId)> = Vec::new();
        let mut fds: Vec<libc::pollfd> = Vec::new();
        for slot in self.pipes.slots.iter().flatten() {
            let Some((owner, id)) = slot.end.peer_owner() else { continue };
            if let Some(fd) = owner.input_fd(id) {
                fds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
                peers.push((owner, id));
            }
        }
        if fds.is_empty() {
            return;
        }
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structures, and a zero timeout
        // never blocks.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
        for (pfd, (owner, id)) in fds.iter().zip(&peers) {
            // A connection with nothing to read may have been read by its I/O thread just
            // now: waiting for its turn to end puts what it read into the pipe. A descriptor
            // closed and reused since `input_fd` is read harmlessly: the session checks that
            // it is still the connection `id` names, and reads what it holds.
            owner.catch_up(*id, n > 0 && pfd.revents != 0);
        }
        self.process_commands();
    }
}
