//! ZMTP 3.1 heartbeats for one connection (RFC 37; libzmq's HEARTBEAT_IVL, HEARTBEAT_TTL,
//! HEARTBEAT_TIMEOUT).
//!
//! Every HEARTBEAT_IVL we send a PING carrying our TTL; if nothing at all arrives within
//! HEARTBEAT_TIMEOUT (default: the interval) after a PING, the connection is dropped. A PING
//! from the peer carrying a TTL arms a deadline of that many deciseconds; if nothing arrives
//! before it, the connection is dropped too. A dropped connection goes the usual way: the
//! connecting side reconnects.
//!
//! Deadlines are the I/O thread's timers, which cannot be cancelled: each carries the number of
//! the connection it was set for (so a later connection ignores it) and the connection's read
//! count when it was set. "Nothing arrived" is then "the read count has not moved", so the data
//! path pays one increment per read and no clock at all. A connection that stopped reading
//! because the socket's queue is full is not silent; it is never dropped for that.
//!
//! libzmq cancels the timeout when anything arrives, and the next PING arms a new one, so a
//! peer that falls silent is dropped within HEARTBEAT_IVL + HEARTBEAT_TIMEOUT. Here the one
//! pending timeout stays, and each PING notes when the silence may have begun (the first PING
//! after the last read, `silent_from`); a timeout that finds reads since it was armed moves to
//! that PING's time plus the timeout instead of waiting for the next PING to arm one, which
//! gives libzmq's bound (before, a read just before the silence delayed the drop to almost
//! twice the timeout).

use super::{send_command, Conn, Lost, Session, State};
use crate::io::{Ctx, Timer};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Connection numbers, unique in the process.
static CONNS: AtomicU64 = AtomicU64::new(0);

/// One connection's heartbeat state.
pub(crate) struct Beat {
    conn: u64,
    /// Successful reads on this connection.
    pub(super) reads: u64,
    /// A timeout after our PING is pending.
    timeout_armed: bool,
    /// The first PING sent after the last read we know of, and the read count then: where a
    /// silence that is still going on began, at the latest.
    silent_from: Option<(Instant, u64)>,
    /// The read count the latest TTL deadline was set at: only that deadline counts (an
    /// earlier one is superseded, as libzmq cancels its TTL timer on traffic and sets it again
    /// at the next PING).
    ttl_seen: Option<u64>,
}

/// What a heartbeat timer is for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Due {
    /// Time to send a PING.
    Ping,
    /// The timeout after our PING; `seen` is the read count when it was sent.
    Timeout { seen: u64 },
    /// The peer's TTL; `seen` is the read count when its PING was read.
    Ttl { seen: u64 },
}

impl Beat {
    pub(super) fn new() -> Beat {
        Beat { conn: CONNS.fetch_add(1, Ordering::Relaxed), reads: 0, timeout_armed: false, silent_from: None, ttl_seen: None }
    }

    /// A deadline set at `seen` reads has passed: true if the link stayed silent.
    fn silent_since(&self, seen: u64, held: bool) -> bool {
        self.reads == seen && !held
    }
}

impl Session {
    /// The handshake completed: start sending PINGs if HEARTBEAT_IVL asks for them.
    pub(super) fn heartbeat_start(&mut self, ctx: &mut Ctx<'_>) {
        let ivl = self.options.link.heartbeat_ivl;
        let State::Connected(c) = &self.state else { return };
        // PING is a ZMTP 3.1 command, but libzmq sends it to 3.0 peers as well (a silent 3.0
        // peer is found dead the same way), and programs written for it count on that. ZMTP
        // 1.0/2.0 have no commands at all.
        if ivl > 0 && c.version >= zmtp::Version::V3_0 {
            let at = Instant::now() + Duration::from_millis(ivl as u64);
            ctx.add_timer(at, self.token, self.serial, Timer::Heartbeat(c.beat.conn, Due::Ping));
        }
    }

