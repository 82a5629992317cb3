//! The udp transport (libzmq's `zmq_udp`): RADIO and DISH, whose datagrams are laid out as
//! libzmq's udp engine lays them out (one byte of group length, the group, the body), and DGRAM,
//! whose datagrams are bare bodies.
//!
//! A RADIO connects (`udp://host:port`, `udp://iface;group-address:port` for multicast sent
//! from that interface) and sends each message to that address; a DISH binds
//! (`udp://*:port`, `udp://ip:port`, `udp://iface;group-address:port` to join a multicast
//! group) and receives. A DGRAM binds as a DISH does and then both sends and receives through
//! that one udp socket: each message is two frames, a peer's address as text ([`peer_text`],
//! libzmq's `ip:port` with its trailing NUL) then the body; on receipt the address names the
//! sender, on sending it names the destination. Other combinations are `ENOCOMPATPROTO`, as
//! libzmq. A bound socket may use port 0 (`*`) and read the port from LAST_ENDPOINT.
//! Interfaces are given by address, not by name.
//!
//! Addresses follow ZMQ_IPV6 as libzmq's resolver does: `*` is `0.0.0.0`, or with IPV6 `[::]`;
//! an IPv6 address without IPV6 is refused (`ENODEV` to bind, `EINVAL` to connect). An IPv6
//! udp socket also takes IPv4 (dual-stack, Linux's default, which libzmq relies on), so a DISH
//! bound to `*` with IPV6 hears RADIOs connected to `[::1]` and to `127.0.0.1` alike.
//!
//! Each udp endpoint runs on its own small thread: a mio poll over the datagram socket and a
//! waker for the pipe to the socket. The thread ends when the socket closes its pipe end
//! (close, disconnect, unbind). Datagrams are unreliable: a receiving pipe at its high-water
//! mark loses what arrives (as any udp receiver would), a malformed RADIO datagram (group
//! length past the end) is dropped, and so is a message that cannot be one datagram: a RADIO
//! message over [`MAX_DATAGRAM`] (libzmq's limit; libzmq asserts on it), a DGRAM body the
//! kernel refuses (over udp's 64 KiB), or a DGRAM destination of the other address family
//! than an IPv4 socket's. Those the engine took from the socket and could not send are counted
//! (`SocketStats::dropped_unsendable`, through the socket's session counters).

use crate::error::{Error, Result};
use crate::io::counters::SessionCounters;
use crate::msg::Msg;
use crate::pipe::{Owner, PipeEnd, PipeId, Read, Wake};
use crate::transport::resolve::pick;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token, Waker};
use socket2::{Domain, Protocol, Socket as RawSocket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use zmtp::command::MAX_GROUP_LEN;

/// Largest RADIO datagram sent (libzmq's `MAX_UDP_MSG`).
pub(crate) const MAX_DATAGRAM: usize = 8192;

/// Room for any udp datagram received, so none is truncated.
const RECV_BUF: usize = 65536;

const SOCK: Token = Token(0);
const WAKE: Token = Token(1);

/// A parsed udp endpoint: an optional interface address, then host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UdpEndpoint {
    pub iface: Option<IpAddr>,
    /// The address to bind (`*` resolved to the unspecified address of the family ZMQ_IPV6
    /// chooses) or to send to; a multicast group either way.
    pub host: IpAddr,
    pub port: u16,
}

