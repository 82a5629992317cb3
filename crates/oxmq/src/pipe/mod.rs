//! Pipes: the bidirectional, bounded message channel between two owners.
//!
//! A pipe joins a socket to an I/O session (tcp, ipc) or a socket to another socket (inproc).
//! Each end is a [`PipeEnd`]: it writes to one [`ypipe`] and reads from the other, so no lock is
//! taken per message. An end is woken only on a transition its owner cares about:
//!
//! * **read activation**: the peer flushed messages while this end's reader was asleep;
//! * **write activation**: this end had stopped at its high-water mark and the peer has since
//!   read enough to make room;
//! * **closed**: the peer end was dropped. Messages it flushed before closing stay readable, so
//!   nothing accepted is lost; the reader sees [`Read::Closed`] only after draining them, and
//!   after the end's farewell message if its owner gave it one ([`PipeEnd::set_farewell`]).
//!
//! Wake-ups go through the [`Owner`] registered for each end, which turns them into a command in
//! the owner's mailbox (a socket) or in an I/O thread's queue (a session). The high-water mark
//! counts whole messages: frames of a multi-part message are flushed together when the last one
//! is written, so a reader never sees half a message.
//!
//! One file for both ends and what they share, over the 800 lines the rest of the crate keeps to:
//! every counter here is written by one end and read by the other, and the orderings that make
//! a wake-up never lost (a store on one side, the fence and load on the other) read best side by
//! side.

pub mod ypipe;

use crate::msg::Msg;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What a wake-up is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    Read,
    Write,
    Closed,
    /// The peer (an I/O session) reconnected to a new remote: resend per-connection state.
    Hiccup,
}

/// An input taken over by [`Owner::direct_arm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Armed {
    /// The descriptor to wait on.
    pub(crate) fd: std::os::fd::RawFd,
    /// A read that finds nothing costs about what a `poll` of the descriptor does, so a
    /// waiter that does not sleep may look by reading (a unix stream). Not so for tcp: its
    /// read takes the socket's lock, and input that arrives meanwhile waits in the socket's
    /// backlog until that read has returned empty.
    pub(crate) reads_cheaply: bool,
}

/// What an [`Owner::direct_read`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DirectRead {
    /// It read input, and delivered what it decoded into the pipe.
    Read,
    /// The input had nothing yet; it is still the caller's to read (or wait on).
    Empty,
    /// It could not run: the owner's thread is busy with the input, the owner is not in its
    /// data phase, or the input needs the owner's thread (the end of the stream, an error, the
    /// protocol's work). The owner's thread handles the input as usual, so a caller that gets
    /// this waits for a wake-up.
    Refused,
}

/// Receives wake-ups for one pipe end. Called from the peer's thread; must not block.
pub(crate) trait Owner: Send + Sync {
    fn wake(&self, id: PipeId, what: Wake);

    /// The descriptor to wait on for this owner's input, when the other end's thread may read
    /// and decode it itself (an I/O session in its data phase; see [`Owner::direct_read`]).
    /// None for every other owner, and whenever the owner's own thread must handle the input.
    /// While armed, the owner's own thread is not woken by that input: every `Some` must be
    /// followed by [`Owner::direct_disarm`].
    fn direct_arm(&self, _id: PipeId) -> Option<Armed> {
        None
    }

    /// Ends a wait begun with [`Owner::direct_arm`]: hands the input back to the owner's
    /// thread, or with `lend` (the time the wait ended), leaves it with application threads
    /// for a short while, for a caller that is about to wait on it again (the owner takes it
    /// back if none does).
    fn direct_disarm(&self, _id: PipeId, _lend: Option<std::time::Instant>) {}

    /// Reads the owner's input on the calling thread and delivers it into the pipe, without
    /// blocking (see [`DirectRead`]).
    fn direct_read(&self, _id: PipeId) -> DirectRead {
        DirectRead::Refused
    }

    /// The descriptor the owner's input arrives on, for a thread about to act on what that
    /// input says (a publisher about to send, `socket/catchup.rs`); None when the owner has
    /// none, or its input is for its own thread only now (not in its data phase).
    fn input_fd(&self, _id: PipeId) -> Option<std::os::fd::RawFd> {
        None
    }

    /// Waits for the owner's thread if it is busy with its input (its turn is short: what it
    /// read is then in the pipe), and with `read`, reads and decodes what the input holds now
    /// on the calling thread, into the pipe. What the calling thread cannot finish is left to
    /// the owner's thread, as by [`Owner::direct_read`].
    fn catch_up(&self, _id: PipeId, _read: bool) {}

