//! Helpers shared by the integration tests: transports, unique endpoints, waiting on events with
//! a deadline, and the macro that instantiates a test once per transport.
//!
//! Nothing here sleeps to let things settle. A test waits on something observable (a message, a
//! send that stops returning EAGAIN, a poll) and gives up at a deadline.

#![allow(dead_code)]

pub mod raw;

use oxmq::{opt, Context, Error, Msg, Socket, SocketType};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long any single wait may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(10);
/// Receive timeout for messages that must arrive.
pub const RCV_MS: i32 = 5_000;
/// How long a test waits for a message that must NOT arrive.
pub const QUIET_MS: i32 = 150;

/// The transports every conformance test runs over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Ipc,
    Inproc,
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A name no other test in any process uses.
pub fn unique(tag: &str) -> String {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("oxmq-{tag}-{}-{n}-{nanos:x}", std::process::id())
}

impl Transport {
    /// An endpoint to bind. For tcp it uses a wildcard port; call [`bound_endpoint`] after the
    /// bind to learn where to connect.
    pub fn bind_endpoint(self) -> String {
        match self {
            Transport::Tcp => "tcp://127.0.0.1:*".to_string(),
            Transport::Ipc => format!("ipc://{}", ipc_path()),
            Transport::Inproc => format!("inproc://{}", unique("inproc")),
        }
    }

    /// A concrete endpoint that nothing is bound to yet, for connect-before-bind. For tcp this
    /// is a port the kernel just handed out and that was released again.
    pub fn fresh_endpoint(self) -> String {
        match self {
            Transport::Tcp => format!("tcp://127.0.0.1:{}", free_port()),
            _ => self.bind_endpoint(),
        }
    }

    /// Whether the transport reconnects by itself (inproc has no reconnect in libzmq).
    pub fn reconnects(self) -> bool {
        self != Transport::Inproc
    }

    /// Whether bytes go through a ZMTP codec (MAXMSGSIZE applies; libzmq ignores it on inproc).
    pub fn is_wire(self) -> bool {
        self != Transport::Inproc
    }
}

/// A unique path for an ipc socket, under the temp directory.
pub fn ipc_path() -> String {
    std::env::temp_dir().join(format!("{}.sock", unique("ipc"))).to_string_lossy().into_owned()
}

/// A tcp port that was free a moment ago.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local_addr").port()
}

/// Binds `s` on a fresh endpoint of `t` and returns the endpoint peers connect to.
pub fn bind(s: &mut Socket, t: Transport) -> String {
    let ep = t.bind_endpoint();
    s.bind(&ep).unwrap_or_else(|e| panic!("bind {ep}: {e:?}"));
    bound_endpoint(s, &ep)
}

/// Where to connect after binding `requested` (resolves the tcp wildcard port).
pub fn bound_endpoint(s: &mut Socket, requested: &str) -> String {
    if requested.starts_with("tcp://") {
        s.last_endpoint().expect("LAST_ENDPOINT")
    } else {
        requested.to_string()
    }
}

/// A socket with a receive timeout, so a lost message fails the test instead of hanging it.
pub fn socket(ctx: &Context, kind: SocketType) -> Socket {
    let mut s = ctx.socket(kind).unwrap_or_else(|e| panic!("socket {kind:?}: {e:?}"));
    s.set_int(opt::RCVTIMEO, RCV_MS).expect("RCVTIMEO");
    s.set_int(opt::SNDTIMEO, RCV_MS).expect("SNDTIMEO");
    // Sockets left with queued messages must not hold up the end of a test.
    s.set_int(opt::LINGER, 0).expect("LINGER");
    s
}

/// A bound/connected pair: `a` binds, `b` connects.
pub fn pair(ctx: &Context, t: Transport, a: SocketType, b: SocketType) -> (Socket, Socket, String) {
    let mut sa = socket(ctx, a);
    let ep = bind(&mut sa, t);
    let mut sb = socket(ctx, b);
    sb.connect(&ep).unwrap_or_else(|e| panic!("connect {ep}: {e:?}"));
    (sa, sb, ep)
}

/// Receives one frame that must arrive, with its bytes.
pub fn recv_bytes(s: &mut Socket) -> Vec<u8> {
    match s.recv(0) {
        Ok(m) => m.to_vec(),
        Err(e) => panic!("recv on {:?}: {e:?}", s.socket_type()),
    }
}

