//! What application threads run of a session (the direct paths).
//!
//! **Which thread, and what it may touch.** Everything here runs on an application thread
//! that holds the session's mutex, which it only ever *tries* (`SessionOwner::try_with`): the
//! I/O thread owns the session and may hold it at any time, and then the application thread
//! falls back to a wake-up of the I/O thread instead. Holding the mutex, the application
//! thread may read and write the connection's stream and buffers and the pipe's session end,
//! as the I/O thread would. It may not touch the reactor: no timer, no registration, no
//! reconnect, no monitor event that needs the reactor's state. Whatever needs that (the end of
//! the stream, an error, a PING's deadline, a protocol reply to write, a full pipe) is left in
//! the session's state and handed to the I/O thread with a command.
//!
//! * **Send** (a pipe's read wake-up): the socket flushed messages while the session was idle.
//!   Rather than waking the I/O thread (two context switches before the bytes leave), the
//!   flushing thread writes them itself, when `io/pace.rs` allows.
//! * **Receive** (`socket/direct.rs` waits on the stream): a receiver with nothing queued reads
//!   and decodes the connection's input itself: one wake-up per message (its own) instead of
//!   two (the I/O thread's, then its).
//! * **Resume** (a pipe's write wake-up): the socket read its inbound queue down from the HWM
//!   where the session stopped; the reading thread delivers the held message and reads on.
//! * **Catch up** (`socket/catchup.rs`): a publisher's thread that waited for input reads its
//!   connections' pending subscriptions before it sends, waiting for the session if the I/O
//!   thread holds it (the one path here that waits for the mutex, briefly).

use super::conn::{Conn, Proto};
use super::read::READ_BUDGET;
use super::{Link, Session, State};
use crate::io::{pace, IoCmd, IoThread};
use crate::pipe::{Armed, DirectRead, PipeId, Wake};
use std::io;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

/// How long a publisher's catch-up waits for the I/O thread's turn on a connection in its
/// handshake: a bound for a stopping I/O thread, never reached by a running one.
const TURN_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Receives the wake-ups of a session's pipe, for the direct paths (see the module comment).
/// If the I/O thread holds the session, or anything the application thread cannot finish
/// happens, the wake-up goes to the I/O thread.
pub(crate) struct SessionOwner {
    pub(super) io: Arc<IoThread>,
    me: OnceLock<Weak<Mutex<Session>>>,
    /// The connection's input may be lent (`lease.rs`): a wait that finds the I/O thread
    /// busy with the session waits for it rather than leave the input with no reader.
    pub(super) lent: std::sync::atomic::AtomicBool,
}

impl SessionOwner {
    pub(crate) fn new(io: Arc<IoThread>) -> Arc<SessionOwner> {
        Arc::new(SessionOwner { io, me: OnceLock::new(), lent: std::sync::atomic::AtomicBool::new(false) })
    }

    /// Links the owner to the session it serves, once the session is shared.
    pub(crate) fn bind(&self, me: &Arc<Mutex<Session>>) {
        let _ = self.me.set(Arc::downgrade(me));
    }

    /// Runs `f` on the session, waiting for it if the I/O thread has it, if it is still the
    /// one `id` names.
    fn with_waiting<R>(&self, id: PipeId, f: impl FnOnce(&mut Session) -> Option<R>) -> Option<R> {
        let s = self.me.get()?.upgrade()?;
        let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
        if s.link.serial != id.serial {
            return None;
        }
        f(&mut s)
    }

    /// Runs `f` on the session if it is free (the I/O thread is not using it) and still the
    /// one `id` names.
    fn try_with<R>(&self, id: PipeId, f: impl FnOnce(&mut Session) -> Option<R>) -> Option<R> {
        let s = self.me.get()?.upgrade()?;
        let mut s = s.try_lock().ok()?;
        if s.link.serial != id.serial {
            return None;
        }
        f(&mut s)
    }
}

