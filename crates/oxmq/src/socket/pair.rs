//! PAIR (RFC 31): exactly one peer, messages both ways. A second peer is refused (its pipe is
//! closed at once), as in libzmq.

use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::pipe::Read;

pub(crate) struct Pair {
    pipe: Option<usize>,
}

impl Pair {
    pub(crate) fn new() -> Pair {
        Pair { pipe: None }
    }
}

impl Pattern for Pair {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        if self.pipe.is_some() {
            pipes.reject(slot);
            return;
        }
        self.pipe = Some(slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        if self.pipe == Some(slot) {
            self.pipe = None;
        }
    }
    // With one pipe there is nothing to reschedule: every call tries the pipe itself.
    fn read_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        let Some(p) = self.pipe else { return Err(Error::Again) };
        if !pipes.check_write_or_again(p) {
            return Err(Error::Again);
        }
        let more = msg.more();
        let end = pipes.end(p);
        end.write_take(msg);
        if !more {
            end.flush();
        }
        Ok(())
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        let Some(p) = self.pipe else { return Err(Error::Again) };
        match pipes.read(p) {
            Read::Msg(m) => Ok(m),
            _ => Err(Error::Again),
        }
    }
    fn recv_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        let Some(p) = self.pipe else { return Err(Error::Again) };
        if pipes.read_into(p, out) {
            Ok(())
        } else {
            Err(Error::Again)
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
