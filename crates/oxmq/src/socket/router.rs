//! ROUTER (RFC 28): addresses peers by routing id.
//!
//! Each received message is prefixed with a frame holding the routing id of the peer it came
//! from; each sent message must start with such a frame, which selects the peer. A peer's id is
//! the Identity it announced in its handshake, or a generated 5-byte id (a zero byte and a
//! counter, as libzmq makes them) when it announced none. Unroutable messages are dropped
//! silently (and counted), or fail with `EHOSTUNREACH` under ROUTER_MANDATORY.
//!
//! ROUTER_NOTIFY (libzmq 4.3, draft there): with `NOTIFY_CONNECT` a peer's arrival, with
//! `NOTIFY_DISCONNECT` its departure, is received as a message of two frames, the peer's
//! routing id and an empty frame.

use super::fq::Fq;
use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::opt;
use crate::socket::options::bool_val;
use bytes::Bytes;
use std::collections::HashMap;

pub(crate) struct Router {
    fq: Fq,
    /// Keyed by ids peers choose, so hashed with std's keyed hash (no collision flooding);
    /// `last_out` spares the hash for a run of messages to one peer.
    by_id: HashMap<Bytes, usize>,
    /// The routing id of each identified pipe, by slot (empty: none).
    id_of: Vec<Bytes>,
    /// The same ids as ready routing-id frames (MORE set), cloned for each message received:
    /// building one from the bytes for each message costs a store-forwarding stall.
    id_frame: Vec<Msg>,
    /// The peer the previous message went to: (id, slot), cleared when that pipe goes.
    last_out: Option<(Bytes, usize)>,
    /// Pipes whose routing-id frame has not arrived yet.
    anonymous: Vec<usize>,
    next_id: u32,
    mandatory: bool,
    handover: bool,
    /// ROUTER_NOTIFY flags, and the routing ids of the notifications not yet received.
    notify: i32,
    notifications: std::collections::VecDeque<Bytes>,
    /// Receiving: the routing-id frame was returned and this first frame of the message
    /// follows (`has_pending`). Kept when empty so the connection's properties pass from
    /// frame to frame without reference counting.
    pending_in: Msg,
    has_pending: bool,
    more_in: bool,
    /// Sending: where the current message goes (None while dropping it).
    out: Option<usize>,
    more_out: bool,
    dropped_hwm: u64,
    /// Sends that found the peer's queue full (dropped, or EAGAIN under MANDATORY).
    hwm_reached: u64,
    dropped_no_route: u64,
}

impl Router {
    pub(crate) fn new() -> Router {
        Router {
            fq: Fq::default(),
            by_id: HashMap::new(),
            id_of: Vec::new(),
            id_frame: Vec::new(),
            last_out: None,
            anonymous: Vec::new(),
            // libzmq starts from a random value so ids differ across restarts.
            next_id: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(1),
            mandatory: false,
            handover: false,
            notify: 0,
            notifications: Default::default(),
            pending_in: Msg::new(),
            has_pending: false,
            more_in: false,
            out: None,
            more_out: false,
            dropped_hwm: 0,
            hwm_reached: 0,
            dropped_no_route: 0,
        }
    }

    /// Registers a pipe once its routing id is known. Returns false if it was rejected.
    fn identify(&mut self, pipes: &mut Pipes, slot: usize) -> bool {
        let Some(mut id) = pipes.identify(slot) else {
            if !self.anonymous.contains(&slot) {
                self.anonymous.push(slot);
            }
            return false;
        };
        self.anonymous.retain(|&s| s != slot);
        if id.is_empty() {
            self.next_id = self.next_id.wrapping_add(1);
            let mut v = vec![0u8];
            v.extend_from_slice(&self.next_id.to_be_bytes());
            id = Bytes::from(v);
        }
        if let Some(&old) = self.by_id.get(&id) {
            if self.handover {
                self.by_id.remove(&id);
                self.forget(old);
                self.fq.detach(old);
                if self.out == Some(old) {
                    self.out = None;
                }
                pipes.reject(old);
            } else {
                // Duplicate identity: refuse the newcomer, keep the established peer.
                pipes.reject(slot);
                return false;
            }
        }
        if self.notify & opt::NOTIFY_CONNECT != 0 {
            self.notifications.push_back(id.clone());
        }
        self.by_id.insert(id.clone(), slot);
        if self.id_of.len() <= slot {
            self.id_of.resize(slot + 1, Bytes::new());
            self.id_frame.resize_with(slot + 1, Msg::new);
        }
        let mut frame = Msg::from_bytes(id.clone());
        frame.set_more(true);
        self.id_frame[slot] = frame;
        self.id_of[slot] = id;
        self.fq.attach(slot);
        true
    }

    /// Drops `slot`'s routing id (and the send cache if it points there); returns the id.
    fn forget(&mut self, slot: usize) -> Option<Bytes> {
        if self.last_out.as_ref().is_some_and(|(_, s)| *s == slot) {
            self.last_out = None;
        }
        let id = std::mem::take(self.id_of.get_mut(slot)?);
        self.id_frame[slot] = Msg::new();
        (!id.is_empty()).then_some(id)
    }

