//! Error types, one enum per layer, plus the crate-level [`Error`].
//!
//! Everything the peer can get wrong has a variant here, so callers can match
//! on causes instead of strings. The handshake error also knows which libzmq
//! monitor event it corresponds to (protocol failure, authentication failure,
//! or no detail), so an engine can report failures the way libzmq does.

use std::fmt;

use bytes::Bytes;

use crate::socket_type::SocketType;
use crate::version::Version;

/// A frame header that cannot be accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// One of the reserved flag bits 3-7 is set.
    ReservedFlags {
        /// The whole flags byte.
        flags: u8,
    },
    /// A command frame with the MORE bit set (commands are single frames).
    CommandWithMore,
    /// A long length with the top bit set: larger than 2^63-1.
    LengthOverflow {
        /// The announced length.
        len: u64,
    },
    /// A ZMTP 1.0 frame whose length is 0: the length counts the flags octet,
    /// so it is at least 1.
    ZeroLength,
    /// The body is larger than the configured maximum.
    TooLarge {
        /// The announced length.
        len: u64,
        /// The limit in force.
        max: u64,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::ReservedFlags { flags } => {
                write!(f, "reserved frame flag bits set (flags {flags:#04x})")
            }
            FrameError::CommandWithMore => f.write_str("command frame with MORE flag"),
            FrameError::LengthOverflow { len } => {
                write!(f, "frame length {len} exceeds 2^63-1")
            }
            FrameError::ZeroLength => f.write_str("ZMTP 1.0 frame of length 0 (no flags octet)"),
            FrameError::TooLarge { len, max } => {
                write!(f, "frame of {len} bytes exceeds the maximum of {max}")
            }
        }
    }
}

impl std::error::Error for FrameError {}

/// A malformed READY/INITIATE property list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetadataError {
    /// A property name of length zero.
    EmptyName {
        /// Offset of the name-length byte within the property list.
        offset: usize,
    },
    /// A property name with a character outside `ALPHA | DIGIT | - _ . +`.
    InvalidName {
        /// Offset of the name-length byte within the property list.
        offset: usize,
    },
    /// A name, value length or value runs past the end of the data (this
    /// includes trailing bytes too short to form a property).
    Truncated {
        /// Offset of the property that is cut short.
        offset: usize,
    },
    /// A value length above 2^31-1.
    ValueTooLong {
        /// Offset of the property.
        offset: usize,
        /// The announced value length.
        len: u32,
    },
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetadataError::EmptyName { offset } => {
                write!(f, "empty metadata property name at offset {offset}")
            }
            MetadataError::InvalidName { offset } => {
                write!(f, "invalid metadata property name at offset {offset}")
            }
            MetadataError::Truncated { offset } => {
                write!(f, "truncated metadata property at offset {offset}")
            }
            MetadataError::ValueTooLong { offset, len } => {
                write!(f, "metadata value of {len} bytes at offset {offset} exceeds 2^31-1")
            }
        }
    }
}

impl std::error::Error for MetadataError {}

/// A malformed command frame body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandError {
    /// The body is empty: not even a name length.
    Empty,
    /// The command name has length zero.
    EmptyName,
    /// The name length runs past the end of the body.
    NameTruncated {
        /// The announced name length.
        name_len: u8,
        /// Bytes left after the length byte.
        available: usize,
    },
    /// A known command whose data is too short for its fixed fields.
    Truncated {
        /// The command name.
        command: &'static str,
    },
    /// A known command with bytes left over after its fields.
    TrailingData {
        /// The command name.
        command: &'static str,
    },
    /// READY carried a malformed property list.
    Metadata(MetadataError),
    /// JOIN or LEAVE named a group longer than [`crate::command::MAX_GROUP_LEN`].
    GroupTooLong {
        /// The command name.
        command: &'static str,
        /// The group's length.
        len: usize,
    },
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Empty => f.write_str("empty command frame"),
            CommandError::EmptyName => f.write_str("command with empty name"),
            CommandError::NameTruncated { name_len, available } => {
                write!(f, "command name of {name_len} bytes but only {available} bytes follow")
            }
            CommandError::Truncated { command } => write!(f, "truncated {command} command"),
            CommandError::TrailingData { command } => {
                write!(f, "trailing bytes after {command} command")
            }
            CommandError::Metadata(e) => write!(f, "malformed READY: {e}"),
            CommandError::GroupTooLong { command, len } => {
                write!(f, "{command} group of {len} bytes (at most 255)")
            }
        }
    }
}

