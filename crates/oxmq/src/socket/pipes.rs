//! The socket's pipes by slot, as its pattern sees them: reading (routing ids absorbed), writing
//! within the HWM, flushing, and the slots' bookkeeping.

use super::*;

/// One attached pipe, as the socket sees it.
pub(crate) struct Slot {
    pub end: PipeEnd,
    pub serial: u64,
    /// The peer's routing id, once its first frame has been read (None: not yet).
    pub peer_id: Option<Bytes>,
    /// The endpoint this pipe came from (for `disconnect` of inproc peers).
    pub endpoint: Option<String>,
    /// The bound endpoint (listener id) that accepted this pipe's connection, for `unbind`.
    pub listener: Option<u64>,
}

/// The socket's pipes, indexed by slot. Patterns hold slot numbers.
pub(crate) struct Pipes {
    pub(super) slots: Vec<Option<Slot>>,
    pub(super) free: Vec<usize>,
    pub(super) next_serial: u64,
    /// Slots whose peer closed and whose inbound side is drained: detached after the current
    /// operation.
    pub(super) retired: Vec<usize>,
    /// The send now being made will not wait: a full pipe is an EAGAIN for its caller (see
    /// [`Pipes::check_write_or_again`]).
    pub(super) nonblocking: bool,
    /// Bumped each time the socket waits or is polled: a non-blocking send after that reads
    /// its peers' progress afresh, as libzmq's does after processing its commands.
    pub(super) waits: u64,
    /// SERVER/PEER: the destination of the send being made by [`Socket::send_msg_to`] (0:
    /// the message's own routing id).
    pub(crate) route_to: u32,
}

impl Pipes {
    pub(super) fn new() -> Pipes {
        Pipes {
            slots: Vec::new(),
            free: Vec::new(),
            next_serial: 1,
            retired: Vec::new(),
            nonblocking: false,
            waits: 0,
            route_to: 0,
        }
    }

