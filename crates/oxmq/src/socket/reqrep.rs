//! REQ and REP (RFC 28): request-reply with envelopes.
//!
//! REQ sends a request to one peer (load-balanced), prefixed by an empty delimiter frame, then
//! accepts only that peer's reply, whose envelope must be the empty delimiter; sending twice or
//! receiving before sending is `EFSM`. REP fair-queues requests, keeps each request's envelope
//! (every frame up to and including the empty delimiter — routing ids added by ROUTERs on the
//! way) and sends it back in front of the reply, to the pipe the request came from.
//!
//! REQ_RELAXED lets a REQ send a new request without waiting for the reply to the previous
//! one (whose reply is then discarded when it comes); REQ_CORRELATE puts a 4-byte request id
//! in front of the delimiter and accepts only a reply carrying the current one — together
//! they let a REQ give up on a lost reply and try again.

use super::fq::Fq;
use super::lb::Lb;
use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::opt;

pub(crate) struct Req {
    lb: Lb,
    fq: Fq,
    /// A request was sent; only a reply may be received.
    receiving: bool,
    /// The next frame sent starts a request (gets the delimiter).
    request_begins: bool,
    /// The pipe the request went to; replies from elsewhere are dropped.
    reply_pipe: Option<usize>,
    /// Inside a reply: the delimiter has been consumed.
    reply_body: bool,
    /// REQ_RELAXED.
    relaxed: bool,
    /// REQ_CORRELATE, and the id of the current request.
    correlate: bool,
    request_id: u32,
    /// Inside a reply: the request id frame has been checked (REQ_CORRELATE).
    reply_id_ok: bool,
}

impl Req {
    pub(crate) fn new() -> Req {
        Req {
            lb: Lb::default(),
            fq: Fq::default(),
            receiving: false,
            request_begins: true,
            reply_pipe: None,
            reply_body: false,
            relaxed: false,
            correlate: false,
            // libzmq starts from a random value so a restarted REQ does not reuse ids.
            request_id: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos() ^ std::process::id())
                .unwrap_or(1),
            reply_id_ok: false,
        }
    }
}

impl Pattern for Req {
    fn attach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.lb.attach(slot);
        self.fq.attach(slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.lb.detach(slot);
        self.fq.detach(slot);
        if self.reply_pipe == Some(slot) {
            self.reply_pipe = None;
        }
    }
    fn read_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.activated(slot);
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.lb.activated(slot);
    }
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        if self.receiving {
            if !self.relaxed {
                return Err(Error::Fsm);
            }
            // Relaxed: give up on the outstanding reply; it is dropped if it comes.
            self.receiving = false;
            self.request_begins = true;
            self.reply_body = false;
            self.reply_id_ok = false;
        }
        if self.request_begins {
            if self.correlate {
                let id = self.request_id.wrapping_add(1);
                let mut idm = Msg::from(id.to_ne_bytes().to_vec());
                idm.set_more(true);
                match self.lb.send(pipes, &mut idm)? {
                    Some(slot) => self.reply_pipe = Some(slot),
                    None => return Err(Error::Again),
                }
                self.request_id = id;
            }
            let mut delim = Msg::new();
            delim.set_more(true);
            match self.lb.send(pipes, &mut delim)? {
                Some(slot) => self.reply_pipe = Some(slot),
                None => return Err(Error::Again),
            }
            self.request_begins = false;
            self.drop_queued(pipes);
        }
        let more = msg.more();
        self.lb.send(pipes, msg)?;
        if !more {
            self.receiving = true;
            self.request_begins = true;
            self.reply_body = false;
        }
        Ok(())
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        if !self.receiving {
            return Err(Error::Fsm);
        }
        loop {
            let (m, slot) = self.fq.recv(pipes)?;
            if Some(slot) != self.reply_pipe {
                // A late reply to an earlier request, or a peer we did not ask: drop it whole.
                self.drain_rest(pipes, &m)?;
                continue;
            }
            if self.correlate && !self.reply_id_ok {
                if m.len() != 4 || !m.more() || m[..] != self.request_id.to_ne_bytes() {
                    self.drain_rest(pipes, &m)?; // a reply to another request
                    continue;
                }
                self.reply_id_ok = true;
                continue;
            }
            if !self.reply_body {
                if !m.is_empty() || !m.more() {
                    // Malformed reply: the envelope must be exactly the empty delimiter.
                    self.reply_id_ok = false;
                    self.drain_rest(pipes, &m)?;
                    continue;
                }
                self.reply_body = true;
                continue;
            }
            if !m.more() {
                self.receiving = false;
                self.reply_body = false;
                self.reply_id_ok = false;
            }
            return Ok(m);
        }
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.receiving && self.fq.has_in(pipes)
    }
    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        (!self.receiving || self.relaxed) && self.lb.has_out(pipes)
    }
    fn stop_sending(&mut self, _pipes: &mut Pipes, slot: usize, stop: bool) -> bool {
        // A reply to a request already sent there still comes back through `fq`.
        self.lb.stop_sending(slot, stop);
        true
    }
    fn drops(&self) -> super::stats::Drops {
        super::stats::Drops { hwm_reached: self.lb.hwm_hits, ..Default::default() }
    }
    fn setsockopt(&mut self, _pipes: &mut Pipes, option: i32, value: &[u8]) -> Option<Result<()>> {
        match option {
            // libzmq takes any value >= 0 as a boolean for both.
            opt::REQ_RELAXED => Some(relaxed_bool(value).map(|v| self.relaxed = v)),
            opt::REQ_CORRELATE => Some(relaxed_bool(value).map(|v| self.correlate = v)),
            _ => None,
        }
    }
    fn getsockopt(&self, option: i32) -> Option<Vec<u8>> {
        match option {
            opt::REQ_RELAXED => Some((self.relaxed as i32).to_ne_bytes().to_vec()),
            opt::REQ_CORRELATE => Some((self.correlate as i32).to_ne_bytes().to_vec()),
            _ => None,
        }
    }
}

