//! A socket's core without its threads, for the tests beside each socket type
//! (`<type>/tests.rs`).
//!
//! [`Bench`] holds a [`Pattern`] and its [`Pipes`] as a `Socket` does, and the far end of each
//! pipe: the peer, what an I/O session or an inproc socket would hold. Wake-ups of the socket's
//! ends are logged and handed to the pattern by [`Bench::pump`] as `Socket::process_commands`
//! hands them, and pipes found closed and drained are detached as `Socket::reap` detaches them.
//! So a test drives a socket type's rules over real pipes on one thread, with nothing to wait
//! for: whatever a peer does is in the pipe when its call returns.

use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::{Msg, ROUTING_ID};
use crate::pipe::{pipe, Owner, PipeEnd, PipeId, Read, Wake};
use std::sync::{Arc, Mutex};

/// A message as its frames' bodies.
pub(crate) type Parts = Vec<Vec<u8>>;

/// `Parts` from text frames.
pub(crate) fn parts(p: &[&str]) -> Parts {
    p.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// The wake-ups of the socket's pipe ends, in order.
#[derive(Default)]
struct Wakes(Mutex<Vec<(PipeId, Wake)>>);

impl Owner for Wakes {
    fn wake(&self, id: PipeId, what: Wake) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push((id, what));
    }
}

/// A pattern, its pipes and their peers. Peers are numbered in the order they attached.
pub(crate) struct Bench<P> {
    pub pattern: P,
    pub pipes: Pipes,
    /// Each peer's end, with the id (slot, serial) its pipe took on the socket's side.
    peers: Vec<(PipeId, PipeEnd)>,
    wakes: Arc<Wakes>,
}

impl<P: Pattern> Bench<P> {
    pub fn new(pattern: P) -> Bench<P> {
        Bench { pattern, pipes: Pipes::new(), peers: Vec::new(), wakes: Arc::default() }
    }

    /// Attaches a pipe with no HWM whose peer announced an empty routing id, as an I/O
    /// session's pipe starts; returns the peer's number.
    pub fn attach(&mut self) -> usize {
        self.attach_with([0, 0], Some(b""), None)
    }

    /// Attaches a pipe: `hwm` is [socket to peer, peer to socket] (0: none); `id` the routing
    /// id the peer announces first (None: not yet, [`Bench::announce`] sends it later);
    /// `endpoint` where it came from (`Slot::endpoint`: None for an accepted peer).
    pub fn attach_with(&mut self, hwm: [u64; 2], id: Option<&[u8]>, endpoint: Option<&str>) -> usize {
        let (mine, mut peer) = pipe(hwm);
        if let Some(id) = id {
            peer.write(routing_id(id));
            peer.flush();
        }
        let slot = self.pipes.insert(mine, endpoint.map(str::to_string));
        let id = PipeId { slot, serial: self.pipes.get(slot).serial };
        self.pipes.get(slot).end.set_owner(self.wakes.clone(), id);
        self.peers.push((id, peer));
        self.pattern.attach(&mut self.pipes, slot);
        self.reap();
        self.peers.len() - 1
    }

    /// The routing-id frame of peer `p`, for a pipe attached without one.
    pub fn announce(&mut self, p: usize, id: &[u8]) {
        let end = &mut self.peers[p].1;
        end.write(routing_id(id));
        end.flush();
    }

    /// The slot peer `p`'s pipe took (for pattern calls that name one).
    pub fn slot(&self, p: usize) -> usize {
        self.peers[p].0.slot
    }

