//! Where a tcp connect goes and where it comes from: a parsed endpoint (or a SOCKS proxy's
//! address) turned into the destination address and the source address to bind first.
//!
//! The destination: an IP address as written (IPv6 only with ZMQ_IPV6, as libzmq); a host name
//! through getaddrinfo, IPv4 unless ZMQ_IPV6 is set, then IPv6 first ([`pick`]).
//!
//! The source (`tcp://SOURCE;DESTINATION`), in the destination's family, so that one socket
//! can be bound to it and connected: `*` is the unspecified address; an IP address is taken as
//! written; a name is an interface when one has that name (its first address of the family,
//! `interface.rs`), else a host name through getaddrinfo. A name that is neither, or has no
//! address of the family, is ENODEV, as in libzmq. With ZMQ_IPV6 off every destination is IPv4,
//! so the source is IPv4, as libzmq's; with it on, libzmq makes every connection IPv6 (IPv4
//! peers mapped) and looks for the source among IPv6 addresses only, where oxmq connects an
//! IPv4 peer over IPv4 and so looks for an IPv4 source.
//!
//! Contract: [`lookup`] may block on the name service exactly when [`needs_lookup`] says so.
//! The I/O thread calls it itself only otherwise and leaves the rest to a resolver thread, so
//! a slow DNS answer never stalls other connections. A connecting session calls it on every
//! attempt: a peer that moved, or an interface that came up or changed address, is found.

use super::endpoint::{Endpoint, Host, Source};
use super::interface;
use crate::error::{Error, Result};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// The addresses of one connect attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ConnectAddrs {
    pub(crate) dest: SocketAddr,
    /// Bound before connecting, when the endpoint names a source.
    pub(crate) source: Option<SocketAddr>,
}

/// Whether [`lookup`] may ask the name service (and so take as long as it likes).
pub(crate) fn needs_lookup(host: &Host, source: Option<&Source>) -> bool {
    matches!(host, Host::Name(_)) || matches!(source, Some(Source { host: Host::Name(_), .. }))
}

/// Resolves a connect's destination `host:port` and its source. Errors: `Invalid` when the
/// destination has no usable address (an unknown host; IPv6 without ZMQ_IPV6), `NoDev` when
/// the source has none (see the module's rules). Blocks as [`needs_lookup`] says.
pub(crate) fn lookup(host: &Host, port: u16, source: Option<&Source>, ipv6: bool) -> Result<ConnectAddrs> {
    let ip = match host {
        Host::Ip(ip) if ip.is_ipv6() && !ipv6 => return Err(Error::Invalid),
        Host::Ip(ip) => *ip,
        Host::Name(name) => {
            let addrs = (name.as_str(), port).to_socket_addrs().map_err(|_| Error::Invalid)?;
            pick(addrs.map(|a| a.ip()), ipv6).ok_or(Error::Invalid)?
        }
        Host::Any => return Err(Error::Invalid),
    };
    let dest = SocketAddr::new(ip, port);
    let source = source.map(|s| source_addr(s, dest.is_ipv6())).transpose()?;
    Ok(ConnectAddrs { dest, source })
}

/// The address a tcp endpoint names, written `tcp://ip:port` (`[ip]` for IPv6), a host name
/// resolved as a connect would, blocking on the name service; None when it names none. How
/// `zmq_disconnect` and `zmq_unbind` find an endpoint given another way (libzmq's
/// `resolve_tcp_addr`: `localhost` for `127.0.0.1`, an IPv4-mapped IPv6 address for IPv4).
pub(crate) fn canonical(endpoint: &str, ipv6: bool) -> Option<String> {
    let Ok(Endpoint::Tcp { host, port, .. }) = Endpoint::parse(endpoint, false) else {
        return None;
    };
    let host = match host {
        Host::Ip(ip) => Host::Ip(ip.to_canonical()),
        h => h,
    };
    let dest = lookup(&host, port, None, ipv6).ok()?.dest;
    Some(format!("tcp://{dest}"))
}

