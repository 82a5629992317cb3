//! The orderly end of a closing session's TCP connection.
//!
//! Closing a TCP socket whose receive queue holds unread bytes makes the kernel answer with RST
//! and discard what its send queue still holds: the tail of what LINGER was meant to deliver,
//! lost after the library had written it. A peer's PINGs are enough to leave such bytes, and a
//! slow reader is enough to keep data in the send queue. So a session that has written
//! everything does not simply close: it reads and discards the peer's input, and closes once
//! the kernel holds no byte the peer has not acknowledged. Until then it half-closes (FIN
//! after the data, which a ZMTP peer answers by closing) and waits for the first of: the
//! peer's end of stream, an empty send queue (checked on a backing-off timer), the heartbeat
//! timeout, or LINGER.
//!
//! ipc needs none of this: a Unix socket's bytes are in the peer's queue once written, and the
//! peer reads them before it sees the close.

use super::conn::{Conn, Proto};
use super::Link;
use crate::io::{Ctx, Timer};
use std::io;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The first check of the send queue after the half-close, and the longest interval between
/// two checks (the interval doubles from the first to this).
const FIRST_CHECK_MS: u64 = 1;
const MAX_CHECK_MS: u64 = 100;

impl Conn {
    /// Whether the connection may close now; otherwise begins or continues the half-closed
    /// wait. A connection in that wait takes its events here instead of the data path.
    pub(super) fn may_close(&mut self, link: &Link, ctx: &mut Ctx<'_>) -> bool {
        let linger = link.socket.linger.load(Ordering::Acquire);
        // Only a stream over tcp can lose what it wrote by closing (ipc's bytes are in the
        // peer's queue once written).
        if linger == 0 || !self.is_established() || self.stream.unacknowledged().is_none() {
            return true;
        }
        // A layer may still hold output back (the link was full when everything was
        // written): it goes out as the peer reads, at each check, or it never would. Until it
        // has, the kernel's queue says nothing and the write side stays open (a FIN, or a TLS
        // close_notify, before those bytes would lose them).
        let Ok(flushed) = self.stream.flush() else { return true };
        if !discard_input(self) || (flushed && self.stream.unacknowledged() == Some(0)) {
            return true;
        }
        if !self.fin_sent {
            self.fin_sent = true;
            if let Proto::Zmtp(z) = &mut self.proto {
                if let Some(d) = z.data_mut() {
                    d.stop_pinging(); // nothing more is written
                }
            }
            let at = ctx.now() + Duration::from_millis(FIRST_CHECK_MS);
            self.close_check = Some(ctx.add_timer(at, link.token, link.serial, Timer::CloseCheck(FIRST_CHECK_MS)));
        }
        if flushed && !self.write_shut {
            self.write_shut = true;
            if self.stream.shutdown_write().is_err() {
                return true;
            }
        }
        false
    }

    /// The send-queue check after a half-close. Returns false when the session is finished.
    pub(super) fn close_check(&mut self, link: &mut Link, ctx: &mut Ctx<'_>, ms: u64) -> bool {
        self.close_check = None; // taken from the queue to fire
        if !self.fin_sent {
            return true; // set for an earlier connection
        }
        if self.may_close(link, ctx) {
            return false;
        }
        let next = (ms * 2).min(MAX_CHECK_MS);
        self.close_check =
            Some(ctx.add_timer(ctx.now() + Duration::from_millis(next), link.token, link.serial, Timer::CloseCheck(next)));
        true
    }

    /// The connection has half-closed and waits to close.
    #[inline]
    pub(super) fn in_close_wait(&self) -> bool {
        self.fin_sent
    }
}

/// What one call discards at most: a peer that keeps sending must not hold the I/O thread
/// (the send-queue check comes back to it).
const DISCARD_BUDGET: usize = 1 << 20;

/// Reads and drops what the peer has sent (up to `DISCARD_BUDGET`). False once the stream has
/// ended or failed (the peer closed: nothing we sent can be lost by closing).
fn discard_input(c: &mut Conn) -> bool {
    let mut buf = [0u8; 16384];
    let mut budget = DISCARD_BUDGET;
    loop {
        match c.stream.read_plain(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                c.reads += 1;
                budget = budget.saturating_sub(n);
                if budget == 0 {
                    return true;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests;
