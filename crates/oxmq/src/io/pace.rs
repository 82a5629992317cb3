//! When a sending application thread may write a connection itself (the direct send path).
//!
//! Writing on the sending thread saves a sporadic message the hop to the I/O thread (a wake-up
//! that costs tens of µs on an idle core), but it costs a system call per message. Under a
//! stream the I/O thread must write instead: the sender goes on queueing while the I/O thread
//! writes, and each of its writes carries every message queued meanwhile.
//!
//! Whether a stream is flowing is a property of the sending thread, not of one connection: a
//! thread feeding many connections (PUB fan-out, a DEALER or PUSH spreading over peers, a
//! ROUTER sending to many, or many sockets of one connection each) comes back to any one of
//! them only after a round over all the others, which can take longer than any
//! per-connection window. So the rule looks at the connection and at the thread:
//! * a reply (the connection read input since it was last written) goes direct, whatever the
//!   pace: an exchange pays its latency per message, and there is nothing to batch. A
//!   publisher (PUB, XPUB, RADIO) reads only subscriptions, so its writes are never replies:
//!   else the first message to each of 1,000 new subscribers would be a system call of its own;
//! * so does an answer: the first write after the calling thread waited for input and got
//!   some (a request that came over one connection, answered over another, as a wiring echo
//!   or a PULL-then-PUSH worker does). A stream that the thread receives without waiting, as
//!   a busy forwarder does, stays the I/O thread's;
//! * otherwise the write goes direct only if this connection was not written (by anyone)
//!   within [`QUIET`], and the calling thread did not write any connection directly, nor hand
//!   one's write over to the I/O thread, within [`QUIET`]. A sporadic message still goes
//!   direct to its first connection; the rest of a fan-out, and every message of a stream, are
//!   the I/O thread's. Each hand-over costs the sender a wake-up of the I/O thread (a system
//!   call when it sleeps), so a round over many connections can outlast [`QUIET`] with the
//!   thread busy throughout: a hand-over keeps the thread's pace as a direct write does;
//! * and within one message's fan-out (a [`Round`]: a publisher waking the pipes of one
//!   message), only the first connection may be written directly, however long the round
//!   takes: a preemption in the middle of it does not make the thread sporadic.
//!
//! Whatever the rule says, a thread's writes leave in the order it made them, as they do in
//! libzmq, whose I/O thread carries out one application thread's commands in order: while a
//! write the thread handed over has not been carried out by the I/O thread ([`write_pending`]),
//! its next writes are handed over too, behind it, rather than written directly ahead of it.
//! (Issue 44: a subscription handed over, overtaken by a message written directly on another
//! connection, reached the publisher after the message it should have selected.)

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long a connection, and its socket, must have been quiet for a direct write.
pub(crate) const QUIET: Duration = Duration::from_micros(20);

/// The decision, given what the caller measured.
///
/// `reply`: the connection has read input since its last write. `since_conn_write`: time since
/// the connection was last written by any thread. `since_thread_direct`: time since the calling
/// thread last wrote a connection directly or handed one over (`None`: never).
/// `rest_of_round`: an earlier connection of the calling thread's current [`Round`] was
/// already written directly or handed over.
#[inline]
pub(crate) fn may_write_direct(
    reply: bool,
    since_conn_write: Duration,
    since_thread_direct: Option<Duration>,
    rest_of_round: bool,
) -> bool {
    reply || (!rest_of_round && since_conn_write >= QUIET && since_thread_direct.is_none_or(|d| d >= QUIET))
}

thread_local! {
    /// Nanoseconds from [`origin`] to this thread's last direct write or hand-over, plus one
    /// (0: none yet).
    static LAST_DIRECT: Cell<u64> = const { Cell::new(0) };
    /// The thread waited for input and got some since its last direct write.
    static ANSWERING: Cell<bool> = const { Cell::new(false) };
    /// The thread's fan-out round: 0 none, 1 begun, 2 a connection of it was written directly
    /// or handed over.
    static ROUND: Cell<u8> = const { Cell::new(0) };
}

