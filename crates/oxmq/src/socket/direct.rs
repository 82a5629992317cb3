//! The direct receive path: a receiver with nothing queued reads its connections itself.
//!
//! Without it, a message that arrives while `recv` waits costs two wake-ups in a row: the I/O
//! thread's (epoll), which reads, decodes and writes the pipe, then the receiver's (the
//! mailbox eventfd). On an idle machine each wake-up of a sleeping core costs tens of
//! microseconds, so that second hop is most of the latency a request/reply exchange pays
//! above plain TCP. Here the waiting thread polls its connections' descriptors beside its
//! mailbox and, when one becomes readable and the I/O thread is not busy with that connection
//! (the session's mutex is only *tried*), reads and decodes the input on its own thread: one
//! wake-up per message, as with a plain socket.
//!
//! The I/O thread still owns every connection, so correctness never depends on this path:
//! whatever it cannot finish (a command frame, a full pipe, the end of the stream, an error, a
//! busy session) is left to the I/O thread, and the receiver falls back to waiting on its
//! mailbox for that connection. While the receiver waits on a connection, the I/O thread's
//! epoll registration stops reporting its input (`Owner::direct_arm`), or every message would
//! wake that thread too, for nothing, and it would hold the session just when the receiver
//! wants to write its reply; a guard gives the input back however the wait ends. Only sockets with a few connections take this path: a fan-in socket keeps the
//! I/O thread's batching, and a wait never costs more than one `poll` over a handful of
//! descriptors.

use super::{Socket, DIRECT_MAX};
use crate::pipe::{Owner, PipeId};
use crate::{Error, Result};
use std::sync::Arc;
use std::time::Instant;

impl Socket {
    /// Waits up to `timeout` (None: no limit) for something that may let `recv` succeed,
    /// reading the socket's connections on the calling thread where it can, without receiving.
    /// `Ok(())` when the socket's state changed (try `recv` again), `Err(Again)` at the timeout,
    /// `Err(Intr)` when a signal interrupted the wait, `Err(Term)` on shutdown. For bindings
    /// that wait in slices (to look for signals between them) instead of blocking in `recv`.
    pub fn wait_recv(&mut self, timeout: Option<std::time::Duration>) -> Result<()> {
        self.check_term()?;
        self.wait_input(timeout.map(|t| Instant::now() + t))
    }

    /// Waits for input until `deadline`, as [`Socket::wait`] does, reading the connections
    /// directly where it can. Returns once a command (a message among them) is processed;
    /// `Err(Again)` on timeout, `Err(Term)` on shutdown, `Err(Intr)` on a signal.
    pub(super) fn wait_input(&mut self, deadline: Option<Instant>) -> Result<()> {
        self.level_before_wait();
        if self.shared.mailbox.has_pending() {
            return self.wait(deadline);
        }
        let mut peers: [Option<(Arc<dyn Owner>, PipeId)>; DIRECT_MAX] = Default::default();
        let mut n = 0;
        for slot in self.pipes.slots.iter().flatten() {
            if let Some(peer) = slot.end.peer_owner() {
                if n == DIRECT_MAX {
                    return self.wait(deadline); // fan-in: the I/O thread batches better
                }
                peers[n] = Some(peer);
                n += 1;
            }
        }
        // Input already waiting in the kernel is read at once; the others are polled.
        let mut fds = [libc::pollfd { fd: self.shared.mailbox.fd(), events: libc::POLLIN, revents: 0 }; DIRECT_MAX + 1];
        let mut who = [0usize; DIRECT_MAX + 1];
        let mut m = 1;
        let mut armed = Armed { peers: &peers, on: [false; DIRECT_MAX] };
        for (i, (owner, id)) in peers[..n].iter().flatten().enumerate() {
            if let Some(fd) = owner.direct_arm(*id) {
                armed.on[i] = true;
                owner.direct_read(*id);
                fds[m] = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
                who[m] = i;
                m += 1;
            }
        }
        loop {
            if self.shared.mailbox.has_pending() || m == 1 {
                return self.wait(deadline);
            }
            let timeout = crate::mailbox::poll_timeout(deadline);
            // SAFETY: `fds[..m]` are initialised pollfds that live across the call.
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), m as libc::nfds_t, timeout) };
            if rc < 0 {
                let e = std::io::Error::last_os_error();
                return Err(if e.kind() == std::io::ErrorKind::Interrupted { Error::Intr } else { e.into() });
            }
            self.check_term()?;
            if rc == 0 {
                return Err(Error::Again);
            }
            // Connections this thread could not read (busy, or input only the I/O thread may
            // handle) leave the set: the I/O thread delivers theirs through the mailbox.
            let mut k = 1;
            while k < m {
                if fds[k].revents != 0 {
                    fds[k].revents = 0;
                    let (owner, id) = peers[who[k]].as_ref().expect("polled peers are gathered");
                    if !owner.direct_read(*id) {
                        armed.off(who[k]);
                        fds[k] = fds[m - 1];
                        who[k] = who[m - 1];
                        m -= 1;
                        continue;
                    }
                }
                k += 1;
            }
        }
    }
}

/// The connections a wait took input over from; dropping it gives the input back.
struct Armed<'a> {
    peers: &'a [Option<(Arc<dyn Owner>, PipeId)>; DIRECT_MAX],
    on: [bool; DIRECT_MAX],
}

impl Armed<'_> {
    fn off(&mut self, i: usize) {
        if std::mem::take(&mut self.on[i]) {
            if let Some((owner, id)) = &self.peers[i] {
                owner.direct_disarm(*id);
            }
        }
    }
}

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        for i in 0..DIRECT_MAX {
            self.off(i);
        }
    }
}
