//! `poll`: wait on many sockets and plain file descriptors at once (libzmq's `zmq_poll`).
//!
//! A socket is ready when its pattern can receive or send now ([`Socket::events`]); its
//! mailbox eventfd only says "something changed, look again". So the loop is: check every
//! socket, and if nothing is ready, `poll(2)` on the eventfds and the plain descriptors, then
//! check again, until something is ready or the timeout expires. A small set (a few sockets
//! with a few connections between them) sleeps as a blocking `recv` does instead
//! (`socket/direct.rs`): the connections of the sockets polled for input are read on the
//! polling thread, after a spin when their recent waits were short, so a message that arrives
//! meanwhile costs one wake-up rather than the I/O thread's and then the poller's.

use crate::error::{Error, Result};
use crate::opt::{POLLERR, POLLIN, POLLOUT, POLLPRI};
use crate::socket::direct::{Added, Woke};
use crate::socket::Socket;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// One entry of a poll set.
pub enum PollItem<'a> {
    /// A socket, polled for `POLLIN`/`POLLOUT` as [`Socket::events`] reports them.
    Socket {
        /// The socket.
        socket: &'a mut Socket,
        /// The events asked for (`opt::POLLIN`, `opt::POLLOUT`).
        events: i16,
        /// The events found, after the poll.
        revents: i16,
    },
    /// A plain descriptor, polled as `poll(2)` polls it.
    Fd {
        /// The descriptor.
        fd: RawFd,
        /// The events asked for (`opt::POLLIN`, `opt::POLLOUT`, `opt::POLLPRI`).
        events: i16,
        /// The events found, after the poll (`opt::POLLERR` too).
        revents: i16,
    },
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
    // A socket in level mode whose descriptor reports an event this poll does not ask for
    // (OXMQ_FD_LEVEL = POLLIN|POLLOUT, polled for POLLIN) would keep its descriptor readable
    // and turn the wait into a spin: narrow its mask to the events asked for while polling,
    // and put it back after.
    let mut narrowed = Vec::new();
    for (i, it) in items.iter_mut().enumerate() {
        if let PollItem::Socket { socket, events, .. } = it {
            let mask = socket.fd_level();
            if mask & !*events != 0 {
                socket.set_fd_level(mask & *events)?;
                narrowed.push((i, mask));
            }
        }
    }
    let r = poll_items(items, timeout_ms);
    for (i, mask) in narrowed {
        if let PollItem::Socket { socket, .. } = &mut items[i] {
            socket.set_fd_level(mask)?;
        }
    }
    r
}

