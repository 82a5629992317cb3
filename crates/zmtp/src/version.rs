//! The negotiated ZMTP revision.
//!
//! Between 3.x peers, both announce a major/minor pair in their greeting and the
//! connection speaks the lower of the two minor revisions; the only wire-visible
//! difference between 3.0 and 3.1 that this crate handles is how subscriptions
//! travel (message frames in 3.0, SUBSCRIBE/CANCEL commands in 3.1). An older
//! peer (ZMTP 1.0, RFC 13; ZMTP 2.0, RFC 15) is detected from the first bytes of
//! its greeting and spoken to in its own revision (see [`crate::legacy`]): 1.0
//! and 2.0 frame differently and have no commands at all.

/// A negotiated ZMTP revision. Ordered, so `min` gives the negotiated one and
/// `v >= Version::V3_0` asks "has commands and a mechanism handshake".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// ZMTP 1.0 (RFC 13): length (flags included) before flags, identity message first.
    V1_0,
    /// ZMTP 2.0 (RFC 15): 3.x framing without commands, socket-type byte, identity message.
    V2_0,
    /// ZMTP 3.0 (RFC 23).
    V3_0,
    /// ZMTP 3.1 (RFC 37).
    V3_1,
}

impl Version {
    /// The minor revision byte of a 3.x greeting (0 for 3.0 and for the
    /// pre-3.0 revisions, which have no minor byte).
    pub fn minor(self) -> u8 {
        match self {
            Version::V3_1 => 1,
            Version::V1_0 | Version::V2_0 | Version::V3_0 => 0,
        }
    }

    /// True for ZMTP 1.0 and 2.0: no security mechanism, no commands, the
    /// identity travels as the first message.
    pub fn is_legacy(self) -> bool {
        self < Version::V3_0
    }

    /// "1.0", "2.0", "3.0" or "3.1" (the connection property `ZMTP-Version`).
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1_0 => "1.0",
            Version::V2_0 => "2.0",
            Version::V3_0 => "3.0",
            Version::V3_1 => "3.1",
        }
    }

    /// The revision a 3.x peer announcing `minor` gets: any minor above 1 is
    /// treated as 3.1, because a peer must accept higher versions and speak
    /// its own protocol to them.
    pub fn from_minor(minor: u8) -> Version {
        if minor == 0 {
            Version::V3_0
        } else {
            Version::V3_1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordering_picks_lower() {
        assert_eq!(Version::V3_0.min(Version::V3_1), Version::V3_0);
        assert_eq!(Version::from_minor(0), Version::V3_0);
        assert_eq!(Version::from_minor(1), Version::V3_1);
        assert_eq!(Version::from_minor(7), Version::V3_1);
        assert_eq!(Version::V3_1.minor(), 1);
        assert!(Version::V1_0 < Version::V2_0 && Version::V2_0 < Version::V3_0);
        assert!(Version::V2_0.is_legacy() && !Version::V3_0.is_legacy());
        assert_eq!(Version::V1_0.as_str(), "1.0");
        assert_eq!(Version::V3_1.as_str(), "3.1");
    }
}