    /// Hands the logged wake-ups to the pattern and detaches the pipes found gone, as the
    /// socket does before each call.
    pub fn pump(&mut self) {
        loop {
            let wakes = std::mem::take(&mut *self.wakes.0.lock().unwrap_or_else(|p| p.into_inner()));
            if wakes.is_empty() {
                break;
            }
            for (id, what) in wakes {
                if !self.pipes.valid(id) {
                    continue;
                }
                let (pipes, slot) = (&mut self.pipes, id.slot);
                match what {
                    Wake::Read => self.pattern.read_activated(pipes, slot),
                    Wake::Write => self.pattern.write_activated(pipes, slot),
                    Wake::Hiccup => self.pattern.hiccuped(pipes, slot),
                    Wake::Closed => {
                        if pipes.has_data(slot) {
                            self.pattern.read_activated(pipes, slot);
                            self.pattern.write_activated(pipes, slot);
                        } else if !pipes.retired.contains(&slot) {
                            pipes.retired.push(slot);
                        }
                    }
                }
            }
            self.reap();
        }
    }

    fn reap(&mut self) {
        while let Some(i) = self.pipes.retired.pop() {
            if matches!(self.pipes.slots.get(i), Some(Some(_))) {
                self.pattern.detach(&mut self.pipes, i);
                self.pipes.remove(i);
            }
        }
    }

    /// Sends one frame (MORE as given), as `Socket::send_msg` does; on error the frame is
    /// handed back untouched.
    pub fn send_frame(&mut self, body: &[u8], more: bool) -> Result<()> {
        let mut m = Msg::copy_from(body);
        m.set_more(more);
        self.send_msg(&mut m)
    }

    /// Sends `m` (its MORE flag as set).
    pub fn send_msg(&mut self, m: &mut Msg) -> Result<()> {
        self.pump();
        let r = self.pattern.send(&mut self.pipes, m);
        self.reap();
        r
    }

    /// Sends a message of text frames; stops at the first frame refused.
    pub fn send(&mut self, frames: &[&str]) -> Result<()> {
        self.send_bytes(&frames.iter().map(|s| s.as_bytes()).collect::<Vec<_>>())
    }

    /// Sends a message of binary frames; stops at the first frame refused.
    pub fn send_bytes(&mut self, frames: &[&[u8]]) -> Result<()> {
        for (i, f) in frames.iter().enumerate() {
            self.send_frame(f, i + 1 < frames.len())?;
        }
        Ok(())
    }

    /// Receives one frame through `Pattern::recv` (by value). As `Socket::recv_blocking`,
    /// a receive that finds nothing detaches the pipes it found closed and tries again: that
    /// may leave something to receive (ROUTER_NOTIFY's notice of a departure).
    pub fn recv_frame(&mut self) -> Result<Msg> {
        self.pump();
        loop {
            match self.pattern.recv(&mut self.pipes) {
                Err(Error::Again) if !self.pipes.retired.is_empty() => self.reap(),
                r => {
                    self.reap();
                    return r;
                }
            }
        }
    }

    /// Receives one frame through `Pattern::recv_into` (the path `Socket::recv_msg` takes),
    /// trying again as [`Bench::recv_frame`] does.
    pub fn recv_frame_into(&mut self) -> Result<Msg> {
        self.pump();
        let mut m = Msg::new();
        loop {
            match self.pattern.recv_into(&mut self.pipes, &mut m) {
                Err(Error::Again) if !self.pipes.retired.is_empty() => self.reap(),
                r => {
                    self.reap();
                    return r.map(|()| m);
                }
            }
        }
    }

    /// Receives a whole message: its first frame through `recv_into`, the rest by value (both
    /// paths run in every test that receives).
    pub fn recv(&mut self) -> Result<Parts> {
        let mut m = self.recv_frame_into()?;
        let mut out = vec![m.to_vec()];
        while m.more() {
            m = self.recv_frame()?;
            out.push(m.to_vec());
        }
        Ok(out)
    }

    /// `Pattern::has_in` (POLLIN), after the pending wake-ups, as `Socket::has_in_now`
    /// looks: again after detaching the pipes a first look found closed.
    pub fn has_in(&mut self) -> bool {
        self.pump();
        if self.pattern.has_in(&mut self.pipes) {
            return true;
        }
        if self.pipes.retired.is_empty() {
            return false;
        }
        self.reap();
        self.pattern.has_in(&mut self.pipes)
    }

