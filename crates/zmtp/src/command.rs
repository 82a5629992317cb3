//! Command frames: a body of name length (1 byte), name, then data.
//!
//! ZMTP 3.0 defines READY and ERROR (the NULL handshake); 3.1 adds SUBSCRIBE,
//! CANCEL, PING and PONG. Unknown names are passed up as
//! [`Command::Unknown`] because mechanisms and later revisions define their
//! own commands and libzmq ignores the ones it does not know. Names match
//! case-sensitively, as libzmq compares them with `memcmp`.
//!
//! JOIN and LEAVE are the RADIO/DISH commands (RFC 48, as libzmq's draft sockets send them):
//! a DISH joins or leaves a group, whose name (at most [`MAX_GROUP_LEN`] bytes) is the
//! command's whole data.
//!
//! A 3.0 peer does not understand SUBSCRIBE/CANCEL commands; subscriptions to
//! it travel as message frames starting with 0x01 or 0x00, which
//! [`encode_subscription`] and [`parse_legacy_subscription`] handle.

use bytes::Bytes;

use crate::error::CommandError;
use crate::frame::{encode_frame, encode_header};
use crate::metadata::Metadata;
use crate::version::Version;

/// Maximum ERROR reason length (its length field is one byte).
pub const MAX_ERROR_REASON: usize = 255;
/// Maximum PING/PONG context length (RFC 37).
pub const MAX_PING_CONTEXT: usize = 16;
/// Maximum RADIO/DISH group length (libzmq 4.3's `ZMQ_GROUP_MAX_LENGTH`).
pub const MAX_GROUP_LEN: usize = 255;

/// A parsed command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// READY with the sender's metadata (NULL and PLAIN handshakes).
    Ready(Metadata),
    /// ERROR: the sender refuses the connection.
    Error {
        /// Human-readable reason, at most 255 bytes.
        reason: Bytes,
    },
    /// SUBSCRIBE (3.1) with the topic prefix.
    Subscribe(Bytes),
    /// CANCEL (3.1) with the topic prefix.
    Cancel(Bytes),
    /// PING (3.1) heartbeat.
    Ping {
        /// Time-to-live hint in deciseconds (0 = none).
        ttl: u16,
        /// Context to echo in PONG, at most 16 bytes.
        context: Bytes,
    },
    /// PONG (3.1) heartbeat reply.
    Pong {
        /// The PING's context.
        context: Bytes,
    },
    /// JOIN (RADIO/DISH): the DISH joins a group.
    Join(Bytes),
    /// LEAVE (RADIO/DISH): the DISH leaves a group.
    Leave(Bytes),
    /// Any other command; the caller decides whether it is acceptable.
    Unknown {
        /// Command name.
        name: Bytes,
        /// Command data.
        data: Bytes,
    },
}

impl Command {
    /// The command name as it appears on the wire.
    pub fn name(&self) -> &[u8] {
        match self {
            Command::Ready(_) => b"READY",
            Command::Error { .. } => b"ERROR",
            Command::Subscribe(_) => b"SUBSCRIBE",
            Command::Cancel(_) => b"CANCEL",
            Command::Ping { .. } => b"PING",
            Command::Pong { .. } => b"PONG",
            Command::Join(_) => b"JOIN",
            Command::Leave(_) => b"LEAVE",
            Command::Unknown { name, .. } => name,
        }
    }

    /// Parses a command frame body, copying it.
    pub fn parse(body: &[u8]) -> Result<Command, CommandError> {
        Command::parse_bytes(&Bytes::copy_from_slice(body))
    }

    /// Parses a command frame body; payloads share `body`'s allocation.
    ///
    /// PING contexts longer than 16 bytes are truncated to 16, as libzmq
    /// does before echoing them; ERROR must contain exactly its reason.
    pub fn parse_bytes(body: &Bytes) -> Result<Command, CommandError> {
        let Some(&name_len) = body.first() else {
            return Err(CommandError::Empty);
        };
        if name_len == 0 {
            return Err(CommandError::EmptyName);
        }
        let name_end = 1 + usize::from(name_len);
        if body.len() < name_end {
            return Err(CommandError::NameTruncated { name_len, available: body.len() - 1 });
        }
        let data = body.slice(name_end..);
        Ok(match &body[1..name_end] {
            b"READY" => Command::Ready(Metadata::parse_bytes(&data)?),
            b"ERROR" => {
                let Some(&len) = data.first() else {
                    return Err(CommandError::Truncated { command: "ERROR" });
                };
                let end = 1 + usize::from(len);
                if data.len() < end {
                    return Err(CommandError::Truncated { command: "ERROR" });
                }
                if data.len() > end {
                    return Err(CommandError::TrailingData { command: "ERROR" });
                }
                Command::Error { reason: data.slice(1..end) }
            }
            b"SUBSCRIBE" => Command::Subscribe(data),
            b"CANCEL" => Command::Cancel(data),
            b"PING" => {
                if data.len() < 2 {
                    return Err(CommandError::Truncated { command: "PING" });
                }
                let ttl = u16::from_be_bytes([data[0], data[1]]);
                let end = data.len().min(2 + MAX_PING_CONTEXT);
                Command::Ping { ttl, context: data.slice(2..end) }
            }
            b"PONG" => Command::Pong { context: data },
            b"JOIN" | b"LEAVE" => {
                let join = &body[1..name_end] == b"JOIN";
                let command = if join { "JOIN" } else { "LEAVE" };
                if data.len() > MAX_GROUP_LEN {
                    return Err(CommandError::GroupTooLong { command, len: data.len() });
                }
                if join {
                    Command::Join(data)
                } else {
                    Command::Leave(data)
                }
            }
            _ => Command::Unknown { name: body.slice(1..name_end), data },
        })
    }

