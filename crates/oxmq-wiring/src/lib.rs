//! The ØMQ wiring API over oxmq: named **exchanges** (where an application sends) and
//! **queues** (where it receives), bound to each other by name, with local, process and
//! global scope, and a **name service** that tells every process where a global name lives.
//!
//! ```no_run
//! use oxmq_wiring::{Scope, Wiring};
//! let mut w = Wiring::new("")?;                 // "": the embedded name service
//! let eid = w.create_exchange("E", Scope::Global, "")?;
//! w.create_queue("Q", Scope::Global, "")?;
//! w.bind("E", "Q")?;
//! w.send(eid, &b"hello"[..])?;
//! assert_eq!(w.receive()?.as_slice(), b"hello");
//! # Ok::<(), oxmq_wiring::WiringError>(())
//! ```
//!
//! Layout: `wiring` (the handle: scopes, binding, send and receive), `client` (the name
//! service client: requests, heartbeats, watching moved names, the embedded service),
//! `server` (the name server and its directory), `protocol` (OXWIRE/1, pure), `etcd` (the
//! etcd directory over its JSON gateway). The C front end is `crates/oxmq-capi/src/wiring.rs`
//! (`zmq_wiring.h`), the Python one `python/oxmq/wiring.py`.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(unused_must_use)]

mod client;
mod error;
pub mod etcd;
pub mod protocol;
mod server;
mod wiring;

pub use client::{NameClient, Timing};
pub use error::{Result, WiringError};
pub use protocol::{Kind, Record, Style};
pub use server::{Backend, NameServer, DEFAULT_PORT};
pub use wiring::{service_endpoint, Options, Scope, Wiring};
