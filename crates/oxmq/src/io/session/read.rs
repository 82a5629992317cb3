//! The read path: bytes from the stream, through the ZMTP data phase (`zmtp::data`), into the
//! socket's pipe.
//!
//! [`Inbound`] is the sink the data phase decodes into. A one-frame message goes straight into
//! its place in the pipe's queue (`PipeEnd::new_slot`): a short body with one fixed-size copy,
//! a mid-size one into a piece of the connection's chunk, a large one split off the receive
//! buffer without a copy. Frames of a multi-part message wait in `partial` until the last
//! arrives, so the pipe never holds half a message. A message the pipe has no room for is
//! held and decoding pauses; the pipe's write activation resumes it. What the socket type does
//! not take (a PUSH takes nothing; a PUB only subscriptions) is dropped here, by the socket's
//! [`LinkPolicy`](crate::io::config::LinkPolicy).

use super::buffers::{LARGE_READ_CHUNK, RX_SPARE_MAX};
use super::conn::{Conn, Proto};
use super::{Link, Lost};
use crate::chunk::{Carver, MAX_PIECE};
use crate::io::config::Inbound as Takes;
use crate::io::Ctx;
use crate::msg::{Msg, COMMAND, INLINE_CAP};
use crate::pipe::PipeEnd;
use std::io;
use std::mem::MaybeUninit;
use zmtp::data::{Body, Decoded, Flow, Sink};

/// Bytes read per turn before yielding to other sessions.
pub(super) const READ_BUDGET: usize = 1024 * 1024;
/// Frames one multi-part message may have before the peer is considered hostile.
const MAX_PARTS: usize = 1 << 20;
/// Bodies at least this large are kept where they arrived (and written from their own memory
/// on the way out).
pub(super) const ZERO_COPY_MIN: usize = 8 * 1024;

