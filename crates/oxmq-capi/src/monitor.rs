//! `zmq_socket_monitor` and `zmq_socket_monitor_versioned` over `Socket::monitor_versioned`.
//!
//! As libzmq: a NULL address stops monitoring; the events int of `zmq_socket_monitor` is taken
//! as libzmq takes it (sign-extended, so a negative mask is refused by the 16-bit check of
//! version 1); the monitor socket may be PAIR, PUB or PUSH. Beyond libzmq, event version 3
//! (`ZMQ_EVENT_VERSION_OXMQ_ROUTING_ID` in zmq.h) is version 2 plus the peer's routing id.

use crate::guard::{c_str, guard};
use crate::socket::sock_mut;
use oxmq::{Error, SocketType};
use std::ffi::{c_char, c_int, c_void};

#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor(s: *mut c_void, addr: *const c_char, events: c_int) -> c_int {
    // SAFETY: same contract as zmq_socket_monitor_versioned.
    unsafe { zmq_socket_monitor_versioned(s, addr, events as i64 as u64, 1, SocketType::Pair.as_raw()) }
}

#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor_versioned(
    s: *mut c_void,
    addr: *const c_char,
    events: u64,
    event_version: c_int,
    kind: c_int,
) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: a socket handle used by this thread.
        let sock = unsafe { sock_mut(s)? };
        let endpoint = if addr.is_null() {
            None
        } else {
            // SAFETY: NUL-terminated string (C contract).
            let a = unsafe { c_str(addr)? };
            // libzmq refuses "" (it does not parse as an endpoint); only NULL stops.
            if a.is_empty() {
                return Err(Error::Invalid);
            }
            Some(a)
        };
        let version = u8::try_from(event_version).map_err(|_| Error::Invalid)?;
        let kind = SocketType::from_raw(kind).ok_or(Error::Invalid)?;
        sock.monitor_versioned(endpoint, events, version, kind)?;
        Ok(0)
    })
}
