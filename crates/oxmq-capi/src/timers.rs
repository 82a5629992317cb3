//! `zmq_timers_*`: a set of interval timers the application drives itself (libzmq's draft API,
//! used by CZMQ and pyzmq users): `zmq_timers_timeout` says how long to poll, and
//! `zmq_timers_execute` runs the handlers whose time has come and reschedules them.
//!
//! Handlers may cancel or add timers on the same set while `execute` runs; execute therefore
//! collects the due ids first and looks each one up again before calling it.

use crate::guard::{guard, non_null};
use oxmq::{Error, Result};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_long, c_void};
use std::time::{Duration, Instant};

/// `void zmq_timer_fn (int timer_id, void *arg)`.
pub type zmq_timer_fn = unsafe extern "C" fn(timer_id: c_int, arg: *mut c_void);

const TIMERS_LIVE: u64 = 0x6f78_6d71_5f74_696d; // "oxmq_tim"

struct Timer {
    interval: Duration,
    due: Instant,
    handler: zmq_timer_fn,
    arg: *mut c_void,
}

/// The pure part: ids, deadlines and rescheduling, with time passed in.
struct Timers {
    tag: u64,
    next_id: c_int,
    timers: BTreeMap<c_int, Timer>,
}

impl Timers {
    fn new() -> Timers {
        Timers { tag: TIMERS_LIVE, next_id: 0, timers: BTreeMap::new() }
    }

    fn add(&mut self, now: Instant, interval: Duration, handler: zmq_timer_fn, arg: *mut c_void) -> c_int {
        self.next_id = self.next_id.checked_add(1).unwrap_or(1);
        let id = self.next_id;
        self.timers.insert(id, Timer { interval, due: now + interval, handler, arg });
        id
    }

    fn get(&mut self, id: c_int) -> Result<&mut Timer> {
        self.timers.get_mut(&id).ok_or(Error::Invalid)
    }

    /// Milliseconds until the earliest deadline (rounded up), 0 when one is past, -1 when none.
    fn timeout(&self, now: Instant) -> c_long {
        match self.timers.values().map(|t| t.due).min() {
            None => -1,
            Some(due) if due <= now => 0,
            Some(due) => {
                let d = due - now;
                let ms = d.as_millis() + u128::from(!d.subsec_nanos().is_multiple_of(1_000_000));
                c_long::try_from(ms).unwrap_or(c_long::MAX)
            }
        }
    }

    /// Ids due at `now`, earliest first.
    fn due(&self, now: Instant) -> Vec<c_int> {
        let mut ids: Vec<(Instant, c_int)> =
            self.timers.iter().filter(|(_, t)| t.due <= now).map(|(&id, t)| (t.due, id)).collect();
        ids.sort();
        ids.into_iter().map(|(_, id)| id).collect()
    }
}

/// # Safety
/// `p` is null or a live pointer from `zmq_timers_new`, used by one thread at a time.
unsafe fn timers<'a>(p: *mut c_void) -> Result<&'a mut Timers> {
    non_null(p)?;
    // SAFETY: caller's contract.
    let t = unsafe { &mut *p.cast::<Timers>() };
    if t.tag != TIMERS_LIVE {
        return Err(Error::Fault);
    }
    Ok(t)
}

#[no_mangle]
pub extern "C" fn zmq_timers_new() -> *mut c_void {
    guard(std::ptr::null_mut(), || Ok(Box::into_raw(Box::new(Timers::new())).cast()))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_destroy(pp: *mut *mut c_void) -> c_int {
    guard(-1, || {
        non_null(pp)?;
        // SAFETY: `pp` points to the caller's handle variable.
        let p = unsafe { *pp };
        // SAFETY: C contract.
        unsafe { timers(p)? }.tag = 0;
        // SAFETY: from `Box::into_raw` in zmq_timers_new; the caller's variable is nulled.
        unsafe {
            drop(Box::from_raw(p.cast::<Timers>()));
            *pp = std::ptr::null_mut();
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_add(
    p: *mut c_void,
    interval: usize,
    handler: Option<zmq_timer_fn>,
    arg: *mut c_void,
) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let t = unsafe { timers(p)? };
        let handler = handler.ok_or(Error::Fault)?;
        Ok(t.add(Instant::now(), Duration::from_millis(interval as u64), handler, arg))
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_cancel(p: *mut c_void, id: c_int) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let t = unsafe { timers(p)? };
        t.timers.remove(&id).map(|_| 0).ok_or(Error::Invalid)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_set_interval(p: *mut c_void, id: c_int, interval: usize) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let timer = unsafe { timers(p)? }.get(id)?;
        timer.interval = Duration::from_millis(interval as u64);
        timer.due = Instant::now() + timer.interval;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_reset(p: *mut c_void, id: c_int) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let timer = unsafe { timers(p)? }.get(id)?;
        timer.due = Instant::now() + timer.interval;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_timeout(p: *mut c_void) -> c_long {
    // SAFETY: C contract.
    guard(-1, || Ok(unsafe { timers(p)? }.timeout(Instant::now())))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_timers_execute(p: *mut c_void) -> c_int {
    guard(-1, || {
        let now = Instant::now();
        // SAFETY: C contract.
        let due = unsafe { timers(p)? }.due(now);
        for id in due {
            // Look the timer up again: an earlier handler may have cancelled it. No borrow of
            // the set is held while the handler runs, since it may call back into this set.
            // SAFETY: C contract; the set outlives this call (a handler destroying it is a
            // caller error, as in libzmq).
            let (handler, arg) = match unsafe { timers(p)? }.timers.get_mut(&id) {
                Some(t) => {
                    t.due = now + t.interval;
                    (t.handler, t.arg)
                }
                None => continue,
            };
            // SAFETY: the caller's handler with the caller's argument.
            unsafe { handler(id, arg) };
        }
        Ok(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn nop(_: c_int, _: *mut c_void) {}

    #[test]
    fn timeout_and_due_follow_deadlines() {
        let t0 = Instant::now();
        let mut t = Timers::new();
        assert_eq!(t.timeout(t0), -1);
        let a = t.add(t0, Duration::from_millis(10), nop, std::ptr::null_mut());
        let b = t.add(t0, Duration::from_millis(5), nop, std::ptr::null_mut());
        assert_eq!((a, b), (1, 2));
        assert_eq!(t.timeout(t0), 5);
        assert_eq!(t.due(t0 + Duration::from_millis(7)), vec![b]);
        assert_eq!(t.due(t0 + Duration::from_millis(10)), vec![b, a]);
        assert_eq!(t.timeout(t0 + Duration::from_millis(20)), 0);
        assert!(t.get(99).is_err());
    }
}
