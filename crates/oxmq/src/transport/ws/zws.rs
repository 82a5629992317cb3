//! ZMTP ⇄ ZWS 2.0: the translation that lets the engine's ZMTP codec run over a WebSocket.
//!
//! ZWS 2.0 (RFC 45) has no greeting: the mechanism is chosen in the HTTP upgrade, and each
//! ZMTP frame travels as one binary WebSocket message whose first byte is the frame's flags
//! (`0x01` MORE, `0x02` COMMAND). So the layer
//! * swallows the 64-byte greeting the engine writes, and hands the engine a ZMTP 3.0 greeting
//!   for the negotiated mechanism in the peer's name ([`greeting`]): 3.0, because libzmq's ws
//!   peers send subscriptions as `0x01`/`0x00` messages and know no PING/PONG commands;
//! * turns each ZMTP frame the engine writes into one WebSocket message ([`Outbound`]), and
//!   each WebSocket message read into one ZMTP frame ([`Inbound`]), streaming the bodies; a
//!   message the peer sent in fragments (RFC 6455 §5.4; browsers fragment large ones) is
//!   reassembled first, as its size is known only at its last fragment;
//! * for plain `ZWS2.0` (no mechanism, RFC 45's ZMTP/2-like mode), swallows the engine's
//!   NULL READY and sends its routing id as the first message, and turns the peer's first
//!   message into a READY for the engine (its Socket-Type the one our type pairs with: the
//!   mode carries no socket type).
//!
//! Sans-I/O: bytes in, bytes out.

use super::frame::{self, FrameError, Header, MaskSource};
use bytes::{Buf, BytesMut};

/// ZWS message flags.
const ZWS_MORE: u8 = 0x01;
const ZWS_COMMAND: u8 = 0x02;
/// ZMTP frame flags.
const ZMTP_MORE: u8 = 0x01;
const ZMTP_LONG: u8 = 0x02;
const ZMTP_COMMAND: u8 = 0x04;
/// A routing id is at most 255 bytes.
const MAX_ID: u64 = 255;
/// A READY the engine writes is small; more is no READY.
const MAX_READY: u64 = 64 * 1024;

/// Why the peer's bytes were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ZwsError {
    Frame(FrameError),
    /// A text frame (ZWS messages are binary).
    Text,
    /// A continuation frame with no fragmented message begun, or a new data message inside one.
    Fragmented,
    /// A fragmented message grew past the socket's MAXMSGSIZE.
    TooLarge,
    /// A binary message without its flags byte.
    Empty,
    /// Plain ZWS2.0's first message, the routing id, is over 255 bytes or has MORE.
    BadIdentity,
}

/// The greeting the engine reads in the peer's name: ZMTP 3.0, `mechanism`, and the as-server
/// flag opposite to ours.
pub(crate) fn greeting(mechanism: &[u8], we_serve: bool) -> [u8; 64] {
    zmtp::Greeting::new(zmtp::Version::V3_0, mechanism, !we_serve, 0).to_bytes()
}

/// Appends a ZMTP frame header.
fn zmtp_header(out: &mut Vec<u8>, flags: u8, size: u64) {
    if size > 255 {
        out.push(flags | ZMTP_LONG);
        out.extend_from_slice(&size.to_be_bytes());
    } else {
        out.push(flags);
        out.push(size as u8);
    }
}

/// The engine's ZMTP bytes into WebSocket messages.
pub(crate) struct Outbound {
    /// Bytes of the engine's greeting still to swallow.
    greeting_left: usize,
    hdr: [u8; 9],
    hdr_len: usize,
    body_left: u64,
    /// The current message's mask and the payload offset of the next body byte.
    mask: Option<[u8; 4]>,
    offset: u64,
    /// Clients mask what they send.
    masks: Option<MaskSource>,
    /// Plain ZWS2.0: the engine's READY is being read (Some) or still to come (`await_ready`).
    await_ready: bool,
    ready: Option<Vec<u8>>,
    /// Plain ZWS2.0: our socket type (set by the layer when the upgrade completes).
    pub(crate) our_type: Option<Vec<u8>>,
    /// A ping waits for the end of the frame being written.
    ping_pending: bool,
}