    pub(super) fn insert(&mut self, end: PipeEnd, endpoint: Option<String>) -> usize {
        let serial = self.next_serial;
        self.next_serial += 1;
        let slot = Slot { end, serial, peer_id: None, endpoint, listener: None };
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        }
    }

    pub(super) fn remove(&mut self, i: usize) -> Option<Slot> {
        let s = self.slots.get_mut(i)?.take();
        if s.is_some() {
            self.free.push(i);
        }
        s
    }

    pub(super) fn valid(&self, id: PipeId) -> bool {
        matches!(self.slots.get(id.slot), Some(Some(s)) if s.serial == id.serial)
    }

    #[inline]
    pub(crate) fn get(&mut self, i: usize) -> &mut Slot {
        // Patterns only hold slots the socket attached and has not detached yet.
        self.slots[i].as_mut().expect("pattern holds a detached slot")
    }

    /// Reads the next frame from a pipe. A routing-id frame (always the first frame a session
    /// writes) is absorbed into the slot; a pipe found closed and drained is retired.
    #[inline(always)]
    pub(crate) fn read(&mut self, i: usize) -> Read {
        loop {
            let slot = self.get(i);
            match slot.end.read() {
                Read::Msg(m) if m.is_routing_id() => {
                    slot.peer_id = Some(m.into_bytes());
                }
                Read::Closed => {
                    if !self.retired.contains(&i) {
                        self.retired.push(i);
                    }
                    return Read::Closed;
                }
                r => return r,
            }
        }
    }

    /// [`Pipes::read`] into `out` (its old frame dropped): true when a frame was read, false
    /// when the pipe is empty or closed (and then retired, as by `read`).
    #[inline(always)]
    pub(crate) fn read_into(&mut self, i: usize, out: &mut Msg) -> bool {
        loop {
            let slot = self.get(i);
            match slot.end.read_into(out) {
                None => return true,
                Some(Read::Msg(m)) if m.is_routing_id() => {
                    slot.peer_id = Some(m.into_bytes());
                }
                Some(Read::Msg(m)) => {
                    out.replace_with(m);
                    return true;
                }
                Some(Read::Closed) => {
                    if !self.retired.contains(&i) {
                        self.retired.push(i);
                    }
                    return false;
                }
                Some(Read::Empty) => return false,
            }
        }
    }

    /// Makes sure the routing-id frame has been absorbed if it has arrived; returns the id.
    pub(crate) fn identify(&mut self, i: usize) -> Option<Bytes> {
        let slot = self.get(i);
        if slot.peer_id.is_none() && slot.end.has_data() {
            match slot.end.read() {
                Read::Msg(m) if m.is_routing_id() => slot.peer_id = Some(m.into_bytes()),
                // Not a routing id first: a peer without one (inproc from a pattern that does
                // not send it). Identify as anonymous and drop the frame: libzmq never puts a
                // data frame before the identity either.
                Read::Msg(_) => slot.peer_id = Some(Bytes::new()),
                _ => {}
            }
        }
        self.get(i).peer_id.clone()
    }

    #[inline]
    pub(crate) fn check_write(&mut self, i: usize) -> bool {
        self.get(i).end.check_write()
    }

    /// [`Pipes::check_write`] where a refusal becomes EAGAIN for the sender (never a drop):
    /// in a non-blocking send the reader's progress is read lazily, as libzmq's sender sees
    /// it ([`PipeEnd::check_write_lazy`]).
    #[inline]
    pub(crate) fn check_write_or_again(&mut self, i: usize) -> bool {
        let lazy = self.nonblocking();
        self.get(i).end.check_write_as(lazy)
    }

    /// While the send being made will not wait, the socket's wait count for
    /// [`PipeEnd::check_write_lazy`] (see [`Pipes::check_write_or_again`]); None otherwise.
    #[inline(always)]
    pub(crate) fn nonblocking(&self) -> Option<u64> {
        self.nonblocking.then_some(self.waits)
    }

    /// The pipe end of slot `i`, for a pattern that does several things with it in a row
    /// (one slot lookup instead of one per step).
    #[inline(always)]
    pub(crate) fn end(&mut self, i: usize) -> &mut PipeEnd {
        &mut self.get(i).end
    }

    #[inline(always)]
    pub(crate) fn write(&mut self, i: usize, msg: Msg) {
        self.get(i).end.write(msg)
    }

    #[inline]
    pub(crate) fn flush(&mut self, i: usize) {
        self.get(i).end.flush()
    }

    /// [`PipeEnd::flush_through`]: for subscriptions and joins, which must be on the wire
    /// before the caller's next action.
    #[inline]
    pub(crate) fn flush_through(&mut self, i: usize) {
        self.get(i).end.flush_through()
    }

    /// [`PipeEnd::publish`]: the first half of a flush split across many pipes.
    #[inline]
    pub(crate) fn publish(&mut self, i: usize) -> bool {
        self.get(i).end.publish()
    }

    /// [`PipeEnd::wake_after_fence`]: the second half.
    #[inline]
    pub(crate) fn wake_after_fence(&mut self, i: usize) {
        self.get(i).end.wake_after_fence()
    }

    /// True when a message is ready to read. A routing-id frame at the head is absorbed
    /// first: it is not a message, and reporting it would make POLLIN lie. A pipe found closed
    /// and drained is retired, as by `read`: its last message may have been read already, and
    /// then no wake-up is left to report the close.
    pub(crate) fn has_data(&mut self, i: usize) -> bool {
        loop {
            let slot = self.get(i);
            match slot.end.peek() {
                None => {
                    // `closed` is set after the peer's last flush: look at the queue again.
                    if slot.end.peer_closed() && slot.end.peek().is_none() && !self.retired.contains(&i) {
                        self.retired.push(i);
                    }
                    return false;
                }
                Some(m) if m.is_routing_id() => {
                    if let Read::Msg(m) = slot.end.read() {
                        slot.peer_id = Some(m.into_bytes());
                    }
                }
                Some(_) => return true,
            }
        }
    }

    /// Closes a pipe from this side (e.g. a PAIR refusing a second peer, a ROUTER refusing a
    /// duplicate routing id). The caller must already have removed it from its structures.
    pub(crate) fn reject(&mut self, i: usize) {
        self.remove(i);
    }
}