    /// A heartbeat timer fired. Returns false when the session is finished.
    pub(super) fn heartbeat_timer(&mut self, ctx: &mut Ctx<'_>, conn: u64, due: Due) -> bool {
        let (token, serial) = (self.token, self.serial);
        let State::Connected(c) = &mut self.state else { return true };
        if c.beat.conn != conn || c.handshake.is_some() {
            return true; // set for an earlier connection
        }
        let now = Instant::now();
        match due {
            Due::Ping if c.fin_sent => true, // half-closed: nothing more is written
            Due::Ping => {
                let link = &self.options.link;
                ctx.add_timer(
                    now + Duration::from_millis(link.heartbeat_ivl.max(1) as u64),
                    token,
                    serial,
                    Timer::Heartbeat(conn, Due::Ping),
                );
                // A command may not split a multi-part message being written; the next
                // interval sends it instead.
                if !c.out_mid {
                    send_command(c, &zmtp::Command::Ping { ttl: link.heartbeat_ttl_ds, context: bytes::Bytes::new() });
                }
                if c.beat.silent_from.is_none_or(|(_, r)| r != c.beat.reads) {
                    c.beat.silent_from = Some((now, c.beat.reads));
                }
                let timeout = link.effective_timeout();
                if timeout > 0 && !c.beat.timeout_armed {
                    c.beat.timeout_armed = true;
                    let due = Due::Timeout { seen: c.beat.reads };
                    ctx.add_timer(now + Duration::from_millis(timeout), token, serial, Timer::Heartbeat(conn, due));
                }
                match self.write_side(false) {
                    Ok(()) => true,
                    Err(Lost) => self.connection_lost(ctx),
                }
            }
            Due::Timeout { seen } => {
                let held = !c.held.is_empty();
                if c.beat.silent_since(seen, held) {
                    return self.connection_lost(ctx);
                }
                // Something arrived since this deadline was set: it runs again from the PING
                // after which nothing has arrived (if any), as libzmq's would have been armed.
                let timeout = Duration::from_millis(self.options.link.effective_timeout());
                match c.beat.silent_from {
                    Some((at, reads)) if c.beat.silent_since(reads, held) && at + timeout <= now => {
                        return self.connection_lost(ctx);
                    }
                    Some((at, reads)) if c.beat.silent_since(reads, held) => {
                        let due = Due::Timeout { seen: reads };
                        ctx.add_timer(at + timeout, token, serial, Timer::Heartbeat(conn, due));
                    }
                    _ => c.beat.timeout_armed = false, // the next PING arms one
                }
                true
            }
            Due::Ttl { seen } => {
                if c.beat.ttl_seen != Some(seen) {
                    return true; // superseded by a later PING
                }
                c.beat.ttl_seen = None;
                if c.beat.silent_since(seen, !c.held.is_empty()) {
                    return self.connection_lost(ctx);
                }
                true
            }
        }
    }
}

/// The peer sent a PING announcing `ttl_ds` deciseconds: if nothing arrives within that, drop
/// the connection. Each PING sets a new deadline that supersedes the previous one, so silence
/// is always measured from the latest PING.
pub(super) fn ping_received(ctx: &mut Ctx<'_>, (token, serial): (usize, u64), c: &mut Conn, ttl_ds: u16) {
    if ttl_ds == 0 || c.beat.ttl_seen == Some(c.beat.reads) {
        return; // no TTL, or a deadline from this very read is set already
    }
    c.beat.ttl_seen = Some(c.beat.reads);
    let at = Instant::now() + Duration::from_millis(ttl_ds as u64 * 100);
    ctx.add_timer(at, token, serial, Timer::Heartbeat(c.beat.conn, Due::Ttl { seen: c.beat.reads }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_is_no_read_since_the_deadline_was_set() {
        let mut b = Beat::new();
        let seen = b.reads;
        assert!(b.silent_since(seen, false));
        assert!(!b.silent_since(seen, true), "a reader held back by a full queue is not silent");
        b.reads += 1;
        assert!(!b.silent_since(seen, false));
        assert_ne!(Beat::new().conn, b.conn, "connections are told apart");
    }
}
