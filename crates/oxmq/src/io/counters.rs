//! The I/O side's counters of a socket: one record per session, written only by whoever
//! drives it (the I/O thread, or an application thread holding the session for a direct
//! path), once per read or write batch, with a relaxed load and store (no locked
//! instruction); read by anyone, relaxed, and added up. A session that ends folds its counts
//! into the socket's retired totals under the lock a reader takes, so totals never go
//! backwards. `socket/stats.rs` reports them as part of `SocketStats`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// The sums of a socket's session counters.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IoTotals {
    pub wire_in: u64,
    pub wire_out: u64,
    pub connections: u64,
    pub reconnects: u64,
    pub handshake_failures: u64,
    pub protocol_errors: u64,
    pub oversized: u64,
    pub unsendable: u64,
    pub direct_reads: u64,
    pub direct_resumes: u64,
    pub lent_waits: u64,
    pub lease_lapses: u64,
    pub wire_writes: u64,
    pub direct_writes: u64,
    /// Sessions connected past their handshake now.
    pub peers: u64,
}

/// One session's counters. Written only by whoever drives the session (the I/O thread, or an
/// application thread holding the session's lock for a direct write), read by anyone.
#[derive(Default)]
pub(crate) struct SessionCounters {
    wire_in: AtomicU64,
    wire_out: AtomicU64,
    connections: AtomicU64,
    reconnects: AtomicU64,
    handshake_failures: AtomicU64,
    protocol_errors: AtomicU64,
    oversized: AtomicU64,
    unsendable: AtomicU64,
    direct_reads: AtomicU64,
    direct_resumes: AtomicU64,
    lent_waits: AtomicU64,
    lease_lapses: AtomicU64,
    wire_writes: AtomicU64,
    direct_writes: AtomicU64,
    /// 1 while connected past the handshake.
    connected: AtomicU64,
}

/// Adds to a counter that has a single writer: a plain load and store, no locked instruction.
#[inline]
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

impl SessionCounters {
    #[inline]
    pub(crate) fn wire_in(&self, n: usize) {
        bump(&self.wire_in, n as u64);
    }
    /// One write system call of `n` bytes, by an application thread (`direct`) or an I/O thread.
    #[inline]
    pub(crate) fn wire_out(&self, n: usize, direct: bool) {
        bump(&self.wire_out, n as u64);
        bump(&self.wire_writes, 1);
        if direct {
            bump(&self.direct_writes, 1);
        }
    }
    pub(crate) fn connected(&self, again: bool) {
        bump(&self.connections, 1);
        if again {
            bump(&self.reconnects, 1);
        }
        self.connected.store(1, Relaxed);
    }
    pub(crate) fn disconnected(&self) {
        self.connected.store(0, Relaxed);
    }
    pub(crate) fn handshake_failed(&self) {
        bump(&self.handshake_failures, 1);
    }
    pub(crate) fn oversized(&self) {
        bump(&self.oversized, 1);
    }
    /// A udp engine's message that could not be sent (`SocketStats::dropped_unsendable`).
    pub(crate) fn unsendable(&self) {
        bump(&self.unsendable, 1);
    }
    pub(crate) fn protocol_error(&self) {
        bump(&self.protocol_errors, 1);
    }
    #[inline]
    pub(crate) fn direct_read(&self) {
        bump(&self.direct_reads, 1);
    }

    pub(crate) fn direct_resume(&self) {
        bump(&self.direct_resumes, 1);
    }

    /// A wait took over input lent from the previous wait (`session/lease.rs`).
    pub(crate) fn lent_wait(&self) {
        bump(&self.lent_waits, 1);
    }

    /// The I/O thread took back input no wait came for within the lease.
    pub(crate) fn lease_lapse(&self) {
        bump(&self.lease_lapses, 1);
    }

    fn add_to(&self, s: &mut IoTotals, live: bool) {
        s.wire_in += self.wire_in.load(Relaxed);
        s.wire_out += self.wire_out.load(Relaxed);
        s.connections += self.connections.load(Relaxed);
        s.reconnects += self.reconnects.load(Relaxed);
        s.handshake_failures += self.handshake_failures.load(Relaxed);
        s.protocol_errors += self.protocol_errors.load(Relaxed);
        s.oversized += self.oversized.load(Relaxed);
        s.unsendable += self.unsendable.load(Relaxed);
        s.direct_reads += self.direct_reads.load(Relaxed);
        s.direct_resumes += self.direct_resumes.load(Relaxed);
        s.lent_waits += self.lent_waits.load(Relaxed);
        s.lease_lapses += self.lease_lapses.load(Relaxed);
        s.wire_writes += self.wire_writes.load(Relaxed);
        s.direct_writes += self.direct_writes.load(Relaxed);
        if live {
            s.peers += self.connected.load(Relaxed);
        }
    }
}

/// A socket's sessions' counters: the live ones, and the sum of those that ended.
#[derive(Default)]
pub(crate) struct IoStats {
    inner: Mutex<IoStatsInner>,
}

#[derive(Default)]
struct IoStatsInner {
    live: Vec<Arc<SessionCounters>>,
    retired: IoTotals,
}

impl IoStats {
    /// A new session's counters (once per connection or accept: rare).
    pub(crate) fn register(&self) -> Arc<SessionCounters> {
        let c = Arc::new(SessionCounters::default());
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).live.push(c.clone());
        c
    }

    /// The session ended: keep its counts in the totals.
    pub(crate) fn retire(&self, c: &Arc<SessionCounters>) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = g.live.iter().position(|x| Arc::ptr_eq(x, c)) {
            g.live.swap_remove(i);
            c.add_to(&mut g.retired, false);
        }
    }

    /// The counts of every session of the socket, live and ended.
    pub(crate) fn totals(&self) -> IoTotals {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut s = g.retired;
        for c in &g.live {
            c.add_to(&mut s, true);
        }
        s
    }
}
