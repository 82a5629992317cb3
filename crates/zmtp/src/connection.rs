//! A whole ZMTP connection without the socket: the handshake, then the data phase.
//!
//! This is the connection an engine runs (oxmq's sessions do) and the one its fuzz targets
//! drive. It offers two faces over one state machine:
//!
//! * **The engine's**: [`Connection::handshake`] takes handshake bytes from the receive buffer
//!   and says when the handshake is complete; from then on [`Connection::data_mut`] is the
//!   [`DataPhase`], which decodes frames into the engine's own [`Sink`](crate::data::Sink) and
//!   encodes the engine's frames into its send buffer. Deadlines (the handshake's timeout, the
//!   heartbeats) come out of [`Connection::next_deadline`] and are run by
//!   [`Connection::expire`]: no clock is read here, time comes in as arguments.
//! * **An event queue** (in the style of quinn-proto): [`Connection::handle_input`] runs both
//!   phases and queues [`Event`]s; frames and commands sent before the handshake completes
//!   ([`Connection::send_frame`], [`Connection::send_command`]) are held back and released
//!   right after our READY, encoded for the version finally negotiated; output accumulates
//!   until [`Connection::poll_transmit`].
//!
//! After an error the connection is dead: every later input returns the same error. With
//! CURVE, every frame after the handshake is sealed into a MESSAGE on the way out and opened
//! on the way in. With a ZMTP 1.0 or 2.0 peer, frames go out and come in in that revision's
//! framing; SUBSCRIBE/CANCEL go out as subscription messages, and other commands (PING, PONG,
//! JOIN, ...), which those revisions do not have, are not sent. [`Peer::implies_subscribe_all`]
//! is left to the caller.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::BytesMut;

use crate::command::Command;
use crate::data::{Body, DataPhase, Flow, Sink};
use crate::error::{Error, HandshakeError};
use crate::frame::Frame;
use crate::handshake::{Config, Handshake, Peer};
use crate::heartbeat::{Expired, HeartbeatConfig};
use crate::version::Version;

/// Something that happened on the connection (the event queue's face).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The handshake succeeded.
    HandshakeComplete(Peer),
    /// A data frame (zero-copy).
    Frame(Frame),
    /// A command received after the handshake (a PING is also answered).
    Command(Command),
}

/// Output queued before the handshake completed.
#[derive(Debug)]
enum Held {
    Frame(Vec<u8>, bool),
    Command(Command),
}

/// Where the connection is.
#[derive(Debug)]
enum Phase {
    /// The handshake, and when it must be over.
    Handshake(Box<Handshake>, Option<Instant>),
    /// After it.
    Data(DataPhase),
}

/// A ZMTP connection state machine.
#[derive(Debug)]
pub struct Connection {
    phase: Phase,
    /// The peer, once the handshake is complete.
    peer: Option<Peer>,
    /// The handshake's outcome a ZAP handler gave, kept for the connection's properties.
    zap_reply: Option<crate::zap::ZapReply>,
    /// What the data phase is made with at completion.
    max_msg_size: Option<u64>,
    send_subscriptions: bool,
    heartbeat: HeartbeatConfig,
    error: Option<Error>,
    // The event queue's face:
    events: VecDeque<Event>,
    held: Vec<Held>,
    transmit: Vec<u8>,
}

impl Connection {
    /// A new connection advertising ZMTP 3.1; our greeting is queued.
    pub fn new(config: Config) -> Connection {
        Connection::with_version(config, Version::V3_1)
    }

    /// A new connection advertising `version`.
    pub fn with_version(config: Config, version: Version) -> Connection {
        Connection::start(config, version, Instant::now())
    }

    /// A new connection advertising `version`, started at `now` (the handshake's timeout
    /// runs from then).
    pub fn start(config: Config, version: Version, now: Instant) -> Connection {
        let deadline = config.handshake_timeout.map(|t| now + t);
        let (max_msg_size, send_subscriptions, heartbeat) = (config.max_msg_size, config.send_subscriptions, config.heartbeat);
        Connection {
            phase: Phase::Handshake(Box::new(Handshake::with_version(config, version)), deadline),
            peer: None,
            zap_reply: None,
            max_msg_size,
            send_subscriptions,
            heartbeat,
            error: None,
            events: VecDeque::new(),
            held: Vec::new(),
            transmit: Vec::new(),
        }
    }

