//! ZMTP frames: a flags byte, a 1- or 8-byte big-endian length, and a body.
//!
//! This is the hot path. Header parsing never allocates; [`FrameDecoder`]
//! splits complete bodies off the caller's receive buffer so message bodies
//! share its allocation, and it never reserves memory itself: a header that
//! announces an enormous body only makes the decoder wait for bytes that the
//! caller chooses (and bounds) to read. The caller can ask
//! [`FrameDecoder::bytes_needed`] how much is still missing and reserve
//! `min(needed, read_chunk)`.

use bytes::{Buf, Bytes, BytesMut};

use crate::error::FrameError;
use crate::legacy;
use crate::version::Version;

/// More frames of the same message follow.
pub const FLAG_MORE: u8 = 0x01;
/// The length field is 8 bytes rather than 1.
pub const FLAG_LONG: u8 = 0x02;
/// The frame is a command, not a message frame.
pub const FLAG_COMMAND: u8 = 0x04;

const KNOWN_FLAGS: u8 = FLAG_MORE | FLAG_LONG | FLAG_COMMAND;

/// Header length of a frame whose body fits the 1-byte length.
pub const SHORT_HEADER_LEN: usize = 2;
/// Header length of a frame with an 8-byte length.
pub const LONG_HEADER_LEN: usize = 9;

/// A parsed frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// MORE flag: further frames of this message follow.
    pub more: bool,
    /// COMMAND flag.
    pub command: bool,
    /// 2 for a short header, 9 for a long one.
    pub header_len: usize,
    /// Length of the body that follows the header.
    pub body_len: u64,
}

/// Parses a frame header from the start of `buf`.
///
/// `Ok(None)` means more bytes are needed. The flags byte is checked as soon
/// as it is present, so a bad header is reported before its length arrives.
/// Rejects reserved flag bits, COMMAND together with MORE, a long length above
/// 2^63-1 and (when `max_body` is set) a body above the maximum. A long header
/// announcing 255 bytes or fewer is accepted, as libzmq accepts it.
pub fn parse_header(buf: &[u8], max_body: Option<u64>) -> Result<Option<FrameHeader>, FrameError> {
    parse_header_masked(buf, max_body, !KNOWN_FLAGS)
}

/// [`parse_header`] refusing the flag bits in `reserved` (ZMTP 2.0 also refuses COMMAND).
#[inline(always)]
fn parse_header_masked(buf: &[u8], max_body: Option<u64>, reserved: u8) -> Result<Option<FrameHeader>, FrameError> {
    let Some(&flags) = buf.first() else {
        return Ok(None);
    };
    if flags & reserved != 0 {
        return Err(FrameError::ReservedFlags { flags });
    }
    let more = flags & FLAG_MORE != 0;
    let command = flags & FLAG_COMMAND != 0;
    if more && command {
        return Err(FrameError::CommandWithMore);
    }
    let (header_len, body_len) = if flags & FLAG_LONG != 0 {
        let Some(len_bytes) = buf.get(1..LONG_HEADER_LEN) else {
            return Ok(None);
        };
        let mut be = [0u8; 8];
        be.copy_from_slice(len_bytes);
        let len = u64::from_be_bytes(be);
        if len > i64::MAX as u64 {
            return Err(FrameError::LengthOverflow { len });
        }
        (LONG_HEADER_LEN, len)
    } else {
        let Some(&len) = buf.get(1) else {
            return Ok(None);
        };
        (SHORT_HEADER_LEN, u64::from(len))
    };
    if let Some(max) = max_body {
        if body_len > max {
            return Err(FrameError::TooLarge { len: body_len, max });
        }
    }
    Ok(Some(FrameHeader { more, command, header_len, body_len }))
}

