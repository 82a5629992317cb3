//! Security mechanisms: what runs between the greeting and the data phase.
//!
//! [`Mechanism`] is the configuration (which mechanism, which role, which
//! keys); [`MechanismState`] is the running handshake, one variant per
//! mechanism and role, each with its own state type. The handshake drives
//! every mechanism through the same calls: `start` once the greetings are
//! exchanged (queue the first commands, e.g. READY or HELLO), `on_command`
//! for each command frame the peer sends, and the result
//! [`Status::Complete`] carrying the peer's metadata. CURVE also wraps every
//! frame after the handshake; `take_cipher` hands that job to the caller as
//! a [`curve::Cipher`].
//!
//! Secrets (PLAIN passwords, CURVE secret keys, session keys) are wiped when
//! dropped and compared in constant time; their `Debug` output is redacted.

pub mod curve;
#[cfg(all(fuzzing, feature = "fast-cipher"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod null;
pub mod plain;
#[cfg(feature = "fast-cipher")]
mod poly1305_scalar;
#[cfg(feature = "fast-cipher")]
mod salsa20_lanes;
mod secretbox;
#[cfg(feature = "fast-cipher")]
mod wipe;

use bytes::Bytes;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::error::HandshakeError;
use crate::metadata::Metadata;

pub use curve::{Cipher, CurveKeyPair, CurveSecretKey};

/// The security mechanism a socket uses, with its role and credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// No authentication, no confidentiality.
    Null,
    /// PLAIN client (RFC 24): sends a username and password in clear text.
    PlainClient(PlainCredentials),
    /// PLAIN server: accepts (or, with ZAP, checks) the client's credentials.
    PlainServer,
    /// CURVE client (RFC 26): knows the server's long-term public key.
    CurveClient(CurveClientKeys),
    /// CURVE server: holds its long-term secret key.
    CurveServer(CurveServerKeys),
}

/// A PLAIN client's username and password (each at most 255 bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct PlainCredentials {
    username: Bytes,
    password: SecretBytes,
}

impl PlainCredentials {
    /// `None` if either is longer than 255 bytes (their length fields are
    /// one byte).
    pub fn new(username: &[u8], password: &[u8]) -> Option<PlainCredentials> {
        if username.len() > 255 || password.len() > 255 {
            return None;
        }
        Some(PlainCredentials { username: Bytes::copy_from_slice(username), password: SecretBytes::new(password) })
    }

    /// The username.
    pub fn username(&self) -> &[u8] {
        &self.username
    }

    /// The password.
    pub fn password(&self) -> &[u8] {
        self.password.expose()
    }
}

impl std::fmt::Debug for PlainCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainCredentials").field("username", &self.username).field("password", &"<redacted>").finish()
    }
}

/// Bytes that are wiped on drop, compared in constant time and never
/// printed.
#[derive(Clone, Default)]
pub struct SecretBytes(Zeroizing<Vec<u8>>);

impl SecretBytes {
    /// Copies `v` into wiped-on-drop memory.
    pub fn new(v: &[u8]) -> SecretBytes {
        SecretBytes(Zeroizing::new(v.to_vec()))
    }

    /// The secret bytes.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl PartialEq for SecretBytes {
    fn eq(&self, other: &Self) -> bool {
        // Lengths are not secret; contents are compared without early exit.
        self.0.len() == other.0.len() && bool::from(self.0.ct_eq(&other.0))
    }
}

impl Eq for SecretBytes {}

impl std::fmt::Debug for SecretBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// A CURVE client's keys: its long-term key pair and the server's long-term
/// public key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurveClientKeys {
    /// Our long-term public key (C), sent inside INITIATE.
    pub public: [u8; 32],
    /// Our long-term secret key (c), which signs the vouch.
    pub secret: CurveSecretKey,
    /// The server's long-term public key (S).
    pub server: [u8; 32],
}

/// A CURVE server's long-term secret key (its public key is derived).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurveServerKeys {
    /// Our long-term secret key (s).
    pub secret: CurveSecretKey,
}