impl std::error::Error for CommandError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CommandError::Metadata(e) => Some(e),
            _ => None,
        }
    }
}

impl From<MetadataError> for CommandError {
    fn from(e: MetadataError) -> Self {
        CommandError::Metadata(e)
    }
}

/// Why a handshake failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandshakeError {
    /// The greeting looks versioned (byte 9 has bit 0 set) but is not the
    /// ZMTP signature `FF .. 7F`.
    BadSignature,
    /// A ZMTP 1.0 or 2.0 peer met a socket with a security mechanism (PLAIN,
    /// CURVE) or a ZAP domain: those revisions have no mechanism handshake, so
    /// the peer is refused, as libzmq refuses it (`zap_enabled`).
    LegacySecurity {
        /// The peer's revision.
        version: Version,
    },
    /// A ZMTP 1.0 or 2.0 peer met a socket of a type added after 2.0 (the
    /// draft types, STREAM): no such peer can be its counterpart.
    LegacySocketType {
        /// Our socket type.
        ours: SocketType,
        /// The peer's revision.
        version: Version,
    },
    /// A greeting parsed as one revision carries another's revision byte (a
    /// 2.0 greeting whose byte 10 is not 1, a 3.x greeting whose byte 10 is
    /// below 2).
    UnexpectedRevision {
        /// The revision byte found.
        revision: u8,
    },
    /// The peer announced a known security mechanism other than ours.
    MechanismMismatch,
    /// The peer announced a mechanism name we do not know at all.
    UnknownMechanism,
    /// Both peers claim the same client/server role where the mechanism
    /// needs one of each (not produced by NULL, which has no roles).
    AsServerConflict,
    /// The peer's socket type cannot talk to ours.
    IncompatibleSocketType {
        /// Our socket type.
        ours: SocketType,
        /// The peer's socket type.
        peer: SocketType,
    },
    /// The peer's READY had no "Socket-Type" property.
    MissingSocketType,
    /// The peer's "Socket-Type" is not a socket type name.
    UnknownSocketType,
    /// The peer's "Identity" is longer than 255 bytes.
    IdentityTooLong {
        /// Its length.
        len: usize,
    },
    /// A bad frame header during the handshake.
    Frame(FrameError),
    /// A malformed command during the handshake.
    Command(CommandError),
    /// A malformed property list in READY.
    Metadata(MetadataError),
    /// A well-formed command that has no place at this point of the handshake.
    UnexpectedCommand(Bytes),
    /// A message (non-command) frame before the handshake completed.
    UnexpectedMessage,
    /// The peer refused us with an ERROR command.
    PeerError {
        /// The reason the peer gave.
        reason: Bytes,
    },
    /// A PLAIN or CURVE command whose size or layout is wrong (e.g. a CURVE
    /// HELLO without its anti-amplification padding).
    MalformedCommand {
        /// The command name.
        command: &'static str,
    },
    /// A CURVE HELLO announcing a CurveZMQ version other than 1.0.
    UnsupportedCurveVersion {
        /// Announced major version.
        major: u8,
        /// Announced minor version.
        minor: u8,
    },
    /// A CURVE handshake box that does not open: forged or tampered with,
    /// or (HELLO on the server, WELCOME on the client) sealed for a server
    /// key that is not the server's.
    Cryptographic {
        /// The command whose box failed.
        command: &'static str,
    },
    /// A CURVE INITIATE whose cookie does not decrypt or does not belong to
    /// this connection.
    BadCookie,
    /// A CURVE INITIATE whose vouch does not open or does not vouch for this
    /// connection's short-term key and our server key.
    BadVouch,
    /// A PLAIN server has nobody to ask whether the credentials are good (no ZAP handler):
    /// refused, as libzmq refuses, rather than accepting every password.
    NoZapHandler,
    /// A CURVE short nonce that did not increase.
    InvalidNonce,
    /// Our ZAP handler refused the peer with this status code (300, 400 or 500) and text.
    ZapRefused {
        /// The ZAP status code.
        status: u16,
        /// The handler's status text.
        text: Bytes,
    },
    /// Our ZAP handler sent a malformed reply (libzmq: a protocol error).
    ZapReply(crate::zap::ZapError),
}

