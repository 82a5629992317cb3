//! The panic boundary and errno handling shared by every export.
//!
//! [`guard`] runs an export's body under `catch_unwind`; an `Err(e)` becomes `errno = e.errno()`
//! and the export's failure value, a panic becomes `EFAULT`. The success path costs nothing
//! beyond the body itself (unwinding uses landing pads, not checks).

use oxmq::Error;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// The errno of this thread's last failed call, for `zmq_errno()`.
    static LAST_ERRNO: Cell<i32> = const { Cell::new(0) };
}

/// Sets `errno` (the C library's, for callers that read `errno` directly) and remembers it for
/// `zmq_errno()`.
pub(crate) fn set_errno(e: i32) {
    // SAFETY: `__errno_location` returns a valid pointer to this thread's errno for the life of
    // the thread; writing an int through it is what C's `errno = e` does.
    unsafe { *libc::__errno_location() = e };
    LAST_ERRNO.with(|c| c.set(e));
}

/// The errno of this thread's last failed oxmq call.
pub(crate) fn last_errno() -> i32 {
    LAST_ERRNO.with(|c| c.get())
}

/// Runs `body`; on `Err(e)` sets errno from `e` and returns `fail`; on panic sets `EFAULT` and
/// returns `fail`. Never unwinds.
#[inline(always)]
pub(crate) fn guard<T>(fail: T, body: impl FnOnce() -> Result<T, Error>) -> T {
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
    if catch_unwind(AssertUnwindSafe(body)).is_err() {
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
