//! Data-phase input: frames out of the receive buffer into the caller's [`Sink`].
//!
//! Frames are parsed with a cursor and the buffer is advanced once per call, not once per
//! frame. Nothing is allocated for a frame the sink copies; a frame the sink takes
//! ([`Body::take`]) is split off the buffer, which first advances it to that frame. A header
//! that announces a large body reserves nothing: [`Decoded::Partial`] tells the caller how
//! much is missing, and the caller decides how far to grow (by what arrives, never by what a
//! header claims).

use bytes::{Buf, Bytes, BytesMut};

use super::DataPhase;
use crate::command::Command;
use crate::error::Error;
use crate::frame::{parse_header_for, FLAG_LONG, FLAG_MORE};
use crate::version::Version;

/// What the sink wants after a frame or command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on decoding.
    Go,
    /// Stop after this one (consumed): the sink cannot take more now.
    Pause,
    /// The peer broke the sink's rules (say, a message of too many frames): the connection
    /// ends with [`Error::Refused`].
    Refuse,
}

/// Where decoded frames and socket commands go.
pub trait Sink {
    /// A message frame: MORE flag and body. The body is valid only during the call.
    fn frame(&mut self, more: bool, body: &mut Body<'_>) -> Flow;

    /// A command a socket acts on: SUBSCRIBE and CANCEL (3.1), JOIN and LEAVE (RADIO/DISH),
    /// parsed, with the command frame's body as it arrived (name included).
    fn command(&mut self, cmd: &Command, body: &[u8]) -> Flow;

    /// A command the protocol handled itself (PING, answered; PONG; an unknown command,
    /// tolerated), for sinks that report everything. Nothing by default.
    fn control(&mut self, _cmd: &Command) {}
}

/// How a call to [`DataPhase::decode`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// Everything in the buffer was decoded (it is empty, or holds part of a header).
    Drained,
    /// The buffer starts with a frame whose body has not all arrived; `missing` more bytes
    /// complete it.
    Partial {
        /// Bytes still to come for that frame.
        missing: u64,
    },
    /// The sink paused; the rest stays in the buffer.
    Paused,
}

/// A frame's body where it lies in the receive buffer.
pub struct Body<'a> {
    rx: &'a mut BytesMut,
    /// The body (plaintext, for CURVE) is `rx[start..end]`; the frame ends at `frame_end`.
    start: usize,
    end: usize,
    frame_end: usize,
    /// The decoder's cursor, at `frame_end` already: 0 once the body is taken (`rx` then
    /// starts at the next frame).
    pos: &'a mut usize,
}

impl Body<'_> {
    /// The body's length.
    #[inline(always)]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// The body's bytes.
    #[inline(always)]
    pub fn as_slice(&self) -> &[u8] {
        &self.rx[self.start..self.end]
    }

    /// `N` bytes from the body's start, when the buffer holds that many (the body and what
    /// follows it): a short body can then be copied with one fixed-size copy, of which only
    /// [`Body::len`] bytes are the body's.
    #[inline(always)]
    pub fn window<const N: usize>(&self) -> Option<&[u8; N]> {
        self.rx.get(self.start..self.start + N).and_then(|w| w.try_into().ok())
    }

    /// The body without a copy: split off the receive buffer, sharing its allocation (which is
    /// freed when the last such body is dropped).
    #[inline]
    pub fn take(&mut self) -> Bytes {
        debug_assert!(*self.pos == self.frame_end, "a body is taken once");
        self.rx.advance(self.start);
        let body = self.rx.split_to(self.end - self.start).freeze();
        self.rx.advance(self.frame_end - self.end);
        *self.pos = 0;
        body
    }
}