impl HandshakeError {
    /// True for failures libzmq reports as `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL`:
    /// the peer broke the protocol or announced something we cannot accept.
    pub fn is_protocol_error(&self) -> bool {
        !matches!(self, HandshakeError::PeerError { .. } | HandshakeError::ZapRefused { .. })
    }

    /// True for failures libzmq reports as `ZMQ_EVENT_HANDSHAKE_FAILED_AUTH`:
    /// the peer sent ERROR with a ZAP status code (300, 400 or 500), or our own
    /// ZAP handler refused the peer.
    pub fn is_auth_failure(&self) -> bool {
        matches!(self, HandshakeError::NoZapHandler) || self.zap_status_code().is_some()
    }

    /// The ZAP status code of a peer ERROR whose reason is "300", "400" or
    /// "500", as libzmq's `handle_error_reason` recognises them. A peer ERROR
    /// with any other reason is neither a protocol nor an auth failure:
    /// libzmq reports it as `ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL`.
    pub fn zap_status_code(&self) -> Option<u16> {
        match self {
            HandshakeError::ZapRefused { status, .. } => Some(*status),
            HandshakeError::PeerError { reason } => match reason.as_ref() {
                [d @ b'3'..=b'5', b'0', b'0'] => Some(u16::from(d - b'0') * 100),
                _ => None,
            },
            _ => None,
        }
    }
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::BadSignature => f.write_str("bad ZMTP greeting signature"),
            HandshakeError::LegacySecurity { version } => {
                write!(f, "ZMTP {} peer refused: the socket uses a security mechanism or a ZAP domain", version.as_str())
            }
            HandshakeError::LegacySocketType { ours, version } => {
                write!(f, "ZMTP {} peer refused: socket type {ours} did not exist before ZMTP 3", version.as_str())
            }
            HandshakeError::UnexpectedRevision { revision } => write!(f, "unexpected ZMTP revision byte {revision}"),
            HandshakeError::MechanismMismatch => f.write_str("security mechanism mismatch"),
            HandshakeError::UnknownMechanism => f.write_str("unknown security mechanism"),
            HandshakeError::AsServerConflict => f.write_str("both peers claim the same role"),
            HandshakeError::IncompatibleSocketType { ours, peer } => {
                write!(f, "socket type {peer} cannot connect to {ours}")
            }
            HandshakeError::MissingSocketType => f.write_str("peer sent no Socket-Type"),
            HandshakeError::UnknownSocketType => f.write_str("peer sent an unknown Socket-Type"),
            HandshakeError::IdentityTooLong { len } => {
                write!(f, "peer Identity of {len} bytes exceeds 255")
            }
            HandshakeError::Frame(e) => write!(f, "handshake: {e}"),
            HandshakeError::Command(e) => write!(f, "handshake: {e}"),
            HandshakeError::Metadata(e) => write!(f, "handshake: {e}"),
            HandshakeError::UnexpectedCommand(name) => {
                write!(f, "unexpected command {:?} during handshake", name.escape_ascii().to_string())
            }
            HandshakeError::UnexpectedMessage => f.write_str("message frame during handshake"),
            HandshakeError::PeerError { reason } => {
                write!(f, "peer refused the connection: {}", reason.escape_ascii())
            }
            HandshakeError::MalformedCommand { command } => {
                write!(f, "malformed {command} command")
            }
            HandshakeError::UnsupportedCurveVersion { major, minor } => {
                write!(f, "unsupported CurveZMQ version {major}.{minor}")
            }
            HandshakeError::Cryptographic { command } => {
                write!(f, "{command} box does not open (tampered, or wrong server key)")
            }
            HandshakeError::BadCookie => f.write_str("INITIATE carries an invalid cookie"),
            HandshakeError::BadVouch => f.write_str("INITIATE carries an invalid vouch"),
            HandshakeError::NoZapHandler => f.write_str("PLAIN credentials cannot be checked: no ZAP handler"),
            HandshakeError::InvalidNonce => f.write_str("CURVE nonce did not increase"),
            HandshakeError::ZapRefused { status, text } => {
                write!(f, "ZAP handler refused the peer: {status} {}", text.escape_ascii())
            }
            HandshakeError::ZapReply(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for HandshakeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HandshakeError::Frame(e) => Some(e),
            HandshakeError::Command(e) => Some(e),
            HandshakeError::Metadata(e) => Some(e),
            HandshakeError::ZapReply(e) => Some(e),
            _ => None,
        }
    }
}