impl Outbound {
    pub(crate) fn new(client: bool, raw: bool) -> Outbound {
        Outbound {
            greeting_left: zmtp::greeting::GREETING_LEN,
            hdr: [0; 9],
            hdr_len: 0,
            body_left: 0,
            mask: None,
            offset: 0,
            masks: client.then(MaskSource::new),
            await_ready: raw,
            ready: None,
            our_type: None,
            ping_pending: false,
        }
    }

    /// Plain ZWS2.0 was negotiated: the engine's READY is not sent as such.
    pub(crate) fn set_raw(&mut self, raw: bool) {
        self.await_ready = raw;
    }

    /// A key for a control frame we send.
    pub(crate) fn control_mask(&mut self) -> Option<[u8; 4]> {
        self.masks.as_mut().map(MaskSource::next)
    }

    /// Sends a ping (the heartbeats'), at once if no frame is half-written, else after it.
    pub(crate) fn ping(&mut self, out: &mut Vec<u8>) {
        self.ping_pending = true;
        self.ping_at_boundary(out);
    }

    fn ping_at_boundary(&mut self, out: &mut Vec<u8>) {
        if self.ping_pending && self.greeting_left == 0 && self.body_left == 0 && self.hdr_len == 0 {
            self.ping_pending = false;
            let m = self.control_mask();
            frame::control(out, frame::OP_PING, b"", m);
        }
    }

    /// Translates all of `data` onto `out`.
    pub(crate) fn take(&mut self, mut data: &[u8], out: &mut Vec<u8>) {
        while !data.is_empty() {
            if self.ping_pending {
                self.ping_at_boundary(out);
            }
            if self.greeting_left > 0 {
                let n = self.greeting_left.min(data.len());
                self.greeting_left -= n;
                data = &data[n..];
            } else if self.body_left > 0 {
                let n = (self.body_left.min(data.len() as u64)) as usize;
                if let Some(r) = &mut self.ready {
                    r.extend_from_slice(&data[..n]);
                } else {
                    let at = out.len();
                    out.extend_from_slice(&data[..n]);
                    if let Some(m) = self.mask {
                        frame::apply_mask(&mut out[at..], m, self.offset);
                    }
                    self.offset += n as u64;
                }
                self.body_left -= n as u64;
                data = &data[n..];
                if self.body_left == 0 {
                    self.end_ready(out);
                }
            } else {
                // A header: as much of it as `data` holds, at once.
                let flags = if self.hdr_len == 0 { data[0] } else { self.hdr[0] };
                let need = if flags & ZMTP_LONG != 0 { 9 } else { 2 };
                let n = (need - self.hdr_len).min(data.len());
                self.hdr[self.hdr_len..self.hdr_len + n].copy_from_slice(&data[..n]);
                self.hdr_len += n;
                data = &data[n..];
                if self.hdr_len < need {
                    continue;
                }
                self.hdr_len = 0;
                let size = if need == 9 {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&self.hdr[1..9]);
                    u64::from_be_bytes(b)
                } else {
                    u64::from(self.hdr[1])
                };
                self.body_left = size;
                if self.await_ready && flags & ZMTP_COMMAND != 0 && size <= MAX_READY {
                    self.await_ready = false;
                    self.ready = Some(Vec::with_capacity(size as usize));
                    if size == 0 {
                        self.end_ready(out);
                    }
                    continue;
                }
                let zws = (flags & ZMTP_MORE) | if flags & ZMTP_COMMAND != 0 { ZWS_COMMAND } else { 0 };
                self.begin(out, zws, size);
            }
        }
        self.ping_at_boundary(out);
    }

    /// Starts a binary message of `size` body bytes after the flags byte `zws`.
    fn begin(&mut self, out: &mut Vec<u8>, zws: u8, size: u64) {
        self.mask = self.control_mask();
        frame::write_header(out, frame::OP_BINARY, size + 1, self.mask);
        out.push(zws ^ self.mask.map_or(0, |m| m[0]));
        self.offset = 1;
    }

    /// Plain ZWS2.0: our READY is in; its Identity goes out as our first message.
    fn end_ready(&mut self, out: &mut Vec<u8>) {
        let Some(body) = self.ready.take() else { return };
        let meta = match zmtp::Command::parse(&body) {
            Ok(zmtp::Command::Ready(m)) => m,
            _ => zmtp::Metadata::new(),
        };
        self.our_type = Some(meta.get("Socket-Type").unwrap_or(b"PAIR").to_vec());
        let id = meta.get("Identity").unwrap_or(b"").to_vec();
        self.begin(out, 0, id.len() as u64);
        let at = out.len();
        out.extend_from_slice(&id);
        if let Some(m) = self.mask {
            frame::apply_mask(&mut out[at..], m, 1);
        }
    }
}

