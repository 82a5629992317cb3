//! ZMTP 1.0 (RFC 13) and 2.0 (RFC 15): the pre-3.0 wire formats, spoken to
//! peers that announce them (libzmq 2.x and 3.x, JeroMQ 0.3, netty-zmtp).
//!
//! How a peer is recognised is the handshake's business ([`crate::handshake`],
//! following libzmq's `zmtp_engine.cpp`): we always send the 10-byte signature
//! `FF <routing-id length + 1 as 8 bytes> 7F` first, which a 1.0 peer reads as
//! the long header of our identity frame (flags `7F`). A peer whose first byte
//! is not `FF`, or whose byte 9 lacks bit 0, is 1.0 without a signature; a
//! peer with a signature whose revision byte is 0 is 1.0, 1 is 2.0 (both then
//! send a socket-type byte, in libzmq's numbering); 2 and above is 3.x.
//!
//! This module holds what differs on the wire:
//!
//! * 1.0 frames: a length that counts the flags octet (1 octet, or `FF` and 8
//!   octets), then flags (bit 0: MORE), then the body;
//! * 2.0 frames: flags (bit 0: MORE, bit 1: LONG), a 1- or 8-octet length, the
//!   body; the same layout as 3.x without the COMMAND bit;
//! * the 2.0 greeting (12 bytes: signature, revision 1, socket type) and the
//!   socket-type numbering (PAIR 0, PUB 1, SUB 2, REQ 3, REP 4, DEALER 5,
//!   ROUTER 6, PULL 7, PUSH 8, XPUB 9, XSUB 10).
//!
//! Header parsing is the same work as for 3.x (a flags test, a 1- or 8-byte
//! length): the engine's frame loop picks the parser by revision once per
//! frame ([`crate::frame::parse_header_for`]) and never allocates. Reserved
//! flag bits are refused, as for 3.x: RFC 13 and 15 say they MUST be zero.

use crate::error::{FrameError, HandshakeError};
use crate::frame::{FrameHeader, FLAG_LONG, FLAG_MORE, LONG_HEADER_LEN, SHORT_HEADER_LEN};
use crate::greeting::SIGNATURE_LEN;
use crate::socket_type::SocketType;

/// Header length of a 1.0 frame with a 1-octet length (length, flags).
pub const V1_SHORT_HEADER_LEN: usize = 2;
/// Header length of a 1.0 frame with an 8-octet length (`FF`, length, flags).
pub const V1_LONG_HEADER_LEN: usize = 10;
/// The longest header of any revision.
pub const MAX_HEADER_LEN: usize = V1_LONG_HEADER_LEN;
/// Length of a 2.0 greeting: signature, revision, socket type.
pub const V2_GREETING_LEN: usize = 12;
/// The revision byte of a 2.0 greeting.
pub const V2_REVISION: u8 = 1;
/// The revision byte of a 1.0 peer that sends a signature (libzmq 3.0/3.1).
pub const V1_REVISION: u8 = 0;

/// Parses a ZMTP 1.0 frame header from the start of `buf` (`Ok(None)`: more
/// bytes needed). The length counts the flags octet, so it is at least 1; a
/// long length (`FF` + 8 octets) of 254 or less is accepted, as libzmq
/// accepts it. Only MORE may be set in the flags.
#[inline]
pub fn parse_header_v1(buf: &[u8], max_body: Option<u64>) -> Result<Option<FrameHeader>, FrameError> {
    let Some(&first) = buf.first() else {
        return Ok(None);
    };
    let (header_len, len) = if first == 0xFF {
        let Some(len_bytes) = buf.get(1..9) else {
            return Ok(None);
        };
        let mut be = [0u8; 8];
        be.copy_from_slice(len_bytes);
        let len = u64::from_be_bytes(be);
        if len > i64::MAX as u64 {
            return Err(FrameError::LengthOverflow { len });
        }
        (V1_LONG_HEADER_LEN, len)
    } else {
        (V1_SHORT_HEADER_LEN, u64::from(first))
    };
    if len == 0 {
        return Err(FrameError::ZeroLength);
    }
    let body_len = len - 1;
    if let Some(max) = max_body {
        if body_len > max {
            return Err(FrameError::TooLarge { len: body_len, max });
        }
    }
    let Some(&flags) = buf.get(header_len - 1) else {
        return Ok(None);
    };
    if flags & !FLAG_MORE != 0 {
        return Err(FrameError::ReservedFlags { flags });
    }
    Ok(Some(FrameHeader { more: flags & FLAG_MORE != 0, command: false, header_len, body_len }))
}

