//! libzmq's C ABI over oxmq: built as `libzmq.so.5` / `libzmq.a`, so a program compiled against
//! libzmq's `zmq.h` (Debian's, or `include/zmq.h` beside this crate) runs on oxmq unmodified.
//!
//! This crate is a thin shell. Each exported function validates its pointers, turns them into
//! references to the Rust objects behind them, calls the `oxmq` API and maps the result back to
//! libzmq's convention (`-1` or `NULL` plus `errno`). Nothing here decides messaging behaviour.
//!
//! Contracts shared by every export:
//! - A panic never unwinds into C: each body runs inside [`guard::guard`], which turns a panic
//!   into `EFAULT`.
//! - Null pointers give `EFAULT`; a closed socket gives `ENOTSOCK`; a closed or never-initialised
//!   `zmq_msg_t` gives `EFAULT`; bad option lengths and unknown options give `EINVAL`.
//! - `errno` is set through libc (`__errno_location`) and also remembered per thread for
//!   `zmq_errno()`.
//!
//! Layout: `guard` (panic boundary, errno), `ctx`, `socket`, `msg` (`zmq_msg_t`), `poll`
//! (`zmq_poll`, `zmq_poller_*`), `proxy`, `monitor` (`zmq_socket_monitor`), `timers`, `z85`, `util` (version, errors, atomics,
//! stopwatch, threads) and `draft` (draft functions that oxmq cannot honour yet).

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(unused_must_use)]
#![allow(non_camel_case_types)]
// Exported functions take raw pointers from C by definition; each one checks them for null and
// documents its contract in zmq.h, which is where C callers read it.
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::not_unsafe_ptr_arg_deref)]

mod ctx;
mod curve;
mod draft;
mod guard;
mod monitor;
mod msg;
mod poll;
mod proxy;
mod socket;
mod stats;
mod timers;
mod util;
mod wiring;
mod z85;
