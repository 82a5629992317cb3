//! The connection handshake: greeting exchange, then the security mechanism,
//! ending with both peers' metadata exchanged and validated.
//!
//! [`Handshake`] is a sans-IO state machine. Feed it received bytes with
//! [`Handshake::handle_input`]; collect bytes to send with
//! [`Handshake::poll_transmit`]. It consumes exactly the bytes that belong to
//! the handshake, so data frames that arrive in the same read stay with the
//! caller. Internally each phase (greeting, mechanism, complete, failed) is
//! its own type holding only what that phase needs, so, for instance, a peer
//! cannot exist before the peer's metadata has been validated.
//!
//! The greeting goes out in libzmq's three steps; see [`crate::greeting`].
//! When we refuse the peer's socket type we queue an ERROR command after our
//! READY, as RFC 23 recommends, so the caller can flush it before closing.

use bytes::Bytes;

use crate::command::Command;
use crate::error::HandshakeError;
use crate::frame::{parse_header, FLAG_LONG, LONG_HEADER_LEN, SHORT_HEADER_LEN};
use crate::greeting::{check_prefix, Greeting, GREETING_LEN, MAJOR_POS, SIGNATURE_LEN};
use crate::mechanism::{Cipher, Mechanism, MechanismState, Status, ZapMode, KNOWN_MECHANISMS};
use crate::metadata::{Metadata, IDENTITY, SOCKET_TYPE};
use crate::socket_type::SocketType;
use crate::version::Version;
use crate::zap::{ZapConfig, ZapReply, ZapRequest};

/// Maximum length of a routing id ("Identity" property).
pub const MAX_ROUTING_ID: usize = 255;

/// How this side of the connection presents itself.
#[derive(Clone, Debug)]
pub struct Config {
    /// Our socket type, sent as "Socket-Type".
    pub socket_type: SocketType,
    /// Our routing id, sent as "Identity" by REQ, DEALER and ROUTER sockets
    /// (as libzmq does, even when empty). Should be at most 255 bytes.
    pub routing_id: Bytes,
    /// The security mechanism, with our role (client or server) and
    /// credentials. The greeting's as-server flag follows from it.
    pub mechanism: Mechanism,
    /// Maximum frame body size, also applied to handshake commands.
    pub max_msg_size: Option<u64>,
    /// Extra READY properties (application metadata, e.g. "X-..." names).
    /// Entries named Socket-Type or Identity, or with invalid names, are
    /// left out.
    pub properties: Vec<(String, Bytes)>,
    /// ZAP: whether a handler is bound, the domain, enforcement, the peer's address.
    pub zap: ZapConfig,
}

impl Config {
    /// A NULL-mechanism configuration for `socket_type` with no routing id,
    /// no size limit and no extra properties.
    pub fn new(socket_type: SocketType) -> Config {
        Config {
            socket_type,
            routing_id: Bytes::new(),
            mechanism: Mechanism::Null,
            max_msg_size: None,
            properties: Vec::new(),
            zap: ZapConfig::default(),
        }
    }

    /// The metadata we announce in READY, in libzmq's order: Socket-Type,
    /// Identity (REQ/DEALER/ROUTER only), then the extra properties.
    pub fn metadata(&self) -> Metadata {
        let mut m = Metadata::new();
        m.insert(
            SOCKET_TYPE,
            Bytes::from_static(self.socket_type.name().as_bytes()),
        );
        if self.socket_type.sends_identity() {
            m.insert(IDENTITY, self.routing_id.clone());
        }
        for (name, value) in &self.properties {
            let reserved =
                name.eq_ignore_ascii_case(SOCKET_TYPE) || name.eq_ignore_ascii_case(IDENTITY);
            if !reserved {
                // Invalid names are rejected here rather than sent malformed.
                let _ = m.try_insert(name, value.clone());
            }
        }
        m
    }
}

/// What we learned about the peer during the handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    /// The negotiated protocol revision.
    pub version: Version,
    /// The peer's socket type.
    pub socket_type: SocketType,
    /// The peer's "Identity" property if it sent one (possibly empty).
    pub routing_id: Option<Bytes>,
    /// All properties the peer sent, including Socket-Type and Identity.
    pub metadata: Metadata,
}