impl crate::pipe::Owner for SessionOwner {
    fn direct_arm(&self, id: PipeId) -> Option<Armed> {
        if self.lent.load(std::sync::atomic::Ordering::Relaxed) {
            self.with_waiting(id, |s| s.direct_arm())
        } else {
            self.try_with(id, |s| s.direct_arm())
        }
    }

    fn direct_disarm(&self, id: PipeId, lend: Option<Instant>) {
        // Waits for the session if the I/O thread has it: input must be handed back.
        if let Some(s) = self.me.get().and_then(Weak::upgrade) {
            let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
            if s.link.serial == id.serial {
                s.direct_disarm(lend);
            }
        }
    }

    fn direct_read(&self, id: PipeId) -> DirectRead {
        self.try_with(id, |s| Some(s.direct_read())).unwrap_or(DirectRead::Refused)
    }

    fn input_fd(&self, id: PipeId) -> Option<std::os::fd::RawFd> {
        self.with_waiting(id, |s| s.catch_up_fd().or_else(|| s.handshake_fd()))
    }

    fn catch_up(&self, id: PipeId, read: bool) {
        // Read here in the data phase; in the handshake (whose end attaches the pipe and may
        // come with the first subscriptions), the I/O thread reads while this thread waits.
        let handshaking = self.with_waiting(id, |s| {
            if !read {
                None
            } else if s.catch_up_fd().is_some() {
                s.direct_read();
                None
            } else {
                s.handshake_fd().map(drop)
            }
        });
        if handshaking.is_some() {
            let turned = Arc::new(crate::io::Turned::default());
            self.io.send(IoCmd::Turn(id, turned.clone()));
            turned.wait(TURN_LIMIT);
        }
    }

    fn write_through(&self, id: PipeId) {
        self.with_waiting(id, |s| s.write_through().then_some(()));
    }

    fn wake(&self, id: PipeId, what: Wake) {
        if what == Wake::Read || what == Wake::Write {
            if let Some(s) = self.me.get().and_then(Weak::upgrade) {
                if let Ok(mut s) = s.try_lock() {
                    let done =
                        s.link.serial == id.serial && if what == Wake::Read { s.direct_write() } else { s.direct_resume() };
                    if done {
                        return;
                    }
                }
            }
        }
        if what == Wake::Read {
            // A write handed over: this thread's next direct writes stay behind it (`pace`).
            self.io.handed_write(IoCmd::Pipe(id, what));
        } else {
            self.io.send(IoCmd::Pipe(id, what));
        }
    }
}

impl Session {
    /// The send path: writes what the socket flushed, on the calling thread. False when the
    /// I/O thread must do it: not connected yet, closing, not this thread's turn (`pace`), or
    /// the write failed (the I/O thread meets the same error and runs the reconnect logic).
    fn direct_write(&mut self) -> bool {
        let State::Connected(c) = &mut self.state else { return false };
        let link = &mut self.link;
        if link.closing || !c.is_established() || !c.writable {
            return false;
        }
        // A stream is the I/O thread's to batch; a reply, an answer or a sporadic message goes
        // direct (see `pace`). A publisher reads only subscriptions: what it writes next
        // answers none of them.
        let now = Instant::now();
        if pace::write_pending() {
            // Behind the thread's own write that the I/O thread has yet to make (see `pace`).
            pace::handed_over(now);
            return false;
        }
        let reply = (c.reads != link.reads_at_write && !link.cfg.policy.publishes) || pace::answering();
        let since_write = now.saturating_duration_since(link.last_write);
        if !pace::may_write_direct(reply, since_write, pace::since_direct(now), pace::rest_of_round()) {
            pace::handed_over(now);
            return false;
        }
        let ok = c.write_side(link, true).is_ok();
        // Stamped when the write is over: a write can take longer than QUIET (loopback runs
        // the receiver's protocol processing inside it), and stamped at its start, the
        // thread's next message would find it quiet again and write directly too, one system
        // call per message to each connection of a round.
        pace::wrote_direct(Instant::now());
        ok
    }

