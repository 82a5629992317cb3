//! The 64-byte ZMTP 3.x greeting and early detection of older peers.
//!
//! Layout: signature (`FF`, 8 padding bytes, `7F`), major and minor version,
//! 20-byte zero-padded mechanism name, as-server byte, 31 filler bytes.
//!
//! We send the greeting in three steps, exactly like libzmq 4.3: the 10-byte
//! signature at once, the major version once the peer's signature has
//! arrived, and the remaining 53 bytes once the peer's major version has
//! arrived (RFC 23, "Detecting ZMTP 1.0 and 2.0 Peers"). Until the peer's first
//! 11 bytes are in we have committed to nothing a 1.0 or 2.0 peer would
//! misread ([`detect`] classifies them; [`crate::legacy`] speaks to the old
//! ones). For the same reason the padding carries the identity length plus
//! one as a 64-bit big-endian number, which a ZMTP 1.0 peer reads as the
//! length of our identity frame; 3.x peers ignore it.

use crate::error::HandshakeError;
use crate::version::Version;

/// Length of a complete 3.x greeting.
pub const GREETING_LEN: usize = 64;
/// Length of the signature (`FF` + padding + `7F`).
pub const SIGNATURE_LEN: usize = 10;
/// Offset of the major version ("revision") byte.
pub const MAJOR_POS: usize = 10;
/// Offset of the minor version byte.
pub const MINOR_POS: usize = 11;
/// Offset of the mechanism name.
pub const MECHANISM_POS: usize = 12;
/// Length of the mechanism field.
pub const MECHANISM_LEN: usize = 20;
/// Offset of the as-server byte.
pub const AS_SERVER_POS: usize = 32;

/// A ZMTP 3.x greeting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Greeting {
    /// The 8 padding bytes of the signature (not significant to 3.x peers).
    pub padding: [u8; 8],
    /// Major version (3).
    pub major: u8,
    /// Minor version (0 or 1).
    pub minor: u8,
    /// Mechanism name, zero-padded.
    pub mechanism: [u8; MECHANISM_LEN],
    /// The as-server flag.
    pub as_server: bool,
}

impl Greeting {
    /// Our greeting for `version` and mechanism `name`, with libzmq's padding
    /// (`routing_id_len + 1`, big-endian). Names longer than 20 bytes are cut.
    pub fn new(version: Version, mechanism: &[u8], as_server: bool, routing_id_len: usize) -> Greeting {
        let mut mech = [0u8; MECHANISM_LEN];
        let n = mechanism.len().min(MECHANISM_LEN);
        mech[..n].copy_from_slice(&mechanism[..n]);
        Greeting {
            padding: (routing_id_len as u64 + 1).to_be_bytes(),
            major: 3,
            minor: version.minor(),
            mechanism: mech,
            as_server,
        }
    }

    /// The 64 bytes on the wire.
    pub fn to_bytes(&self) -> [u8; GREETING_LEN] {
        let mut g = [0u8; GREETING_LEN];
        g[0] = 0xFF;
        g[1..9].copy_from_slice(&self.padding);
        g[9] = 0x7F;
        g[MAJOR_POS] = self.major;
        g[MINOR_POS] = self.minor;
        g[MECHANISM_POS..MECHANISM_POS + MECHANISM_LEN].copy_from_slice(&self.mechanism);
        g[AS_SERVER_POS] = u8::from(self.as_server);
        g
    }

    /// Parses a complete greeting. Checks the signature and version; the
    /// mechanism is compared by the handshake. Padding and filler are not
    /// validated (RFC 23 forbids interpreting the padding).
    pub fn parse(g: &[u8; GREETING_LEN]) -> Result<Greeting, HandshakeError> {
        match detect(g)? {
            Detected::Revision(r) if r >= 2 => {}
            Detected::Revision(r) => return Err(HandshakeError::UnexpectedRevision { revision: r }),
            _ => return Err(HandshakeError::BadSignature),
        }
        let mut padding = [0u8; 8];
        padding.copy_from_slice(&g[1..9]);
        let mut mechanism = [0u8; MECHANISM_LEN];
        mechanism.copy_from_slice(&g[MECHANISM_POS..MECHANISM_POS + MECHANISM_LEN]);
        Ok(Greeting { padding, major: g[MAJOR_POS], minor: g[MINOR_POS], mechanism, as_server: g[AS_SERVER_POS] != 0 })
    }

