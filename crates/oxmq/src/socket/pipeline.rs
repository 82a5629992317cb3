//! PUSH and PULL (RFC 30): a pipeline. PUSH load-balances each message to one connected
//! PULL; PULL fair-queues from every connected PUSH. Neither direction carries replies.

use super::fq::Fq;
use super::lb::Lb;
use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::Msg;

pub(crate) struct Push {
    lb: Lb,
}

impl Push {
    pub(crate) fn new() -> Push {
        Push { lb: Lb::default() }
    }
}

impl Pattern for Push {
    fn attach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.lb.attach(slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.lb.detach(slot);
    }
    fn read_activated(&mut self, pipes: &mut Pipes, slot: usize) {
        // PULL peers never send; drain anything a misbehaving peer wrote so the pipe can
        // report its closure.
        while let crate::pipe::Read::Msg(_) = pipes.read(slot) {}
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.lb.activated(slot);
    }
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        self.lb.send(pipes, msg).map(|_| ())
    }
    fn recv(&mut self, _pipes: &mut Pipes) -> Result<Msg> {
        Err(Error::NotSup)
    }
    fn has_in(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }
    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        self.lb.has_out(pipes)
    }
    fn stop_sending(&mut self, _pipes: &mut Pipes, slot: usize, stop: bool) -> bool {
        self.lb.stop_sending(slot, stop);
        true
    }
    fn drops(&self) -> super::stats::Drops {
        super::stats::Drops { hwm_reached: self.lb.hwm_hits, ..Default::default() }
    }
}

pub(crate) struct Pull {
    fq: Fq,
}

impl Pull {
    pub(crate) fn new() -> Pull {
        Pull { fq: Fq::default() }
    }
}

impl Pattern for Pull {
    fn attach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.attach(slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.detach(slot);
    }
    fn read_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.activated(slot);
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn send(&mut self, _pipes: &mut Pipes, _msg: &mut Msg) -> Result<()> {
        Err(Error::NotSup)
    }
    #[inline]
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        self.fq.recv(pipes).map(|(m, _)| m)
    }
    fn recv_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        self.fq.recv_into(pipes, out).map(|_| ())
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.fq.has_in(pipes)
    }
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }
}

#[cfg(test)]
mod tests;