    // ----- the engine's face -----

    /// Feeds handshake input from `rx` (consumed bytes leave it; data frames that came in the
    /// same read stay). Ok(true) when the handshake completed in this call: [`Connection::peer`]
    /// is known and [`Connection::data_mut`] is ready, its heartbeats starting at `now`. Ok(false)
    /// when it needs more input (or a ZAP verdict), and also once it is over.
    pub fn handshake(&mut self, rx: &mut BytesMut, now: Instant) -> Result<bool, Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let Phase::Handshake(hs, _) = &mut self.phase else { return Ok(false) };
        let n = match hs.handle_input(rx) {
            Ok(n) => n,
            Err(e) => return Err(self.fail(e.into())),
        };
        bytes::Buf::advance(rx, n);
        let Some(peer) = hs.peer() else { return Ok(false) };
        let peer = peer.clone();
        let cipher = hs.take_cipher();
        // What the handshake still has to send (our READY) goes out before any data.
        hs.poll_transmit(&mut self.transmit);
        self.zap_reply = hs.zap_reply().cloned();
        let data = DataPhase::new(peer.version, self.max_msg_size, cipher, self.send_subscriptions, self.heartbeat, now);
        self.phase = Phase::Data(data);
        self.peer = Some(peer);
        Ok(true)
    }

    /// Moves the handshake's bytes to send (greeting, READY, ERROR) onto the end of `out`.
    pub fn poll_handshake_transmit(&mut self, out: &mut Vec<u8>) {
        if let Phase::Handshake(hs, _) = &mut self.phase {
            hs.poll_transmit(out);
        }
        out.append(&mut self.transmit);
    }

    /// The data phase, once the handshake is complete.
    #[inline]
    pub fn data(&self) -> Option<&DataPhase> {
        match &self.phase {
            Phase::Data(d) => Some(d),
            Phase::Handshake(..) => None,
        }
    }

    /// The data phase, to decode and encode with, once the handshake is complete.
    #[inline]
    pub fn data_mut(&mut self) -> Option<&mut DataPhase> {
        match &mut self.phase {
            Phase::Data(d) => Some(d),
            Phase::Handshake(..) => None,
        }
    }

    /// The ZAP request the handshake is paused for (see [`crate::zap`]).
    pub fn zap_request(&self) -> Option<&crate::zap::ZapRequest> {
        match &self.phase {
            Phase::Handshake(hs, _) => hs.zap_request(),
            Phase::Data(_) => None,
        }
    }

    /// Resumes a handshake paused for ZAP with the handler's reply frames; then feed
    /// [`Connection::handshake`] again with input that waited meanwhile.
    pub fn handle_zap_reply(&mut self, frames: &[bytes::Bytes]) -> Result<(), Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let Phase::Handshake(hs, _) = &mut self.phase else { return Ok(()) };
        match hs.handle_zap_reply(frames) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.fail(e.into())),
        }
    }

    /// No ZAP handler can be asked (it went away): the handshake fails as libzmq's does.
    pub fn zap_unavailable(&mut self) -> Error {
        let e = match &mut self.phase {
            Phase::Handshake(hs, _) => hs.zap_unavailable().into(),
            Phase::Data(_) => Error::Refused,
        };
        self.fail(e)
    }

    /// The ZAP handler's approval, once given.
    pub fn zap_reply(&self) -> Option<&crate::zap::ZapReply> {
        match &self.phase {
            Phase::Handshake(hs, _) => hs.zap_reply(),
            Phase::Data(_) => self.zap_reply.as_ref(),
        }
    }

    /// The earliest deadline: the handshake's timeout while it runs, the heartbeats' after.
    pub fn next_deadline(&self) -> Option<Instant> {
        match &self.phase {
            Phase::Handshake(_, at) => *at,
            Phase::Data(d) => d.next_deadline(),
        }
    }

    /// Runs the deadlines due at `now` (`held`: input is held back by a full queue, which is
    /// not silence). An error says the connection is dead: the handshake took too long, or
    /// the heartbeats found the link silent. It is not a protocol error of the peer's, so
    /// [`Connection::error`] stays as it was.
    pub fn expire(&mut self, now: Instant, held: bool) -> Result<(), Expired> {
        match &mut self.phase {
            Phase::Handshake(_, Some(at)) if *at <= now => Err(Expired::Handshake),
            Phase::Handshake(..) => Ok(()),
            Phase::Data(d) => d.expire(now, held),
        }
    }

    fn fail(&mut self, e: Error) -> Error {
        self.error = Some(e.clone());
        e
    }

    /// Records an error the engine met in the data phase (from [`DataPhase::decode`]), so
    /// that [`Connection::error`] reports it.
    pub fn set_error(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }

    /// The handshake's error, if the handshake failed.
    pub fn handshake_error(&self) -> Option<&HandshakeError> {
        match &self.error {
            Some(Error::Handshake(e)) => Some(e),
            _ => None,
        }
    }

    // ----- the event queue's face -----

    /// Consumes as much of `buf` as forms complete handshake data, frames and commands,
    /// queuing events. Incomplete trailing bytes stay in `buf`.
    pub fn handle_input(&mut self, buf: &mut BytesMut) -> Result<(), Error> {
        if self.handshake(buf, Instant::now())? {
            let peer = self.peer.clone().expect("known at completion");
            self.events.push_back(Event::HandshakeComplete(peer));
            for held in std::mem::take(&mut self.held) {
                match held {
                    Held::Frame(body, more) => self.send_frame(&body, more),
                    Held::Command(cmd) => self.send_command(&cmd),
                }
            }
        }
        let Phase::Data(d) = &mut self.phase else { return Ok(()) };
        let mut sink = Events(&mut self.events);
        match d.decode(buf, &mut sink) {
            Ok(_) => Ok(()),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Queues a data frame (held back until the handshake completes).
    pub fn send_frame(&mut self, body: &[u8], more: bool) {
        match &mut self.phase {
            Phase::Data(d) => d.encode_frame(&mut self.transmit, more, body),
            Phase::Handshake(..) => self.held.push(Held::Frame(body.to_vec(), more)),
        }
    }

    /// Queues a command (held back until the handshake completes). SUBSCRIBE/CANCEL go out
    /// as subscription messages to a 3.0 peer.
    pub fn send_command(&mut self, cmd: &Command) {
        match &mut self.phase {
            Phase::Data(d) => d.encode_command_for(cmd, &mut self.transmit),
            Phase::Handshake(..) => self.held.push(Held::Command(cmd.clone())),
        }
    }

    /// Moves every byte we want to send onto the end of `out`: the handshake's, the
    /// protocol's own commands (PONG), then what was sent.
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        match &mut self.phase {
            Phase::Handshake(hs, _) => hs.poll_transmit(out),
            Phase::Data(d) => {
                out.append(&mut self.transmit);
                d.flush_control(out);
                return;
            }
        }
        out.append(&mut self.transmit);
    }

    /// The peer, once the handshake is complete.
    pub fn peer(&self) -> Option<&Peer> {
        self.peer.as_ref()
    }

    /// The negotiated version, once the handshake is complete.
    pub fn version(&self) -> Option<Version> {
        self.peer.as_ref().map(|p| p.version)
    }

    /// True once the handshake is complete.
    pub fn is_handshake_complete(&self) -> bool {
        self.peer.is_some()
    }

    /// The error that ended this connection, if any.
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }
}

