//! The udp transport for RADIO and DISH (libzmq's `zmq_udp`): one datagram per message, laid
//! out as libzmq's udp engine does — one byte of group length, the group, the body.
//!
//! A RADIO connects (`udp://host:port`, `udp://iface;group-address:port` for multicast sent
//! from that interface) and sends each message to that address; a DISH binds
//! (`udp://*:port`, `udp://ip:port`, `udp://iface;group-address:port` to join a multicast
//! group) and receives. Other combinations are `ENOCOMPATPROTO`, as libzmq. A DISH may bind
//! port 0 (`*`) and read the port from LAST_ENDPOINT. Interfaces are given by address, not by
//! name.
//!
//! Each udp endpoint runs on its own small thread: a mio poll over the datagram socket and a
//! waker for the pipe to the socket. The thread ends when the socket closes its pipe end
//! (close, disconnect, unbind). Datagrams are unreliable: a DISH pipe at its high-water mark
//! loses what arrives (as any udp receiver would), a malformed datagram (group length past the
//! end, or over 255) is dropped, and a RADIO message too large for one datagram
//! ([`MAX_DATAGRAM`], libzmq's limit) is dropped — libzmq asserts on it.

use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::pipe::{Owner, PipeEnd, PipeId, Read, Wake};
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token, Waker};
use socket2::{Domain, Protocol, Socket as RawSocket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use zmtp::command::MAX_GROUP_LEN;

/// Largest datagram sent or received (libzmq's `MAX_UDP_MSG`).
pub(crate) const MAX_DATAGRAM: usize = 8192;

const SOCK: Token = Token(0);
const WAKE: Token = Token(1);

/// A parsed udp endpoint: an optional interface address, then host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UdpEndpoint {
    pub iface: Option<IpAddr>,
    /// None: `*` (bind only).
    pub host: Option<IpAddr>,
    pub port: u16,
}

impl UdpEndpoint {
    /// Parses the part after `udp://`.
    pub(crate) fn parse(addr: &str, bind: bool) -> Result<UdpEndpoint> {
        let (iface, rest) = match addr.split_once(';') {
            Some((i, r)) => (Some(parse_ip(i)?), r),
            None => (None, addr),
        };
        let (h, p) = rest.rsplit_once(':').ok_or(Error::Invalid)?;
        let port: u16 = if p == "*" && bind { 0 } else { p.parse().map_err(|_| Error::Invalid)? };
        let host = if h == "*" {
            if !bind {
                return Err(Error::Invalid);
            }
            None
        } else if let Ok(ip) = parse_ip(h) {
            Some(ip)
        } else if !bind {
            // A RADIO may name its peer by host name; resolved once, here.
            let a = (h, port).to_socket_addrs().map_err(|_| Error::Invalid)?;
            Some(a.map(|a| a.ip()).find(|ip| ip.is_ipv4()).ok_or(Error::Invalid)?)
        } else {
            return Err(Error::Invalid); // interface names are not supported
        };
        if port == 0 && !bind {
            return Err(Error::Invalid);
        }
        Ok(UdpEndpoint { iface, host, port })
    }
}

fn parse_ip(s: &str) -> Result<IpAddr> {
    let s = s.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(s);
    s.parse().map_err(|_| Error::Invalid)
}

/// Wakes the engine thread when its pipe has news.
struct UdpOwner(Waker);

impl Owner for UdpOwner {
    fn wake(&self, _id: PipeId, _what: Wake) {
        let _ = self.0.wake();
    }
}

/// Opens a DISH's receiving socket and starts its engine over `pipe`. Returns the bound
/// address (for LAST_ENDPOINT).
pub(crate) fn start_dish(ep: &UdpEndpoint, pipe: PipeEnd) -> Result<SocketAddr> {
    let multicast = ep.host.is_some_and(|h| h.is_multicast());
    let bind_ip = match ep.host {
        Some(h) if !multicast => h,
        Some(IpAddr::V6(_)) => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
        _ => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    };
    let domain = if bind_ip.is_ipv6() { Domain::IPV6 } else { Domain::IPV4 };
    let raw = RawSocket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    // Several DISHes (processes) may listen to one multicast group and port.
    raw.set_reuse_address(true)?;
    raw.bind(&SocketAddr::new(bind_ip, ep.port).into()).map_err(bind_error)?;
    if let Some(group) = ep.host.filter(|_| multicast) {
        match group {
            IpAddr::V4(g) => {
                let iface = match ep.iface {
                    Some(IpAddr::V4(i)) => i,
                    Some(_) => return Err(Error::Invalid),
                    None => Ipv4Addr::UNSPECIFIED,
                };
                raw.join_multicast_v4(&g, &iface)?;
            }
            IpAddr::V6(g) => raw.join_multicast_v6(&g, 0)?,
        }
    }
    raw.set_nonblocking(true)?;
    let local = raw.local_addr()?.as_socket().ok_or(Error::Invalid)?;
    let sock = UdpSocket::from_std(raw.into());
    spawn(sock, pipe, None)?;
    Ok(local)
}

/// Opens a RADIO's sending socket towards `ep` and starts its engine over `pipe`.
pub(crate) fn start_radio(ep: &UdpEndpoint, pipe: PipeEnd, hops: i32) -> Result<()> {
    let dest_ip = ep.host.ok_or(Error::Invalid)?;
    let dest = SocketAddr::new(dest_ip, ep.port);
    let domain = if dest_ip.is_ipv6() { Domain::IPV6 } else { Domain::IPV4 };
    let raw = RawSocket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    if dest_ip.is_multicast() {
        if let IpAddr::V4(_) = dest_ip {
            if let Some(IpAddr::V4(i)) = ep.iface {
                raw.set_multicast_if_v4(&i)?;
            }
            raw.set_multicast_ttl_v4(hops.max(1) as u32)?;
            // A DISH on this host hears the group too (libzmq's default, MULTICAST_LOOP 1).
            raw.set_multicast_loop_v4(true)?;
        } else {
            raw.set_multicast_hops_v6(hops.max(1) as u32)?;
            raw.set_multicast_loop_v6(true)?;
        }
    } else if let Some(i) = ep.iface {
        raw.bind(&SocketAddr::new(i, 0).into()).map_err(bind_error)?;
    }
    raw.set_nonblocking(true)?;
    let sock = UdpSocket::from_std(raw.into());
    spawn(sock, pipe, Some(dest))
}