impl UdpEndpoint {
    /// Parses the part after `udp://` for a bind (`bind`) or a connect, with ZMQ_IPV6 `ipv6`.
    pub(crate) fn parse(addr: &str, bind: bool, ipv6: bool) -> Result<UdpEndpoint> {
        // libzmq's resolver: a refused address is ENODEV for a bind, EINVAL for a connect.
        let refused = if bind { Error::NoDev } else { Error::Invalid };
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
            if ipv6 {
                IpAddr::V6(Ipv6Addr::UNSPECIFIED)
            } else {
                IpAddr::V4(Ipv4Addr::UNSPECIFIED)
            }
        } else if let Ok(ip) = parse_ip(h) {
            ip
        } else if !bind {
            // A RADIO may name its peer by host name; resolved once, here.
            let a = (h, port).to_socket_addrs().map_err(|_| Error::Invalid)?;
            pick(a.map(|a| a.ip()), ipv6).ok_or(Error::Invalid)?
        } else {
            return Err(Error::Invalid); // interface names are not supported
        };
        if !ipv6 && (host.is_ipv6() || iface.is_some_and(|i| i.is_ipv6())) {
            return Err(refused);
        }
        if iface.is_some_and(|i| i.is_ipv6() != host.is_ipv6()) {
            return Err(Error::Invalid);
        }
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

/// A DGRAM peer's address as the address frame carries it: `a.b.c.d:port` (an IPv4 peer of a
/// dual-stack socket included) or `[v6]:port`, then a NUL, as libzmq writes it (so C reads it
/// as a string).
pub(crate) fn peer_text(addr: SocketAddr) -> Vec<u8> {
    let ip = match addr.ip() {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    let s = match ip {
        IpAddr::V4(ip) => format!("{ip}:{}\0", addr.port()),
        IpAddr::V6(ip) => format!("[{ip}]:{}\0", addr.port()),
    };
    s.into_bytes()
}

/// A DGRAM destination from an address frame: [`peer_text`]'s forms, the NUL optional, a
/// literal address (no name lookup) and a port other than 0. None if it is not one.
pub(crate) fn parse_peer(text: &[u8]) -> Option<SocketAddr> {
    let text = text.strip_suffix(b"\0").unwrap_or(text);
    let (h, p) = std::str::from_utf8(text).ok()?.rsplit_once(':')?;
    if !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let port: u16 = p.parse().ok().filter(|&p| p != 0)?;
    let ip = match h.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => IpAddr::V6(v6.parse().ok()?),
        None => IpAddr::V4(h.parse().ok()?),
    };
    Some(SocketAddr::new(ip, port))
}

/// Wakes the engine thread when its pipe has news.
struct UdpOwner(Waker);

impl Owner for UdpOwner {
    fn wake(&self, _id: PipeId, _what: Wake) {
        let _ = self.0.wake();
    }
}

/// What a bound udp socket is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// DISH: receives group datagrams.
    Dish,
    /// DGRAM: sends and receives addressed datagrams.
    Dgram,
}

/// Opens a bound udp socket at `ep` (joining its multicast group, if it names one) and starts
/// its engine over `pipe`. Returns the bound address (for LAST_ENDPOINT).
pub(crate) fn start_bound(ep: &UdpEndpoint, pipe: PipeEnd, role: Bound, counters: Arc<SessionCounters>) -> Result<SocketAddr> {
    let multicast = ep.host.is_multicast();
    // A group is joined on a socket bound to the unspecified address and the group's port.
    let bind_ip = match ep.host {
        IpAddr::V4(_) if multicast => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) if multicast => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        h => h,
    };
    let raw = open(bind_ip)?;
    // Several DISHes (processes) may listen to one multicast group and port.
    raw.set_reuse_address(true)?;
    raw.bind(&SocketAddr::new(bind_ip, ep.port).into()).map_err(bind_error)?;
    if multicast {
        match ep.host {
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
    let role = match role {
        Bound::Dish => Role::Dish,
        Bound::Dgram => Role::Dgram { v6: bind_ip.is_ipv6() },
    };
    spawn(sock, pipe, role, counters)?;
    Ok(local)
}

/// Opens a RADIO's sending socket towards `ep` and starts its engine over `pipe`. `hops` and
/// `multicast_loop` are MULTICAST_HOPS and MULTICAST_LOOP, for a multicast destination.
/// `counters` counts what the engine could not send.
pub(crate) fn start_radio(
    ep: &UdpEndpoint,
    pipe: PipeEnd,
    hops: i32,
    multicast_loop: bool,
    counters: Arc<SessionCounters>,
) -> Result<()> {
    let dest = SocketAddr::new(ep.host, ep.port);
    let raw = open(ep.host)?;
    if ep.host.is_multicast() {
        if ep.host.is_ipv4() {
            if let Some(IpAddr::V4(i)) = ep.iface {
                raw.set_multicast_if_v4(&i)?;
            }
            raw.set_multicast_ttl_v4(hops.max(1) as u32)?;
            raw.set_multicast_loop_v4(multicast_loop)?;
        } else {
            raw.set_multicast_hops_v6(hops.max(1) as u32)?;
            raw.set_multicast_loop_v6(multicast_loop)?;
        }
    } else if let Some(i) = ep.iface {
        raw.bind(&SocketAddr::new(i, 0).into()).map_err(bind_error)?;
    }
    raw.set_nonblocking(true)?;
    let sock = UdpSocket::from_std(raw.into());
    spawn(sock, pipe, Role::Radio { dest }, counters)
}

/// A udp socket of `ip`'s family; an IPv6 one takes IPv4 too.
fn open(ip: IpAddr) -> Result<RawSocket> {
    let domain = if ip.is_ipv6() { Domain::IPV6 } else { Domain::IPV4 };
    let raw = RawSocket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    raw.set_cloexec(true)?;
    if ip.is_ipv6() {
        // Linux's default (net.ipv6.bindv6only = 0), made sure of.
        let _ = raw.set_only_v6(false);
    }
    Ok(raw)
}

fn bind_error(e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::AddrInUse => Error::AddrInUse,
        io::ErrorKind::AddrNotAvailable => Error::AddrNotAvail,
        _ => e.into(),
    }
}