/// What one step of [`Inbound::step`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Went on; call again.
    More,
    /// Needs more bytes from the wire (or room in the engine's buffer).
    Wait,
    /// The peer sent a close frame (answered already).
    Closed,
}

enum In {
    Header,
    Flags(Header),
    Body {
        left: u64,
        mask: Option<[u8; 4]>,
        offset: u64,
    },
    Control(Header),
    /// Plain ZWS2.0: the peer's first message, its routing id.
    Identity {
        left: u64,
        mask: Option<[u8; 4]>,
        offset: u64,
    },
    /// A fragment of a fragmented message, `fin` if it is the last.
    Fragment {
        left: u64,
        mask: Option<[u8; 4]>,
        offset: u64,
        fin: bool,
    },
}

/// WebSocket messages into ZMTP frames for the engine.
pub(crate) struct Inbound {
    /// Servers read masked frames; clients unmasked ones.
    masked: bool,
    state: In,
    /// Plain ZWS2.0: the peer's routing id is still to come (true), being read, or in.
    await_identity: bool,
    pub(crate) peer_identity: Option<Vec<u8>>,
    /// Pings and pongs read (input for the heartbeats, though the engine sees none of it).
    pub(crate) keepalives: u64,
    /// The payload of a fragmented message so far (unmasked), while one is being read.
    fragments: Option<Vec<u8>>,
    /// The largest message body accepted (MAXMSGSIZE), for a fragmented message's payload.
    max_message: Option<u64>,
}

impl Inbound {
    pub(crate) fn new(server: bool, raw: bool, max_message: Option<u64>) -> Inbound {
        Inbound {
            masked: server,
            state: In::Header,
            await_identity: raw,
            peer_identity: None,
            keepalives: 0,
            fragments: None,
            max_message,
        }
    }

