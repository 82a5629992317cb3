//! What a session is made with: a snapshot of its socket's options taken at bind or connect
//! (later option changes affect later connections only, as in libzmq), with the socket type's
//! rules already turned into a [`LinkPolicy`] by the socket. Nothing here names a socket type.

use super::link::LinkOptions;
use crate::pipe::PipeEnd;
use crate::transport::StreamOptions;
use bytes::Bytes;
use std::sync::Arc;

/// What a socket type asks of its links, computed once by the socket (`socket::policy`).
#[derive(Clone, Debug)]
pub(crate) struct LinkPolicy {
    /// The socket type as the wire names it, in the greeting (2.0) or READY (3.x).
    pub wire_type: zmtp::SocketType,
    /// Which messages from the peer the socket takes.
    pub inbound: Inbound,
    /// SUBSCRIBE and CANCEL commands become subscription messages in the pipe (PUB, XPUB).
    pub takes_subscriptions: bool,
    /// JOIN and LEAVE commands go up the pipe as command messages (RADIO).
    pub takes_joins: bool,
    /// One-frame messages starting 0x01/0x00 are subscriptions, sent as commands to 3.1 peers
    /// (SUB, XSUB).
    pub sends_subscriptions: bool,
    /// The socket only publishes (PUB, XPUB, RADIO): what it writes never answers what it
    /// read, so a write is never a reply for the direct send path's pace (`io/pace.rs`).
    pub publishes: bool,
    /// A raw link (STREAM): no ZMTP, each read is a message and each message is written as is.
    pub raw: bool,
    /// A connecting session keeps its pipe across reconnects, so the socket keeps the peer
    /// (false: ROUTER without CONNECT_ROUTING_ID, and IMMEDIATE).
    pub keeps_pipe: bool,
    /// CONFLATE on the pipe: (the socket's reads, the socket's writes) keep only the newest.
    pub conflate: (bool, bool),
    /// PROBE_ROUTER: an empty message to each new peer.
    pub probe: bool,
    /// HELLO_MSG: the message each new connection opens with.
    pub hello: Option<Bytes>,
    /// DISCONNECT_MSG: what the socket reads last from an accepted peer that left.
    pub farewell: Option<Bytes>,
}

/// Which inbound messages a socket type takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inbound {
    /// Everything.
    All,
    /// Only subscriptions in the message form (one frame starting 0x01 or 0x00): PUB.
    Subscriptions,
    /// Nothing: PUSH.
    Nothing,
}

impl Inbound {
    /// True when a complete message of these frames is taken.
    #[inline]
    pub(crate) fn takes(self, first: &crate::msg::Msg, frames: usize) -> bool {
        match self {
            Inbound::All => true,
            Inbound::Subscriptions => frames == 1 && matches!(first.first(), Some(0) | Some(1)),
            Inbound::Nothing => false,
        }
    }
}

/// The ZAP handler a server session asks for a verdict (RFC 27), provided by the socket's
/// context: the socket bound at `inproc://zeromq.zap.01`, when it is a REP or a ROUTER.
pub(crate) trait ZapHandler: Send + Sync + std::fmt::Debug {
    /// True when a handler is bound now.
    fn bound(&self) -> bool;
    /// Joins a pipe to the handler as an anonymous peer with no HWM; the returned end's first
    /// frame is the handler's routing id. None when no handler is bound.
    fn connect(&self) -> Option<PipeEnd>;
}

/// The handshake's side of a session's options.
#[derive(Clone)]
pub(crate) struct HandshakeOptions {
    pub routing_id: Bytes,
    pub mechanism: zmtp::Mechanism,
    /// The frame size limit (MAXMSGSIZE, bounded by the context's MAX_MSGSZ).
    pub max_msg_size: Option<u64>,
    /// METADATA: application properties sent in READY.
    pub properties: Vec<(String, Bytes)>,
    pub zap_domain: Bytes,
    pub zap_enforce_domain: bool,
    pub zap: Option<Arc<dyn ZapHandler>>,
    /// HANDSHAKE_IVL in ms (0: no limit).
    pub handshake_ivl: i32,
}

/// Everything a session needs of its socket's options.
#[derive(Clone)]
pub(crate) struct SessionConfig {
    pub policy: LinkPolicy,
    pub stream: StreamOptions,
    pub link: LinkOptions,
    pub handshake: HandshakeOptions,
    /// The pipe's high-water marks: [socket to peer, peer to socket] (0: none).
    pub hwm: [u64; 2],
    pub reconnect_ivl: i32,
    pub reconnect_ivl_max: i32,
}