    /// Writes what the pipe holds for the owner onto its connection on the calling thread,
    /// waiting for the owner's thread if it is busy, so that it is in the kernel when this
    /// returns (a subscription, before the subscriber's next action can make a publisher
    /// send; see `socket/catchup.rs`). What the calling thread cannot finish (a full socket
    /// buffer, a connection not yet up) stays with the owner's thread, already woken.
    fn write_through(&self, _id: PipeId) {}
}

/// Identifies a pipe end to its owner: a slot plus a serial that makes stale wake-ups for a
/// reused slot harmless.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PipeId {
    pub slot: usize,
    pub serial: u64,
}

struct Side {
    /// Whole messages read by this side's reader, published in batches (see LWM below).
    read_msgs: AtomicU64,
    /// The writer towards this side stopped at its HWM and wants a write activation.
    writer_waiting: AtomicBool,
    /// This side's end was dropped.
    closed: AtomicBool,
    /// Whole messages written by this side's writer, as it last published them (sessions do,
    /// once per read batch; for the inbound queue depth in `Socket::peer_stats`).
    written_msgs: AtomicU64,
    /// A new HWM for this side's writer, set by the other end ([`PipeEnd::set_peer_hwm`]);
    /// `NO_HWM_CHANGE` when none is pending. Read when the writer finds itself at its HWM.
    hwm_change: AtomicU64,
    owner: Mutex<Option<(Arc<dyn Owner>, PipeId)>>,
}

const NO_HWM_CHANGE: u64 = u64::MAX;

/// How often a non-blocking send may re-read the reader's progress (see
/// [`PipeEnd::check_write_lazy`]): libzmq's sender processes its commands, write activations
/// included, at most about once per millisecond while it keeps sending.
const LAZY_CREDIT: std::time::Duration = std::time::Duration::from_millis(1);

impl Side {
    fn new() -> Side {
        Side {
            read_msgs: AtomicU64::new(0),
            writer_waiting: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            written_msgs: AtomicU64::new(0),
            hwm_change: AtomicU64::new(NO_HWM_CHANGE),
            owner: Mutex::new(None),
        }
    }

    fn wake(&self, what: Wake) {
        // Called with the registration released: an owner may do the work on the calling
        // thread (a session writes, reads or resumes there) and so may drop the last handle
        // on a session that has just ended, whose pipe end then clears this registration
        // (`PipeEnd::drop`). An owner woken just after it was replaced checks the id.
        let owner = self.owner.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some((owner, id)) = owner {
            owner.wake(id, what);
        }
    }
}

struct Shared {
    sides: [Side; 2],
    /// CONFLATE: the newest data message towards each side (indexed by the reading side), so
    /// a conflating direction holds one message however slowly it is read, as libzmq's.
    slots: [ConflateSlot; 2],
    /// The local and remote address of the connection now carrying the pipe (tcp, ipc), as
    /// monitor events show them; set by its session at each connection (ZMQ_EVENT_PIPES_STATS).
    addrs: Mutex<Option<Box<(String, String)>>>,
}

#[derive(Default)]
struct ConflateSlot {
    msg: Mutex<Option<Msg>>,
    /// The reader found the slot empty and wants a read activation when it is filled.
    reader_waiting: AtomicBool,
}

/// Result of [`PipeEnd::read`].
#[derive(Debug)]
pub(crate) enum Read {
    Msg(Msg),
    /// Nothing now; the end is asleep and will be woken on the peer's next flush.
    Empty,
    /// The peer is gone and everything it sent has been read.
    Closed,
}

/// Why [`PipeEnd::front`] has no frame (nothing to drop, unlike a [`Read`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Absent {
    /// Nothing now, as [`Read::Empty`].
    Empty,
    /// The peer is gone and everything it sent has been read, as [`Read::Closed`].
    Closed,
}

