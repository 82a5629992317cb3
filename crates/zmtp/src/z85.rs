//! Z85 (ZeroMQ RFC 32): binary to printable text, 4 bytes to 5 characters.
//!
//! CURVE keys travel in configuration files and on command lines as 40-character
//! Z85 strings, so the codec lives beside the mechanism. Lengths must be
//! multiples of 4 (encode) or 5 (decode); there is no padding.

const ALPHABET: &[u8; 85] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// Character to value, 0xFF for characters outside the alphabet.
const DECODER: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 85 {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Why a Z85 string or buffer was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Z85Error {
    /// Binary input whose length is not a multiple of 4, or text whose
    /// length is not a multiple of 5.
    Length,
    /// A character outside the Z85 alphabet, at this offset.
    Character(usize),
    /// A 5-character group whose value exceeds 2^32-1, at this offset.
    Overflow(usize),
}

impl std::fmt::Display for Z85Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Z85Error::Length => f.write_str("Z85 length is not a multiple of 4 (binary) or 5 (text)"),
            Z85Error::Character(at) => write!(f, "invalid Z85 character at offset {at}"),
            Z85Error::Overflow(at) => write!(f, "Z85 group at offset {at} exceeds 32 bits"),
        }
    }
}

impl std::error::Error for Z85Error {}

/// Encodes `data` (length a multiple of 4).
pub fn encode(data: &[u8]) -> Result<String, Z85Error> {
    if data.len() % 4 != 0 {
        return Err(Z85Error::Length);
    }
    let mut out = String::with_capacity(data.len() / 4 * 5);
    for chunk in data.chunks_exact(4) {
        let mut v = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let mut five = [0u8; 5];
        for c in five.iter_mut().rev() {
            *c = ALPHABET[(v % 85) as usize];
            v /= 85;
        }
        out.extend(five.iter().map(|&b| char::from(b)));
    }
    Ok(out)
}

/// Decodes `text` (length a multiple of 5).
pub fn decode(text: &[u8]) -> Result<Vec<u8>, Z85Error> {
    if text.len() % 5 != 0 {
        return Err(Z85Error::Length);
    }
    let mut out = Vec::with_capacity(text.len() / 5 * 4);
    for (i, chunk) in text.chunks_exact(5).enumerate() {
        let mut v: u64 = 0;
        for (j, &c) in chunk.iter().enumerate() {
            let d = DECODER[usize::from(c)];
            if d == 0xFF {
                return Err(Z85Error::Character(i * 5 + j));
            }
            v = v * 85 + u64::from(d);
        }
        let v = u32::try_from(v).map_err(|_| Z85Error::Overflow(i * 5))?;
        out.extend_from_slice(&v.to_be_bytes());
    }
    Ok(out)
}

/// Decodes a 40-character Z85 key into its 32 bytes.
pub fn decode_key(text: &[u8]) -> Result<[u8; 32], Z85Error> {
    if text.len() != 40 {
        return Err(Z85Error::Length);
    }
    let v = decode(text)?;
    let mut key = [0u8; 32];
    key.copy_from_slice(&v);
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc32_test_vector() {
        let data = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        assert_eq!(encode(&data).unwrap(), "HelloWorld");
        assert_eq!(decode(b"HelloWorld").unwrap(), data);
    }

    #[test]
    fn libzmq_key_round_trips() {
        // The server public key from libzmq's zmq_curve(7) example.
        let text = b"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
        let key = decode_key(text).unwrap();
        assert_eq!(encode(&key).unwrap().as_bytes(), text);
    }

    #[test]
    fn errors() {
        assert_eq!(encode(&[1, 2, 3]), Err(Z85Error::Length));
        assert_eq!(decode(b"Hell"), Err(Z85Error::Length));
        assert_eq!(decode(b"Hell\"World"), Err(Z85Error::Character(4)));
        assert_eq!(decode(b"#####"), Err(Z85Error::Overflow(0)));
        assert_eq!(decode_key(b"HelloWorld"), Err(Z85Error::Length));
        assert_eq!(decode(b"").unwrap(), Vec::<u8>::new());
        // Every 32-bit boundary value survives.
        for v in [0u32, 1, 84, 85, u32::MAX] {
            let b = v.to_be_bytes();
            assert_eq!(decode(encode(&b).unwrap().as_bytes()).unwrap(), b);
        }
    }
}