fn spawn(mut sock: UdpSocket, pipe: PipeEnd, role: Role, counters: Arc<SessionCounters>) -> Result<()> {
    let poll = Poll::new()?;
    let waker = Waker::new(poll.registry(), WAKE)?;
    let interest = match role {
        Role::Radio { .. } => Interest::WRITABLE,
        Role::Dish => Interest::READABLE,
        Role::Dgram { .. } => Interest::READABLE | Interest::WRITABLE,
    };
    poll.registry().register(&mut sock, SOCK, interest)?;
    pipe.set_owner(Arc::new(UdpOwner(waker)), PipeId { slot: 0, serial: 0 });
    std::thread::Builder::new()
        .name("oxmq-udp".into())
        .spawn(move || {
            let mut e =
                Engine { poll, sock, pipe, role, pending: None, out: Vec::new(), head: None, buf: vec![0; RECV_BUF], counters };
            e.run();
        })
        .map_err(Error::from)?;
    Ok(())
}

/// What an engine turns into what.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// Pipe (group, body) → `[len][group][body]` datagrams to `dest`.
    Radio { dest: SocketAddr },
    /// `[len][group][body]` datagrams → pipe (group, body).
    Dish,
    /// Pipe (address, body) ↔ datagrams of `body` to or from that address. `v6`: the socket is
    /// IPv6 (an IPv4 destination goes to its mapped address).
    Dgram { v6: bool },
}

struct Engine {
    poll: Poll,
    sock: UdpSocket,
    pipe: PipeEnd,
    role: Role,
    /// A datagram in `out` the socket had no room for yet, and where it goes.
    pending: Option<SocketAddr>,
    out: Vec<u8>,
    /// The first frame (group or address) of the message being read from the pipe.
    head: Option<Msg>,
    buf: Vec<u8>,
    /// The socket's: what could not be sent is counted there.
    counters: Arc<SessionCounters>,
}