/// Parses a frame header of revision `version`: [`parse_header`] for 3.x, the
/// same refusing the COMMAND bit for 2.0 ([`legacy::parse_header_v2`]), and
/// [`legacy::parse_header_v1`] for 1.0. 2.0 and 3.x share one parser whose
/// reserved-bit mask is picked without a branch; 1.0 costs one predictable
/// branch (the revision never changes on a connection). So a legacy
/// connection's frame loop costs what a 3.x one does.
#[inline(always)]
pub fn parse_header_for(version: Version, buf: &[u8], max_body: Option<u64>) -> Result<Option<FrameHeader>, FrameError> {
    if version == Version::V1_0 {
        return legacy::parse_header_v1(buf, max_body);
    }
    let reserved = if version == Version::V2_0 { !(FLAG_MORE | FLAG_LONG) } else { !KNOWN_FLAGS };
    parse_header_masked(buf, max_body, reserved)
}

/// Appends the header of a message (not command) frame in `version`'s format:
/// 2.0 and 3.x share theirs; 1.0 puts the length (flags octet included) first.
#[inline]
pub fn encode_message_header(version: Version, body_len: usize, more: bool, out: &mut Vec<u8>) {
    let mut hdr = [0u8; legacy::MAX_HEADER_LEN];
    let n = write_message_header(version, body_len, more, &mut hdr);
    out.extend_from_slice(&hdr[..n]);
}

/// Writes the header of a message frame in `version`'s format at the start of `out` and
/// returns its length. The array is of fixed size so that an encoder can copy all of it in
/// one go and keep the first bytes (no length-dependent copy for a header).
#[inline]
pub fn write_message_header(version: Version, body_len: usize, more: bool, out: &mut [u8; legacy::MAX_HEADER_LEN]) -> usize {
    if version == Version::V1_0 {
        return legacy::write_header_v1(body_len, more, out);
    }
    put_header(body_len, more, false, out)
}

/// Appends a complete message frame in `version`'s format.
pub fn encode_frame_for(version: Version, body: &[u8], more: bool, out: &mut Vec<u8>) {
    out.reserve(legacy::MAX_HEADER_LEN + body.len());
    encode_message_header(version, body.len(), more, out);
    out.extend_from_slice(body);
}

fn flags_for(body_len: usize, more: bool, command: bool) -> (u8, bool) {
    let long = body_len > 255;
    let mut flags = 0;
    if more {
        flags |= FLAG_MORE;
    }
    if long {
        flags |= FLAG_LONG;
    }
    if command {
        flags |= FLAG_COMMAND;
    }
    (flags, long)
}

/// Appends a frame header: 2 bytes for bodies up to 255 bytes, else 9.
pub fn encode_header(body_len: usize, more: bool, command: bool, out: &mut Vec<u8>) {
    let mut hdr = [0u8; LONG_HEADER_LEN];
    let n = write_header(body_len, more, command, &mut hdr);
    out.extend_from_slice(&hdr[..n]);
}

/// Writes a frame header into a fixed array (for vectored writes) and
/// returns its length (2 or 9).
pub fn write_header(body_len: usize, more: bool, command: bool, out: &mut [u8; 9]) -> usize {
    put_header(body_len, more, command, out)
}

/// The 2.0/3.x frame header written at the start of `out` (at least 9 bytes); its length.
#[inline(always)]
fn put_header(body_len: usize, more: bool, command: bool, out: &mut [u8]) -> usize {
    let (flags, long) = flags_for(body_len, more, command);
    out[0] = flags;
    if long {
        out[1..9].copy_from_slice(&(body_len as u64).to_be_bytes());
        LONG_HEADER_LEN
    } else {
        out[1] = body_len as u8;
        SHORT_HEADER_LEN
    }
}

/// Appends a complete frame: header then body.
pub fn encode_frame(body: &[u8], more: bool, command: bool, out: &mut Vec<u8>) {
    out.reserve(LONG_HEADER_LEN + body.len());
    encode_header(body.len(), more, command, out);
    out.extend_from_slice(body);
}

/// A decoded frame; the body shares the receive buffer's allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// MORE flag.
    pub more: bool,
    /// COMMAND flag.
    pub command: bool,
    /// The frame body.
    pub body: Bytes,
}

