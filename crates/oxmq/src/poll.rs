//! `poll`: wait on many sockets and plain file descriptors at once (libzmq's `zmq_poll`).
//!
//! A socket is ready when its pattern can receive or send now ([`Socket::events`]); its
//! mailbox eventfd only says "something changed, look again". So the loop is: check every
//! socket, and if nothing is ready, `poll(2)` on the eventfds and the plain descriptors, then
//! check again, until something is ready or the timeout expires.

use crate::error::{Error, Result};
use crate::opt::{POLLERR, POLLIN, POLLOUT, POLLPRI};
use crate::socket::Socket;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// One entry of a poll set.
pub enum PollItem<'a> {
    Socket { socket: &'a mut Socket, events: i16, revents: i16 },
    Fd { fd: RawFd, events: i16, revents: i16 },
}

impl<'a> PollItem<'a> {
    /// Polls a socket for `events` (`opt::POLLIN | opt::POLLOUT`).
    pub fn socket(socket: &'a mut Socket, events: i16) -> PollItem<'a> {
        PollItem::Socket { socket, events, revents: 0 }
    }

    /// Polls a plain file descriptor.
    pub fn fd(fd: RawFd, events: i16) -> PollItem<'a> {
        PollItem::Fd { fd, events, revents: 0 }
    }

    /// The events found ready.
    pub fn revents(&self) -> i16 {
        match self {
            PollItem::Socket { revents, .. } | PollItem::Fd { revents, .. } => *revents,
        }
    }

    /// True when the item is readable.
    pub fn is_readable(&self) -> bool {
        self.revents() & POLLIN != 0
    }

    /// True when the item is writable.
    pub fn is_writable(&self) -> bool {
        self.revents() & POLLOUT != 0
    }
}

/// Waits until at least one item is ready or `timeout_ms` passes (-1: forever, 0: check
/// once). Returns how many items are ready; each item's `revents` says which events.
pub fn poll(items: &mut [PollItem<'_>], timeout_ms: i64) -> Result<usize> {
    let deadline = if timeout_ms < 0 { None } else { Some(Instant::now() + Duration::from_millis(timeout_ms as u64)) };
    let mut pfds: Vec<libc::pollfd> = items
        .iter()
        .map(|it| match it {
            PollItem::Socket { socket, .. } => libc::pollfd { fd: socket.fd(), events: libc::POLLIN, revents: 0 },
            PollItem::Fd { fd, events, .. } => {
                let mut ev = 0;
                if events & POLLIN != 0 {
                    ev |= libc::POLLIN;
                }
                if events & POLLOUT != 0 {
                    ev |= libc::POLLOUT;
                }
                if events & POLLPRI != 0 {
                    ev |= libc::POLLPRI;
                }
                libc::pollfd { fd: *fd, events: ev, revents: 0 }
            }
        })
        .collect();
    let mut first = true;
    loop {
        // Plain descriptors: a zero-timeout look on the first pass, the real wait after.
        let timeout = if first {
            0
        } else {
            match deadline {
                None => -1,
                Some(d) => {
                    let now = Instant::now();
                    if d <= now { 0 } else { (d - now).as_millis().min(i32::MAX as u128) as i32 + 1 }
                }
            }
        };
        if !pfds.is_empty() {
            // SAFETY: `pfds` is a valid array of `pfds.len()` pollfd structs for the call.
            let rc = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout) };
            if rc < 0 {
                let e = std::io::Error::last_os_error();
                return Err(if e.kind() == std::io::ErrorKind::Interrupted { Error::Intr } else { e.into() });
            }
        } else if !first {
            if let Some(d) = deadline {
                std::thread::sleep(d.saturating_duration_since(Instant::now()));
            }
        }
        let mut ready = 0;
        for (it, pfd) in items.iter_mut().zip(pfds.iter()) {
            match it {
                PollItem::Socket { socket, events, revents } => {
                    let ev = socket.events()?;
                    *revents = ev & *events;
                    if *revents != 0 {
                        ready += 1;
                    }
                }
                PollItem::Fd { events, revents, .. } => {
                    let mut r = 0;
                    if pfd.revents & libc::POLLIN != 0 {
                        r |= POLLIN;
                    }
                    if pfd.revents & libc::POLLOUT != 0 {
                        r |= POLLOUT;
                    }
                    if pfd.revents & libc::POLLPRI != 0 {
                        r |= POLLPRI;
                    }
                    if pfd.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                        r |= POLLERR;
                    }
                    *revents = r & (*events | POLLERR);
                    if *revents != 0 {
                        ready += 1;
                    }
                }
            }
        }
        if ready > 0 {
            return Ok(ready);
        }
        if !first {
            if let Some(d) = deadline {
                if Instant::now() >= d {
                    return Ok(0);
                }
            }
        }
        if timeout_ms == 0 {
            return Ok(0);
        }
        first = false;
    }
}