    /// [`crate::pipe::Owner::write_through`]: writes what the socket flushed on the calling
    /// thread, whatever `pace` says. False when the I/O thread must do it.
    fn write_through(&mut self) -> bool {
        let State::Connected(c) = &mut self.state else { return false };
        let link = &mut self.link;
        if link.closing || !c.is_established() || !c.writable {
            return false;
        }
        c.write_side(link, true).is_ok()
    }

    /// A waiting receiver takes this connection's input over: returns the descriptor to poll,
    /// and the I/O thread's registration stops reporting input until `direct_disarm`. None
    /// while only the I/O thread may read.
    fn direct_arm(&mut self) -> Option<Armed> {
        let State::Connected(c) = &mut self.state else { return None };
        if !c.direct_readable(&self.link) {
            return None;
        }
        // Lent (`lease.rs`): taken over already, without a system call.
        if c.armed {
            self.link.counters.lent_wait();
        } else {
            c.armed = true;
            if !c.update_interest(&self.link.owner.io, self.link.token) {
                c.armed = false;
                return None;
            }
        }
        c.lease_taken(&self.link);
        Some(Armed { fd: c.fd(), reads_cheaply: c.stream.reads_cheaply() })
    }

    /// The descriptor a publisher's sending thread polls before it reads this connection's
    /// input itself (`socket/catchup.rs`), while it may.
    fn catch_up_fd(&self) -> Option<std::os::fd::RawFd> {
        let State::Connected(c) = &self.state else { return None };
        c.direct_readable(&self.link).then(|| c.fd())
    }

    /// The descriptor of a connection still in its handshake, for a publisher's catch-up:
    /// only the I/O thread may drive it.
    fn handshake_fd(&self) -> Option<std::os::fd::RawFd> {
        let State::Connected(c) = &self.state else { return None };
        (!self.link.closing && !c.is_established() && !c.failed).then(|| c.fd())
    }

    /// The receiver stopped waiting: input is the I/O thread's again (any that arrived
    /// meanwhile is reported to it at once), or with `lend`, lent on (`lease.rs`).
    fn direct_disarm(&mut self, lend: Option<Instant>) {
        if let State::Connected(c) = &mut self.state {
            c.lease_release(&self.link, lend);
        }
    }

    /// The I/O thread's side of a lending (`lease.rs`): keeps the lease's timer.
    pub(crate) fn lease_asked(&mut self, ctx: &mut crate::io::Ctx<'_>) -> bool {
        if let State::Connected(c) = &mut self.state {
            c.lease_asked(&self.link, ctx);
        }
        true
    }

    /// The receive path: reads and decodes this connection's input.
    fn direct_read(&mut self) -> DirectRead {
        let State::Connected(c) = &mut self.state else { return DirectRead::Refused };
        c.direct_read(&mut self.link)
    }

    /// The resume path. False when the I/O thread must do it.
    fn direct_resume(&mut self) -> bool {
        let State::Connected(c) = &mut self.state else { return false };
        c.direct_resume(&mut self.link)
    }
}

impl Conn {
    /// An application thread may read this connection now.
    pub(super) fn direct_readable(&self, link: &Link) -> bool {
        !link.closing
            && !link.cfg.policy.raw
            && self.is_established()
            && self.held.is_empty()
            && !self.failed
            && !self.needs_io_thread()
            && link.pipe.is_some()
    }

    /// The protocol has something only the I/O thread can do: a reply to write (PONG), or a
    /// deadline to set (a PING's TTL).
    fn needs_io_thread(&self) -> bool {
        match &self.proto {
            Proto::Zmtp(z) => z.data().is_some_and(|d| d.has_control() || d.needs_clock()),
            Proto::Raw => false,
        }
    }

