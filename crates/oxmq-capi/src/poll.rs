//! `zmq_poll` and the `zmq_poller_*` family, both over `oxmq::poll`.
//!
//! `zmq_poll` takes an array that may name the same socket twice; Rust's `poll` takes one
//! `&mut Socket` per item, so items are first folded into one slot per distinct socket (events
//! or'ed), polled, and the result is spread back over the C items. The poller is a list of
//! registrations that builds the same item array on each wait.

use crate::guard::{guard, non_null};
use crate::socket::sock_mut;
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
#[derive(Clone, Copy, PartialEq, Eq)]
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

const POLLER_LIVE: u64 = 0x6f78_6d71_5f70_6f6c; // "oxmq_pol"

struct Entry {
    target: Target,
    user_data: *mut c_void,
    events: c_short,
}

struct Poller {
    tag: u64,
    entries: Vec<Entry>,
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

impl Poller {
    fn find(&self, t: Target) -> Option<usize> {
        self.entries.iter().position(|e| e.target == t)
    }

    fn add(&mut self, t: Target, user_data: *mut c_void, events: c_short) -> Result<c_int> {
        if self.find(t).is_some() {
            return Err(Error::Invalid);
        }
        self.entries.push(Entry { target: t, user_data, events });
        Ok(0)
    }

    fn modify(&mut self, t: Target, events: c_short) -> Result<c_int> {
        let i = self.find(t).ok_or(Error::Invalid)?;
        self.entries[i].events = events;
        Ok(0)
    }

    fn remove(&mut self, t: Target) -> Result<c_int> {
        let i = self.find(t).ok_or(Error::Invalid)?;
        self.entries.remove(i);
        Ok(0)
    }
}

#[no_mangle]
pub extern "C" fn zmq_poller_new() -> *mut c_void {
    guard(std::ptr::null_mut(), || {
        Ok(Box::into_raw(Box::new(Poller { tag: POLLER_LIVE, entries: Vec::new() })).cast())
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
    guard(-1, || Ok(unsafe { poller(p)? }.entries.len() as c_int))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_add(
    p: *mut c_void,
    s: *mut c_void,
    user_data: *mut c_void,
    events: c_short,
) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: poller and socket handles.
        let pl = unsafe { poller(p)? };
        // SAFETY: validates the handle (ENOTSOCK when closed); the borrow ends here.
        unsafe { sock_mut(s)? };
        pl.add(Target::Socket(s), user_data, events)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_modify(p: *mut c_void, s: *mut c_void, events: c_short) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let pl = unsafe { poller(p)? };
        // SAFETY: validates the handle; the borrow ends here.
        unsafe { sock_mut(s)? };
        pl.modify(Target::Socket(s), events)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_remove(p: *mut c_void, s: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let pl = unsafe { poller(p)? };
        // SAFETY: validates the handle; the borrow ends here.
        unsafe { sock_mut(s)? };
        pl.remove(Target::Socket(s))
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_poller_add_fd(
    p: *mut c_void,
    fd: c_int,
    user_data: *mut c_void,
    events: c_short,
) -> c_int {
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
        unsafe { poller(p)? };
        non_null(fd)?;
        // libzmq has a poller fd only when thread-safe sockets are registered; oxmq has none.
        Err(Error::Invalid)
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
        if pl.entries.is_empty() {
            // As libzmq: waiting forever on nothing is a caller error; otherwise time out.
            if timeout < 0 {
                return Err(Error::Fault);
            }
            idle(timeout);
            return Err(Error::Again);
        }
        let targets: Vec<(Target, c_short)> = pl.entries.iter().map(|e| (e.target, e.events)).collect();
        // SAFETY: `add` rejects duplicates, so socket targets are distinct.
        let revents = unsafe { poll_targets(&targets, timeout)? };
        // SAFETY: C promises `n_events` writable events.
        let out = unsafe { std::slice::from_raw_parts_mut(events, n_events as usize) };
        let mut n = 0;
        for (e, &r) in pl.entries.iter().zip(&revents) {
            let r = r & (e.events | opt::POLLERR);
            if r == 0 || n == out.len() {
                continue;
            }
            let (socket, fd) = match e.target {
                Target::Socket(s) => (s, -1),
                Target::Fd(fd) => (std::ptr::null_mut(), fd),
            };
            out[n] = zmq_poller_event_t { socket, fd, user_data: e.user_data, events: r };
            n += 1;
        }
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
            *event = zmq_poller_event_t {
                socket: std::ptr::null_mut(),
                fd: -1,
                user_data: std::ptr::null_mut(),
                events: 0,
            };
        }
    }
    if rc >= 0 {
        0
    } else {
        rc
    }
}
