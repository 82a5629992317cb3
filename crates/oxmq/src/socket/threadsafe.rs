//! `SyncSocket`: a draft-type socket that several threads may use at once, as libzmq's
//! thread-safe sockets (CLIENT, SERVER, RADIO, DISH, SCATTER, GATHER, PEER, CHANNEL).
//!
//! The socket sits behind a mutex that is held only for the non-blocking attempt of each call,
//! never while a call waits. A call that would block waits in one of two ways: the first such
//! thread becomes the *poller* and waits on the socket's mailbox descriptor without the lock
//! (a receiver also reads its connections directly and spins first, as a plain socket's
//! receive does: `direct.rs`);
//! every other one waits on a condition variable. Whoever changes what the socket can do wakes
//! the others: the poller when its descriptor fires, and any thread whose call consumed mailbox
//! commands or moved a message (it bumps a sequence number, notifies the condition variable,
//! and, if the poller may be asleep on a descriptor that call just drained, posts a no-op
//! command to wake it). A thread that only retried and failed wakes nobody, so waiters do not
//! chase each other.
//!
//! Contract: every method takes `&self`; the handle is `Send + Sync` (share it in an `Arc`).
//! Timeouts are the socket's SNDTIMEO/RCVTIMEO; `opt::DONTWAIT` never waits.

use super::env::Env;
use super::{Socket, SocketType};
use crate::error::{Error, Result};
use crate::mailbox::{Command, Mailbox};
use crate::msg::Msg;
use crate::opt;
use bytes::Bytes;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

struct State {
    sock: Socket,
    /// A thread is waiting on the mailbox descriptor (without the lock).
    poller: bool,
    /// Bumped whenever the socket may be able to do more than before.
    seq: u64,
    /// Threads waiting on the condition variable: a notification is a system call, made only
    /// when somebody waits for it.
    waiters: u32,
}

impl State {
    /// Tells the waiting threads that the socket may be able to do more than before.
    fn bump(&mut self, changed: &Condvar) {
        self.seq = self.seq.wrapping_add(1);
        if self.waiters > 0 {
            changed.notify_all();
        }
    }
}

/// A thread-safe socket of a draft type. See the module documentation.
pub struct SyncSocket {
    state: Mutex<State>,
    changed: Condvar,
    mailbox: Arc<Mailbox>,
    kind: SocketType,
}

impl SyncSocket {
    pub(crate) fn new(env: &Arc<Env>, kind: SocketType) -> Result<SyncSocket> {
        if !kind.is_thread_safe() {
            return Err(Error::Invalid);
        }
        let sock = Socket::new(env.clone(), kind)?;
        let mailbox = sock.shared.mailbox.clone();
        Ok(SyncSocket {
            state: Mutex::new(State { sock, poller: false, seq: 0, waiters: 0 }),
            changed: Condvar::new(),
            mailbox,
            kind,
        })
    }

    fn lock_state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `op` (non-blocking) under the lock; tells the other threads if it changed
    /// anything they may be waiting for.
    fn attempt<T>(&self, g: &mut State, op: &mut impl FnMut(&mut Socket) -> Result<T>) -> Result<T> {
        let taken = self.mailbox.taken();
        let r = op(&mut g.sock);
        if r.is_ok() || self.mailbox.taken() != taken {
            g.bump(&self.changed);
            if g.poller {
                // The poller may be asleep on a descriptor this call just drained.
                self.mailbox.send(Command::Stop);
            }
        }
        r
    }

    /// Runs `op` until it stops saying "would block", waiting as the module describes.
    fn blocking<T>(&self, flags: i32, send: bool, op: impl FnMut(&mut Socket) -> Result<T>) -> Result<T> {
        self.blocking_until(flags, send, None, op)
    }