fn poll_items(items: &mut [PollItem<'_>], timeout_ms: i64) -> Result<usize> {
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
    // Sockets' readiness comes from `Socket::events`; their descriptors are only polled to
    // sleep on. So the first pass makes a system call only for plain descriptors.
    let any_fd = items.iter().any(|it| matches!(it, PollItem::Fd { .. }));
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
                    if d <= now {
                        0
                    } else {
                        (d - now).as_millis().min(i32::MAX as u128) as i32 + 1
                    }
                }
            }
        };
        if !first && wait_direct(items, &mut pfds, deadline, timeout)? {
            // Waited, and the plain descriptors' revents are current.
        } else if !pfds.is_empty() && (any_fd || !first) {
            // SAFETY: `pfds` is a valid array of `pfds.len()` pollfd structs for the call.
            let rc = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout) };
            if rc < 0 {
                return Err(std::io::Error::last_os_error().into()); // EINTR is Error::Intr
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
            let input = items.iter().any(|it| match it {
                PollItem::Socket { revents, .. } | PollItem::Fd { revents, .. } => *revents & POLLIN != 0,
            });
            if !first && input {
                crate::socket::catchup::waited_for_input();
            }
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

/// Sleeps as a blocking `recv` does (see the module comment) when the set allows it: at most
/// [`WATCH_SOCKETS`](crate::socket::direct::WATCH_SOCKETS) sockets, none in level-triggered
/// mode, at least one polled for input with connections it can read, and at most
/// [`crate::WAIT_ALSO_MAX`] plain descriptors. Then true, with `pfds`' revents current; false
/// when the caller is to sleep in `poll(2)` itself.
fn wait_direct(items: &mut [PollItem<'_>], pfds: &mut [libc::pollfd], deadline: Option<Instant>, timeout: i32) -> Result<bool> {
    // A large set (a subscriber polling dozens of sockets) is ruled out before anything is
    // gathered: it waits in poll(2) on every pass, and that wait must stay as cheap as it was.
    let socks = items.iter().filter(|it| matches!(it, PollItem::Socket { .. })).count();
    if socks == 0 || socks > crate::socket::direct::WATCH_SOCKETS || items.len() - socks > crate::WAIT_ALSO_MAX {
        return Ok(false);
    }
    let mut watch = None;
    let mut reads = false;
    for it in items.iter() {
        if let PollItem::Socket { socket, events, .. } = it {
            if socket.fd_level() != 0 {
                return Ok(false);
            }
            let w = watch.get_or_insert_with(|| socket.new_watch());
            match w.add_socket(socket, events & POLLIN != 0) {
                Added::Full => return Ok(false),
                Added::Read => reads = true,
                Added::Mailbox => {}
            }
        }
    }
    let Some(mut w) = watch.filter(|_| reads) else { return Ok(false) };
    for (it, pfd) in items.iter().zip(pfds.iter()) {
        if matches!(it, PollItem::Fd { .. }) && !w.add_also(*pfd) {
            return Ok(false);
        }
    }
    w.arm();
    let start = Instant::now();
    let reading = |it: &PollItem<'_>| matches!(it, PollItem::Socket { events, .. } if events & POLLIN != 0);
    let mut spin = items
        .iter()
        .filter(|it| reading(it))
        .filter_map(|it| match it {
            PollItem::Socket { socket, .. } => socket.spin_until(start, deadline),
            PollItem::Fd { .. } => None,
        })
        .max();
    let woke = w.run(deadline, &mut spin);
    if matches!(woke, Ok(Woke::Mailbox)) {
        // A poll loop's quick exchange: its next wait takes the input as it is.
        w.lend_if_quick(start);
    }
    drop(w); // the connections' input goes back to the I/O thread, or stays lent
    let any_fd = items.iter().any(|it| matches!(it, PollItem::Fd { .. }));
    let sleep = matches!(woke, Ok(Woke::Idle));
    if sleep || any_fd {
        // Idle: no connection to read after all; sleep on the descriptors as `poll` does.
        // Otherwise a look (no wait) for the plain descriptors' revents.
        // SAFETY: `pfds` is a valid array of `pfds.len()` pollfd structs for the call.
        let rc = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, if sleep { timeout } else { 0 }) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error().into()); // EINTR is Error::Intr
        }
    }
    for it in items.iter_mut() {
        if let PollItem::Socket { socket, events, .. } = it {
            if *events & POLLIN != 0 {
                socket.spin_ended(start);
            }
        }
    }
    woke.map(|_| true)
}

/// Something a [`Poller`] can hold as a socket: `&mut Socket`, an owned `Socket`, or (in the C
/// ABI) a checked handle.
pub trait AsSocket {
    /// The socket, or an error if the handle no longer names one.
    fn as_socket(&mut self) -> Result<&mut Socket>;
}

impl AsSocket for Socket {
    fn as_socket(&mut self) -> Result<&mut Socket> {
        Ok(self)
    }
}

impl AsSocket for &mut Socket {
    fn as_socket(&mut self) -> Result<&mut Socket> {
        Ok(self)
    }
}

/// A ready item, as [`Poller::wait`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollEvent {
    /// The token [`Poller::add_socket`] or [`Poller::add_fd`] returned.
    pub token: usize,
    /// The events ready (`opt::POLLIN`, `opt::POLLOUT`, `opt::POLLERR`, `opt::POLLPRI`).
    pub events: i16,
}

enum Target<S> {
    /// A socket, and its `OXMQ_FD_LEVEL` value before it joined (restored on removal).
    Socket(S, i16),
    Fd(RawFd),
}

struct Entry<S> {
    target: Target<S>,
    events: i16,
}

/// A persistent set of sockets and plain file descriptors to wait on (libzmq's
/// `zmq_poller`).
///
/// Registration is done once (`add_*`, `modify`, `remove`); a [`Poller::wait`] costs one
/// `epoll_wait` plus a look at each item the kernel reports, so waiting on thousands of mostly
/// idle sockets costs nothing per idle socket. Sockets are switched to level-triggered
/// readiness ([`crate::opt::OXMQ_FD_LEVEL`] with the events asked for) while they are in the
/// poller, so their descriptors are readable exactly while they are ready; the previous mode is
/// restored on [`Poller::remove`]. A socket belongs to one poller at a time.
///
/// ```no_run
/// # fn main() -> oxmq::Result<()> {
/// let ctx = oxmq::Context::new();
/// let mut a = ctx.socket(oxmq::SocketType::Pull)?;
/// a.bind("inproc://a")?;
/// let mut poller = oxmq::Poller::new()?;
/// let ta = poller.add_socket(&mut a, oxmq::opt::POLLIN)?;
/// let mut ready = Vec::new();
/// poller.wait(&mut ready, 1000)?;
/// for ev in &ready {
///     if ev.token == ta {
///         let _msg = poller.socket(ta).unwrap().recv(oxmq::opt::DONTWAIT)?;
///     }
/// }
/// # Ok(()) }
/// ```
pub struct Poller<S: AsSocket> {
    epfd: std::os::fd::OwnedFd,
    entries: Vec<Option<Entry<S>>>,
    free: Vec<usize>,
    buf: Vec<libc::epoll_event>,
}

