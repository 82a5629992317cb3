//! What a socket type is: its libzmq number, its name on the wire, and its properties.

use super::*;

impl SocketType {
    /// The type for a libzmq socket-type number.
    pub fn from_raw(n: i32) -> Option<SocketType> {
        Some(match n {
            0 => SocketType::Pair,
            1 => SocketType::Pub,
            2 => SocketType::Sub,
            3 => SocketType::Req,
            4 => SocketType::Rep,
            5 => SocketType::Dealer,
            6 => SocketType::Router,
            7 => SocketType::Pull,
            8 => SocketType::Push,
            9 => SocketType::XPub,
            10 => SocketType::XSub,
            11 => SocketType::Stream,
            12 => SocketType::Server,
            13 => SocketType::Client,
            14 => SocketType::Radio,
            15 => SocketType::Dish,
            16 => SocketType::Gather,
            17 => SocketType::Scatter,
            18 => SocketType::Dgram,
            19 => SocketType::Peer,
            20 => SocketType::Channel,
            _ => return None,
        })
    }

    /// libzmq's number for this type.
    pub fn as_raw(self) -> i32 {
        self as i32
    }

    /// The type as the codec names it on the wire; None for DGRAM, which speaks udp only.
    pub(crate) fn wire(self) -> Option<zmtp::SocketType> {
        Some(match self {
            SocketType::Pair => zmtp::SocketType::Pair,
            SocketType::Pub => zmtp::SocketType::Pub,
            SocketType::Sub => zmtp::SocketType::Sub,
            SocketType::Req => zmtp::SocketType::Req,
            SocketType::Rep => zmtp::SocketType::Rep,
            SocketType::Dealer => zmtp::SocketType::Dealer,
            SocketType::Router => zmtp::SocketType::Router,
            SocketType::Pull => zmtp::SocketType::Pull,
            SocketType::Push => zmtp::SocketType::Push,
            SocketType::XPub => zmtp::SocketType::XPub,
            SocketType::XSub => zmtp::SocketType::XSub,
            SocketType::Stream => zmtp::SocketType::Stream,
            SocketType::Server => zmtp::SocketType::Server,
            SocketType::Client => zmtp::SocketType::Client,
            SocketType::Radio => zmtp::SocketType::Radio,
            SocketType::Dish => zmtp::SocketType::Dish,
            SocketType::Gather => zmtp::SocketType::Gather,
            SocketType::Scatter => zmtp::SocketType::Scatter,
            SocketType::Peer => zmtp::SocketType::Peer,
            SocketType::Channel => zmtp::SocketType::Channel,
            SocketType::Dgram => return None,
        })
    }

    /// The types libzmq makes thread-safe (its draft types): only these may be wrapped in a
    /// [`SyncSocket`](crate::SyncSocket).
    pub fn is_thread_safe(self) -> bool {
        matches!(
            self,
            SocketType::Server
                | SocketType::Client
                | SocketType::Radio
                | SocketType::Dish
                | SocketType::Gather
                | SocketType::Scatter
                | SocketType::Peer
                | SocketType::Channel
        )
    }

    /// True for types that address peers by routing id and so need a fresh pipe per connection.
    pub(crate) fn routes_by_id(self) -> bool {
        matches!(self, SocketType::Router | SocketType::Stream)
    }
}
