//! A connected byte stream (tcp or ipc) as an I/O session drives it: non-blocking reads into
//! spare buffer capacity, vectored writes, and the socket options libzmq applies.

use super::StreamOptions;
use mio::event::Source;
use mio::{Interest, Registry, Token};
use std::io::{self, IoSlice, Read, Write};
use std::os::fd::{AsRawFd, RawFd};

pub(crate) enum Stream {
    Tcp(mio::net::TcpStream),
    Ipc(mio::net::UnixStream),
}

impl Stream {
    pub(crate) fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Ipc(s) => s.as_raw_fd(),
        }
    }

    /// Applies TCP_NODELAY (always: batching happens above TCP), keepalive, buffer sizes, TOS,
    /// SO_PRIORITY.
    pub(crate) fn configure(&self, o: &StreamOptions) {
        let Stream::Tcp(s) = self else { return };
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
            Stream::Tcp(s) => s.write_vectored(bufs),
            Stream::Ipc(s) => s.write_vectored(bufs),
        }
    }

    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Stream::Tcp(s) => s.take_error(),
            Stream::Ipc(s) => s.take_error(),
        }
    }

    pub(crate) fn peer_connected(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.peer_addr().is_ok(),
            Stream::Ipc(s) => s.peer_addr().is_ok(),
        }
    }

    pub(crate) fn read_plain(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Ipc(s) => s.read(buf),
        }
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, t, i),
            Stream::Ipc(s) => s.register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, t, i),
            Stream::Ipc(s) => s.reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Ipc(s) => s.deregister(r),
        }
    }
}