fn os_err() -> Error {
    let e = std::io::Error::last_os_error();
    if e.kind() == std::io::ErrorKind::Interrupted {
        Error::Intr
    } else if e.raw_os_error() == Some(libc::EEXIST) {
        Error::Invalid // already registered, libzmq's EINVAL
    } else {
        e.into()
    }
}

/// epoll interest for a plain descriptor's poll events.
fn epoll_bits(events: i16) -> u32 {
    let mut ev = 0;
    if events & POLLIN != 0 {
        ev |= libc::EPOLLIN as u32;
    }
    if events & POLLOUT != 0 {
        ev |= libc::EPOLLOUT as u32;
    }
    if events & POLLPRI != 0 {
        ev |= libc::EPOLLPRI as u32;
    }
    ev
}

impl<S: AsSocket> Poller<S> {
    /// An empty poller (one epoll instance).
    pub fn new() -> Result<Poller<S>> {
        // SAFETY: plain syscall; the descriptor is checked and then owned.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(os_err());
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        let epfd = unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) };
        Ok(Poller { epfd, entries: Vec::new(), free: Vec::new(), buf: Vec::new() })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, bits: u32, token: usize) -> Result<()> {
        let mut ev = libc::epoll_event { events: bits, u64: token as u64 };
        // SAFETY: a valid epoll descriptor and event struct for the duration of the call.
        let rc = unsafe { libc::epoll_ctl(std::os::fd::AsRawFd::as_raw_fd(&self.epfd), op, fd, &mut ev) };
        if rc < 0 {
            return Err(os_err());
        }
        Ok(())
    }

    fn insert(&mut self, e: Entry<S>) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.entries[i] = Some(e);
                i
            }
            None => {
                self.entries.push(Some(e));
                self.entries.len() - 1
            }
        }
    }

    /// The poller's own descriptor (an epoll set): readable while one of its items may be
    /// ready, so the poller can itself be waited on by another loop (`zmq_poller_fd`).
    pub fn fd(&self) -> RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.epfd)
    }

    /// Watches a socket for `events` (`opt::POLLIN | opt::POLLOUT`); returns its token.
    /// `Error::Invalid` if the socket is already in this poller.
    pub fn add_socket(&mut self, mut socket: S, events: i16) -> Result<usize> {
        let s = socket.as_socket()?;
        let fd = s.fd();
        let before = s.get_int(crate::opt::OXMQ_FD_LEVEL)? as i16;
        let token = self.free.last().copied().unwrap_or(self.entries.len());
        self.ctl(libc::EPOLL_CTL_ADD, fd, libc::EPOLLIN as u32, token)?;
        if let Err(e) = s.set_int(crate::opt::OXMQ_FD_LEVEL, i32::from(events & (POLLIN | POLLOUT))) {
            let _ = self.ctl(libc::EPOLL_CTL_DEL, fd, 0, token);
            return Err(e);
        }
        Ok(self.insert(Entry { target: Target::Socket(socket, before), events }))
    }

    /// Watches a plain file descriptor for `events` (`POLLIN`, `POLLOUT`, `POLLPRI`; errors
    /// and hang-ups are reported as `POLLERR` always). `Error::Invalid` if already added.
    pub fn add_fd(&mut self, fd: RawFd, events: i16) -> Result<usize> {
        if fd < 0 {
            return Err(Error::Os(libc::EBADF));
        }
        let token = self.free.last().copied().unwrap_or(self.entries.len());
        self.ctl(libc::EPOLL_CTL_ADD, fd, epoll_bits(events), token)?;
        Ok(self.insert(Entry { target: Target::Fd(fd), events }))
    }

    fn entry(&mut self, token: usize) -> Result<&mut Entry<S>> {
        self.entries.get_mut(token).and_then(|e| e.as_mut()).ok_or(Error::Invalid)
    }

    /// Changes the events an item is watched for.
    pub fn modify(&mut self, token: usize, events: i16) -> Result<()> {
        let e = self.entry(token)?;
        match &mut e.target {
            Target::Socket(s, _) => {
                s.as_socket()?.set_int(crate::opt::OXMQ_FD_LEVEL, i32::from(events & (POLLIN | POLLOUT)))?;
                e.events = events;
            }
            Target::Fd(fd) => {
                let fd = *fd;
                e.events = events;
                self.ctl(libc::EPOLL_CTL_MOD, fd, epoll_bits(events), token)?;
            }
        }
        Ok(())
    }

    /// Stops watching an item; gives a socket back (in its previous readiness mode).
    pub fn remove(&mut self, token: usize) -> Result<Option<S>> {
        let e = self.entries.get_mut(token).and_then(|e| e.take()).ok_or(Error::Invalid)?;
        self.free.push(token);
        match e.target {
            Target::Socket(mut s, before) => {
                if let Ok(sock) = s.as_socket() {
                    let _ = self.ctl(libc::EPOLL_CTL_DEL, sock.fd(), 0, token);
                    let _ = sock.set_int(crate::opt::OXMQ_FD_LEVEL, i32::from(before));
                }
                Ok(Some(s))
            }
            Target::Fd(fd) => {
                // A descriptor the caller already closed has left the epoll set by itself.
                let _ = self.ctl(libc::EPOLL_CTL_DEL, fd, 0, token);
                Ok(None)
            }
        }
    }

    /// The socket registered under `token`.
    pub fn socket(&mut self, token: usize) -> Option<&mut S> {
        match self.entries.get_mut(token)?.as_mut()? {
            Entry { target: Target::Socket(s, _), .. } => Some(s),
            _ => None,
        }
    }

    /// Items registered.
    pub fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    /// True when nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits until at least one item is ready or `timeout_ms` passes (-1: forever, 0: look
    /// once). Fills `ready` (cleared first) and returns how many items are ready.
    pub fn wait(&mut self, ready: &mut Vec<PollEvent>, timeout_ms: i64) -> Result<usize> {
        ready.clear();
        let deadline = if timeout_ms < 0 { None } else { Some(Instant::now() + Duration::from_millis(timeout_ms as u64)) };
        let want = self.len().clamp(1, 1024);
        if self.buf.len() < want {
            self.buf.resize(want, libc::epoll_event { events: 0, u64: 0 });
        }
        loop {
            let timeout = match deadline {
                None => -1,
                Some(d) => {
                    let now = Instant::now();
                    if d <= now {
                        0
                    } else {
                        ((d - now).as_micros().div_ceil(1000)).min(i32::MAX as u128) as i32
                    }
                }
            };
            // SAFETY: `buf` holds `buf.len()` writable epoll_event structs.
            let n = unsafe {
                libc::epoll_wait(
                    std::os::fd::AsRawFd::as_raw_fd(&self.epfd),
                    self.buf.as_mut_ptr(),
                    self.buf.len() as libc::c_int,
                    timeout,
                )
            };
            if n < 0 {
                return Err(os_err());
            }
            for i in 0..n as usize {
                let (token, bits) = (self.buf[i].u64 as usize, self.buf[i].events);
                let Some(Some(e)) = self.entries.get_mut(token) else { continue };
                let revents = match &mut e.target {
                    // The descriptor says "ready"; the socket confirms which events (and, if a
                    // peer event brought nothing, resets the descriptor so it does not spin).
                    Target::Socket(s, _) => s.as_socket()?.events()? & e.events,
                    Target::Fd(_) => {
                        let mut r = 0;
                        if bits & libc::EPOLLIN as u32 != 0 {
                            r |= POLLIN;
                        }
                        if bits & libc::EPOLLOUT as u32 != 0 {
                            r |= POLLOUT;
                        }
                        if bits & libc::EPOLLPRI as u32 != 0 {
                            r |= POLLPRI;
                        }
                        if bits & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0 {
                            r |= POLLERR;
                        }
                        r & (e.events | POLLERR)
                    }
                };
                if revents != 0 {
                    ready.push(PollEvent { token, events: revents });
                }
            }
            if !ready.is_empty() {
                if timeout != 0 && ready.iter().any(|e| e.events & POLLIN != 0) {
                    crate::socket::catchup::waited_for_input();
                }
                return Ok(ready.len());
            }
            if timeout == 0 {
                return Ok(0);
            }
        }
    }
}

impl<S: AsSocket> Drop for Poller<S> {
    fn drop(&mut self) {
        // Sockets go back to the readiness mode they had.
        for t in 0..self.entries.len() {
            if matches!(self.entries[t], Some(Entry { target: Target::Socket(..), .. })) {
                let _ = self.remove(t);
            }
        }
    }
}
