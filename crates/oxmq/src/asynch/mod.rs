//! Async sockets for any executor: [`AsyncSocket`].
//!
//! An [`AsyncSocket`] is a [`Socket`] whose sends and receives are futures. They are plain
//! `std::future`s with no runtime of their own: when an attempt cannot proceed, the future
//! registers its task's [`Waker`](std::task::Waker) in the socket's mailbox and returns
//! `Pending`; the engine wakes it with the socket's next command (a pipe with new messages,
//! room again below the high-water mark, a new peer, the context's shutdown), where a
//! blocking call would have been woken through the socket's eventfd. No thread is added per
//! socket, nothing polls on a timer, and the futures run on tokio (either flavour),
//! async-std, smol, `futures::executor` or anything else that drives a `Future`.
//!
//! Messages are [`Message`]s, sent and received whole: a multi-part message is published to
//! its peer in one step and read in one step. `AsyncSocket` is a
//! [`Stream`](futures_core::Stream) of received messages and a [`Sink`](futures_sink::Sink)
//! of messages to send.
//!
//! ```
//! use oxmq::asynch::AsyncSocket;
//! use oxmq::{Context, SocketType};
//!
//! # futures::executor::block_on(async {
//! let ctx = Context::new();
//! let mut rep = AsyncSocket::new(&ctx, SocketType::Rep)?;
//! rep.bind("tcp://127.0.0.1:*")?;
//! let mut req = AsyncSocket::new(&ctx, SocketType::Req)?;
//! req.connect(&rep.last_endpoint()?)?;
//!
//! req.send("hello").await?;
//! let request = rep.recv().await?;
//! rep.send(request).await?;
//! assert_eq!(req.recv().await?[0], "hello");
//! # Ok::<(), oxmq::Error>(())
//! # }).unwrap();
//! ```
//!
//! # Cancellation
//!
//! Every future here is cancel safe, so `select!`, timeouts and dropped tasks lose nothing:
//!
//! * [`AsyncSocket::recv`]: a message is taken from the socket only in the poll that returns
//!   it. Dropping the future before it completes leaves every message in the socket for the
//!   next receive.
//! * [`AsyncSocket::send`]: a message goes into the socket in one poll, all frames or none
//!   (the high-water mark counts whole messages, so once its first frame is accepted the
//!   others are too). Dropping the future before it completes drops the message unsent;
//!   dropping it after completion changes nothing. The message is never sent in part.
//! * The [`Sink`](futures_sink::Sink): `start_send` keeps the message in the socket's
//!   one-message buffer, which `poll_ready`, `poll_flush` and `poll_close` send; so a
//!   `SinkExt::send` future dropped after `start_send` leaves the message to be sent by the
//!   socket's next sink call. Dropping the socket itself tries once more, without waiting.
//!
//! # Timeouts and options
//!
//! RCVTIMEO and SNDTIMEO are for the blocking API; an async caller uses its runtime's timer
//! (`tokio::time::timeout`, `select!` with a sleep). Every other option works as on a
//! [`Socket`]: the common calls are here, the rest through [`AsyncSocket::get_mut`].
//!
//! ```
//! # use oxmq::asynch::AsyncSocket;
//! # use oxmq::{Context, SocketType};
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
//! # rt.block_on(async {
//! let ctx = Context::new();
//! let mut pull = AsyncSocket::new(&ctx, SocketType::Pull)?;
//! pull.bind("inproc://timeout-example")?;
//! let r = tokio::time::timeout(std::time::Duration::from_millis(10), pull.recv()).await;
//! assert!(r.is_err(), "nothing was sent: the timeout fires, and no message is lost");
//! # Ok::<(), oxmq::Error>(())
//! # }).unwrap();
//! ```
//!
//! # Sharing a context with blocking sockets
//!
//! An `AsyncSocket` is an ordinary socket of its [`Context`]: it talks to blocking sockets of
//! the same context over inproc, and [`AsyncSocket::into_inner`] gives the blocking socket
//! back. One socket is used by one task at a time (`&mut self`), as a [`Socket`] is used by
//! one thread; a task receiving and another sending through the same socket share it with
//! `futures::StreamExt::split`, which this socket supports (receives and sends register
//! their wakers separately).
//!
//! # Costs
//!
//! A send or receive that can proceed is the blocking API's non-blocking call and nothing
//! more. Only a future that goes pending takes the mailbox's lock to register its waker; the
//! engine then wakes it in place of the eventfd it would have signalled, so a blocking
//! socket (no waker registered) pays nothing for this module.
//!
//! # The receive spin
//!
//! A wake-up through the engine costs two threads' wake-ups (the I/O thread's, then the
//! executor's), most of a request/reply round trip on an idle machine. So a receive that finds
//! nothing queued first keeps looking for up to the socket's spin window, as a blocking
//! receive does: [`opt::OXMQ_RECV_SPIN`], 50 µs by default, none on a machine with one CPU.
//! Each look reads the socket's connections on the task's thread; between looks it yields,
//! to the executor (its task wakes itself and returns `Pending`, so the executor's other
//! tasks run) and to the OS's other threads, so the spin blocks no task. A socket whose task an executor
//! moves to another thread between looks (tokio's multi-thread scheduler, where each yield
//! would wake another worker) spins in place instead, on the thread that polls it, for the
//! rest of each window. A spin that runs out turns the spin off for the next receive, then for
//! 2, 4, ... up to 64 receives while spins keep running out, and a message that comes within
//! the window turns it back on: a socket that receives now and then spends at most one window
//! per 64 receives. Set [`opt::OXMQ_RECV_SPIN`] to 0 for a receive that goes pending at once.

