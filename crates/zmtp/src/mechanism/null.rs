//! The NULL mechanism (RFC 23): each side sends READY with its metadata and
//! the handshake is done when the peer's READY arrives. An ERROR from the
//! peer ends the handshake; any other command is a protocol error.

use bytes::Bytes;

use super::Status;
use crate::command::Command;
use crate::error::HandshakeError;
use crate::metadata::Metadata;

/// NULL handshake state. Its states are few enough that a phase enum says
/// everything: we can only receive READY after sending ours.
#[derive(Debug)]
pub(crate) struct NullState {
    phase: Phase,
}

#[derive(Debug, PartialEq, Eq)]
enum Phase {
    /// Greetings not yet exchanged.
    Idle,
    /// Our READY is queued; waiting for the peer's.
    ReadySent,
    /// The peer's READY arrived.
    Done,
}

impl NullState {
    pub(crate) fn new() -> NullState {
        NullState { phase: Phase::Idle }
    }

    pub(crate) fn start(&mut self, ours: &Metadata, out: &mut Vec<u8>) {
        if self.phase == Phase::Idle {
            Command::Ready(ours.clone()).encode(out);
            self.phase = Phase::ReadySent;
        }
    }

    pub(crate) fn on_command(&mut self, body: &Bytes, _out: &mut Vec<u8>) -> Result<Status, HandshakeError> {
        if self.phase != Phase::ReadySent {
            // Only reachable if a caller feeds commands out of order.
            return Err(HandshakeError::UnexpectedCommand(command_name(body)));
        }
        match Command::parse_bytes(body)? {
            Command::Ready(meta) => {
                self.phase = Phase::Done;
                Ok(Status::Complete(meta))
            }
            Command::Error { reason } => Err(HandshakeError::PeerError { reason }),
            other => Err(HandshakeError::UnexpectedCommand(Bytes::copy_from_slice(other.name()))),
        }
    }
}

fn command_name(body: &Bytes) -> Bytes {
    let n = body.first().map_or(0, |&n| usize::from(n));
    body.get(1..1 + n).map_or_else(Bytes::new, Bytes::copy_from_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(cmd: &Command) -> Bytes {
        let mut b = Vec::new();
        cmd.encode_body(&mut b);
        Bytes::from(b)
    }

    #[test]
    fn ready_completes() {
        let mut s = NullState::new();
        let mut out = Vec::new();
        let mut meta = Metadata::new();
        meta.insert("Socket-Type", &b"PAIR"[..]);
        s.start(&meta, &mut out);
        assert_eq!(&out[..8], b"\x04\x1a\x05READY");
        // A second start does not queue a second READY.
        s.start(&meta, &mut out);
        assert_eq!(out.len(), 2 + 26);
        match s.on_command(&body(&Command::Ready(meta.clone())), &mut out) {
            Ok(Status::Complete(m)) => assert_eq!(m, meta),
            other => panic!("{other:?}"),
        }
        assert!(matches!(s.on_command(&body(&Command::Ready(meta)), &mut out), Err(HandshakeError::UnexpectedCommand(_))));
    }

    #[test]
    fn error_and_unexpected() {
        let mut s = NullState::new();
        let mut out = Vec::new();
        s.start(&Metadata::new(), &mut out);
        let err = s.on_command(&body(&Command::Error { reason: Bytes::from_static(b"no") }), &mut out);
        assert!(matches!(err, Err(HandshakeError::PeerError { reason }) if reason == "no"));
        let mut s = NullState::new();
        s.start(&Metadata::new(), &mut out);
        let err = s.on_command(&body(&Command::Subscribe(Bytes::new())), &mut out);
        assert!(matches!(err, Err(HandshakeError::UnexpectedCommand(n)) if n == "SUBSCRIBE"));
        let mut s = NullState::new();
        assert!(matches!(s.on_command(&Bytes::new(), &mut out), Err(HandshakeError::UnexpectedCommand(_))));
    }
}
