//! A connected byte stream as an I/O session drives it: non-blocking reads into spare buffer
//! capacity, vectored writes, and the socket options libzmq applies.
//!
//! This is the seam new transports slot into. A session runs over any [`Stream`]: a plain tcp
//! or ipc socket, or a [`ByteStream`] layer (TLS, WebSocket, a test's in-memory stream) over a
//! descriptor whose readiness the reactor watches. Nothing above this file knows which.

use super::StreamOptions;
use mio::event::Source;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::io::{self, IoSlice, Read};
use std::os::fd::{AsRawFd, RawFd};

/// A byte stream layered over a descriptor the reactor watches (TLS records, WebSocket frames,
/// a test's stream). The contract the session relies on, with edge-triggered readiness:
///
/// * `read_into` returns bytes while the layer has any to give (buffered ones included) and
///   `WouldBlock` only when it has none and its descriptor has nothing more; Ok(0) is the end;
/// * `write_vectored` accepts bytes (possibly keeping some of its own output back), and says
///   `WouldBlock` only when it accepted none because its descriptor is full;
/// * `flush` writes what the layer kept back: false while the descriptor is full (the reactor
///   then reports room to write, and the session calls it again);
/// * a layer that has a handshake of its own (TLS, a WebSocket upgrade) runs it inside these
///   calls, and never gives out or sends application bytes before it is complete.
pub(crate) trait ByteStream: Send {
    /// The descriptor whose readiness drives the stream (registered with the reactor).
    fn fd(&self) -> RawFd;
    /// Reads into the spare capacity of `buf`; the bytes read (0: the end of the stream).
    fn read_into(&mut self, buf: &mut bytes::BytesMut) -> io::Result<usize>;
    /// Writes (or takes) some of `bufs`; how many bytes.
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// Writes what the layer kept back: true when nothing is left.
    fn flush(&mut self) -> io::Result<bool> {
        Ok(true)
    }
    /// Ends the write side once what was written has gone (TLS close_notify, a WebSocket
    /// close, then the transport's FIN).
    fn shutdown_write(&mut self) -> io::Result<()>;
    /// Bytes sent that the peer has not acknowledged (tcp's TIOCOUTQ), when known: a closing
    /// session waits for them before it closes (`io/session/close.rs`).
    fn unacknowledged(&self) -> Option<i32> {
        None
    }
    /// The stream's two addresses as monitor events name them (`tcp://...`, `ws://...`).
    fn addrs(&self) -> (String, String);
    /// The peer's address for ZAP and the Peer-Address property (an IP; empty when none).
    fn peer_address(&self) -> String;
    /// A connect's outcome (as `SO_ERROR`).
    fn take_error(&self) -> io::Result<Option<io::Error>> {
        Ok(None)
    }
    /// Applies the socket options to the descriptor underneath.
    fn configure(&self, _o: &StreamOptions) {}
    /// Why the layer refused its peer, once it has (the session reports it as a failed
    /// handshake, or counts a protocol error).
    fn failure(&self) -> Option<LayerFailure> {
        None
    }
    /// The subject of the peer's verified certificate (TLS), as an RFC 4514 string.
    fn peer_subject(&self) -> Option<String> {
        None
    }
    /// True when the last read took all the descriptor had and the layer keeps back nothing
    /// it could give: a short read then needs no second read to learn there is no more.
    fn drained(&self) -> bool {
        false
    }
    /// True when the transport has keepalives of its own (a WebSocket's ping and pong frames,
    /// which libzmq's ws engine sends and answers for heartbeats, ignoring ZMTP's PING
    /// commands): heartbeats then [`ByteStream::ping`], and count
    /// [`ByteStream::keepalives_read`] as input.
    fn pings(&self) -> bool {
        false
    }
    /// Sends a keepalive (between two of the frames written, never inside one).
    fn ping(&mut self) {}
    /// Keepalives read so far (pings and pongs alike), which a read that gave the engine no
    /// bytes may have consumed.
    fn keepalives_read(&self) -> u64 {
        0
    }
}

/// Why a layer refused its peer; its reads and writes then fail with EPROTO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LayerFailure {
    /// The WebSocket upgrade or framing broke RFC 6455 or RFC 45.
    WebSocket,
    /// The TLS peer's certificate was not accepted (untrusted, expired, wrong name, missing).
    Certificate,
    /// TLS failed otherwise (a malformed record, no common parameters, an alert).
    Tls,
}

pub(crate) enum Stream {
    Tcp(mio::net::TcpStream),
    Ipc(mio::net::UnixStream),
    /// A layer over a descriptor (see [`ByteStream`]): ws, wss, tls, the simulated network.
    Layer(Box<dyn ByteStream>),
}

