//! Option numbers, with libzmq's values so the C ABI passes them through unchanged.
//!
//! Socket options go to [`crate::Socket::setsockopt`]/[`crate::Socket::getsockopt`], context
//! options to [`crate::Context::set`]/[`crate::Context::get`]. Integer options take a native
//! endian `i32` unless noted (`MAXMSGSIZE` is `i64`, `AFFINITY` is `u64`). The meaning of each
//! is libzmq 4.3's (zmq_setsockopt(3), zmq_ctx_set(3)); oxmq's own start with `OXMQ_`.
//!
//! ```
//! use oxmq::{opt, Context, SocketType};
//! let ctx = Context::new();
//! ctx.set(opt::IO_THREADS, 2)?;
//! let mut s = ctx.socket(SocketType::Dealer)?;
//! s.set_int(opt::SNDHWM, 10_000)?;
//! s.set_int(opt::LINGER, 0)?;
//! s.set_bytes(opt::ROUTING_ID, b"worker-1")?;
//! assert_eq!(s.get_int(opt::SNDHWM)?, 10_000);
//! assert_eq!(s.get_bytes(opt::ROUTING_ID)?, b"worker-1");
//! assert_eq!(s.get_int(opt::TYPE)?, SocketType::Dealer.as_raw());
//! assert_eq!(s.set_int(opt::SNDHWM, -5), Err(oxmq::Error::Invalid));
//! # Ok::<(), oxmq::Error>(())
//! ```

