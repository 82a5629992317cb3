//! The PLAIN mechanism (RFC 24), as libzmq implements it.
//!
//! ```text
//! client                               server
//! HELLO (username, password)   ->
//!                              <-      WELCOME          (or ERROR)
//! INITIATE (metadata)          ->
//!                              <-      READY (metadata) (or ERROR)
//! ```
//!
//! HELLO carries `len username len password`, each length one byte;
//! WELCOME has no data. PLAIN authenticates (through ZAP) but does not
//! encrypt: the data phase is plain frames, as with NULL.
//!
//! The server checks nothing itself: after HELLO it pauses for a ZAP
//! handler's verdict on the username and password ([`Status::Zap`]), and
//! without a handler it refuses every client, as libzmq 4.3 does.

use bytes::Bytes;

use super::{libzmq_plain_error_reason, peer_error_or_unexpected, split_command, PlainCredentials, SecretBytes, Status, ZapMode};
use crate::error::HandshakeError;
use crate::frame::encode_frame;
use crate::metadata::Metadata;

/// Appends a command frame `name` + `data`.
fn command(name: &[u8], data: &[&[u8]], out: &mut Vec<u8>) {
    let mut body = Vec::with_capacity(1 + name.len() + data.iter().map(|d| d.len()).sum::<usize>());
    body.push(name.len() as u8);
    body.extend_from_slice(name);
    for d in data {
        body.extend_from_slice(d);
    }
    encode_frame(&body, false, true, out);
    zeroize::Zeroize::zeroize(&mut body);
}

/// A PLAIN client.
#[derive(Debug)]
pub(crate) struct Client {
    credentials: PlainCredentials,
    metadata: Metadata,
    phase: ClientPhase,
}

#[derive(Debug, PartialEq, Eq)]
enum ClientPhase {
    Idle,
    /// HELLO sent; waiting for WELCOME.
    HelloSent,
    /// INITIATE sent; waiting for READY.
    InitiateSent,
    Done,
}

impl Client {
    pub(crate) fn new(credentials: PlainCredentials) -> Client {
        Client { credentials, metadata: Metadata::new(), phase: ClientPhase::Idle }
    }

    pub(crate) fn start(&mut self, ours: &Metadata, out: &mut Vec<u8>) {
        if self.phase != ClientPhase::Idle {
            return;
        }
        self.metadata = ours.clone();
        let user = self.credentials.username();
        let pass = self.credentials.password();
        // Lengths were checked by PlainCredentials::new.
        command(b"HELLO", &[&[user.len() as u8], user, &[pass.len() as u8], pass], out);
        self.phase = ClientPhase::HelloSent;
    }

    pub(crate) fn on_command(&mut self, body: &Bytes, out: &mut Vec<u8>) -> Result<Status, HandshakeError> {
        // libzmq 4.3's ERROR has no valid name length: look for it before splitting.
        if matches!(self.phase, ClientPhase::HelloSent | ClientPhase::InitiateSent) {
            if let Some(reason) = libzmq_plain_error_reason(body) {
                return Err(HandshakeError::PeerError { reason });
            }
        }
        let (name, data) = split_command(body)?;
        match (&self.phase, name) {
            (ClientPhase::HelloSent, b"WELCOME") => {
                if !data.is_empty() {
                    return Err(HandshakeError::MalformedCommand { command: "WELCOME" });
                }
                let mut meta = Vec::new();
                self.metadata.encode(&mut meta);
                command(b"INITIATE", &[&meta], out);
                self.phase = ClientPhase::InitiateSent;
                Ok(Status::InProgress)
            }
            (ClientPhase::InitiateSent, b"READY") => {
                let meta = Metadata::parse_bytes(&body.slice(body.len() - data.len()..))?;
                self.phase = ClientPhase::Done;
                Ok(Status::Complete(meta))
            }
            (ClientPhase::HelloSent | ClientPhase::InitiateSent, _) => Err(peer_error_or_unexpected(body)),
            _ => Err(HandshakeError::UnexpectedCommand(Bytes::copy_from_slice(name))),
        }
    }
}

/// A PLAIN server.
#[derive(Debug)]
pub(crate) struct Server {
    metadata: Metadata,
    phase: ServerPhase,
    /// The client's credentials, once HELLO arrived (for ZAP).
    username: Bytes,
    password: SecretBytes,
    /// What to do after HELLO: ask ZAP, or refuse (no handler). Never skipped.
    zap: ZapMode,
}

#[derive(Debug, PartialEq, Eq)]
enum ServerPhase {
    /// Waiting for HELLO.
    Idle,
    /// HELLO received; waiting for the ZAP verdict.
    AwaitingZap,
    /// WELCOME sent; waiting for INITIATE.
    WelcomeSent,
    Done,
}

