//! WebSocket frames (RFC 6455 §5): the header, masking, and the control frames. Sans-I/O.
//!
//! A header is parsed only when all of it has arrived; a peer that breaks the rules (reserved
//! bits, a fragmented or oversized control frame, a mask on the wrong side) gets a typed error,
//! never a panic.

/// Opcodes.
pub(crate) const OP_CONTINUATION: u8 = 0x0;
pub(crate) const OP_TEXT: u8 = 0x1;
pub(crate) const OP_BINARY: u8 = 0x2;
pub(crate) const OP_CLOSE: u8 = 0x8;
pub(crate) const OP_PING: u8 = 0x9;
pub(crate) const OP_PONG: u8 = 0xA;

/// A control frame's payload is at most this long (RFC 6455 §5.5).
pub(crate) const MAX_CONTROL: u64 = 125;

/// Why a frame was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// RSV1-3 set (no extension was negotiated).
    Reserved,
    /// An opcode RFC 6455 does not define.
    UnknownOpcode(u8),
    /// A control frame with FIN clear or a payload over 125 bytes.
    BadControl,
    /// A frame from a client without a mask, or from a server with one.
    Masking,
    /// A 64-bit length with its top bit set.
    Length,
}

/// A parsed frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub fin: bool,
    pub opcode: u8,
    pub mask: Option<[u8; 4]>,
    pub len: u64,
}

impl Header {
    pub(crate) fn is_control(&self) -> bool {
        self.opcode & 0x8 != 0
    }
}

/// Parses the header at the start of `buf`: None until all of it is there, else the header and
/// its length. `masked`: frames must carry a mask (a server reading a client), or must not.
pub(crate) fn parse_header(buf: &[u8], masked: bool) -> Result<Option<(Header, usize)>, FrameError> {
    if buf.len() < 2 {
        return Ok(None);
    }
    let (b0, b1) = (buf[0], buf[1]);
    if b0 & 0x70 != 0 {
        return Err(FrameError::Reserved);
    }
    let fin = b0 & 0x80 != 0;
    let opcode = b0 & 0x0F;
    if !matches!(opcode, OP_CONTINUATION | OP_TEXT | OP_BINARY | OP_CLOSE | OP_PING | OP_PONG) {
        return Err(FrameError::UnknownOpcode(opcode));
    }
    if (b1 & 0x80 != 0) != masked {
        return Err(FrameError::Masking);
    }
    let (len, mut at) = match b1 & 0x7F {
        126 if buf.len() >= 4 => (u64::from(u16::from_be_bytes([buf[2], buf[3]])), 4),
        127 if buf.len() >= 10 => {
            let mut b = [0u8; 8];
            b.copy_from_slice(&buf[2..10]);
            (u64::from_be_bytes(b), 10)
        }
        126 | 127 => return Ok(None),
        n => (u64::from(n), 2),
    };
    if len >> 63 != 0 {
        return Err(FrameError::Length);
    }
    let mask = if masked {
        if buf.len() < at + 4 {
            return Ok(None);
        }
        let m = [buf[at], buf[at + 1], buf[at + 2], buf[at + 3]];
        at += 4;
        Some(m)
    } else {
        None
    };
    let h = Header { fin, opcode, mask, len };
    if h.is_control() && (!fin || len > MAX_CONTROL) {
        return Err(FrameError::BadControl);
    }
    Ok(Some((h, at)))
}

/// Appends a final frame's header for a payload of `len` bytes.
pub(crate) fn write_header(out: &mut Vec<u8>, opcode: u8, len: u64, mask: Option<[u8; 4]>) {
    out.push(0x80 | opcode);
    let m = if mask.is_some() { 0x80 } else { 0 };
    if len < 126 {
        out.push(m | len as u8);
    } else if len <= 0xFFFF {
        out.push(m | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(m | 127);
        out.extend_from_slice(&len.to_be_bytes());
    }
    if let Some(k) = mask {
        out.extend_from_slice(&k);
    }
}

/// XORs `data` with `mask`, `data[0]` being byte `offset` of the payload.
#[inline]
pub(crate) fn apply_mask(data: &mut [u8], mask: [u8; 4], offset: u64) {
    let r = (offset % 4) as usize;
    let key = [mask[r], mask[(r + 1) % 4], mask[(r + 2) % 4], mask[(r + 3) % 4]];
    // Eight bytes at a time (the key twice), then what is left.
    let word = u64::from_ne_bytes([key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3]]);
    let mut chunks = data.chunks_exact_mut(8);
    for c in &mut chunks {
        let v = u64::from_ne_bytes(c.try_into().expect("eight bytes")) ^ word;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= key[i % 4];
    }
}