    /// One step: parses from `wire`, writes ZMTP headers to `inject` and bodies to `engine`'s
    /// spare capacity (only when `inject` is empty), control replies to `reply`.
    pub(crate) fn step(
        &mut self,
        wire: &mut BytesMut,
        engine: &mut BytesMut,
        inject: &mut Vec<u8>,
        reply: &mut Vec<u8>,
        out: &mut Outbound,
    ) -> Result<Step, ZwsError> {
        match &mut self.state {
            In::Header => {
                let Some((h, n)) = frame::parse_header(wire, self.masked).map_err(ZwsError::Frame)? else {
                    return Ok(Step::Wait);
                };
                if self.whole_message(&h, n, wire, engine, inject) {
                    return Ok(Step::More);
                }
                wire.advance(n);
                let fragment = In::Fragment { left: h.len, mask: h.mask, offset: 0, fin: h.fin };
                self.state = match (h.opcode, self.fragments.as_mut()) {
                    _ if h.is_control() => In::Control(h),
                    (frame::OP_TEXT, _) => return Err(ZwsError::Text),
                    (frame::OP_BINARY, None) if h.fin => In::Flags(h),
                    (frame::OP_BINARY, None) => {
                        self.fragments = Some(Vec::new());
                        fragment
                    }
                    (frame::OP_CONTINUATION, Some(_)) => fragment,
                    _ => return Err(ZwsError::Fragmented),
                };
                if let (In::Fragment { left, .. }, Some(so_far)) = (&self.state, &self.fragments) {
                    // The payload is the flags byte and the body.
                    let max = self.max_message.map_or(u64::MAX, |m| m.saturating_add(1));
                    if (so_far.len() as u64).saturating_add(*left) > max {
                        return Err(ZwsError::TooLarge);
                    }
                }
                if matches!(self.state, In::Flags(_)) && h.len == 0 {
                    return Err(ZwsError::Empty);
                }
                Ok(Step::More)
            }
            In::Flags(h) => {
                let Some(&b) = wire.first() else { return Ok(Step::Wait) };
                wire.advance(1);
                let flags = b ^ h.mask.map_or(0, |m| m[0]);
                let (size, mask) = (h.len - 1, h.mask);
                if self.await_identity {
                    self.await_identity = false;
                    if flags & ZWS_MORE != 0 || size > MAX_ID {
                        return Err(ZwsError::BadIdentity);
                    }
                    self.peer_identity = None;
                    self.state = In::Identity { left: size, mask, offset: 1 };
                    inject.clear();
                    return Ok(Step::More);
                }
                let z = (flags & ZWS_MORE) | if flags & ZWS_COMMAND != 0 { ZMTP_COMMAND } else { 0 };
                zmtp_header(inject, z, size);
                self.state = In::Body { left: size, mask, offset: 1 };
                Ok(Step::More)
            }
            In::Body { left, mask, offset } => {
                if *left == 0 {
                    self.state = In::Header;
                    return Ok(Step::More);
                }
                let room = engine.capacity() - engine.len();
                let n = (*left).min(wire.len() as u64).min(room as u64) as usize;
                if n == 0 {
                    return Ok(Step::Wait);
                }
                let at = engine.len();
                engine.extend_from_slice(&wire[..n]);
                wire.advance(n);
                if let Some(m) = *mask {
                    frame::apply_mask(&mut engine[at..], m, *offset);
                }
                *left -= n as u64;
                *offset += n as u64;
                Ok(Step::More)
            }
            In::Identity { left, mask, offset } => {
                let n = (*left).min(wire.len() as u64) as usize;
                let id = self.peer_identity.get_or_insert_with(Vec::new);
                let at = id.len();
                id.extend_from_slice(&wire[..n]);
                wire.advance(n);
                if let Some(m) = *mask {
                    frame::apply_mask(&mut id[at..], m, *offset);
                }
                *left -= n as u64;
                *offset += n as u64;
                if *left > 0 {
                    return Ok(Step::Wait);
                }
                self.state = In::Header;
                let Some(ours) = &out.our_type else { return Err(ZwsError::BadIdentity) };
                let id = self.peer_identity.take().unwrap_or_default();
                ready_for(ours, &id, inject);
                Ok(Step::More)
            }
            In::Fragment { left, mask, offset, fin } => {
                let n = (*left).min(wire.len() as u64) as usize;
                let so_far = self.fragments.as_mut().expect("a fragment belongs to a begun message");
                let at = so_far.len();
                so_far.extend_from_slice(&wire[..n]);
                wire.advance(n);
                if let Some(m) = *mask {
                    frame::apply_mask(&mut so_far[at..], m, *offset);
                }
                *left -= n as u64;
                *offset += n as u64;
                if *left > 0 {
                    return Ok(Step::Wait);
                }
                if *fin {
                    let whole = self.fragments.take().unwrap_or_default();
                    put_back(wire, &whole, self.masked);
                }
                self.state = In::Header;
                Ok(Step::More)
            }
            In::Control(h) => {
                let len = h.len as usize;
                if wire.len() < len {
                    return Ok(Step::Wait);
                }
                let mut payload = wire.split_to(len).to_vec();
                if let Some(m) = h.mask {
                    frame::apply_mask(&mut payload, m, 0);
                }
                let opcode = h.opcode;
                self.state = In::Header;
                if opcode != frame::OP_CLOSE {
                    self.keepalives += 1;
                }
                match opcode {
                    frame::OP_PING => {
                        let m = out.control_mask();
                        frame::control(reply, frame::OP_PONG, &payload, m);
                        Ok(Step::More)
                    }
                    frame::OP_CLOSE => Ok(Step::Closed),
                    _ => Ok(Step::More), // a pong
                }
            }
        }
    }
}

