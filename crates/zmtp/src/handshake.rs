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
use crate::greeting::{detect, Detected, Greeting, GREETING_LEN, MAJOR_POS, SIGNATURE_LEN};
use crate::legacy;
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
    /// Messages of one frame starting 0x01 or 0x00 are subscriptions and cancellations, sent
    /// as SUBSCRIBE/CANCEL commands to 3.1 peers (RFC 37): for an engine whose SUB and XSUB
    /// sockets take subscriptions as messages, as libzmq's API does. Off by default: frames go
    /// out as they are, and subscriptions through [`Connection::send_command`](crate::Connection::send_command).
    pub send_subscriptions: bool,
    /// Heartbeats in the data phase (ZMTP 3.0 and later).
    pub heartbeat: crate::heartbeat::HeartbeatConfig,
    /// How long the handshake may take (libzmq's HANDSHAKE_IVL; None: forever).
    pub handshake_timeout: Option<std::time::Duration>,
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
            send_subscriptions: false,
            heartbeat: crate::heartbeat::HeartbeatConfig::default(),
            handshake_timeout: None,
        }
    }

    /// The metadata we announce in READY, in libzmq's order: Socket-Type,
    /// Identity (REQ/DEALER/ROUTER only), then the extra properties.
    pub fn metadata(&self) -> Metadata {
        let mut m = Metadata::new();
        m.insert(SOCKET_TYPE, Bytes::from_static(self.socket_type.name().as_bytes()));
        if self.socket_type.sends_identity() {
            m.insert(IDENTITY, self.routing_id.clone());
        }
        for (name, value) in &self.properties {
            let reserved = name.eq_ignore_ascii_case(SOCKET_TYPE) || name.eq_ignore_ascii_case(IDENTITY);
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
    /// The peer's socket type: from READY (3.x) or the greeting's socket-type
    /// byte (2.0); `None` for a ZMTP 1.0 peer, which does not announce it.
    pub socket_type: Option<SocketType>,
    /// The peer's "Identity" property if it sent one (possibly empty); for a
    /// 1.0/2.0 peer, its identity message (always sent, possibly empty).
    pub routing_id: Option<Bytes>,
    /// All properties the peer sent, including Socket-Type and Identity. A 2.0
    /// peer sends none: its Socket-Type is filled in from the greeting.
    pub metadata: Metadata,
    /// libzmq's rule for a ZMTP 1.0 peer without a signature (libzmq 2.x) when
    /// we are a PUB or XPUB: such peers never send subscriptions, so the
    /// connection acts as if the peer had subscribed to everything.
    pub implies_subscribe_all: bool,
}

/// Receiving the peer's greeting while sending ours in stages.
#[derive(Debug)]
struct GreetingPhase {
    ours: [u8; GREETING_LEN],
    sent: usize,
    theirs: [u8; GREETING_LEN],
    received: usize,
    /// How many greeting bytes the peer sends: 64 for 3.x, 12 for a 1.0/2.0
    /// peer with a signature (known once its revision byte is in).
    expected: usize,
}

/// A 1.0/2.0 peer: reading its identity message, one frame in its framing.
#[derive(Debug)]
struct LegacyPhase {
    version: Version,
    peer_type: Option<SocketType>,
    unversioned: bool,
    /// The identity frame as it arrives (at most 10 + 255 bytes).
    frame: Vec<u8>,
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
    Legacy(LegacyPhase),
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
        let ours = Greeting::new(version, config.mechanism.name(), as_server, config.routing_id.len()).to_bytes();
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
                expected: GREETING_LEN,
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
                    // Take bytes up to the next point where the peer's revision may be
                    // decided (its first byte, its signature, its revision byte, the end
                    // of its greeting), so that a ZMTP 1.0 peer's identity frame is never
                    // read past: what follows it belongs to the caller.
                    let stop = match g.received {
                        0 => 1,
                        r if r < SIGNATURE_LEN => SIGNATURE_LEN,
                        SIGNATURE_LEN => MAJOR_POS + 1,
                        _ => g.expected,
                    };
                    let take = rest.len().min(stop - g.received);
                    if take == 0 {
                        return Ok(consumed);
                    }
                    g.theirs[g.received..g.received + take].copy_from_slice(&rest[..take]);
                    g.received += take;
                    consumed += take;
                    // Our major version once their signature is in, the rest once their
                    // revision is in (libzmq's order): 3.x gets the rest of a 3.x greeting,
                    // 1.0 and 2.0 our socket-type byte.
                    let revision = match detect(&g.theirs[..g.received])? {
                        Detected::Pending => continue,
                        Detected::Unversioned => {
                            // ZMTP 1.0 without a signature: what arrived starts its
                            // identity frame, and our signature was our identity
                            // frame's header.
                            let seed = g.theirs[..g.received].to_vec();
                            self.begin_legacy(Version::V1_0, true, None, seed)?;
                            continue;
                        }
                        Detected::Signature => None,
                        Detected::Revision(r) => Some(r),
                    };
                    if g.sent == SIGNATURE_LEN {
                        self.transmit.push(g.ours[MAJOR_POS]);
                        g.sent += 1;
                    }
                    let Some(revision) = revision else { continue };
                    let legacy = revision <= legacy::V2_REVISION;
                    if g.sent == MAJOR_POS + 1 {
                        if legacy {
                            // libzmq sends its own socket-type number here, whatever the
                            // type; a type 2.0 does not know is refused below.
                            let ty = legacy::libzmq_number(self.socket_type).unwrap_or(u8::MAX);
                            self.transmit.push(ty);
                            g.sent += 1;
                            g.expected = legacy::V2_GREETING_LEN;
                        } else {
                            self.transmit.extend_from_slice(&g.ours[MAJOR_POS + 1..]);
                            g.sent = GREETING_LEN;
                        }
                    }
                    if g.received < g.expected {
                        continue;
                    }
                    if legacy {
                        let mut twelve = [0u8; legacy::V2_GREETING_LEN];
                        twelve.copy_from_slice(&g.theirs[..legacy::V2_GREETING_LEN]);
                        let (version, peer_type) = if revision == legacy::V1_REVISION {
                            // libzmq 3.0/3.1: its socket-type byte is not checked.
                            (Version::V1_0, None)
                        } else {
                            // A secured socket says so before judging the peer's type.
                            if let Some(e) = self.legacy_refusal(Version::V2_0) {
                                return Err(e);
                            }
                            (Version::V2_0, Some(legacy::GreetingV2::parse(&twelve)?.socket_type))
                        };
                        self.begin_legacy(version, false, peer_type, Vec::new())?;
                        continue;
                    }
                    if g.received == GREETING_LEN {
                        let ours = Greeting::parse(&g.ours)?;
                        let theirs = Greeting::parse(&g.theirs)?;
                        if theirs.mechanism != ours.mechanism {
                            let known = KNOWN_MECHANISMS.contains(&theirs.mechanism_name())
                                && theirs.mechanism_name().len() < theirs.mechanism.len()
                                && theirs.mechanism[theirs.mechanism_name().len()..].iter().all(|&b| b == 0);
                            return Err(if known { HandshakeError::MechanismMismatch } else { HandshakeError::UnknownMechanism });
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
                        self.state =
                            State::Mechanism(MechanismPhase { version, mechanism, frame: Vec::new(), zap, null_deferred });
                    }
                }
                State::Legacy(l) => {
                    // Gather the identity frame, never a byte past it. Its size is
                    // judged from the header before the body is read: at most
                    // MAXMSGSIZE, and a routing id of at most 255 bytes.
                    let v1 = l.version == Version::V1_0;
                    let header = crate::frame::parse_header_for(l.version, &l.frame, self.max_msg_size)?;
                    let target = match header {
                        Some(h) if h.body_len > MAX_ROUTING_ID as u64 => {
                            return Err(HandshakeError::IdentityTooLong {
                                len: usize::try_from(h.body_len).unwrap_or(usize::MAX),
                            });
                        }
                        Some(h) => h.header_len + h.body_len as usize,
                        None => legacy::header_need(v1, &l.frame),
                    };
                    if l.frame.len() < target {
                        let take = rest.len().min(target - l.frame.len());
                        if take == 0 {
                            return Ok(consumed);
                        }
                        l.frame.extend_from_slice(&rest[..take]);
                        consumed += take;
                        continue;
                    }
                    let Some(h) = header else { continue };
                    // The identity frame's MORE flag means nothing (libzmq ignores it).
                    let id = Bytes::copy_from_slice(&l.frame[h.header_len..]);
                    let mut metadata = Metadata::new();
                    if let Some(t) = l.peer_type {
                        metadata.insert(SOCKET_TYPE, Bytes::from_static(t.name().as_bytes()));
                    }
                    let implies_subscribe_all = l.unversioned && matches!(self.socket_type, SocketType::Pub | SocketType::XPub);
                    self.state = State::Complete(Peer {
                        version: l.version,
                        socket_type: l.peer_type,
                        routing_id: Some(id),
                        metadata,
                        implies_subscribe_all,
                    });
                }
                State::Mechanism(m) => {
                    if rest.is_empty() || m.zap.is_some() {
                        // Paused for ZAP: the rest waits for `handle_zap_reply`.
                        return Ok(consumed);
                    }
                    // Gather exactly one frame: the header first, then the body.
                    let target = match parse_header(&m.frame, self.max_msg_size)? {
                        Some(h) => frame_len(h.header_len, h.body_len)?,
                        None if m.frame.first().is_some_and(|f| f & FLAG_LONG != 0) => LONG_HEADER_LEN,
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

    /// Why this socket refuses a ZMTP 1.0/2.0 peer, if it does: a security mechanism or a
    /// ZAP domain (libzmq's `zap_enabled`), or a socket type 2.0 did not have.
    fn legacy_refusal(&self, version: Version) -> Option<HandshakeError> {
        if !matches!(self.mechanism, Mechanism::Null) || !self.zap_config.domain.is_empty() {
            Some(HandshakeError::LegacySecurity { version })
        } else if legacy::v2_number(self.socket_type).is_none() {
            Some(HandshakeError::LegacySocketType { ours: self.socket_type, version })
        } else {
            None
        }
    }

    /// Switches to a 1.0/2.0 peer: checks we may talk to it, queues our identity
    /// message and starts reading the peer's. `seed` holds the bytes of its identity
    /// frame already read (a 1.0 peer without a signature).
    fn begin_legacy(
        &mut self,
        version: Version,
        unversioned: bool,
        peer_type: Option<SocketType>,
        seed: Vec<u8>,
    ) -> Result<(), HandshakeError> {
        if let Some(e) = self.legacy_refusal(version) {
            return Err(e);
        }
        if let Some(peer) = peer_type {
            if !self.socket_type.is_compatible_with(peer) {
                return Err(HandshakeError::IncompatibleSocketType { ours: self.socket_type, peer });
            }
        }
        if unversioned {
            // Our signature was the long header of our identity frame (length id + 1,
            // flags 7F): the body follows.
            self.transmit.extend_from_slice(&self.routing_id);
        } else {
            crate::frame::encode_frame_for(version, &self.routing_id, false, &mut self.transmit);
        }
        self.state = State::Legacy(LegacyPhase { version, peer_type, unversioned, frame: seed });
        Ok(())
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
                Command::Error { reason: Bytes::from(reply.status_code.to_string()) }.encode(&mut self.transmit);
            }
            return Err(HandshakeError::ZapRefused { status: reply.status_code, text: reply.status_text });
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
                // Only a 3.x peer can read an ERROR command.
                let reason = match self.state {
                    State::Mechanism(_) => error_reason(e),
                    _ => None,
                };
                if let Some(reason) = reason {
                    Command::Error { reason: Bytes::from_static(reason.as_bytes()) }.encode(&mut self.transmit);
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
            State::Legacy(l) => Some(l.version),
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
        .ok_or(HandshakeError::Frame(crate::FrameError::TooLarge { len: body_len, max: usize::MAX as u64 }))
}

/// The ERROR reason we send when refusing a peer, for the refusals where
/// RFC 23 asks for one (socket type validation).
fn error_reason(e: &HandshakeError) -> Option<&'static str> {
    match e {
        HandshakeError::IncompatibleSocketType { .. } | HandshakeError::UnknownSocketType | HandshakeError::MissingSocketType => {
            Some("Invalid socket type")
        }
        _ => None,
    }
}

fn validate_peer(ours: SocketType, version: Version, metadata: Metadata) -> Result<Peer, HandshakeError> {
    let name = metadata.get(SOCKET_TYPE).ok_or(HandshakeError::MissingSocketType)?;
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
    Ok(Peer { version, socket_type: Some(peer), routing_id, metadata, implies_subscribe_all: false })
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
        assert_eq!(peer.socket_type, Some(SocketType::Router));
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
        assert_eq!(hs.peer().unwrap().metadata.get("X-Big").map(|v| v.len()), Some(300));
    }

    #[test]
    fn refuses_incompatible_socket_type_with_error_command() {
        let mut input = greeting(1, b"NULL");
        input.extend(ready(&[("Socket-Type", b"PUSH")]));
        let (mut hs, r, out) = run(Config::new(SocketType::Push), &input);
        assert_eq!(r, Err(HandshakeError::IncompatibleSocketType { ours: SocketType::Push, peer: SocketType::Push }));
        let mut expected = Vec::new();
        Command::Error { reason: Bytes::from_static(b"Invalid socket type") }.encode(&mut expected);
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
            (ready(&[("X-Other", b"1")]), HandshakeError::MissingSocketType),
            (ready(&[("Socket-Type", b"FOO")]), HandshakeError::UnknownSocketType),
            (ready(&[("Socket-Type", b"DEALER"), ("Identity", &[1u8; 256])]), HandshakeError::IdentityTooLong { len: 256 }),
            (b"\x04\x07\x05READY\x00".to_vec(), HandshakeError::Metadata(crate::MetadataError::EmptyName { offset: 0 })),
            (b"\x04\x00".to_vec(), HandshakeError::Command(crate::CommandError::Empty)),
            (b"\x04\x05\x04PING".to_vec(), HandshakeError::Command(crate::CommandError::Truncated { command: "PING" })),
            (b"\x04\x06\x04PONG\x00".to_vec(), HandshakeError::UnexpectedCommand(Bytes::from_static(b"PONG"))),
            (b"\x00\x01x".to_vec(), HandshakeError::UnexpectedMessage),
            (b"\x05".to_vec(), HandshakeError::Frame(crate::FrameError::CommandWithMore)),
            (b"\x08".to_vec(), HandshakeError::Frame(crate::FrameError::ReservedFlags { flags: 8 })),
            (
                b"\x06\x80\x00\x00\x00\x00\x00\x00\x00".to_vec(),
                HandshakeError::Frame(crate::FrameError::LengthOverflow { len: 1 << 63 }),
            ),
            (b"\x05\x04ERROR\x03400".to_vec(), HandshakeError::Frame(crate::FrameError::CommandWithMore)),
            (b"\x04\x0a\x05ERROR\x03400".to_vec(), HandshakeError::PeerError { reason: Bytes::from_static(b"400") }),
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
        assert!(matches!(r, Err(HandshakeError::Frame(crate::FrameError::TooLarge { max: 10, .. }))));
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
        let mut g = greeting(1, b"NULL");
        g[10] = 2;
        // Revision 2 is spoken to as 3.x, as libzmq does.
        let (hs, r, out) = run(Config::new(SocketType::Pair), &g[..11]);
        assert_eq!(r, Ok(11));
        assert!(hs.error().is_none());
        assert_eq!(out.len(), GREETING_LEN);
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

    /// Feeds `input` to a fresh handshake in one piece and byte by byte; both must
    /// consume and send the same.
    fn run_both(config: Config, input: &[u8]) -> (Handshake, Result<usize, HandshakeError>, Vec<u8>) {
        let (hs, r, out) = run(config.clone(), input);
        let mut one = Handshake::new(config);
        let mut out1 = Vec::new();
        let mut r1 = Ok(0);
        for (i, b) in input.iter().enumerate() {
            match one.handle_input(std::slice::from_ref(b)) {
                Ok(1) => r1 = Ok(i + 1),
                Ok(_) => break,
                Err(e) => {
                    r1 = Err(e);
                    break;
                }
            }
        }
        one.poll_transmit(&mut out1);
        assert_eq!(r1, r, "byte at a time");
        assert_eq!(out1, out, "byte at a time");
        (hs, r, out)
    }

    const SIG: [u8; 10] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F];

    #[test]
    fn zmtp_1_0_unversioned_peer() {
        // Identity "abc" then a data frame, which stays with the caller.
        let input = b"\x04\x00abc\x06\x01hello";
        let mut c = Config::new(SocketType::Router);
        c.routing_id = Bytes::from_static(b"me");
        let (hs, r, out) = run_both(c, input);
        assert_eq!(r, Ok(5));
        let peer = hs.peer().unwrap();
        assert_eq!(peer.version, Version::V1_0);
        assert_eq!(peer.socket_type, None);
        assert_eq!(peer.routing_id.as_deref(), Some(&b"abc"[..]));
        assert!(!peer.implies_subscribe_all);
        assert_eq!(hs.version(), Some(Version::V1_0));
        // Our signature is our identity frame's header (length 3 = "me" + flags), then "me".
        assert_eq!(out, b"\xff\0\0\0\0\0\0\0\x03\x7fme");
        // A long identity header (FF, 8-byte length, flags without bit 0).
        let mut input = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 11, 0];
        input.extend_from_slice(b"0123456789");
        let (hs, r, out) = run_both(Config::new(SocketType::Dealer), &input);
        assert_eq!(r, Ok(20));
        assert_eq!(hs.peer().unwrap().routing_id.as_deref(), Some(&b"0123456789"[..]));
        assert_eq!(out, SIG);
        // An empty identity is complete after two bytes.
        let (hs, r, _) = run_both(Config::new(SocketType::Pull), b"\x01\x00");
        assert_eq!(r, Ok(2));
        assert_eq!(hs.peer().unwrap().routing_id.as_deref(), Some(&b""[..]));
    }

    #[test]
    fn zmtp_1_0_peer_of_a_publisher_subscribes_to_all() {
        for (ty, implied) in [(SocketType::Pub, true), (SocketType::XPub, true), (SocketType::Sub, false)] {
            let (hs, _, _) = run_both(Config::new(ty), b"\x01\x00");
            assert_eq!(hs.peer().unwrap().implies_subscribe_all, implied, "{ty}");
        }
        // Not for a 1.0 peer with a signature (libzmq sets it for unversioned peers only).
        let mut input = SIG.to_vec();
        input.extend([0, 2, 1, 0]);
        let (hs, r, _) = run_both(Config::new(SocketType::Pub), &input);
        assert_eq!(r, Ok(14));
        assert!(!hs.peer().unwrap().implies_subscribe_all);
    }

    #[test]
    fn zmtp_2_0_peer() {
        let mut input = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1, 5];
        input.extend(b"\x00\x03abc\x01\x05hello");
        let (hs, r, out) = run_both(Config::new(SocketType::Router), &input);
        assert_eq!(r, Ok(17));
        let peer = hs.peer().unwrap();
        assert_eq!(peer.version, Version::V2_0);
        assert_eq!(peer.socket_type, Some(SocketType::Dealer));
        assert_eq!(peer.routing_id.as_deref(), Some(&b"abc"[..]));
        assert_eq!(peer.metadata.get(SOCKET_TYPE), Some(&b"DEALER"[..]));
        // Signature, major 3, our 2.0 socket type (ROUTER = 6), our empty identity frame.
        let mut expected = SIG.to_vec();
        expected.extend([3, 6, 0, 0]);
        assert_eq!(out, expected);
        // A long identity header is fine too, up to 255 bytes.
        let mut input = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1, 5, 2, 0, 0, 0, 0, 0, 0, 0, 255];
        input.extend([7u8; 255]);
        let (hs, r, _) = run_both(Config::new(SocketType::Router), &input);
        assert_eq!(r, Ok(input.len()));
        assert_eq!(hs.peer().unwrap().routing_id.as_ref().map(|b| b.len()), Some(255));
    }

    #[test]
    fn zmtp_1_0_peer_with_signature() {
        let mut input = SIG.to_vec();
        input.extend([0, 99]); // revision 0; its socket-type byte is not judged
        input.extend(b"\x04\x00abc");
        let mut c = Config::new(SocketType::Router);
        c.routing_id = Bytes::from_static(b"r");
        let (hs, r, out) = run_both(c, &input);
        assert_eq!(r, Ok(17));
        let peer = hs.peer().unwrap();
        assert_eq!((peer.version, peer.socket_type), (Version::V1_0, None));
        assert_eq!(peer.routing_id.as_deref(), Some(&b"abc"[..]));
        let mut expected = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 2, 0x7F, 3, 6];
        expected.extend(b"\x02\x00r");
        assert_eq!(out, expected);
    }

    #[test]
    fn legacy_refusals() {
        let v2 = |ty: u8, rest: &[u8]| {
            let mut g = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1, ty];
            g.extend_from_slice(rest);
            g
        };
        // Incompatible and unknown 2.0 socket types; no ERROR command (2.0 has none).
        let (_, r, out) = run_both(Config::new(SocketType::Push), &v2(8, b""));
        assert_eq!(r, Err(HandshakeError::IncompatibleSocketType { ours: SocketType::Push, peer: SocketType::Push }));
        assert_eq!(out.len(), 12);
        let (_, r, _) = run_both(Config::new(SocketType::Push), &v2(11, b""));
        assert_eq!(r, Err(HandshakeError::UnknownSocketType));
        // Security: a PLAIN server, a CURVE-less NULL socket with a ZAP domain.
        let mut plain = Config::new(SocketType::Dealer);
        plain.mechanism = Mechanism::PlainServer;
        let (_, r, _) = run_both(plain.clone(), b"\x01\x00");
        assert_eq!(r, Err(HandshakeError::LegacySecurity { version: Version::V1_0 }));
        let (_, r, _) = run_both(plain, &v2(11, b""));
        assert_eq!(r, Err(HandshakeError::LegacySecurity { version: Version::V2_0 }));
        let mut zap = Config::new(SocketType::Dealer);
        zap.zap.domain = "global".into();
        let (_, r, _) = run_both(zap, &v2(5, b""));
        assert_eq!(r, Err(HandshakeError::LegacySecurity { version: Version::V2_0 }));
        // A type 2.0 did not have.
        let (_, r, _) = run_both(Config::new(SocketType::Client), b"\x01\x00");
        assert_eq!(r, Err(HandshakeError::LegacySocketType { ours: SocketType::Client, version: Version::V1_0 }));
        // Oversized identities are refused from the header, before the body arrives.
        let (_, r, _) = run_both(Config::new(SocketType::Router), &v2(5, &[2, 0, 0, 0, 0, 0, 0, 1, 0]));
        assert_eq!(r, Err(HandshakeError::IdentityTooLong { len: 256 }));
        let (_, r, _) = run_both(Config::new(SocketType::Router), &[0xFF, 0x40, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(r, Err(HandshakeError::IdentityTooLong { len: (1 << 62) - 1 }));
        let mut small = Config::new(SocketType::Router);
        small.max_msg_size = Some(2);
        let (_, r, _) = run_both(small, b"\x04\x00abc");
        assert_eq!(r, Err(HandshakeError::Frame(crate::FrameError::TooLarge { len: 3, max: 2 })));
        // Malformed 1.0 and 2.0 identity frames.
        let (_, r, _) = run_both(Config::new(SocketType::Router), b"\x00");
        assert_eq!(r, Err(HandshakeError::Frame(crate::FrameError::ZeroLength)));
        let (_, r, _) = run_both(Config::new(SocketType::Router), b"\x02\x04x");
        assert_eq!(r, Err(HandshakeError::Frame(crate::FrameError::ReservedFlags { flags: 4 })));
        let (_, r, _) = run_both(Config::new(SocketType::Router), &v2(5, &[4, 0]));
        assert_eq!(r, Err(HandshakeError::Frame(crate::FrameError::ReservedFlags { flags: 4 })));
    }
}