/// One message's fan-out on the calling thread, from [`Round::begin`] until dropped: after its
/// first connection is written directly or handed over, the rest are handed over.
pub(crate) struct Round(());

impl Round {
    #[inline]
    pub(crate) fn begin() -> Round {
        ROUND.with(|c| c.set(1));
        Round(())
    }
}

impl Drop for Round {
    #[inline]
    fn drop(&mut self) {
        ROUND.with(|c| c.set(0));
    }
}

/// True when the calling thread is in a [`Round`] whose first connection was already dealt
/// with.
#[inline]
pub(crate) fn rest_of_round() -> bool {
    ROUND.with(Cell::get) == 2
}

#[inline]
fn round_dealt_with() {
    ROUND.with(|c| {
        if c.get() == 1 {
            c.set(2);
        }
    });
}

fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

fn stamp(at: Instant) -> u64 {
    at.saturating_duration_since(origin()).as_nanos() as u64 + 1
}

/// Time since the calling thread's last direct write or hand-over as of `now` (None: there
/// was none).
#[inline]
pub(crate) fn since_direct(now: Instant) -> Option<Duration> {
    match LAST_DIRECT.with(Cell::get) {
        0 => None,
        t => Some(Duration::from_nanos(stamp(now).saturating_sub(t))),
    }
}

/// Records a direct write made by the calling thread at `at`.
#[inline]
pub(crate) fn wrote_direct(at: Instant) {
    LAST_DIRECT.with(|c| c.set(stamp(at)));
    ANSWERING.with(|c| c.set(false));
    round_dealt_with();
}

/// The calling thread handed a connection's write over to the I/O thread at `at` (the rule
/// said stream): for the thread's pace, as recent as a direct write.
#[inline]
pub(crate) fn handed_over(at: Instant) {
    LAST_DIRECT.with(|c| c.set(stamp(at)));
    round_dealt_with();
}

/// An I/O thread's progress through the commands posted to it: how many were posted (counted
/// under its queue's lock, so each command has a number), and how many it has carried out.
#[derive(Default)]
pub(crate) struct Progress {
    pub(crate) posted: AtomicU64,
    pub(crate) done: AtomicU64,
}

thread_local! {
    /// The calling thread's last write handed over to an I/O thread: that thread's progress
    /// and the command's number; None once it was carried out.
    static HANDED: RefCell<Option<(Arc<Progress>, u64)>> = const { RefCell::new(None) };
}

/// The calling thread handed a write over to the I/O thread whose progress is `p`, as its
/// command number `seq`.
pub(crate) fn handed_write(p: &Arc<Progress>, seq: u64) {
    HANDED.with(|h| *h.borrow_mut() = Some((p.clone(), seq)));
}

/// True while the calling thread's last handed-over write has not been carried out: its next
/// write must not be made directly, ahead of it.
#[inline]
pub(crate) fn write_pending() -> bool {
    HANDED.with(|h| {
        let mut h = h.borrow_mut();
        match &*h {
            None => false,
            Some((p, seq)) if p.done.load(Ordering::Acquire) < *seq => true,
            Some(_) => {
                *h = None;
                false
            }
        }
    })
}

/// The calling thread waited for input (a blocking receive or poll) and input came: its
/// next write answers it.
#[inline]
pub(crate) fn waited_for_input() {
    ANSWERING.with(|c| c.set(true));
}