/// One end of a pipe.
pub(crate) struct PipeEnd {
    side: usize,
    shared: Arc<Shared>,
    out: ypipe::Writer<Msg>,
    inp: ypipe::Reader<Msg>,
    /// Outbound HWM in messages (0 = unlimited).
    hwm: u64,
    written_msgs: u64,
    peer_read_cache: u64,
    /// When [`PipeEnd::check_write_lazy`] last re-read the reader's progress, and the
    /// owner's wait count then.
    credit_read_at: Option<(std::time::Instant, u64)>,
    /// Inbound bookkeeping: messages read and the count last published to the writer.
    read_msgs: u64,
    read_published: u64,
    lwm: u64,
    /// A frame with MORE was written and the message is not complete yet.
    out_mid: bool,
    /// Writer position just after the last complete message: what `flush` may publish.
    complete_upto: usize,
    /// The properties of the connection now feeding this end, taken from the routing-id
    /// frame that opens each connection and attached to every message read after it.
    props: Option<Arc<crate::properties::Properties>>,
    /// CONFLATE: a read returns the newest message queued and drops the older ones.
    conflate: bool,
    /// CONFLATE on the outbound side: data messages replace the one in the peer's slot.
    conflate_out: bool,
    /// A conflated message taken from the slot by `peek`/`has_data`, returned by `read`.
    stash: Option<Msg>,
    /// Read once after everything the peer sent, when the peer has closed (see
    /// [`PipeEnd::set_farewell`]). Boxed: it is rare, and the end stays small.
    farewell: Option<Box<Msg>>,
}

/// Creates a pipe. `hwm[0]` bounds the direction end 0 → end 1, `hwm[1]` the reverse.
pub(crate) fn pipe(hwm: [u64; 2]) -> (PipeEnd, PipeEnd) {
    let shared = Arc::new(Shared { sides: [Side::new(), Side::new()], slots: Default::default(), addrs: Mutex::new(None) });
    let (w01, r01) = ypipe::ypipe();
    let (w10, r10) = ypipe::ypipe();
    let end = |side: usize, out, inp, hwm: u64, in_hwm: u64| PipeEnd {
        side,
        shared: shared.clone(),
        out,
        inp,
        hwm,
        written_msgs: 0,
        peer_read_cache: 0,
        credit_read_at: None,
        read_msgs: 0,
        read_published: 0,
        // Publish progress to the writer every quarter of its window (at least every message
        // for tiny windows, at most every 256) so a writer at HWM resumes in good time without
        // a shared-cache-line write per message.
        lwm: if in_hwm == 0 { 256 } else { (in_hwm / 4).clamp(1, 256) },
        out_mid: false,
        complete_upto: 0,
        props: None,
        conflate: false,
        conflate_out: false,
        stash: None,
        farewell: None,
    };
    let a = end(0, w01, r10, hwm[0], hwm[1]);
    let b = end(1, w10, r01, hwm[1], hwm[0]);
    (a, b)
}

impl PipeEnd {
    /// Gives this end a message to read last, once the peer end is gone: after everything the
    /// peer published, before [`Read::Closed`] (ZMQ_DISCONNECT_MSG: a ROUTER's word that a
    /// peer left). Only this end's owner sees it, and only if the peer closes first: an end
    /// its owner drops takes it along unread. `read`, `read_into`, `peek` and `has_data`
    /// see it; `front`, the sessions' reader, does not (a session is never given one).
    pub(crate) fn set_farewell(&mut self, msg: Msg) {
        self.farewell = Some(Box::new(msg));
    }

    /// Registers who receives this end's wake-ups. Call before reading; a flush that happened
    /// before registration is found by the owner's first read.
    pub(crate) fn set_owner(&self, owner: Arc<dyn Owner>, id: PipeId) {
        let mut g = self.shared.sides[self.side].owner.lock().unwrap_or_else(|p| p.into_inner());
        *g = Some((owner, id));
    }

    fn me(&self) -> &Side {
        &self.shared.sides[self.side]
    }

