//! Draft exports: RADIO/DISH `zmq_join`/`zmq_leave`, PEER's `zmq_connect_peer`, ROUTER's
//! `zmq_socket_get_peer_state`, `zmq_socket_monitor_pipes_stats`, and the context-option
//! functions (integer options).

use crate::ctx;
use crate::guard::{c_str, guard, non_null};
use crate::socket::sock_mut;
use oxmq::Error;
use std::ffi::{c_char, c_int, c_void};

/// `zmq_socket_monitor_pipes_stats`: one ZMQ_EVENT_PIPES_STATS event per pipe on the
/// socket's monitor (EINVAL when no version-2 monitor wants it, EAGAIN with no pipes).
#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor_pipes_stats(s: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        unsafe { sock_mut(s)? }.monitor_pipes_stats()?;
        Ok(0)
    })
}

/// DISH: joins a group (EINVAL for a group joined already or longer than 255 bytes;
/// ENOTSUP on other socket types).
#[no_mangle]
pub unsafe extern "C" fn zmq_join(s: *mut c_void, group: *const c_char) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: a socket handle used by this thread.
        let sock = unsafe { sock_mut(s)? };
        // SAFETY: NUL-terminated string (C contract).
        let g = unsafe { c_str_bytes(group)? };
        sock.join(g)?;
        Ok(0)
    })
}

/// DISH: leaves a group (EINVAL if not joined).
#[no_mangle]
pub unsafe extern "C" fn zmq_leave(s: *mut c_void, group: *const c_char) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: a socket handle used by this thread.
        let sock = unsafe { sock_mut(s)? };
        // SAFETY: NUL-terminated string (C contract).
        let g = unsafe { c_str_bytes(group)? };
        sock.leave(g)?;
        Ok(0)
    })
}

/// The bytes of a C string (not required to be UTF-8: groups are bytes).
///
/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn c_str_bytes<'a>(p: *const c_char) -> oxmq::Result<&'a [u8]> {
    non_null(p)?;
    // SAFETY: non-null and NUL-terminated (caller's contract).
    Ok(unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes())
}

/// PEER: connects and returns the new peer's routing id; 0 on failure (libzmq's failure
/// value), with errno set (ENOTSUP on other socket types, EFAULT with ZMQ_IMMEDIATE).
#[no_mangle]
pub unsafe extern "C" fn zmq_connect_peer(s: *mut c_void, addr: *const c_char) -> u32 {
    guard(0, || {
        // SAFETY: C contract.
        let sock = unsafe { sock_mut(s)? };
        // SAFETY: NUL-terminated string (C contract).
        let addr = unsafe { c_str(addr)? };
        sock.connect_peer(addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_socket_get_peer_state(s: *mut c_void, routing_id: *const c_void, routing_id_size: usize) -> c_int {
    guard(-1, || {
        // SAFETY: C contract.
        let sock = unsafe { sock_mut(s)? };
        let id: &[u8] = if routing_id_size == 0 {
            &[]
        } else {
            non_null(routing_id)?;
            // SAFETY: non-null, `routing_id_size` readable bytes (C contract).
            unsafe { std::slice::from_raw_parts(routing_id.cast::<u8>(), routing_id_size) }
        };
        Ok(c_int::from(sock.peer_state(id)?))
    })
}

/// Context options through the extended interface: `ZMQ_THREAD_NAME_PREFIX` as text (at most
/// 16 bytes), the integer options as 4-byte values.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_set_ext(context: *mut c_void, option: c_int, optval: *const c_void, optvallen: usize) -> c_int {
    guard(-1, || {
        let ctx = ctx::lookup(context)?;
        non_null(optval)?;
        // SAFETY: non-null with `optvallen` readable bytes (C contract).
        let v = unsafe { std::slice::from_raw_parts(optval.cast::<u8>(), optvallen) };
        ctx.set_bytes(option, v)?;
        Ok(0)
    })
}

/// Reads a context option through the extended interface (see `zmq_ctx_set_ext`); EINVAL
/// when `*optvallen` is too small, else the length written in `*optvallen`.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_get_ext(
    context: *mut c_void,
    option: c_int,
    optval: *mut c_void,
    optvallen: *mut usize,
) -> c_int {
    guard(-1, || {
        let ctx = ctx::lookup(context)?;
        non_null(optval)?;
        non_null(optvallen)?;
        let v = ctx.get_bytes(option)?;
        // SAFETY: valid pointers (C contract); at most `*optvallen` bytes are written.
        unsafe {
            if *optvallen < v.len() {
                return Err(Error::Invalid);
            }
            std::ptr::copy_nonoverlapping(v.as_ptr(), optval.cast::<u8>(), v.len());
            *optvallen = v.len();
        }
        Ok(0)
    })
}
