//! ZAP, the ZeroMQ Authentication Protocol (RFC 27): the request a server's handshake pauses
//! for, and the reply that resumes it.
//!
//! A server handshake that must ask ZAP (PLAIN after HELLO, CURVE after a verified INITIATE,
//! NULL before its READY when a ZAP domain is set) stops consuming input and offers a
//! [`ZapRequest`] through [`Handshake::zap_request`](crate::Handshake::zap_request). The
//! engine sends the request's [`frames`](ZapRequest::frames) to the handler, and hands the
//! reply frames back to [`Handshake::handle_zap_reply`](crate::Handshake::handle_zap_reply),
//! which parses them with [`ZapReply::parse`] and resumes or refuses. Nothing here performs
//! I/O: moving frames to the handler and back is the engine's job.
//!
//! When a handler is asked follows libzmq 4.3: PLAIN and CURVE servers always ask one if one
//! is bound; NULL only when the socket has a ZAP domain. Without a handler a PLAIN server
//! refuses the client, CURVE and NULL proceed unless ZAP_ENFORCE_DOMAIN is set.

use bytes::Bytes;
use std::fmt;

use crate::error::MetadataError;
use crate::metadata::Metadata;

/// The ZAP version we speak.
pub const VERSION: &[u8] = b"1.0";
/// The one request id we use: each connection asks once (libzmq sends "1" too).
pub const REQUEST_ID: &[u8] = b"1";
/// The inproc endpoint name a ZAP handler binds (`inproc://zeromq.zap.01`).
pub const ENDPOINT: &str = "zeromq.zap.01";

/// What the handshake needs to know about ZAP, set by the engine when the connection starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZapConfig {
    /// A handler is bound (the engine looked for one when the connection started).
    pub handler: bool,
    /// ZAP_DOMAIN: sent in the request; for NULL, whether ZAP is asked at all.
    pub domain: Bytes,
    /// ZAP_ENFORCE_DOMAIN: with no handler, refuse instead of proceeding (CURVE, NULL).
    pub enforce_domain: bool,
    /// The peer's address as the request's "address" frame (libzmq: the IP, no port).
    pub peer_address: Bytes,
}

/// A ZAP request (RFC 27), everything but the request id.
#[derive(Clone, PartialEq, Eq)]
pub struct ZapRequest {
    /// ZAP_DOMAIN.
    pub domain: Bytes,
    /// The peer's address.
    pub address: Bytes,
    /// Our socket's routing id (libzmq sends its own ZMQ_ROUTING_ID here).
    pub identity: Bytes,
    /// "NULL", "PLAIN" or "CURVE".
    pub mechanism: &'static [u8],
    /// PLAIN: username and password; CURVE: the client's 32-byte public key; NULL: none.
    pub credentials: Vec<Bytes>,
}

impl ZapRequest {
    /// The request as frames to send to the handler, starting with the empty delimiter a REP
    /// handler expects: delimiter, version, request id, domain, address, identity, mechanism,
    /// credentials. All frames but the last have MORE set.
    pub fn frames(&self) -> Vec<Bytes> {
        let mut v = vec![
            Bytes::new(),
            Bytes::from_static(VERSION),
            Bytes::from_static(REQUEST_ID),
            self.domain.clone(),
            self.address.clone(),
            self.identity.clone(),
            Bytes::from_static(self.mechanism),
        ];
        v.extend(self.credentials.iter().cloned());
        v
    }
}

impl fmt::Debug for ZapRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Credentials include PLAIN passwords: never printed.
        f.debug_struct("ZapRequest")
            .field("domain", &self.domain)
            .field("address", &self.address)
            .field("identity", &self.identity)
            .field("mechanism", &String::from_utf8_lossy(self.mechanism))
            .field("credentials", &self.credentials.len())
            .finish()
    }
}

/// A well-formed ZAP reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZapReply {
    /// 200, 300, 400 or 500.
    pub status_code: u16,
    /// The handler's explanation.
    pub status_text: Bytes,
    /// The authenticated user, delivered as the "User-Id" message property.
    pub user_id: Bytes,
    /// Properties the handler attaches to every message of the connection.
    pub metadata: Metadata,
}

/// Why a ZAP reply was refused (libzmq reports these as protocol errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZapError {
    /// Not seven frames (delimiter + six).
    FrameCount(usize),
    /// The first frame is not the empty delimiter.
    Delimiter,
    /// A version other than "1.0".
    Version,
    /// A request id other than ours.
    RequestId,
    /// A status code other than 200, 300, 400 or 500.
    StatusCode,
    /// A malformed metadata frame.
    Metadata(MetadataError),
}

