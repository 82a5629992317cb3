//! Listening sockets for tcp and ipc, created synchronously at `bind`.

use super::endpoint::{Endpoint, Host};
use super::interface;
use super::resolve::pick;
use super::ListenOptions;
use crate::error::{Error, Result};
use socket2::{Domain, Protocol, Socket as RawSocket, Type};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// A bound socket file and the inode it had when we bound it.
pub(crate) struct IpcPath {
    path: PathBuf,
    ino: u64,
}

impl IpcPath {
    /// Unlinks the socket file, unless another listener has re-bound the path since: closing
    /// is asynchronous, so a new socket may already own the name.
    pub(crate) fn remove(&self) {
        use std::os::unix::fs::MetadataExt;
        if std::fs::symlink_metadata(&self.path).map(|m| m.ino()).ok() == Some(self.ino) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

pub(crate) enum Listener {
    Tcp(std::net::TcpListener),
    /// The path is unlinked when the listener closes (None for abstract names).
    Ipc(UnixListener, Option<IpcPath>),
}

impl Listener {
    /// The listening descriptor (the value of the LISTENING and CLOSED monitor events).
    pub(crate) fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Listener::Tcp(l) => l.as_raw_fd(),
            Listener::Ipc(l, _) => l.as_raw_fd(),
        }
    }
}

/// Binds and listens; returns the listener and the endpoint it really bound (port and
/// wildcards resolved), which becomes LAST_ENDPOINT.
pub(crate) fn listen(ep: &Endpoint, options: &ListenOptions) -> Result<(Listener, String)> {
    if options.use_fd >= 0 && !matches!(ep, Endpoint::Inproc(_)) {
        return adopt(ep, options);
    }
    match ep {
        Endpoint::Tcp { host, port, .. } => {
            let mut addr = match host {
                Host::Any if options.stream.ipv6 => SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), 0),
                Host::Any => SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), 0),
                Host::Ip(ip) => {
                    if ip.is_ipv6() && !options.stream.ipv6 {
                        // libzmq refuses an IPv6 address unless ZMQ_IPV6 is set.
                        return Err(Error::NoDev);
                    }
                    SocketAddr::new(*ip, 0)
                }
                Host::Name(name) => resolve_local(name, options.stream.ipv6)?,
            };
            addr.set_port(*port);
            let sock = RawSocket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
            sock.set_cloexec(true)?;
            sock.set_reuse_address(true)?;
            if addr.is_ipv6() && matches!(host, Host::Any) {
                // "*" with IPv6 on: accept IPv4 too, as libzmq does.
                let _ = sock.set_only_v6(false);
            }
            super::set_buffer_sizes(&sock, &options.stream)?;
            if !options.stream.bound_device.is_empty() {
                sock.bind_device(Some(&options.stream.bound_device))?;
            }
            sock.bind(&addr.into()).map_err(Error::from)?;
            sock.listen(options.backlog.max(1))?;
            sock.set_nonblocking(true)?;
            let l: std::net::TcpListener = sock.into();
            let local = l.local_addr()?;
            let resolved = match local {
                SocketAddr::V4(a) => format!("tcp://{}:{}", a.ip(), a.port()),
                SocketAddr::V6(a) => format!("tcp://[{}]:{}", a.ip(), a.port()),
            };
            Ok((Listener::Tcp(l), resolved))
        }
        Endpoint::Ipc(path) => {
            if let Some(name) = path.strip_prefix('@') {
                use std::os::linux::net::SocketAddrExt;
                let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
                let l = UnixListener::bind_addr(&addr)?;
                l.set_nonblocking(true)?;
                Ok((Listener::Ipc(l, None), format!("ipc://{path}")))
            } else {
                let path = if path == "*" { temp_ipc_path() } else { path.clone() };
                // A stale socket file from a dead process would make bind fail; libzmq removes
                // it too. A live listener elsewhere keeps its inode, so this cannot steal a
                // running endpoint's connections already made.
                let _ = std::fs::remove_file(&path);
                let l = UnixListener::bind(&path)?;
                l.set_nonblocking(true)?;
                use std::os::unix::fs::MetadataExt;
                let ino = std::fs::symlink_metadata(&path)?.ino();
                Ok((Listener::Ipc(l, Some(IpcPath { path: PathBuf::from(&path), ino })), format!("ipc://{path}")))
            }
        }
        Endpoint::Inproc(_) => Err(Error::Invalid),
    }
}

