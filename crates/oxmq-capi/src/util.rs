//! Library-level exports: errors, version, capabilities, atomic counters, stopwatch, sleep and
//! threads.

use crate::guard::{guard, guard_void, last_errno, non_null};
use std::ffi::{c_char, c_int, c_ulong, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

#[no_mangle]
pub extern "C" fn zmq_errno() -> c_int {
    last_errno()
}

#[no_mangle]
pub extern "C" fn zmq_strerror(errnum: c_int) -> *const c_char {
    // libzmq's own texts where it has them; the C library's for the rest. Both are static
    // strings the caller must not free.
    match oxmq::error::libzmq_text(errnum) {
        Some(t) => t.as_ptr(),
        // SAFETY: strerror returns a pointer to a static (or thread-local) string, as libzmq
        // returns it.
        None => unsafe { libc::strerror(errnum) },
    }
}

/// The libzmq version whose ABI and behaviour oxmq provides.
pub const VERSION: (c_int, c_int, c_int) = (4, 3, 5);

#[no_mangle]
pub unsafe extern "C" fn zmq_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) {
    guard_void(|| {
        for (p, v) in [(major, VERSION.0), (minor, VERSION.1), (patch, VERSION.2)] {
            if !p.is_null() {
                // SAFETY: non-null pointer to the caller's int.
                unsafe { *p = v };
            }
        }
    })
}

/// Capabilities oxmq really has. Transports tcp and inproc are always present and not asked
/// about by libzmq's `zmq_has`, nor is PLAIN (always built in libzmq); "curve" is the CURVE
/// mechanism and key functions; "ws" and "wss" are the ZWS 2.0 transports (libzmq has them in
/// drafts builds only; oxmq takes the endpoints from any program), "tls" oxmq's ZMTP over
/// TLS. GSSAPI is absent. "draft" is answered by the caller's header:
/// a program built without the draft API (any libzmq 4.3 header without
/// ZMQ_BUILD_DRAFT_API, Debian's included) calls `zmq_has` and hears 0, as from a libzmq
/// built without drafts, which such programs check; oxmq's zmq.h with ZMQ_BUILD_DRAFT_API
/// maps `zmq_has` to [`oxmq_has_draft_api`], which says 1 (every draft socket type is
/// there).
const CAPABILITIES: &[&str] = &["ipc", "curve", "ws", "wss", "tls"];

#[no_mangle]
pub unsafe extern "C" fn zmq_has(capability: *const c_char) -> c_int {
    guard(0, || {
        // SAFETY: null or NUL-terminated (C contract).
        let cap = unsafe { crate::guard::c_str(capability)? };
        Ok(c_int::from(CAPABILITIES.contains(&cap)))
    })
}

/// `zmq_has` for programs built with oxmq's zmq.h and ZMQ_BUILD_DRAFT_API: "draft" is 1.
#[no_mangle]
pub unsafe extern "C" fn oxmq_has_draft_api(capability: *const c_char) -> c_int {
    guard(0, || {
        // SAFETY: null or NUL-terminated (C contract).
        let cap = unsafe { crate::guard::c_str(capability)? };
        Ok(c_int::from(cap == "draft" || CAPABILITIES.contains(&cap)))
    })
}

// --- atomic counters -------------------------------------------------------------------------

/// # Safety
/// `p` is null or a live pointer from `zmq_atomic_counter_new`.
unsafe fn counter<'a>(p: *mut c_void) -> Option<&'a AtomicI32> {
    // SAFETY: caller's contract.
    unsafe { p.cast::<AtomicI32>().as_ref() }
}