impl Conn {
    /// Reads and decodes until the stream would block, the pipe is full or the read budget is
    /// spent (then the session asks for another turn).
    pub(super) fn read_side(&mut self, link: &mut Link, ctx: &mut Ctx<'_>) -> Result<(), Lost> {
        let mut budget = READ_BUDGET;
        loop {
            // Decode what is buffered first: a handshake or messages may be complete already.
            self.decode(link, Some(&mut *ctx))?;
            if !self.held.is_empty() || !self.read_pending {
                break;
            }
            if budget == 0 {
                ctx.again.push(link.token);
                break;
            }
            self.rx.make_room();
            match self.stream.read_into(&mut self.rx.buf) {
                Ok(0) => return self.fail(libc::EPIPE),
                Ok(n) => {
                    budget = budget.saturating_sub(n);
                    link.counters.wire_in(n);
                    self.note_read();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.read_pending = false;
                    self.note_keepalives();
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.fail(e.raw_os_error().unwrap_or(libc::EIO)),
            }
        }
        self.rx.release();
        if let Some(p) = &mut link.pipe {
            p.flush();
            p.publish_written();
        }
        Ok(())
    }

    /// One read brought input.
    #[inline]
    pub(super) fn note_read(&mut self) {
        self.reads += 1;
        if let Proto::Zmtp(z) = &mut self.proto {
            if let Some(d) = z.data_mut() {
                d.note_input();
            }
        }
    }

    /// Keepalives the stream's layer read (a WebSocket's pings and pongs) are input too, though
    /// they gave the engine no bytes.
    #[inline]
    pub(super) fn note_keepalives(&mut self) {
        let k = self.stream.keepalives_read();
        if k != self.keepalives {
            self.keepalives = k;
            if let Proto::Zmtp(z) = &mut self.proto {
                if let Some(d) = z.data_mut() {
                    d.note_input();
                }
            }
        }
    }

    /// Decodes the receive buffer: handshake bytes, then frames into the pipe. `io` is the I/O
    /// thread's reactor; without it (an application thread's direct read, which only runs in
    /// the data phase) the handshake is not touched.
    pub(super) fn decode(&mut self, link: &mut Link, io: Option<&mut Ctx<'_>>) -> Result<(), Lost> {
        let established = match &self.proto {
            Proto::Raw => return self.raw_decode(link),
            Proto::Zmtp(z) => z.is_handshake_complete(),
        };
        if !established {
            let Some(ctx) = io else { return Ok(()) };
            if !self.handshake(link, ctx)? {
                return Ok(());
            }
        }
        let Proto::Zmtp(z) = &mut self.proto else { return Err(Lost) };
        if self.failed {
            return Err(Lost);
        }
        let Some(p) = &mut link.pipe else { return Err(Lost) };
        if !self.held.is_empty() {
            return Ok(()); // the pipe is full; resume on its write activation
        }
        let Some(data) = z.data_mut() else { return Err(Lost) };
        match decode_into(data, &mut self.rx, &mut self.partial, &mut self.held, p, &link.cfg.policy) {
            Ok(_) => {}
            Err(e) => {
                // Every error here is the peer breaking the protocol.
                if matches!(e, zmtp::Error::Frame(zmtp::FrameError::TooLarge { .. })) {
                    link.counters.oversized();
                }
                link.counters.protocol_error();
                z.set_error(e);
                return Err(Lost);
            }
        }
        Ok(())
    }

    /// Moves the message the inbound pipe had no room for into it, unflushed; false (and
    /// nothing moved) while the pipe is still full, which registers for the next write
    /// activation.
    pub(super) fn deliver_held(&mut self, p: &mut PipeEnd) -> bool {
        if self.held.is_empty() {
            return true;
        }
        if !p.check_write() {
            return false;
        }
        for m in self.held.drain(..) {
            p.write(m);
        }
        true
    }
}

/// The read path's core, on any thread: decodes what `rx` holds into the pipe `p` as
/// `policy` takes it (frames of an incomplete message in `partial`, a message the pipe had no
/// room for in `held`), and grows `rx` towards a frame that has not all arrived.
pub(super) fn decode_into(
    data: &mut zmtp::data::DataPhase,
    rx: &mut super::buffers::RxBuf,
    partial: &mut Vec<Msg>,
    held: &mut Vec<Msg>,
    p: &mut PipeEnd,
    policy: &crate::io::config::LinkPolicy,
) -> Result<Decoded, zmtp::Error> {
    let mut let_go = false;
    let mut sink = Inbound {
        let_go: &mut let_go,
        pipe: &mut *p,
        carver: &mut rx.carver,
        read_chunk: &mut rx.read_chunk,
        partial,
        held: &mut *held,
        all: policy.inbound == Takes::All,
        takes: policy.inbound,
        subscriptions: policy.takes_subscriptions,
        joins: policy.takes_joins,
    };
    let result = data.decode(&mut rx.buf, &mut sink);
    if let_go {
        rx.let_go();
    }
    if !held.is_empty() {
        p.flush();
    }
    if let Ok(Decoded::Partial { missing }) = result {
        rx.room_for_frame(missing);
    }
    result
}

/// The data phase's sink: the socket's pipe, as the socket type's policy takes it.
struct Inbound<'a> {
    pipe: &'a mut PipeEnd,
    /// A body larger than a spare buffer was taken: the buffer lets it go after decoding.
    let_go: &'a mut bool,
    carver: &'a mut Carver,
    read_chunk: &'a mut usize,
    partial: &'a mut Vec<Msg>,
    held: &'a mut Vec<Msg>,
    /// `takes == Takes::All`, read once.
    all: bool,
    takes: Takes,
    subscriptions: bool,
    joins: bool,
}

