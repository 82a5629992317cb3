//! RADIO and DISH (libzmq's draft types, RFC 48): publish-subscribe by exact group name.
//!
//! A DISH joins groups (at most [`zmtp::command::MAX_GROUP_LEN`] bytes each); each join and
//! leave travels upstream as a JOIN/LEAVE command body in a message flagged `COMMAND`, which
//! the engine sends as a ZMTP command frame (and which an inproc RADIO reads directly). A
//! RADIO keeps, per group, the pipes that joined it and sends each message only there.
//!
//! In a pipe and on the wire a RADIO message is two frames, the group (MORE) and the body —
//! libzmq's format, so a group needs no room in [`Msg`]. The application sees single-part
//! messages: [`crate::Socket::send_group`] and [`crate::Socket::recv_group`] carry the group
//! beside the body.
//!
//! RADIO never blocks: a member at its high-water mark misses the message, and the miss is
//! counted ([`crate::Socket::dropped_messages`]). A pipe of a `udp://` endpoint receives every
//! group (a datagram goes to whoever listens), as in libzmq. DISH filters again on receipt,
//! because a RADIO may still send a group the DISH has just left, and drops (and counts)
//! malformed messages: not exactly a group frame then a body, or a group over the limit.

use super::dist::Dist;
use super::fq::Fq;
use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::{Msg, COMMAND};
use crate::pipe::Read;
use bytes::Bytes;
use std::collections::{BTreeSet, HashMap};
use zmtp::command::MAX_GROUP_LEN;

pub(crate) struct Radio {
    /// Group → pipes that joined it (a pipe at most once per group).
    members: HashMap<Bytes, Vec<usize>>,
    /// Pipes that take every group (udp).
    all: Vec<usize>,
    dist: Dist,
    scratch: Vec<usize>,
}

impl Radio {
    pub(crate) fn new() -> Radio {
        Radio { members: HashMap::new(), all: Vec::new(), dist: Dist::default(), scratch: Vec::new() }
    }

