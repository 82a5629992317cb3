//! `zmq_proxy`, `zmq_proxy_steerable` and the deprecated `zmq_device`, over `oxmq::proxy`.
//!
//! Rust's proxy takes one `&mut Socket` per role, so the handles must be distinct sockets:
//! passing the same socket twice (libzmq allows a ROUTER as both frontend and backend) gives
//! `EINVAL` here.

use crate::guard::guard;
use crate::socket::sock_mut;
use oxmq::{Error, Result, Socket};
use std::ffi::{c_int, c_void};

/// Resolves the four handles (capture and control may be null) to distinct sockets.
///
/// # Safety
/// Non-null handles come from `zmq_socket` and are used only by this thread for the call.
unsafe fn resolve<'a>(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
    control: *mut c_void,
) -> Result<(&'a mut Socket, &'a mut Socket, Option<&'a mut Socket>, Option<&'a mut Socket>)> {
    let handles = [frontend, backend, capture, control];
    for (i, a) in handles.iter().enumerate() {
        if !a.is_null() && handles[i + 1..].contains(a) {
            return Err(Error::Invalid);
        }
    }
    // SAFETY: distinct handles (checked above), so the `&mut`s do not alias; caller's contract
    // for the rest.
    unsafe {
        let opt = |p: *mut c_void| if p.is_null() { Ok(None) } else { sock_mut(p).map(Some) };
        Ok((sock_mut(frontend)?, sock_mut(backend)?, opt(capture)?, opt(control)?))
    }
}

#[no_mangle]
pub unsafe extern "C" fn zmq_proxy(frontend: *mut c_void, backend: *mut c_void, capture: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: socket handles used by this thread while the proxy runs.
        let (f, b, cap, _) = unsafe { resolve(frontend, backend, capture, std::ptr::null_mut())? };
        oxmq::proxy::proxy(f, b, cap)?;
        // Only a terminating error ends a plain proxy.
        Err(Error::Term)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_proxy_steerable(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
    control: *mut c_void,
) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: socket handles used by this thread while the proxy runs.
        let (f, b, cap, ctl) = unsafe { resolve(frontend, backend, capture, control)? };
        oxmq::proxy::proxy_steerable(f, b, cap, ctl)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_device(_kind: c_int, frontend: *mut c_void, backend: *mut c_void) -> c_int {
    // SAFETY: same contract as zmq_proxy.
    unsafe { zmq_proxy(frontend, backend, std::ptr::null_mut()) }
}