impl fmt::Display for ZapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZapError::FrameCount(n) => write!(f, "ZAP reply of {n} frames, not 7"),
            ZapError::Delimiter => f.write_str("ZAP reply without its empty delimiter"),
            ZapError::Version => f.write_str("ZAP reply with a version other than 1.0"),
            ZapError::RequestId => f.write_str("ZAP reply for another request id"),
            ZapError::StatusCode => f.write_str("ZAP reply with an invalid status code"),
            ZapError::Metadata(e) => write!(f, "ZAP reply metadata: {e}"),
        }
    }
}

impl std::error::Error for ZapError {}

impl ZapReply {
    /// Parses a reply's frames (delimiter included), as libzmq 4.3 checks them.
    pub fn parse(frames: &[Bytes]) -> Result<ZapReply, ZapError> {
        let [delimiter, version, request_id, status, text, user_id, metadata] = frames else {
            return Err(ZapError::FrameCount(frames.len()));
        };
        if !delimiter.is_empty() {
            return Err(ZapError::Delimiter);
        }
        if version.as_ref() != VERSION {
            return Err(ZapError::Version);
        }
        if request_id.as_ref() != REQUEST_ID {
            return Err(ZapError::RequestId);
        }
        let status_code = match status.as_ref() {
            b"200" => 200,
            b"300" => 300,
            b"400" => 400,
            b"500" => 500,
            _ => return Err(ZapError::StatusCode),
        };
        let metadata = Metadata::parse_bytes(metadata).map_err(ZapError::Metadata)?;
        Ok(ZapReply { status_code, status_text: text.clone(), user_id: user_id.clone(), metadata })
    }

    /// A reply frame list, as a handler sends it (for tests and in-process handlers).
    pub fn to_frames(&self) -> Vec<Bytes> {
        let mut meta = Vec::new();
        self.metadata.encode(&mut meta);
        vec![
            Bytes::new(),
            Bytes::from_static(VERSION),
            Bytes::from_static(REQUEST_ID),
            Bytes::from(self.status_code.to_string()),
            self.status_text.clone(),
            self.user_id.clone(),
            Bytes::from(meta),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(code: u16) -> ZapReply {
        let mut metadata = Metadata::new();
        metadata.insert("X-Role", &b"admin"[..]);
        ZapReply { status_code: code, status_text: Bytes::from_static(b"OK"), user_id: Bytes::from_static(b"alice"), metadata }
    }

    #[test]
    fn request_frames_follow_rfc27() {
        let r = ZapRequest {
            domain: Bytes::from_static(b"global"),
            address: Bytes::from_static(b"127.0.0.1"),
            identity: Bytes::from_static(b"id"),
            mechanism: b"PLAIN",
            credentials: vec![Bytes::from_static(b"admin"), Bytes::from_static(b"secret")],
        };
        let f = r.frames();
        let want: [&[u8]; 9] = [b"", b"1.0", b"1", b"global", b"127.0.0.1", b"id", b"PLAIN", b"admin", b"secret"];
        assert_eq!(f.iter().map(|b| b.as_ref()).collect::<Vec<_>>(), want);
        assert!(!format!("{r:?}").contains("secret"));
    }

    #[test]
    fn replies_round_trip_and_bad_ones_are_typed() {
        for code in [200, 300, 400, 500] {
            assert_eq!(ZapReply::parse(&reply(code).to_frames()), Ok(reply(code)));
        }
        let good = reply(200).to_frames();
        assert_eq!(ZapReply::parse(&good[..6]), Err(ZapError::FrameCount(6)));
        let bad = |i: usize, v: &'static [u8]| {
            let mut f = good.clone();
            f[i] = Bytes::from_static(v);
            ZapReply::parse(&f)
        };
        assert_eq!(bad(0, b"x"), Err(ZapError::Delimiter));
        assert_eq!(bad(1, b"2.0"), Err(ZapError::Version));
        assert_eq!(bad(2, b"7"), Err(ZapError::RequestId));
        assert_eq!(bad(3, b"201"), Err(ZapError::StatusCode));
        assert_eq!(bad(3, b"20"), Err(ZapError::StatusCode));
        assert!(matches!(bad(6, b"\x00"), Err(ZapError::Metadata(_))));
        assert!(!ZapError::StatusCode.to_string().is_empty());
    }
}
