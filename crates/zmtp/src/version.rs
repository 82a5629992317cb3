//! The negotiated ZMTP revision.
//!
//! Both peers announce a major/minor pair in their greeting; the connection
//! then speaks the lower of the two 3.x minor revisions. The only wire-visible
//! difference between 3.0 and 3.1 that this crate handles is how subscriptions
//! travel (message frames in 3.0, SUBSCRIBE/CANCEL commands in 3.1).

/// A negotiated ZMTP 3.x revision. Ordered, so `min` gives the negotiated one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// ZMTP 3.0 (RFC 23).
    V3_0,
    /// ZMTP 3.1 (RFC 37).
    V3_1,
}

impl Version {
    /// The minor revision byte sent in the greeting.
    pub fn minor(self) -> u8 {
        match self {
            Version::V3_0 => 0,
            Version::V3_1 => 1,
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
    }
}