impl Req {
    /// A request has begun: whatever is queued inbound now answers an earlier request (one
    /// given up on with REQ_RELAXED, or from a peer since replaced), since this one is not
    /// flushed yet. Dropped here, as libzmq's REQ does. Reading every pipe until it is empty
    /// also puts their readers to sleep, so the reply's arrival posts a wake-up and signals
    /// ZMQ_FD: an event loop that saw ZMQ_EVENTS without POLLIN before this send (REQ was not
    /// receiving then, so no pipe was looked at) and waits on the descriptor after it,
    /// without asking ZMQ_EVENTS again, would otherwise never hear of the reply.
    fn drop_queued(&mut self, pipes: &mut Pipes) {
        while self.fq.recv(pipes).is_ok() {}
    }

    fn drain_rest(&mut self, pipes: &mut Pipes, first: &Msg) -> Result<()> {
        let mut more = first.more();
        while more {
            let (m, _) = self.fq.recv(pipes)?;
            more = m.more();
        }
        Ok(())
    }
}

pub(crate) struct Rep {
    fq: Fq,
    /// A request was received; the next sends form its reply.
    replying: bool,
    /// Inside a request's body (envelope already read).
    request_body: bool,
    envelope: Vec<Msg>,
    reply_to: Option<usize>,
    /// The reply's envelope has been written.
    reply_started: bool,
}

impl Rep {
    pub(crate) fn new() -> Rep {
        Rep {
            fq: Fq::default(),
            replying: false,
            request_body: false,
            envelope: Vec::new(),
            reply_to: None,
            reply_started: false,
        }
    }
}

impl Pattern for Rep {
    fn attach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.attach(slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.detach(slot);
        if self.reply_to == Some(slot) {
            self.reply_to = None;
        }
    }
    fn read_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.activated(slot);
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        if self.replying {
            return Err(Error::Fsm);
        }
        loop {
            let (m, slot) = self.fq.recv(pipes)?;
            if !self.request_body {
                if !m.more() {
                    // A request with no delimiter: malformed, dropped (libzmq does the same).
                    self.envelope.clear();
                    continue;
                }
                let delimiter = m.is_empty();
                self.envelope.push(m);
                if delimiter {
                    self.request_body = true;
                    self.reply_to = Some(slot);
                }
                continue;
            }
            if !m.more() {
                self.request_body = false;
                self.replying = true;
                self.reply_started = false;
            }
            return Ok(m);
        }
    }
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        if !self.replying {
            return Err(Error::Fsm);
        }
        let more = msg.more();
        if let Some(slot) = self.reply_to {
            if !self.reply_started {
                self.reply_started = true;
                // The requester may have gone or be full; REP never blocks on a reply: it is
                // dropped, like libzmq's.
                if pipes.check_write(slot) {
                    for mut e in self.envelope.drain(..) {
                        e.set_more(true);
                        pipes.write(slot, e);
                    }
                } else {
                    self.reply_to = None;
                }
            }
            if let Some(slot) = self.reply_to {
                let end = pipes.end(slot);
                end.write_take(msg);
                if !more {
                    end.flush();
                }
            }
        }
        if self.reply_to.is_none() {
            *msg = Msg::new(); // dropped, as above
        }
        if !more {
            self.replying = false;
            self.envelope.clear();
            self.reply_to = None;
        }
        Ok(())
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        !self.replying && self.fq.has_in(pipes)
    }
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        self.replying
    }
}

/// An int option libzmq reads as a boolean, accepting any value >= 0 (REQ_RELAXED,
/// REQ_CORRELATE).
fn relaxed_bool(value: &[u8]) -> Result<bool> {
    match super::options::int_val(value)? {
        v if v >= 0 => Ok(v != 0),
        _ => Err(Error::Invalid),
    }
}

#[cfg(test)]
mod tests;