    /// The version this greeting announces, capped at what we implement.
    pub fn version(&self) -> Version {
        if self.major > 3 {
            Version::V3_1
        } else {
            Version::from_minor(self.minor)
        }
    }

    /// The mechanism name without its zero padding.
    pub fn mechanism_name(&self) -> &[u8] {
        let end = self.mechanism.iter().position(|&b| b == 0).unwrap_or(MECHANISM_LEN);
        &self.mechanism[..end]
    }
}

/// What the first bytes of a peer's greeting say about its revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detected {
    /// Not enough bytes to tell yet.
    Pending,
    /// ZMTP 1.0 without a signature: the bytes are the header of its identity
    /// frame (first byte not `FF`, or byte 9, the flags of a long header,
    /// without bit 0).
    Unversioned,
    /// A valid signature; the revision byte has not arrived.
    Signature,
    /// A valid signature and this revision byte: 0 is ZMTP 1.0 with a
    /// signature, 1 is 2.0, 2 and above are 3.x (libzmq speaks 3.1 to
    /// revision 2 and to anything above 3).
    Revision(u8),
}

/// Classifies as much of a peer's greeting as has arrived, the way libzmq's
/// `zmtp_engine_t::receive_greeting` does, so that the bytes we send never
/// depend on how the input was chunked. Byte 9 with bit 0 set but other than
/// `7F` is not a ZMTP signature (libzmq would read on; nothing sends it).
pub fn detect(prefix: &[u8]) -> Result<Detected, HandshakeError> {
    match prefix.first() {
        None => return Ok(Detected::Pending),
        Some(&first) if first != 0xFF => return Ok(Detected::Unversioned),
        Some(_) => {}
    }
    match prefix.get(9) {
        None => Ok(Detected::Pending),
        Some(&flags) if flags & 0x01 == 0 => Ok(Detected::Unversioned),
        Some(&flags) if flags != 0x7F => Err(HandshakeError::BadSignature),
        Some(_) => Ok(prefix.get(MAJOR_POS).map_or(Detected::Signature, |&r| Detected::Revision(r))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let g = Greeting::new(Version::V3_1, b"NULL", false, 0).to_bytes();
        assert_eq!(g[0], 0xFF);
        assert_eq!(&g[1..9], &[0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(g[9], 0x7F);
        assert_eq!(&g[10..12], &[3, 1]);
        assert_eq!(&g[12..16], b"NULL");
        assert!(g[16..].iter().all(|&b| b == 0));
        let parsed = Greeting::parse(&g).unwrap();
        assert_eq!(parsed.to_bytes(), g);
        assert_eq!(parsed.mechanism_name(), b"NULL");
        assert_eq!(parsed.version(), Version::V3_1);
        let g = Greeting::new(Version::V3_0, b"CURVE", true, 3).to_bytes();
        assert_eq!(g[8], 4);
        assert_eq!(g[32], 1);
        assert_eq!(Greeting::parse(&g).unwrap().version(), Version::V3_0);
    }

    #[test]
    fn higher_versions_are_accepted() {
        let mut g = Greeting::new(Version::V3_1, b"NULL", false, 0).to_bytes();
        g[MINOR_POS] = 9;
        assert_eq!(Greeting::parse(&g).unwrap().version(), Version::V3_1);
        g[MAJOR_POS] = 4;
        g[MINOR_POS] = 0;
        assert_eq!(Greeting::parse(&g).unwrap().version(), Version::V3_1);
    }

    #[test]
    fn old_peers_are_detected_early() {
        use Detected::*;
        assert_eq!(detect(&[]), Ok(Pending));
        assert_eq!(detect(&[0x01]), Ok(Unversioned));
        assert_eq!(detect(&[0x00]), Ok(Unversioned));
        assert_eq!(detect(&[0xFF, 0, 0]), Ok(Pending));
        assert_eq!(detect(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x00]), Ok(Unversioned));
        assert_eq!(detect(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x01]), Err(HandshakeError::BadSignature));
        assert_eq!(detect(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F]), Ok(Signature));
        for r in [0, 1, 2, 3, 4] {
            assert_eq!(detect(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, r]), Ok(Revision(r)));
        }
    }
}