    /// Runs `op`, a non-blocking call on the socket, until it stops saying `Again`, waiting
    /// between attempts as the other calls do (a receiver, `send == false`, on its connections
    /// directly), but no longer than `until`: then `Again`. For a binding that waits in slices
    /// to look for signals in between; its own time limit is its business (SNDTIMEO and
    /// RCVTIMEO are not read).
    pub fn wait_until<T>(&self, send: bool, until: Instant, op: impl FnMut(&mut Socket) -> Result<T>) -> Result<T> {
        self.blocking_until(0, send, Some(until), op)
    }

    /// [`SyncSocket::blocking`] bounded by `until` instead of the socket's timeout.
    fn blocking_until<T>(
        &self,
        flags: i32,
        send: bool,
        until: Option<Instant>,
        mut op: impl FnMut(&mut Socket) -> Result<T>,
    ) -> Result<T> {
        let mut g = self.lock_state();
        let timeout = match until {
            Some(_) => -1,
            None if send => g.sock.options.sndtimeo,
            None => g.sock.options.rcvtimeo,
        };
        let nowait = flags & opt::DONTWAIT != 0 || timeout == 0;
        // The clock is read only once the call has to wait.
        let mut deadline: Option<Option<Instant>> = until.map(Some);
        loop {
            match self.attempt(&mut g, &mut op) {
                Err(Error::Again) => {}
                r => return r,
            }
            if nowait {
                return Err(Error::Again);
            }
            let deadline =
                *deadline.get_or_insert_with(|| (timeout > 0).then(|| Instant::now() + Duration::from_millis(timeout as u64)));
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(Error::Again);
            }
            if !g.poller {
                g.poller = true;
                // A receiver waits as a plain socket's does (reading its connections itself,
                // spinning first after short waits); a sender on the mailbox.
                let mut direct = if send { None } else { g.sock.sync_wait(deadline) };
                drop(g);
                let woke = match direct.as_mut() {
                    Some(w) => w.run(deadline),
                    // An interrupted wait is `Error::Intr` (`From<io::Error>`).
                    None => self.mailbox.wait(deadline).map(drop).map_err(Error::from),
                };
                g = self.lock_state();
                g.poller = false;
                if let Some(w) = direct {
                    g.sock.sync_wait_done(w);
                }
                g.bump(&self.changed);
                woke?;
            } else {
                let seq = g.seq;
                g.waiters += 1;
                g = match deadline {
                    None => self.changed.wait_while(g, |s| s.seq == seq).unwrap_or_else(|p| p.into_inner()),
                    Some(d) => {
                        let left = d.saturating_duration_since(Instant::now());
                        self.changed.wait_timeout_while(g, left, |s| s.seq == seq).unwrap_or_else(|p| p.into_inner()).0
                    }
                };
                g.waiters -= 1;
            }
        }
    }

    /// The socket's type.
    pub fn socket_type(&self) -> SocketType {
        self.kind
    }

    /// Sends one single-part message (SERVER/PEER: to `msg.routing_id()`). On error `msg` is
    /// untouched.
    pub fn send_msg(&self, msg: &mut Msg, flags: i32) -> Result<()> {
        // A blocking send waits in `blocking`, between attempts that must see the peers'
        // progress afresh; the caller's own DONTWAIT send reads it as libzmq does.
        if flags & opt::DONTWAIT != 0 {
            self.blocking(flags, true, |s| s.send_msg(msg, flags))
        } else {
            self.blocking(flags, true, |s| s.try_send_msg(msg, flags))
        }
    }

    /// Sends anything that converts into a [`Msg`].
    pub fn send(&self, data: impl Into<Msg>, flags: i32) -> Result<()> {
        let mut m = data.into();
        self.send_msg(&mut m, flags)
    }

    /// Receives one message (SERVER/PEER: tagged with the sender's routing id).
    pub fn recv(&self, flags: i32) -> Result<Msg> {
        self.blocking(flags, false, |s| s.recv(flags | opt::DONTWAIT))
    }

    /// [`SyncSocket::recv`] into a reused `Msg` (its old content dropped; untouched on error),
    /// as [`Socket::recv_msg`].
    pub fn recv_msg(&self, msg: &mut Msg, flags: i32) -> Result<()> {
        self.blocking(flags, false, |s| s.recv_msg(msg, flags | opt::DONTWAIT))
    }

    /// RADIO: sends to a group (never blocks).
    pub fn send_group(&self, group: impl AsRef<[u8]>, data: impl Into<Msg>, flags: i32) -> Result<()> {
        let mut m = data.into();
        self.blocking(flags, true, |s| s.send_group_msg(group.as_ref(), &mut m, flags | opt::DONTWAIT))
    }

    /// DISH: receives the next message of a joined group, with its group.
    pub fn recv_group(&self, flags: i32) -> Result<(Bytes, Msg)> {
        self.blocking(flags, false, |s| s.recv_group(flags | opt::DONTWAIT))
    }

    /// RADIO: [`SyncSocket::send_group`] leaving `msg` untouched on error (for the C ABI).
    pub fn send_group_msg(&self, group: &[u8], msg: &mut Msg, flags: i32) -> Result<()> {
        self.blocking(flags, true, |s| s.send_group_msg(group, msg, flags | opt::DONTWAIT))
    }

    /// Locks the socket for non-blocking calls made through the guard (the C ABI's options,
    /// bind, connect, join...). Other threads' calls wait for the guard; dropping it wakes
    /// their waits if the calls made through it consumed socket commands. Do not block through
    /// the guard (no call without DONTWAIT that may wait): that would stall every thread.
    pub fn lock(&self) -> SyncGuard<'_> {
        let g = self.lock_state();
        SyncGuard { owner: self, g, taken: self.mailbox.taken() }
    }

    /// Runs a non-blocking call on the socket under the lock (bind, connect, options, join...).
    pub fn with<T>(&self, f: impl FnOnce(&mut Socket) -> Result<T>) -> Result<T> {
        let mut f = Some(f);
        let mut g = self.lock_state();
        self.attempt(&mut g, &mut |s| match f.take() {
            Some(f) => f(s),
            None => Err(Error::Fault),
        })
    }

    /// [`Socket::bind`].
    pub fn bind(&self, endpoint: &str) -> Result<()> {
        self.with(|s| s.bind(endpoint))
    }
    /// [`Socket::connect`].
    pub fn connect(&self, endpoint: &str) -> Result<()> {
        self.with(|s| s.connect(endpoint))
    }
    /// PEER: [`Socket::connect_peer`], the new peer's routing id.
    pub fn connect_peer(&self, endpoint: &str) -> Result<u32> {
        self.with(|s| s.connect_peer(endpoint))
    }
    /// DISH: [`Socket::join`].
    pub fn join(&self, group: impl AsRef<[u8]>) -> Result<()> {
        self.with(|s| s.join(group))
    }
    /// DISH: [`Socket::leave`].
    pub fn leave(&self, group: impl AsRef<[u8]>) -> Result<()> {
        self.with(|s| s.leave(group))
    }
    /// [`Socket::set_int`].
    pub fn set_int(&self, option: i32, v: i32) -> Result<()> {
        self.with(|s| s.set_int(option, v))
    }
    /// [`Socket::get_int`].
    pub fn get_int(&self, option: i32) -> Result<i32> {
        self.with(|s| s.get_int(option))
    }
    /// [`Socket::last_endpoint`].
    pub fn last_endpoint(&self) -> Result<String> {
        self.with(|s| s.last_endpoint())
    }
    /// `opt::POLLIN` / `opt::POLLOUT` as [`Socket::events`].
    pub fn events(&self) -> Result<i16> {
        self.with(|s| s.events())
    }
    /// Messages dropped by policy (see [`Socket::dropped_messages`]).
    pub fn dropped_messages(&self) -> u64 {
        self.lock_state().sock.dropped_messages()
    }

    /// The socket's readiness descriptor (`ZMQ_FD`, edge-triggered): for a caller that waits
    /// on it itself (a binding's poll or event loop), between [`SyncSocket::watch`] and
    /// [`SyncSocket::unwatch`]. libzmq gives thread-safe sockets none; oxmq's is the mailbox's.
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.mailbox.fd()
    }

    /// Says that the calling thread is about to wait on [`SyncSocket::fd`] itself: until
    /// [`SyncSocket::unwatch`], a call from another thread that consumes the socket's commands
    /// signals the descriptor again, as it does for a thread waiting in a blocking call, so
    /// the watcher never sleeps through a change another thread drained. False when another
    /// thread waits on the descriptor already (a blocking call's, or another watcher): then
    /// this one may see a change only when that one acts on it.
    pub fn watch(&self) -> bool {
        let mut g = self.lock_state();
        if g.poller {
            return false;
        }
        g.poller = true;
        true
    }

    /// Ends a wait begun with a successful [`SyncSocket::watch`]; a thread waiting in a
    /// blocking call meanwhile takes the descriptor over.
    pub fn unwatch(&self) {
        let mut g = self.lock_state();
        g.poller = false;
        g.bump(&self.changed);
    }
}