impl Engine {
    fn run(&mut self) {
        let mut events = Events::with_capacity(8);
        loop {
            let alive = match self.role {
                Role::Radio { .. } => self.send_side(),
                Role::Dish => self.discard_pipe() && self.recv_side(),
                Role::Dgram { .. } => self.send_side() && self.recv_side(),
            };
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

    /// RADIO, DGRAM: turns pipe messages into datagrams until the pipe or the socket would
    /// block. False once the socket has closed the pipe.
    fn send_side(&mut self) -> bool {
        loop {
            if let Some(to) = self.pending {
                match self.sock.send_to(&self.out, to) {
                    Ok(_) => self.pending = None,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // Unreachable destinations, oversize bodies and the like: the datagram is
                    // lost, as udp is, and counted.
                    Err(_) => {
                        self.pending = None;
                        self.counters.unsendable();
                    }
                }
            }
            match self.pipe.read() {
                Read::Msg(m) => {
                    if m.is_command() {
                        continue;
                    }
                    if m.more() {
                        self.head = Some(m);
                        continue;
                    }
                    let head = self.head.take().unwrap_or_default();
                    self.pending = self.datagram(&head, &m);
                    if self.pending.is_none() {
                        self.counters.unsendable();
                    }
                }
                Read::Empty => return true,
                Read::Closed => return false,
            }
        }
    }

    /// Lays out the datagram of (`head`, `body`) in `out` and says where it goes; None drops
    /// a message that cannot be one datagram (the caller counts it).
    fn datagram(&mut self, head: &[u8], body: &[u8]) -> Option<SocketAddr> {
        self.out.clear();
        match self.role {
            Role::Radio { dest } => {
                if head.len() > MAX_GROUP_LEN || 1 + head.len() + body.len() > MAX_DATAGRAM {
                    return None; // libzmq asserts
                }
                self.out.push(head.len() as u8);
                self.out.extend_from_slice(head);
                self.out.extend_from_slice(body);
                Some(dest)
            }
            Role::Dgram { v6 } => {
                // The socket checked the address at send; an IPv4 socket cannot reach IPv6.
                let to = match (parse_peer(head)?, v6) {
                    (SocketAddr::V4(a), true) => SocketAddr::new(IpAddr::V6(a.ip().to_ipv6_mapped()), a.port()),
                    (SocketAddr::V6(_), false) => return None,
                    (to, _) => to,
                };
                self.out.extend_from_slice(body);
                Some(to)
            }
            Role::Dish => None,
        }
    }

    /// DISH: drops what the socket writes (JOIN/LEAVE): a udp sender cannot be told. False
    /// once the socket has closed the pipe.
    fn discard_pipe(&mut self) -> bool {
        loop {
            match self.pipe.read() {
                Read::Msg(_) => continue,
                Read::Empty => return true,
                Read::Closed => return false,
            }
        }
    }

    /// DISH, DGRAM: datagrams into the pipe as (group, body) or (sender, body) messages until
    /// the socket has no more.
    fn recv_side(&mut self) -> bool {
        let mut wrote = false;
        loop {
            let (n, from) = match self.sock.recv_from(&mut self.buf) {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => continue, // e.g. an ICMP error reported on the socket
            };
            if !self.pipe.check_write() {
                continue; // full: lost, as udp is
            }
            let d = &self.buf[..n];
            let (mut head, body) = match self.role {
                Role::Dgram { .. } => (Msg::from(peer_text(from)), Msg::copy_from(d)),
                _ => {
                    let Some((&glen, rest)) = d.split_first() else { continue };
                    let glen = glen as usize;
                    if glen > rest.len() {
                        continue; // malformed
                    }
                    (Msg::copy_from(&rest[..glen]), Msg::copy_from(&rest[glen..]))
                }
            };
            head.set_more(true);
            self.pipe.write(head);
            self.pipe.write(body);
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
        let p = |s, b| UdpEndpoint::parse(s, b, false);
        let any = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
        assert_eq!(p("*:5555", true), Ok(UdpEndpoint { iface: None, host: any, port: 5555 }));
        assert_eq!(p("127.0.0.1:*", true).map(|e| e.port), Ok(0));
        let m = p("127.0.0.1;239.0.0.1:5555", true).unwrap();
        assert_eq!(m.iface, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(m.host, "239.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(p("*:5555", false), Err(Error::Invalid));
        assert_eq!(p("127.0.0.1:0", false), Err(Error::Invalid));
        assert_eq!(p("127.0.0.1", true), Err(Error::Invalid));
        assert_eq!(p("eth0:5555", true), Err(Error::Invalid));
    }

    #[test]
    fn ipv6_follows_the_option_as_libzmqs_resolver() {
        let p = UdpEndpoint::parse;
        // `*` is the unspecified address of the family ZMQ_IPV6 picks.
        assert_eq!(p("*:5556", true, true).unwrap().host, IpAddr::V6(Ipv6Addr::UNSPECIFIED));
        assert_eq!(p("[::1]:5556", false, true).unwrap().host, IpAddr::V6(Ipv6Addr::LOCALHOST));
        assert!(p("[ff02::1]:5555", false, true).unwrap().host.is_multicast());
        // IPv4 addresses stay usable with IPV6 on.
        assert_eq!(p("127.0.0.1:5556", false, true).unwrap().host, IpAddr::V4(Ipv4Addr::LOCALHOST));
        // IPv6 without the option: ENODEV to bind, EINVAL to connect.
        assert_eq!(p("[::1]:5556", true, false), Err(Error::NoDev));
        assert_eq!(p("[::1]:5556", false, false), Err(Error::Invalid));
        assert_eq!(p("[ff02::1]:5555", false, false), Err(Error::Invalid));
        // An interface of the other family than the group.
        assert_eq!(p("127.0.0.1;[ff02::1]:5555", true, true), Err(Error::Invalid));
    }

    #[test]
    fn peer_text_is_libzmqs_and_parses_back() {
        let v4: SocketAddr = "127.0.0.1:5556".parse().unwrap();
        assert_eq!(peer_text(v4), b"127.0.0.1:5556\0");
        // An IPv4 peer of a dual-stack socket is named as IPv4.
        let mapped: SocketAddr = "[::ffff:10.1.2.3]:7".parse().unwrap();
        assert_eq!(peer_text(mapped), b"10.1.2.3:7\0");
        let v6: SocketAddr = "[::1]:5556".parse().unwrap();
        assert_eq!(peer_text(v6), b"[::1]:5556\0");
        for a in [v4, v6] {
            assert_eq!(parse_peer(&peer_text(a)), Some(a));
        }
        // The NUL is optional (C code sends strlen bytes).
        assert_eq!(parse_peer(b"127.0.0.1:5556"), Some(v4));
        for bad in [
            &b""[..],
            b"127.0.0.1",
            b"127.0.0.1:0",
            b"127.0.0.1:x",
            b"127.0.0.1:+1",
            b"localhost:5556",
            b"::1:5556",
            b"[::1]",
            b"127.0.0.1:65536",
            b"\xff:1",
            b"127.0.0.1:5556\0\0",
        ] {
            assert_eq!(parse_peer(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
