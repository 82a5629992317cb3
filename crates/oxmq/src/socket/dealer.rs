//! DEALER (RFC 28): load-balances outgoing messages and fair-queues incoming ones, with no
//! envelope handling: an asynchronous REQ.

use super::fq::Fq;
use super::lb::Lb;
use super::{Pattern, Pipes};
use crate::error::Result;
use crate::msg::Msg;

pub(crate) struct Dealer {
    lb: Lb,
    fq: Fq,
}

impl Dealer {
    pub(crate) fn new() -> Dealer {
        Dealer { lb: Lb::default(), fq: Fq::default() }
    }
}

impl Pattern for Dealer {
    fn attach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.lb.attach(slot);
        self.fq.attach(slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.lb.detach(slot);
        self.fq.detach(slot);
    }
    fn read_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.activated(slot);
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.lb.activated(slot);
    }
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        self.lb.send(pipes, msg).map(|_| ())
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        self.fq.recv(pipes).map(|(m, _)| m)
    }
    fn recv_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        self.fq.recv_into(pipes, out).map(|_| ())
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.fq.has_in(pipes)
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

#[cfg(test)]
mod tests;
