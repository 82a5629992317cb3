//! A sans-IO implementation of the ZeroMQ Message Transport Protocol, ZMTP 3.0
//! (RFC 23) and 3.1 (RFC 37), and of the older revisions it still meets in the
//! field, ZMTP 1.0 (RFC 13) and 2.0 (RFC 15).
//!
//! Nothing here touches a socket, a thread or a clock: callers feed received
//! bytes in and take bytes to send out. The crate is layered like the protocol:
//!
//! * [`greeting`]: the fixed 64-byte greeting and version detection;
//! * [`legacy`]: ZMTP 1.0 and 2.0 frames, the 2.0 greeting and socket numbers;
//! * [`frame`]: frame headers and the zero-copy [`FrameDecoder`] (the hot path);
//! * [`command`]: command frames (READY, ERROR, SUBSCRIBE, CANCEL, PING, PONG);
//! * [`metadata`]: the property lists carried by READY;
//! * [`socket_type`]: socket types and which pairs may talk;
//! * [`mechanism`]: security mechanisms: NULL, PLAIN and CURVE (with the
//!   data-phase [`Cipher`] CURVE needs);
//! * [`z85`]: the Z85 text encoding of CURVE keys (RFC 32);
//! * [`handshake`]: greeting + mechanism handshake as a state machine;
//! * [`zap`]: the ZAP (RFC 27) request a server handshake pauses for, and the reply;
//! * [`data`]: the data phase: frames decoded into the caller's sink, encoded
//!   into its send buffer, CURVE's sealing, the protocol's own commands;
//! * [`heartbeat`]: RFC 37's PING/PONG deadlines on the caller's clock;
//! * [`connection`]: the handshake and then the data phase, as an engine runs
//!   them, and as an event queue ([`Event`]s).
//!
//! Every malformed input from the peer is reported as a typed error; nothing
//! the peer sends can make this crate panic or allocate more than it sent.

// No unsafe code, except in three modules that allow it for themselves: two of the CURVE data
// phase (feature `fast-cipher`): mechanism/salsa20_lanes.rs calls its AVX2 functions after
// run-time detection, and mechanism/wipe.rs wipes keystream with one volatile store; and
// data/out.rs, which appends short frames to the send buffer with fixed-size copies.
#![deny(unsafe_code)]
#![deny(unused_must_use)]
#![warn(missing_docs)]

pub mod command;
pub mod connection;
pub mod data;
pub mod error;
pub mod frame;
pub mod greeting;
pub mod handshake;
pub mod heartbeat;
pub mod legacy;
pub mod mechanism;
pub mod metadata;
pub mod socket_type;
mod version;
pub mod z85;
pub mod zap;

pub use command::{encode_subscription, parse_legacy_subscription, Command};
pub use connection::{Connection, Event};
pub use error::{CipherError, CommandError, Error, FrameError, HandshakeError, MetadataError};
pub use frame::{
    encode_frame, encode_frame_for, encode_header, encode_message_header, parse_header, parse_header_for, write_header,
    write_message_header, Frame, FrameDecoder, FrameHeader, FLAG_COMMAND, FLAG_LONG, FLAG_MORE,
};
pub use greeting::Greeting;
pub use handshake::{Config, Handshake, Peer};
pub use heartbeat::{Expired, HeartbeatConfig};
pub use mechanism::{Cipher, CurveClientKeys, CurveKeyPair, CurveSecretKey, CurveServerKeys, Mechanism, PlainCredentials};
pub use metadata::Metadata;
pub use socket_type::SocketType;
pub use version::Version;
pub use zap::{ZapConfig, ZapError, ZapReply, ZapRequest};