impl Server {
    pub(crate) fn new(zap: ZapMode) -> Server {
        Server {
            metadata: Metadata::new(),
            phase: ServerPhase::Idle,
            username: Bytes::new(),
            password: SecretBytes::default(),
            zap,
        }
    }

    /// ZAP approved the credentials: welcome the client.
    pub(crate) fn zap_approved(&mut self, out: &mut Vec<u8>) -> Result<Status, HandshakeError> {
        if self.phase != ServerPhase::AwaitingZap {
            return Err(HandshakeError::UnexpectedCommand(Bytes::from_static(b"ZAP")));
        }
        command(b"WELCOME", &[], out);
        self.phase = ServerPhase::WelcomeSent;
        Ok(Status::InProgress)
    }

    /// The server speaks second: nothing to send yet.
    pub(crate) fn start(&mut self, ours: &Metadata) {
        self.metadata = ours.clone();
    }

    /// The username the client sent (empty before HELLO).
    #[cfg(test)]
    pub(crate) fn username(&self) -> &[u8] {
        &self.username
    }

    /// The password the client sent (empty before HELLO).
    #[cfg(test)]
    pub(crate) fn password(&self) -> &[u8] {
        self.password.expose()
    }

    pub(crate) fn on_command(&mut self, body: &Bytes, out: &mut Vec<u8>) -> Result<Status, HandshakeError> {
        let (name, data) = split_command(body)?;
        match (&self.phase, name) {
            (ServerPhase::Idle, b"HELLO") => {
                let (user, pass) = parse_hello(data)?;
                self.username = Bytes::copy_from_slice(user);
                self.password = SecretBytes::new(pass);
                if self.zap != ZapMode::Ask {
                    // Nothing can vouch for these credentials: fail closed, as libzmq does
                    // without a ZAP handler.
                    return Err(HandshakeError::NoZapHandler);
                }
                self.phase = ServerPhase::AwaitingZap;
                Ok(Status::Zap(vec![self.username.clone(), Bytes::copy_from_slice(self.password.expose())]))
            }
            (ServerPhase::WelcomeSent, b"INITIATE") => {
                let meta = Metadata::parse_bytes(&body.slice(body.len() - data.len()..))?;
                let mut ours = Vec::new();
                self.metadata.encode(&mut ours);
                command(b"READY", &[&ours], out);
                self.phase = ServerPhase::Done;
                Ok(Status::Complete(meta))
            }
            (ServerPhase::Idle | ServerPhase::WelcomeSent | ServerPhase::AwaitingZap, _) => Err(peer_error_or_unexpected(body)),
            _ => Err(HandshakeError::UnexpectedCommand(Bytes::copy_from_slice(name))),
        }
    }
}