/// Appends a whole control frame (a pong, a close), masked when `mask` is given.
pub(crate) fn control(out: &mut Vec<u8>, opcode: u8, payload: &[u8], mask: Option<[u8; 4]>) {
    let payload = &payload[..payload.len().min(MAX_CONTROL as usize)];
    write_header(out, opcode, payload.len() as u64, mask);
    let at = out.len();
    out.extend_from_slice(payload);
    if let Some(k) = mask {
        apply_mask(&mut out[at..], k, 0);
    }
}

/// Masking keys: unpredictable to the application whose bytes are masked (RFC 6455 §10.3),
/// from the kernel's random source once per connection, then a xorshift per frame.
pub(crate) struct MaskSource(u64);

impl MaskSource {
    pub(crate) fn new() -> MaskSource {
        let mut seed = [0u8; 8];
        // SAFETY: getrandom writes at most `seed.len()` bytes into the buffer.
        let n = unsafe { libc::getrandom(seed.as_mut_ptr().cast(), seed.len(), 0) };
        let mut s = u64::from_ne_bytes(seed);
        if n != 8 || s == 0 {
            s = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1;
        }
        MaskSource(s)
    }

    pub(crate) fn next(&mut self) -> [u8; 4] {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x as u32).to_ne_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_matches_rfc_6455s_definition_at_every_offset_and_length() {
        let mask = [0x12, 0x34, 0x56, 0x78];
        for len in 0..40 {
            for offset in 0..9u64 {
                let data: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37)).collect();
                let mut got = data.clone();
                apply_mask(&mut got, mask, offset);
                let want: Vec<u8> = data.iter().enumerate().map(|(i, b)| b ^ mask[(i + offset as usize) % 4]).collect();
                assert_eq!(got, want, "len {len} offset {offset}");
            }
        }
    }

    #[test]
    fn headers_round_trip_at_each_length_form() {
        for (len, masked) in [(0u64, false), (125, true), (126, false), (65535, true), (65536, false), (1 << 40, true)] {
            let mut out = Vec::new();
            let mask = masked.then_some([1, 2, 3, 4]);
            write_header(&mut out, OP_BINARY, len, mask);
            let (h, n) = parse_header(&out, masked).unwrap().unwrap();
            assert_eq!((h.fin, h.opcode, h.mask, h.len, n), (true, OP_BINARY, mask, len, out.len()));
            for cut in 0..out.len() {
                assert_eq!(parse_header(&out[..cut], masked), Ok(None), "incomplete at {cut}");
            }
        }
    }

    #[test]
    fn refuses_what_rfc_6455_forbids() {
        assert_eq!(parse_header(&[0x82, 0x01], true), Err(FrameError::Masking), "an unmasked client frame");
        assert_eq!(parse_header(&[0x82, 0x81, 0, 0, 0, 0], false), Err(FrameError::Masking));
        assert_eq!(parse_header(&[0xC2, 0x00], false), Err(FrameError::Reserved));
        assert_eq!(parse_header(&[0x83, 0x00], false), Err(FrameError::UnknownOpcode(3)));
        assert_eq!(parse_header(&[0x09, 0x00], false), Err(FrameError::BadControl), "a fragmented ping");
        assert_eq!(parse_header(&[0x89, 126, 0, 126], false), Err(FrameError::BadControl), "a long ping");
        assert_eq!(parse_header(&[0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0], false), Err(FrameError::Length));
    }

    #[test]
    fn masking_is_its_own_inverse_at_any_offset() {
        let data: Vec<u8> = (0..37).collect();
        let mut m = data.clone();
        apply_mask(&mut m, [9, 8, 7, 6], 0);
        let (a, b) = m.split_at_mut(13);
        apply_mask(a, [9, 8, 7, 6], 0);
        apply_mask(b, [9, 8, 7, 6], 13);
        assert_eq!(m, data);
    }
}
