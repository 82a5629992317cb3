//! Making a connection to a tcp or ipc endpoint: where it goes, the non-blocking connect, and
//! a SOCKS5 proxy's handshake in between. The session that drives a [`Dialer`] registers the
//! streams with its reactor, raises the monitor events and decides when to try again; this
//! module never blocks the calling thread: a host name is looked up by [`spawn_lookup`] on a
//! thread of its own, and an ipc connect that cannot complete at once (the listener's backlog
//! is full) fails and is retried like a refused one.
//!
//! Names are looked up again on every attempt, so a peer that moved is found.

use super::endpoint::{Endpoint, Host, Source};
use super::resolve::{self, ConnectAddrs};
use super::socks::{Socks5, SocksError};
use super::stream::Stream;
use super::StreamOptions;
use crate::error::Result;
use std::io::{self, IoSlice};
use std::net::SocketAddr;
use std::sync::Arc;

/// Which end of a connection a stream is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// It connected.
    Client,
    /// It was accepted.
    Server,
}

/// Turns a connected stream into the one a transport speaks over it (TLS, WebSocket): a
/// [`ByteStream`](super::stream::ByteStream) layer that runs its own handshake inside the
/// stream's reads and writes. An error refuses the connection.
pub(crate) type Wrap = Arc<dyn Fn(Stream, Role) -> io::Result<Stream> + Send + Sync>;

/// What makes a session's connections, attempt after attempt: a [`Dialer`] for tcp and ipc
/// (with a layer on top for the transports that have one), or a test's.
pub(crate) trait Connector: Send {
    /// The endpoint as the application gave it.
    fn given(&self) -> &str;
    /// Where the last attempt went, when it went there directly (see [`Dialer`]).
    fn last_destination(&self) -> Option<SocketAddr> {
        None
    }
    /// Starts an attempt.
    fn start(&mut self) -> Dial;
    /// Goes on with what a [`Dial::Lookup`] found.
    fn resolved(&mut self, _found: Result<ConnectAddrs>) -> Dial {
        Dial::Unreachable
    }
}

/// SOCKS_PROXY ("host:port") with SOCKS_USERNAME and SOCKS_PASSWORD.
#[derive(Clone, Debug)]
pub(crate) struct SocksProxy {
    pub proxy: String,
    pub username: Vec<u8>,
    pub password: Vec<u8>,
}

/// The connecting side of one endpoint, across attempts.
pub(crate) struct Dialer {
    endpoint: Endpoint,
    /// The endpoint as the application gave it (`tcp://src;dst` included).
    given: String,
    options: StreamOptions,
    /// The addresses of the current (or last) attempt.
    addrs: Option<ConnectAddrs>,
    /// The layer connections carry, if any.
    wrap: Option<Wrap>,
}

/// What an attempt does next.
pub(crate) enum Dial {
    /// A name must be looked up first: [`spawn_lookup`] it, then [`Dialer::resolved`].
    Lookup(Lookup),
    /// The connect is under way: wait until the stream is writable, then [`Pending::progress`].
    Pending(Pending),
    /// Connected at once (ipc).
    Connected(Stream),
    /// Nothing to connect to this time (the name has no address): no socket was opened.
    Unreachable,
    /// The SOCKS_PROXY is no tcp address: no socket was opened.
    NoProxy,
    /// The connect failed at once with this errno (None: unknown); its socket is closed.
    Failed(Option<i32>),
}

/// A name lookup, run off the I/O thread (it may block on the name service).
pub(crate) struct Lookup {
    host: Host,
    port: u16,
    source: Option<Source>,
    ipv6: bool,
}

impl Lookup {
    /// Resolves (blocking).
    pub(crate) fn run(self) -> Result<ConnectAddrs> {
        resolve::lookup(&self.host, self.port, self.source.as_ref(), self.ipv6)
    }
}

/// Runs `lookup` on a thread of its own and hands its answer to `done` there.
pub(crate) fn spawn_lookup(lookup: Lookup, done: impl FnOnce(Result<ConnectAddrs>) + Send + 'static) -> io::Result<()> {
    std::thread::Builder::new().name("oxmq-resolve".into()).spawn(move || done(lookup.run())).map(drop)
}

