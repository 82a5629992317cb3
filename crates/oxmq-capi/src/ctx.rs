//! Context handles: `zmq_ctx_*`, `zmq_init`, `zmq_term`.
//!
//! A context handle is a heap box that C holds as `void *`. Live handles are kept in a registry,
//! so a handle that was terminated (or was never a context) gives `EFAULT` as in libzmq, without
//! reading freed memory. Contexts are created and terminated rarely, so the registry lock is off
//! every hot path; lookups return a clone of the `Context` (an `Arc`), so a concurrent
//! `zmq_ctx_term` cannot free what another thread is using.

use crate::guard::{guard, non_null};
use oxmq::{opt, Context, Error, Result};
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

const CTX_TAG: u64 = 0x6f78_6d71_5f63_7478; // "oxmq_ctx"

/// What a `void *context` points to: a unique address with a recognisable word behind it.
/// The `Context` itself lives in the registry, so that lookups can clone it under the lock.
struct CtxHandle {
    tag: u64,
}

/// Live context handles, by address.
static LIVE: Mutex<Vec<(usize, Context)>> = Mutex::new(Vec::new());

fn registry() -> std::sync::MutexGuard<'static, Vec<(usize, Context)>> {
    // A panic while holding the lock leaves the list itself consistent (push/remove are atomic
    // with respect to unwinding), so a poisoned lock is still usable.
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The context behind a C handle. Null or unknown handle → `EFAULT` (libzmq's answer).
pub(crate) fn lookup(p: *mut c_void) -> Result<Context> {
    non_null(p)?;
    let addr = p as usize;
    registry().iter().find(|(a, _)| *a == addr).map(|(_, c)| c.clone()).ok_or(Error::Fault)
}

fn new_handle(ctx: Context) -> *mut c_void {
    let h = Box::into_raw(Box::new(CtxHandle { tag: CTX_TAG }));
    registry().push((h as usize, ctx));
    h.cast()
}

/// Terminates the context, then frees the handle. Blocks until every socket is closed.
fn term(p: *mut c_void) -> Result<c_int> {
    let ctx = lookup(p)?;
    ctx.term()?;
    let mut live = registry();
    if let Some(i) = live.iter().position(|(a, _)| *a == p as usize) {
        live.swap_remove(i);
        drop(live);
        // SAFETY: `p` was produced by `Box::into_raw` in `new_handle` and was still registered;
        // we removed it from the registry under the lock, so no other call frees it again.
        let h = unsafe { Box::from_raw(p.cast::<CtxHandle>()) };
        debug_assert_eq!(h.tag, CTX_TAG);
    }
    Ok(0)
}

#[no_mangle]
pub extern "C" fn zmq_ctx_new() -> *mut c_void {
    guard(std::ptr::null_mut(), || Ok(new_handle(Context::new())))
}

#[no_mangle]
pub extern "C" fn zmq_init(io_threads: c_int) -> *mut c_void {
    guard(std::ptr::null_mut(), || {
        if io_threads < 0 {
            return Err(Error::Invalid);
        }
        let ctx = Context::new();
        ctx.set(opt::IO_THREADS, io_threads)?;
        Ok(new_handle(ctx))
    })
}

#[no_mangle]
pub extern "C" fn zmq_ctx_term(context: *mut c_void) -> c_int {
    guard(-1, || term(context))
}

#[no_mangle]
pub extern "C" fn zmq_term(context: *mut c_void) -> c_int {
    guard(-1, || term(context))
}

#[no_mangle]
pub extern "C" fn zmq_ctx_destroy(context: *mut c_void) -> c_int {
    guard(-1, || term(context))
}

#[no_mangle]
pub extern "C" fn zmq_ctx_shutdown(context: *mut c_void) -> c_int {
    guard(-1, || {
        lookup(context)?.shutdown();
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn zmq_ctx_set(context: *mut c_void, option: c_int, optval: c_int) -> c_int {
    guard(-1, || {
        lookup(context)?.set(option, optval)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn zmq_ctx_get(context: *mut c_void, option: c_int) -> c_int {
    guard(-1, || lookup(context)?.get(option))
}
