//! Transports: how bytes (or, for inproc, pipes) reach a peer.
//!
//! `endpoint` parses addresses; `resolve` turns a tcp connect's into the addresses of one
//! attempt (destination, and the source to bind), with `interface` for interface names;
//! `listen` creates listening sockets on the caller's thread so a
//! bind error is reported by `bind` itself; `stream` is the connected byte stream (tcp or ipc)
//! an I/O session drives; `socks` is a SOCKS5 proxy's client handshake that such a stream may
//! go through first; `inproc` connects two sockets' pipes directly, with no codec.

pub(crate) mod dns;
pub(crate) mod endpoint;
pub(crate) mod filter;
pub(crate) mod inproc;
pub(crate) mod interface;
pub(crate) mod listen;
pub(crate) mod resolve;
pub(crate) mod socks;
pub(crate) mod stream;
pub(crate) mod udp;

use crate::socket::options::Options;

/// Applies SO_SNDBUF and SO_RCVBUF where the options set them (-1 keeps the kernel's). Set
/// before `connect` or `listen`, the window scale the handshake negotiates follows them.
pub(crate) fn set_buffer_sizes(sock: &socket2::Socket, o: &Options) -> std::io::Result<()> {
    if o.sndbuf >= 0 {
        sock.set_send_buffer_size(o.sndbuf as usize)?;
    }
    if o.rcvbuf >= 0 {
        sock.set_recv_buffer_size(o.rcvbuf as usize)?;
    }
    Ok(())
}
