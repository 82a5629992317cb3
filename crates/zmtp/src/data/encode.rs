//! Data-phase output: frames appended to the caller's send buffer.
//!
//! The common frames cost one append: a short body is copied with its header in one
//! fixed-size copy ([`DataPhase::encode_short`]), and a large body is not copied at all: only
//! its header is appended ([`DataPhase::encode_header_only`]) and the caller writes the body
//! from its own memory right after it. CURVE seals every frame into a MESSAGE, and a SUB's
//! subscription messages become SUBSCRIBE/CANCEL commands for 3.1 peers; both take the
//! general path, out of line.

use super::DataPhase;
use crate::command::{encode_subscription, Command};
use crate::frame::{encode_frame, encode_message_header, write_message_header};
use crate::legacy::MAX_HEADER_LEN;
use crate::version::Version;

/// The two header bytes of a frame whose body is at most 253 bytes (so every revision has a
/// two-byte header for it): flags then length for 2.0 and 3.x; length (counting the flags
/// octet) then flags for 1.0.
#[inline(always)]
pub fn short_header(version: Version, more: bool, len: u8) -> [u8; 2] {
    if version == Version::V1_0 {
        [len + 1, more as u8]
    } else {
        [more as u8, len]
    }
}

impl DataPhase {
    /// Appends one message frame.
    #[inline(always)]
    pub fn encode_frame(&mut self, out: &mut Vec<u8>, more: bool, body: &[u8]) {
        if self.cipher.is_some() || self.subscriptions {
            return self.encode_general(out, more, body);
        }
        self.out_mid = more;
        let mut hdr = [0u8; MAX_HEADER_LEN];
        let n = write_message_header(self.version, body.len(), more, &mut hdr);
        super::out::append_header_body(out, &hdr, n, body);
    }

    /// Appends one message frame whose body is the first `len` bytes of `window`, with one
    /// fixed-size copy of the whole window (`len <= N <= 253`).
    #[inline(always)]
    pub fn encode_short<const N: usize>(&mut self, out: &mut Vec<u8>, more: bool, len: usize, window: &[u8; N]) {
        debug_assert!(len <= N && N <= 253);
        if !self.plain_shorts {
            return self.encode_short_other(out, more, len, window);
        }
        self.out_mid = more;
        super::out::append_fixed(out, &[more as u8, len as u8], window, 2 + len);
    }

    /// [`DataPhase::encode_short`] when the plain path does not apply: a sealed or
    /// subscription-tracking phase takes the general path, a ZMTP 1.0 one its own header.
    #[inline(never)]
    fn encode_short_other<const N: usize>(&mut self, out: &mut Vec<u8>, more: bool, len: usize, window: &[u8; N]) {
        if self.cipher.is_some() || self.subscriptions {
            return self.encode_general(out, more, &window[..len.min(N)]);
        }
        self.out_mid = more;
        super::out::append_fixed(out, &short_header(self.version, more, len as u8), window, 2 + len);
    }

    /// Appends only the header of a message frame of `len` bytes, whose body the caller
    /// writes from its own memory right after it. False (nothing appended) when the body must
    /// go through [`DataPhase::encode_frame`] instead: CURVE seals it, or it is a subscription.
    #[inline]
    pub fn encode_header_only(&mut self, out: &mut Vec<u8>, more: bool, len: usize, first: Option<u8>) -> bool {
        if self.cipher.is_some() || (self.subscriptions && self.is_subscription(more, first)) {
            return false;
        }
        self.out_mid = more;
        encode_message_header(self.version, len, more, out);
        true
    }

    /// Appends a command frame given by its body (name length, name, data): DISH's JOIN and
    /// LEAVE. ZMTP 1.0 and 2.0 have no commands: nothing is sent to those peers.
    pub fn encode_command_body(&mut self, out: &mut Vec<u8>, body: &[u8]) {
        if self.version.is_legacy() {
            return;
        }
        self.put(out, false, true, body);
    }

    /// Appends a command as the negotiated revision carries it: SUBSCRIBE and CANCEL as
    /// subscription messages below 3.1; any other command not at all to 1.0 and 2.0 peers.
    pub fn encode_command_for(&mut self, cmd: &Command, out: &mut Vec<u8>) {
        match cmd {
            Command::Subscribe(topic) | Command::Cancel(topic) if self.version < Version::V3_1 => {
                let mut body = Vec::with_capacity(1 + topic.len());
                body.push(matches!(cmd, Command::Subscribe(_)) as u8);
                body.extend_from_slice(topic);
                self.out_mid = false;
                self.put(out, false, false, &body);
            }
            _ => self.encode_command(cmd, out),
        }
    }

    /// Appends a command (PING, PONG, ...): nothing for 1.0 and 2.0 peers.
    pub(super) fn encode_command(&mut self, cmd: &Command, out: &mut Vec<u8>) {
        if self.version.is_legacy() {
            return;
        }
        let mut body = Vec::new();
        cmd.encode_body(&mut body);
        self.put(out, false, true, &body);
    }

    /// A one-frame message starting 0x01 or 0x00, at a message boundary, to a 3.1 peer: a
    /// subscription, sent as a command.
    #[inline]
    fn is_subscription(&self, more: bool, first: Option<u8>) -> bool {
        !self.out_mid && !more && self.version >= Version::V3_1 && matches!(first, Some(0) | Some(1))
    }

    /// The general path: subscriptions as commands, CURVE's sealing.
    #[cold]
    #[inline(never)]
    fn encode_general(&mut self, out: &mut Vec<u8>, more: bool, body: &[u8]) {
        if self.subscriptions && self.is_subscription(more, body.first().copied()) {
            if self.cipher.is_none() {
                return encode_subscription(self.version, body[0] == 1, &body[1..], out);
            }
            let name: &[u8] = if body[0] == 1 { b"\x09SUBSCRIBE" } else { b"\x06CANCEL" };
            let mut cmd = Vec::with_capacity(name.len() + body.len() - 1);
            cmd.extend_from_slice(name);
            cmd.extend_from_slice(&body[1..]);
            return self.put(out, false, true, &cmd);
        }
        self.out_mid = more;
        self.put(out, more, false, body);
    }

    /// One frame as it goes on the wire: sealed under CURVE, else framed for the revision.
    fn put(&mut self, out: &mut Vec<u8>, more: bool, command: bool, body: &[u8]) {
        match &mut self.cipher {
            Some(cipher) => {
                // `seal` fails only once 2^64 frames have been sent (the nonce would repeat):
                // the connection then fails at its next input.
                if let Err(e) = cipher.seal(more, command, body, out) {
                    self.send_error.get_or_insert(e);
                }
            }
            None if command => encode_frame(body, false, true, out),
            None => {
                encode_message_header(self.version, body.len(), more, out);
                out.extend_from_slice(body);
            }
        }
    }
}
