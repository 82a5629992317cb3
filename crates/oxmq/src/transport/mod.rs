//! Transports: how bytes (or, for inproc, pipes) reach a peer.
//!
//! `endpoint` parses addresses; `resolve` turns a tcp connect's into the addresses of one
//! attempt (destination, and the source to bind), with `interface` for interface names;
//! `listen` creates listening sockets on the caller's thread so a
//! bind error is reported by `bind` itself; `connect` makes a connection (resolving a name off
//! the I/O thread, the non-blocking connect, a SOCKS5 proxy's handshake, `socks`); `stream` is
//! the connected byte stream (tcp or ipc) an I/O session drives; `inproc` connects two sockets' pipes directly, with no codec;
//! `ws` (ZWS 2.0) and `tls` (TLS 1.3 through rustls) are [`stream::ByteStream`] layers over tcp,
//! which `layer` puts on a layered endpoint's connections.

pub(crate) mod connect;
pub(crate) mod dns;
pub(crate) mod endpoint;
pub(crate) mod filter;
pub(crate) mod interface;
pub(crate) mod layer;
pub(crate) mod listen;
pub(crate) mod resolve;
pub(crate) mod socks;
pub(crate) mod stream;
pub(crate) mod tls;
pub(crate) mod ws;

/// The socket options a tcp or ipc stream takes (libzmq's transport knobs), as the socket had
/// them at bind or connect.
#[derive(Clone, Debug)]
pub(crate) struct StreamOptions {
    /// TCP_KEEPALIVE (-1: the system's), _CNT, _IDLE, _INTVL (-1: the system's).
    pub tcp_keepalive: i32,
    pub tcp_keepalive_cnt: i32,
    pub tcp_keepalive_idle: i32,
    pub tcp_keepalive_intvl: i32,
    /// SNDBUF, RCVBUF (-1: the kernel's).
    pub sndbuf: i32,
    pub rcvbuf: i32,
    /// TOS, PRIORITY (0: the kernel's), TCP_MAXRT in ms (0: the kernel's).
    pub tos: i32,
    pub priority: i32,
    pub tcp_maxrt: i32,
    /// BINDTODEVICE (empty: none).
    pub bound_device: Vec<u8>,
    /// IPV6: IPv6 addresses allowed (and preferred when a name has both).
    pub ipv6: bool,
    /// SOCKS_PROXY and its credentials, for tcp connects.
    pub socks: Option<connect::SocksProxy>,
}

impl Default for StreamOptions {
    fn default() -> StreamOptions {
        StreamOptions {
            tcp_keepalive: -1,
            tcp_keepalive_cnt: -1,
            tcp_keepalive_idle: -1,
            tcp_keepalive_intvl: -1,
            sndbuf: -1,
            rcvbuf: -1,
            tos: 0,
            priority: 0,
            tcp_maxrt: 0,
            bound_device: Vec::new(),
            ipv6: false,
            socks: None,
        }
    }
}

/// A listener's options: its streams', and the listener's own.
#[derive(Clone, Debug)]
pub(crate) struct ListenOptions {
    pub stream: StreamOptions,
    /// BACKLOG.
    pub backlog: i32,
    /// USE_FD: a bound descriptor the bind adopts (-1: none).
    pub use_fd: i32,
    /// TCP_ACCEPT_FILTER and IPC_FILTER_*.
    pub filters: filter::AcceptFilters,
}

/// Applies SO_SNDBUF and SO_RCVBUF where the options set them (-1 keeps the kernel's). Set
/// before `connect` or `listen`, the window scale the handshake negotiates follows them.
pub(crate) fn set_buffer_sizes(sock: &socket2::Socket, o: &StreamOptions) -> std::io::Result<()> {
    if o.sndbuf >= 0 {
        sock.set_send_buffer_size(o.sndbuf as usize)?;
    }
    if o.rcvbuf >= 0 {
        sock.set_recv_buffer_size(o.rcvbuf as usize)?;
    }
    Ok(())
}