impl Inbound {
    /// The common case in one step: a final binary message (header `h`, `n` bytes, parsed) is
    /// all in `wire` and fits in the engine's room: its ZMTP frame goes there directly. False
    /// (nothing done) otherwise: the states take it piece by piece.
    #[inline]
    fn whole_message(&self, h: &Header, n: usize, wire: &mut BytesMut, engine: &mut BytesMut, inject: &[u8]) -> bool {
        if h.opcode != frame::OP_BINARY
            || !h.fin
            || h.len == 0
            || self.await_identity
            || self.fragments.is_some()
            || !inject.is_empty()
        {
            return false;
        }
        let end = n as u64 + h.len;
        let size = h.len - 1;
        let head = if size > 255 { 9 } else { 2 };
        if (wire.len() as u64) < end || ((engine.capacity() - engine.len()) as u64) < head + size {
            return false;
        }
        let flags = wire[n] ^ h.mask.map_or(0, |m| m[0]);
        let z = (flags & ZWS_MORE) | if flags & ZWS_COMMAND != 0 { ZMTP_COMMAND } else { 0 };
        let mut hdr = [0u8; 9];
        if head == 9 {
            hdr[0] = z | ZMTP_LONG;
            hdr[1..].copy_from_slice(&size.to_be_bytes());
        } else {
            hdr[..2].copy_from_slice(&[z, size as u8]);
        }
        engine.extend_from_slice(&hdr[..head as usize]);
        let at = engine.len();
        engine.extend_from_slice(&wire[n + 1..end as usize]);
        if let Some(m) = h.mask {
            frame::apply_mask(&mut engine[at..], m, 1);
        }
        wire.advance(end as usize);
        true
    }
}

/// Puts a reassembled message back in front of `wire` as one final binary frame, so that it
/// takes the path every message takes (flags byte, routing id, body streaming). A server reads
/// only masked frames: the frame carries the zero mask, which changes no byte.
fn put_back(wire: &mut BytesMut, payload: &[u8], masked: bool) {
    let mut head = Vec::with_capacity(14);
    frame::write_header(&mut head, frame::OP_BINARY, payload.len() as u64, masked.then_some([0; 4]));
    let mut whole = BytesMut::with_capacity(head.len() + payload.len() + wire.len());
    whole.extend_from_slice(&head);
    whole.extend_from_slice(payload);
    whole.extend_from_slice(wire);
    *wire = whole;
}