mod message;
mod stream;

pub use message::Message;

use crate::context::Context;
use crate::error::{Error, Result};
use crate::mailbox::WakerSlot;
use crate::msg::Msg;
use crate::opt;
use crate::socket::{Socket, SocketType};
use bytes::Bytes;
use std::future::poll_fn;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

/// The most receives a spin that ran out turns the spin off for ([`AsyncSocket::set_recv_spin`]).
const SPIN_BACKOFF_MAX: u32 = 64;

/// Whether a receive may spin ([`AsyncSocket::set_recv_spin`]): a spin that runs out closes
/// the gate for the next receive, then for 2, 4, ... up to [`SPIN_BACKOFF_MAX`] receives while
/// spins keep running out; a message that comes within the window opens it again.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
struct SpinGate {
    /// Receives left before one may spin again.
    cold: u32,
    /// What the next spin that runs out sets `cold` to, halved.
    backoff: u32,
}

impl SpinGate {
    fn open(&self) -> bool {
        self.cold == 0
    }

    fn spin_ran_out(&mut self) {
        self.backoff = (self.backoff * 2).clamp(1, SPIN_BACKOFF_MAX);
        self.cold = self.backoff;
    }

    fn spin_succeeded(&mut self) {
        self.backoff = 0;
    }

    /// A receive went pending without spinning (the gate was closed).
    fn skipped(&mut self) {
        self.cold = self.cold.saturating_sub(1);
    }
}

/// A socket whose sends and receives are futures (see the [module documentation](self)).
pub struct AsyncSocket {
    sock: Socket,
    /// The sink's message accepted by `start_send` and not yet in the socket.
    out: Option<Message>,
    /// [`AsyncSocket::set_recv_spin`]: zero (the default) never spins.
    spin: Duration,
    /// Whether the next receive may spin.
    gate: SpinGate,
    /// When the current receive first found nothing and went pending.
    pending_since: Option<Instant>,
    /// Until when the current receive keeps looking rather than waiting for a wake-up: the
    /// socket's spin window ([`AsyncSocket::spin_by_default`]). None once it has run out, and
    /// for a receive that does not spin.
    yield_until: Option<Instant>,
    /// The thread of the current spin's first look ([`thread_mark`]).
    spin_thread: usize,
    /// The executor moved this socket's task to another thread between looks: spin in place.
    spins_in_place: bool,
}