impl Mechanism {
    /// The name announced in the greeting.
    pub fn name(&self) -> &'static [u8] {
        match self {
            Mechanism::Null => b"NULL",
            Mechanism::PlainClient(_) | Mechanism::PlainServer => b"PLAIN",
            Mechanism::CurveClient(_) | Mechanism::CurveServer(_) => b"CURVE",
        }
    }

    /// Whether the greeting's as-server flag means anything for this
    /// mechanism. For NULL it must be zero and is ignored (RFC 23).
    pub fn has_roles(&self) -> bool {
        !matches!(self, Mechanism::Null)
    }

    /// Whether we are the server of a mechanism with roles.
    pub fn is_server(&self) -> bool {
        matches!(self, Mechanism::PlainServer | Mechanism::CurveServer(_))
    }

    /// libzmq's ZMQ_MECHANISM value: 0 NULL, 1 PLAIN, 2 CURVE.
    pub fn number(&self) -> i32 {
        match self {
            Mechanism::Null => 0,
            Mechanism::PlainClient(_) | Mechanism::PlainServer => 1,
            Mechanism::CurveClient(_) | Mechanism::CurveServer(_) => 2,
        }
    }

    /// Starts this mechanism's handshake state machine; `zap` is what a server does at the
    /// point where it would ask ZAP.
    pub(crate) fn start(&self, zap: ZapMode) -> MechanismState {
        match self {
            Mechanism::Null => MechanismState::Null(null::NullState::new()),
            Mechanism::PlainClient(c) => MechanismState::PlainClient(plain::Client::new(c.clone())),
            Mechanism::PlainServer => MechanismState::PlainServer(plain::Server::new(zap)),
            Mechanism::CurveClient(k) => MechanismState::CurveClient(curve::Client::new(k)),
            Mechanism::CurveServer(k) => MechanismState::CurveServer(curve::Server::new(k, zap)),
        }
    }
}

/// Names of mechanisms defined by ZeroMQ RFCs (and libzmq's GSSAPI), used to
/// tell a mismatch from a name we have never heard of.
pub const KNOWN_MECHANISMS: [&[u8]; 4] = [b"NULL", b"PLAIN", b"CURVE", b"GSSAPI"];

/// What a server mechanism does where libzmq asks ZAP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ZapMode {
    /// A handler is bound: pause with [`Status::Zap`] until its verdict.
    Ask,
    /// No handler and none required: proceed as if approved.
    Skip,
    /// No handler but one is required: refuse the client.
    Refuse,
}

/// Progress reported by a mechanism after a peer command.
#[derive(Debug)]
pub(crate) enum Status {
    /// More commands are needed.
    InProgress,
    /// The server must ask ZAP with these credentials before going on; resume with
    /// [`MechanismState::zap_approved`].
    Zap(Vec<Bytes>),
    /// The handshake succeeded; the peer's metadata.
    Complete(Metadata),
}

/// A running mechanism handshake.
#[derive(Debug)]
pub(crate) enum MechanismState {
    Null(null::NullState),
    PlainClient(plain::Client),
    PlainServer(plain::Server),
    CurveClient(curve::Client),
    CurveServer(curve::Server),
}

impl MechanismState {
    /// Called once both greetings are in: queue our opening commands.
    pub(crate) fn start(&mut self, ours: &Metadata, out: &mut Vec<u8>) {
        match self {
            MechanismState::Null(s) => s.start(ours, out),
            MechanismState::PlainClient(s) => s.start(ours, out),
            MechanismState::PlainServer(s) => s.start(ours),
            MechanismState::CurveClient(s) => s.start(ours, out),
            MechanismState::CurveServer(s) => s.start(ours),
        }
    }

    /// Processes one command frame body from the peer.
    pub(crate) fn on_command(&mut self, body: &Bytes, out: &mut Vec<u8>) -> Result<Status, HandshakeError> {
        match self {
            MechanismState::Null(s) => s.on_command(body, out),
            MechanismState::PlainClient(s) => s.on_command(body, out),
            MechanismState::PlainServer(s) => s.on_command(body, out),
            MechanismState::CurveClient(s) => s.on_command(body, out),
            MechanismState::CurveServer(s) => s.on_command(body, out),
        }
    }

    /// The ZAP handler approved the credentials this state paused for: go on.
    pub(crate) fn zap_approved(&mut self, out: &mut Vec<u8>) -> Result<Status, HandshakeError> {
        match self {
            MechanismState::PlainServer(s) => s.zap_approved(out),
            MechanismState::CurveServer(s) => s.zap_approved(out),
            // NULL's ZAP step is the handshake's (it delays READY); clients never ask.
            _ => Ok(Status::InProgress),
        }
    }

    /// The data-phase cipher, once a CURVE handshake is complete.
    pub(crate) fn take_cipher(&mut self) -> Option<Cipher> {
        match self {
            MechanismState::CurveClient(s) => s.take_cipher(),
            MechanismState::CurveServer(s) => s.take_cipher(),
            _ => None,
        }
    }
}

