//! ZMTP 3.1 heartbeats (RFC 37), as libzmq runs them (HEARTBEAT_IVL, HEARTBEAT_TTL,
//! HEARTBEAT_TIMEOUT), as a state machine on the caller's clock.
//!
//! Every interval we send a PING carrying our TTL; if nothing at all arrives within the
//! timeout (default: the interval) after a PING, the connection is dead. A PING from the peer
//! carrying a TTL sets a deadline of that many deciseconds; if nothing arrives before it, the
//! connection is dead too. Each PING supersedes the previous one's deadline, so silence is
//! always measured from the latest.
//!
//! "Nothing arrived" is "the input count has not moved since the deadline was set": the data
//! path pays one increment per read ([`Heartbeat::note_input`]) and no clock. A reader that
//! stopped because the application's queue is full is not silent, so [`Heartbeat::expire`]
//! takes whether input is held back.
//!
//! libzmq cancels the timeout when anything arrives, and the next PING arms a new one, so a
//! peer that falls silent is dropped within the interval plus the timeout. Here the one
//! pending timeout stays, and each PING notes when the silence may have begun (the first PING
//! after the last read); a timeout that finds reads since it was armed moves to that PING's
//! time plus the timeout, which gives libzmq's bound with one deadline.
//!
//! Time comes in as arguments (`now`) and deadlines go out ([`Heartbeat::next_deadline`]); a
//! PING's TTL needs the time it arrived, which the data path does not read: it is noted
//! ([`Heartbeat::on_ping`]) and turned into a deadline at the caller's next
//! [`Heartbeat::start_clock`] ([`Heartbeat::needs_clock`] says when one is due).

use std::time::{Duration, Instant};

/// The heartbeat options of one connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeartbeatConfig {
    /// Time between our PINGs (None: we send none).
    pub interval: Option<Duration>,
    /// How long to wait for any input after a PING (None: never give up).
    pub timeout: Option<Duration>,
    /// The TTL we announce in our PINGs, in deciseconds (0: none).
    pub ttl_ds: u16,
    /// Our PINGs are the transport's own keepalive (a WebSocket ping frame, as libzmq's ws
    /// engine sends; the peer's pong is input like any other), not ZMTP PING commands: see
    /// [`crate::data::DataPhase::take_transport_ping`].
    pub by_transport: bool,
}

/// Why a connection's deadline ended it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expired {
    /// The handshake did not complete in time (libzmq's HANDSHAKE_IVL).
    Handshake,
    /// Nothing arrived within the timeout after our PING.
    Timeout,
    /// Nothing arrived within the TTL the peer's last PING announced.
    Ttl,
}

/// One connection's heartbeat state.
#[derive(Clone, Debug)]
pub struct Heartbeat {
    config: HeartbeatConfig,
    /// Successful reads on this connection.
    inputs: u64,
    /// When our next PING is due.
    next_ping: Option<Instant>,
    /// The deadline after our PING, with the input count when it was set.
    timeout: Option<(Instant, u64)>,
    /// The deadline the peer's latest TTL set, with the input count at its PING.
    ttl: Option<(Instant, u64)>,
    /// A PING's TTL waiting for the clock (deciseconds), with the input count at its PING.
    ttl_pending: Option<(u16, u64)>,
    /// The first PING we sent after the last read we know of, with the input count then:
    /// where a silence still going on began, at the latest.
    silent_from: Option<(Instant, u64)>,
}

impl Heartbeat {
    /// A connection's heartbeats, stopped until [`Heartbeat::start`].
    pub fn new(config: HeartbeatConfig) -> Heartbeat {
        Heartbeat { config, inputs: 0, next_ping: None, timeout: None, ttl: None, ttl_pending: None, silent_from: None }
    }

    /// The handshake is over at `now`: PINGs start (if an interval is set).
    pub fn start(&mut self, now: Instant) {
        self.next_ping = self.config.interval.map(|ivl| now + ivl);
    }

    /// PINGs go as the transport's keepalive.
    pub fn by_transport(&self) -> bool {
        self.config.by_transport
    }

    /// Stops sending PINGs (the connection is closing); deadlines already set still count.
    pub fn stop_pinging(&mut self) {
        self.next_ping = None;
    }

    /// One read brought input.
    #[inline(always)]
    pub fn note_input(&mut self) {
        self.inputs = self.inputs.wrapping_add(1);
    }

    /// The peer sent a PING announcing `ttl_ds` deciseconds.
    pub fn on_ping(&mut self, ttl_ds: u16) {
        let seen = self.inputs;
        if ttl_ds == 0 || self.ttl.is_some_and(|(_, s)| s == seen) {
            return; // no TTL, or a deadline from this very read is set already
        }
        self.ttl_pending = Some((ttl_ds, seen));
    }

    /// A PING's TTL waits for [`Heartbeat::start_clock`].
    #[inline]
    pub fn needs_clock(&self) -> bool {
        self.ttl_pending.is_some()
    }

    /// Turns a noted TTL into a deadline from `now` (the time the caller learned of the PING).
    pub fn start_clock(&mut self, now: Instant) {
        if let Some((ds, seen)) = self.ttl_pending.take() {
            self.ttl = Some((now + Duration::from_millis(u64::from(ds) * 100), seen));
        }
    }

    /// The earliest deadline, if any.
    pub fn next_deadline(&self) -> Option<Instant> {
        [self.next_ping, self.timeout.map(|t| t.0), self.ttl.map(|t| t.0)].into_iter().flatten().min()
    }