    /// Hands the input back to the I/O thread (a wait's end, or a lease's).
    pub(super) fn disarm(&mut self, link: &Link) {
        if self.armed {
            self.armed = false;
            self.lease_end(link);
            self.update_interest(&link.owner.io, link.token);
        }
    }

    /// Whatever this path cannot finish (the protocol's work, a full pipe, the end of the
    /// stream, an error) is left in the connection's state and handed to the I/O thread with a
    /// command: then this read is `Refused` unless it read something first.
    fn direct_read(&mut self, link: &mut Link) -> DirectRead {
        if !self.direct_readable(link) {
            return DirectRead::Refused;
        }
        let mut read = false;
        let mut handoff = false;
        let mut budget = READ_BUDGET;
        loop {
            self.rx.make_room();
            let room = self.rx.buf.capacity() - self.rx.buf.len();
            let drained = match self.stream.read_into(&mut self.rx.buf) {
                Ok(0) => {
                    // The end of the stream: the I/O thread closes the connection (what was
                    // decoded before it is in the pipe already).
                    self.io_errno = libc::EPIPE;
                    self.failed = true;
                    handoff = true;
                    break;
                }
                Ok(n) => {
                    read = true;
                    budget = budget.saturating_sub(n);
                    link.counters.wire_in(n);
                    link.counters.direct_read();
                    self.note_read();
                    // A read that left room took all the socket had: decode it and stop,
                    // without the read that would only say EAGAIN (the waiter's poll is
                    // level-triggered, and input given back to the I/O thread is reported to
                    // it at once).
                    n < room && self.stream.exact_reads()
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.note_keepalives();
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.io_errno = e.raw_os_error().unwrap_or(libc::EIO);
                    self.failed = true;
                    handoff = true;
                    break;
                }
            };
            if self.decode(link, None).is_err() {
                self.failed = true;
                handoff = true;
                break;
            }
            if !self.direct_readable(link) || budget == 0 {
                handoff = true; // the protocol's work, a full pipe, or a long stream
                break;
            }
            if drained {
                break;
            }
        }
        self.rx.release();
        if let Some(p) = &mut link.pipe {
            p.flush();
            p.publish_written();
        }
        if handoff {
            self.disarm(link);
            self.read_pending = true;
            // A full pipe alone needs no command: the pipe asked its reader for a write
            // activation (`check_write`), which resumes the input (`direct_resume`, or the
            // I/O thread).
            let full_only = !self.held.is_empty() && !self.failed && !self.needs_io_thread() && budget > 0;
            if !full_only {
                link.owner.io.send(IoCmd::Pipe(link.id(), Wake::Write));
            }
        }
        match (read, handoff) {
            (true, _) => DirectRead::Read,
            (false, false) => DirectRead::Empty,
            (false, true) => DirectRead::Refused,
        }
    }

    /// The application thread's side of a write activation: its socket read the inbound pipe
    /// down from the HWM where this connection stopped. Rather than wake the I/O thread to
    /// resume (an eventfd write and two context switches per low-water mark of a stream that
    /// keeps the pipe full), the reading thread delivers the held message, decodes what is
    /// buffered and reads on. False when the I/O thread must do it.
    fn direct_resume(&mut self, link: &mut Link) -> bool {
        if link.closing || link.cfg.policy.raw || !self.is_established() || self.failed || self.needs_io_thread() {
            return false;
        }
        let Some(p) = &mut link.pipe else { return false };
        if !self.deliver_held(p) {
            return true; // still full: the reader's next activation comes here again
        }
        let decoded = self.decode(link, None);
        if let Some(p) = &mut link.pipe {
            p.flush();
            p.publish_written();
        }
        if decoded.is_err() {
            self.failed = true;
            return false;
        }
        if self.needs_io_thread() {
            return false;
        }
        if !self.held.is_empty() {
            return true; // full again: as above
        }
        link.counters.direct_resume();
        self.direct_read(link);
        true
    }
}