/// True when the calling thread's next write answers input it waited for.
#[inline]
pub(crate) fn answering() -> bool {
    ANSWERING.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    #[test]
    fn a_sporadic_message_goes_direct() {
        assert!(may_write_direct(false, 10 * QUIET, None, false));
        assert!(may_write_direct(false, 10 * QUIET, Some(10 * QUIET), false));
    }

    #[test]
    fn a_stream_on_one_connection_is_batched() {
        assert!(!may_write_direct(false, US, Some(US), false));
        assert!(!may_write_direct(false, US, Some(10 * QUIET), false));
    }

    #[test]
    fn a_round_over_many_connections_is_batched() {
        // Each connection was last written a whole round ago, longer than QUIET, but the
        // socket wrote directly a moment ago: the thread is streaming.
        assert!(!may_write_direct(false, 10 * QUIET, Some(US), false));
    }

    #[test]
    fn a_hand_over_keeps_the_thread_streaming() {
        // A fresh thread: the test harness may run other tests on this one.
        std::thread::spawn(|| {
            origin();
            let t0 = Instant::now();
            // Never wrote directly; handed a write over a moment ago: the next connection,
            // quiet for long, is still the I/O thread's.
            handed_over(t0);
            assert!(!may_write_direct(false, 10 * QUIET, since_direct(t0 + QUIET / 2), false));
            assert!(may_write_direct(false, 10 * QUIET, since_direct(t0 + 2 * QUIET), false));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_round_hands_over_all_but_its_first_connection_however_long_it_takes() {
        std::thread::spawn(|| {
            origin();
            let t0 = Instant::now();
            let round = Round::begin();
            assert!(!rest_of_round());
            wrote_direct(t0); // the first connection
            assert!(rest_of_round());
            // Long after (a preemption), another connection quiet for long is still handed
            // over, a reply still goes direct.
            let later = since_direct(t0 + 10 * QUIET);
            assert!(!may_write_direct(false, 10 * QUIET, later, rest_of_round()));
            assert!(may_write_direct(true, 10 * QUIET, later, rest_of_round()));
            drop(round);
            assert!(!rest_of_round());
            assert!(may_write_direct(false, 10 * QUIET, later, rest_of_round()));
            // A hand-over deals with a round's first connection too.
            let _round = Round::begin();
            handed_over(t0);
            assert!(rest_of_round());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_write_waits_behind_the_threads_handed_over_write() {
        std::thread::spawn(|| {
            let p = Arc::new(Progress::default());
            assert!(!write_pending());
            p.posted.store(3, Ordering::Relaxed);
            handed_write(&p, 3);
            assert!(write_pending());
            p.done.store(2, Ordering::Release);
            assert!(write_pending());
            // Another thread has its own record.
            std::thread::spawn(|| assert!(!write_pending())).join().unwrap();
            p.done.store(3, Ordering::Release);
            assert!(!write_pending());
            assert!(HANDED.with(|h| h.borrow().is_none()), "the record is let go once done");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_reply_goes_direct_at_any_pace() {
        assert!(may_write_direct(true, US, Some(US), false));
    }

    #[test]
    fn an_answer_is_flagged_until_the_next_direct_write() {
        std::thread::spawn(|| {
            assert!(!answering());
            waited_for_input();
            assert!(answering());
            wrote_direct(Instant::now());
            assert!(!answering());
            // Another thread has its own flag.
            waited_for_input();
            std::thread::spawn(|| assert!(!answering())).join().unwrap();
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_thread_record_measures_from_its_last_direct_write() {
        // A fresh thread: the test harness may run other tests on this one.
        std::thread::spawn(|| {
            origin(); // stamps count from the first use; t0 must not precede it
            let t0 = Instant::now();
            assert_eq!(since_direct(t0), None);
            wrote_direct(t0);
            assert_eq!(since_direct(t0), Some(Duration::ZERO));
            assert_eq!(since_direct(t0 + 3 * QUIET), Some(3 * QUIET));
            // A clock read before the stamp never underflows.
            wrote_direct(t0 + QUIET);
            assert_eq!(since_direct(t0), Some(Duration::ZERO));
            // Another thread has its own record.
            std::thread::spawn(move || assert_eq!(since_direct(t0), None)).join().unwrap();
        })
        .join()
        .unwrap();
    }
}
