//! The panic boundary and errno handling shared by every export.
//!
//! [`guard`] runs an export's body under `catch_unwind`; an `Err(e)` becomes `errno = e.errno()`
//! and the export's failure value, a panic becomes `EFAULT`. The success path costs nothing
//! beyond the body itself (unwinding uses landing pads, not checks).

use oxmq::{Error, Socket, SyncGuard};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// Locks on thread-safe sockets taken during the current export (see [`hold`]).
    static HELD: RefCell<Vec<SyncGuard<'static>>> = const { RefCell::new(Vec::new()) };
    static HOLDING: Cell<bool> = const { Cell::new(false) };
}

/// Keeps a thread-safe socket locked until the current export returns, and gives its socket
/// to the export like any other. This is how every export that takes a socket serialises on
/// a thread-safe (draft) socket without changing its code; the exports that may block (send
/// and receive) do not come here but use the socket's own waiting calls.
///
/// # Safety
/// The socket behind `g` must outlive the current export call: sockets live in handle slots
/// that are never freed, and closing a socket while another thread is inside a call on it is
/// the application's error (as in libzmq).
pub(crate) unsafe fn hold<'a>(g: SyncGuard<'_>) -> &'a mut Socket {
    // SAFETY: the guard is released (dropped) at the end of this export call by `release`,
    // before the socket it borrows can go away (caller's contract); 'static only lets it sit in
    // the thread-local until then.
    let mut g: SyncGuard<'static> = unsafe { std::mem::transmute::<SyncGuard<'_>, SyncGuard<'static>>(g) };
    let p: *mut Socket = &mut *g;
    HELD.with(|h| h.borrow_mut().push(g));
    if !HOLDING.with(|c| c.replace(true)) {
        HOLDERS.fetch_add(1, Ordering::Relaxed);
    }
    // SAFETY: the Socket lives inside the SyncSocket, not inside the guard, so moving the
    // guard into the Vec does not move it; the lock it represents is held until `release`.
    unsafe { &mut *p }
}

/// [`hold`] of `ts`'s lock, unless this export already holds it: then the same socket again
/// (an export may reach a socket twice, as a poller's wait does across its epoll rounds; a
/// second lock would deadlock on the first).
///
/// # Safety
/// As [`hold`]; the caller uses one returned reference at a time.
pub(crate) unsafe fn hold_sync<'a>(ts: &oxmq::SyncSocket) -> &'a mut Socket {
    if HOLDERS.load(Ordering::Relaxed) != 0 && HOLDING.with(|c| c.get()) {
        let again = HELD.with(|h| h.borrow_mut().iter_mut().find(|g| g.guards(ts)).map(|g| &mut **g as *mut Socket));
        if let Some(p) = again {
            // SAFETY: the lock is held by this thread until the export returns (`release`);
            // the socket lives in the SyncSocket, not in the guard.
            return unsafe { &mut *p };
        }
    }
    // SAFETY: caller's contract.
    unsafe { hold(ts.lock()) }
}

/// Threads holding locks from [`hold`] right now. Checked before the thread-local: in a
/// shared library every thread-local access is a call (`__tls_get_addr`), too dear for each
/// export when no thread-safe socket is in use.
static HOLDERS: AtomicUsize = AtomicUsize::new(0);

/// Releases the locks [`hold`] took (one load of a global when nobody holds any).
#[inline(always)]
fn release() {
    if HOLDERS.load(Ordering::Relaxed) != 0 {
        release_slow();
    }
}

#[cold]
#[inline(never)]
fn release_slow() {
    if HOLDING.with(|c| c.get()) {
        HOLDING.with(|c| c.set(false));
        let held = HELD.with(|h| std::mem::take(&mut *h.borrow_mut()));
        HOLDERS.fetch_sub(1, Ordering::Relaxed);
        drop(held);
    }
}

/// Sets `errno`, the C library's, which `zmq_errno()` returns.
pub(crate) fn set_errno(e: i32) {
    // SAFETY: `__errno_location` returns a valid pointer to this thread's errno for the life of
    // the thread; writing an int through it is what C's `errno = e` does.
    unsafe { *libc::__errno_location() = e };
}

/// This thread's `errno` now, as libzmq's `zmq_errno` returns it: a caller that cleared it
/// reads 0, not the code of an older failure.
pub(crate) fn last_errno() -> i32 {
    // SAFETY: as in `set_errno`; a read.
    unsafe { *libc::__errno_location() }
}

/// Runs `body`; on `Err(e)` sets errno from `e` and returns `fail`; on panic sets `EFAULT` and
/// returns `fail`. Never unwinds.
#[inline(always)]
pub(crate) fn guard<T>(fail: T, body: impl FnOnce() -> Result<T, Error>) -> T {
    // Locks taken with `hold` are released inside the boundary on the normal path (cheapest:
    // the body's result stays in registers), and after it on a panic.
    match catch_unwind(AssertUnwindSafe(|| {
        let r = body();
        release();
        r
    })) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            set_errno(e.errno());
            fail
        }
        Err(_) => {
            release();
            set_errno(libc::EFAULT);
            fail
        }
    }
}

/// [`guard`] for exports that never lock a thread-safe socket with [`hold`] (the `zmq_msg_*`
/// family: sending and receiving use the socket's own waiting calls), so there is nothing to
/// release: saves a load and a branch per call on the per-message path, and lets a body that
/// cannot panic compile to no unwinding code at all.
#[inline(always)]
pub(crate) fn guard_unlocked<T>(fail: T, body: impl FnOnce() -> Result<T, Error>) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            set_errno(e.errno());
            fail
        }
        Err(_) => {
            set_errno(libc::EFAULT);
            fail
        }
    }
}

/// Like [`guard`] for exports that return nothing (`void`): a panic is swallowed (errno EFAULT).
#[inline(always)]
pub(crate) fn guard_void(body: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(|| {
        body();
        release();
    }))
    .is_err()
    {
        release();
        set_errno(libc::EFAULT);
    }
}

/// `Err(Fault)` when `p` is null.
#[inline(always)]
pub(crate) fn non_null<T>(p: *const T) -> Result<(), Error> {
    if p.is_null() {
        Err(Error::Fault)
    } else {
        Ok(())
    }
}

/// Reads a NUL-terminated C string as UTF-8. Null → `EFAULT`; invalid UTF-8 → `EINVAL`.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn c_str<'a>(p: *const libc::c_char) -> Result<&'a str, Error> {
    non_null(p)?;
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    let s = unsafe { std::ffi::CStr::from_ptr(p) };
    s.to_str().map_err(|_| Error::Invalid)
}

/// Converts a byte count to the `int` libzmq returns, saturating as libzmq's casts would not
/// (sizes over 2 GiB are not representable in its return type either).
#[inline(always)]
pub(crate) fn len_to_int(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