/// Splits a command body into its name and data.
pub(crate) fn split_command(body: &[u8]) -> Result<(&[u8], &[u8]), HandshakeError> {
    use crate::error::CommandError;
    let Some(&n) = body.first() else {
        return Err(CommandError::Empty.into());
    };
    if n == 0 {
        return Err(CommandError::EmptyName.into());
    }
    let end = 1 + usize::from(n);
    if body.len() < end {
        return Err(CommandError::NameTruncated { name_len: n, available: body.len() - 1 }.into());
    }
    Ok((&body[1..end], &body[end..]))
}

/// The ERROR a peer sent during a PLAIN or CURVE handshake, or the error for
/// a command that has no place here.
pub(crate) fn peer_error_or_unexpected(body: &Bytes) -> HandshakeError {
    if let Some(reason) = libzmq_plain_error_reason(body) {
        return HandshakeError::PeerError { reason };
    }
    match crate::command::Command::parse_bytes(body) {
        Ok(crate::command::Command::Error { reason }) => HandshakeError::PeerError { reason },
        Ok(other) => HandshakeError::UnexpectedCommand(Bytes::copy_from_slice(other.name())),
        Err(e) => e.into(),
    }
}

/// The reason of the ERROR libzmq 4.3's PLAIN server actually sends. Its prefix is the C
/// literal `"\x05ERROR"`, and a C hex escape takes every hex digit that follows, `E` included:
/// the bytes on the wire are `0x5E "RROR"`, a 5-byte name with no length, then the reason's
/// length and the reason (`\x5eRROR\x03400` after a ZAP refusal). libzmq's PLAIN client
/// matches the same five bytes and reports the status code (HANDSHAKE_FAILED_AUTH 400), so a
/// client of ours reads it as that ERROR too. As libzmq's client, bytes after the reason are
/// ignored; a reason longer than what follows is not this command.
pub(crate) fn libzmq_plain_error_reason(body: &Bytes) -> Option<Bytes> {
    const PREFIX: &[u8] = b"\x5eRROR";
    let rest = body.strip_prefix(PREFIX)?;
    let (&len, reason) = rest.split_first()?;
    let len = usize::from(len);
    (len <= reason.len()).then(|| body.slice(PREFIX.len() + 1..PREFIX.len() + 1 + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roles_and_numbers() {
        assert_eq!(Mechanism::Null.name(), b"NULL");
        assert!(!Mechanism::Null.has_roles());
        assert!(KNOWN_MECHANISMS.contains(&Mechanism::Null.name()));
        assert!(matches!(Mechanism::Null.start(ZapMode::Skip), MechanismState::Null(_)));
        let creds = PlainCredentials::new(b"admin", b"secret").unwrap();
        let plain = Mechanism::PlainClient(creds.clone());
        assert_eq!((plain.name(), plain.number(), plain.is_server()), (&b"PLAIN"[..], 1, false));
        assert!(Mechanism::PlainServer.is_server() && Mechanism::PlainServer.has_roles());
        let server = Mechanism::CurveServer(CurveServerKeys { secret: CurveSecretKey::generate() });
        assert_eq!((server.name(), server.number(), server.is_server()), (&b"CURVE"[..], 2, true));
        assert!(PlainCredentials::new(&[b'a'; 256], b"").is_none());
        assert!(PlainCredentials::new(b"", &[b'a'; 256]).is_none());
    }

    #[test]
    fn secrets_are_redacted_and_compared() {
        let creds = PlainCredentials::new(b"admin", b"hunter2").unwrap();
        assert!(!format!("{creds:?}").contains("hunter2"));
        assert_eq!(creds.password(), b"hunter2");
        assert_eq!(SecretBytes::new(b"ab"), SecretBytes::new(b"ab"));
        assert_ne!(SecretBytes::new(b"ab"), SecretBytes::new(b"ac"));
        assert_ne!(SecretBytes::new(b"ab"), SecretBytes::new(b"abc"));
    }

    #[test]
    fn split_command_errors() {
        assert!(split_command(b"").is_err());
        assert!(split_command(b"\x00").is_err());
        assert!(split_command(b"\x05HEL").is_err());
        assert_eq!(split_command(b"\x05HELLOx").unwrap(), (&b"HELLO"[..], &b"x"[..]));
    }
}
