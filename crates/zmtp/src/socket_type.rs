//! ZeroMQ socket types as announced in the READY "Socket-Type" property, and
//! which pairs of them may be connected.
//!
//! The compatibility table follows libzmq 4.3 (`mechanism_t::check_socket_type`),
//! which extends RFC 23's table with the draft thread-safe types of RFC 37.
//! STREAM sockets speak raw TCP, never ZMTP, so no type is compatible with them.

/// A ZeroMQ socket type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum SocketType {
    Pair,
    Pub,
    Sub,
    Req,
    Rep,
    Dealer,
    Router,
    Pull,
    Push,
    XPub,
    XSub,
    Stream,
    Server,
    Client,
    Radio,
    Dish,
    Gather,
    Scatter,
    Dgram,
    Peer,
    Channel,
}

impl SocketType {
    /// Every socket type, in libzmq's numbering order.
    pub const ALL: [SocketType; 21] = [
        SocketType::Pair,
        SocketType::Pub,
        SocketType::Sub,
        SocketType::Req,
        SocketType::Rep,
        SocketType::Dealer,
        SocketType::Router,
        SocketType::Pull,
        SocketType::Push,
        SocketType::XPub,
        SocketType::XSub,
        SocketType::Stream,
        SocketType::Server,
        SocketType::Client,
        SocketType::Radio,
        SocketType::Dish,
        SocketType::Gather,
        SocketType::Scatter,
        SocketType::Dgram,
        SocketType::Peer,
        SocketType::Channel,
    ];

    /// The name as it appears on the wire ("PAIR", "PUB", ...).
    pub fn name(self) -> &'static str {
        match self {
            SocketType::Pair => "PAIR",
            SocketType::Pub => "PUB",
            SocketType::Sub => "SUB",
            SocketType::Req => "REQ",
            SocketType::Rep => "REP",
            SocketType::Dealer => "DEALER",
            SocketType::Router => "ROUTER",
            SocketType::Pull => "PULL",
            SocketType::Push => "PUSH",
            SocketType::XPub => "XPUB",
            SocketType::XSub => "XSUB",
            SocketType::Stream => "STREAM",
            SocketType::Server => "SERVER",
            SocketType::Client => "CLIENT",
            SocketType::Radio => "RADIO",
            SocketType::Dish => "DISH",
            SocketType::Gather => "GATHER",
            SocketType::Scatter => "SCATTER",
            SocketType::Dgram => "DGRAM",
            SocketType::Peer => "PEER",
            SocketType::Channel => "CHANNEL",
        }
    }

    /// Parses a wire name. Matching is exact (case-sensitive), as in libzmq,
    /// which compares the property value byte for byte.
    pub fn from_name(name: &[u8]) -> Option<SocketType> {
        SocketType::ALL.iter().copied().find(|t| t.name().as_bytes() == name)
    }

    /// Whether a socket of type `self` accepts a peer of type `peer`.
    pub fn is_compatible_with(self, peer: SocketType) -> bool {
        use SocketType::*;
        match self {
            Req => matches!(peer, Rep | Router),
            Rep => matches!(peer, Req | Dealer),
            Dealer => matches!(peer, Rep | Dealer | Router),
            Router => matches!(peer, Req | Dealer | Router),
            Push => peer == Pull,
            Pull => peer == Push,
            Pub | XPub => matches!(peer, Sub | XSub),
            Sub | XSub => matches!(peer, Pub | XPub),
            Pair => peer == Pair,
            Server => peer == Client,
            Client => peer == Server,
            Radio => peer == Dish,
            Dish => peer == Radio,
            Gather => peer == Scatter,
            Scatter => peer == Gather,
            Dgram => peer == Dgram,
            Peer => peer == Peer,
            Channel => peer == Channel,
            Stream => false,
        }
    }

    /// Whether libzmq sends the "Identity" property for this type in READY.
    pub fn sends_identity(self) -> bool {
        matches!(self, SocketType::Req | SocketType::Dealer | SocketType::Router)
    }
}

impl std::fmt::Display for SocketType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in SocketType::ALL {
            assert_eq!(SocketType::from_name(t.name().as_bytes()), Some(t));
        }
        assert_eq!(SocketType::from_name(b"dealer"), None);
        assert_eq!(SocketType::from_name(b""), None);
        assert_eq!(SocketType::from_name(b"DEALERX"), None);
    }

    #[test]
    fn table_is_symmetric() {
        for a in SocketType::ALL {
            for b in SocketType::ALL {
                assert_eq!(a.is_compatible_with(b), b.is_compatible_with(a), "{a} {b}");
            }
        }
    }

    #[test]
    fn rfc23_pairs() {
        use SocketType::*;
        assert!(Req.is_compatible_with(Rep));
        assert!(Req.is_compatible_with(Router));
        assert!(!Req.is_compatible_with(Req));
        assert!(!Req.is_compatible_with(Dealer));
        assert!(Dealer.is_compatible_with(Dealer));
        assert!(Router.is_compatible_with(Router));
        assert!(XPub.is_compatible_with(XSub));
        assert!(!Pub.is_compatible_with(Pub));
        assert!(Push.is_compatible_with(Pull));
        assert!(!Push.is_compatible_with(Push));
        assert!(Pair.is_compatible_with(Pair));
        assert!(Client.is_compatible_with(Server));
        assert!(Radio.is_compatible_with(Dish));
        assert!(Scatter.is_compatible_with(Gather));
        assert!(Peer.is_compatible_with(Peer));
        assert!(Channel.is_compatible_with(Channel));
        assert!(!Stream.is_compatible_with(Stream));
    }
}