/// What [`AsyncSocket::spin_by_default`] came to.
enum Spun {
    /// Try the receive again.
    Again,
    /// The task woke itself for its next look: return `Pending`.
    Yielded,
    /// No more spinning for this receive (true: it looked, so its input was read just now).
    Over(bool),
    /// The socket failed (shut down, interrupted).
    Failed(Error),
}

/// Tells threads apart (the address of a thread-local), cheaper than a `ThreadId`.
fn thread_mark() -> usize {
    thread_local!(static MARK: u8 = const { 0 });
    MARK.with(|m| m as *const u8 as usize)
}

impl AsyncSocket {
    /// A new socket of `kind` in `ctx`.
    pub fn new(ctx: &Context, kind: SocketType) -> Result<AsyncSocket> {
        Ok(AsyncSocket::from(ctx.socket(kind)?))
    }

    /// The blocking socket inside, for options and calls this type does not forward. Its
    /// blocking `send`/`recv` would block the executor's thread: use this type's futures.
    pub fn get_mut(&mut self) -> &mut Socket {
        &mut self.sock
    }

    /// The blocking socket inside.
    pub fn get_ref(&self) -> &Socket {
        &self.sock
    }

    /// The blocking socket back (a message the sink still holds is sent first if that needs
    /// no wait, and dropped otherwise: flush the sink before to be sure).
    pub fn into_inner(mut self) -> Socket {
        self.flush_out_now();
        self.sock.clear_wakers();
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so `sock` is moved out exactly once;
        // the other field, `out`, is None after `flush_out_now` and owns nothing to leak.
        unsafe { std::ptr::read(&this.sock) }
    }

    /// The socket's type.
    pub fn socket_type(&self) -> SocketType {
        self.sock.socket_type()
    }

    /// Accepts connections at `endpoint` ([`Socket::bind`]).
    pub fn bind(&mut self, endpoint: &str) -> Result<()> {
        self.sock.bind(endpoint)
    }

    /// Connects to `endpoint` ([`Socket::connect`]).
    pub fn connect(&mut self, endpoint: &str) -> Result<()> {
        self.sock.connect(endpoint)
    }

    /// Stops accepting at `endpoint` ([`Socket::unbind`]).
    pub fn unbind(&mut self, endpoint: &str) -> Result<()> {
        self.sock.unbind(endpoint)
    }

    /// Drops the connection to `endpoint` ([`Socket::disconnect`]).
    pub fn disconnect(&mut self, endpoint: &str) -> Result<()> {
        self.sock.disconnect(endpoint)
    }

    /// The endpoint of the last bind or connect, wildcards resolved.
    pub fn last_endpoint(&mut self) -> Result<String> {
        self.sock.last_endpoint()
    }

    /// SUB, XSUB: subscribes to a prefix (`""` for everything).
    pub fn subscribe(&mut self, prefix: impl AsRef<[u8]>) -> Result<()> {
        self.sock.subscribe(prefix)
    }

    /// SUB, XSUB: removes one subscription to a prefix.
    pub fn unsubscribe(&mut self, prefix: impl AsRef<[u8]>) -> Result<()> {
        self.sock.unsubscribe(prefix)
    }

    /// Sets an integer option ([`crate::opt`]).
    pub fn set_int(&mut self, option: i32, value: i32) -> Result<()> {
        self.sock.set_int(option, value)?;
        if option == opt::OXMQ_RECV_SPIN {
            // A new window: the next receive may spin at once.
            self.gate = SpinGate::default();
        }
        Ok(())
    }

    /// Reads an integer option.
    pub fn get_int(&mut self, option: i32) -> Result<i32> {
        self.sock.get_int(option)
    }

    /// Sets a bytes option (ROUTING_ID, CURVE keys, ...).
    pub fn set_bytes(&mut self, option: i32, value: &[u8]) -> Result<()> {
        self.sock.set_bytes(option, value)
    }

    /// DISH: joins a group.
    pub fn join(&mut self, group: impl AsRef<[u8]>) -> Result<()> {
        self.sock.join(group)
    }

    /// DISH: leaves a group.
    pub fn leave(&mut self, group: impl AsRef<[u8]>) -> Result<()> {
        self.sock.leave(group)
    }