impl From<FrameError> for HandshakeError {
    fn from(e: FrameError) -> Self {
        HandshakeError::Frame(e)
    }
}

impl From<CommandError> for HandshakeError {
    fn from(e: CommandError) -> Self {
        // A malformed READY is a metadata problem, which libzmq reports
        // separately (ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA).
        match e {
            CommandError::Metadata(m) => HandshakeError::Metadata(m),
            other => HandshakeError::Command(other),
        }
    }
}

impl From<MetadataError> for HandshakeError {
    fn from(e: MetadataError) -> Self {
        HandshakeError::Metadata(e)
    }
}

/// A CURVE MESSAGE that cannot be accepted in the data phase. Every variant
/// ends the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CipherError {
    /// A frame that is not a MESSAGE command while CURVE is active.
    NotMessage,
    /// A MESSAGE too short to hold its nonce, MAC and flags.
    Malformed,
    /// A nonce not above the last one accepted: a replayed or reordered
    /// MESSAGE.
    InvalidNonce {
        /// The nonce received.
        nonce: u64,
        /// The last nonce accepted.
        last: u64,
    },
    /// The box does not open: the ciphertext or its MAC was altered.
    Tampered,
    /// The decrypted flags mark a command with MORE set, or set bits other
    /// than MORE and COMMAND.
    BadFlags {
        /// The flags byte.
        flags: u8,
    },
    /// Our nonce counter is exhausted; sending more would reuse a nonce.
    NonceExhausted,
}

impl fmt::Display for CipherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CipherError::NotMessage => f.write_str("frame is not a CURVE MESSAGE"),
            CipherError::Malformed => f.write_str("truncated CURVE MESSAGE"),
            CipherError::InvalidNonce { nonce, last } => {
                write!(f, "CURVE MESSAGE nonce {nonce} not above {last} (replay or reorder)")
            }
            CipherError::Tampered => f.write_str("CURVE MESSAGE box does not open"),
            CipherError::BadFlags { flags } => {
                write!(f, "CURVE MESSAGE with invalid flags {flags:#04x}")
            }
            CipherError::NonceExhausted => f.write_str("CURVE nonce space exhausted"),
        }
    }
}

impl std::error::Error for CipherError {}

/// Any error a [`Connection`](crate::Connection) can report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The handshake failed.
    Handshake(HandshakeError),
    /// A bad frame header in the data phase.
    Frame(FrameError),
    /// A malformed command in the data phase.
    Command(CommandError),
    /// A CURVE MESSAGE that was refused in the data phase.
    Cipher(CipherError),
    /// A command that belongs to the handshake (READY) arrived in the data phase.
    UnexpectedCommand(Bytes),
    /// The peer sent ERROR in the data phase: it is closing the connection.
    Peer {
        /// The peer's reason, at most 255 bytes.
        reason: Bytes,
    },
    /// The caller's [`Sink`](crate::data::Sink) refused what the peer sent.
    Refused,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Handshake(e) => e.fmt(f),
            Error::Frame(e) => e.fmt(f),
            Error::Command(e) => e.fmt(f),
            Error::Cipher(e) => e.fmt(f),
            Error::UnexpectedCommand(name) => write!(f, "unexpected {} command in the data phase", String::from_utf8_lossy(name)),
            Error::Peer { reason } => write!(f, "the peer closed the connection: {}", String::from_utf8_lossy(reason)),
            Error::Refused => f.write_str("the peer's traffic was refused"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Handshake(e) => Some(e),
            Error::Frame(e) => Some(e),
            Error::Command(e) => Some(e),
            Error::Cipher(e) => Some(e),
            Error::UnexpectedCommand(_) | Error::Peer { .. } | Error::Refused => None,
        }
    }
}

