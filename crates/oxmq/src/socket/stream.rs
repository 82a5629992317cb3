//! STREAM (libzmq's `ZMQ_STREAM`): raw TCP or IPC peers, no ZMTP at all.
//!
//! Each connection is a peer addressed by a routing id: one the socket generates (5 bytes, a
//! zero byte and a counter, as libzmq makes them) or, for an outgoing connection, the
//! CONNECT_ROUTING_ID given before `connect`. Receiving gives `[routing id, bytes]` for whatever
//! one read of the connection returned; with STREAM_NOTIFY (the default) a connect and a
//! disconnect by the peer each arrive as `[routing id, empty frame]`; a connection we made keeps its routing id across reconnects.
//! Sending takes
//! `[routing id, bytes]`: the bytes are written as they are; an empty second frame closes that
//! connection once what is queued for it has been written. An unknown routing id is
//! `EHOSTUNREACH`; a peer whose queue is full is `EAGAIN`.
//!
//! The raw link itself (no greeting, bytes in and out, the notifications) is the I/O
//! session's raw mode (`io/session/raw.rs`); this file only routes.

use super::fq::Fq;
use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::opt;
use bytes::Bytes;
use std::collections::HashMap;

pub(crate) struct Stream {
    fq: Fq,
    by_id: HashMap<Bytes, usize>,
    id_of: HashMap<usize, Bytes>,
    /// Pipes whose routing-id frame has not arrived yet.
    anonymous: Vec<usize>,
    next_id: u32,
    /// The last routing id generated for a peer: libzmq reports it as the socket's own
    /// ZMQ_ROUTING_ID (its STREAM copies each generated id into its options), and programs
    /// written against it read the peer's id that way.
    last_generated: Option<Bytes>,
    /// Pipes whose connect notification was handed out: their next empty message is the
    /// disconnect notification.
    announced: std::collections::HashSet<usize>,
    /// Receiving: the routing-id frame was returned, this data frame follows.
    pending_in: Option<Msg>,
    /// Sending: the routing-id frame was taken; `Some` names the peer the data frame goes to.
    out: Option<Option<usize>>,
}

impl Stream {
    pub(crate) fn new() -> Stream {
        Stream {
            fq: Fq::default(),
            by_id: HashMap::new(),
            id_of: HashMap::new(),
            anonymous: Vec::new(),
            // libzmq starts from a random value so ids differ across restarts.
            next_id: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(1),
            last_generated: None,
            announced: Default::default(),
            pending_in: None,
            out: None,
        }
    }

    /// Registers a pipe once its routing id is known (a generated one unless the connection
    /// was given CONNECT_ROUTING_ID). A connection given an id already in use is refused.
    fn identify(&mut self, pipes: &mut Pipes, slot: usize) {
        let Some(mut id) = pipes.identify(slot) else {
            if !self.anonymous.contains(&slot) {
                self.anonymous.push(slot);
            }
            return;
        };
        self.anonymous.retain(|&s| s != slot);
        if id.is_empty() {
            loop {
                self.next_id = self.next_id.wrapping_add(1);
                let mut v = vec![0u8];
                v.extend_from_slice(&self.next_id.to_be_bytes());
                id = Bytes::from(v);
                if !self.by_id.contains_key(&id) {
                    break;
                }
            }
            self.last_generated = Some(id.clone());
        } else if self.by_id.contains_key(&id) {
            pipes.reject(slot);
            return;
        }
        self.by_id.insert(id.clone(), slot);
        self.id_of.insert(slot, id);
        self.fq.attach(slot);
    }

    fn forget(&mut self, slot: usize) {
        self.announced.remove(&slot);
        self.anonymous.retain(|&s| s != slot);
        if let Some(id) = self.id_of.remove(&slot) {
            self.by_id.remove(&id);
        }
        self.fq.detach(slot);
        if self.out == Some(Some(slot)) {
            self.out = Some(None);
        }
    }
}

impl Pattern for Stream {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        self.identify(pipes, slot);
    }
    fn getsockopt(&self, option: i32) -> Option<Vec<u8>> {
        match option {
            opt::ROUTING_ID => self.last_generated.as_ref().map(|id| id.to_vec()),
            _ => None,
        }
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.forget(slot);
    }
    fn read_activated(&mut self, pipes: &mut Pipes, slot: usize) {
        if self.anonymous.contains(&slot) {
            self.identify(pipes, slot);
        } else {
            self.fq.activated(slot);
        }
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        let Some(out) = self.out else {
            // The routing-id frame. A lone one (no data frame announced) is ignored, as in
            // libzmq.
            if msg.more() {
                let slot = *self.by_id.get(msg.as_slice()).ok_or(Error::HostUnreach)?;
                if !pipes.check_write_or_again(slot) {
                    return Err(Error::Again);
                }
                self.out = Some(Some(slot));
            }
            *msg = Msg::new();
            return Ok(());
        };
        // The data frame ends the message whatever its MORE flag says (libzmq ignores it).
        self.out = None;
        let mut frame = std::mem::take(msg);
        let Some(slot) = out else { return Ok(()) }; // the peer went away meanwhile
        if frame.is_empty() {
            // Close this connection: dropping our end lets the session write what is queued,
            // then close the stream (it sends no disconnect notification for a close we asked).
            self.forget(slot);
            pipes.reject(slot);
            return Ok(());
        }
        frame.set_more(false);
        pipes.write(slot, frame);
        pipes.flush(slot);
        Ok(())
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        if let Some(m) = self.pending_in.take() {
            return Ok(m);
        }
        let (mut m, slot) = self.fq.recv(pipes)?;
        m.set_more(false);
        let id = self.id_of.get(&slot).cloned().unwrap_or_default();
        if m.is_empty() {
            if self.announced.insert(slot) {
                // A connect notification; on a reconnect the id routes again.
                self.by_id.entry(id.clone()).or_insert(slot);
            } else {
                // A disconnect notification. An accepted peer is gone for good: its id stops
                // routing now, not when the pipe's close arrives, so a send after it is
                // EHOSTUNREACH without a race. A connection we made keeps its pipe and id
                // while it reconnects (what is sent meanwhile goes to the next connection).
                self.announced.remove(&slot);
                if pipes.get(slot).endpoint.is_none() && self.by_id.get(&id) == Some(&slot) {
                    self.by_id.remove(&id);
                }
            }
        }
        // The routing-id frame carries the connection's properties too (Peer-Address), as
        // libzmq's does.
        let mut idm = Msg::from(id);
        idm.set_props(m.props_arc().cloned());
        self.pending_in = Some(m);
        idm.set_more(true);
        Ok(idm)
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.pending_in.is_some() || self.fq.has_in(pipes)
    }
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
