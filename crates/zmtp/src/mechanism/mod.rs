//! Security mechanisms: what runs between the greeting and the data phase.
//!
//! [`Mechanism`] is the configuration (which mechanism, with which keys);
//! [`MechanismState`] is the running handshake, one variant per mechanism,
//! each with its own state type. The handshake drives every mechanism through
//! the same three calls: `start` once the greetings are exchanged (queue the
//! first commands, e.g. READY or HELLO), `on_command` for each command frame
//! the peer sends, and the result [`Status::Complete`] carrying the peer's
//! metadata. PLAIN and CURVE slot in as further variants; CURVE will also need
//! to wrap data frames after the handshake, which is why the state is kept by
//! value rather than dropped when the handshake completes.

pub mod null;

use bytes::Bytes;

use crate::error::HandshakeError;
use crate::metadata::Metadata;

/// The security mechanism a socket uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// No authentication, no confidentiality.
    Null,
}

impl Mechanism {
    /// The name announced in the greeting.
    pub fn name(&self) -> &'static [u8] {
        match self {
            Mechanism::Null => b"NULL",
        }
    }

    /// Whether the greeting's as-server flag means anything for this
    /// mechanism. For NULL it must be zero and is ignored (RFC 23).
    pub fn has_roles(&self) -> bool {
        match self {
            Mechanism::Null => false,
        }
    }

    /// Starts this mechanism's handshake state machine.
    pub(crate) fn start(&self) -> MechanismState {
        match self {
            Mechanism::Null => MechanismState::Null(null::NullState::new()),
        }
    }
}

/// Names of mechanisms defined by ZeroMQ RFCs (and libzmq's GSSAPI), used to
/// tell a mismatch from a name we have never heard of.
pub const KNOWN_MECHANISMS: [&[u8]; 4] = [b"NULL", b"PLAIN", b"CURVE", b"GSSAPI"];

/// Progress reported by a mechanism after a peer command.
#[derive(Debug)]
pub(crate) enum Status {
    /// More commands are needed. NULL finishes with its first command;
    /// multi-step mechanisms (PLAIN, CURVE) will return this.
    #[allow(dead_code)]
    InProgress,
    /// The handshake succeeded; the peer's metadata.
    Complete(Metadata),
}

/// A running mechanism handshake.
#[derive(Debug)]
pub(crate) enum MechanismState {
    Null(null::NullState),
}

impl MechanismState {
    /// Called once both greetings are in: queue our opening commands.
    pub(crate) fn start(&mut self, ours: &Metadata, out: &mut Vec<u8>) {
        match self {
            MechanismState::Null(s) => s.start(ours, out),
        }
    }

    /// Processes one command frame body from the peer.
    pub(crate) fn on_command(
        &mut self,
        body: &Bytes,
        out: &mut Vec<u8>,
    ) -> Result<Status, HandshakeError> {
        match self {
            MechanismState::Null(s) => s.on_command(body, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_is_known_and_roleless() {
        assert_eq!(Mechanism::Null.name(), b"NULL");
        assert!(!Mechanism::Null.has_roles());
        assert!(KNOWN_MECHANISMS.contains(&Mechanism::Null.name()));
        assert!(matches!(Mechanism::Null.start(), MechanismState::Null(_)));
    }
}