    /// Appends the body (name length, name, data) without a frame header.
    ///
    /// Fields beyond their wire limits are truncated rather than emitted
    /// malformed: an ERROR reason to 255 bytes, a PING context to 16, a
    /// JOIN/LEAVE group to 255, an unknown command's name to 255.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        let name = self.name();
        let name = &name[..name.len().min(255)];
        out.push(name.len() as u8);
        out.extend_from_slice(name);
        match self {
            Command::Ready(meta) => meta.encode(out),
            Command::Error { reason } => {
                let reason = &reason[..reason.len().min(MAX_ERROR_REASON)];
                out.push(reason.len() as u8);
                out.extend_from_slice(reason);
            }
            Command::Subscribe(topic) | Command::Cancel(topic) => out.extend_from_slice(topic),
            Command::Ping { ttl, context } => {
                out.extend_from_slice(&ttl.to_be_bytes());
                out.extend_from_slice(&context[..context.len().min(MAX_PING_CONTEXT)]);
            }
            Command::Pong { context } => out.extend_from_slice(context),
            Command::Join(group) | Command::Leave(group) => out.extend_from_slice(&group[..group.len().min(MAX_GROUP_LEN)]),
            Command::Unknown { data, .. } => out.extend_from_slice(data),
        }
    }

    /// Appends the whole command frame: header (COMMAND flag) and body.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut body = Vec::new();
        self.encode_body(&mut body);
        encode_frame(&body, false, true, out);
    }
}

/// Appends a subscription (or cancellation) in the form the negotiated
/// version wants: a SUBSCRIBE/CANCEL command for 3.1, a message frame whose
/// body is 0x01 (subscribe) or 0x00 (cancel) then the topic for 3.0, and the
/// same message in 2.0's or 1.0's framing for those peers.
pub fn encode_subscription(version: Version, subscribe: bool, topic: &[u8], out: &mut Vec<u8>) {
    match version {
        Version::V1_0 | Version::V2_0 => {
            crate::frame::encode_message_header(version, 1 + topic.len(), false, out);
            out.push(u8::from(subscribe));
        }
        Version::V3_1 => {
            let name: &[u8] = if subscribe { b"SUBSCRIBE" } else { b"CANCEL" };
            encode_header(1 + name.len() + topic.len(), false, true, out);
            out.push(name.len() as u8);
            out.extend_from_slice(name);
        }
        Version::V3_0 => {
            encode_header(1 + topic.len(), false, false, out);
            out.push(u8::from(subscribe));
        }
    }
    out.extend_from_slice(topic);
}