/// Parses a ZMTP 2.0 frame header: the 3.x layout, but only MORE and LONG
/// may be set (2.0 has no commands).
#[inline]
pub fn parse_header_v2(buf: &[u8], max_body: Option<u64>) -> Result<Option<FrameHeader>, FrameError> {
    match buf.first() {
        Some(&flags) if flags & !(FLAG_MORE | FLAG_LONG) != 0 => Err(FrameError::ReservedFlags { flags }),
        _ => crate::frame::parse_header(buf, max_body),
    }
}

/// Writes a ZMTP 1.0 frame header for a body of `body_len` bytes and returns
/// its length (2, or 10 once the length with its flags octet reaches 255).
#[inline]
pub fn write_header_v1(body_len: usize, more: bool, out: &mut [u8; MAX_HEADER_LEN]) -> usize {
    let len = body_len as u64 + 1;
    if len < 0xFF {
        out[0] = len as u8;
        out[1] = u8::from(more);
        V1_SHORT_HEADER_LEN
    } else {
        out[0] = 0xFF;
        out[1..9].copy_from_slice(&len.to_be_bytes());
        out[9] = u8::from(more);
        V1_LONG_HEADER_LEN
    }
}

/// How many bytes of `buf` a header of revision 1.0 or 2.0 needs before it can
/// be parsed: never more than the smallest frame that starts this way, so a
/// reader gathering a single frame never takes bytes of the next one.
pub fn header_need(v1: bool, buf: &[u8]) -> usize {
    match (v1, buf.first()) {
        (true, Some(0xFF)) => V1_LONG_HEADER_LEN,
        (true, _) => V1_SHORT_HEADER_LEN,
        (false, Some(f)) if f & FLAG_LONG != 0 => LONG_HEADER_LEN,
        (false, _) => SHORT_HEADER_LEN,
    }
}

/// The socket type with ZMTP 2.0 number `n` (libzmq's numbering; types after
/// XSUB did not exist in 2.0).
pub fn socket_type_from_v2(n: u8) -> Option<SocketType> {
    SocketType::ALL.get(usize::from(n)).copied().filter(|t| v2_number(*t).is_some())
}

/// The ZMTP 2.0 number of `t`, or `None` for the types added after 2.0.
pub fn v2_number(t: SocketType) -> Option<u8> {
    libzmq_number(t).filter(|&n| n <= 10)
}

/// libzmq's `ZMQ_*` number of `t` (what libzmq sends as its socket-type byte
/// to a 1.0/2.0 peer, whatever its type).
pub fn libzmq_number(t: SocketType) -> Option<u8> {
    SocketType::ALL.iter().position(|&x| x == t).map(|n| n as u8)
}

/// The 12-byte greeting of a ZMTP 2.0 peer: signature, revision 1, socket type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GreetingV2 {
    /// The 8 padding bytes of the signature (libzmq: routing-id length + 1).
    pub padding: [u8; 8],
    /// The peer's socket type.
    pub socket_type: SocketType,
}

impl GreetingV2 {
    /// A 2.0 greeting for `socket_type` with libzmq's padding.
    pub fn new(socket_type: SocketType, routing_id_len: usize) -> GreetingV2 {
        GreetingV2 { padding: (routing_id_len as u64 + 1).to_be_bytes(), socket_type }
    }

    /// The 12 bytes on the wire. A type with no 2.0 number (a draft type) is
    /// written with its libzmq number, as libzmq writes it.
    pub fn to_bytes(&self) -> [u8; V2_GREETING_LEN] {
        let mut g = [0u8; V2_GREETING_LEN];
        g[0] = 0xFF;
        g[1..9].copy_from_slice(&self.padding);
        g[9] = 0x7F;
        g[SIGNATURE_LEN] = V2_REVISION;
        g[SIGNATURE_LEN + 1] = libzmq_number(self.socket_type).unwrap_or(u8::MAX);
        g
    }