/// The READY the engine reads for a plain ZWS2.0 peer: the socket type ours pairs with, and
/// the peer's routing id.
fn ready_for(ours: &[u8], id: &[u8], inject: &mut Vec<u8>) {
    let peer: &[u8] = match ours {
        b"PUB" | b"XPUB" => b"SUB",
        b"SUB" | b"XSUB" => b"PUB",
        b"REQ" => b"REP",
        b"REP" => b"REQ",
        b"ROUTER" | b"DEALER" => b"DEALER",
        b"PUSH" => b"PULL",
        b"PULL" => b"PUSH",
        b"CLIENT" => b"SERVER",
        b"SERVER" => b"CLIENT",
        b"RADIO" => b"DISH",
        b"DISH" => b"RADIO",
        b"SCATTER" => b"GATHER",
        b"GATHER" => b"SCATTER",
        other => other, // PAIR, CHANNEL, PEER
    };
    let mut meta = zmtp::Metadata::new();
    meta.insert("Socket-Type", bytes::Bytes::copy_from_slice(peer));
    if !id.is_empty() {
        meta.insert("Identity", bytes::Bytes::copy_from_slice(id));
    }
    let mut body = Vec::new();
    zmtp::Command::Ready(meta).encode_body(&mut body);
    zmtp_header(inject, ZMTP_COMMAND, body.len() as u64);
    inject.extend_from_slice(&body);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ZMTP frames in, WebSocket messages out, and back: the same frames.
    #[test]
    fn frames_survive_the_round_trip_in_both_roles() {
        for client in [true, false] {
            let mut zmtp_in = vec![0u8; 64]; // the engine's greeting, swallowed
            let frames: Vec<(u8, Vec<u8>)> =
                vec![(ZMTP_MORE, b"a".to_vec()), (0, vec![7; 300]), (ZMTP_COMMAND, b"\x04PING".to_vec()), (0, vec![])];
            for (f, body) in &frames {
                zmtp_header(&mut zmtp_in, *f, body.len() as u64);
                zmtp_in.extend_from_slice(body);
            }
            let mut out = Outbound::new(client, false);
            let mut wire = Vec::new();
            for b in zmtp_in.chunks(5) {
                out.take(b, &mut wire);
            }
            let mut inb = Inbound::new(client, false, None);
            let mut wire = BytesMut::from(&wire[..]);
            let mut engine = BytesMut::with_capacity(4096);
            let (mut inject, mut reply) = (Vec::new(), Vec::new());
            let mut other = Outbound::new(!client, false);
            loop {
                if !inject.is_empty() {
                    engine.extend_from_slice(&inject);
                    inject.clear();
                }
                match inb.step(&mut wire, &mut engine, &mut inject, &mut reply, &mut other).unwrap() {
                    Step::More => {}
                    _ => break,
                }
            }
            let mut expect = Vec::new();
            for (f, body) in &frames {
                zmtp_header(&mut expect, *f, body.len() as u64);
                expect.extend_from_slice(body);
            }
            assert_eq!(&engine[..], &expect[..], "client={client}");
        }
    }

    #[test]
    fn a_ping_is_answered_and_a_close_ends() {
        let mut wire = BytesMut::new();
        let mut v = Vec::new();
        frame::control(&mut v, frame::OP_PING, b"hi", Some([1, 2, 3, 4]));
        frame::control(&mut v, frame::OP_CLOSE, &1000u16.to_be_bytes(), Some([5, 6, 7, 8]));
        wire.extend_from_slice(&v);
        let mut inb = Inbound::new(true, false, None);
        let mut out = Outbound::new(false, false);
        let (mut engine, mut inject, mut reply) = (BytesMut::with_capacity(64), Vec::new(), Vec::new());
        assert_eq!(inb.step(&mut wire, &mut engine, &mut inject, &mut reply, &mut out), Ok(Step::More));
        assert_eq!(inb.step(&mut wire, &mut engine, &mut inject, &mut reply, &mut out), Ok(Step::More));
        assert_eq!(reply, [0x8A, 2, b'h', b'i'], "an unmasked pong from the server");
        assert_eq!(inb.step(&mut wire, &mut engine, &mut inject, &mut reply, &mut out), Ok(Step::More));
        assert_eq!(inb.step(&mut wire, &mut engine, &mut inject, &mut reply, &mut out), Ok(Step::Closed));
    }

    #[test]
    fn text_stray_continuations_and_empty_messages_are_refused() {
        let mut out = Outbound::new(false, false);
        for (bytes, err) in [
            (vec![0x81, 0x80, 0, 0, 0, 0], ZwsError::Text),
            (vec![0x80, 0x81, 0, 0, 0, 0, 0], ZwsError::Fragmented),
            (vec![0x02, 0x81, 0, 0, 0, 0, 0, 0x82, 0x81, 0, 0, 0, 0, 0], ZwsError::Fragmented),
            (vec![0x82, 0x80, 0, 0, 0, 0], ZwsError::Empty),
            (vec![0x82, 0x01, 0], ZwsError::Frame(FrameError::Masking)),
            (vec![0x09, 0x80, 0, 0, 0, 0], ZwsError::Frame(FrameError::BadControl)),
        ] {
            let mut inb = Inbound::new(true, false, None);
            let mut wire = BytesMut::from(&bytes[..]);
            let (mut engine, mut inject, mut reply) = (BytesMut::with_capacity(64), Vec::new(), Vec::new());
            let r = loop {
                match inb.step(&mut wire, &mut engine, &mut inject, &mut reply, &mut out) {
                    Ok(Step::More) => {}
                    other => break other,
                }
            };
            assert_eq!(r, Err(err), "{bytes:?}");
        }
    }

    /// Runs `inb` over `wire` until it waits: the ZMTP bytes the engine got, or the error.
    fn drain(inb: &mut Inbound, wire: &[u8]) -> Result<Vec<u8>, ZwsError> {
        drain_from(inb, &mut BytesMut::from(wire))
    }

    fn drain_from(inb: &mut Inbound, wire: &mut BytesMut) -> Result<Vec<u8>, ZwsError> {
        let mut engine = BytesMut::with_capacity(1 << 20);
        let (mut inject, mut reply, mut out) = (Vec::new(), Vec::new(), Outbound::new(false, false));
        loop {
            engine.extend_from_slice(&inject);
            inject.clear();
            match inb.step(wire, &mut engine, &mut inject, &mut reply, &mut out)? {
                Step::More => {}
                _ => return Ok(engine.to_vec()),
            }
        }
    }

    /// A masked client frame: `opcode`, FIN or not, `payload`.
    fn client_frame(out: &mut Vec<u8>, opcode: u8, fin: bool, payload: &[u8]) {
        let at = out.len();
        let key = [9, 8, 7, 6];
        frame::write_header(out, opcode, payload.len() as u64, Some(key));
        if !fin {
            out[at] &= 0x7F;
        }
        let body = out.len();
        out.extend_from_slice(payload);
        frame::apply_mask(&mut out[body..], key, 0);
    }

    #[test]
    fn a_fragmented_message_arrives_whole_with_a_ping_between_its_fragments() {
        let body: Vec<u8> = (0..70_000u32).map(|i| i as u8).collect();
        let mut payload = vec![ZWS_MORE];
        payload.extend_from_slice(&body);
        let mut wire = Vec::new();
        client_frame(&mut wire, frame::OP_BINARY, false, &payload[..10]);
        client_frame(&mut wire, frame::OP_CONTINUATION, false, &payload[10..40_000]);
        client_frame(&mut wire, frame::OP_PING, true, b"p");
        client_frame(&mut wire, frame::OP_CONTINUATION, false, &[]);
        client_frame(&mut wire, frame::OP_CONTINUATION, true, &payload[40_000..]);
        client_frame(&mut wire, frame::OP_BINARY, true, &[0, b'x']);
        let mut expect = Vec::new();
        zmtp_header(&mut expect, ZMTP_MORE, body.len() as u64);
        expect.extend_from_slice(&body);
        zmtp_header(&mut expect, 0, 1);
        expect.push(b'x');
        // Whole, and a byte at a time.
        assert_eq!(drain(&mut Inbound::new(true, false, None), &wire), Ok(expect.clone()));
        let mut inb = Inbound::new(true, false, None);
        let (mut got, mut kept) = (Vec::new(), BytesMut::new());
        for b in wire.chunks(1) {
            kept.extend_from_slice(b);
            got.extend(drain_from(&mut inb, &mut kept).unwrap());
        }
        assert_eq!(got, expect);
    }

    #[test]
    fn a_fragmented_message_over_maxmsgsize_is_refused_at_the_fragment_that_passes_it() {
        let mut wire = Vec::new();
        client_frame(&mut wire, frame::OP_BINARY, false, &[0; 60]);
        assert_eq!(drain(&mut Inbound::new(true, false, Some(100)), &wire).map(|v| v.len()), Ok(0));
        client_frame(&mut wire, frame::OP_CONTINUATION, true, &[0; 41]);
        assert_eq!(
            drain(&mut Inbound::new(true, false, Some(100)), &wire),
            Ok(vec![0, 100].into_iter().chain([0; 100]).collect())
        );
        assert_eq!(drain(&mut Inbound::new(true, false, Some(99)), &wire), Err(ZwsError::TooLarge));
    }
}
