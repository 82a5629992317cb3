//! oxmq's counters in C: `oxmq_socket_stats` and `oxmq_socket_peer_stats` (declared in the oxmq
//! section of `zmq.h`), over `Socket::stats` and `Socket::peer_stats`, and the context's
//! metrics text, `oxmq_ctx_metrics`, over `Context::metrics_with`.

use crate::guard::{guard, non_null};
use crate::socket::sock_mut;
use oxmq::Error;
use std::ffi::{c_int, c_void};

/// Mirrors `oxmq_socket_stats_t` in zmq.h field for field.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct oxmq_socket_stats_t {
    pub msgs_in: u64,
    pub bytes_in: u64,
    pub msgs_out: u64,
    pub bytes_out: u64,
    pub dropped_hwm: u64,
    pub dropped_no_route: u64,
    pub dropped_oversized: u64,
    pub peers: u64,
    pub connections: u64,
    pub reconnects: u64,
    pub handshake_failures: u64,
    pub wire_bytes_in: u64,
    pub wire_bytes_out: u64,
    pub dropped_malformed: u64,
    pub dropped_unsendable: u64,
    pub dropped_disconnected: u64,
    pub dropped_vanished: u64,
    pub hwm_reached: u64,
    pub protocol_errors: u64,
}

/// Mirrors `oxmq_socket_peer_stats_t`.
#[repr(C)]
pub struct oxmq_socket_peer_stats_t {
    pub queued_out: u64,
    pub queued_in: i64,
}

#[no_mangle]
pub unsafe extern "C" fn oxmq_socket_stats(s: *mut c_void, stats: *mut oxmq_socket_stats_t, size: usize) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: a socket handle used by this thread.
        let sock = unsafe { sock_mut(s)? };
        non_null(stats)?;
        if size == 0 {
            return Err(Error::Invalid);
        }
        let st = sock.stats();
        let v = oxmq_socket_stats_t {
            msgs_in: st.msgs_in,
            bytes_in: st.bytes_in,
            msgs_out: st.msgs_out,
            bytes_out: st.bytes_out,
            dropped_hwm: st.dropped_hwm,
            dropped_no_route: st.dropped_no_route,
            dropped_oversized: st.dropped_oversized,
            peers: st.peers,
            connections: st.connections,
            reconnects: st.reconnects,
            handshake_failures: st.handshake_failures,
            wire_bytes_in: st.wire_bytes_in,
            wire_bytes_out: st.wire_bytes_out,
            dropped_malformed: st.dropped_malformed,
            dropped_unsendable: st.dropped_unsendable,
            dropped_disconnected: st.dropped_disconnected,
            dropped_vanished: st.dropped_vanished,
            hwm_reached: st.hwm_reached,
            protocol_errors: st.protocol_errors,
        };
        let n = size.min(std::mem::size_of::<oxmq_socket_stats_t>());
        // SAFETY: C promises `size` writable bytes at `stats`; we write at most that many, from
        // a local value of at least `n` bytes. A header older than this library passes a
        // smaller size and gets the leading fields it knows.
        unsafe { std::ptr::copy_nonoverlapping((&v as *const oxmq_socket_stats_t).cast::<u8>(), stats.cast::<u8>(), n) };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn oxmq_socket_peer_stats(s: *mut c_void, peers: *mut oxmq_socket_peer_stats_t, n: c_int) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: a socket handle used by this thread.
        let sock = unsafe { sock_mut(s)? };
        if n < 0 {
            return Err(Error::Invalid);
        }
        if n > 0 {
            non_null(peers)?;
        }
        let all = sock.peer_stats();
        for (i, p) in all.iter().take(n as usize).enumerate() {
            // SAFETY: C promises `n` writable entries at `peers`; i < n.
            unsafe {
                *peers.add(i) =
                    oxmq_socket_peer_stats_t { queued_out: p.queued_out, queued_in: p.queued_in.map_or(-1, |q| q as i64) };
            }
        }
        Ok(all.len() as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn oxmq_ctx_metrics(ctx: *mut c_void, buf: *mut std::ffi::c_char, size: usize, timeout_ms: c_int) -> c_int {
    guard(-1, || {
        let ctx = crate::ctx::lookup(ctx)?;
        if timeout_ms < 0 {
            return Err(Error::Invalid);
        }
        if size > 0 {
            non_null(buf)?;
        }
        let wait = std::time::Duration::from_millis(timeout_ms as u64);
        let text = ctx.metrics_with(oxmq::metrics::Format::Prometheus, wait);
        if size > 0 {
            let n = text.len().min(size - 1);
            // SAFETY: C promises `size` writable bytes at `buf`; we write n + 1 <= size.
            unsafe {
                std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
                *buf.add(n) = 0;
            }
        }
        Ok(c_int::try_from(text.len()).unwrap_or(c_int::MAX))
    })
}