#[no_mangle]
pub extern "C" fn zmq_atomic_counter_new() -> *mut c_void {
    guard(std::ptr::null_mut(), || Ok(Box::into_raw(Box::new(AtomicI32::new(0))).cast()))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_set(p: *mut c_void, value: c_int) {
    guard_void(|| {
        // SAFETY: C contract.
        if let Some(c) = unsafe { counter(p) } {
            c.store(value, Ordering::SeqCst);
        }
    })
}

/// Returns the value before the increment (libzmq's contract).
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_inc(p: *mut c_void) -> c_int {
    // SAFETY: C contract.
    guard(-1, || Ok(unsafe { counter(p) }.map_or(-1, |c| c.fetch_add(1, Ordering::SeqCst))))
}

/// Returns 1 while the counter stays above zero after the decrement, 0 when it reaches zero.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_dec(p: *mut c_void) -> c_int {
    // SAFETY: C contract.
    guard(-1, || Ok(unsafe { counter(p) }.map_or(-1, |c| c_int::from(c.fetch_sub(1, Ordering::SeqCst) - 1 > 0))))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_value(p: *mut c_void) -> c_int {
    // SAFETY: C contract.
    guard(-1, || Ok(unsafe { counter(p) }.map_or(-1, |c| c.load(Ordering::SeqCst))))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_destroy(pp: *mut *mut c_void) {
    guard_void(|| {
        if pp.is_null() {
            return;
        }
        // SAFETY: `pp` points to the caller's handle variable, which holds null or a pointer
        // from zmq_atomic_counter_new; it is nulled so the counter cannot be freed twice.
        unsafe {
            let p = *pp;
            if !p.is_null() {
                drop(Box::from_raw(p.cast::<AtomicI32>()));
                *pp = std::ptr::null_mut();
            }
        }
    })
}

// --- stopwatch, sleep ------------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn zmq_stopwatch_start() -> *mut c_void {
    guard(std::ptr::null_mut(), || Ok(Box::into_raw(Box::new(Instant::now())).cast()))
}

fn micros(start: &Instant) -> c_ulong {
    c_ulong::try_from(start.elapsed().as_micros()).unwrap_or(c_ulong::MAX)
}

#[no_mangle]
pub unsafe extern "C" fn zmq_stopwatch_intermediate(watch: *mut c_void) -> c_ulong {
    // SAFETY: null or a live pointer from zmq_stopwatch_start (C contract).
    guard(0, || Ok(unsafe { watch.cast::<Instant>().as_ref() }.map_or(0, micros)))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_stopwatch_stop(watch: *mut c_void) -> c_ulong {
    guard(0, || {
        if watch.is_null() {
            return Ok(0);
        }
        // SAFETY: a live pointer from zmq_stopwatch_start, freed here once (C contract).
        let start = unsafe { Box::from_raw(watch.cast::<Instant>()) };
        Ok(micros(&start))
    })
}

#[no_mangle]
pub extern "C" fn zmq_sleep(seconds: c_int) {
    guard_void(|| {
        if seconds > 0 {
            std::thread::sleep(Duration::from_secs(seconds as u64));
        }
    })
}

// --- threads ---------------------------------------------------------------------------------

/// `void zmq_thread_fn (void *)`.
pub type zmq_thread_fn = unsafe extern "C" fn(arg: *mut c_void);

/// A caller argument handed to another thread (libzmq's contract makes that the caller's
/// responsibility).
struct SendPtr(*mut c_void);
// SAFETY: the C caller hands `arg` to the new thread; its thread-safety is the caller's contract,
// exactly as with libzmq's zmq_threadstart.
unsafe impl Send for SendPtr {}

#[no_mangle]
pub unsafe extern "C" fn zmq_threadstart(func: Option<zmq_thread_fn>, arg: *mut c_void) -> *mut c_void {
    guard(std::ptr::null_mut(), || {
        let func = func.ok_or(oxmq::Error::Fault)?;
        let arg = SendPtr(arg);
        let handle = std::thread::Builder::new()
            .name("zmq-user".into())
            .spawn(move || {
                let arg = arg;
                // SAFETY: the caller's thread function with the caller's argument. A C
                // function cannot unwind into Rust here.
                unsafe { func(arg.0) }
            })
            .map_err(oxmq::Error::from)?;
        Ok(Box::into_raw(Box::new(handle)).cast())
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_threadclose(thread: *mut c_void) {
    guard_void(|| {
        if non_null(thread).is_err() {
            return;
        }
        // SAFETY: a pointer from zmq_threadstart, consumed exactly once (C contract).
        let handle = unsafe { Box::from_raw(thread.cast::<std::thread::JoinHandle<()>>()) };
        let _ = handle.join();
    })
}
