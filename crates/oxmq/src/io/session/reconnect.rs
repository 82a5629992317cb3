//! When a connecting session tries again, and when it gives up.
//!
//! A connect-side session whose connect fails, or whose connection drops, waits RECONNECT_IVL
//! (doubled after each failure up to RECONNECT_IVL_MAX when that is set) and connects again,
//! for as long as the socket keeps the endpoint. It ends for good instead, as libzmq 4.3's
//! connecters and sessions do, when:
//!
//! * a handshake fails on a protocol error (a malformed or refused handshake, an ERROR from the
//!   peer, a ZAP refusal): retrying would meet the same refusal (libzmq's
//!   `engine_error(protocol_error)`);
//! * RECONNECT_STOP has `RECONNECT_STOP_HANDSHAKE_FAILED` and a connection ends before its
//!   handshake completed (HANDSHAKE_IVL expired, or the peer hung up): a peer that does not
//!   speak ZMTP;
//! * RECONNECT_STOP has `RECONNECT_STOP_CONN_REFUSED` and a connect is refused (ECONNREFUSED),
//!   tcp or ipc (libzmq 4.3 checks tcp only);
//! * RECONNECT_STOP has `RECONNECT_STOP_AFTER_DISCONNECT`, the socket has since called
//!   `disconnect` or `unbind` on a tcp or ipc endpoint, and a connect is refused (libzmq 4.3.5
//!   checks ipc only). The endpoint `disconnect` names needs no flag: its session ends at once.
//!
//! The monitor then sees what libzmq's shows: CLOSED after the refused connect (or
//! DISCONNECTED after the failed handshake) and no CONNECT_RETRIED. A session that ends drops
//! its pipe end, so the socket drops the pipe and what was queued in it. (The socket still
//! lists the endpoint: a later `disconnect` of it succeeds, where libzmq, which forgets an
//! endpoint whose connect was refused for good, says ENOENT.)

use super::{Ctx, Session, State};
use crate::io::monitor::event as mon;
use crate::io::Timer;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl Session {
    /// Arms the reconnect timer (with backoff). Returns false if the session should end.
    pub(super) fn schedule_reconnect(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.state = State::Idle;
        let link = &mut self.link;
        if link.dialer.is_none() || link.cfg.reconnect_ivl < 0 {
            return false;
        }
        if link.closing && link.drained {
            return false;
        }
        let wait = link.ivl.max(0) as u64;
        if link.cfg.reconnect_ivl_max > 0 {
            link.ivl = (link.ivl.saturating_mul(2)).min(link.cfg.reconnect_ivl_max);
        }
        link.event(mon::CONNECT_RETRIED, wait, None, &[]);
        link.set_timer(ctx, Duration::from_millis(wait), Timer::Reconnect);
        true
    }

    /// A connect attempt failed with `errno` (None: unknown), its CLOSED event raised already:
    /// tries again later, or returns false (the session ends) when RECONNECT_STOP makes a
    /// refusal final.
    pub(super) fn connect_failed(&mut self, ctx: &mut Ctx<'_>, errno: Option<i32>) -> bool {
        let stop = self.link.cfg.link.reconnect_stop;
        let refusal_ends =
            stop.on_refused() || (stop.after_disconnect() && self.link.socket.disconnected.load(Ordering::Relaxed));
        if errno == Some(libc::ECONNREFUSED) && refusal_ends {
            self.state = State::Idle;
            return false;
        }
        self.schedule_reconnect(ctx)
    }
}

#[cfg(test)]
mod tests;
