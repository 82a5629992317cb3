//! Option numbers, with libzmq's values so the C ABI passes them through unchanged.
//!
//! Socket options go to [`crate::Socket::setsockopt`]/[`crate::Socket::getsockopt`], context
//! options to [`crate::Context::set`]/[`crate::Context::get`]. Integer options take a native
//! endian `i32` unless noted (`MAXMSGSIZE` is `i64`, `AFFINITY` is `u64`).

// Socket options.
pub const AFFINITY: i32 = 4;
pub const ROUTING_ID: i32 = 5;
pub const SUBSCRIBE: i32 = 6;
pub const UNSUBSCRIBE: i32 = 7;
pub const RATE: i32 = 8;
pub const RECOVERY_IVL: i32 = 9;
pub const SNDBUF: i32 = 11;
pub const RCVBUF: i32 = 12;
pub const RCVMORE: i32 = 13;
pub const FD: i32 = 14;
pub const EVENTS: i32 = 15;
pub const TYPE: i32 = 16;
pub const LINGER: i32 = 17;
pub const RECONNECT_IVL: i32 = 18;
pub const BACKLOG: i32 = 19;
pub const RECONNECT_IVL_MAX: i32 = 21;
pub const MAXMSGSIZE: i32 = 22;
pub const SNDHWM: i32 = 23;
pub const RCVHWM: i32 = 24;
pub const MULTICAST_HOPS: i32 = 25;
pub const RCVTIMEO: i32 = 27;
pub const SNDTIMEO: i32 = 28;
/// Deprecated in libzmq (the opposite of IPV6), still read and written by it.
pub const IPV4ONLY: i32 = 31;
pub const LAST_ENDPOINT: i32 = 32;
pub const ROUTER_MANDATORY: i32 = 33;
pub const TCP_KEEPALIVE: i32 = 34;
pub const TCP_KEEPALIVE_CNT: i32 = 35;
pub const TCP_KEEPALIVE_IDLE: i32 = 36;
pub const TCP_KEEPALIVE_INTVL: i32 = 37;
pub const TCP_ACCEPT_FILTER: i32 = 38;
pub const IMMEDIATE: i32 = 39;
pub const XPUB_VERBOSE: i32 = 40;
pub const ROUTER_RAW: i32 = 41;
pub const IPV6: i32 = 42;
pub const MECHANISM: i32 = 43;
pub const PLAIN_SERVER: i32 = 44;
pub const PLAIN_USERNAME: i32 = 45;
pub const PLAIN_PASSWORD: i32 = 46;
pub const CURVE_SERVER: i32 = 47;
pub const CURVE_PUBLICKEY: i32 = 48;
pub const CURVE_SECRETKEY: i32 = 49;
pub const CURVE_SERVERKEY: i32 = 50;
pub const PROBE_ROUTER: i32 = 51;
pub const REQ_CORRELATE: i32 = 52;
pub const REQ_RELAXED: i32 = 53;
pub const CONFLATE: i32 = 54;
pub const ZAP_DOMAIN: i32 = 55;
pub const ROUTER_HANDOVER: i32 = 56;
pub const TOS: i32 = 57;
pub const IPC_FILTER_PID: i32 = 58;
pub const IPC_FILTER_UID: i32 = 59;
pub const IPC_FILTER_GID: i32 = 60;
pub const CONNECT_ROUTING_ID: i32 = 61;
pub const HANDSHAKE_IVL: i32 = 66;
pub const XPUB_NODROP: i32 = 69;
pub const BLOCKY: i32 = 70;
pub const XPUB_MANUAL: i32 = 71;
pub const XPUB_WELCOME_MSG: i32 = 72;
pub const STREAM_NOTIFY: i32 = 73;
pub const INVERT_MATCHING: i32 = 74;
pub const HEARTBEAT_IVL: i32 = 75;
pub const HEARTBEAT_TTL: i32 = 76;
pub const HEARTBEAT_TIMEOUT: i32 = 77;
pub const XPUB_VERBOSER: i32 = 78;
pub const CONNECT_TIMEOUT: i32 = 79;
pub const TCP_MAXRT: i32 = 80;
pub const THREAD_SAFE: i32 = 81;
pub const MULTICAST_MAXTPDU: i32 = 84;
pub const USE_FD: i32 = 89;
pub const BINDTODEVICE: i32 = 92;
/// SO_PRIORITY of the socket's tcp connections (draft; 0: the kernel's default).
pub const PRIORITY: i32 = 112;
/// XPUB/XSUB (draft): the first frame of a multi-part message may be a subscription, and
/// the rest are only when it was.
pub const ONLY_FIRST_SUBSCRIBE: i32 = 108;
/// A SOCKS5 proxy ("host:port") that tcp connections go through (empty: none).
pub const SOCKS_PROXY: i32 = 68;
/// SOCKS5 username/password authentication (RFC 1929); an empty username means none.
pub const SOCKS_USERNAME: i32 = 99;
pub const SOCKS_PASSWORD: i32 = 100;
pub const LOOPBACK_FASTPATH: i32 = 94;
pub const MULTICAST_LOOP: i32 = 96;
pub const ZAP_ENFORCE_DOMAIN: i32 = 93;
pub const METADATA: i32 = 95;
pub const ROUTER_NOTIFY: i32 = 97;
pub const XPUB_MANUAL_LAST_VALUE: i32 = 98;
/// When a connecting socket stops reconnecting for good (draft): an `i32` mask of the
/// `RECONNECT_STOP_*` flags below; 0, the default, never. Readable.
pub const RECONNECT_STOP: i32 = 109;
/// A message the socket sends to each peer as the first message of every new connection,
/// made or accepted (draft): bytes, empty (the default) for none. Sent by ROUTER, DEALER,
/// CLIENT, SERVER and PEER; other types keep it unused, as libzmq. Write-only, as libzmq.
pub const HELLO_MSG: i32 = 110;
/// A message the socket receives from a peer that goes away (draft): bytes, empty (the
/// default) for none. Received by ROUTER (after the peer's routing-id frame, as any message),
/// SERVER and PEER (with the peer's routing id), for peers whose connection the socket
/// accepted once it was handshaken, and for inproc peers that connected to it; other types
/// keep it unused, as libzmq. Write-only, as libzmq.
pub const DISCONNECT_MSG: i32 = 111;

