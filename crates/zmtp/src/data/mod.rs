//! The data phase of a ZMTP connection: frames and commands after the handshake, in the
//! negotiated revision's framing (1.0, 2.0 or 3.x), sealed and opened by CURVE's [`Cipher`]
//! when CURVE was negotiated, with RFC 37's heartbeats.
//!
//! [`DataPhase`] is what an engine runs for every connection, and what
//! [`Connection`](crate::Connection) runs for its own event queue:
//!
//! * **Input** ([`DataPhase::decode`]): bytes in the caller's receive buffer go to a [`Sink`]
//!   the caller provides, one frame at a time, where they lie ([`Body`]): the sink copies a
//!   short body with one fixed-size copy ([`Body::window`]), copies a longer one where it wants
//!   it, or takes a large one without copying ([`Body::take`]). Commands the protocol itself
//!   answers (PING, PONG, ERROR) never reach the sink; the ones a socket acts on (SUBSCRIBE,
//!   CANCEL, JOIN, LEAVE) do. The sink can pause decoding after any frame (its queue is full).
//! * **Output** ([`DataPhase::encode_frame`] and friends): frames are appended to the caller's
//!   send buffer, a short body with one fixed-size copy, a large body's header alone so that
//!   the caller writes the body from its own memory. Commands the protocol sends (PONG, PING)
//!   wait until a message boundary ([`DataPhase::flush_control`]), so they never split a
//!   multi-part message.
//! * **Time** comes in as arguments: [`DataPhase::expire`] runs the heartbeat deadlines, and
//!   [`DataPhase::next_deadline`] says when to call it.

mod decode;
mod encode;
mod out;

pub use decode::{Body, Decoded, Flow, Sink};
pub use encode::short_header;

use crate::command::Command;
use crate::heartbeat::{Expired, Heartbeat, HeartbeatConfig};
use crate::mechanism::Cipher;
use crate::version::Version;
use std::time::Instant;

/// A connection after its handshake.
#[derive(Debug)]
pub struct DataPhase {
    version: Version,
    max_body: Option<u64>,
    cipher: Option<Cipher>,
    /// The last frame encoded had MORE: the message is not complete on the wire.
    out_mid: bool,
    /// One-frame messages starting with 0x01/0x00 are subscriptions (SUB, XSUB): sent as
    /// SUBSCRIBE/CANCEL commands to a 3.1 peer.
    subscriptions: bool,
    /// Short frames take [`DataPhase::encode_short`]'s one-append path: no cipher, no
    /// subscriptions to turn into commands, and the 2.0/3.x header. Fixed at construction, as
    /// the three it sums up are, so the per-frame encoder tests one flag.
    plain_shorts: bool,
    /// Commands the protocol sends on its own, waiting for a message boundary.
    control: Vec<Command>,
    heartbeat: Heartbeat,
    /// A frame could not be sealed (CURVE's nonces ran out): reported by the next decode.
    send_error: Option<crate::error::CipherError>,
    /// A PING is due, to be sent as the transport's keepalive.
    transport_ping: bool,
}

impl DataPhase {
    /// The data phase of a connection that negotiated `version`, refusing frames over
    /// `max_body`, with CURVE's `cipher` if CURVE was negotiated. `subscriptions`: see
    /// [`crate::Config::send_subscriptions`]. Heartbeats start at `now` (ZMTP 3.0 and later;
    /// libzmq sends PINGs to 3.0 peers too).
    pub fn new(
        version: Version,
        max_body: Option<u64>,
        cipher: Option<Cipher>,
        subscriptions: bool,
        heartbeat: HeartbeatConfig,
        now: Instant,
    ) -> DataPhase {
        let mut hb = Heartbeat::new(if version.is_legacy() { HeartbeatConfig::default() } else { heartbeat });
        hb.start(now);
        let plain_shorts = cipher.is_none() && !subscriptions && version != Version::V1_0;
        DataPhase {
            version,
            max_body,
            cipher,
            out_mid: false,
            plain_shorts,
            subscriptions,
            control: Vec::new(),
            heartbeat: hb,
            send_error: None,
            transport_ping: false,
        }
    }

    /// The negotiated revision.
    #[inline]
    pub fn version(&self) -> Version {
        self.version
    }

    /// True when CURVE seals the frames.
    #[inline]
    pub fn is_sealed(&self) -> bool {
        self.cipher.is_some()
    }

    /// True when no multi-part message is half-encoded.
    #[inline]
    pub fn at_boundary(&self) -> bool {
        !self.out_mid
    }

    /// One read brought input (for the heartbeat's "nothing arrived").
    #[inline(always)]
    pub fn note_input(&mut self) {
        self.heartbeat.note_input();
    }

    /// True when the protocol has commands to send ([`DataPhase::flush_control`]).
    #[inline]
    pub fn has_control(&self) -> bool {
        !self.control.is_empty()
    }

    /// True when input noted a deadline that needs the time ([`DataPhase::start_clock`]).
    #[inline]
    pub fn needs_clock(&self) -> bool {
        self.heartbeat.needs_clock()
    }

    /// Gives noted deadlines their time: `now` is when their input was read, or just after.
    pub fn start_clock(&mut self, now: Instant) {
        self.heartbeat.start_clock(now);
    }

    /// The earliest deadline, if any.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.heartbeat.next_deadline()
    }

    /// Runs the deadlines due at `now`; `held`: input is held back by a full queue. A PING
    /// due is queued for [`DataPhase::flush_control`] unless a message is half-encoded (the
    /// next interval sends it), or, when the transport carries PINGs
    /// ([`HeartbeatConfig::by_transport`]), noted for [`DataPhase::take_transport_ping`]. An
    /// error says the connection is dead.
    pub fn expire(&mut self, now: Instant, held: bool) -> Result<(), Expired> {
        if self.heartbeat.expire(now, held)? {
            if self.heartbeat.by_transport() {
                self.transport_ping = true;
            } else if !self.out_mid {
                let ttl = self.heartbeat.ttl_ds();
                self.control.push(Command::Ping { ttl, context: bytes::Bytes::new() });
            }
        }
        Ok(())
    }

    /// Whether a PING is due as the transport's keepalive (once per PING).
    pub fn take_transport_ping(&mut self) -> bool {
        std::mem::take(&mut self.transport_ping)
    }

    /// Stops our PINGs (the connection is closing and writes nothing more).
    pub fn stop_pinging(&mut self) {
        self.heartbeat.stop_pinging();
    }

    /// Appends the protocol's pending commands to `out`, if no message is half-encoded.
    pub fn flush_control(&mut self, out: &mut Vec<u8>) {
        if self.out_mid || self.control.is_empty() {
            return;
        }
        for cmd in std::mem::take(&mut self.control) {
            self.encode_command(&cmd, out);
        }
    }
}

#[cfg(test)]
mod tests;