impl Frame {
    /// Appends this frame's wire encoding (3.x).
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_frame(&self.body, self.more, self.command, out);
    }

    /// Appends this frame's encoding in `version`'s format (a command frame
    /// has no pre-3.0 form: it is encoded as 3.x).
    pub fn encode_for(&self, version: Version, out: &mut Vec<u8>) {
        if self.command || !version.is_legacy() {
            self.encode(out)
        } else {
            encode_frame_for(version, &self.body, self.more, out)
        }
    }
}

/// Zero-copy frame decoder over a receive buffer, for one ZMTP revision.
#[derive(Clone, Debug)]
pub struct FrameDecoder {
    max_body: Option<u64>,
    version: Version,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder::new(None)
    }
}

impl FrameDecoder {
    /// A 3.x decoder refusing bodies larger than `max_body` (if set).
    pub fn new(max_body: Option<u64>) -> Self {
        FrameDecoder::for_version(Version::V3_1, max_body)
    }

    /// A decoder for frames of revision `version` (1.0, 2.0 or 3.x).
    pub fn for_version(version: Version, max_body: Option<u64>) -> Self {
        FrameDecoder { max_body, version }
    }

    /// The revision whose frames this decoder reads.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The configured maximum body size.
    pub fn max_body(&self) -> Option<u64> {
        self.max_body
    }