impl DataPhase {
    /// Decodes the frames in `rx` into `sink` until the buffer runs out or the sink pauses.
    /// Consumed bytes leave `rx`; an incomplete frame stays at its front. An error ends the
    /// connection: a bad header, a frame over the size limit, a CURVE MESSAGE that does not
    /// open, a malformed or unexpected command, an ERROR from the peer, or the sink's refusal.
    #[inline]
    pub fn decode<S: Sink>(&mut self, rx: &mut BytesMut, sink: &mut S) -> Result<Decoded, Error> {
        if let Some(e) = self.send_error.take() {
            return Err(Error::Cipher(e));
        }
        let mut pos = 0usize;
        let version = self.version; // fixed per connection: read once, not per frame
        let max = self.max_body;
        // The common frames, message frames of 2.0 or 3.x (flags 0 or MORE, with a one- or an
        // eight-byte length), unsealed and within the size limit, are parsed here without the
        // general header parser.
        let plain = self.cipher.is_none() && version != Version::V1_0;
        let limit = max.unwrap_or(i64::MAX as u64).min(i64::MAX as u64);
        let result = loop {
            let avail = rx.len() - pos;
            if plain && avail >= 2 {
                let flags = rx[pos];
                let (header, len) = if flags & FLAG_LONG == 0 {
                    (2, u64::from(rx[pos + 1]))
                } else if avail >= 9 {
                    (9, u64::from_be_bytes(rx[pos + 1..pos + 9].try_into().expect("8 bytes")))
                } else {
                    (usize::MAX, 0)
                };
                if flags & !(FLAG_MORE | FLAG_LONG) == 0 && len <= limit && header <= avail && (avail - header) as u64 >= len {
                    let start = pos + header;
                    pos = start + len as usize;
                    let end = pos;
                    let mut body = Body { rx: &mut *rx, start, end, frame_end: end, pos: &mut pos };
                    match sink.frame(flags & FLAG_MORE != 0, &mut body) {
                        Flow::Go => continue,
                        Flow::Pause => break Ok(Decoded::Paused),
                        Flow::Refuse => break Err(Error::Refused),
                    }
                }
            }
            let h = match parse_header_for(version, &rx[pos..], max) {
                Ok(Some(h)) => h,
                Ok(None) => break Ok(Decoded::Drained),
                Err(e) => break Err(Error::Frame(e)),
            };
            let total = h.header_len as u64 + h.body_len;
            if (avail as u64) < total {
                break Ok(Decoded::Partial { missing: total - avail as u64 });
            }
            let body_at = pos + h.header_len;
            let frame_end = body_at + h.body_len as usize;
            let (mut more, mut command, mut start) = (h.more, h.command, body_at);
            if let Some(cipher) = &mut self.cipher {
                match cipher.open_in_place(&mut rx[body_at..frame_end]) {
                    Ok((f, r)) => (more, command, start) = (f.more, f.command, body_at + r.start),
                    Err(e) => break Err(Error::Cipher(e)),
                }
            }
            let flow = if command {
                let flow = match self.command(&rx[start..frame_end], sink) {
                    Ok(f) => f,
                    Err(e) => break Err(e),
                };
                pos = frame_end;
                flow
            } else {
                pos = frame_end;
                let mut body = Body { rx: &mut *rx, start, end: frame_end, frame_end, pos: &mut pos };
                sink.frame(more, &mut body)
            };
            match flow {
                Flow::Go => {}
                Flow::Pause => break Ok(Decoded::Paused),
                Flow::Refuse => break Err(Error::Refused),
            }
        };
        if pos > 0 {
            rx.advance(pos);
        }
        result
    }

    /// A command frame in the data phase: the protocol's own are answered here, a socket's go
    /// to the sink.
    #[cold]
    #[inline(never)]
    fn command<S: Sink>(&mut self, body: &[u8], sink: &mut S) -> Result<Flow, Error> {
        let cmd = Command::parse(body)?;
        match &cmd {
            Command::Ping { ttl, context } => {
                self.control.push(Command::Pong { context: context.clone() });
                self.heartbeat.on_ping(*ttl);
                sink.control(&cmd);
                Ok(Flow::Go)
            }
            Command::Subscribe(_) | Command::Cancel(_) | Command::Join(_) | Command::Leave(_) => Ok(sink.command(&cmd, body)),
            Command::Error { reason } => Err(Error::Peer { reason: reason.clone() }),
            // READY belongs to the handshake.
            Command::Ready(_) => Err(Error::UnexpectedCommand(bytes::Bytes::from_static(b"READY"))),
            // PONG only proves the peer alive, which any input does; unknown commands are
            // tolerated, as libzmq tolerates them.
            Command::Pong { .. } | Command::Unknown { .. } => {
                sink.control(&cmd);
                Ok(Flow::Go)
            }
        }
    }
}
