//! `zmq_poll` and the `zmq_poller_*` family, both over `oxmq::poll`.
//!
//! `zmq_poll` takes an array that may name the same socket twice; Rust's `poll` takes one
//! `&mut Socket` per item, so items are first folded into one slot per distinct socket (events
//! or'ed), polled, and the result is spread back over the C items. The poller is
//! `oxmq::Poller` (one epoll set, sockets in level-triggered readiness mode) keyed by socket
//! handle and descriptor.

use crate::guard::{guard, non_null};
use crate::socket::{check_sock, sock_mut};
use oxmq::{opt, Error, PollItem, Result};
use std::ffi::{c_int, c_long, c_short, c_void};
use std::time::Duration;

/// libzmq's `zmq_pollitem_t` (`zmq_fd_t` is `int` on POSIX).
#[repr(C)]
pub struct zmq_pollitem_t {
    pub socket: *mut c_void,
    pub fd: c_int,
    pub events: c_short,
    pub revents: c_short,
}

/// libzmq's `zmq_poller_event_t`.
#[repr(C)]
pub struct zmq_poller_event_t {
    pub socket: *mut c_void,
    pub fd: c_int,
    pub user_data: *mut c_void,
    pub events: c_short,
}

/// What one poll slot watches.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Socket(*mut c_void),
    Fd(c_int),
}

/// Polls distinct `targets` with their `events`; returns each slot's revents.
///
/// # Safety
/// Every `Target::Socket` is a distinct socket handle used only by this thread during the call.
unsafe fn poll_targets(targets: &[(Target, c_short)], timeout_ms: i64) -> Result<Vec<c_short>> {
    let mut items = Vec::with_capacity(targets.len());
    for &(t, events) in targets {
        items.push(match t {
            // SAFETY: distinct handles (caller's contract), so the `&mut Socket`s do not alias.
            Target::Socket(s) => PollItem::Socket { socket: unsafe { sock_mut(s)? }, events, revents: 0 },
            Target::Fd(fd) => PollItem::Fd { fd, events, revents: 0 },
        });
    }
    oxmq::poll(&mut items, timeout_ms)?;
    Ok(items
        .iter()
        .map(|i| match i {
            PollItem::Socket { revents, .. } | PollItem::Fd { revents, .. } => *revents,
        })
        .collect())
}