/// The event queue's sink: everything becomes an [`Event`], bodies taken without a copy.
struct Events<'a>(&'a mut VecDeque<Event>);

impl Sink for Events<'_> {
    fn frame(&mut self, more: bool, body: &mut Body<'_>) -> Flow {
        self.0.push_back(Event::Frame(Frame { more, command: false, body: body.take() }));
        Flow::Go
    }

    fn command(&mut self, cmd: &Command, _body: &[u8]) -> Flow {
        self.0.push_back(Event::Command(cmd.clone()));
        Flow::Go
    }

    fn control(&mut self, cmd: &Command) {
        self.0.push_back(Event::Command(cmd.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{CommandError, FrameError, HandshakeError};
    use crate::socket_type::SocketType;
    use bytes::Bytes;

    /// Moves bytes between two connections until neither has anything to say.
    fn pump(a: &mut Connection, b: &mut Connection) -> Result<(), Error> {
        let (mut a_in, mut b_in) = (BytesMut::new(), BytesMut::new());
        loop {
            let mut out = Vec::new();
            a.poll_transmit(&mut out);
            b_in.extend_from_slice(&out);
            let mut out2 = Vec::new();
            b.poll_transmit(&mut out2);
            a_in.extend_from_slice(&out2);
            if out.is_empty() && out2.is_empty() {
                return Ok(());
            }
            b.handle_input(&mut b_in)?;
            a.handle_input(&mut a_in)?;
        }
    }

    fn events(c: &mut Connection) -> Vec<Event> {
        std::iter::from_fn(|| c.poll_event()).collect()
    }

    #[test]
    fn held_frames_flow_after_handshake() {
        let mut a = Connection::new(Config::new(SocketType::Dealer));
        let mut b = Connection::new(Config::new(SocketType::Router));
        a.send_frame(b"one", true);
        a.send_frame(b"two", false);
        a.send_command(&Command::Ping { ttl: 5, context: Bytes::from_static(b"c") });
        pump(&mut a, &mut b).unwrap();
        let ev = events(&mut b);
        assert!(matches!(&ev[0], Event::HandshakeComplete(p) if p.socket_type == Some(SocketType::Dealer)));
        assert_eq!(ev[1], Event::Frame(Frame { more: true, command: false, body: Bytes::from_static(b"one") }));
        assert_eq!(ev[2], Event::Frame(Frame { more: false, command: false, body: Bytes::from_static(b"two") }));
        assert_eq!(ev[3], Event::Command(Command::Ping { ttl: 5, context: Bytes::from_static(b"c") }));
        assert!(a.is_handshake_complete() && b.peer().is_some());
        assert_eq!(a.version(), Some(Version::V3_1));
    }

    #[test]
    fn subscriptions_follow_negotiated_version() {
        let mut sub = Connection::new(Config::new(SocketType::Sub));
        let mut publ = Connection::with_version(Config::new(SocketType::Pub), Version::V3_0);
        sub.send_command(&Command::Subscribe(Bytes::from_static(b"t")));
        pump(&mut sub, &mut publ).unwrap();
        sub.send_command(&Command::Cancel(Bytes::from_static(b"t")));
        pump(&mut sub, &mut publ).unwrap();
        let ev = events(&mut publ);
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[1], Event::Frame(Frame { more: false, command: false, body: Bytes::from_static(b"\x01t") }));
        assert_eq!(ev[2], Event::Frame(Frame { more: false, command: false, body: Bytes::from_static(b"\x00t") }));

        let mut sub = Connection::new(Config::new(SocketType::XSub));
        let mut publ = Connection::new(Config::new(SocketType::XPub));
        sub.send_command(&Command::Subscribe(Bytes::from_static(b"t")));
        pump(&mut sub, &mut publ).unwrap();
        let ev = events(&mut publ);
        assert_eq!(ev[1], Event::Command(Command::Subscribe(Bytes::from_static(b"t"))));
    }

    #[test]
    fn errors_are_sticky_and_typed() {
        let mut a = Connection::new(Config::new(SocketType::Push));
        let mut b = Connection::new(Config::new(SocketType::Push));
        let err = pump(&mut a, &mut b).unwrap_err();
        assert!(matches!(err, Error::Handshake(HandshakeError::IncompatibleSocketType { .. })));
        assert!(b.error().is_some() || a.error().is_some());

        let mut a = Connection::new(Config::new(SocketType::Pair));
        let mut b = Connection::new(Config::new(SocketType::Pair));
        pump(&mut a, &mut b).unwrap();
        let mut bad = BytesMut::from(&b"\x04\x00"[..]);
        assert_eq!(b.handle_input(&mut bad), Err(Error::Command(CommandError::Empty)));
        let mut more = BytesMut::from(&b"\x00\x00"[..]);
        assert_eq!(b.handle_input(&mut more), Err(Error::Command(CommandError::Empty)));

        let mut c = Connection::new(Config::new(SocketType::Pair));
        let mut d = Connection::new(Config::new(SocketType::Pair));
        pump(&mut c, &mut d).unwrap();
        let mut bad = BytesMut::from(&b"\x10\x00"[..]);
        assert_eq!(d.handle_input(&mut bad), Err(Error::Frame(FrameError::ReservedFlags { flags: 0x10 })));
    }
}