impl Sink for Inbound<'_> {
    #[inline(always)]
    fn frame(&mut self, more: bool, body: &mut Body<'_>) -> Flow {
        // The common case: a one-frame message for the pipe, built in its slot.
        if !more && self.partial.is_empty() && self.all {
            if !self.pipe.check_write() {
                self.held.push(build(self.carver, self.read_chunk, self.let_go, body));
                return Flow::Pause;
            }
            match self.pipe.new_slot() {
                Some(slot) => {
                    build_into(self.carver, self.read_chunk, self.let_go, body, slot);
                    // SAFETY: `build_into` wrote a single frame, MORE clear, no routing id.
                    unsafe { self.pipe.commit_frame(false, false) };
                }
                None => self.pipe.write(build(self.carver, self.read_chunk, self.let_go, body)),
            }
            return Flow::Go;
        }
        self.frame_general(more, body)
    }

    fn command(&mut self, cmd: &zmtp::Command, body: &[u8]) -> Flow {
        match cmd {
            zmtp::Command::Subscribe(topic) | zmtp::Command::Cancel(topic) if self.subscriptions => {
                let mut v = Vec::with_capacity(topic.len() + 1);
                v.push(matches!(cmd, zmtp::Command::Subscribe(_)) as u8);
                v.extend_from_slice(topic);
                // Subscriptions bypass the HWM: losing one would silently stop a stream.
                self.pipe.write(Msg::from(v));
            }
            zmtp::Command::Join(_) | zmtp::Command::Leave(_) if self.joins => {
                // Up to the RADIO as a command-flagged message; bypasses the HWM like
                // subscriptions.
                let mut m = Msg::copy_from(body);
                m.set_flags(COMMAND);
                self.pipe.write(m);
            }
            _ => {}
        }
        Flow::Go
    }
}

impl Inbound<'_> {
    /// Frames of multi-part messages, and messages the socket type may not take.
    #[inline]
    fn frame_general(&mut self, more: bool, body: &mut Body<'_>) -> Flow {
        let mut msg = build(self.carver, self.read_chunk, self.let_go, body);
        // A fresh frame has MORE clear. Stored only when set: a store to the flags just before
        // the frame is copied into the pipe would stall that copy (the wider load waits for the
        // narrower store to reach the cache).
        if more {
            msg.set_more(true);
        }
        if more || !self.partial.is_empty() {
            if self.partial.len() >= MAX_PARTS {
                return Flow::Refuse;
            }
            self.partial.push(msg);
            if more {
                return Flow::Go;
            }
            if !self.takes.takes(&self.partial[0], self.partial.len()) {
                self.partial.clear();
                return Flow::Go;
            }
            if self.pipe.check_write() {
                for m in self.partial.drain(..) {
                    self.pipe.write(m);
                }
                return Flow::Go;
            }
            std::mem::swap(self.held, self.partial);
            return Flow::Pause;
        }
        if !self.takes.takes(&msg, 1) {
            return Flow::Go;
        }
        if self.pipe.check_write() {
            self.pipe.write(msg);
            return Flow::Go;
        }
        self.held.push(msg);
        Flow::Pause
    }
}

/// A frame for `body`: see [`build_into`].
#[inline(always)]
fn build(carver: &mut Carver, read_chunk: &mut usize, let_go: &mut bool, body: &mut Body<'_>) -> Msg {
    let mut m = MaybeUninit::uninit();
    build_into(carver, read_chunk, let_go, body, &mut m);
    // SAFETY: every branch of `build_into` writes `m`.
    unsafe { m.assume_init() }
}

/// Writes a frame for `body` into `out` (its old contents are not dropped), MORE clear: short
/// bodies inline (one fixed-size copy while more bytes follow in the buffer), mid-size ones
/// cut from the connection's chunk, large ones split off the buffer without a copy.
#[inline(always)]
fn build_into(carver: &mut Carver, read_chunk: &mut usize, let_go: &mut bool, body: &mut Body<'_>, out: &mut MaybeUninit<Msg>) {
    let len = body.len();
    if len <= INLINE_CAP {
        match body.window::<INLINE_CAP>() {
            Some(w) => out.write(Msg::inline_from_window(w, len)),
            None => out.write(Msg::copy_from(body.as_slice())),
        };
    } else if len <= MAX_PIECE {
        out.write(Msg::from_piece(carver.copy(body.as_slice())));
    } else {
        if len >= ZERO_COPY_MIN {
            *read_chunk = LARGE_READ_CHUNK;
        }
        *let_go |= len > RX_SPARE_MAX;
        out.write(Msg::from_bytes(body.take()));
    }
}

#[cfg(test)]
mod tests;