    /// The owner registered for the other end (an I/O session's, for a tcp or ipc pipe), for
    /// the direct read path of a waiting receiver.
    pub(crate) fn peer_owner(&self) -> Option<(Arc<dyn Owner>, PipeId)> {
        self.peer().owner.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn peer(&self) -> &Side {
        &self.shared.sides[1 - self.side]
    }

    /// True when a new message may be written now (always true in the middle of a message).
    /// When false, the end registers for a write activation.
    #[inline(always)]
    pub(crate) fn check_write(&mut self) -> bool {
        if self.out_mid || self.hwm == 0 || self.written_msgs - self.peer_read_cache < self.hwm {
            return true;
        }
        self.check_write_slow()
    }

    #[cold]
    fn check_write_slow(&mut self) -> bool {
        if self.peer_closed() {
            return false;
        }
        let change = self.me().hwm_change.swap(NO_HWM_CHANGE, Ordering::Acquire);
        if change != NO_HWM_CHANGE {
            self.hwm = change;
            if change == 0 {
                return true;
            }
        }
        self.peer_read_cache = self.peer().read_msgs.load(Ordering::Acquire);
        if self.written_msgs - self.peer_read_cache < self.hwm {
            return true;
        }
        // Dekker handshake with the reader's publish in `note_read`.
        self.peer().writer_waiting.store(true, Ordering::SeqCst);
        self.peer_read_cache = self.peer().read_msgs.load(Ordering::SeqCst);
        self.written_msgs - self.peer_read_cache < self.hwm
    }

    /// `check_write_lazy(waits)` for `Some(waits)`, `check_write` for None (as a socket's
    /// `Pipes::nonblocking` gives it).
    #[inline]
    pub(crate) fn check_write_as(&mut self, lazy: Option<u64>) -> bool {
        match lazy {
            Some(waits) => self.check_write_lazy(waits),
            None => self.check_write(),
        }
    }

    /// [`PipeEnd::check_write`] for a non-blocking send, whose refusal costs its caller an
    /// EAGAIN and nothing else. At the HWM the reader's progress is re-read at most once per
    /// [`LAZY_CREDIT`], or when `waits` (a count the owner bumps each time it waits or is
    /// polled) has moved since the last look, as libzmq's sender learns of it only when it
    /// processes commands: a burst against a peer that does not read stops after about one
    /// HWM of messages, not after whatever the kernel's socket buffers absorb (libzmq's
    /// `ROUTER_MANDATORY` and HWM tests count on it). Blocking sends, `ZMQ_EVENTS` and poll always re-read it. A
    /// refusal registers for the write activation as `check_write` does, and posts it itself
    /// when the room is there already, so a pattern that parks the pipe until then is not
    /// stranded.
    #[inline]
    pub(crate) fn check_write_lazy(&mut self, waits: u64) -> bool {
        if self.out_mid || self.hwm == 0 || self.written_msgs - self.peer_read_cache < self.hwm {
            return true;
        }
        self.check_write_lazy_slow(waits)
    }

    #[cold]
    fn check_write_lazy_slow(&mut self, waits: u64) -> bool {
        let now = std::time::Instant::now();
        if self.credit_read_at.is_none_or(|(t, w)| w != waits || now.duration_since(t) >= LAZY_CREDIT) {
            self.credit_read_at = Some((now, waits));
            return self.check_write_slow();
        }
        if self.peer_closed() {
            return false;
        }
        // Dekker handshake with the reader's publish, as in `check_write_slow`, leaving the
        // cached progress as it was.
        let peer = self.peer();
        peer.writer_waiting.store(true, Ordering::SeqCst);
        let read = peer.read_msgs.load(Ordering::SeqCst);
        if self.written_msgs - read < self.hwm && peer.writer_waiting.swap(false, Ordering::SeqCst) {
            // The reader published before the registration and will not wake this end.
            self.me().wake(Wake::Write);
        }
        false
    }

    /// True when a new message fits under the HWM now, as [`PipeEnd::check_write`] but
    /// without asking for a write activation when it does not (a query, not a wait).
    pub(crate) fn has_room(&mut self) -> bool {
        if self.out_mid || self.hwm() == 0 {
            return true;
        }
        self.peer_read_cache = self.peer().read_msgs.load(Ordering::Acquire);
        !self.peer_closed() && self.written_msgs - self.peer_read_cache < self.hwm
    }

    /// Writes one frame. The caller checked [`PipeEnd::check_write`] for the first frame of a
    /// message. The message becomes visible at the next [`PipeEnd::flush`].
    #[inline]
    pub(crate) fn write(&mut self, msg: Msg) {
        if self.conflate_out {
            return self.write_conflated(msg);
        }
        self.write_queued(msg)
    }

    /// CONFLATE: replace the message waiting in the slot (frames of a multi-part message
    /// replace each other: only single-part messages are supported, as libzmq). Kept out of
    /// line so `write` stays small enough to inline into the session's decode loop.
    #[cold]
    #[inline(never)]
    fn write_conflated(&mut self, msg: Msg) {
        if msg.is_routing_id() {
            return self.write_queued(msg);
        }
        *self.shared.slots[1 - self.side].msg.lock().unwrap_or_else(|p| p.into_inner()) = Some(msg);
    }

    /// Where the next frame can be built in place in the queue, for
    /// [`PipeEnd::commit_frame`] to write it (the decoder's single frames, fan-out's shares).
    /// None with CONFLATE, where messages go to a slot of their own ([`PipeEnd::write`]).
    #[inline(always)]
    pub(crate) fn new_slot(&mut self) -> Option<&mut MaybeUninit<Msg>> {
        if self.conflate_out {
            return None;
        }
        Some(self.out.slot())
    }

    /// [`PipeEnd::write`] of the frame built in the place [`PipeEnd::new_slot`] gave, whose
    /// MORE flag is `more` and that is a routing id or not (`id`).
    ///
    /// # Safety
    /// That place holds such a frame, written since.
    #[inline(always)]
    pub(crate) unsafe fn commit_frame(&mut self, more: bool, id: bool) {
        // SAFETY: forwarded contract.
        unsafe { self.out.commit() };
        self.out_mid = more;
        if !more {
            self.written_msgs += u64::from(!id);
            self.complete_upto = self.out.written();
        }
    }

    /// [`PipeEnd::write`] of `*msg`, leaving it empty: the frame is copied once, from the
    /// caller's `Msg` straight into the queue (the send path of the load balancer).
    #[inline(always)]
    pub(crate) fn write_take(&mut self, msg: &mut Msg) {
        if self.conflate_out {
            return self.write_conflated(std::mem::take(msg));
        }
        let more = msg.more();
        let id = msg.is_routing_id();
        self.out.push_take(msg);
        self.out_mid = more;
        if !more {
            self.written_msgs += u64::from(!id);
            self.complete_upto = self.out.written();
        }
    }

    #[inline(always)]
    fn write_queued(&mut self, msg: Msg) {
        let more = msg.more();
        // A routing-id frame is not a message: it must not take a place under the HWM (nor
        // show in the queue depths), so neither side counts it.
        let id = msg.is_routing_id();
        self.out.push(msg);
        self.out_mid = more;
        if !more {
            self.written_msgs += u64::from(!id);
            self.complete_upto = self.out.written();
        }
    }

    /// Publishes complete messages and wakes the peer if it was asleep.
    #[inline]
    pub(crate) fn flush(&mut self) {
        if self.out.flush_to(self.complete_upto) {
            self.peer().wake(Wake::Read);
        }
        if self.conflate_out {
            self.wake_conflated();
        }
    }

    /// [`PipeEnd::flush`] in two halves, for a distributor flushing many pipes with one fence:
    /// publishes complete messages; true if any, and then the caller must issue
    /// `fence(SeqCst)` after all its publishes and call [`PipeEnd::wake_after_fence`].
    #[inline]
    pub(crate) fn publish(&mut self) -> bool {
        self.out.publish_to(self.complete_upto) || self.conflate_out
    }

    /// The second half of [`PipeEnd::publish`]: wakes the peer if it was asleep.
    #[inline]
    pub(crate) fn wake_after_fence(&mut self) {
        if self.out.woken_after_fence() {
            self.peer().wake(Wake::Read);
        }
        if self.conflate_out {
            self.wake_conflated();
        }
    }

    #[cold]
    #[inline(never)]
    fn wake_conflated(&self) {
        if self.shared.slots[1 - self.side].reader_waiting.swap(false, Ordering::SeqCst) {
            self.peer().wake(Wake::Read);
        }
    }

    /// [`PipeEnd::flush`], then has the peer's owner write what it holds on the calling
    /// thread ([`Owner::write_through`]).
    pub(crate) fn flush_through(&mut self) {
        self.flush();
        if let Some((owner, id)) = self.peer_owner() {
            owner.write_through(id);
        }
    }

    /// Tells the peer end's owner that this side reconnected (see [`Wake::Hiccup`]).
    pub(crate) fn hiccup(&self) {
        self.peer().wake(Wake::Hiccup);
    }

    /// Reads the next frame. Always inlined: with more than one caller (the draft types, the
    /// udp engine, raw sessions) the compiler stops inlining it into the session's encoder,
    /// which costs 20-40 instructions per message.
    #[inline(always)]
    pub(crate) fn read(&mut self) -> Read {
        if self.conflate {
            return self.read_conflated();
        }
        self.read_one()
    }

    /// CONFLATE's read: the newest message, older ones dropped (single-part messages only, as
    /// libzmq: of a multi-part message only its last frame survives). The routing-id frame a
    /// session writes first is not a message and is never dropped. The newest message is in
    /// the slot when the writer conflates too, else the newest in the queue.
    #[cold]
    fn read_conflated(&mut self) -> Read {
        if matches!(self.inp.peek(), Some(m) if m.is_routing_id()) {
            return self.read_one();
        }
        if let Some(m) = self.stash.take().or_else(|| self.take_slot()) {
            return Read::Msg(self.newer_than_queue(m));
        }
        match self.read_one() {
            Read::Msg(m) => {
                let mut last = m;
                while !last.is_routing_id() && matches!(self.inp.peek(), Some(m) if !m.is_routing_id()) {
                    match self.read_one() {
                        Read::Msg(m) => last = m,
                        _ => break,
                    }
                }
                last.set_more(false);
                Read::Msg(last)
            }
            Read::Empty => match self.sleep_on_slot() {
                Some(m) => Read::Msg(self.newer_than_queue(m)),
                None => Read::Empty,
            },
            // A writer may fill the slot and close between our looks.
            Read::Closed => match self.take_slot() {
                Some(m) => Read::Msg(self.newer_than_queue(m)),
                None => Read::Closed,
            },
        }
    }

    /// The slot's message is the newest: drop the older data still queued.
    fn newer_than_queue(&mut self, mut m: Msg) -> Msg {
        self.tag(&mut m);
        while matches!(self.inp.peek(), Some(x) if !x.is_routing_id()) {
            let _ = self.read_one();
        }
        m.set_more(false);
        m
    }

    fn take_slot(&self) -> Option<Msg> {
        self.shared.slots[self.side].msg.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Asks for a read activation when the slot is filled; takes what raced in meanwhile.
    fn sleep_on_slot(&self) -> Option<Msg> {
        let slot = &self.shared.slots[self.side];
        slot.reader_waiting.store(true, Ordering::SeqCst);
        let m = self.take_slot();
        if m.is_some() {
            slot.reader_waiting.store(false, Ordering::SeqCst);
        }
        m
    }

    /// CONFLATE on a pipe between a socket's end and its peer's: the directions `reads`
    /// (towards the socket) and `writes` (from it) keep only the newest message, and their
    /// writers never wait for room.
    pub(crate) fn conflate((reads, writes): (bool, bool), socket_end: &mut PipeEnd, peer_end: &mut PipeEnd) {
        if reads {
            socket_end.conflate = true;
            peer_end.conflate_out = true;
            peer_end.hwm = 0;
        }
        if writes {
            peer_end.conflate = true;
            socket_end.conflate_out = true;
            socket_end.hwm = 0;
        }
    }

    /// True when reads on this end conflate (`front` does not apply).
    #[inline(always)]
    pub(crate) fn conflating(&self) -> bool {
        self.conflate
    }

    /// Makes this end's reads conflating (an inproc binder whose connecting peer's end is
    /// already in use).
    pub(crate) fn set_conflate_reads(&mut self) {
        self.conflate = true;
    }

    #[inline(always)]
    fn read_one(&mut self) -> Read {
        match self.inp.pop() {
            Some(mut msg) => {
                self.tag(&mut msg);
                if !msg.more() && !msg.is_routing_id() {
                    self.read_msgs += 1;
                    if self.read_msgs - self.read_published >= self.lwm {
                        self.publish_read();
                    }
                }
                Read::Msg(msg)
            }
            None => self.read_empty(),
        }
    }

    /// The next frame where it lies in the queue, for a reader that only copies it (the
    /// session's encoder, through [`PipeEnd::take_front`]): read it, or take what you keep out
    /// of it (leaving its MORE flag, which tells where the message ends). `Err` is what
    /// [`PipeEnd::read`] returns when there is no frame: `Empty` (asleep) or `Closed`. Not for
    /// CONFLATE ends (use `read`).
    ///
    /// Without `refresh`, only frames this end already knew were published are returned, and
    /// `Err(Empty)` means "none of those left", with the end still awake: the caller must
    /// call again with `refresh` soon (the session does, after writing its batch). A reader
    /// that caught up and re-read the writer's position for every frame would pull that
    /// cache line over once per message while a streaming writer stores to it once per
    /// message, and each of the writer's flushes (a full barrier) would stall on it: a
    /// session chasing its sender spent most of both threads' time there (perf: 46% of the
    /// sender's samples at the flush's barrier) and wrote a few messages per system call.
    #[inline(always)]
    fn front(&mut self, refresh: bool) -> Result<&mut Msg, Absent> {
        debug_assert!(!self.conflate);
        if !self.inp.has_cached() {
            if !refresh {
                return Err(Absent::Empty);
            }
            if !self.inp.has_data() {
                self.front_empty()?;
            }
        }
        // SAFETY: `has_data` said a frame is waiting (here or in `front_empty`).
        let m = unsafe { self.inp.front_unchecked() };
        if let Some(p) = &self.props {
            if !m.is_routing_id() {
                m.set_props(Some(p.clone()));
            }
        }
        Ok(m)
    }

    /// `front` found nothing: as `read_empty`, without taking the frame a closing peer left.
    #[cold]
    #[inline(never)]
    fn front_empty(&mut self) -> Result<(), Absent> {
        if self.read_msgs != self.read_published {
            self.publish_read();
        }
        // `closed` is set after the peer's last flush: one more look finds what it published.
        if !self.peer().closed.load(Ordering::Acquire) {
            return Err(Absent::Empty);
        }
        if self.inp.has_data() {
            Ok(())
        } else {
            Err(Absent::Closed)
        }
    }

    /// [`PipeEnd::front`], `f` on the frame, then a move past it that drops what `f` left of
    /// it (a frame that owns nothing, the common case, costs one test; a body cut from a
    /// chunk gives its reference up through `rel`): the encoder's per-frame step, with the
    /// frame located once.
    #[inline(always)]
    pub(crate) fn take_front<R>(
        &mut self,
        refresh: bool,
        rel: &mut crate::chunk::Releases,
        f: impl FnOnce(&mut Msg) -> R,
    ) -> Result<R, Absent> {
        let m: *mut Msg = self.front(refresh)?;
        // SAFETY: `m` is the front frame `front` just returned; it lives in the pipe's chunk,
        // outside `self`, and stays there until `consume_at` moves past it.
        let r = f(unsafe { &mut *m });
        // SAFETY: as above, and nothing was read since.
        unsafe { self.consume_at(m, rel) };
        Ok(r)
    }

    /// Moves past the front frame at `m` (see [`PipeEnd::take_front`]).
    ///
    /// # Safety
    /// `m` is the front frame `front` returned on this end, with no read or consume since.
    #[inline(always)]
    unsafe fn consume_at(&mut self, m: *mut Msg, rel: &mut crate::chunk::Releases) {
        // SAFETY: the caller's contract: a live frame in the pipe's chunk, not aliased.
        let m = unsafe { &mut *m };
        if m.is_routing_id() {
            self.props = m.props_arc().cloned();
        } else if !m.more() {
            self.read_msgs += 1;
        }
        if m.needs_drop() {
            // SAFETY: the frame is not used again: the position moves past it below.
            unsafe { std::ptr::read(m) }.release_into(rel);
        }
        // SAFETY: as above; it was moved out just now unless it owns nothing (then forgetting
        // it is its drop).
        unsafe { self.inp.advance_forgotten() };
        if self.read_msgs - self.read_published >= self.lwm {
            self.publish_read();
        }
    }

    /// [`PipeEnd::read`] into `out` (its old frame dropped): `None` when a data frame was
    /// read into `out`; otherwise what `read` returns (a routing-id frame, a conflated read,
    /// `Empty` or `Closed`), with `out` untouched. Gives the frame the connection's properties
    /// without touching their reference count when `out` already holds them.
    #[inline(always)]
    pub(crate) fn read_into(&mut self, out: &mut Msg) -> Option<Read> {
        if self.conflate {
            return Some(self.read_conflated());
        }
        match self.inp.pop() {
            Some(mut msg) if msg.is_routing_id() => {
                self.tag(&mut msg);
                Some(Read::Msg(msg))
            }
            Some(msg) => {
                if !msg.more() {
                    self.read_msgs += 1;
                    if self.read_msgs - self.read_published >= self.lwm {
                        self.publish_read();
                    }
                }
                out.replace_with_props(msg, &self.props);
                None
            }
            None => Some(self.read_empty()),
        }
    }

    /// `read` found the queue empty: publish progress and check for the peer's close. Kept out
    /// of line so the hot path of `read` stays small enough to inline into the patterns.
    #[cold]
    #[inline(never)]
    fn read_empty(&mut self) -> Read {
        if self.read_msgs != self.read_published {
            self.publish_read();
        }
        // `closed` is set after the peer's last flush, so once we see it, one more
        // look at the queue finds anything it published before closing.
        if self.peer().closed.load(Ordering::Acquire) {
            match self.inp.pop() {
                Some(mut msg) => {
                    self.tag(&mut msg);
                    if !msg.more() && !msg.is_routing_id() {
                        self.read_msgs += 1;
                    }
                    Read::Msg(msg)
                }
                None => match self.farewell.take() {
                    Some(msg) => {
                        let mut msg = *msg;
                        self.tag(&mut msg);
                        Read::Msg(msg)
                    }
                    None => Read::Closed,
                },
            }
        } else {
            Read::Empty
        }
    }

    /// Connection properties: a routing-id frame brings the new connection's, later messages
    /// get a share of them (an `Arc` clone on the reading thread; nothing when there are none).
    #[inline]
    fn tag(&mut self, msg: &mut Msg) {
        if msg.is_routing_id() {
            self.props = msg.props_arc().cloned();
        } else if let Some(p) = &self.props {
            msg.set_props(Some(p.clone()));
        }
    }

    /// Whole messages written into this end so far.
    pub(crate) fn written(&self) -> u64 {
        self.written_msgs
    }

    /// True when a frame is ready to read; when not, the end sleeps and the next flush wakes it.
    pub(crate) fn has_data(&mut self) -> bool {
        if self.conflate || self.farewell.is_some() {
            return self.peek().is_some();
        }
        self.inp.has_data()
    }

    /// The next frame, without taking it.
    pub(crate) fn peek(&mut self) -> Option<&Msg> {
        if self.conflate && self.stash.is_none() && !self.inp.has_data() {
            self.stash = self.sleep_on_slot();
        }
        if self.conflate && self.stash.is_some() && !matches!(self.inp.peek(), Some(m) if m.is_routing_id()) {
            return self.stash.as_ref();
        }
        if self.farewell.is_some() && self.farewell_due() {
            return self.farewell.as_deref();
        }
        self.inp.peek()
    }

    /// The farewell is next: the peer has closed and everything it published has been read
    /// (`closed` is set after its last flush, so the queue is looked at after it).
    #[cold]
    fn farewell_due(&mut self) -> bool {
        self.peer().closed.load(Ordering::Acquire) && !self.inp.has_data() && self.stash.is_none()
    }

    fn publish_read(&mut self) {
        self.read_published = self.read_msgs;
        let me = &self.shared.sides[self.side];
        me.read_msgs.store(self.read_msgs, Ordering::SeqCst);
        if me.writer_waiting.load(Ordering::SeqCst) && me.writer_waiting.swap(false, Ordering::SeqCst) {
            // The peer's writer is waiting to write towards us.
            self.peer().wake(Wake::Write);
        }
    }

    /// Records the addresses of the connection now carrying the pipe (see `Shared::addrs`).
    pub(crate) fn set_addrs(&self, local: String, remote: String) {
        *self.shared.addrs.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new((local, remote)));
    }

    /// The addresses of the connection carrying the pipe, if a session recorded them.
    pub(crate) fn addrs(&self) -> Option<(String, String)> {
        self.shared.addrs.lock().unwrap_or_else(|p| p.into_inner()).as_deref().cloned()
    }

    /// True once the peer end has been dropped.
    pub(crate) fn peer_closed(&self) -> bool {
        self.peer().closed.load(Ordering::Acquire)
    }

    /// Publishes how many messages this end has written (see [`PipeEnd::queued_in`]).
    pub(crate) fn publish_written(&self) {
        self.me().written_msgs.store(self.written_msgs, Ordering::Relaxed);
    }

    /// Messages written towards the peer that its reader has not published as read yet.
    pub(crate) fn queued_out(&self) -> u64 {
        self.written_msgs.saturating_sub(self.peer().read_msgs.load(Ordering::Relaxed))
    }

    /// Messages the peer published as written that this end has not read yet.
    pub(crate) fn queued_in(&self) -> u64 {
        self.peer().written_msgs.load(Ordering::Relaxed).saturating_sub(self.read_msgs)
    }

    /// Changes the outbound high-water mark (0 = unlimited).
    pub(crate) fn set_hwm(&mut self, hwm: u64) {
        self.hwm = hwm;
    }

    /// This end's outbound limit in messages (0: unlimited), a change the other end made
    /// included.
    pub(crate) fn hwm(&mut self) -> u64 {
        let change = self.me().hwm_change.swap(NO_HWM_CHANGE, Ordering::Acquire);
        if change != NO_HWM_CHANGE {
            self.hwm = change;
        }
        self.hwm
    }

    /// Sets the HWM of the other end's writer (0: unlimited), which may be another thread's:
    /// it takes effect when that writer next finds itself at its current HWM.
    pub(crate) fn set_peer_hwm(&self, hwm: u64) {
        self.peer().hwm_change.store(hwm, Ordering::Release);
    }
}

impl Drop for PipeEnd {
    fn drop(&mut self) {
        // A partly written message is never published: the reader would see half a message.
        // Publish whatever complete messages remain, then mark closed and wake the peer.
        self.out.flush_to(self.complete_upto);
        // What this end read counts as taken, so the writer's `queued_out` of a closed pipe
        // is what was never read (the socket's `dropped_disconnected`).
        self.me().read_msgs.store(self.read_msgs, Ordering::Release);
        self.me().closed.store(true, Ordering::Release);
        let peer = self.peer();
        peer.wake(Wake::Closed);
        // Drop our owner registration: nobody should be woken on our behalf any more.
        *self.me().owner.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests;