/// Receiving the peer's greeting while sending ours in stages.
#[derive(Debug)]
struct GreetingPhase {
    ours: [u8; GREETING_LEN],
    sent: usize,
    theirs: [u8; GREETING_LEN],
    received: usize,
}

/// Running the mechanism: collecting one command frame at a time.
#[derive(Debug)]
struct MechanismPhase {
    version: Version,
    mechanism: MechanismState,
    frame: Vec<u8>,
    /// Waiting for the ZAP verdict on this request: no input is consumed meanwhile.
    zap: Option<ZapRequest>,
    /// NULL with ZAP: the mechanism (our READY) starts only once ZAP approves.
    null_deferred: bool,
}

#[derive(Debug)]
enum State {
    Greeting(GreetingPhase),
    Mechanism(MechanismPhase),
    Complete(Peer),
    Failed(HandshakeError),
}

/// A ZMTP handshake in progress.
#[derive(Debug)]
pub struct Handshake {
    socket_type: SocketType,
    mechanism: Mechanism,
    max_msg_size: Option<u64>,
    our_metadata: Metadata,
    transmit: Vec<u8>,
    state: State,
    /// CURVE's data-phase cipher, from completion until the caller takes it.
    cipher: Option<Cipher>,
    zap_config: ZapConfig,
    routing_id: Bytes,
    /// The handler's approval (user id, metadata), once given.
    zap_reply: Option<ZapReply>,
}

impl Handshake {
    /// Starts a handshake advertising ZMTP 3.1, queuing the first part of our
    /// greeting.
    pub fn new(config: Config) -> Handshake {
        Handshake::with_version(config, Version::V3_1)
    }

    /// Like [`new`](Self::new) but advertising `version`, e.g. 3.0 to test
    /// against peers' downgrade paths.
    pub fn with_version(config: Config, version: Version) -> Handshake {
        let as_server = config.mechanism.is_server();
        let ours = Greeting::new(
            version,
            config.mechanism.name(),
            as_server,
            config.routing_id.len(),
        )
        .to_bytes();
        let mut transmit = Vec::with_capacity(GREETING_LEN);
        transmit.extend_from_slice(&ours[..SIGNATURE_LEN]);
        Handshake {
            socket_type: config.socket_type,
            our_metadata: config.metadata(),
            mechanism: config.mechanism,
            max_msg_size: config.max_msg_size,
            transmit,
            cipher: None,
            zap_config: config.zap,
            routing_id: config.routing_id,
            zap_reply: None,
            state: State::Greeting(GreetingPhase {
                ours,
                sent: SIGNATURE_LEN,
                theirs: [0; GREETING_LEN],
                received: 0,
            }),
        }
    }