    /// Takes one complete frame off the front of `buf`, or returns `Ok(None)`
    /// and leaves `buf` untouched if the frame has not fully arrived.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let Some(hdr) = parse_header_for(self.version, buf, self.max_body)? else {
            return Ok(None);
        };
        // On targets where usize is narrower than the wire length, a body
        // that cannot be addressed can never be completed.
        let body_len =
            usize::try_from(hdr.body_len).map_err(|_| FrameError::TooLarge { len: hdr.body_len, max: usize::MAX as u64 })?;
        let available = buf.len() - hdr.header_len;
        if available < body_len {
            return Ok(None);
        }
        buf.advance(hdr.header_len);
        let body = buf.split_to(body_len).freeze();
        Ok(Some(Frame { more: hdr.more, command: hdr.command, body }))
    }

    /// How many more bytes `buf` needs before the next frame (or, while its
    /// header is incomplete, the next frame's header) can be decoded. Returns
    /// 0 when a frame is ready or the header is invalid (decode reports it).
    pub fn bytes_needed(&self, buf: &[u8]) -> u64 {
        match parse_header_for(self.version, buf, self.max_body) {
            Ok(Some(hdr)) => (hdr.header_len as u64 + hdr.body_len).saturating_sub(buf.len() as u64),
            Ok(None) => {
                let want = if self.version.is_legacy() {
                    legacy::header_need(self.version == Version::V1_0, buf)
                } else {
                    match buf.first() {
                        Some(f) if f & FLAG_LONG != 0 => LONG_HEADER_LEN,
                        _ => SHORT_HEADER_LEN,
                    }
                };
                want.saturating_sub(buf.len()) as u64
            }
            Err(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_headers_parse_back_in_every_revision() {
        for version in [Version::V1_0, Version::V2_0, Version::V3_0, Version::V3_1] {
            for len in [0usize, 1, 38, 253, 254, 255, 256, 70_000] {
                for more in [false, true] {
                    let mut hdr = [0xAAu8; legacy::MAX_HEADER_LEN];
                    let n = write_message_header(version, len, more, &mut hdr);
                    let mut appended = Vec::new();
                    encode_message_header(version, len, more, &mut appended);
                    assert_eq!(&hdr[..n], &appended[..], "{version:?} {len} {more}");
                    let h = parse_header_for(version, &hdr[..n], None).unwrap().unwrap();
                    assert_eq!((h.header_len, h.body_len, h.more, h.command), (n, len as u64, more, false));
                }
            }
        }
    }

    #[test]
    fn short_and_long_headers() {
        let mut out = Vec::new();
        encode_header(5, true, false, &mut out);
        assert_eq!(out, [0x01, 5]);
        out.clear();
        encode_header(255, false, true, &mut out);
        assert_eq!(out, [0x04, 255]);
        out.clear();
        encode_header(256, true, false, &mut out);
        assert_eq!(out, [0x03, 0, 0, 0, 0, 0, 0, 1, 0]);
        let mut arr = [0u8; 9];
        assert_eq!(write_header(300, false, true, &mut arr), 9);
        assert_eq!(arr, [0x06, 0, 0, 0, 0, 0, 0, 1, 44]);
        assert_eq!(write_header(0, false, false, &mut arr), 2);
        assert_eq!(&arr[..2], &[0, 0]);
    }

    #[test]
    fn parse_needs_more() {
        assert_eq!(parse_header(&[], None), Ok(None));
        assert_eq!(parse_header(&[0x00], None), Ok(None));
        assert_eq!(parse_header(&[0x02, 0, 0], None), Ok(None));
        assert_eq!(
            parse_header(&[0x01, 7], None),
            Ok(Some(FrameHeader { more: true, command: false, header_len: 2, body_len: 7 }))
        );
    }

    #[test]
    fn long_header_with_small_length_is_accepted() {
        assert_eq!(
            parse_header(&[0x02, 0, 0, 0, 0, 0, 0, 0, 3], None),
            Ok(Some(FrameHeader { more: false, command: false, header_len: 9, body_len: 3 }))
        );
    }

    #[test]
    fn header_errors() {
        for bit in 3..8 {
            let flags = 1u8 << bit;
            assert_eq!(parse_header(&[flags], None), Err(FrameError::ReservedFlags { flags }));
        }
        assert_eq!(parse_header(&[0x05], None), Err(FrameError::CommandWithMore));
        assert_eq!(parse_header(&[0x02, 0x80, 0, 0, 0, 0, 0, 0, 0], None), Err(FrameError::LengthOverflow { len: 1 << 63 }));
        assert_eq!(parse_header(&[0x00, 11], Some(10)), Err(FrameError::TooLarge { len: 11, max: 10 }));
        assert!(parse_header(&[0x00, 10], Some(10)).is_ok());
    }

    #[test]
    fn decoder_is_zero_copy_and_incremental() {
        let mut wire = Vec::new();
        encode_frame(b"hello", true, false, &mut wire);
        encode_frame(&[0x61; 300], false, false, &mut wire);
        let mut dec = FrameDecoder::new(None);
        let mut buf = BytesMut::new();
        let mut frames = Vec::new();
        for b in &wire {
            buf.extend_from_slice(&[*b]);
            while let Some(f) = dec.decode(&mut buf).unwrap() {
                frames.push(f);
            }
        }
        assert_eq!(frames.len(), 2);
        assert_eq!(&frames[0].body[..], b"hello");
        assert!(frames[0].more);
        assert_eq!(frames[1].body.len(), 300);
        assert!(buf.is_empty());

        // Bodies point into the receive buffer rather than fresh copies.
        let mut buf = BytesMut::from(&wire[..]);
        let base = buf.as_ptr() as usize;
        let f = dec.decode(&mut buf).unwrap().unwrap();
        assert_eq!(f.body.as_ptr() as usize, base + 2);
    }

    #[test]
    fn huge_announcement_does_not_allocate() {
        let mut buf = BytesMut::from(&[0x02u8, 0x40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3][..]);
        let cap = buf.capacity();
        let mut dec = FrameDecoder::new(None);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert_eq!(buf.capacity(), cap);
        assert_eq!(dec.bytes_needed(&buf), (1u64 << 62) + 9 - 12);
        let mut dec = FrameDecoder::new(Some(1024));
        assert_eq!(dec.decode(&mut buf), Err(FrameError::TooLarge { len: 1 << 62, max: 1024 }));
    }

    #[test]
    fn bytes_needed_for_partial_headers() {
        let dec = FrameDecoder::new(None);
        assert_eq!(dec.bytes_needed(&[]), 2);
        assert_eq!(dec.bytes_needed(&[0x02]), 8);
        assert_eq!(dec.bytes_needed(&[0x00, 3, 1]), 2);
        assert_eq!(dec.bytes_needed(&[0xff]), 0);
    }
}
