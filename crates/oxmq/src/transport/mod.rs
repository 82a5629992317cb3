//! Transports: how bytes (or, for inproc, pipes) reach a peer.
//!
//! `endpoint` parses addresses; `listen` creates listening sockets on the caller's thread so a
//! bind error is reported by `bind` itself; `stream` is the connected byte stream (tcp or ipc)
//! an I/O session drives; `socks` is a SOCKS5 proxy's client handshake that such a stream may
//! go through first; `inproc` connects two sockets' pipes directly, with no codec.

pub(crate) mod endpoint;
pub(crate) mod filter;
pub(crate) mod inproc;
pub(crate) mod listen;
pub(crate) mod socks;
pub(crate) mod stream;
pub(crate) mod udp;