impl From<HandshakeError> for Error {
    fn from(e: HandshakeError) -> Self {
        Error::Handshake(e)
    }
}

impl From<FrameError> for Error {
    fn from(e: FrameError) -> Self {
        Error::Frame(e)
    }
}

impl From<CipherError> for Error {
    fn from(e: CipherError) -> Self {
        Error::Cipher(e)
    }
}

impl From<CommandError> for Error {
    fn from(e: CommandError) -> Self {
        Error::Command(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_classification() {
        let auth = HandshakeError::PeerError { reason: Bytes::from_static(b"400") };
        assert!(auth.is_auth_failure());
        assert!(!auth.is_protocol_error());
        assert_eq!(auth.zap_status_code(), Some(400));
        let other = HandshakeError::PeerError { reason: Bytes::from_static(b"go away") };
        assert!(!other.is_auth_failure() && !other.is_protocol_error());
        assert_eq!(HandshakeError::PeerError { reason: Bytes::from_static(b"200") }.zap_status_code(), None);
        assert!(HandshakeError::MechanismMismatch.is_protocol_error());
        assert!(!HandshakeError::MechanismMismatch.is_auth_failure());
        let refused = HandshakeError::ZapRefused { status: 300, text: Bytes::from_static(b"later") };
        assert!(refused.is_auth_failure() && !refused.is_protocol_error());
        assert_eq!(refused.zap_status_code(), Some(300));
        assert!(refused.to_string().contains("300 later"));
        let bad = HandshakeError::ZapReply(crate::zap::ZapError::Version);
        assert!(bad.is_protocol_error() && !bad.is_auth_failure());
    }

    #[test]
    fn conversions_and_display() {
        let e: HandshakeError = CommandError::Metadata(MetadataError::EmptyName { offset: 0 }).into();
        assert_eq!(e, HandshakeError::Metadata(MetadataError::EmptyName { offset: 0 }));
        let e: HandshakeError = CommandError::Empty.into();
        assert_eq!(e, HandshakeError::Command(CommandError::Empty));
        let e: Error = FrameError::CommandWithMore.into();
        assert!(e.to_string().contains("MORE"));
        assert!(std::error::Error::source(&e).is_some());
        let all = [
            HandshakeError::BadSignature,
            HandshakeError::LegacySecurity { version: Version::V2_0 },
            HandshakeError::LegacySocketType { ours: SocketType::Client, version: Version::V1_0 },
            HandshakeError::UnexpectedRevision { revision: 3 },
            HandshakeError::MechanismMismatch,
            HandshakeError::UnknownMechanism,
            HandshakeError::AsServerConflict,
            HandshakeError::IncompatibleSocketType { ours: SocketType::Req, peer: SocketType::Req },
            HandshakeError::MissingSocketType,
            HandshakeError::UnknownSocketType,
            HandshakeError::IdentityTooLong { len: 256 },
            HandshakeError::Frame(FrameError::LengthOverflow { len: u64::MAX }),
            HandshakeError::Command(CommandError::EmptyName),
            HandshakeError::Metadata(MetadataError::ValueTooLong { offset: 0, len: u32::MAX }),
            HandshakeError::UnexpectedCommand(Bytes::from_static(b"PING")),
            HandshakeError::UnexpectedMessage,
        ];
        for e in all {
            assert!(!e.to_string().is_empty());
            assert!(e.is_protocol_error());
        }
    }
}