impl Stream {
    /// A read that finds nothing costs about what a `poll` does (see `pipe::Armed`): a unix
    /// stream's, not a tcp socket's nor a layer's.
    pub(crate) fn reads_cheaply(&self) -> bool {
        matches!(self, Stream::Ipc(_))
    }

    pub(crate) fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Ipc(s) => s.as_raw_fd(),
            Stream::Layer(l) => l.fd(),
        }
    }

    /// A short read means the descriptor had nothing more (plain streams; a layer when it says
    /// so, see [`ByteStream::drained`]).
    #[inline]
    pub(crate) fn exact_reads(&self) -> bool {
        match self {
            Stream::Layer(l) => l.drained(),
            _ => true,
        }
    }

    /// Writes what a layer kept back: true when nothing is left (always, for a plain stream).
    #[inline]
    pub(crate) fn flush(&mut self) -> io::Result<bool> {
        match self {
            Stream::Layer(l) => l.flush(),
            _ => Ok(true),
        }
    }

    /// Ends the write side (a plain tcp stream's FIN; a layer's own close first). False for
    /// ipc, whose close loses nothing it wrote.
    pub(crate) fn shutdown_write(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Write),
            Stream::Ipc(s) => s.shutdown(std::net::Shutdown::Write),
            Stream::Layer(l) => l.shutdown_write(),
        }
    }

    /// Bytes sent that the peer has not acknowledged, for streams over tcp (None: ipc, whose
    /// bytes are in the peer's queue once written, or unknown).
    pub(crate) fn unacknowledged(&self) -> Option<i32> {
        match self {
            Stream::Tcp(s) => {
                let mut n: libc::c_int = 0;
                // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one int through a valid pointer.
                let rc = unsafe { libc::ioctl(s.as_raw_fd(), libc::TIOCOUTQ, &mut n) };
                Some(if rc < 0 { 0 } else { n })
            }
            Stream::Ipc(_) => None,
            Stream::Layer(l) => l.unacknowledged(),
        }
    }

    /// The two addresses as libzmq's monitor events show them (`tcp://127.0.0.1:5555`,
    /// `ipc:///path`, `ipc://@name`; the unnamed end of an ipc connection is `ipc://`); an
    /// address the kernel will not tell is empty.
    pub(crate) fn addrs(&self) -> (String, String) {
        match self {
            Stream::Tcp(s) => (
                s.local_addr().map(|a| format!("tcp://{a}")).unwrap_or_default(),
                s.peer_addr().map(|a| format!("tcp://{a}")).unwrap_or_default(),
            ),
            Stream::Ipc(s) => {
                use std::os::linux::net::SocketAddrExt;
                let f = |a: io::Result<std::os::unix::net::SocketAddr>| match a {
                    Ok(a) => match (a.as_pathname(), a.as_abstract_name()) {
                        (Some(p), _) => format!("ipc://{}", p.display()),
                        (None, Some(n)) => format!("ipc://@{}", String::from_utf8_lossy(n)),
                        (None, None) => "ipc://".to_string(),
                    },
                    Err(_) => String::new(),
                };
                (f(s.local_addr()), f(s.peer_addr()))
            }
            Stream::Layer(l) => l.addrs(),
        }
    }

    /// The peer's address for ZAP and the Peer-Address property (libzmq: the IP, no port;
    /// empty for ipc).
    pub(crate) fn peer_address(&self) -> String {
        match self {
            Stream::Tcp(s) => crate::properties::peer_address(s.peer_addr().ok()),
            Stream::Ipc(_) => String::new(),
            Stream::Layer(l) => l.peer_address(),
        }
    }

    /// Applies TCP_NODELAY (always: batching happens above TCP), keepalive, buffer sizes, TOS,
    /// SO_PRIORITY.
    pub(crate) fn configure(&self, o: &StreamOptions) {
        let s = match self {
            Stream::Tcp(s) => s,
            Stream::Ipc(_) => return,
            Stream::Layer(l) => return l.configure(o),
        };
        let _ = s.set_nodelay(true);
        let sock = socket2::SockRef::from(s);
        if o.tcp_keepalive == 1 {
            let mut ka = socket2::TcpKeepalive::new();
            if o.tcp_keepalive_idle > 0 {
                ka = ka.with_time(std::time::Duration::from_secs(o.tcp_keepalive_idle as u64));
            }
            if o.tcp_keepalive_intvl > 0 {
                ka = ka.with_interval(std::time::Duration::from_secs(o.tcp_keepalive_intvl as u64));
            }
            if o.tcp_keepalive_cnt > 0 {
                ka = ka.with_retries(o.tcp_keepalive_cnt as u32);
            }
            let _ = sock.set_tcp_keepalive(&ka);
        } else if o.tcp_keepalive == 0 {
            let _ = sock.set_keepalive(false);
        }
        let _ = super::set_buffer_sizes(&sock, o);
        if o.tos > 0 {
            let _ = sock.set_tos_v4(o.tos as u32);
        }
        if o.priority > 0 {
            let p: libc::c_int = o.priority;
            // SAFETY: setsockopt reads an int from a valid pointer for the given length.
            unsafe {
                libc::setsockopt(
                    s.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_PRIORITY,
                    (&p as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
            }
        }
        if o.tcp_maxrt > 0 {
            let _ = sock.set_tcp_user_timeout(Some(std::time::Duration::from_millis(o.tcp_maxrt as u64)));
        }
    }

    /// Reads into the spare capacity of `buf`, growing nothing; returns bytes read (0 = EOF).
    pub(crate) fn read_into(&mut self, buf: &mut bytes::BytesMut) -> io::Result<usize> {
        if let Stream::Layer(l) = self {
            return l.read_into(buf);
        }
        let spare = buf.spare_capacity_mut();
        // SAFETY: `read(2)` writes at most `spare.len()` bytes into memory we own (the
        // BytesMut's reserved, uninitialised tail); `set_len` then covers exactly the bytes the
        // kernel wrote.
        let n = unsafe { libc::read(self.fd(), spare.as_mut_ptr() as *mut libc::c_void, spare.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        // SAFETY: see above: the first `n` spare bytes are now initialised.
        unsafe { buf.set_len(buf.len() + n) };
        Ok(n)
    }

    pub(crate) fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => send_vectored(s.as_raw_fd(), bufs),
            Stream::Ipc(s) => send_vectored(s.as_raw_fd(), bufs),
            Stream::Layer(l) => l.write_vectored(bufs),
        }
    }

    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Stream::Tcp(s) => s.take_error(),
            Stream::Ipc(s) => s.take_error(),
            Stream::Layer(l) => l.take_error(),
        }
    }

    pub(crate) fn peer_connected(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.peer_addr().is_ok(),
            Stream::Ipc(s) => s.peer_addr().is_ok(),
            Stream::Layer(_) => true,
        }
    }

    /// Why a layer refused its peer (None: a plain stream, or no refusal).
    pub(crate) fn layer_failure(&self) -> Option<LayerFailure> {
        match self {
            Stream::Layer(l) => l.failure(),
            _ => None,
        }
    }

    /// The subject of the peer's verified certificate, for a TLS layer.
    pub(crate) fn peer_subject(&self) -> Option<String> {
        match self {
            Stream::Layer(l) => l.peer_subject(),
            _ => None,
        }
    }

    /// See [`ByteStream::pings`].
    pub(crate) fn pings(&self) -> bool {
        matches!(self, Stream::Layer(l) if l.pings())
    }

    /// See [`ByteStream::ping`].
    pub(crate) fn ping(&mut self) {
        if let Stream::Layer(l) = self {
            l.ping();
        }
    }

    /// See [`ByteStream::keepalives_read`].
    #[inline]
    pub(crate) fn keepalives_read(&self) -> u64 {
        match self {
            Stream::Layer(l) => l.keepalives_read(),
            _ => 0,
        }
    }

    /// Reads into `buf` (a layer's bytes, for a layer).
    pub(crate) fn read_plain(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Ipc(s) => s.read(buf),
            Stream::Layer(l) => {
                let mut b = bytes::BytesMut::with_capacity(buf.len());
                let n = l.read_into(&mut b)?;
                buf[..n].copy_from_slice(&b[..n]);
                Ok(n)
            }
        }
    }
}

/// `writev` that cannot raise SIGPIPE: a peer that has closed is EPIPE, as in libzmq
/// (MSG_NOSIGNAL), never a signal that kills an application which did not ignore it.
fn send_vectored(fd: RawFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    // SAFETY: msghdr is plain data; all-zero is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // IoSlice is ABI-compatible with iovec on Unix (std guarantees it); sendmsg only reads.
    msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = bufs.len().min(libc::UIO_MAXIOV as usize) as _;
    // SAFETY: `msg` points at `bufs`, which outlive the call; `fd` is an open socket.
    let n = unsafe { libc::sendmsg(fd, &msg, libc::MSG_NOSIGNAL) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, t, i),
            Stream::Ipc(s) => s.register(r, t, i),
            Stream::Layer(l) => SourceFd(&l.fd()).register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, t, i),
            Stream::Ipc(s) => s.reregister(r, t, i),
            Stream::Layer(l) => SourceFd(&l.fd()).reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Ipc(s) => s.deregister(r),
            Stream::Layer(l) => SourceFd(&l.fd()).deregister(r),
        }
    }
}
