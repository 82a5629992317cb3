//! oxmq: ZeroMQ in Rust.
//!
//! Sockets with ZeroMQ's patterns over tcp, ipc, inproc and udp, speaking ZMTP 3.1/3.0 (and
//! 2.0/1.0 with older peers) on the wire, so they talk to libzmq, pyzmq, JeroMQ and other
//! implementations; NULL, PLAIN and CURVE security with ZAP. The protocol itself lives in the
//! sans-IO `zmtp` crate; this crate is the engine around it (pipes, I/O threads, socket types,
//! transports) and its Rust API, blocking ([`Socket`]) and async ([`asynch::AsyncSocket`], on
//! any executor). See ARCHITECTURE.md for the threading model and the life of a message.
//!
//! # A first exchange
//!
//! A [`Context`] holds the I/O threads; sockets come from it. Errors are [`Error`]s, one per
//! libzmq errno.
//!
//! ```
//! use oxmq::{Context, SocketType};
//! let ctx = Context::new();
//! let mut rep = ctx.socket(SocketType::Rep)?;
//! rep.bind("tcp://127.0.0.1:*")?;                 // a free port...
//! let endpoint = rep.last_endpoint()?;           // ...and which one it was
//! let mut req = ctx.socket(SocketType::Req)?;
//! req.connect(&endpoint)?;
//! req.send("hello", 0)?;
//! let request = rep.recv(0)?;
//! rep.send(request, 0)?;
//! assert_eq!(req.recv(0)?, "hello");
//! # Ok::<(), oxmq::Error>(())
//! ```
//!
//! # Patterns
//!
//! | pattern | types | what it does |
//! |---|---|---|
//! | request-reply | `Req`, `Rep`, `Dealer`, `Router` | RPC and its asynchronous forms; ROUTER addresses peers by routing id |
//! | publish-subscribe | `Pub`, `Sub`, `XPub`, `XSub` | fan-out filtered by prefix subscriptions |
//! | pipeline | `Push`, `Pull` | work spread round robin, results fair-queued |
//! | exclusive pair | `Pair` | one peer, both ways |
//! | raw tcp | `Stream` | plain tcp peers, no ZMTP |
//! | draft, thread-safe | `Client`, `Server`, `Radio`, `Dish`, `Scatter`, `Gather`, `Peer`, `Channel`, `Dgram` | single-part messages; [`SyncSocket`] shares one between threads |
//!
//! Publish-subscribe: a subscriber gets what starts with one of its subscriptions. Frames of a
//! multi-part message travel together ([`Socket::send_multipart`], [`Socket::recv_multipart`]).
//!
//! ```
//! use oxmq::{Context, SocketType};
//! let ctx = Context::new();
//! let mut publisher = ctx.socket(SocketType::Pub)?;
//! publisher.bind("inproc://weather")?;
//! let mut subscriber = ctx.socket(SocketType::Sub)?;
//! subscriber.connect("inproc://weather")?;
//! subscriber.subscribe("10001 ")?;
//! publisher.send_multipart(["90210 ", "72F"], 0)?;   // not subscribed: filtered out
//! publisher.send_multipart(["10001 ", "54F"], 0)?;
//! let update = subscriber.recv_multipart(0)?;
//! assert_eq!(update[1], "54F");
//! # Ok::<(), oxmq::Error>(())
//! ```
//!
//! Request-reply with ROUTER: each message received starts with the sender's routing id, and a
//! reply starting with it goes back to that peer.
//!
//! ```
//! use oxmq::{opt, Context, SocketType};
//! let ctx = Context::new();
//! let mut router = ctx.socket(SocketType::Router)?;
//! router.bind("inproc://broker")?;
//! let mut dealer = ctx.socket(SocketType::Dealer)?;
//! dealer.set_bytes(opt::ROUTING_ID, b"worker-7")?;
//! dealer.connect("inproc://broker")?;
//! dealer.send("ready", 0)?;
//! let m = router.recv_multipart(0)?;
//! assert_eq!(m[0], "worker-7");
//! router.send_multipart([m[0].clone(), "job".into()], 0)?;
//! assert_eq!(dealer.recv(0)?, "job");
//! # Ok::<(), oxmq::Error>(())
//! ```
//!
//! Pipeline: PUSH deals messages round robin to its PULL peers; a full peer (at its
//! high-water mark) makes `send` wait, or fail with [`Error::Again`] under
//! [`opt::DONTWAIT`].
//!
//! ```
//! use oxmq::{opt, Context, Error, SocketType};
//! let ctx = Context::new();
//! let mut pull = ctx.socket(SocketType::Pull)?;
//! pull.set_int(opt::RCVHWM, 1)?;
//! pull.bind("inproc://tasks")?;
//! let mut push = ctx.socket(SocketType::Push)?;
//! push.set_int(opt::SNDHWM, 1)?;
//! push.connect("inproc://tasks")?;
//! let mut sent = 0;
//! while push.send("task", opt::DONTWAIT).is_ok() {
//!     sent += 1;
//! }
//! assert_eq!(push.send("task", opt::DONTWAIT), Err(Error::Again));
//! for _ in 0..sent {
//!     assert_eq!(pull.recv(0)?, "task");
//! }
//! # Ok::<(), oxmq::Error>(())
//! ```
//!
//! # Messages, options, polling
//!
//! A frame is a [`Msg`]: bodies up to [`INLINE_CAP`] bytes live inside it, larger ones are
//! shared (cloning is a reference count). Options are set by libzmq's numbers ([`opt`]);
//! [`poll`] and [`Poller`] wait on several sockets and plain descriptors; [`Socket::monitor`]
//! reports connection events ([`monitor`]); [`proxy`] joins two sockets.
//!
//! ```
//! use oxmq::{opt, Context, PollItem, SocketType};
//! let ctx = Context::new();
//! let mut a = ctx.socket(SocketType::Pair)?;
//! a.bind("inproc://poll-demo")?;
//! let mut b = ctx.socket(SocketType::Pair)?;
//! b.connect("inproc://poll-demo")?;
//! b.send("ping", 0)?;
//! let mut items = [PollItem::socket(&mut a, opt::POLLIN)];
//! assert_eq!(oxmq::poll(&mut items, 1000)?, 1);
//! assert!(items[0].is_readable());
//! # Ok::<(), oxmq::Error>(())
//! ```
//!
//! # Security
//!
//! PLAIN checks a user name and password, CURVE encrypts and authenticates with long-term
//! keys ([`security`]). A server asks the ZAP handler of its context; [`auth::Authenticator`]
//! is one, configured with a [`auth::Policy`] (addresses, passwords, CURVE keys or
//! certificates). PLAIN, with the authenticator:
//!
//! ```
//! use oxmq::{auth::Authenticator, opt, Context, SocketType};
//! let ctx = Context::new();
//! let auth = Authenticator::start(&ctx)?;
//! auth.update(|p| { p.plain_passwords("*", [("admin", "secret")]); });
//! let mut server = ctx.socket(SocketType::Rep)?;
//! server.set_int(opt::PLAIN_SERVER, 1)?;
//! server.bind("tcp://127.0.0.1:*")?;
//! let mut client = ctx.socket(SocketType::Req)?;
//! client.set_bytes(opt::PLAIN_USERNAME, b"admin")?;
//! client.set_bytes(opt::PLAIN_PASSWORD, b"secret")?;
//! client.connect(&server.last_endpoint()?)?;
//! client.send("hi", 0)?;
//! let m = server.recv(0)?;
//! assert_eq!(m.gets("User-Id"), Some(&b"admin"[..]));   // what the handler said
//! # Ok::<(), oxmq::Error>(())
//! ```
//!
//! CURVE: the server has a key pair, the client its own and the server's public key; here the
//! authenticator admits only the client's key.
//!
//! ```
//! use oxmq::{auth::Authenticator, opt, security, Context, SocketType};
//! let ctx = Context::new();
//! let (server_public, server_secret) = security::curve_keypair();
//! let (client_public, client_secret) = security::curve_keypair();
//! let allowed = security::parse_curve_key(client_public.as_bytes())?;
//! let auth = Authenticator::start(&ctx)?;
//! auth.update(|p| { p.curve_callback("*", move |_domain, key| *key == allowed); });
//! let mut server = ctx.socket(SocketType::Pull)?;
//! server.set_int(opt::CURVE_SERVER, 1)?;
//! server.set_bytes(opt::CURVE_SECRETKEY, server_secret.as_bytes())?;
//! server.bind("tcp://127.0.0.1:*")?;
//! let mut client = ctx.socket(SocketType::Push)?;
//! client.set_bytes(opt::CURVE_SERVERKEY, server_public.as_bytes())?;
//! client.set_bytes(opt::CURVE_PUBLICKEY, client_public.as_bytes())?;
//! client.set_bytes(opt::CURVE_SECRETKEY, client_secret.as_bytes())?;
//! client.connect(&server.last_endpoint()?)?;
//! client.send("sealed", 0)?;
//! assert_eq!(server.recv(0)?, "sealed");
//! assert_eq!(server.get_int(opt::MECHANISM)?, security::CURVE);
//! # Ok::<(), oxmq::Error>(())
//! ```
//!
//! ZAP without the authenticator: any socket bound at `inproc://zeromq.zap.01` in the context
//! answers the requests (RFC 27); [`auth::parse_request`] and [`auth::Policy::authenticate`]
//! are the pieces the authenticator is made of.
//!
//! ```
//! use oxmq::{opt, Context, Msg, SocketType};
//! let ctx = Context::new();
//! let mut zap = ctx.socket(SocketType::Rep)?;
//! zap.bind("inproc://zeromq.zap.01")?;
//! let mut server = ctx.socket(SocketType::Pull)?;
//! server.set_bytes(opt::ZAP_DOMAIN, b"global")?;   // NULL with a domain asks ZAP too
//! server.bind("tcp://127.0.0.1:*")?;
//! let mut client = ctx.socket(SocketType::Push)?;
//! client.connect(&server.last_endpoint()?)?;
//! client.send("let me in", 0)?;
//! // [version, request id, domain, address, identity, mechanism]
//! let request = zap.recv_multipart(0)?;
//! assert_eq!((request[2].as_slice(), request[5].as_slice()), (&b"global"[..], &b"NULL"[..]));
//! let reply: [Msg; 6] = ["1.0".into(), request[1].clone(), "200".into(), "OK".into(), "anonymous".into(), Msg::new()];
//! zap.send_multipart(reply, 0)?;
//! assert_eq!(server.recv(0)?, "let me in");
//! # Ok::<(), oxmq::Error>(())
//! ```
//!
//! # Async
//!
//! [`asynch::AsyncSocket`] (cargo feature `async`, on by default) is the same socket with
//! futures for sending and receiving whole messages, a `Stream` and a `Sink`, woken by the
//! engine on any executor; see [`asynch`].
//!
//! # Threads
//!
//! A [`Socket`] is used by one thread at a time (`&mut self`) and may move between threads,
//! as a libzmq socket; the draft types can be shared through [`SyncSocket`]. A context is
//! shared freely (`Clone`). Dropping a socket delivers what it queued for up to LINGER;
//! [`Context::term`] waits for every socket to be dropped.

#![deny(unused_must_use)]
#![deny(missing_docs)]

mod arena;
#[cfg(feature = "async")]
pub mod asynch;
pub mod auth;
mod chunk;
mod context;
pub mod error;
mod io;
mod mailbox;
pub mod metrics;
pub mod monitor;
mod msg;
pub mod opt;
mod pipe;
mod poll;
pub mod properties;
pub mod proxy;
pub mod security;
mod socket;
mod transport;

pub use context::Context;
pub use error::{Error, Result};
pub use monitor::MonitorEvent;
pub use msg::{Msg, INLINE_CAP};
pub use poll::{poll, PollItem};
pub use poll::{AsSocket, PollEvent, Poller};
pub use properties::Properties;
pub use socket::{PeerStats, Socket, SocketStats, SocketType, SyncGuard, SyncSocket, WAIT_ALSO_MAX};

/// Entry points for the fuzz targets (`fuzz/`), built only under cargo-fuzz's `--cfg fuzzing`.
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    /// The engine's data path over arbitrary bytes (`io/session/fuzzing.rs`).
    pub fn engine_data(input: &[u8]) {
        crate::io::session::fuzzing::data_phase(input)
    }
}

#[cfg(test)]
mod smoke_tests;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