/// A [`SyncSocket`] locked for non-blocking calls (see [`SyncSocket::lock`]).
pub struct SyncGuard<'a> {
    owner: &'a SyncSocket,
    g: MutexGuard<'a, State>,
    /// [`Mailbox::taken`] when the lock was taken.
    taken: u64,
}

impl SyncGuard<'_> {
    /// True when this guard holds `s`'s lock.
    pub fn guards(&self, s: &SyncSocket) -> bool {
        std::ptr::eq(self.owner, s)
    }
}

impl std::ops::Deref for SyncGuard<'_> {
    type Target = Socket;
    fn deref(&self) -> &Socket {
        &self.g.sock
    }
}

impl std::ops::DerefMut for SyncGuard<'_> {
    fn deref_mut(&mut self) -> &mut Socket {
        &mut self.g.sock
    }
}

impl Drop for SyncGuard<'_> {
    fn drop(&mut self) {
        if self.owner.mailbox.taken() != self.taken {
            self.g.bump(&self.owner.changed);
            if self.g.poller {
                self.owner.mailbox.send(Command::Stop);
            }
        }
    }
}

impl From<SyncSocket> for Socket {
    /// Takes the socket back out (for single-threaded use).
    fn from(s: SyncSocket) -> Socket {
        s.state.into_inner().unwrap_or_else(|p| p.into_inner()).sock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Context;

    /// A command that lands while another thread holds the lock is consumed by that thread's
    /// call; a watcher of the descriptor must be signalled again, though nothing was pending
    /// when the lock was taken.
    #[test]
    fn a_command_taken_under_the_lock_resignals_the_watcher() {
        let ctx = Context::new();
        let s = ctx.sync_socket(SocketType::Server).unwrap();
        assert!(s.watch());
        let mut g = s.lock();
        assert!(!s.mailbox.has_pending());
        s.mailbox.send(Command::Stop); // arrives during the call
        g.events().unwrap(); // takes it, and drains the descriptor
        drop(g);
        assert!(s.mailbox.wait(Some(Instant::now())).unwrap(), "the watcher's descriptor stayed quiet");
        s.unwatch();
    }

    /// The same through a call that fails (a receive with nothing to receive).
    #[test]
    fn a_failed_call_that_took_a_command_resignals_the_watcher() {
        let ctx = Context::new();
        let s = ctx.sync_socket(SocketType::Server).unwrap();
        assert!(s.watch());
        let mut g = s.lock_state();
        let mb = s.mailbox.clone();
        let r = s.attempt(&mut g, &mut |sock| {
            mb.send(Command::Stop); // arrives during the call
            sock.recv(opt::DONTWAIT)
        });
        assert_eq!(r.err(), Some(Error::Again));
        drop(g);
        assert!(s.mailbox.wait(Some(Instant::now())).unwrap());
        s.unwatch();
    }
}