/// HELLO data: `len username len password`, nothing more.
fn parse_hello(data: &[u8]) -> Result<(&[u8], &[u8]), HandshakeError> {
    let bad = HandshakeError::MalformedCommand { command: "HELLO" };
    let (&ulen, rest) = data.split_first().ok_or(bad.clone())?;
    let user = rest.get(..usize::from(ulen)).ok_or(bad.clone())?;
    let rest = &rest[user.len()..];
    let (&plen, rest) = rest.split_first().ok_or(bad.clone())?;
    if rest.len() != usize::from(plen) {
        return Err(bad);
    }
    Ok((user, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::parse_header;

    /// Splits a buffer of command frames into their bodies.
    fn bodies(mut wire: &[u8]) -> Vec<Bytes> {
        let mut v = Vec::new();
        while let Some(h) = parse_header(wire, None).unwrap() {
            let end = h.header_len + h.body_len as usize;
            v.push(Bytes::copy_from_slice(&wire[h.header_len..end]));
            wire = &wire[end..];
        }
        v
    }

    fn meta(t: &str) -> Metadata {
        let mut m = Metadata::new();
        m.insert("Socket-Type", Bytes::copy_from_slice(t.as_bytes()));
        m
    }

    #[test]
    fn without_zap_the_server_fails_closed() {
        let mut s = Server::new(ZapMode::Refuse);
        let err = s.on_command(&Bytes::from_static(b"\x05HELLO\x05admin\x06secret"), &mut Vec::new());
        assert_eq!(err.unwrap_err(), HandshakeError::NoZapHandler);
        assert!(HandshakeError::NoZapHandler.is_auth_failure());
    }

    #[test]
    fn full_exchange_matches_rfc24() {
        let mut c = Client::new(PlainCredentials::new(b"admin", b"secret").unwrap());
        let mut s = Server::new(ZapMode::Ask);
        let (mut to_s, mut to_c) = (Vec::new(), Vec::new());
        c.start(&meta("DEALER"), &mut to_s);
        s.start(&meta("ROUTER"));
        assert_eq!(to_s, b"\x04\x13\x05HELLO\x05admin\x06secret");
        let hello = bodies(&to_s).remove(0);
        match s.on_command(&hello, &mut to_c) {
            Ok(Status::Zap(creds)) => assert_eq!(creds, [&b"admin"[..], b"secret"]),
            other => panic!("{other:?}"),
        }
        assert!(to_c.is_empty(), "nothing is sent before the verdict");
        assert!(matches!(s.zap_approved(&mut to_c), Ok(Status::InProgress)));
        assert!(s.zap_approved(&mut to_c).is_err(), "approved once");
        assert_eq!(s.username(), b"admin");
        assert_eq!(s.password(), b"secret");
        assert_eq!(to_c, b"\x04\x08\x07WELCOME");
        to_s.clear();
        assert!(matches!(c.on_command(&bodies(&to_c)[0], &mut to_s), Ok(Status::InProgress)));
        assert!(to_s.starts_with(b"\x04\x1f\x08INITIATE\x0bSocket-Type"));
        to_c.clear();
        match s.on_command(&bodies(&to_s)[0], &mut to_c) {
            Ok(Status::Complete(m)) => assert_eq!(m.get("Socket-Type"), Some(&b"DEALER"[..])),
            other => panic!("{other:?}"),
        }
        match c.on_command(&bodies(&to_c)[0], &mut to_s) {
            Ok(Status::Complete(m)) => assert_eq!(m.get("Socket-Type"), Some(&b"ROUTER"[..])),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_hello_and_error_replies() {
        for data in [&b""[..], b"\x05adm", b"\x01a", b"\x01a\x02b", b"\x01a\x01bc"] {
            let mut body = b"\x05HELLO".to_vec();
            body.extend_from_slice(data);
            let mut s = Server::new(ZapMode::Ask);
            assert_eq!(
                s.on_command(&Bytes::from(body), &mut Vec::new()).unwrap_err(),
                HandshakeError::MalformedCommand { command: "HELLO" }
            );
        }
        // An empty username and password are valid.
        let mut s = Server::new(ZapMode::Ask);
        assert!(s.on_command(&Bytes::from_static(b"\x05HELLO\x00\x00"), &mut Vec::new()).is_ok());
        // INITIATE before HELLO.
        let mut s = Server::new(ZapMode::Ask);
        assert_eq!(
            s.on_command(&Bytes::from_static(b"\x08INITIATE"), &mut Vec::new()).unwrap_err(),
            HandshakeError::UnexpectedCommand(Bytes::from_static(b"INITIATE"))
        );
        // The client reports the server's ERROR (a ZAP refusal).
        let mut c = Client::new(PlainCredentials::new(b"u", b"p").unwrap());
        c.start(&Metadata::new(), &mut Vec::new());
        let err = c.on_command(&Bytes::from_static(b"\x05ERROR\x03400"), &mut Vec::new()).unwrap_err();
        assert_eq!(err.zap_status_code(), Some(400));
        // libzmq 4.3.5's PLAIN server sends its ERROR as `0x5E "RROR"` (a C hex escape that
        // swallowed the E; bytes captured from pyzmq 27): the same refusal, status 400.
        for (phase, welcome) in [("HELLO sent", false), ("INITIATE sent", true)] {
            let mut c = Client::new(PlainCredentials::new(b"u", b"p").unwrap());
            c.start(&Metadata::new(), &mut Vec::new());
            if welcome {
                c.on_command(&Bytes::from_static(b"\x07WELCOME"), &mut Vec::new()).unwrap();
            }
            let err = c.on_command(&Bytes::from_static(b"\x5eRROR\x03400"), &mut Vec::new()).unwrap_err();
            assert_eq!(err.zap_status_code(), Some(400), "{phase}");
            assert!(err.is_auth_failure() && !err.is_protocol_error(), "{phase}");
        }
        // Truncated or empty forms of it are not an ERROR.
        for bad in [&b"\x5eRROR"[..], b"\x5eRROR\x04400", b"\x5eRRO"] {
            let mut c = Client::new(PlainCredentials::new(b"u", b"p").unwrap());
            c.start(&Metadata::new(), &mut Vec::new());
            let err = c.on_command(&Bytes::copy_from_slice(bad), &mut Vec::new()).unwrap_err();
            assert_eq!(err.zap_status_code(), None, "{bad:?}");
            assert!(err.is_protocol_error(), "{bad:?}");
        }
        // WELCOME with data is malformed.
        let mut c = Client::new(PlainCredentials::new(b"u", b"p").unwrap());
        c.start(&Metadata::new(), &mut Vec::new());
        assert_eq!(
            c.on_command(&Bytes::from_static(b"\x07WELCOMEx"), &mut Vec::new()).unwrap_err(),
            HandshakeError::MalformedCommand { command: "WELCOME" }
        );
    }
}