    /// Moves every byte we want to send onto the end of `out`.
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        if out.is_empty() {
            std::mem::swap(out, &mut self.transmit);
        } else {
            out.append(&mut self.transmit);
        }
    }

    /// True if bytes are waiting for [`poll_transmit`](Self::poll_transmit).
    pub fn has_transmit(&self) -> bool {
        !self.transmit.is_empty()
    }

    /// Feeds received bytes and returns how many were consumed. After the
    /// handshake completes nothing more is consumed. After a failure the same
    /// error is returned again.
    pub fn handle_input(&mut self, input: &[u8]) -> Result<usize, HandshakeError> {
        match self.drive(input) {
            Ok(n) => Ok(n),
            Err(e) => {
                self.settle(Err(e.clone()))?;
                Err(e)
            }
        }
    }

    fn drive(&mut self, input: &[u8]) -> Result<usize, HandshakeError> {
        let mut consumed = 0;
        loop {
            let rest = &input[consumed..];
            match &mut self.state {
                State::Failed(e) => return Err(e.clone()),
                State::Complete(_) => return Ok(consumed),
                State::Greeting(g) => {
                    let take = rest.len().min(GREETING_LEN - g.received);
                    if take == 0 {
                        return Ok(consumed);
                    }
                    g.theirs[g.received..g.received + take].copy_from_slice(&rest[..take]);
                    g.received += take;
                    consumed += take;
                    // Our major version once their signature is in, the rest
                    // once their major version is in (libzmq's order). The
                    // signature is judged before the version so the bytes we
                    // send do not depend on how the input was chunked.
                    check_prefix(&g.theirs[..g.received.min(SIGNATURE_LEN)])?;
                    if g.received >= SIGNATURE_LEN && g.sent == SIGNATURE_LEN {
                        self.transmit.push(g.ours[MAJOR_POS]);
                        g.sent += 1;
                    }
                    check_prefix(&g.theirs[..g.received])?;
                    if g.received > MAJOR_POS && g.sent == MAJOR_POS + 1 {
                        self.transmit.extend_from_slice(&g.ours[MAJOR_POS + 1..]);
                        g.sent = GREETING_LEN;
                    }
                    if g.received == GREETING_LEN {
                        let ours = Greeting::parse(&g.ours)?;
                        let theirs = Greeting::parse(&g.theirs)?;
                        if theirs.mechanism != ours.mechanism {
                            let known = KNOWN_MECHANISMS.contains(&theirs.mechanism_name())
                                && theirs.mechanism_name().len() < theirs.mechanism.len()
                                && theirs.mechanism[theirs.mechanism_name().len()..]
                                    .iter()
                                    .all(|&b| b == 0);
                            return Err(if known {
                                HandshakeError::MechanismMismatch
                            } else {
                                HandshakeError::UnknownMechanism
                            });
                        }
                        // The peer's as-server flag is not checked: libzmq 4.3 sends 0
                        // whatever its role, and takes its role from its own options.
                        let version = ours.version().min(theirs.version());
                        let zap = &self.zap_config;
                        // libzmq 4.3: PLAIN and CURVE servers ask a bound handler; without
                        // one PLAIN refuses, CURVE proceeds unless enforcement is on. NULL
                        // asks only with a domain, and then behaves like CURVE.
                        let mode = match (zap.handler, &self.mechanism) {
                            (true, _) => ZapMode::Ask,
                            (false, Mechanism::PlainServer) => ZapMode::Refuse,
                            (false, _) if zap.enforce_domain => ZapMode::Refuse,
                            (false, _) => ZapMode::Skip,
                        };
                        let null_zap = matches!(self.mechanism, Mechanism::Null) && !zap.domain.is_empty();
                        if null_zap && mode == ZapMode::Refuse {
                            return Err(HandshakeError::NoZapHandler);
                        }
                        let mut mechanism = self.mechanism.start(mode);
                        let null_deferred = null_zap && mode == ZapMode::Ask;
                        let zap = if null_deferred {
                            Some(self.build_zap_request(b"NULL", Vec::new()))
                        } else {
                            mechanism.start(&self.our_metadata, &mut self.transmit);
                            None
                        };
                        self.state = State::Mechanism(MechanismPhase {
                            version,
                            mechanism,
                            frame: Vec::new(),
                            zap,
                            null_deferred,
                        });
                    }
                }
                State::Mechanism(m) => {
                    if rest.is_empty() || m.zap.is_some() {
                        // Paused for ZAP: the rest waits for `handle_zap_reply`.
                        return Ok(consumed);
                    }
                    // Gather exactly one frame: the header first, then the body.
                    let target = match parse_header(&m.frame, self.max_msg_size)? {
                        Some(h) => frame_len(h.header_len, h.body_len)?,
                        None if m.frame.first().is_some_and(|f| f & FLAG_LONG != 0) => {
                            LONG_HEADER_LEN
                        }
                        None => SHORT_HEADER_LEN,
                    };
                    let take = rest.len().min(target - m.frame.len());
                    m.frame.extend_from_slice(&rest[..take]);
                    consumed += take;
                    let Some(h) = parse_header(&m.frame, self.max_msg_size)? else {
                        continue;
                    };
                    if m.frame.len() < frame_len(h.header_len, h.body_len)? {
                        continue;
                    }
                    if !h.command {
                        return Err(HandshakeError::UnexpectedMessage);
                    }
                    let body = Bytes::from(std::mem::take(&mut m.frame)).slice(h.header_len..);
                    let status = m.mechanism.on_command(&body, &mut self.transmit)?;
                    self.on_status(status)?;
                }
            }
        }
    }

    /// Acts on a mechanism's progress: complete, pause for ZAP, or carry on.
    fn on_status(&mut self, status: Status) -> Result<(), HandshakeError> {
        match status {
            Status::InProgress => {}
            Status::Zap(credentials) => {
                let mechanism = self.mechanism.name();
                let request = self.build_zap_request(mechanism, credentials);
                if let State::Mechanism(m) = &mut self.state {
                    m.zap = Some(request);
                }
            }
            Status::Complete(metadata) => {
                let State::Mechanism(m) = &mut self.state else { return Ok(()) };
                let peer = validate_peer(self.socket_type, m.version, metadata)?;
                self.cipher = m.mechanism.take_cipher();
                self.state = State::Complete(peer);
            }
        }
        Ok(())
    }

    fn build_zap_request(&self, mechanism: &'static [u8], credentials: Vec<Bytes>) -> ZapRequest {
        ZapRequest {
            domain: self.zap_config.domain.clone(),
            address: self.zap_config.peer_address.clone(),
            identity: self.routing_id.clone(),
            mechanism,
            credentials,
        }
    }

    /// The ZAP request the handshake is paused for, if any. The caller sends it to the
    /// handler and passes the reply to [`handle_zap_reply`](Self::handle_zap_reply), then
    /// feeds input again (input is not consumed while paused).
    pub fn zap_request(&self) -> Option<&ZapRequest> {
        match &self.state {
            State::Mechanism(m) => m.zap.as_ref(),
            _ => None,
        }
    }

    /// Resumes the paused handshake with the handler's reply frames (delimiter included).
    /// 200 goes on (queuing WELCOME or READY); 300 fails silently; 400 and 500 queue an
    /// ERROR carrying the status code, as libzmq does; a malformed reply fails as
    /// [`HandshakeError::ZapReply`]. Calling it when not paused is an error too.
    pub fn handle_zap_reply(&mut self, frames: &[Bytes]) -> Result<(), HandshakeError> {
        let r = self.apply_zap_reply(frames);
        self.settle(r)
    }

    /// Ends the paused handshake because no verdict can be had (the handler went away).
    pub fn zap_unavailable(&mut self) -> HandshakeError {
        let e = HandshakeError::NoZapHandler;
        let _ = self.settle(Err(e.clone()));
        e
    }

    fn apply_zap_reply(&mut self, frames: &[Bytes]) -> Result<(), HandshakeError> {
        let State::Mechanism(m) = &mut self.state else {
            return Err(HandshakeError::UnexpectedCommand(Bytes::from_static(b"ZAP")));
        };
        if m.zap.take().is_none() {
            return Err(HandshakeError::UnexpectedCommand(Bytes::from_static(b"ZAP")));
        }
        let reply = ZapReply::parse(frames).map_err(HandshakeError::ZapReply)?;
        if reply.status_code != 200 {
            if reply.status_code != 300 {
                // libzmq's ERROR reason is the bare status code; a 300 (try later) is a
                // silent disconnect (RFC 26).
                Command::Error { reason: Bytes::from(reply.status_code.to_string()) }
                    .encode(&mut self.transmit);
            }
            return Err(HandshakeError::ZapRefused {
                status: reply.status_code,
                text: reply.status_text,
            });
        }
        self.zap_reply = Some(reply);
        let status = if std::mem::take(&mut m.null_deferred) {
            m.mechanism.start(&self.our_metadata, &mut self.transmit);
            Status::InProgress
        } else {
            m.mechanism.zap_approved(&mut self.transmit)?
        };
        self.on_status(status)
    }

    /// Records a failure as `handle_input` does (queuing an ERROR where RFC 23 asks for one).
    fn settle(&mut self, r: Result<(), HandshakeError>) -> Result<(), HandshakeError> {
        if let Err(e) = &r {
            if !matches!(self.state, State::Failed(_)) {
                if let Some(reason) = error_reason(e) {
                    Command::Error { reason: Bytes::from_static(reason.as_bytes()) }
                        .encode(&mut self.transmit);
                }
                self.state = State::Failed(e.clone());
            }
        }
        r
    }

    /// The ZAP handler's approval (status 200, user id, metadata), once given; `None` when
    /// no handler was asked.
    pub fn zap_reply(&self) -> Option<&ZapReply> {
        self.zap_reply.as_ref()
    }

    /// True once the peer's metadata has been received and accepted.
    pub fn is_complete(&self) -> bool {
        matches!(self.state, State::Complete(_))
    }

    /// The peer, once the handshake is complete.
    pub fn peer(&self) -> Option<&Peer> {
        match &self.state {
            State::Complete(p) => Some(p),
            _ => None,
        }
    }

    /// CURVE's data-phase [`Cipher`], once the handshake is complete; `None`
    /// for NULL and PLAIN (their frames travel as they are) and after the
    /// first call. From then on every frame must go through it: the caller
    /// seals each outgoing frame and opens each incoming one.
    pub fn take_cipher(&mut self) -> Option<Cipher> {
        self.cipher.take()
    }

    /// The negotiated version, known once both greetings are exchanged.
    pub fn version(&self) -> Option<Version> {
        match &self.state {
            State::Mechanism(m) => Some(m.version),
            State::Complete(p) => Some(p.version),
            _ => None,
        }
    }

    /// The error that ended the handshake, if it failed.
    pub fn error(&self) -> Option<&HandshakeError> {
        match &self.state {
            State::Failed(e) => Some(e),
            _ => None,
        }
    }
}