    /// The slot of the peer called `id`, if one is connected.
    #[inline]
    fn route(&mut self, id: &[u8]) -> Option<usize> {
        if let Some((last, slot)) = &self.last_out {
            if last.as_ref() == id {
                return Some(*slot);
            }
        }
        let (key, &slot) = self.by_id.get_key_value(id)?;
        self.last_out = Some((key.clone(), slot));
        Some(slot)
    }
}

impl Pattern for Router {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        self.identify(pipes, slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.anonymous.retain(|&s| s != slot);
        if let Some(id) = self.forget(slot) {
            self.by_id.remove(&id);
            if self.notify & opt::NOTIFY_DISCONNECT != 0 {
                self.notifications.push_back(id);
            }
        }
        self.fq.detach(slot);
        if self.out == Some(slot) {
            self.out = None;
        }
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
        if !self.more_out {
            // The routing-id frame: choose the peer.
            if !msg.more() {
                *msg = Msg::new(); // a lone id frame is ignored, as in libzmq
                return Ok(());
            }
            self.out = None;
            match self.route(msg.as_slice()) {
                Some(slot) => {
                    // Full: EAGAIN under MANDATORY, otherwise the message is dropped.
                    let room = if self.mandatory { pipes.check_write_or_again(slot) } else { pipes.check_write(slot) };
                    if room {
                        self.out = Some(slot);
                    } else {
                        self.hwm_reached += 1;
                        if self.mandatory {
                            return Err(Error::Again);
                        }
                        self.dropped_hwm += 1;
                    }
                }
                None => {
                    if self.mandatory {
                        return Err(Error::HostUnreach);
                    }
                    self.dropped_no_route += 1;
                }
            }
            self.more_out = true;
            *msg = Msg::new();
            return Ok(());
        }
        let more = msg.more();
        if let Some(slot) = self.out {
            let end = pipes.end(slot);
            end.write_take(msg);
            if !more {
                end.flush();
            }
        } else {
            *msg = Msg::new(); // no route: dropped
        }
        if !more {
            self.more_out = false;
            self.out = None;
        }
        Ok(())
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        let mut m = Msg::new();
        self.recv_into(pipes, &mut m)?;
        Ok(m)
    }
    #[inline]
    fn recv_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        if self.has_pending {
            // The first frame after the routing id; `pending_in` keeps the id frame, with the
            // same properties, for the next message to overwrite.
            std::mem::swap(out, &mut self.pending_in);
            self.has_pending = false;
            self.more_in = out.more();
            return Ok(());
        }
        if self.more_in {
            self.fq.recv_into(pipes, out)?;
            self.more_in = out.more();
            return Ok(());
        }
        if let Some(id) = self.notifications.pop_front() {
            // [routing id, empty frame], as libzmq delivers a notification.
            self.pending_in = Msg::new();
            self.has_pending = true;
            let mut idm = Msg::from(id);
            idm.set_more(true);
            self.more_in = true;
            out.replace_with(idm);
            return Ok(());
        }
        let slot = self.fq.recv_into(pipes, &mut self.pending_in)?;
        // The routing-id frame carries the connection's properties too, as libzmq's does.
        let idm = match self.id_frame.get(slot) {
            Some(f) => f.clone(),
            None => {
                let mut f = Msg::new();
                f.set_more(true);
                f
            }
        };
        out.replace_with_props(idm, self.pending_in.props_option());
        self.has_pending = true;
        self.more_in = true;
        Ok(())
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        self.has_pending || self.more_in || !self.notifications.is_empty() || self.fq.has_in(pipes)
    }
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        true
    }
    fn setsockopt(&mut self, _pipes: &mut Pipes, option: i32, value: &[u8]) -> Option<Result<()>> {
        match option {
            opt::ROUTER_MANDATORY => Some(bool_val(value).map(|v| self.mandatory = v)),
            opt::ROUTER_HANDOVER => Some(bool_val(value).map(|v| self.handover = v)),
            opt::ROUTER_NOTIFY => Some(match crate::socket::options::int_val(value) {
                Ok(v) if (0..=opt::NOTIFY_CONNECT | opt::NOTIFY_DISCONNECT).contains(&v) => {
                    self.notify = v;
                    Ok(())
                }
                _ => Err(Error::Invalid),
            }),
            _ => None,
        }
    }
    fn getsockopt(&self, option: i32) -> Option<Vec<u8>> {
        match option {
            opt::ROUTER_MANDATORY => Some((self.mandatory as i32).to_ne_bytes().to_vec()),
            opt::ROUTER_HANDOVER => Some((self.handover as i32).to_ne_bytes().to_vec()),
            opt::ROUTER_NOTIFY => Some(self.notify.to_ne_bytes().to_vec()),
            _ => None,
        }
    }
    fn peer_state(&mut self, pipes: &mut Pipes, id: &[u8]) -> Result<i16> {
        let &slot = self.by_id.get(id).ok_or(Error::HostUnreach)?;
        Ok(if pipes.end(slot).has_room() { crate::opt::POLLOUT } else { 0 })
    }

    fn drops(&self) -> super::stats::Drops {
        super::stats::Drops {
            hwm: self.dropped_hwm,
            no_route: self.dropped_no_route,
            hwm_reached: self.hwm_reached,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests;
