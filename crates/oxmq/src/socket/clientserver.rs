//! SERVER and PEER (libzmq's draft types, RFC 41 and the PEER extension): address peers by a
//! routing id the socket assigns.
//!
//! Each attached pipe gets a 32-bit routing id (never 0), drawn from a counter that starts at
//! a random value as libzmq's does; the Identity a peer announces plays no part. A received
//! message carries the id of the peer it came from ([`Msg::routing_id`]); a message to send
//! must carry the id of its destination: an unknown or zero id is `EHOSTUNREACH`, a peer at its
//! high-water mark is "would block". Messages are single-part: MORE on send is `EINVAL`, and a
//! multi-part message from a peer is dropped whole (and counted).
//!
//! PEER is SERVER plus [`crate::Socket::connect_peer`], which connects and returns the id of
//! the new pipe, so a PEER can address a peer it connected to before that peer has spoken.
//! CLIENT, the other half of CLIENT/SERVER, is DEALER restricted to single-part messages
//! (`singlepart.rs`).

use super::fq::Fq;
use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::Msg;
use std::collections::HashMap;

pub(crate) struct Server {
    fq: Fq,
    by_id: HashMap<u32, usize>,
    /// The routing id of each attached pipe, by slot (0: none).
    id_of: Vec<u32>,
    /// The destination of the previous send, (id, slot): spares the lookup for a run of
    /// messages to one peer; cleared when that pipe goes.
    last_out: (u32, usize),
    next_id: u32,
    last_attached: u32,
    prefetched: Option<Msg>,
    dropped: u64,
    peer: bool,
}

impl Server {
    pub(crate) fn new(peer: bool) -> Server {
        Server {
            fq: Fq::default(),
            by_id: HashMap::new(),
            id_of: Vec::new(),
            last_out: (0, 0),
            // A random start, so ids differ across restarts and a stale id held by the
            // application is unlikely to name a new peer.
            next_id: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
                .unwrap_or(1),
            last_attached: 0,
            prefetched: None,
            dropped: 0,
            peer,
        }
    }

    fn fresh_id(&mut self) -> u32 {
        loop {
            self.next_id = self.next_id.wrapping_add(1);
            if self.next_id != 0 && !self.by_id.contains_key(&self.next_id) {
                return self.next_id;
            }
        }
    }

    fn next(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        let mut m = Msg::new();
        self.next_into(pipes, &mut m)?;
        Ok(m)
    }

    /// The next single-part message into `out`, tagged with its peer's id; multi-part
    /// messages are dropped whole (and counted).
    #[inline]
    fn next_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        if let Some(m) = self.prefetched.take() {
            out.replace_with(m);
            return Ok(());
        }
        loop {
            let slot = self.fq.recv_into(pipes, out)?;
            if out.more() {
                self.dropped += 1;
                while self.fq.recv_into(pipes, out).is_ok() {
                    if !out.more() {
                        break;
                    }
                }
                out.replace_with(Msg::new());
                continue;
            }
            if let Some(&id) = self.id_of.get(slot) {
                if id != 0 {
                    // Ids are never 0, so this cannot fail.
                    let _ = out.set_routing_id(id);
                }
            }
            return Ok(());
        }
    }
}

impl Pattern for Server {
    fn attach(&mut self, _pipes: &mut Pipes, slot: usize) {
        let id = self.fresh_id();
        self.by_id.insert(id, slot);
        if self.id_of.len() <= slot {
            self.id_of.resize(slot + 1, 0);
        }
        self.id_of[slot] = id;
        self.last_attached = id;
        self.fq.attach(slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        if let Some(id) = self.id_of.get_mut(slot).map(std::mem::take) {
            self.by_id.remove(&id);
            if self.last_out.0 == id {
                self.last_out = (0, 0);
            }
        }
        self.fq.detach(slot);
    }
    fn read_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.activated(slot);
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        if msg.more() {
            return Err(Error::Invalid);
        }
        let id = if pipes.route_to != 0 { pipes.route_to } else { msg.routing_id() };
        let slot = if id != 0 && self.last_out.0 == id {
            self.last_out.1
        } else {
            let Some(&slot) = self.by_id.get(&id) else {
                return Err(Error::HostUnreach);
            };
            self.last_out = (id, slot);
            slot
        };
        if !pipes.check_write_or_again(slot) {
            return Err(Error::Again);
        }
        if msg.routing_id() != 0 {
            // Not for the peer to see (an inproc peer gets the frame itself).
            msg.clear_routing_id();
        }
        let end = pipes.end(slot);
        end.write_take(msg);
        end.flush();
        Ok(())
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        self.next(pipes)
    }
    #[inline]
    fn recv_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        self.next_into(pipes, out)
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        if self.prefetched.is_some() {
            return true;
        }
        if !self.fq.has_in(pipes) {
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
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        true // a send may go to any peer; only the chosen one can be full
    }
    fn drops(&self) -> super::stats::Drops {
        super::stats::Drops { malformed: self.dropped, ..Default::default() }
    }
    fn last_peer_id(&self) -> u32 {
        if self.peer {
            self.last_attached
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests;