fn frame_len(header_len: usize, body_len: u64) -> Result<usize, HandshakeError> {
    usize::try_from(body_len)
        .ok()
        .and_then(|b| b.checked_add(header_len))
        .ok_or(HandshakeError::Frame(crate::FrameError::TooLarge {
            len: body_len,
            max: usize::MAX as u64,
        }))
}

/// The ERROR reason we send when refusing a peer, for the refusals where
/// RFC 23 asks for one (socket type validation).
fn error_reason(e: &HandshakeError) -> Option<&'static str> {
    match e {
        HandshakeError::IncompatibleSocketType { .. }
        | HandshakeError::UnknownSocketType
        | HandshakeError::MissingSocketType => Some("Invalid socket type"),
        _ => None,
    }
}

fn validate_peer(
    ours: SocketType,
    version: Version,
    metadata: Metadata,
) -> Result<Peer, HandshakeError> {
    let name = metadata
        .get(SOCKET_TYPE)
        .ok_or(HandshakeError::MissingSocketType)?;
    let peer = SocketType::from_name(name).ok_or(HandshakeError::UnknownSocketType)?;
    if !ours.is_compatible_with(peer) {
        return Err(HandshakeError::IncompatibleSocketType { ours, peer });
    }
    let routing_id = metadata.get_bytes(IDENTITY).cloned();
    if let Some(id) = &routing_id {
        if id.len() > MAX_ROUTING_ID {
            return Err(HandshakeError::IdentityTooLong { len: id.len() });
        }
    }
    Ok(Peer {
        version,
        socket_type: peer,
        routing_id,
        metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::encode_frame;

    fn greeting(minor: u8, mech: &[u8]) -> Vec<u8> {
        let mut g = Greeting::new(Version::V3_1, mech, false, 0).to_bytes();
        g[11] = minor;
        g.to_vec()
    }

    fn ready(props: &[(&str, &[u8])]) -> Vec<u8> {
        let mut m = Metadata::new();
        for (n, v) in props {
            m.insert(n, Bytes::copy_from_slice(v));
        }
        let mut out = Vec::new();
        Command::Ready(m).encode(&mut out);
        out
    }

    fn run(config: Config, input: &[u8]) -> (Handshake, Result<usize, HandshakeError>, Vec<u8>) {
        let mut hs = Handshake::new(config);
        let r = hs.handle_input(input);
        let mut out = Vec::new();
        hs.poll_transmit(&mut out);
        (hs, r, out)
    }

    #[test]
    fn staged_greeting() {
        let mut hs = Handshake::new(Config::new(SocketType::Dealer));
        let mut out = Vec::new();
        hs.poll_transmit(&mut out);
        assert_eq!(out, [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F]);
        let peer = greeting(1, b"NULL");
        assert_eq!(hs.handle_input(&peer[..10]), Ok(10));
        out.clear();
        hs.poll_transmit(&mut out);
        assert_eq!(out, [3]);
        assert_eq!(hs.handle_input(&peer[10..11]), Ok(1));
        out.clear();
        hs.poll_transmit(&mut out);
        assert_eq!(out.len(), 53);
        assert_eq!(&out[..5], b"\x01NULL");
        assert_eq!(hs.version(), None);
        assert_eq!(hs.handle_input(&peer[11..]), Ok(53));
        assert_eq!(hs.version(), Some(Version::V3_1));
        out.clear();
        hs.poll_transmit(&mut out);
        // READY for a DEALER with an empty Identity, as in RFC 23's example.
        assert_eq!(out, ready(&[("Socket-Type", b"DEALER"), ("Identity", b"")]));
        assert!(!hs.has_transmit());
    }

    #[test]
    fn completes_and_leaves_trailing_data() {
        let mut input = greeting(1, b"NULL");
        input.extend(ready(&[("Socket-Type", b"ROUTER"), ("X-App", b"1")]));
        let split = input.len();
        encode_frame(b"data", false, false, &mut input);
        let (hs, r, out) = run(Config::new(SocketType::Dealer), &input);
        assert_eq!(r, Ok(split));
        assert!(hs.is_complete());
        assert!(out.len() > GREETING_LEN);
        let peer = hs.peer().unwrap();
        assert_eq!(peer.socket_type, SocketType::Router);
        assert_eq!(peer.routing_id, None);
        assert_eq!(peer.metadata.get("x-app"), Some(&b"1"[..]));
        assert_eq!(peer.version, Version::V3_1);
        let mut hs = hs;
        assert_eq!(hs.handle_input(&input[split..]), Ok(0));
    }

    #[test]
    fn version_negotiation_and_identity() {
        let mut input = greeting(0, b"NULL");
        input.extend(ready(&[("Socket-Type", b"DEALER"), ("Identity", b"abc")]));
        let (hs, r, _) = run(Config::new(SocketType::Router), &input);
        assert_eq!(r, Ok(input.len()));
        let peer = hs.peer().unwrap();
        assert_eq!(peer.version, Version::V3_0);
        assert_eq!(peer.routing_id.as_deref(), Some(&b"abc"[..]));
        let mut hs = Handshake::with_version(Config::new(SocketType::Router), Version::V3_0);
        let mut input = greeting(1, b"NULL");
        input.extend(ready(&[("Socket-Type", b"DEALER")]));
        hs.handle_input(&input).unwrap();
        assert_eq!(hs.peer().unwrap().version, Version::V3_0);
    }

    #[test]
    fn byte_at_a_time() {
        let mut input = greeting(1, b"NULL");
        input.extend(ready(&[("Socket-Type", b"PUB"), ("X-Big", &[7u8; 300])]));
        let mut hs = Handshake::new(Config::new(SocketType::Sub));
        for b in &input {
            assert_eq!(hs.handle_input(std::slice::from_ref(b)), Ok(1));
        }
        assert!(hs.is_complete());
        assert_eq!(
            hs.peer().unwrap().metadata.get("X-Big").map(|v| v.len()),
            Some(300)
        );
    }

    #[test]
    fn refuses_incompatible_socket_type_with_error_command() {
        let mut input = greeting(1, b"NULL");
        input.extend(ready(&[("Socket-Type", b"PUSH")]));
        let (mut hs, r, out) = run(Config::new(SocketType::Push), &input);
        assert_eq!(
            r,
            Err(HandshakeError::IncompatibleSocketType {
                ours: SocketType::Push,
                peer: SocketType::Push
            })
        );
        let mut expected = Vec::new();
        Command::Error {
            reason: Bytes::from_static(b"Invalid socket type"),
        }
        .encode(&mut expected);
        assert!(out.ends_with(&expected));
        // The error sticks and no second ERROR is queued.
        assert!(hs.handle_input(b"x").is_err());
        assert!(!hs.has_transmit());
        assert!(hs.error().is_some());
        assert!(hs.peer().is_none());
    }

    #[test]
    fn metadata_errors() {
        let cases: Vec<(Vec<u8>, HandshakeError)> = vec![
            (
                ready(&[("X-Other", b"1")]),
                HandshakeError::MissingSocketType,
            ),
            (
                ready(&[("Socket-Type", b"FOO")]),
                HandshakeError::UnknownSocketType,
            ),
            (
                ready(&[("Socket-Type", b"DEALER"), ("Identity", &[1u8; 256])]),
                HandshakeError::IdentityTooLong { len: 256 },
            ),
            (
                b"\x04\x07\x05READY\x00".to_vec(),
                HandshakeError::Metadata(crate::MetadataError::EmptyName { offset: 0 }),
            ),
            (
                b"\x04\x00".to_vec(),
                HandshakeError::Command(crate::CommandError::Empty),
            ),
            (
                b"\x04\x05\x04PING".to_vec(),
                HandshakeError::Command(crate::CommandError::Truncated { command: "PING" }),
            ),
            (
                b"\x04\x06\x04PONG\x00".to_vec(),
                HandshakeError::UnexpectedCommand(Bytes::from_static(b"PONG")),
            ),
            (b"\x00\x01x".to_vec(), HandshakeError::UnexpectedMessage),
            (
                b"\x05".to_vec(),
                HandshakeError::Frame(crate::FrameError::CommandWithMore),
            ),
            (
                b"\x08".to_vec(),
                HandshakeError::Frame(crate::FrameError::ReservedFlags { flags: 8 }),
            ),
            (
                b"\x06\x80\x00\x00\x00\x00\x00\x00\x00".to_vec(),
                HandshakeError::Frame(crate::FrameError::LengthOverflow { len: 1 << 63 }),
            ),
            (
                b"\x05\x04ERROR\x03400".to_vec(),
                HandshakeError::Frame(crate::FrameError::CommandWithMore),
            ),
            (
                b"\x04\x0a\x05ERROR\x03400".to_vec(),
                HandshakeError::PeerError {
                    reason: Bytes::from_static(b"400"),
                },
            ),
        ];
        for (frame, expected) in cases {
            let mut input = greeting(1, b"NULL");
            input.extend(&frame);
            let (_, r, _) = run(Config::new(SocketType::Dealer), &input);
            assert_eq!(r, Err(expected));
        }
    }

    #[test]
    fn handshake_commands_respect_max_size() {
        let mut config = Config::new(SocketType::Pair);
        config.max_msg_size = Some(10);
        let mut input = greeting(1, b"NULL");
        input.extend(ready(&[("Socket-Type", b"PAIR")]));
        let (_, r, _) = run(config, &input);
        assert!(matches!(
            r,
            Err(HandshakeError::Frame(crate::FrameError::TooLarge {
                max: 10,
                ..
            }))
        ));
    }

    #[test]
    fn greeting_errors() {
        let (_, r, _) = run(Config::new(SocketType::Pair), &greeting(1, b"PLAIN"));
        assert_eq!(r, Err(HandshakeError::MechanismMismatch));
        let (_, r, _) = run(Config::new(SocketType::Pair), &greeting(1, b"BOGUS"));
        assert_eq!(r, Err(HandshakeError::UnknownMechanism));
        // "NULL" followed by junk instead of zero padding is not NULL.
        let mut g = greeting(1, b"NULL");
        g[16] = b'X';
        let (_, r, _) = run(Config::new(SocketType::Pair), &g);
        assert_eq!(r, Err(HandshakeError::UnknownMechanism));
        let (_, r, out) = run(Config::new(SocketType::Pair), &[0x01, 0x00]);
        assert_eq!(
            r,
            Err(HandshakeError::UnsupportedVersion { major: 1, minor: 0 })
        );
        assert_eq!(out.len(), SIGNATURE_LEN);
        let mut g = greeting(1, b"NULL");
        g[10] = 1;
        let (_, r, out) = run(Config::new(SocketType::Pair), &g[..11]);
        assert_eq!(
            r,
            Err(HandshakeError::UnsupportedVersion { major: 2, minor: 0 })
        );
        // The rest of our greeting was not sent to the 2.0 peer.
        assert_eq!(out.len(), SIGNATURE_LEN + 1);
        g[9] = 0x7D;
        let (_, r, _) = run(Config::new(SocketType::Pair), &g);
        assert_eq!(r, Err(HandshakeError::BadSignature));
    }

    #[test]
    fn config_metadata_filters_properties() {
        let mut c = Config::new(SocketType::Router);
        c.routing_id = Bytes::from_static(b"id");
        c.properties = vec![
            ("X-Good".into(), Bytes::from_static(b"1")),
            ("identity".into(), Bytes::from_static(b"spoof")),
            ("bad name".into(), Bytes::new()),
        ];
        let m = c.metadata();
        let names: Vec<_> = m.iter().map(|(n, _)| n.to_owned()).collect();
        assert_eq!(names, ["Socket-Type", "Identity", "X-Good"]);
        assert_eq!(m.get("identity"), Some(&b"id"[..]));
        assert_eq!(Config::new(SocketType::Pub).metadata().len(), 1);
    }
}