    /// Applies every JOIN/LEAVE waiting in a pipe; anything else a DISH sends is ignored.
    fn read_joins(&mut self, pipes: &mut Pipes, slot: usize) {
        while let Read::Msg(m) = pipes.read(slot) {
            if !m.is_command() {
                continue;
            }
            match zmtp::Command::parse(&m) {
                Ok(zmtp::Command::Join(g)) => {
                    let v = self.members.entry(g).or_default();
                    if !v.contains(&slot) {
                        v.push(slot);
                    }
                }
                Ok(zmtp::Command::Leave(g)) => {
                    if let Some(v) = self.members.get_mut(&g) {
                        v.retain(|&s| s != slot);
                        if v.is_empty() {
                            self.members.remove(&g);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

impl Pattern for Radio {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        let udp = pipes.get(slot).endpoint.as_deref().is_some_and(|e| e.starts_with("udp://"));
        if udp {
            self.all.push(slot);
        } else {
            self.read_joins(pipes, slot);
        }
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.all.retain(|&s| s != slot);
        self.members.retain(|_, v| {
            v.retain(|&s| s != slot);
            !v.is_empty()
        });
        self.dist.detach(slot);
    }
    fn read_activated(&mut self, pipes: &mut Pipes, slot: usize) {
        self.read_joins(pipes, slot);
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        // A message without a group goes to the members of the empty group, as in libzmq.
        self.send_group(pipes, b"", msg)
    }
    fn send_group(&mut self, pipes: &mut Pipes, group: &[u8], msg: &mut Msg) -> Result<()> {
        if msg.more() || group.len() > MAX_GROUP_LEN {
            return Err(Error::Invalid);
        }
        let mut c = std::mem::take(&mut self.scratch);
        c.clear();
        if let Some(v) = self.members.get(group) {
            c.extend_from_slice(v);
        }
        c.extend_from_slice(&self.all);
        c.sort_unstable();
        c.dedup();
        self.dist.begin(pipes, &c);
        self.scratch = c;
        let mut g = Msg::copy_from(group);
        g.set_more(true);
        self.dist.send(pipes, &mut g);
        self.dist.send(pipes, msg);
        Ok(())
    }
    fn recv(&mut self, _pipes: &mut Pipes) -> Result<Msg> {
        Err(Error::NotSup)
    }
    fn has_in(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        true
    }
    fn drops(&self) -> super::stats::Drops {
        super::stats::Drops { hwm: self.dist.dropped, hwm_reached: self.dist.dropped, ..Default::default() }
    }
    fn fanout(&self) -> Option<(u64, u64)> {
        let mut slots: Vec<usize> = self.members.values().flatten().copied().chain(self.all.iter().copied()).collect();
        slots.sort_unstable();
        slots.dedup();
        Some((slots.len() as u64, self.members.len() as u64))
    }
}

pub(crate) struct Dish {
    fq: Fq,
    pipes: Vec<usize>,
    joined: BTreeSet<Bytes>,
    /// A message `has_in` read ahead: (group, body).
    prefetched: Option<(Bytes, Msg)>,
    last_group: Option<Bytes>,
    dropped: u64,
}

impl Dish {
    pub(crate) fn new() -> Dish {
        Dish { fq: Fq::default(), pipes: Vec::new(), joined: BTreeSet::new(), prefetched: None, last_group: None, dropped: 0 }
    }

    fn command(join: bool, group: &[u8]) -> Msg {
        let cmd = if join {
            zmtp::Command::Join(Bytes::copy_from_slice(group))
        } else {
            zmtp::Command::Leave(Bytes::copy_from_slice(group))
        };
        let mut body = Vec::with_capacity(group.len() + 6);
        cmd.encode_body(&mut body);
        let mut m = Msg::from(body);
        m.set_flags(COMMAND);
        m
    }

    fn send_joins(&self, pipes: &mut Pipes, slot: usize) {
        for g in &self.joined {
            // Joins bypass the high-water mark, as subscriptions do: losing one would
            // silently stop a stream.
            pipes.write(slot, Dish::command(true, g));
        }
        pipes.flush_through(slot);
    }

    /// The next well-formed message of a joined group.
    fn next(&mut self, pipes: &mut Pipes) -> Result<(Bytes, Msg)> {
        if let Some(p) = self.prefetched.take() {
            return Ok(p);
        }
        loop {
            let (group, _) = self.fq.recv(pipes)?;
            if !group.more() {
                self.dropped += 1; // a lone frame: no group
                continue;
            }
            let Ok((body, _)) = self.fq.recv(pipes) else {
                self.dropped += 1;
                continue;
            };
            if body.more() {
                self.dropped += 1;
                while let Ok((m, _)) = self.fq.recv(pipes) {
                    if !m.more() {
                        break;
                    }
                }
                continue;
            }
            if group.len() > MAX_GROUP_LEN || !self.joined.contains(group.as_slice()) {
                if group.len() > MAX_GROUP_LEN {
                    self.dropped += 1;
                }
                continue;
            }
            return Ok((group.into_bytes(), body));
        }
    }
}

impl Pattern for Dish {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        self.fq.attach(slot);
        self.pipes.push(slot);
        self.send_joins(pipes, slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.detach(slot);
        self.pipes.retain(|&s| s != slot);
    }
    fn read_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.activated(slot);
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn hiccuped(&mut self, pipes: &mut Pipes, slot: usize) {
        self.send_joins(pipes, slot);
    }
    fn send(&mut self, _pipes: &mut Pipes, _msg: &mut Msg) -> Result<()> {
        Err(Error::NotSup)
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        let (g, m) = self.next(pipes)?;
        self.last_group = Some(g);
        Ok(m)
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        if self.prefetched.is_some() {
            return true;
        }
        match self.next(pipes) {
            Ok(p) => {
                self.prefetched = Some(p);
                true
            }
            Err(_) => false,
        }
    }
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        false
    }
    fn last_group(&self) -> Option<Bytes> {
        self.last_group.clone()
    }
    fn join(&mut self, pipes: &mut Pipes, group: &[u8], join: bool) -> Result<()> {
        if group.len() > MAX_GROUP_LEN {
            return Err(Error::Invalid);
        }
        let changed = if join { self.joined.insert(Bytes::copy_from_slice(group)) } else { self.joined.remove(group) };
        // libzmq: joining a group twice, or leaving one not joined, is EINVAL.
        if !changed {
            return Err(Error::Invalid);
        }
        for &slot in &self.pipes {
            pipes.write(slot, Dish::command(join, group));
            pipes.flush_through(slot);
        }
        Ok(())
    }
    fn drops(&self) -> super::stats::Drops {
        super::stats::Drops { malformed: self.dropped, ..Default::default() }
    }
    fn fanout(&self) -> Option<(u64, u64)> {
        Some((0, self.joined.len() as u64))
    }
}

#[cfg(test)]
mod tests;