    /// Parses a 2.0 greeting: the signature, revision 1 and a socket type
    /// that 2.0 knows.
    pub fn parse(g: &[u8; V2_GREETING_LEN]) -> Result<GreetingV2, HandshakeError> {
        if g[0] != 0xFF || g[9] != 0x7F {
            return Err(HandshakeError::BadSignature);
        }
        if g[SIGNATURE_LEN] != V2_REVISION {
            return Err(HandshakeError::UnexpectedRevision { revision: g[SIGNATURE_LEN] });
        }
        let socket_type = socket_type_from_v2(g[SIGNATURE_LEN + 1]).ok_or(HandshakeError::UnknownSocketType)?;
        let mut padding = [0u8; 8];
        padding.copy_from_slice(&g[1..9]);
        Ok(GreetingV2 { padding, socket_type })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(more: bool, header_len: usize, body_len: u64) -> Option<FrameHeader> {
        Some(FrameHeader { more, command: false, header_len, body_len })
    }

    #[test]
    fn v1_headers() {
        assert_eq!(parse_header_v1(&[], None), Ok(None));
        assert_eq!(parse_header_v1(&[6], None), Ok(None));
        assert_eq!(parse_header_v1(&[6, 1], None), Ok(hdr(true, 2, 5)));
        assert_eq!(parse_header_v1(&[1, 0], None), Ok(hdr(false, 2, 0)));
        assert_eq!(parse_header_v1(&[0], None), Err(FrameError::ZeroLength));
        assert_eq!(parse_header_v1(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 0], None), Err(FrameError::ZeroLength));
        assert_eq!(parse_header_v1(&[0xFF, 0, 0, 0, 0, 0, 0, 1], None), Ok(None));
        assert_eq!(parse_header_v1(&[0xFF, 0, 0, 0, 0, 0, 0, 1, 0x2d], None), Ok(None));
        assert_eq!(parse_header_v1(&[0xFF, 0, 0, 0, 0, 0, 0, 1, 0x2d, 0], None), Ok(hdr(false, 10, 300)));
        // A long length for a short body is accepted (libzmq does).
        assert_eq!(parse_header_v1(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 4, 0], None), Ok(hdr(false, 10, 3)));
        assert_eq!(parse_header_v1(&[3, 2], None), Err(FrameError::ReservedFlags { flags: 2 }));
        assert_eq!(parse_header_v1(&[0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0], None), Err(FrameError::LengthOverflow { len: 1 << 63 }));
        // The size limit is judged as soon as the length is known.
        assert_eq!(parse_header_v1(&[12], Some(10)), Err(FrameError::TooLarge { len: 11, max: 10 }));
        assert_eq!(parse_header_v1(&[11, 0], Some(10)), Ok(hdr(false, 2, 10)));
    }

    #[test]
    fn v1_write_round_trips() {
        for (len, more) in [(0, false), (5, true), (253, false), (254, true), (300, false), (70_000, true)] {
            let mut h = [0u8; MAX_HEADER_LEN];
            let n = write_header_v1(len, more, &mut h);
            assert_eq!(n, if len < 254 { 2 } else { 10 });
            assert_eq!(parse_header_v1(&h[..n], None), Ok(hdr(more, n, len as u64)));
            assert_eq!(header_need(true, &h[..1]), n);
        }
    }

    #[test]
    fn v2_headers() {
        assert_eq!(parse_header_v2(&[1, 5], None), Ok(hdr(true, 2, 5)));
        assert_eq!(parse_header_v2(&[0x04, 0], None), Err(FrameError::ReservedFlags { flags: 4 }));
        assert_eq!(parse_header_v2(&[0x80], None), Err(FrameError::ReservedFlags { flags: 0x80 }));
        assert_eq!(parse_header_v2(&[2, 0, 0, 0, 0, 0, 0, 1, 0x2c], None), Ok(hdr(false, 9, 300)));
        assert_eq!(header_need(false, &[2]), 9);
        assert_eq!(header_need(false, &[]), 2);
    }

    #[test]
    fn v2_numbers() {
        for (n, t) in SocketType::ALL.iter().enumerate().take(11) {
            assert_eq!(v2_number(*t), Some(n as u8));
            assert_eq!(socket_type_from_v2(n as u8), Some(*t));
        }
        assert_eq!(socket_type_from_v2(11), None);
        assert_eq!(v2_number(SocketType::Client), None);
        assert_eq!(libzmq_number(SocketType::Client), Some(13));
    }

    #[test]
    fn v2_greeting() {
        let g = GreetingV2::new(SocketType::Dealer, 0);
        let b = g.to_bytes();
        assert_eq!(b, [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1, 5]);
        assert_eq!(GreetingV2::parse(&b), Ok(g));
        let mut bad = b;
        bad[11] = 11;
        assert_eq!(GreetingV2::parse(&bad), Err(HandshakeError::UnknownSocketType));
        bad = b;
        bad[10] = 3;
        assert_eq!(GreetingV2::parse(&bad), Err(HandshakeError::UnexpectedRevision { revision: 3 }));
        bad = b;
        bad[9] = 0x7E;
        assert_eq!(GreetingV2::parse(&bad), Err(HandshakeError::BadSignature));
    }
}