/// Reads a 3.0-style subscription message body: `Some((true, topic))` for
/// 0x01+topic, `Some((false, topic))` for 0x00+topic, `None` otherwise.
pub fn parse_legacy_subscription(body: &[u8]) -> Option<(bool, &[u8])> {
    match body.split_first() {
        Some((1, topic)) => Some((true, topic)),
        Some((0, topic)) => Some((false, topic)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(cmd: Command) {
        let mut out = Vec::new();
        cmd.encode(&mut out);
        assert_eq!(out[0] & crate::frame::FLAG_COMMAND, crate::frame::FLAG_COMMAND);
        let hdr = crate::frame::parse_header(&out, None).unwrap().unwrap();
        let parsed = Command::parse(&out[hdr.header_len..]).unwrap();
        assert_eq!(parsed, cmd);
    }

    #[test]
    fn all_commands_round_trip() {
        let mut meta = Metadata::new();
        meta.insert("Socket-Type", &b"PUB"[..]);
        round_trip(Command::Ready(meta));
        round_trip(Command::Ready(Metadata::new()));
        round_trip(Command::Error { reason: Bytes::from_static(b"Invalid socket type") });
        round_trip(Command::Error { reason: Bytes::new() });
        round_trip(Command::Subscribe(Bytes::from_static(b"topic")));
        round_trip(Command::Cancel(Bytes::new()));
        round_trip(Command::Ping { ttl: 100, context: Bytes::from_static(b"ab") });
        round_trip(Command::Pong { context: Bytes::from_static(b"ab") });
        round_trip(Command::Unknown { name: Bytes::from_static(b"HELLO"), data: Bytes::from_static(&[1, 2, 3]) });
        round_trip(Command::Subscribe(Bytes::from(vec![7u8; 400])));
        round_trip(Command::Join(Bytes::from_static(b"weather")));
        round_trip(Command::Leave(Bytes::from_static(b"weather")));
        round_trip(Command::Join(Bytes::new()));
        round_trip(Command::Join(Bytes::from(vec![b'g'; MAX_GROUP_LEN])));
    }

    #[test]
    fn join_leave_wire_format() {
        // libzmq's dish session writes "\4JOIN" / "\5LEAVE" followed by the group.
        let mut out = Vec::new();
        Command::Join(Bytes::from_static(b"tv")).encode(&mut out);
        assert_eq!(out, b"\x04\x07\x04JOINtv");
        out.clear();
        Command::Leave(Bytes::from_static(b"tv")).encode(&mut out);
        assert_eq!(out, b"\x04\x08\x05LEAVEtv");
        let mut long = b"\x04JOIN".to_vec();
        long.extend_from_slice(&[b'x'; 256]);
        assert_eq!(Command::parse(&long), Err(CommandError::GroupTooLong { command: "JOIN", len: 256 }));
        let mut body = Vec::new();
        Command::Leave(Bytes::from(vec![b'y'; 300])).encode_body(&mut body);
        assert_eq!(Command::parse(&body), Ok(Command::Leave(Bytes::from(vec![b'y'; 255]))));
        assert_eq!(Command::parse(b"\x04join"), Ok(Command::Unknown { name: Bytes::from_static(b"join"), data: Bytes::new() }));
    }

    #[test]
    fn ping_wire_format() {
        let mut out = Vec::new();
        Command::Ping { ttl: 100, context: Bytes::from_static(b"ab") }.encode(&mut out);
        assert_eq!(out, [0x04, 9, 4, b'P', b'I', b'N', b'G', 0, 100, b'a', b'b']);
    }

    #[test]
    fn oversized_fields_are_truncated() {
        let long = Command::Ping { ttl: 1, context: Bytes::from(vec![9u8; 20]) };
        let mut body = Vec::new();
        long.encode_body(&mut body);
        assert_eq!(Command::parse(&body).unwrap(), Command::Ping { ttl: 1, context: Bytes::from(vec![9u8; 16]) });
        let err = Command::Error { reason: Bytes::from(vec![b'x'; 300]) };
        body.clear();
        err.encode_body(&mut body);
        assert_eq!(Command::parse(&body).unwrap(), Command::Error { reason: Bytes::from(vec![b'x'; 255]) });
        // A peer's PING with a long context is truncated like libzmq does.
        let mut body = b"\x04PING\x00\x01".to_vec();
        body.extend_from_slice(&[5u8; 30]);
        assert_eq!(Command::parse(&body).unwrap(), Command::Ping { ttl: 1, context: Bytes::from(vec![5u8; 16]) });
    }

    #[test]
    fn errors() {
        assert_eq!(Command::parse(&[]), Err(CommandError::Empty));
        assert_eq!(Command::parse(&[0, 1]), Err(CommandError::EmptyName));
        assert_eq!(Command::parse(&[5, b'R', b'E']), Err(CommandError::NameTruncated { name_len: 5, available: 2 }));
        assert_eq!(Command::parse(b"\x05ERROR"), Err(CommandError::Truncated { command: "ERROR" }));
        assert_eq!(Command::parse(b"\x05ERROR\x03ab"), Err(CommandError::Truncated { command: "ERROR" }));
        assert_eq!(Command::parse(b"\x05ERROR\x01abc"), Err(CommandError::TrailingData { command: "ERROR" }));
        assert_eq!(Command::parse(b"\x04PING\x00"), Err(CommandError::Truncated { command: "PING" }));
        assert_eq!(Command::parse(b"\x05READY\x00"), Err(CommandError::Metadata(crate::MetadataError::EmptyName { offset: 0 })));
        // Lower-case names are not the defined commands.
        assert!(matches!(Command::parse(b"\x04ping\x00\x00"), Ok(Command::Unknown { .. })));
    }

    #[test]
    fn subscriptions_by_version() {
        let mut out = Vec::new();
        encode_subscription(Version::V3_1, true, b"topic", &mut out);
        assert_eq!(out, b"\x04\x0f\x09SUBSCRIBEtopic");
        out.clear();
        encode_subscription(Version::V3_1, false, b"t", &mut out);
        assert_eq!(out, b"\x04\x08\x06CANCELt");
        out.clear();
        encode_subscription(Version::V3_0, true, b"topic", &mut out);
        assert_eq!(out, b"\x00\x06\x01topic");
        assert_eq!(parse_legacy_subscription(&out[2..]), Some((true, &b"topic"[..])));
        assert_eq!(parse_legacy_subscription(b"\x00t"), Some((false, &b"t"[..])));
        assert_eq!(parse_legacy_subscription(b"\x02t"), None);
        assert_eq!(parse_legacy_subscription(b""), None);
        // A long topic switches to a long header.
        out.clear();
        encode_subscription(Version::V3_0, false, &[1u8; 300], &mut out);
        assert_eq!(out.len(), 9 + 301);
    }
}
