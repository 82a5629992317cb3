//! The single-part draft types built on a classic one: CLIENT (DEALER), SCATTER (PUSH),
//! GATHER (PULL) and CHANNEL (PAIR).
//!
//! libzmq's thread-safe sockets carry single-part messages only: sending a frame with MORE is
//! `EINVAL`, and a multi-part message from a peer that sends one anyway is dropped whole (the
//! drop is counted). Everything else — load balancing, fair queuing, the one-peer rule — is the
//! wrapped pattern's.

use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::Msg;

pub(crate) struct SinglePart<P> {
    inner: P,
    /// A well-formed message `has_in` read ahead, handed out by the next `recv`.
    prefetched: Option<Msg>,
    dropped: u64,
}

impl<P: Pattern> SinglePart<P> {
    pub(crate) fn new(inner: P) -> SinglePart<P> {
        SinglePart { inner, prefetched: None, dropped: 0 }
    }

    fn next(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        if let Some(m) = self.prefetched.take() {
            return Ok(m);
        }
        loop {
            let m = self.inner.recv(pipes)?;
            if !m.more() {
                return Ok(m);
            }
            // A multi-part message: its frames are all here (messages are published whole),
            // so drain them now.
            self.dropped += 1;
            loop {
                match self.inner.recv(pipes) {
                    Ok(m) if m.more() => continue,
                    Ok(_) | Err(_) => break,
                }
            }
        }
    }
}

impl<P: Pattern> Pattern for SinglePart<P> {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        self.inner.attach(pipes, slot)
    }
    fn detach(&mut self, pipes: &mut Pipes, slot: usize) {
        self.inner.detach(pipes, slot)
    }
    fn read_activated(&mut self, pipes: &mut Pipes, slot: usize) {
        self.inner.read_activated(pipes, slot)
    }
    fn write_activated(&mut self, pipes: &mut Pipes, slot: usize) {
        self.inner.write_activated(pipes, slot)
    }
    fn hiccuped(&mut self, pipes: &mut Pipes, slot: usize) {
        self.inner.hiccuped(pipes, slot)
    }
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        if msg.more() {
            return Err(Error::Invalid);
        }
        self.inner.send(pipes, msg)
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        self.next(pipes)
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        if self.prefetched.is_some() {
            return true;
        }
        if !self.inner.has_in(pipes) {
            return false;
        }
        match self.next(pipes) {
            Ok(m) => {
                self.prefetched = Some(m);
                true
            }
            Err(_) => false,
        }
    }
    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        self.inner.has_out(pipes)
    }
    fn setsockopt(&mut self, pipes: &mut Pipes, option: i32, value: &[u8]) -> Option<Result<()>> {
        self.inner.setsockopt(pipes, option, value)
    }
    fn getsockopt(&self, option: i32) -> Option<Vec<u8>> {
        self.inner.getsockopt(option)
    }
    fn stop_sending(&mut self, pipes: &mut Pipes, slot: usize, stop: bool) -> bool {
        self.inner.stop_sending(pipes, slot, stop)
    }
    fn fanout(&self) -> Option<(u64, u64)> {
        self.inner.fanout()
    }
    fn drops(&self) -> super::stats::Drops {
        let mut d = self.inner.drops();
        d.malformed += self.dropped;
        d
    }
}

#[cfg(test)]
mod tests;