    /// Handles every deadline due at `now`. `held`: input is held back because the application
    /// queue is full (not silence). Returns whether a PING is due now, or why the connection is
    /// dead. A PING due re-arms the interval, and the timeout unless one is pending.
    pub fn expire(&mut self, now: Instant, held: bool) -> Result<bool, Expired> {
        let silent = |seen: u64| seen == self.inputs && !held;
        if let Some((at, seen)) = self.ttl {
            if at <= now {
                self.ttl = None;
                if silent(seen) {
                    return Err(Expired::Ttl);
                }
            }
        }
        if let Some((at, seen)) = self.timeout {
            if at <= now {
                self.timeout = None;
                if silent(seen) {
                    return Err(Expired::Timeout);
                }
                // Something arrived since this deadline was set: it runs again from the PING
                // after which nothing has arrived, if any (where libzmq's would be armed).
                if let (Some((from, reads)), Some(t)) = (self.silent_from, self.config.timeout) {
                    if silent(reads) {
                        if from + t <= now {
                            return Err(Expired::Timeout);
                        }
                        self.timeout = Some((from + t, reads));
                    }
                }
            }
        }
        let Some(at) = self.next_ping else { return Ok(false) };
        if at > now {
            return Ok(false);
        }
        let ivl = self.config.interval.unwrap_or(Duration::from_millis(1)).max(Duration::from_millis(1));
        self.next_ping = Some(now + ivl);
        if self.silent_from.is_none_or(|(_, r)| r != self.inputs) {
            self.silent_from = Some((now, self.inputs));
        }
        if let (Some(t), None) = (self.config.timeout, self.timeout) {
            self.timeout = Some((now + t, self.inputs));
        }
        Ok(true)
    }

    /// The TTL our PINGs carry.
    pub fn ttl_ds(&self) -> u16 {
        self.config.ttl_ds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn config(ivl: u64, timeout: u64) -> HeartbeatConfig {
        HeartbeatConfig { interval: Some(ms(ivl)), timeout: Some(ms(timeout)), ttl_ds: 0, by_transport: false }
    }

    #[test]
    fn pings_every_interval_and_times_out_on_silence() {
        let t0 = Instant::now();
        let mut h = Heartbeat::new(config(100, 50));
        assert_eq!(h.next_deadline(), None, "stopped until start");
        h.start(t0);
        assert_eq!(h.next_deadline(), Some(t0 + ms(100)));
        assert_eq!(h.expire(t0 + ms(99), false), Ok(false));
        assert_eq!(h.expire(t0 + ms(100), false), Ok(true), "a PING is due");
        assert_eq!(h.next_deadline(), Some(t0 + ms(150)), "the timeout comes before the next PING");
        h.note_input();
        assert_eq!(h.expire(t0 + ms(150), false), Ok(false), "input arrived: alive");
        assert_eq!(h.expire(t0 + ms(200), false), Ok(true));
        assert_eq!(h.expire(t0 + ms(250), false), Err(Expired::Timeout), "silent since the PING");
    }

    /// A read just before the silence must not delay the drop past the interval plus the
    /// timeout (libzmq's bound): the timeout moves to the first PING after the last read.
    #[test]
    fn silence_is_found_within_interval_plus_timeout() {
        let t0 = Instant::now();
        let mut h = Heartbeat::new(config(100, 150));
        h.start(t0);
        assert_eq!(h.expire(t0 + ms(100), false), Ok(true)); // PING 1; timeout at 250
        h.note_input(); // the peer's last sign of life, at about 120
        assert_eq!(h.expire(t0 + ms(200), false), Ok(true)); // PING 2, first after the read
        assert_eq!(h.expire(t0 + ms(250), false), Ok(false), "input since PING 1: alive");
        assert_eq!(h.next_deadline(), Some(t0 + ms(300)), "next PING first");
        assert_eq!(h.expire(t0 + ms(300), false), Ok(true)); // PING 3
        assert_eq!(h.next_deadline(), Some(t0 + ms(350)), "PING 2 + timeout, not PING 3's");
        assert_eq!(h.expire(t0 + ms(350), false), Err(Expired::Timeout));
    }

    #[test]
    fn a_full_queue_is_not_silence() {
        let t0 = Instant::now();
        let mut h = Heartbeat::new(config(10, 10));
        h.start(t0);
        assert_eq!(h.expire(t0 + ms(10), false), Ok(true));
        assert_eq!(h.expire(t0 + ms(20), true), Ok(true), "held input keeps it alive; next PING");
    }

    #[test]
    fn the_latest_ttl_counts() {
        let t0 = Instant::now();
        let mut h = Heartbeat::new(HeartbeatConfig::default());
        h.start(t0);
        assert_eq!(h.next_deadline(), None, "no interval: no PINGs");
        h.note_input();
        h.on_ping(5);
        assert!(h.needs_clock());
        h.start_clock(t0);
        assert!(!h.needs_clock());
        assert_eq!(h.next_deadline(), Some(t0 + ms(500)));
        h.on_ping(7);
        assert!(!h.needs_clock(), "a second PING in the same read changes nothing");
        h.note_input();
        h.on_ping(2);
        h.start_clock(t0 + ms(100));
        assert_eq!(h.next_deadline(), Some(t0 + ms(300)), "superseded by the later PING");
        assert_eq!(h.expire(t0 + ms(300), false), Err(Expired::Ttl));
        h.on_ping(0);
        assert!(!h.needs_clock(), "TTL 0 sets no deadline");
    }
}