    /// `Pattern::has_out` (POLLOUT), after the pending wake-ups.
    pub fn has_out(&mut self) -> bool {
        self.pump();
        self.pattern.has_out(&mut self.pipes)
    }

    /// `Pattern::setsockopt` with an int value.
    pub fn set_int(&mut self, option: i32, v: i32) -> Option<Result<()>> {
        self.set_bytes(option, &v.to_ne_bytes())
    }

    /// `Pattern::setsockopt` with a binary value.
    pub fn set_bytes(&mut self, option: i32, v: &[u8]) -> Option<Result<()>> {
        self.pump();
        let r = self.pattern.setsockopt(&mut self.pipes, option, v);
        self.reap();
        r
    }

    /// `Pattern::getsockopt` of an int option.
    pub fn get_int(&self, option: i32) -> Option<i32> {
        let v = self.pattern.getsockopt(option)?;
        Some(i32::from_ne_bytes(v[..].try_into().expect("an int option")))
    }

    /// Peer `p` sends a message of text frames.
    pub fn peer_send(&mut self, p: usize, frames: &[&str]) {
        self.peer_send_bytes(p, &frames.iter().map(|s| s.as_bytes()).collect::<Vec<_>>())
    }

    /// Peer `p` sends a message of binary frames.
    pub fn peer_send_bytes(&mut self, p: usize, frames: &[&[u8]]) {
        let end = &mut self.peers[p].1;
        for (i, f) in frames.iter().enumerate() {
            let mut m = Msg::copy_from(f);
            m.set_more(i + 1 < frames.len());
            end.write(m);
        }
        end.flush();
    }

    /// Peer `p` sends one frame as it is (flags included).
    pub fn peer_send_msg(&mut self, p: usize, m: Msg) {
        let end = &mut self.peers[p].1;
        end.write(m);
        end.flush();
    }

    /// The next whole message peer `p` has received (None: nothing now, or its pipe closed).
    pub fn peer_recv(&mut self, p: usize) -> Option<Parts> {
        Some(self.peer_recv_msgs(p)?.iter().map(|m| m.to_vec()).collect())
    }

    /// [`Bench::peer_recv`] with the frames as they are (flags included).
    pub fn peer_recv_msgs(&mut self, p: usize) -> Option<Vec<Msg>> {
        let end = &mut self.peers[p].1;
        let mut out = Vec::new();
        loop {
            match end.read() {
                Read::Msg(m) => {
                    let more = m.more();
                    out.push(m);
                    if !more {
                        return Some(out);
                    }
                }
                Read::Empty | Read::Closed => {
                    assert!(out.is_empty(), "half a message: {out:?}");
                    return None;
                }
            }
        }
    }

    /// Every whole message peer `p` has received.
    pub fn peer_recv_all(&mut self, p: usize) -> Vec<Parts> {
        std::iter::from_fn(|| self.peer_recv(p)).collect()
    }

    /// True when the socket's side of peer `p`'s pipe is gone and `p` has read everything.
    pub fn peer_sees_close(&mut self, p: usize) -> bool {
        let end = &mut self.peers[p].1;
        end.peer_closed() && matches!(end.read(), Read::Closed)
    }

    /// Peer `p`'s end of its pipe, for what the other calls do not cover.
    pub fn peer(&mut self, p: usize) -> &mut PipeEnd {
        &mut self.peers[p].1
    }

    /// Peer `p` goes away (its end of the pipe is dropped).
    pub fn drop_peer(&mut self, p: usize) {
        let (_, end) = &mut self.peers[p];
        // A fresh, unconnected end takes its place: the numbering of the others stays.
        drop(std::mem::replace(end, pipe([0, 0]).0));
    }

    /// Whether peer `p`'s pipe is still attached to the socket.
    pub fn attached(&self, p: usize) -> bool {
        self.pipes.valid(self.peers[p].0)
    }
}

/// A routing-id frame, as a session or an inproc peer opens its direction with.
pub(crate) fn routing_id(id: &[u8]) -> Msg {
    let mut m = Msg::copy_from(id);
    m.set_flags(ROUTING_ID);
    m
}
