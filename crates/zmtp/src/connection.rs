//! A whole ZMTP connection without the socket: the handshake, then the data
//! phase, reported as a queue of [`Event`]s (in the style of quinn-proto).
//!
//! Input is taken from the caller's `BytesMut` so data frame bodies come out
//! zero-copy. Output accumulates until [`Connection::poll_transmit`]. Frames
//! and commands sent before the handshake completes are held back and
//! released right after our READY, so a caller may queue messages at once;
//! SUBSCRIBE/CANCEL held back this way are encoded for the version finally
//! negotiated. After an error the connection is dead: every later
//! `handle_input` returns the same error.
//!
//! With CURVE, every frame after the handshake is sealed into a MESSAGE on
//! the way out and opened on the way in by the handshake's [`Cipher`].
//!
//! With a ZMTP 1.0 or 2.0 peer, frames go out and come in in that revision's
//! framing from the end of the handshake on; SUBSCRIBE/CANCEL go out as
//! subscription messages, and other commands (PING, PONG, JOIN, ...), which
//! those revisions do not have, are not sent. [`Peer::implies_subscribe_all`]
//! is left to the caller.

use std::collections::VecDeque;

use bytes::{Buf, BytesMut};

use crate::command::{encode_subscription, Command};
use crate::error::Error;
use crate::frame::Frame;
use crate::frame::{encode_frame, encode_frame_for, FrameDecoder};
use crate::handshake::{Config, Handshake, Peer};
use crate::mechanism::Cipher;
use crate::version::Version;

/// Something that happened on the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The handshake succeeded.
    HandshakeComplete(Peer),
    /// A data frame (zero-copy).
    Frame(Frame),
    /// A command received after the handshake.
    Command(Command),
}

/// Output queued before the handshake completed.
#[derive(Debug)]
enum Held {
    Frame(Vec<u8>, bool),
    Command(Command),
}

/// A ZMTP connection state machine.
#[derive(Debug)]
pub struct Connection {
    handshake: Handshake,
    decoder: FrameDecoder,
    version: Option<Version>,
    events: VecDeque<Event>,
    held: Vec<Held>,
    transmit: Vec<u8>,
    error: Option<Error>,
    cipher: Option<Cipher>,
    /// A send that could not be sealed (nonce exhaustion), reported by the
    /// next `handle_input`.
    send_error: Option<crate::error::CipherError>,
}

impl Connection {
    /// A new connection advertising ZMTP 3.1; our greeting is queued.
    pub fn new(config: Config) -> Connection {
        Connection::with_version(config, Version::V3_1)
    }

    /// A new connection advertising `version`.
    pub fn with_version(config: Config, version: Version) -> Connection {
        let decoder = FrameDecoder::new(config.max_msg_size);
        Connection {
            handshake: Handshake::with_version(config, version),
            decoder,
            version: None,
            events: VecDeque::new(),
            held: Vec::new(),
            transmit: Vec::new(),
            error: None,
            cipher: None,
            send_error: None,
        }
    }

    /// Consumes as much of `buf` as forms complete handshake data, frames and
    /// commands, queuing events. Incomplete trailing bytes stay in `buf`.
    pub fn handle_input(&mut self, buf: &mut BytesMut) -> Result<(), Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let result = self.process(buf);
        if let Err(e) = &result {
            self.error = Some(e.clone());
        }
        result
    }

    fn process(&mut self, buf: &mut BytesMut) -> Result<(), Error> {
        if let Some(e) = self.send_error.take() {
            return Err(e.into());
        }
        if self.version.is_none() {
            let n = self.handshake.handle_input(buf)?;
            buf.advance(n);
            let Some(peer) = self.handshake.peer() else {
                return Ok(());
            };
            let version = peer.version;
            self.events
                .push_back(Event::HandshakeComplete(peer.clone()));
            self.version = Some(version);
            self.decoder = FrameDecoder::for_version(version, self.decoder.max_body());
            self.cipher = self.handshake.take_cipher();
            for held in std::mem::take(&mut self.held) {
                match held {
                    Held::Frame(body, more) => self.send_frame(&body, more),
                    Held::Command(cmd) => self.send_command(&cmd),
                }
            }
            if let Some(e) = self.send_error.take() {
                return Err(e.into());
            }
        }
        while let Some(mut frame) = self.decoder.decode(buf)? {
            if let Some(cipher) = &mut self.cipher {
                frame = cipher.open(frame.body.into())?;
            }
            let event = if frame.command {
                Event::Command(Command::parse_bytes(&frame.body)?)
            } else {
                Event::Frame(frame)
            };
            self.events.push_back(event);
        }
        Ok(())
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Queues a data frame (held back until the handshake completes).
    pub fn send_frame(&mut self, body: &[u8], more: bool) {
        if let Some(version) = self.version {
            match &mut self.cipher {
                None if version.is_legacy() => encode_frame_for(version, body, more, &mut self.transmit),
                None => encode_frame(body, more, false, &mut self.transmit),
                Some(_) => self.seal(more, false, body),
            }
        } else {
            self.held.push(Held::Frame(body.to_vec(), more));
        }
    }

    /// Queues a command (held back until the handshake completes).
    /// SUBSCRIBE/CANCEL go out as 3.0 subscription messages to a 3.0 peer.
    pub fn send_command(&mut self, cmd: &Command) {
        match (self.version, &mut self.cipher) {
            (Some(v), None) => encode_command(v, cmd, &mut self.transmit),
            (Some(v), Some(_)) => {
                let mut plain = Vec::new();
                encode_command(v, cmd, &mut plain);
                // Re-frame the plain encoding's body inside a MESSAGE.
                if let Ok(Some(h)) = crate::frame::parse_header(&plain, None) {
                    self.seal(h.more, h.command, &plain[h.header_len..]);
                }
            }
            (None, _) => self.held.push(Held::Command(cmd.clone())),
        }
    }

    fn seal(&mut self, more: bool, command: bool, body: &[u8]) {
        if let Some(c) = &mut self.cipher {
            if let Err(e) = c.seal(more, command, body, &mut self.transmit) {
                self.send_error.get_or_insert(e);
            }
        }
    }

    /// Moves every byte we want to send onto the end of `out`.
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>) {
        // Handshake bytes (greeting, READY, ERROR) always precede data.
        self.handshake.poll_transmit(out);
        out.append(&mut self.transmit);
    }

    /// The ZAP request the handshake is paused for (see [`crate::zap`]).
    pub fn zap_request(&self) -> Option<&crate::zap::ZapRequest> {
        self.handshake.zap_request()
    }

    /// Resumes a handshake paused for ZAP with the handler's reply frames; then call
    /// [`handle_input`](Self::handle_input) again for input that waited meanwhile.
    pub fn handle_zap_reply(&mut self, frames: &[bytes::Bytes]) -> Result<(), Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let r = self.handshake.handle_zap_reply(frames).map_err(Error::from);
        if let Err(e) = &r {
            self.error = Some(e.clone());
        }
        r
    }

    /// The ZAP handler's approval, once given.
    pub fn zap_reply(&self) -> Option<&crate::zap::ZapReply> {
        self.handshake.zap_reply()
    }

    /// The peer, once the handshake is complete.
    pub fn peer(&self) -> Option<&Peer> {
        self.handshake.peer()
    }

    /// The negotiated version, once the handshake is complete.
    pub fn version(&self) -> Option<Version> {
        self.version
    }

    /// True once the handshake is complete.
    pub fn is_handshake_complete(&self) -> bool {
        self.version.is_some()
    }

    /// The error that ended this connection, if any.
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }
}

