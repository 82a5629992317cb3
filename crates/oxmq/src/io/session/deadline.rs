//! A connection's deadlines on the reactor's clock: the handshake's timeout (HANDSHAKE_IVL),
//! then RFC 37's heartbeats (HEARTBEAT_IVL, HEARTBEAT_TTL, HEARTBEAT_TIMEOUT).
//!
//! The protocol keeps them (`zmtp::Connection::next_deadline`, `expire`); this keeps one
//! reactor timer per connection set at the earliest, moved only when that changes (a PING
//! sent or received, the handshake's end). The data path reads no clock: a PING's TTL noted
//! while decoding gets its time here, after the read batch. An application thread that
//! decodes such a PING hands the connection to the I/O thread for it (`direct.rs`).

use super::conn::{Conn, Proto};
use super::{Link, Lost};
use crate::io::{Ctx, Timer};

impl Conn {
    /// Gives noted deadlines their time and keeps the connection's timer at its earliest
    /// deadline (none: no timer).
    pub(super) fn sync_deadline(&mut self, link: &Link, ctx: &mut Ctx<'_>) {
        let Proto::Zmtp(z) = &mut self.proto else { return };
        if let Some(d) = z.data_mut() {
            if d.needs_clock() {
                d.start_clock(ctx.now());
            }
        }
        let next = z.next_deadline();
        if next == self.deadline.map(|(at, _)| at) {
            return;
        }
        if let Some((_, key)) = self.deadline.take() {
            // A churn of connections must not leave a timer each behind.
            ctx.cancel_timer(key);
        }
        if let Some(at) = next {
            let key = ctx.add_timer(at, link.token, link.serial, Timer::Deadline(self.id));
            self.deadline = Some((at, key));
        }
    }

    /// The connection's timer fired: the handshake took too long, the heartbeats found the
    /// link silent (both lose the connection), or a PING is due (written now).
    pub(super) fn deadline_due(&mut self, link: &mut Link, ctx: &mut Ctx<'_>) -> Result<(), Lost> {
        self.deadline = None;
        let held = !self.held.is_empty();
        if let Proto::Zmtp(z) = &mut self.proto {
            if z.expire(ctx.now(), held).is_err() {
                return Err(Lost);
            }
            if z.data_mut().is_some_and(|d| d.take_transport_ping()) {
                self.stream.ping();
            }
        }
        if !self.in_close_wait() {
            self.write_side(link, false)?;
        }
        self.sync_deadline(link, ctx);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
