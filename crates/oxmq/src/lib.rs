//! oxmq: ZeroMQ in Rust.
//!
//! Sockets with ZeroMQ's patterns (PAIR, PUB/SUB, REQ/REP, DEALER/ROUTER, PUSH/PULL) over tcp,
//! ipc and inproc, speaking ZMTP 3.1/3.0 on the wire so they interoperate with libzmq, JeroMQ
//! and other implementations. The protocol itself lives in the sans-IO `zmtp` crate; this crate
//! is the engine around it: pipes, I/O threads, socket types, transports. See ARCHITECTURE.md
//! for the threading model and the life of a message.
//!
//! ```no_run
//! let ctx = oxmq::Context::new();
//! let mut pull = ctx.socket(oxmq::SocketType::Pull)?;
//! pull.bind("tcp://127.0.0.1:5555")?;
//! let mut push = ctx.socket(oxmq::SocketType::Push)?;
//! push.connect("tcp://127.0.0.1:5555")?;
//! push.send("hello", 0)?;
//! assert_eq!(pull.recv(0)?, "hello");
//! # Ok::<(), oxmq::Error>(())
//! ```

#![deny(unused_must_use)]

mod arena;
#[cfg(feature = "async")]
pub mod asynch;
mod chunk;
pub mod auth;
mod context;
pub mod error;
mod io;
mod mailbox;
pub mod monitor;
mod msg;
pub mod opt;
mod pipe;
pub mod properties;
mod poll;
pub mod proxy;
pub mod security;
mod socket;
mod transport;

pub use context::Context;
pub use error::{Error, Result};
pub use monitor::MonitorEvent;
pub use msg::{Msg, INLINE_CAP};
pub use properties::Properties;
pub use poll::{poll, PollItem};
pub use poll::{AsSocket, PollEvent, Poller};
pub use socket::{PeerStats, Socket, SocketStats, SocketType, SyncGuard, SyncSocket, WAIT_ALSO_MAX};

#[cfg(test)]
mod smoke_tests;
#[cfg(test)]
mod testing;