    // ----- receiving -----

    /// Receives the next message, all its frames. Cancel safe: see the
    /// [module documentation](self#cancellation).
    ///
    /// Ends with [`Error::Term`] once the context is shut down; a REQ that has not sent its
    /// request gets [`Error::Fsm`], as with the blocking call.
    pub fn recv(&mut self) -> RecvMessage<'_> {
        RecvMessage { sock: self }
    }

    /// Receives the next message into `msg`, in place of its frames, as the blocking
    /// [`Socket::recv_msg`] reuses its [`Msg`]: a one-frame `msg` takes the message's first
    /// frame in place, so a loop that receives into one `Message` builds, moves and drops none
    /// per message. Cancel safe: a message is taken from the socket only in the poll that
    /// completes, and `msg` keeps its frames until then.
    ///
    /// ```
    /// # use oxmq::asynch::{AsyncSocket, Message};
    /// # use oxmq::{Context, SocketType};
    /// # futures::executor::block_on(async {
    /// let ctx = Context::new();
    /// let mut pull = AsyncSocket::new(&ctx, SocketType::Pull)?;
    /// pull.bind("inproc://recv-into-example")?;
    /// let mut push = AsyncSocket::new(&ctx, SocketType::Push)?;
    /// push.connect("inproc://recv-into-example")?;
    /// for word in ["one", "two"] {
    ///     push.send(word).await?;
    /// }
    /// let mut m = Message::new();
    /// pull.recv_into(&mut m).await?;
    /// assert_eq!(m[0], "one");
    /// pull.recv_into(&mut m).await?; // the same frame, overwritten
    /// assert_eq!(m[0], "two");
    /// # Ok::<(), oxmq::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn recv_into<'a>(&'a mut self, msg: &'a mut Message) -> RecvInto<'a> {
        RecvInto { sock: self, msg }
    }

    /// The poll behind [`AsyncSocket::recv_into`]: `Ready` once a message replaced `msg`'s
    /// frames, otherwise `Pending` (with `msg` untouched) and the task registered for the
    /// socket's next wake-up.
    #[inline]
    pub fn poll_recv_into(&mut self, cx: &mut TaskContext<'_>, msg: &mut Message) -> Poll<Result<()>> {
        let mut tried = false;
        if self.pending_since.is_none() {
            if let Some(first) = msg.single_mut() {
                // Into the frame in place; untouched unless a frame came.
                match self.sock.recv_msg(first, opt::DONTWAIT) {
                    Ok(()) if !first.more() => return Poll::Ready(Ok(())),
                    Ok(()) => return Poll::Ready(self.recv_rest(msg)),
                    Err(Error::Again) => tried = true,
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
        }
        let r = if tried { self.poll_recv_wait(cx, true) } else { self.poll_recv(cx) };
        r.map(|r| r.map(|m| *msg = m))
    }

    /// The frames after the first of a message whose first frame `msg` holds alone: queued
    /// with it (messages are published whole), so this does not wait.
    fn recv_rest(&mut self, msg: &mut Message) -> Result<()> {
        while self.sock.rcvmore() {
            msg.push(self.sock.recv(0)?);
        }
        Ok(())
    }

    /// DISH: receives the next message of a joined group, with its group. Cancel safe.
    pub async fn recv_group(&mut self) -> Result<(Bytes, Msg)> {
        poll_fn(|cx| {
            self.poll_recv(cx).map(|r| {
                let m = r?.pop_front().unwrap_or_default();
                Ok((self.sock.last_group().unwrap_or_default(), m))
            })
        })
        .await
    }

    /// The poll behind [`AsyncSocket::recv`], for hand-written futures and `Stream`s: a
    /// message when one is queued, otherwise `Pending` with the task registered for the
    /// socket's next wake-up.
    #[inline]
    pub fn poll_recv(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<Message>> {
        // A message already queued, with no spin's bookkeeping to settle (the common case of a
        // busy socket): the non-blocking receive and nothing more, inline in the caller's
        // future. The rest, out of line, starts with that attempt unless it was made here.
        let tried = self.pending_since.is_none();
        if tried {
            match self.try_recv() {
                Err(Error::Again) => {}
                r => return Poll::Ready(r),
            }
        }
        self.poll_recv_wait(cx, tried)
    }

    /// [`AsyncSocket::poll_recv`] past its first attempt: the spin, the direct read, the
    /// waker. `tried`: the caller's attempt found nothing just now.
    #[inline(never)]
    fn poll_recv_wait(&mut self, cx: &mut TaskContext<'_>, mut tried: bool) -> Poll<Result<Message>> {
        let mut spun = false;
        let mut read = false;
        loop {
            match if std::mem::take(&mut tried) { Err(Error::Again) } else { self.try_recv() } {
                Err(Error::Again) => {}
                r => {
                    if let Some(t) = self.pending_since.take() {
                        self.yield_until = None;
                        // A message within the window, spun for or not, opens the gate.
                        let window = if self.spin.is_zero() { self.sock.spin_window() } else { self.spin };
                        if t.elapsed() <= window {
                            self.gate = SpinGate::default();
                        }
                    } else if spun {
                        self.gate.spin_succeeded();
                    }
                    return Poll::Ready(r);
                }
            }
            if self.spin.is_zero() {
                match self.spin_by_default(cx) {
                    Spun::Again => continue,
                    Spun::Yielded => return Poll::Pending,
                    Spun::Failed(e) => return Poll::Ready(Err(e)),
                    Spun::Over(looked) => spun |= looked,
                }
            } else if !spun && self.gate.open() {
                // The opt-in spin: wait on this thread, reading the connections directly, for
                // at most `spin` (see `set_recv_spin`), then go pending as usual.
                spun = true;
                match self.sock.wait_recv(Some(self.spin)) {
                    Ok(()) => continue,
                    Err(Error::Again) => self.gate.spin_ran_out(),
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
            if !read && !spun {
                // Input the connections hold already is read on this thread, as a blocking
                // receive's direct path does: no wake-up of the I/O thread nor of this task,
                // and the messages never cross cores inside this process. (A spin began with
                // that read.)
                read = true;
                if self.sock.read_now() {
                    continue;
                }
            }
            if !self.sock.register_waker(WakerSlot::Recv, cx.waker()) {
                if self.pending_since.is_none() {
                    self.pending_since = Some(Instant::now());
                    if !spun {
                        self.gate.skipped();
                    }
                }
                return Poll::Pending;
            }
        }
    }

    /// The spin of a receive that found nothing queued, without [`AsyncSocket::set_recv_spin`]:
    /// while the socket's spin window lasts (`OXMQ_RECV_SPIN`, as for a blocking receive), the
    /// receive keeps looking instead of waiting for the engine's wake-up, when the gate is open
    /// (as for `set_recv_spin`'s spin, and for the same reason). Between looks it yields: to
    /// the executor's other tasks (the task wakes itself and returns `Pending`) and to the
    /// OS's other threads (`yield_now`), so it blocks nothing. An executor that runs a task that woke itself on
    /// another thread (tokio's multi-thread scheduler, which wakes an idle worker to take it)
    /// would pay a thread's wake-up per look, so once a look comes on another thread than the
    /// spin's first, this socket spins in place for the rest of the window from then on, as a
    /// blocking receive does.
    fn spin_by_default(&mut self, cx: &mut TaskContext<'_>) -> Spun {
        let now = Instant::now();
        if self.pending_since.is_none() {
            self.pending_since = Some(now);
            let window = self.sock.spin_window();
            self.yield_until = if window.is_zero() {
                None
            } else if self.gate.open() {
                Some(now + window)
            } else {
                self.gate.skipped();
                None
            };
            self.spin_thread = thread_mark();
        }
        let Some(until) = self.yield_until else { return Spun::Over(false) };
        if now < until && (self.spins_in_place || thread_mark() != self.spin_thread) {
            self.spins_in_place = true;
            // A wait that ends with something other than a message (a new peer) leaves the
            // rest of the window to the next.
            return match self.sock.wait_recv(Some(until - now)) {
                Ok(()) => Spun::Again,
                Err(Error::Again) => {
                    self.yield_until = None;
                    self.gate.spin_ran_out();
                    Spun::Over(true)
                }
                Err(e) => Spun::Failed(e),
            };
        }
        // Each look takes the connections' input from the I/O thread and lends it to the
        // next; the last hands it back, for the wake-up to come from there.
        let last = now >= until;
        if last {
            self.yield_until = None;
        }
        if self.sock.look(!last) {
            return Spun::Again;
        }
        if last {
            self.gate.spin_ran_out();
            return Spun::Over(true);
        }
        std::thread::yield_now();
        cx.waker().wake_by_ref();
        Spun::Yielded
    }

    /// Lets a receive that finds nothing queued wait on the calling thread for up to `spin`
    /// before it goes pending, reading the socket's connections itself as a blocking receive
    /// does (its direct path and spin): a message that arrives meanwhile costs no wake-up of
    /// the I/O thread nor of the task. Unlike the default spin (see
    /// [the module documentation](self#the-receive-spin)), which yields between looks, this
    /// blocks the executor's thread for up to `spin` per receive, so it is off (zero) by
    /// default and meant for a task that owns its thread and answers requests as fast as it
    /// can (a request/reply loop on a current-thread runtime of its own); while it is set, it
    /// replaces the default spin. It applies only while the socket's exchanges are that
    /// quick: a spin that runs out turns it off for the next receive, then for 2, 4, ... up to
    /// 64 receives while spins keep running out, and a message that comes within `spin` turns
    /// it back on. So a socket
    /// that receives now and then spends at most one window per 64 receives, and an exchange
    /// that slowed for a moment (both ends waiting the long way at once) finds its pace again.
    pub fn set_recv_spin(&mut self, spin: Duration) {
        self.spin = spin;
        self.gate = SpinGate::default();
    }

    /// Receives a whole message if one is queued now; `Err(Again)` otherwise, with nothing
    /// taken from the socket.
    #[inline]
    pub fn try_recv(&mut self) -> Result<Message> {
        // Received in place (the pattern's `recv_into`), not moved through a return value.
        let mut m = Message::from(Msg::new());
        let first = m.first_of_one();
        self.sock.recv_msg(first, opt::DONTWAIT)?;
        if !first.more() {
            return Ok(m);
        }
        self.recv_rest(&mut m)?;
        Ok(m)
    }

    // ----- sending -----

    /// Sends a message, all its frames. Cancel safe: the message is sent whole in the poll
    /// that completes the future, or, if the future is dropped before, not at all.
    ///
    /// Waits while the peers are at their high-water mark (for the types that block there:
    /// PUSH, DEALER, REQ, PAIR, ROUTER with ROUTER_MANDATORY, ...). An empty message (no frame)
    /// is [`Error::Invalid`].
    pub fn send(&mut self, msg: impl Into<Message>) -> SendMessage<'_> {
        SendMessage { sock: self, msg: msg.into() }
    }

    /// RADIO: sends a single-part message to the members of `group`. Never waits (a DISH at
    /// its high-water mark misses it, counted), as the blocking call.
    pub async fn send_group(&mut self, group: impl AsRef<[u8]>, data: impl Into<Msg>) -> Result<()> {
        self.sock.send_group(group, data, opt::DONTWAIT)
    }

    /// The poll behind [`AsyncSocket::send`]: sends `msg` whole (its frames are taken, it is
    /// left empty) or, `Pending`, leaves it untouched and registers the task for the socket's
    /// next wake-up.
    #[inline]
    pub fn poll_send(&mut self, cx: &mut TaskContext<'_>, msg: &mut Message) -> Poll<Result<()>> {
        // A single frame that goes at once (the common case): that send and nothing more,
        // inline in the caller's future. Anything else, out of line, starts over.
        if let Some(only) = msg.single_mut() {
            match self.sock.try_send_msg(only, 0) {
                Ok(()) => {
                    msg.clear_sent();
                    return Poll::Ready(Ok(()));
                }
                Err(Error::Again) => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        self.poll_send_wait(cx, msg)
    }

    /// [`AsyncSocket::poll_send`] past its first attempt: a multi-part message, or a wait.
    #[inline(never)]
    fn poll_send_wait(&mut self, cx: &mut TaskContext<'_>, msg: &mut Message) -> Poll<Result<()>> {
        loop {
            match self.try_send(msg) {
                Err(Error::Again) => {}
                r => return Poll::Ready(r),
            }
            if !self.sock.register_waker(WakerSlot::Send, cx.waker()) {
                return Poll::Pending;
            }
        }
    }

    /// Sends `msg` whole if that needs no wait (its frames are taken); `Err(Again)` with `msg`
    /// untouched otherwise. Other errors leave untouched the frames not yet sent.
    pub fn try_send(&mut self, msg: &mut Message) -> Result<()> {
        if let Some(only) = msg.single_mut() {
            // The common case, without the loop over the rest.
            self.sock.try_send_msg(only, 0)?;
            msg.clear_sent();
            return Ok(());
        }
        let n = msg.len();
        let Some((first, rest)) = msg.split_first_mut() else {
            return Err(Error::Invalid);
        };
        let more = if n > 1 { opt::SNDMORE } else { 0 };
        // The peers' progress read afresh, not the lazy view a DONTWAIT send takes: this
        // caller waits for a wake-up after a refusal and must not see a full pipe with room.
        self.sock.try_send_msg(first, more)?;
        let last = rest.len().saturating_sub(1);
        for (i, f) in rest.iter_mut().enumerate() {
            // Frames after an accepted first one always have room (the high-water mark counts
            // whole messages), so these never wait.
            self.sock.send_msg(f, if i < last { opt::SNDMORE } else { 0 })?;
        }
        *msg = Message::new();
        Ok(())
    }

    /// The sink's buffered message, sent now if that needs no wait.
    fn flush_out_now(&mut self) {
        if let Some(mut m) = self.out.take() {
            if self.try_send(&mut m).is_err() && !m.is_empty() {
                // Lost: documented (a sink must be flushed before it is dropped).
                drop(m);
            }
        }
    }
}

impl From<Socket> for AsyncSocket {
    /// Wraps a blocking socket (any type, any options set so far).
    fn from(sock: Socket) -> AsyncSocket {
        AsyncSocket {
            sock,
            out: None,
            spin: Duration::ZERO,
            gate: SpinGate::default(),
            pending_since: None,
            yield_until: None,
            spin_thread: 0,
            spins_in_place: false,
        }
    }
}

impl Drop for AsyncSocket {
    fn drop(&mut self) {
        self.flush_out_now();
    }
}

impl std::fmt::Debug for AsyncSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncSocket").field("type", &self.sock.socket_type()).finish_non_exhaustive()
    }
}

/// The future [`AsyncSocket::recv`] returns.
///
/// This and [`SendMessage`] are named types rather than an `async fn`'s, so that completing and
/// dropping one costs no more than the call it wraps: an `async fn`'s state machine around a
/// 1 B send cost about 30 instructions.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct RecvMessage<'a> {
    sock: &'a mut AsyncSocket,
}

impl std::future::Future for RecvMessage<'_> {
    type Output = Result<Message>;

    #[inline]
    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<Message>> {
        self.get_mut().sock.poll_recv(cx)
    }
}

/// The future [`AsyncSocket::recv_into`] returns.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct RecvInto<'a> {
    sock: &'a mut AsyncSocket,
    msg: &'a mut Message,
}

impl std::future::Future for RecvInto<'_> {
    type Output = Result<()>;

    #[inline]
    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        this.sock.poll_recv_into(cx, this.msg)
    }
}

/// The future [`AsyncSocket::send`] returns: the message it sends, owned until then.
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub struct SendMessage<'a> {
    sock: &'a mut AsyncSocket,
    msg: Message,
}

impl std::future::Future for SendMessage<'_> {
    type Output = Result<()>;

    #[inline]
    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        this.sock.poll_send(cx, &mut this.msg)
    }
}

#[cfg(test)]
mod tests;
