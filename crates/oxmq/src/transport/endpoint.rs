//! Endpoint strings: `tcp://host:port`, `ipc://path`, `ipc://@abstract`, `inproc://name`.
//!
//! Parsing is separate from resolving: a tcp host name is kept as a name here and resolved by
//! the I/O layer (off the I/O thread, again on every reconnect), so a slow DNS answer never
//! stalls other connections and a peer that moves to a new address is found.

use crate::error::{Error, Result};

/// The host part of a tcp endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Host {
    /// `*`: every interface (bind only).
    Any,
    Ip(std::net::IpAddr),
    Name(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// Port 0 means "choose one" (bind only; `*` is accepted as 0).
    Tcp { host: Host, port: u16 },
    /// A filesystem path, or a Linux abstract name when it starts with `@`.
    Ipc(String),
    Inproc(String),
}

impl Endpoint {
    pub(crate) fn parse(s: &str, bind: bool) -> Result<Endpoint> {
        let (proto, addr) = s.split_once("://").ok_or(Error::Invalid)?;
        match proto {
            "tcp" => parse_tcp(addr, bind),
            "ipc" => {
                // "@" alone is an empty abstract name, which libzmq refuses too.
                if addr.is_empty() || addr == "@" {
                    return Err(Error::Invalid);
                }
                // Linux limits sun_path to 108 bytes including the terminator.
                if addr.len() > 107 {
                    return Err(Error::NameTooLong);
                }
                Ok(Endpoint::Ipc(addr.to_string()))
            }
            "inproc" => {
                if addr.is_empty() {
                    return Err(Error::Invalid);
                }
                Ok(Endpoint::Inproc(addr.to_string()))
            }
            "udp" | "pgm" | "epgm" | "tipc" | "vmci" | "norm" | "ws" | "wss" => Err(Error::ProtoNoSupport),
            _ => Err(Error::ProtoNoSupport),
        }
    }
}

/// The source address a tcp connect is bound to before connecting, from the "src;" prefix of
/// its address (`host:port` after "tcp://", or a SOCKS proxy's): an IP address with a port
/// ("*" or 0: any). None when there is no prefix, its host is "*", or it is a name (a host or
/// an interface), which is left to the kernel.
pub(crate) fn tcp_source(addr: &str) -> Option<std::net::SocketAddr> {
    let (src, _) = addr.rsplit_once(';')?;
    let (host, port) = match src.strip_prefix('[') {
        Some(rest) => rest.split_once("]:").or_else(|| rest.strip_suffix(']').map(|h| (h, "0")))?,
        None => src.rsplit_once(':').filter(|(h, _)| !h.contains(':')).unwrap_or((src, "0")),
    };
    let port = if port == "*" { 0 } else { port.parse().ok()? };
    Some(std::net::SocketAddr::new(host.parse().ok()?, port))
}

fn parse_tcp(addr: &str, bind: bool) -> Result<Endpoint> {
    // A connect endpoint may name a source address first: "src;dst" (see `tcp_source`).
    let addr = match addr.rsplit_once(';') {
        Some((_src, dst)) if !bind => dst,
        Some(_) => return Err(Error::Invalid),
        None => addr,
    };
    let (host, port) = if let Some(rest) = addr.strip_prefix('[') {
        let (h, p) = rest.split_once("]:").ok_or(Error::Invalid)?;
        // Strip an IPv6 zone ("fe80::1%eth0") we cannot carry in IpAddr; link-local with zone
        // is rare on loopback setups.
        let h = h.split('%').next().unwrap_or(h);
        let ip: std::net::Ipv6Addr = h.parse().map_err(|_| Error::Invalid)?;
        (Host::Ip(ip.into()), p)
    } else {
        let (h, p) = addr.rsplit_once(':').ok_or(Error::Invalid)?;
        let host = if h == "*" {
            if !bind {
                return Err(Error::Invalid);
            }
            Host::Any
        } else if let Ok(ip) = h.parse::<std::net::IpAddr>() {
            Host::Ip(ip)
        } else if h.is_empty() || h.contains(|c: char| c.is_whitespace() || c == '/') {
            return Err(Error::Invalid);
        } else {
            Host::Name(h.to_string())
        };
        (host, p)
    };
    let port = if port == "*" || port == "0" {
        if !bind {
            return Err(Error::Invalid);
        }
        0
    } else {
        let n: u32 = port.parse().map_err(|_| Error::Invalid)?;
        if n == 0 || n > 65535 {
            return Err(Error::Invalid);
        }
        n as u16
    };
    Ok(Endpoint::Tcp { host, port })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_libzmq_accepts() {
        assert_eq!(
            Endpoint::parse("tcp://127.0.0.1:5555", false).unwrap(),
            Endpoint::Tcp { host: Host::Ip("127.0.0.1".parse().unwrap()), port: 5555 }
        );
        assert_eq!(Endpoint::parse("tcp://*:*", true).unwrap(), Endpoint::Tcp { host: Host::Any, port: 0 });
        assert_eq!(
            Endpoint::parse("tcp://[::1]:0", true).unwrap(),
            Endpoint::Tcp { host: Host::Ip("::1".parse().unwrap()), port: 0 }
        );
        assert_eq!(
            Endpoint::parse("tcp://localhost:80", false).unwrap(),
            Endpoint::Tcp { host: Host::Name("localhost".into()), port: 80 }
        );
        assert_eq!(Endpoint::parse("ipc://@name", true).unwrap(), Endpoint::Ipc("@name".into()));
        assert_eq!(Endpoint::parse("ipc://@", true), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("inproc://x", false).unwrap(), Endpoint::Inproc("x".into()));
    }

    #[test]
    fn source_addresses_are_ip_literals_with_optional_ports() {
        let s = |a: &str| tcp_source(a).map(|s| s.to_string());
        assert_eq!(s("127.0.0.1:0;localhost:1234").as_deref(), Some("127.0.0.1:0"));
        assert_eq!(s("127.0.0.2:5555;10.0.0.1:1").as_deref(), Some("127.0.0.2:5555"));
        assert_eq!(s("127.0.0.1;h:1").as_deref(), Some("127.0.0.1:0"));
        assert_eq!(s("127.0.0.1:*;h:1").as_deref(), Some("127.0.0.1:0"));
        assert_eq!(s("[::1]:7;h:1").as_deref(), Some("[::1]:7"));
        assert_eq!(s("[::1];h:1").as_deref(), Some("[::1]:0"));
        assert_eq!(s("localhost:5555;h:1"), None, "a host name is left to the kernel");
        assert_eq!(s("lo:5555;h:1"), None, "so is an interface");
        assert_eq!(s("*:5555;h:1"), None);
        assert_eq!(s("h:1"), None);
    }

    #[test]
    fn rejects_bad_endpoints_with_libzmq_errors() {
        assert_eq!(Endpoint::parse("tcp://127.0.0.1", false), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("tcp://*:5555", false), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("tcp://1.2.3.4:*", false), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("tcp://1.2.3.4:70000", false), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("nope", false), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("foo://x", false), Err(Error::ProtoNoSupport));
        assert_eq!(Endpoint::parse("inproc://", true), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("ipc://", true), Err(Error::Invalid));
    }
}