/// The address to bind for `source`, of the IPv6 family when `v6`, else IPv4.
fn source_addr(source: &Source, v6: bool) -> Result<SocketAddr> {
    let mut addr = match &source.host {
        Host::Any if v6 => SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), 0),
        Host::Any => SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), 0),
        Host::Ip(ip) => SocketAddr::new(*ip, 0),
        Host::Name(name) => match interface::address(name, v6) {
            Some(a) => a,
            None => {
                (name.as_str(), 0).to_socket_addrs().map_err(|_| Error::NoDev)?.find(|a| a.is_ipv6() == v6).ok_or(Error::NoDev)?
            }
        },
    };
    if addr.is_ipv6() != v6 {
        return Err(Error::NoDev);
    }
    addr.set_port(source.port);
    Ok(addr)
}

/// Chooses an address: IPv4 unless IPv6 is enabled, then either (IPv6 first).
pub(crate) fn pick(addrs: impl Iterator<Item = IpAddr>, ipv6: bool) -> Option<IpAddr> {
    let all: Vec<IpAddr> = addrs.collect();
    if ipv6 {
        all.iter().find(|a| a.is_ipv6()).or_else(|| all.first()).copied()
    } else {
        all.iter().find(|a| a.is_ipv4()).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_names_the_address_as_a_bound_or_connected_endpoint_is_written() {
        assert_eq!(canonical("tcp://127.0.0.1:5555", false).as_deref(), Some("tcp://127.0.0.1:5555"));
        assert_eq!(canonical("tcp://localhost:5555", false).as_deref(), Some("tcp://127.0.0.1:5555"));
        assert_eq!(canonical("tcp://[::ffff:127.0.0.1]:5555", false).as_deref(), Some("tcp://127.0.0.1:5555"));
        assert_eq!(canonical("tcp://[::1]:5555", true).as_deref(), Some("tcp://[::1]:5555"));
        assert_eq!(canonical("tcp://[::1]:5555", false), None, "IPv6 needs ZMQ_IPV6");
        for none in ["tcp://127.0.0.1", "tcp://*:5555", "tcp://no-such-host.invalid:1", "ipc://x", "junk"] {
            assert_eq!(canonical(none, false), None, "{none}");
        }
    }

    /// Resolves "tcp://{ep}" as a connect would.
    fn resolve(ep: &str, ipv6: bool) -> Result<ConnectAddrs> {
        match Endpoint::parse(&format!("tcp://{ep}"), false)? {
            Endpoint::Tcp { host, port, source } => lookup(&host, port, source.as_ref(), ipv6),
            e => panic!("not tcp: {e:?}"),
        }
    }

    fn source(ep: &str, ipv6: bool) -> Result<String> {
        resolve(ep, ipv6).map(|a| a.source.expect("a source").to_string())
    }

    #[test]
    fn a_source_resolves_in_the_destinations_family() {
        assert_eq!(source("127.0.0.1:5560;127.0.0.1:1", false).as_deref(), Ok("127.0.0.1:5560"));
        assert_eq!(source("lo;127.0.0.1:1", false).as_deref(), Ok("127.0.0.1:0"));
        assert_eq!(source("lo:5561;127.0.0.1:1", false).as_deref(), Ok("127.0.0.1:5561"));
        assert_eq!(source("localhost:*;127.0.0.1:1", false).as_deref(), Ok("127.0.0.1:0"));
        assert_eq!(source("*:5562;127.0.0.1:1", false).as_deref(), Ok("0.0.0.0:5562"));
        assert_eq!(source("lo;127.0.0.1:1", true).as_deref(), Ok("127.0.0.1:0"), "an IPv4 peer: IPv4 source");
        if interface::loopback_has_v6() {
            assert_eq!(source("lo:5563;[::1]:1", true).as_deref(), Ok("[::1]:5563"));
            assert_eq!(source("[::1];[::1]:1", true).as_deref(), Ok("[::1]:0"));
            assert_eq!(source("*;[::1]:1", true).as_deref(), Ok("[::]:0"));
        }
        assert_eq!(resolve("127.0.0.1:1", false).unwrap().source, None);
    }

    #[test]
    fn a_source_with_no_address_of_the_family_is_enodev() {
        assert_eq!(source("oxmq-no-such0:0;127.0.0.1:1", false), Err(Error::NoDev), "no such interface or host");
        assert_eq!(source("oxmq-no-such0.invalid;127.0.0.1:1", false), Err(Error::NoDev));
        assert_eq!(source("[::1]:0;127.0.0.1:1", true), Err(Error::NoDev), "an IPv6 source, an IPv4 peer");
        assert_eq!(source("127.0.0.1:0;[::1]:1", true), Err(Error::NoDev), "an IPv4 source, an IPv6 peer");
    }

    #[test]
    fn a_destination_without_a_usable_address_is_einval() {
        assert_eq!(resolve("127.0.0.1:0;[::1]:1", false), Err(Error::Invalid), "IPv6 needs ZMQ_IPV6");
        assert_eq!(resolve("oxmq-no-such0.invalid:1", false), Err(Error::Invalid));
    }

    #[test]
    fn only_names_need_the_name_service() {
        let needs = |ep: &str| match Endpoint::parse(&format!("tcp://{ep}"), false).unwrap() {
            Endpoint::Tcp { host, source, .. } => needs_lookup(&host, source.as_ref()),
            _ => unreachable!(),
        };
        assert!(!needs("127.0.0.1:1"));
        assert!(!needs("127.0.0.1:0;127.0.0.1:1"));
        assert!(!needs("*:0;[::1]:1"));
        assert!(needs("localhost:1"));
        assert!(needs("lo;127.0.0.1:1"), "an interface or a host: told apart by the lookup");
    }
}

/// A connect with a source, end to end over loopback tcp: the accepting side sees the chosen
/// address (and port, when one is fixed) as its peer's; the monitor and LAST_ENDPOINT name the
/// endpoint as libzmq 4.3.4 does.
#[cfg(test)]
mod over_tcp {
    use super::interface;
    use crate::testing::{events_until, socket, watch};
    use crate::{opt, Context, Error, Socket, SocketType};
    use std::net::SocketAddr;

    /// A port free on loopback now (the kernel hands it out and takes it back).
    fn free_port(ip: &str) -> u16 {
        std::net::TcpListener::bind((ip, 0)).expect("bind").local_addr().expect("local_addr").port()
    }

    /// The PULL end bound on `bind_ip` (with ZMQ_IPV6 when `v6`), its endpoint.
    fn pull(ctx: &Context, bind_ip: &str, v6: bool) -> (Socket, String) {
        let mut s = socket(ctx, SocketType::Pull);
        s.set_int(opt::IPV6, v6 as i32).unwrap();
        s.bind(&format!("tcp://{bind_ip}:*")).unwrap();
        let ep = s.last_endpoint().unwrap();
        (s, ep)
    }

    /// Connects a PUSH to `tcp://{source};{dst}`, sends one message and returns the address
    /// the PULL end's connection has for its peer.
    fn peer_of(source: &str, bind_ip: &str, v6: bool) -> SocketAddr {
        let ctx = Context::new();
        let (mut pull, ep) = pull(&ctx, bind_ip, v6);
        let mut push = socket(&ctx, SocketType::Push);
        push.set_int(opt::IPV6, v6 as i32).unwrap();
        let given = ep.replace("tcp://", &format!("tcp://{source};"));
        push.connect(&given).unwrap();
        assert_eq!(push.last_endpoint().unwrap(), given, "LAST_ENDPOINT is the endpoint as given");
        push.send("hi", 0).unwrap();
        let m = pull.recv(0).unwrap();
        let fd = m.properties().and_then(|p| p.src_fd()).expect("ZMQ_SRCFD");
        // SAFETY: `fd` is the accepted connection's descriptor, open while its session runs,
        // which it does until the sockets below close; the borrow ends before that.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let peer = socket2::SockRef::from(&fd).peer_addr().unwrap().as_socket().unwrap();
        push.disconnect(&given).unwrap();
        peer
    }

    #[test]
    fn an_address_with_or_without_a_port() {
        let port = free_port("127.0.0.1");
        assert_eq!(peer_of(&format!("127.0.0.1:{port}"), "127.0.0.1", false).to_string(), format!("127.0.0.1:{port}"));
        // 127.0.0.2 is loopback too, and not the address the kernel would choose.
        assert_eq!(peer_of("127.0.0.2", "127.0.0.1", false).ip().to_string(), "127.0.0.2");
        assert_eq!(peer_of("127.0.0.2:*", "127.0.0.1", false).ip().to_string(), "127.0.0.2");
        assert_eq!(peer_of("*", "127.0.0.1", false).ip().to_string(), "127.0.0.1");
    }

    #[test]
    fn an_interface_name() {
        let port = free_port("127.0.0.1");
        assert_eq!(peer_of(&format!("lo:{port}"), "127.0.0.1", false).to_string(), format!("127.0.0.1:{port}"));
        assert_eq!(peer_of("lo", "127.0.0.1", false).ip().to_string(), "127.0.0.1");
    }

    #[test]
    fn a_host_name() {
        let port = free_port("127.0.0.1");
        assert_eq!(peer_of(&format!("localhost:{port}"), "127.0.0.1", false).to_string(), format!("127.0.0.1:{port}"));
    }

    #[test]
    fn ipv6_by_address_and_by_interface() {
        if !interface::loopback_has_v6() {
            eprintln!("skipped: lo has no ::1");
            return;
        }
        let port = free_port("::1");
        assert_eq!(peer_of(&format!("lo:{port}"), "[::1]", true).to_string(), format!("[::1]:{port}"));
        assert_eq!(peer_of("[::1]", "[::1]", true).ip().to_string(), "::1");
        assert_eq!(peer_of(&format!("::1:{port}"), "[::1]", true).to_string(), format!("[::1]:{port}"));
    }

    /// An unknown interface (or host) is no error for `connect`, as in libzmq: interfaces come
    /// and go, so each attempt looks again. An attempt that finds none opens no socket: the
    /// monitor sees CONNECT_RETRIED only, named by the endpoint as given.
    #[test]
    fn an_unknown_interface_is_retried_and_nothing_connects() {
        let ctx = Context::new();
        let (_pull, ep) = pull(&ctx, "127.0.0.1", false);
        let mut push = socket(&ctx, SocketType::Push);
        push.set_int(opt::RECONNECT_IVL, 10).unwrap();
        let mut r = watch(&ctx, &mut push);
        let given = ep.replace("tcp://", "tcp://oxmq-no-such0:0;");
        push.connect(&given).unwrap();
        assert_eq!(events_until(&mut r, &given, "CONNECT_RETRIED"), ["CONNECT_RETRIED"]);
        assert_eq!(events_until(&mut r, &given, "CONNECT_RETRIED"), ["CONNECT_RETRIED"]);
        push.disconnect(&given).unwrap();
    }

    #[test]
    fn a_malformed_source_is_einval() {
        let ctx = Context::new();
        let mut push = socket(&ctx, SocketType::Push);
        for bad in ["tcp://foo bar;127.0.0.1:5555", "tcp://;127.0.0.1:5555", "tcp://127.0.0.1:x;127.0.0.1:5555"] {
            assert_eq!(push.connect(bad), Err(Error::Invalid), "{bad}");
        }
    }

    /// libzmq names the first connection by the endpoint as given, `src;` included; once that
    /// connection ends, its new connecter is named by the address it went to. `disconnect`
    /// needs the endpoint as given.
    #[test]
    fn events_and_disconnect_name_the_endpoint_as_libzmq() {
        let ctx = Context::new();
        let (mut pull, ep) = pull(&ctx, "127.0.0.1", false);
        let mut push = socket(&ctx, SocketType::Push);
        push.set_int(opt::RECONNECT_IVL, 10).unwrap();
        let mut r = watch(&ctx, &mut push);
        let given = ep.replace("tcp://", "tcp://lo:0;");
        push.connect(&given).unwrap();
        let seen = events_until(&mut r, &given, "HANDSHAKE_SUCCEEDED");
        assert_eq!(seen, ["CONNECT_DELAYED", "CONNECTED", "HANDSHAKE_SUCCEEDED"]);
        pull.unbind(&ep).unwrap();
        assert_eq!(events_until(&mut r, &given, "DISCONNECTED"), ["DISCONNECTED"]);
        assert_eq!(events_until(&mut r, &ep, "CONNECT_RETRIED"), ["CONNECT_RETRIED"], "named by the address now");
        assert_eq!(push.disconnect(&ep), Err(Error::NoEnt), "the destination alone names no endpoint");
        push.disconnect(&given).unwrap();
    }
}