/// Receives one whole message that must arrive, as byte vectors.
pub fn recv_parts(s: &mut Socket) -> Vec<Vec<u8>> {
    match s.recv_multipart(0) {
        Ok(parts) => parts.iter().map(|m| m.to_vec()).collect(),
        Err(e) => panic!("recv_multipart on {:?}: {e:?}", s.socket_type()),
    }
}

/// Sends a whole message (blocking, bounded by SNDTIMEO).
pub fn send_parts(s: &mut Socket, parts: &[&[u8]]) {
    s.send_multipart(parts.iter().copied(), 0).unwrap_or_else(|e| panic!("send_multipart on {:?}: {e:?}", s.socket_type()));
}

/// Asserts nothing arrives within [`QUIET_MS`].
pub fn assert_quiet(s: &mut Socket) {
    let old = s.get_int(opt::RCVTIMEO).expect("RCVTIMEO");
    s.set_int(opt::RCVTIMEO, QUIET_MS).expect("RCVTIMEO");
    let r = s.recv(0);
    s.set_int(opt::RCVTIMEO, old).expect("RCVTIMEO");
    match r {
        Err(Error::Again) => {}
        Ok(m) => panic!("unexpected message {:?}", String::from_utf8_lossy(&m)),
        Err(e) => panic!("unexpected error {e:?}"),
    }
}

/// Sends from a client whose handshake is refused (ZAP's ERROR, a TLS certificate refused): the
/// refusal ends its connecting session, and the pipe with it, as libzmq's engine_error does on
/// a protocol error. If that happens before this send, there is nowhere to queue the message,
/// and a blocking send would wait forever. So the send does not wait: queued or refused, the
/// test then checks that nothing arrives.
pub fn send_refused(client: &mut Socket, body: &str) {
    match client.send(body, opt::DONTWAIT) {
        Ok(()) | Err(Error::Again) => {}
        Err(e) => panic!("send: {e:?}"),
    }
}

/// Receives with DONTWAIT-like semantics but waiting up to `ms`: `None` on timeout.
pub fn try_recv(s: &mut Socket, ms: i64) -> Option<Msg> {
    let mut items = [oxmq::PollItem::Socket { socket: s, events: opt::POLLIN, revents: 0 }];
    let n = oxmq::poll(&mut items, ms).expect("poll");
    if n == 0 {
        return None;
    }
    match s.recv(opt::DONTWAIT) {
        Ok(m) => Some(m),
        Err(Error::Again) => None,
        Err(e) => panic!("recv: {e:?}"),
    }
}

/// Repeats `attempt` until it returns `Some`, polling at most every millisecond, up to
/// [`DEADLINE`]. Used for conditions that have no event of their own (a peer's routing id
/// becoming known to ROUTER_MANDATORY).
pub fn eventually<T>(what: &str, mut attempt: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = attempt() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Establishes a PUB→SUB path: publishes `probe` (a message matching one of the subscriber's
/// prefixes) until the subscriber receives one. Returns how many probes were published. Later
/// reads must skip leftover probes.
pub fn sync_pub_sub(publ: &mut Socket, sub: &mut Socket, probe: &[u8]) -> usize {
    let end = Instant::now() + DEADLINE;
    let mut sent = 0;
    loop {
        publ.send(probe, opt::DONTWAIT).expect("PUB send never fails");
        sent += 1;
        // Anything else arriving meanwhile is a leftover probe of an earlier sync.
        while let Some(m) = try_recv(sub, 5) {
            if &m[..] == probe {
                return sent;
            }
        }
        assert!(Instant::now() < end, "subscription never reached the publisher");
    }
}

/// Receives the next frame whose bytes do not start with `skip`.
pub fn recv_skipping(s: &mut Socket, skip: &[u8]) -> Vec<u8> {
    loop {
        let m = recv_bytes(s);
        if !m.starts_with(skip) {
            return m;
        }
    }
}

/// Runs `f` in a thread and fails the test if it does not finish within `limit`.
pub fn within<T: Send + 'static>(limit: Duration, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(_) => panic!("{what} did not finish within {limit:?}"),
    }
}

/// Instantiates each listed `fn name(t: Transport)` as `tcp::name`, `ipc::name`, `inproc::name`.
#[macro_export]
macro_rules! per_transport {
    ($($name:ident),* $(,)?) => {
        mod tcp {
            $( #[test] fn $name() { super::$name($crate::common::Transport::Tcp) } )*
        }
        mod ipc {
            $( #[test] fn $name() { super::$name($crate::common::Transport::Ipc) } )*
        }
        mod inproc {
            $( #[test] fn $name() { super::$name($crate::common::Transport::Inproc) } )*
        }
    };
}