/// ZMQ_USE_FD: adopts the descriptor the application bound itself, as libzmq does: the bind
/// endpoint only picks the transport, LAST_ENDPOINT comes from the descriptor's own address,
/// and an ipc path is never unlinked (we did not create it). A descriptor of the wrong family
/// for the endpoint, or no socket at all, is `EINVAL`; the descriptor stays the caller's then.
fn adopt(ep: &Endpoint, options: &ListenOptions) -> Result<(Listener, String)> {
    use std::os::fd::FromRawFd;
    let fd = options.use_fd;
    // SAFETY: only inspects the descriptor (getsockname) through a borrowed socket.
    let local = {
        let sock = std::mem::ManuallyDrop::new(unsafe { RawSocket::from_raw_fd(fd) });
        sock.local_addr().map_err(|_| Error::Invalid)?
    };
    let listen_on = |fd: i32| -> Result<()> {
        // Listening again is harmless if the caller already did.
        // SAFETY: plain syscall on a descriptor we now own.
        if unsafe { libc::listen(fd, options.backlog.max(1)) } != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        Ok(())
    };
    match ep {
        Endpoint::Tcp { .. } => {
            let Some(addr) = local.as_socket() else { return Err(Error::Invalid) };
            listen_on(fd)?;
            // SAFETY: the application handed the descriptor over with USE_FD (libzmq's
            // contract: the listener closes it).
            let l = unsafe { std::net::TcpListener::from_raw_fd(fd) };
            l.set_nonblocking(true)?;
            let resolved = match addr {
                SocketAddr::V4(a) => format!("tcp://{}:{}", a.ip(), a.port()),
                SocketAddr::V6(a) => format!("tcp://[{}]:{}", a.ip(), a.port()),
            };
            Ok((Listener::Tcp(l), resolved))
        }
        Endpoint::Ipc(_) => {
            if !local.is_unix() {
                return Err(Error::Invalid);
            }
            listen_on(fd)?;
            // SAFETY: as above.
            let l = unsafe { UnixListener::from_raw_fd(fd) };
            l.set_nonblocking(true)?;
            let a = l.local_addr()?;
            use std::os::linux::net::SocketAddrExt;
            let resolved = if let Some(p) = a.as_pathname() {
                format!("ipc://{}", p.display())
            } else if let Some(n) = a.as_abstract_name() {
                format!("ipc://@{}", String::from_utf8_lossy(n))
            } else {
                return Err(Error::Invalid);
            };
            Ok((Listener::Ipc(l, None), resolved))
        }
        Endpoint::Inproc(_) => Err(Error::Invalid),
    }
}

fn temp_ipc_path() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir();
    format!("{}/oxmq-{}-{}.ipc", dir.display(), std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Resolves a name for bind: an interface's address first, as libzmq (IPv6 first with
/// ZMQ_IPV6, as `pick`), else a host name (the caller's thread may block: it asked to bind).
/// Neither: ENODEV.
fn resolve_local(name: &str, ipv6: bool) -> Result<SocketAddr> {
    let iface = match ipv6 {
        true => interface::address(name, true).or_else(|| interface::address(name, false)),
        false => interface::address(name, false),
    };
    if let Some(a) = iface {
        return Ok(a);
    }
    let addrs = (name, 0).to_socket_addrs().map_err(|_| Error::NoDev)?;
    pick(addrs.map(|a| a.ip()), ipv6).map(|ip| SocketAddr::new(ip, 0)).ok_or(Error::NoDev)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(endpoint: &str, ipv6: bool) -> Result<String> {
        let stream = crate::transport::StreamOptions { ipv6, ..Default::default() };
        let options = ListenOptions { stream, backlog: 100, use_fd: -1, filters: Default::default() };
        listen(&Endpoint::parse(endpoint, true)?, &options).map(|(_, resolved)| resolved)
    }

    #[test]
    fn binds_an_interface_by_name() {
        let ep = bound("tcp://lo:*", false).unwrap();
        assert!(ep.starts_with("tcp://127.0.0.1:"), "{ep}");
        if interface::loopback_has_v6() {
            let ep = bound("tcp://lo:*", true).unwrap();
            assert!(ep.starts_with("tcp://[::1]:"), "{ep}");
        }
        assert_eq!(bound("tcp://oxmq-no-such0:*", false).err(), Some(Error::NoDev));
    }
}