// ROUTER_NOTIFY flags.
pub const NOTIFY_CONNECT: i32 = 1;
pub const NOTIFY_DISCONNECT: i32 = 2;

// RECONNECT_STOP flags (libzmq 4.3.5's values; 4.3.4's header gave AFTER_DISCONNECT as 3).
/// Stop when a connect is refused (ECONNREFUSED: nothing listens there).
pub const RECONNECT_STOP_CONN_REFUSED: i32 = 0x1;
/// Stop when a connection ends before its handshake completed (HANDSHAKE_IVL expired, or the
/// peer closed it): a peer that is no ZMTP peer. A handshake refused on a protocol error ends
/// a connecting socket's attempts with or without this flag.
pub const RECONNECT_STOP_HANDSHAKE_FAILED: i32 = 0x2;
/// Once `disconnect` or `unbind` has been called on the socket (with this flag set), stop
/// when a connect is refused.
pub const RECONNECT_STOP_AFTER_DISCONNECT: i32 = 0x4;

// oxmq's own socket options, numbered far above libzmq's (which stop near 120) so they can
// never collide with a future libzmq option.

/// Level-triggered readiness for `FD`: an event mask (`POLLIN`, `POLLOUT` or both; 0, the
/// default, is libzmq's edge-triggered contract). While set, `FD` is readable exactly while
/// the socket can receive (`POLLIN`) or send (`POLLOUT`) without blocking.
pub const OXMQ_FD_LEVEL: i32 = 0x4f58_0001;

/// Microseconds a blocking receive keeps polling its connections before it sleeps, when the
/// socket's recent waits were that short (a request/reply exchange): a sleeping thread costs
/// tens of microseconds to wake, more than a loopback round trip. 0 turns it off; at most
/// 1,000,000. The default is 50, or the environment variable `OXMQ_RECV_SPIN_US` when set
/// (read once per process), and 0 on a machine with one CPU. See `ARCHITECTURE.md`.
pub const OXMQ_RECV_SPIN: i32 = 0x4f58_0002;