fn bind_error(e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::AddrInUse => Error::AddrInUse,
        io::ErrorKind::AddrNotAvailable => Error::AddrNotAvail,
        _ => e.into(),
    }
}

fn spawn(mut sock: UdpSocket, pipe: PipeEnd, dest: Option<SocketAddr>) -> Result<()> {
    let poll = Poll::new()?;
    let waker = Waker::new(poll.registry(), WAKE)?;
    let interest = if dest.is_some() { Interest::WRITABLE } else { Interest::READABLE };
    poll.registry().register(&mut sock, SOCK, interest)?;
    pipe.set_owner(Arc::new(UdpOwner(waker)), PipeId { slot: 0, serial: 0 });
    std::thread::Builder::new()
        .name("oxmq-udp".into())
        .spawn(move || {
            let mut e = Engine { poll, sock, pipe, dest, pending: None, group: None, buf: vec![0; MAX_DATAGRAM] };
            e.run();
        })
        .map_err(Error::from)?;
    Ok(())
}

struct Engine {
    poll: Poll,
    sock: UdpSocket,
    pipe: PipeEnd,
    /// RADIO: where datagrams go. None: a DISH.
    dest: Option<SocketAddr>,
    /// RADIO: a datagram the socket had no room for.
    pending: Option<Vec<u8>>,
    /// RADIO: the group frame of the message being read from the pipe.
    group: Option<Msg>,
    buf: Vec<u8>,
}

impl Engine {
    fn run(&mut self) {
        let mut events = Events::with_capacity(8);
        loop {
            let alive = if self.dest.is_some() { self.send_side() } else { self.recv_side() };
            if !alive {
                return;
            }
            if let Err(e) = self.poll.poll(&mut events, None) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return;
                }
            }
        }
    }

    /// RADIO: turns pipe messages into datagrams until the pipe or the socket would block.
    /// False once the socket has closed the pipe.
    fn send_side(&mut self) -> bool {
        loop {
            if let Some(d) = &self.pending {
                match self.sock.send_to(d, self.dest.unwrap_or_else(|| ([0, 0, 0, 0], 0).into())) {
                    Ok(_) => self.pending = None,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // Unreachable destinations and the like: the datagram is lost, as udp is.
                    Err(_) => self.pending = None,
                }
            }
            match self.pipe.read() {
                Read::Msg(m) => {
                    if m.is_command() {
                        continue;
                    }
                    if m.more() {
                        self.group = Some(m);
                        continue;
                    }
                    let group = self.group.take().unwrap_or_default();
                    if group.len() > MAX_GROUP_LEN || 1 + group.len() + m.len() > MAX_DATAGRAM {
                        continue; // cannot be one datagram: dropped (libzmq asserts)
                    }
                    let mut d = Vec::with_capacity(1 + group.len() + m.len());
                    d.push(group.len() as u8);
                    d.extend_from_slice(&group);
                    d.extend_from_slice(&m);
                    self.pending = Some(d);
                }
                Read::Empty => return true,
                Read::Closed => return false,
            }
        }
    }

    /// DISH: datagrams into the pipe as (group, body) messages; anything the socket writes
    /// (JOIN/LEAVE) is discarded — a udp sender cannot be told. False once the socket has
    /// closed the pipe.
    fn recv_side(&mut self) -> bool {
        loop {
            match self.pipe.read() {
                Read::Msg(_) => continue,
                Read::Empty => break,
                Read::Closed => return false,
            }
        }
        let mut wrote = false;
        loop {
            let n = match self.sock.recv_from(&mut self.buf) {
                Ok((n, _)) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => continue, // e.g. an ICMP error reported on the socket
            };
            let d = &self.buf[..n];
            let Some((&glen, rest)) = d.split_first() else { continue };
            let glen = glen as usize;
            if glen > rest.len() {
                continue; // malformed
            }
            if !self.pipe.check_write() {
                continue; // full: lost, as udp is
            }
            let mut g = Msg::copy_from(&rest[..glen]);
            g.set_more(true);
            self.pipe.write(g);
            self.pipe.write(Msg::copy_from(&rest[glen..]));
            wrote = true;
        }
        if wrote {
            self.pipe.flush();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_libzmq_forms() {
        let p = |s, b| UdpEndpoint::parse(s, b);
        assert_eq!(p("*:5555", true), Ok(UdpEndpoint { iface: None, host: None, port: 5555 }));
        assert_eq!(p("127.0.0.1:*", true).map(|e| e.port), Ok(0));
        let m = p("127.0.0.1;239.0.0.1:5555", true).unwrap();
        assert_eq!(m.iface, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(m.host, Some("239.0.0.1".parse().unwrap()));
        assert!(p("[ff02::1]:5555", false).unwrap().host.unwrap().is_multicast());
        assert_eq!(p("*:5555", false), Err(Error::Invalid));
        assert_eq!(p("127.0.0.1:0", false), Err(Error::Invalid));
        assert_eq!(p("127.0.0.1", true), Err(Error::Invalid));
        assert_eq!(p("eth0:5555", true), Err(Error::Invalid));
    }
}