// Socket options.
/// The I/O threads new connections may use (`u64` bit mask, as libzmq).
pub const AFFINITY: i32 = 4;
/// The socket's identity as its peers see it (bytes, 1 to 255; a ROUTER routes to it by this).
pub const ROUTING_ID: i32 = 5;
/// SUB/XSUB: receive messages starting with these bytes (empty: everything).
pub const SUBSCRIBE: i32 = 6;
/// SUB/XSUB: remove one subscription made with `SUBSCRIBE`.
pub const UNSUBSCRIBE: i32 = 7;
/// Multicast data rate in kbit/s (PGM; kept and reported only).
pub const RATE: i32 = 8;
/// Multicast recovery interval in ms (PGM; kept and reported only).
pub const RECOVERY_IVL: i32 = 9;
/// The kernel's send buffer size of each connection in bytes (-1: the system default).
pub const SNDBUF: i32 = 11;
/// The kernel's receive buffer size of each connection in bytes (-1: the system default).
pub const RCVBUF: i32 = 12;
/// Read only: 1 when the frame received last has more frames following.
pub const RCVMORE: i32 = 13;
/// Read only: the descriptor that polls readable when `EVENTS` may have changed (edge-triggered, see `OXMQ_FD_LEVEL`).
pub const FD: i32 = 14;
/// Read only: `POLLIN` and/or `POLLOUT`, whether a receive or a send would succeed now.
pub const EVENTS: i32 = 15;
/// Read only: the socket type's libzmq number.
pub const TYPE: i32 = 16;
/// How long (ms) a closed socket keeps delivering what is queued: -1 (default) forever, 0 not at all.
pub const LINGER: i32 = 17;
/// Milliseconds before a lost or refused connection is tried again (default 100; -1: never).
pub const RECONNECT_IVL: i32 = 18;
/// The listen backlog of tcp and ipc binds (default 100).
pub const BACKLOG: i32 = 19;
/// Upper bound (ms) of the reconnect interval, which doubles up to it (0, default: no doubling).
pub const RECONNECT_IVL_MAX: i32 = 21;
/// Largest frame accepted from a peer (`i64` bytes; -1, default: no limit); a larger one drops the connection.
pub const MAXMSGSIZE: i32 = 22;
/// High-water mark of each outbound queue, in messages (default 1000; 0: unlimited).
pub const SNDHWM: i32 = 23;
/// High-water mark of each inbound queue, in messages (default 1000; 0: unlimited).
pub const RCVHWM: i32 = 24;
/// Multicast TTL of udp RADIO datagrams (default 1).
pub const MULTICAST_HOPS: i32 = 25;
/// Timeout (ms) of a blocking receive: -1 (default) waits forever, 0 never waits; then `Again`.
pub const RCVTIMEO: i32 = 27;
/// Timeout (ms) of a blocking send: -1 (default) waits forever, 0 never waits; then `Again`.
pub const SNDTIMEO: i32 = 28;
/// Deprecated in libzmq (the opposite of IPV6), still read and written by it.
pub const IPV4ONLY: i32 = 31;
/// Read only: the endpoint of the last bind or connect, wildcards resolved (NUL-terminated).
pub const LAST_ENDPOINT: i32 = 32;
/// ROUTER: a message to an unknown peer fails with `HostUnreach`, one to a full peer with `Again`, instead of being dropped.
pub const ROUTER_MANDATORY: i32 = 33;
/// SO_KEEPALIVE of tcp connections: -1 (default) the system's, 0 off, 1 on.
pub const TCP_KEEPALIVE: i32 = 34;
/// TCP_KEEPCNT of tcp connections (-1: the system's).
pub const TCP_KEEPALIVE_CNT: i32 = 35;
/// TCP_KEEPIDLE of tcp connections in seconds (-1: the system's).
pub const TCP_KEEPALIVE_IDLE: i32 = 36;
/// TCP_KEEPINTVL of tcp connections in seconds (-1: the system's).
pub const TCP_KEEPALIVE_INTVL: i32 = 37;
/// Accept tcp connections only from this CIDR range (one per call; empty clears the list).
pub const TCP_ACCEPT_FILTER: i32 = 38;
/// Queue messages only for connections that are up (1), not for endpoints still connecting (0, default).
pub const IMMEDIATE: i32 = 39;
/// XPUB: pass every subscription upstream, duplicates too (default: new ones only).
pub const XPUB_VERBOSE: i32 = 40;
/// ROUTER in raw mode: plain tcp peers without ZMTP (libzmq's older form of STREAM).
pub const ROUTER_RAW: i32 = 41;
/// Use IPv6 (dual-stack) for tcp and udp endpoints (default 0: IPv4 only).
pub const IPV6: i32 = 42;
/// Read only: the security mechanism in force, 0 NULL, 1 PLAIN, 2 CURVE.
pub const MECHANISM: i32 = 43;
/// 1 makes the socket a PLAIN server (it checks passwords through ZAP).
pub const PLAIN_SERVER: i32 = 44;
/// PLAIN client: the user name (setting it makes the socket a PLAIN client).
pub const PLAIN_USERNAME: i32 = 45;
/// PLAIN client: the password.
pub const PLAIN_PASSWORD: i32 = 46;
/// 1 makes the socket a CURVE server (set `CURVE_SECRETKEY` too).
pub const CURVE_SERVER: i32 = 47;
/// CURVE: this socket's long-term public key (32 bytes or 40 Z85 characters).
pub const CURVE_PUBLICKEY: i32 = 48;
/// CURVE: this socket's long-term secret key (32 bytes or 40 Z85 characters).
pub const CURVE_SECRETKEY: i32 = 49;
/// CURVE client: the server's public key (setting it makes the socket a CURVE client).
pub const CURVE_SERVERKEY: i32 = 50;
/// ROUTER, DEALER, REQ: send an empty message to each new peer, announcing this socket to a ROUTER.
pub const PROBE_ROUTER: i32 = 51;
/// REQ: put a request id on each request and drop replies that do not match it.
pub const REQ_CORRELATE: i32 = 52;
/// REQ: allow a new request before the reply to the last one (that reply is then dropped).
pub const REQ_RELAXED: i32 = 53;
/// Keep only the newest message in each queue (single-part messages only).
pub const CONFLATE: i32 = 54;
/// The ZAP domain passed to the authentication handler (setting it enables ZAP for NULL too).
pub const ZAP_DOMAIN: i32 = 55;
/// ROUTER: a new peer with a routing id in use takes it over (default: the newcomer is refused).
pub const ROUTER_HANDOVER: i32 = 56;
/// IP_TOS of the socket's tcp connections.
pub const TOS: i32 = 57;
/// Accept ipc connections only from this process id (one per call).
pub const IPC_FILTER_PID: i32 = 58;
/// Accept ipc connections only from this user id (one per call).
pub const IPC_FILTER_UID: i32 = 59;
/// Accept ipc connections only from processes of this group id (one per call).
pub const IPC_FILTER_GID: i32 = 60;
/// ROUTER, STREAM: the routing id to give the peer of the next `connect`.
pub const CONNECT_ROUTING_ID: i32 = 61;
/// Milliseconds a new connection may take for its ZMTP handshake (default 30000; 0: no limit).
pub const HANDSHAKE_IVL: i32 = 66;
/// XPUB/PUB: a full subscriber makes `send` fail with `Again` instead of missing the message.
pub const XPUB_NODROP: i32 = 69;
/// Context (as `CTX_BLOCKY`) and socket: 1 (default) sockets linger forever unless LINGER says otherwise.
pub const BLOCKY: i32 = 70;
/// XPUB: the application decides subscriptions (`SUBSCRIBE` on the XPUB after reading one).
pub const XPUB_MANUAL: i32 = 71;
/// XPUB: a message sent to each new subscriber (bytes; empty: none).
pub const XPUB_WELCOME_MSG: i32 = 72;
/// STREAM: deliver an empty message when a peer connects or disconnects (default 1).
pub const STREAM_NOTIFY: i32 = 73;
/// PUB/SUB/XPUB/XSUB: deliver what does not match the subscriptions instead.
pub const INVERT_MATCHING: i32 = 74;
/// Milliseconds between ZMTP PINGs on each connection (0, default: no heartbeats).
pub const HEARTBEAT_IVL: i32 = 75;
/// The time to live (ms) this socket asks its peers to apply to it (rounded to 100 ms).
pub const HEARTBEAT_TTL: i32 = 76;
/// Milliseconds without traffic after a PING before the connection is dropped (default: `HEARTBEAT_IVL`).
pub const HEARTBEAT_TIMEOUT: i32 = 77;
/// XPUB: pass every subscription and every unsubscription upstream.
pub const XPUB_VERBOSER: i32 = 78;
/// Milliseconds a tcp connect may take before it is abandoned and retried (0, default: the kernel's).
pub const CONNECT_TIMEOUT: i32 = 79;
/// TCP_USER_TIMEOUT of tcp connections in ms (0: the system's).
pub const TCP_MAXRT: i32 = 80;
/// Read only: 1 for the thread-safe (draft) socket types.
pub const THREAD_SAFE: i32 = 81;
/// Largest multicast datagram (PGM; kept and reported only).
pub const MULTICAST_MAXTPDU: i32 = 84;
/// The next tcp or ipc bind adopts this already bound descriptor instead of making one (-1: none).
pub const USE_FD: i32 = 89;
/// SO_BINDTODEVICE for tcp listeners and connections: the interface name.
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
/// SOCKS5 password (with `SOCKS_USERNAME`).
pub const SOCKS_PASSWORD: i32 = 100;
/// wss/tls (draft): the private key, PEM text (PKCS#8, PKCS#1 or SEC1). Write-only, as libzmq;
/// a value that holds no key is EINVAL.
pub const WSS_KEY_PEM: i32 = 103;
/// wss/tls (draft): the certificate chain presented to the peer, PEM text, leaf first. A
/// server needs it (with the key); a client that has it offers it (mutual TLS). Write-only.
pub const WSS_CERT_PEM: i32 = 104;
/// wss/tls (draft): the trust anchors, PEM text: a client verifies the server against them; a
/// server that has them requires and verifies a client certificate. Write-only.
pub const WSS_TRUST_PEM: i32 = 105;
/// wss/tls (draft): the name a client expects in the server's certificate (default: the
/// endpoint's host). Write-only.
pub const WSS_HOSTNAME: i32 = 106;
/// wss/tls (draft): 1 to trust the system's anchors too (default 0). Write-only.
pub const WSS_TRUST_SYSTEM: i32 = 107;
/// Windows' loopback fast path (kept and reported only).
pub const LOOPBACK_FASTPATH: i32 = 94;
/// udp RADIO: receive one's own multicast datagrams (default 1).
pub const MULTICAST_LOOP: i32 = 96;
/// Refuse connections when no ZAP handler answers, for NULL and CURVE too (libzmq 4.3).
pub const ZAP_ENFORCE_DOMAIN: i32 = 93;
/// A property (`X-Name:value`) sent to peers in the handshake, readable there with `Msg::gets`.
pub const METADATA: i32 = 95;
/// ROUTER: receive a two-frame notice (routing id, empty) when a peer connects and/or disconnects (`NOTIFY_*`).
pub const ROUTER_NOTIFY: i32 = 97;
/// XPUB manual mode: also send the last value to each new subscriber.
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
/// `ROUTER_NOTIFY` flag: notify when a peer connects.
pub const NOTIFY_CONNECT: i32 = 1;
/// `ROUTER_NOTIFY` flag: notify when a peer disconnects.
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
/// (read once per process), and 0 on a machine with one CPU. An async receive spins within
/// the same window, yielding between looks (module `asynch`). See `ARCHITECTURE.md`.
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
/// Context: the number of I/O threads (default 1); set before the first socket.
pub const IO_THREADS: i32 = 1;
/// Context: the most sockets the context may hold at once (default 1023).
pub const MAX_SOCKETS: i32 = 2;
/// Context, read only: the largest `MAX_SOCKETS` accepted.
pub const SOCKET_LIMIT: i32 = 3;
/// Context: the scheduling priority of I/O threads.
pub const THREAD_PRIORITY: i32 = 3;
/// Context: the scheduling policy of I/O threads.
pub const THREAD_SCHED_POLICY: i32 = 4;
/// Context: the largest message size (default `i32::MAX`); larger sends fail with `MsgSize`.
pub const MAX_MSGSZ: i32 = 5;
/// Context, read only: the size of libzmq's `zmq_msg_t` (64).
pub const MSG_T_SIZE: i32 = 6;
/// Context: add a CPU to the I/O threads' affinity set.
pub const THREAD_AFFINITY_CPU_ADD: i32 = 7;
/// Context: remove a CPU from the I/O threads' affinity set.
pub const THREAD_AFFINITY_CPU_REMOVE: i32 = 8;
/// Context: a prefix for the I/O threads' names.
pub const THREAD_NAME_PREFIX: i32 = 9;
/// Context (draft): 1 (default) lets received bodies share the receive buffer; kept only.
pub const ZERO_COPY_RECV: i32 = 10;
/// Context: the default of the sockets' `IPV6` option.
pub const CTX_IPV6: i32 = 42;
/// Context: 1 (default) sockets linger forever by default; 0 makes their LINGER default 0.
pub const CTX_BLOCKY: i32 = 70;

// Send/recv flags.
/// Send/receive flag: never wait; `Again` instead.
pub const DONTWAIT: i32 = 1;
/// Send flag: more frames of this message follow.
pub const SNDMORE: i32 = 2;

// Poll and ZMQ_EVENTS bits.
/// Poll/`EVENTS` bit: a message can be received.
pub const POLLIN: i16 = 1;
/// Poll/`EVENTS` bit: a message can be sent.
pub const POLLOUT: i16 = 2;
/// Poll bit: an error on a plain descriptor.
pub const POLLERR: i16 = 4;
/// Poll bit: urgent data on a plain descriptor.
pub const POLLPRI: i16 = 8;

// Message properties (zmq_msg_get).
/// Message property (`zmq_msg_get`): more frames follow.
pub const MORE: i32 = 1;
/// Message property: the descriptor of the connection the message came on (deprecated in libzmq).
pub const SRCFD: i32 = 2;
/// Message property: 1 when the body is shared with other messages.
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