fn encode_command(version: Version, cmd: &Command, out: &mut Vec<u8>) {
    match cmd {
        Command::Subscribe(topic) => encode_subscription(version, true, topic, out),
        Command::Cancel(topic) => encode_subscription(version, false, topic, out),
        // ZMTP 1.0 and 2.0 have no commands.
        _ if version.is_legacy() => {}
        other => other.encode(out),
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
        a.send_command(&Command::Ping {
            ttl: 5,
            context: Bytes::from_static(b"c"),
        });
        pump(&mut a, &mut b).unwrap();
        let ev = events(&mut b);
        assert!(
            matches!(&ev[0], Event::HandshakeComplete(p) if p.socket_type == Some(SocketType::Dealer))
        );
        assert_eq!(
            ev[1],
            Event::Frame(Frame {
                more: true,
                command: false,
                body: Bytes::from_static(b"one")
            })
        );
        assert_eq!(
            ev[2],
            Event::Frame(Frame {
                more: false,
                command: false,
                body: Bytes::from_static(b"two")
            })
        );
        assert_eq!(
            ev[3],
            Event::Command(Command::Ping {
                ttl: 5,
                context: Bytes::from_static(b"c")
            })
        );
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
        assert_eq!(
            ev[1],
            Event::Frame(Frame {
                more: false,
                command: false,
                body: Bytes::from_static(b"\x01t")
            })
        );
        assert_eq!(
            ev[2],
            Event::Frame(Frame {
                more: false,
                command: false,
                body: Bytes::from_static(b"\x00t")
            })
        );

        let mut sub = Connection::new(Config::new(SocketType::XSub));
        let mut publ = Connection::new(Config::new(SocketType::XPub));
        sub.send_command(&Command::Subscribe(Bytes::from_static(b"t")));
        pump(&mut sub, &mut publ).unwrap();
        let ev = events(&mut publ);
        assert_eq!(
            ev[1],
            Event::Command(Command::Subscribe(Bytes::from_static(b"t")))
        );
    }

    #[test]
    fn errors_are_sticky_and_typed() {
        let mut a = Connection::new(Config::new(SocketType::Push));
        let mut b = Connection::new(Config::new(SocketType::Push));
        let err = pump(&mut a, &mut b).unwrap_err();
        assert!(matches!(
            err,
            Error::Handshake(HandshakeError::IncompatibleSocketType { .. })
        ));
        assert!(b.error().is_some() || a.error().is_some());

        let mut a = Connection::new(Config::new(SocketType::Pair));
        let mut b = Connection::new(Config::new(SocketType::Pair));
        pump(&mut a, &mut b).unwrap();
        let mut bad = BytesMut::from(&b"\x04\x00"[..]);
        assert_eq!(
            b.handle_input(&mut bad),
            Err(Error::Command(CommandError::Empty))
        );
        let mut more = BytesMut::from(&b"\x00\x00"[..]);
        assert_eq!(
            b.handle_input(&mut more),
            Err(Error::Command(CommandError::Empty))
        );

        let mut c = Connection::new(Config::new(SocketType::Pair));
        let mut d = Connection::new(Config::new(SocketType::Pair));
        pump(&mut c, &mut d).unwrap();
        let mut bad = BytesMut::from(&b"\x10\x00"[..]);
        assert_eq!(
            d.handle_input(&mut bad),
            Err(Error::Frame(FrameError::ReservedFlags { flags: 0x10 }))
        );
    }
}