impl Dialer {
    pub(crate) fn new(endpoint: Endpoint, given: String, options: StreamOptions) -> Dialer {
        Dialer { endpoint, given, options, addrs: None, wrap: None }
    }

    /// Connections carry the layer `wrap` makes (ws, wss, tls over tcp).
    pub(crate) fn with_layer(mut self, wrap: Wrap) -> Dialer {
        self.wrap = Some(wrap);
        self
    }
}

impl Connector for Dialer {
    fn given(&self) -> &str {
        &self.given
    }

    /// How libzmq names a connecting socket's connections once its first one has ended.
    fn last_destination(&self) -> Option<SocketAddr> {
        self.options.socks.is_none().then_some(self.addrs.map(|a| a.dest)).flatten()
    }

    fn start(&mut self) -> Dial {
        let Some(endpoint) = self.hop() else { return Dial::NoProxy };
        match endpoint {
            Endpoint::Tcp { host, port, source } if resolve::needs_lookup(&host, source.as_ref()) => {
                Dial::Lookup(Lookup { host, port, source, ipv6: self.options.ipv6 })
            }
            Endpoint::Tcp { host, port, source } => {
                let found = resolve::lookup(&host, port, source.as_ref(), self.options.ipv6);
                self.resolved(found)
            }
            Endpoint::Ipc(path) => match connect_ipc(&path).and_then(|s| layer(&self.wrap, s)) {
                Ok(s) => Dial::Connected(s),
                Err(e) => Dial::Failed(e.raw_os_error()),
            },
            Endpoint::Inproc(_) => Dial::Unreachable,
        }
    }

    fn resolved(&mut self, found: Result<ConnectAddrs>) -> Dial {
        let Ok(addrs) = found else { return Dial::Unreachable };
        self.addrs = Some(addrs);
        let stream = match connect_tcp(addrs.dest, &self.options, addrs.source) {
            Ok(s) => Stream::Tcp(s),
            Err(e) => return Dial::Failed(e.raw_os_error()),
        };
        match self.socks() {
            Ok(socks) => Dial::Pending(Pending { stream, socks, wrap: self.wrap.clone() }),
            Err(_) => Dial::Failed(None),
        }
    }
}

/// `stream` with the layer `wrap` makes, if any, as the connecting end.
fn layer(wrap: &Option<Wrap>, stream: Stream) -> io::Result<Stream> {
    match wrap {
        Some(w) => w(stream, Role::Client),
        None => Ok(stream),
    }
}

impl Dialer {
    /// Where the stream goes: the endpoint, or for tcp with a SOCKS_PROXY set, the proxy (None
    /// when that is no tcp address). Its `src;` is the source bound before connecting: with a
    /// proxy, the proxy address's, and the endpoint's is not used.
    fn hop(&self) -> Option<Endpoint> {
        match (&self.options.socks, &self.endpoint) {
            (Some(p), Endpoint::Tcp { .. }) => match Endpoint::parse(&format!("tcp://{}", p.proxy), false) {
                Ok(e @ Endpoint::Tcp { .. }) => Some(e),
                _ => None,
            },
            _ => Some(self.endpoint.clone()),
        }
    }

    /// The SOCKS5 handshake asking the proxy for the endpoint, when the stream goes through
    /// one. The endpoint's host goes to the proxy as written, unresolved.
    fn socks(&self) -> std::result::Result<Option<Box<Socks5>>, SocksError> {
        let (Some(p), Endpoint::Tcp { host, port, .. }) = (&self.options.socks, &self.endpoint) else {
            return Ok(None);
        };
        let host = match host {
            Host::Ip(ip) => ip.to_string(),
            Host::Name(n) => n.clone(),
            Host::Any => return Err(SocksError::Protocol),
        };
        Socks5::new(&host, *port, &p.username, &p.password).map(|s| Some(Box::new(s)))
    }
}

/// A tcp connect under way, then (through a SOCKS_PROXY) the proxy's handshake.
pub(crate) struct Pending {
    pub(crate) stream: Stream,
    socks: Option<Box<Socks5>>,
    wrap: Option<Wrap>,
}

