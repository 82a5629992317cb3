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
// One per connection, for its handshake only: boxing the mechanism's state would buy nothing.
#[allow(clippy::large_enum_variant)]
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
mod tests;
