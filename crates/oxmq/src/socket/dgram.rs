//! DGRAM (libzmq's draft type 18): raw udp datagrams through one bound `udp://` endpoint.
//!
//! Every message is two frames, a peer's address as text and a body. On receipt the address
//! names the sender (`ip:port` or `[ip6]:port`, then a NUL, as libzmq writes it); on sending it
//! names the destination, in the same forms (the NUL optional), and the body follows, so a
//! received address can be sent back as it is. The datagram on the wire is the bare body.
//!
//! Sending checks the shape, as libzmq does, and more: a first frame without `SNDMORE`, a
//! second frame with it, or a first frame that is not a literal address with a port is
//! `Invalid`, and the message is not sent (a refused first frame leaves the socket expecting an
//! address still, a refused body leaves it expecting the body). Like PAIR, the socket has one
//! pipe, to its udp engine ([`crate::io::udp`]): before a bind there is nowhere to send
//! and nothing to receive (`Again`: a blocking call waits), and a full pipe blocks a send
//! (SNDHWM counts messages). Datagrams lost on the way are udp's, not errors.

use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::io::udp::parse_peer;
use crate::msg::Msg;
use crate::pipe::Read;

pub(crate) struct Dgram {
    pipe: Option<usize>,
    /// The address frame has gone; the body is due.
    body_due: bool,
}

impl Dgram {
    pub(crate) fn new() -> Dgram {
        Dgram { pipe: None, body_due: false }
    }
}

impl Pattern for Dgram {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        // `Socket::bind` allows one udp endpoint; anything else has no business here.
        if self.pipe.is_some() {
            pipes.reject(slot);
            return;
        }
        self.pipe = Some(slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        if self.pipe == Some(slot) {
            self.pipe = None;
            // A half-sent message went with the pipe.
            self.body_due = false;
        }
    }
    // With one pipe there is nothing to reschedule: every call tries the pipe itself.
    fn read_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        if self.body_due {
            if msg.more() {
                return Err(Error::Invalid); // two frames only
            }
        } else if !msg.more() || parse_peer(msg).is_none() {
            return Err(Error::Invalid);
        }
        let Some(p) = self.pipe else { return Err(Error::Again) };
        // Room is checked at the address; the body always follows it (the HWM counts whole
        // messages).
        if !self.body_due && !pipes.check_write_or_again(p) {
            return Err(Error::Again);
        }
        let end = pipes.end(p);
        end.write_take(msg);
        if self.body_due {
            end.flush();
        }
        self.body_due = !self.body_due;
        Ok(())
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        let Some(p) = self.pipe else { return Err(Error::Again) };
        match pipes.read(p) {
            Read::Msg(m) => Ok(m),
            _ => Err(Error::Again),
        }
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        matches!(self.pipe, Some(p) if pipes.has_data(p))
    }
    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        matches!(self.pipe, Some(p) if pipes.check_write(p))
    }
}

#[cfg(test)]
mod tests;