/// Connects that follow DNS: an `i32`, 0 (the default, libzmq's behaviour: a tcp connect to a
/// host name connects to the first address it resolves to, looked up again at each attempt)
/// or 1: a tcp connect to a host name made while it is set connects to *every* address the
/// name resolves to, as one endpoint whose peers the socket's pattern spreads over, and
/// follows the name: it is resolved again every [`OXMQ_DNS_IVL`] and whenever one of its
/// connections is lost or retried; new addresses are connected, and addresses that left the
/// name drain for LINGER (one interval when it is -1): load balancers send them nothing new,
/// what was queued is delivered, replies are received; they are disconnected when drained
/// (PUSH, SCATTER) or when the period ends, and what is still queued then is counted in
/// `SocketStats::dropped_vanished`. `disconnect` with the endpoint as given ends them all.
/// An endpoint that names an IP address, and every connect through SOCKS_PROXY, connect as
/// usual. See `socket/follow.rs` and the README's operations guide.
pub const OXMQ_DNS_FOLLOW: i32 = 0x4f58_0010;

/// Milliseconds between two lookups of a followed name ([`OXMQ_DNS_FOLLOW`]): an `i32` from
/// 100 to 86,400,000; 30,000 by default. Read at `connect`.
pub const OXMQ_DNS_IVL: i32 = 0x4f58_0011;

/// The socket's name in its metrics (`Context::metrics`, `OXMQ_METRICS_ADDR`): bytes, at
/// most 64, letters, digits and `_ - . : /` only (a Prometheus label value an operator chose,
/// never one that grows with traffic); empty (the default) for none. A trailing NUL is
/// ignored; read back NUL-terminated, as libzmq's string options.
pub const OXMQ_NAME: i32 = 0x4f58_0012;

// Context options.
pub const IO_THREADS: i32 = 1;
pub const MAX_SOCKETS: i32 = 2;
pub const SOCKET_LIMIT: i32 = 3;
pub const THREAD_PRIORITY: i32 = 3;
pub const THREAD_SCHED_POLICY: i32 = 4;
pub const MAX_MSGSZ: i32 = 5;
pub const MSG_T_SIZE: i32 = 6;
pub const THREAD_AFFINITY_CPU_ADD: i32 = 7;
pub const THREAD_AFFINITY_CPU_REMOVE: i32 = 8;
pub const THREAD_NAME_PREFIX: i32 = 9;
/// Context (draft): 1 (default) lets received bodies share the receive buffer; kept only.
pub const ZERO_COPY_RECV: i32 = 10;
pub const CTX_IPV6: i32 = 42;
pub const CTX_BLOCKY: i32 = 70;

// Send/recv flags.
pub const DONTWAIT: i32 = 1;
pub const SNDMORE: i32 = 2;

// Poll and ZMQ_EVENTS bits.
pub const POLLIN: i16 = 1;
pub const POLLOUT: i16 = 2;
pub const POLLERR: i16 = 4;
pub const POLLPRI: i16 = 8;

// Message properties (zmq_msg_get).
pub const MORE: i32 = 1;
pub const SRCFD: i32 = 2;
pub const SHARED: i32 = 3;

/// Option values as they cross the API: raw native-endian bytes, validated as libzmq validates
/// them (a value of the wrong length or out of range is `EINVAL`, never silently clamped).
pub(crate) mod value {
    use crate::error::{Error, Result};

    /// A native-endian i32 option value (exactly 4 bytes, as libzmq requires).
    pub(crate) fn int_val(v: &[u8]) -> Result<i32> {
        let a: [u8; 4] = v.try_into().map_err(|_| Error::Invalid)?;
        Ok(i32::from_ne_bytes(a))
    }

    pub(crate) fn int_min(v: &[u8], min: i32) -> Result<i32> {
        let n = int_val(v)?;
        if n < min {
            return Err(Error::Invalid);
        }
        Ok(n)
    }

    pub(crate) fn bool_val(v: &[u8]) -> Result<bool> {
        match int_val(v)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Error::Invalid),
        }
    }

    pub(crate) fn i64_val(v: &[u8]) -> Result<i64> {
        let a: [u8; 8] = v.try_into().map_err(|_| Error::Invalid)?;
        Ok(i64::from_ne_bytes(a))
    }

    pub(crate) fn u64_val(v: &[u8]) -> Result<u64> {
        let a: [u8; 8] = v.try_into().map_err(|_| Error::Invalid)?;
        Ok(u64::from_ne_bytes(a))
    }
}
