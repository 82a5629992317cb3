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
//! The same with a name server of its own on a free port, so it runs anywhere (a deployment
//! runs `oxmq-name-server` instead), and two handles: the exchange lives in one, the queue in
//! the other, and the name service tells the binder where the queue is.
//!
//! ```
//! use oxmq_wiring::{Backend, NameServer, Scope, Style, Wiring};
//! use std::time::Duration;
//! let ns = NameServer::start("tcp://127.0.0.1:*", Backend::Memory)?;
//! let mut producer = Wiring::new(ns.endpoint())?;
//! let mut consumer = Wiring::new(ns.endpoint())?;
//! consumer.create_queue("jobs", Scope::Global, "")?;
//! // LOAD_BALANCE: each message to one bound queue (the default, FAN_OUT, to every one).
//! let eid = producer.create_exchange_with("work", Scope::Global, "", Style::LoadBalance)?;
//! producer.bind("work", "jobs")?;
//! producer.send(eid, "job 1")?;
//! let m = consumer.receive_timeout(Some(Duration::from_secs(10)))?;
//! assert_eq!(m.as_slice(), b"job 1");
//! assert!(producer.lookup("jobs").is_ok(), "a global name is in the directory");
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