/// Where a pending connect stands.
pub(crate) enum Progress {
    /// Connected: the stream is the peer's. `edges_taken`: readiness the reactor reported was
    /// used up here (the proxy's last reply may have come with the peer's first bytes), so
    /// the caller must read and write as if both were reported again.
    Connected { edges_taken: bool },
    /// Not yet: wait for the stream's next readiness.
    Wait,
    /// Failed with this errno (None: unknown, or the proxy refused).
    Failed(Option<i32>),
}

impl Pending {
    /// The connected stream, with its layer if the transport has one.
    pub(crate) fn into_stream(self) -> io::Result<Stream> {
        layer(&self.wrap, self.stream)
    }

    /// Moves the connect on as far as the stream allows (call when it is ready).
    pub(crate) fn progress(&mut self) -> Progress {
        match self.stream.take_error() {
            Ok(None) if self.stream.peer_connected() => {}
            Ok(None) => return Progress::Failed(None),
            Ok(Some(e)) | Err(e) => return Progress::Failed(e.raw_os_error()),
        }
        let Some(s) = &mut self.socks else { return Progress::Connected { edges_taken: false } };
        match socks_step(&mut self.stream, s) {
            Ok(true) => Progress::Connected { edges_taken: true },
            Ok(false) => Progress::Wait,
            Err(_) => Progress::Failed(None),
        }
    }
}

/// Moves a SOCKS5 handshake on as far as the stream allows: true once the proxy has connected
/// us, false when it must wait for the stream, `Err` when the proxy refused or failed.
fn socks_step(stream: &mut Stream, s: &mut Socks5) -> io::Result<bool> {
    let refused = |e: SocksError| io::Error::new(io::ErrorKind::ConnectionRefused, format!("{e:?}"));
    loop {
        if !s.to_send().is_empty() {
            match stream.write_vectored(&[IoSlice::new(s.to_send())]) {
                Ok(n) => s.sent(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            continue;
        }
        if s.done() {
            return Ok(true);
        }
        // Exactly what the reply still lacks: what follows it is the peer's.
        let mut buf = [0u8; 262];
        let want = s.wants().min(buf.len());
        match stream.read_plain(&mut buf[..want]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => s.received(&buf[..n]).map_err(refused)?,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Starts a non-blocking TCP connect, bound to BINDTODEVICE's interface and to a source
/// address when they are set. SNDBUF and RCVBUF are set before the connect, as libzmq does
/// (and as the listener does before `listen`): the window scale and clamp the handshake
/// negotiates follow the receive buffer then, whereas a buffer shrunk on an established
/// connection leaves a window the buffer cannot hold, and the stream crawls at one
/// retransmission timeout per window (8 KiB messages through 4 KiB buffers: a few a second).
fn connect_tcp(addr: SocketAddr, o: &StreamOptions, source: Option<SocketAddr>) -> io::Result<mio::net::TcpStream> {
    let device = &o.bound_device;
    if device.is_empty() && source.is_none() && o.sndbuf < 0 && o.rcvbuf < 0 {
        return mio::net::TcpStream::connect(addr);
    }
    let sock = socket2::Socket::new(socket2::Domain::for_address(addr), socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
    sock.set_cloexec(true)?;
    sock.set_nonblocking(true)?;
    super::set_buffer_sizes(&sock, o)?;
    if !device.is_empty() {
        sock.bind_device(Some(device))?;
    }
    if let Some(src) = source {
        // A fixed source port is reused by every reconnect, as libzmq's.
        sock.set_reuse_address(true)?;
        sock.bind(&src.into())?;
    }
    match sock.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(mio::net::TcpStream::from_std(sock.into()))
}

/// Connects a Unix stream socket without blocking: a listener completes it at once, or (its
/// backlog full) refuses with EAGAIN, which is retried as a failed connect.
fn connect_ipc(path: &str) -> io::Result<Stream> {
    let addr = match path.strip_prefix('@') {
        Some(name) => socket2::SockAddr::unix(format!("\0{name}"))?,
        None => socket2::SockAddr::unix(path)?,
    };
    let sock = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None)?;
    sock.set_cloexec(true)?;
    sock.set_nonblocking(true)?;
    sock.connect(&addr)?;
    let s: std::os::unix::net::UnixStream = sock.into();
    Ok(Stream::Ipc(mio::net::UnixStream::from_std(s)))
}