/// Sleeps like libzmq's poll of nothing: for `timeout_ms` when positive.
fn idle(timeout_ms: i64) {
    if timeout_ms > 0 {
        std::thread::sleep(Duration::from_millis(timeout_ms as u64));
    }
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poll(items: *mut zmq_pollitem_t, nitems: c_int, timeout: c_long) -> c_int {
    guard(-1, || {
        if nitems < 0 {
            return Err(Error::Invalid);
        }
        if nitems == 0 {
            idle(timeout);
            return Ok(0);
        }
        non_null(items)?;
        // SAFETY: C promises `nitems` pollitems at `items`, owned by this thread for the call.
        let items = unsafe { std::slice::from_raw_parts_mut(items, nitems as usize) };
        let mut targets: Vec<(Target, c_short)> = Vec::with_capacity(items.len());
        let mut slot_of = Vec::with_capacity(items.len());
        for it in items.iter() {
            let t = if it.socket.is_null() { Target::Fd(it.fd) } else { Target::Socket(it.socket) };
            let existing = match t {
                Target::Socket(_) => targets.iter().position(|(x, _)| *x == t),
                Target::Fd(_) => None,
            };
            match existing {
                Some(i) => {
                    targets[i].1 |= it.events;
                    slot_of.push(i);
                }
                None => {
                    targets.push((t, it.events));
                    slot_of.push(targets.len() - 1);
                }
            }
        }
        // SAFETY: sockets were folded into distinct targets above.
        let revents = unsafe { poll_targets(&targets, timeout)? };
        let mut n = 0;
        for (it, &slot) in items.iter_mut().zip(&slot_of) {
            it.revents = revents[slot] & (it.events | opt::POLLERR);
            if it.revents != 0 {
                n += 1;
            }
        }
        Ok(n)
    })
}

// --- zmq_poller (draft API, used by modern bindings) ----------------------------------------
//
// Over `oxmq::Poller`: one epoll set kept across waits, sockets in level-triggered readiness
// mode while registered, so a wait costs one `epoll_wait` plus a look at what it reports.

const POLLER_LIVE: u64 = 0x6f78_6d71_5f70_6f6c; // "oxmq_pol"

/// A C socket handle as the Rust poller holds it: checked on every use, so a socket closed
/// while registered gives `ENOTSOCK` instead of a dangling reference.
struct CSock(*mut c_void);

impl oxmq::AsSocket for CSock {
    fn as_socket(&mut self) -> Result<&mut oxmq::Socket> {
        // SAFETY: the handle came from zmq_socket (checked by its tag); C's contract is that a
        // socket is used by one thread at a time, and the borrow ends with the poller's call.
        unsafe { sock_mut(self.0) }
    }
}

struct Poller {
    tag: u64,
    inner: oxmq::Poller<CSock>,
    /// By token: what was registered, its user data and the events asked for.
    entries: Vec<Option<(Target, *mut c_void, c_short)>>,
    by_target: std::collections::HashMap<Target, usize>,
    ready: Vec<oxmq::PollEvent>,
}

/// # Safety
/// `p` is null or a pointer from `zmq_poller_new` not yet destroyed, used by one thread.
unsafe fn poller<'a>(p: *mut c_void) -> Result<&'a mut Poller> {
    non_null(p)?;
    // SAFETY: caller's contract.
    let pl = unsafe { &mut *p.cast::<Poller>() };
    if pl.tag != POLLER_LIVE {
        return Err(Error::Fault);
    }
    Ok(pl)
}

/// Events a poller item may ask for (libzmq: anything else is EINVAL).
fn check_events(events: c_short) -> Result<()> {
    if events & !(opt::POLLIN | opt::POLLOUT | opt::POLLERR | opt::POLLPRI) != 0 {
        return Err(Error::Invalid);
    }
    Ok(())
}

impl Poller {
    fn add(&mut self, t: Target, user_data: *mut c_void, events: c_short) -> Result<c_int> {
        check_events(events)?;
        if self.by_target.contains_key(&t) {
            return Err(Error::Invalid);
        }
        let token = match t {
            Target::Socket(s) => self.inner.add_socket(CSock(s), events)?,
            Target::Fd(fd) => self.inner.add_fd(fd, events)?,
        };
        if self.entries.len() <= token {
            self.entries.resize(token + 1, None);
        }
        self.entries[token] = Some((t, user_data, events));
        self.by_target.insert(t, token);
        Ok(0)
    }

    fn modify(&mut self, t: Target, events: c_short) -> Result<c_int> {
        check_events(events)?;
        let token = *self.by_target.get(&t).ok_or(Error::Invalid)?;
        self.inner.modify(token, events)?;
        if let Some(Some(e)) = self.entries.get_mut(token) {
            e.2 = events;
        }
        Ok(0)
    }

    fn remove(&mut self, t: Target) -> Result<c_int> {
        let token = self.by_target.remove(&t).ok_or(Error::Invalid)?;
        self.entries[token] = None;
        self.inner.remove(token)?;
        Ok(0)
    }
}

#[no_mangle]
pub extern "C" fn zmq_poller_new() -> *mut c_void {
    guard(std::ptr::null_mut(), || {
        let pl = Poller {
            tag: POLLER_LIVE,
            inner: oxmq::Poller::new()?,
            entries: Vec::new(),
            by_target: Default::default(),
            ready: Vec::new(),
        };
        Ok(Box::into_raw(Box::new(pl)).cast())
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_destroy(pp: *mut *mut c_void) -> c_int {
    guard(-1, || {
        non_null(pp)?;
        // SAFETY: `pp` is a valid pointer to the caller's handle variable.
        let p = unsafe { *pp };
        // SAFETY: C contract: `p` came from zmq_poller_new.
        let pl = unsafe { poller(p)? };
        pl.tag = 0;
        // SAFETY: allocated by `Box::into_raw` in zmq_poller_new; tag cleared; the caller's
        // variable is nulled so it cannot be destroyed twice through it.
        unsafe {
            drop(Box::from_raw(p.cast::<Poller>()));
            *pp = std::ptr::null_mut();
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_size(p: *mut c_void) -> c_int {
    // SAFETY: C contract.
    guard(-1, || Ok(unsafe { poller(p)? }.by_target.len() as c_int))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_add(p: *mut c_void, s: *mut c_void, user_data: *mut c_void, events: c_short) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: poller and socket handles.
        let pl = unsafe { poller(p)? };
        // SAFETY: validates the handle (ENOTSOCK when closed), without holding a thread-safe
        // socket's lock: the poller takes it itself.
        unsafe { check_sock(s)? };
        pl.add(Target::Socket(s), user_data, events)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_modify(p: *mut c_void, s: *mut c_void, events: c_short) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let pl = unsafe { poller(p)? };
        // SAFETY: validates the handle without holding a thread-safe socket's lock.
        unsafe { check_sock(s)? };
        pl.modify(Target::Socket(s), events)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_remove(p: *mut c_void, s: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let pl = unsafe { poller(p)? };
        // SAFETY: validates the handle without holding a thread-safe socket's lock.
        unsafe { check_sock(s)? };
        pl.remove(Target::Socket(s))
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_add_fd(p: *mut c_void, fd: c_int, user_data: *mut c_void, events: c_short) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let pl = unsafe { poller(p)? };
        if fd < 0 {
            return Err(Error::Os(libc::EBADF));
        }
        pl.add(Target::Fd(fd), user_data, events)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_modify_fd(p: *mut c_void, fd: c_int, events: c_short) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let pl = unsafe { poller(p)? };
        if fd < 0 {
            return Err(Error::Os(libc::EBADF));
        }
        pl.modify(Target::Fd(fd), events)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_remove_fd(p: *mut c_void, fd: c_int) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let pl = unsafe { poller(p)? };
        if fd < 0 {
            return Err(Error::Os(libc::EBADF));
        }
        pl.remove(Target::Fd(fd))
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_fd(p: *mut c_void, fd: *mut c_int) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let pl = unsafe { poller(p)? };
        non_null(fd)?;
        // As libzmq: there is one only while a thread-safe socket is registered (libzmq's is
        // their shared signaler; oxmq's is the epoll set, readable while an item may be ready).
        let thread_safe = pl.entries.iter().flatten().any(|(t, _, _)| match *t {
            // SAFETY: a registered socket handle (closed ones fail the check).
            Target::Socket(s) => matches!(unsafe { crate::socket::handle(s) }, Ok(crate::socket::Handle::Sync(_))),
            Target::Fd(_) => false,
        });
        if !thread_safe {
            return Err(Error::Invalid);
        }
        // SAFETY: non-null, the caller's int.
        unsafe { *fd = pl.inner.fd() };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_wait_all(
    p: *mut c_void,
    events: *mut zmq_poller_event_t,
    n_events: c_int,
    timeout: c_long,
) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let pl = unsafe { poller(p)? };
        non_null(events)?;
        if n_events < 0 {
            return Err(Error::Invalid);
        }
        if pl.entries.iter().flatten().all(|e| e.2 == 0) {
            // As libzmq: waiting forever on nothing (no item, or none asking for an event) is
            // a caller error; otherwise time out.
            if timeout < 0 {
                return Err(Error::Fault);
            }
            idle(timeout);
            return Err(Error::Again);
        }
        let mut ready = std::mem::take(&mut pl.ready);
        let r = pl.inner.wait(&mut ready, timeout);
        // SAFETY: C promises `n_events` writable events.
        let out = unsafe { std::slice::from_raw_parts_mut(events, n_events as usize) };
        let mut n = 0;
        // Items beyond `n_events` stay ready (level-triggered) and are reported next time.
        for ev in ready.iter().take(out.len()) {
            let Some(Some((t, user_data, _))) = pl.entries.get(ev.token) else { continue };
            let (socket, fd) = match *t {
                Target::Socket(s) => (s, -1),
                Target::Fd(fd) => (std::ptr::null_mut(), fd),
            };
            out[n] = zmq_poller_event_t { socket, fd, user_data: *user_data, events: ev.events };
            n += 1;
        }
        pl.ready = ready;
        r?;
        if n == 0 {
            return Err(Error::Again);
        }
        Ok(n as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_wait(p: *mut c_void, event: *mut zmq_poller_event_t, timeout: c_long) -> c_int {
    // SAFETY: same contract as zmq_poller_wait_all with one event.
    let rc = unsafe { zmq_poller_wait_all(p, event, 1, timeout) };
    if rc < 0 && !event.is_null() {
        // SAFETY: non-null event owned by the caller.
        unsafe {
            *event = zmq_poller_event_t { socket: std::ptr::null_mut(), fd: -1, user_data: std::ptr::null_mut(), events: 0 };
        }
    }
    if rc >= 0 {
        0
    } else {
        rc
    }
}
