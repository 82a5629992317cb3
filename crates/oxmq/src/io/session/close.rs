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

use super::{Conn, Session, State};
use crate::io::{Ctx, Timer};
use crate::transport::stream::Stream;
use std::io;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The first check of the send queue after the half-close, and the longest interval between
/// two checks (the interval doubles from the first to this).
const FIRST_CHECK_MS: u64 = 1;
const MAX_CHECK_MS: u64 = 100;

impl Session {
    /// True when the session is finished: closing, everything queued written, and (tcp) the
    /// connection may close without losing any of it.
    pub(super) fn finished(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.closing && self.drained && self.tx_empty() && self.may_close(ctx)
    }

    /// Whether the connection may close now; otherwise begins or continues the half-closed
    /// wait. A session in that wait takes its events here instead of the data path.
    pub(super) fn may_close(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let linger = self.socket.linger.load(Ordering::Acquire);
        let (token, serial) = (self.token, self.serial);
        let State::Connected(c) = &mut self.state else { return true };
        if linger == 0 || c.handshake.is_some() || !matches!(c.stream, Stream::Tcp(_)) {
            return true;
        }
        if !discard_input(c) || unacknowledged(c) == 0 {
            return true;
        }
        if !c.fin_sent {
            c.fin_sent = true;
            if let Stream::Tcp(s) = &c.stream {
                if s.shutdown(std::net::Shutdown::Write).is_err() {
                    return true;
                }
            }
            ctx.add_timer(Instant::now() + Duration::from_millis(FIRST_CHECK_MS), token, serial, Timer::CloseCheck(FIRST_CHECK_MS));
        }
        false
    }

    /// The send-queue check after a half-close. Returns false when the session is finished.
    pub(super) fn close_check(&mut self, ctx: &mut Ctx<'_>, ms: u64) -> bool {
        if !self.in_close_wait() {
            return true; // set for an earlier connection
        }
        if self.may_close(ctx) {
            return false;
        }
        let next = (ms * 2).min(MAX_CHECK_MS);
        ctx.add_timer(Instant::now() + Duration::from_millis(next), self.token, self.serial, Timer::CloseCheck(next));
        true
    }

    /// The session has half-closed its connection and waits to close it.
    pub(super) fn in_close_wait(&self) -> bool {
        matches!(&self.state, State::Connected(c) if c.fin_sent)
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
                c.beat.reads += 1;
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

/// Bytes in the connection's send queue the peer has not acknowledged (0 if unknown).
fn unacknowledged(c: &Conn) -> i32 {
    let mut n: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one int through a valid pointer.
    let rc = unsafe { libc::ioctl(c.stream.fd(), libc::TIOCOUTQ, &mut n) };
    if rc < 0 {
        0
    } else {
        n
    }
}
