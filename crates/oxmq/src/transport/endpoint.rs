//! Endpoint strings: `tcp://host:port`, `tcp://source;host:port` (connect only),
//! `ipc://path`, `ipc://@abstract`, `inproc://name`, and the transports layered over tcp:
//! `ws://host:port/path`, `wss://host:port/path` (ZWS 2.0, RFC 45) and `tls://host:port`.
//!
//! Parsing is separate from resolving: a tcp host name, and a connect's source given as a name
//! (an interface or a host), are kept as names here and resolved by the I/O layer (off the I/O
//! thread, again on every reconnect; see `resolve.rs`), so a slow DNS answer never stalls other
//! connections, a peer that moves to a new address is found, and an interface that comes up
//! later is used. What can never work (bad syntax, a port out of range) is refused here, so
//! `connect` reports it as EINVAL.

use crate::error::{Error, Result};

/// The host part of a tcp endpoint, or of a connect's source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Host {
    /// `*`: every interface (bind, or a connect's source).
    Any,
    Ip(std::net::IpAddr),
    /// A host name; for a connect's source, an interface name or a host name (an interface
    /// of that name wins, as in libzmq).
    Name(String),
}

/// The address a tcp connect binds its socket to before connecting: the `SOURCE` of
/// `tcp://SOURCE;DESTINATION`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Source {
    pub(crate) host: Host,
    /// 0 (written `0`, `*` or left out): any port.
    pub(crate) port: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// Port 0 means "choose one" (bind only; `*` is accepted as 0). `source` only on connect.
    Tcp {
        host: Host,
        port: u16,
        source: Option<Source>,
    },
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
            "ws" | "wss" | "tls" => Endpoint::parse_layered(s, bind).map(|(e, _)| e),
            _ => Err(Error::ProtoNoSupport),
        }
    }

    /// Parses any endpoint; a layered one (`ws://`, `wss://`, `tls://`) gives the tcp endpoint
    /// underneath and what the layer needs. A ws path defaults to `/`; tls has none.
    pub(crate) fn parse_layered(s: &str, bind: bool) -> Result<(Endpoint, Option<Layered>)> {
        let (proto, addr) = s.split_once("://").ok_or(Error::Invalid)?;
        let scheme = match proto {
            "ws" => Scheme::Ws,
            "wss" => Scheme::Wss,
            "tls" => Scheme::Tls,
            _ => return Endpoint::parse(s, bind).map(|e| (e, None)),
        };
        let (authority, path) = match (scheme, addr.find('/')) {
            (Scheme::Tls, Some(_)) => return Err(Error::Invalid),
            (_, Some(i)) => (&addr[..i], &addr[i..]),
            (_, None) => (addr, "/"),
        };
        if path.bytes().any(|b| b <= b' ' || b == 0x7F) {
            return Err(Error::Invalid);
        }
        // No connect source through a layer: the `;` form is tcp's.
        if authority.contains(';') {
            return Err(Error::Invalid);
        }
        let ep = parse_tcp(authority, bind)?;
        let host = match authority.rsplit_once(':') {
            Some((h, _)) => h.trim_start_matches('[').trim_end_matches(']').to_string(),
            None => String::new(),
        };
        Ok((ep, Some(Layered { scheme, path: path.to_string(), host, authority: authority.to_string() })))
    }
}

/// A transport layered over tcp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// ZWS 2.0 over plain tcp.
    Ws,
    /// ZWS 2.0 over TLS.
    Wss,
    /// ZMTP 3.1 over TLS.
    Tls,
}

impl Scheme {
    /// The endpoint prefix, `ws`, `wss` or `tls`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scheme::Ws => "ws",
            Scheme::Wss => "wss",
            Scheme::Tls => "tls",
        }
    }

    /// Runs over TLS.
    pub(crate) fn tls(self) -> bool {
        self != Scheme::Ws
    }

    /// Runs ZWS 2.0.
    pub(crate) fn ws(self) -> bool {
        self != Scheme::Tls
    }
}

/// What a layered endpoint adds to its tcp endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layered {
    pub(crate) scheme: Scheme,
    /// The WebSocket resource path (`/` by default; empty meaning never).
    pub(crate) path: String,
    /// The host as written, without brackets or port (TLS server name, by default).
    pub(crate) host: String,
    /// `host:port` as written (the HTTP `Host` header).
    pub(crate) authority: String,
}

impl Layered {
    /// The endpoint a listener bound, with its scheme and path: `resolved` is `tcp://a:p`.
    pub(crate) fn bound(&self, resolved: &str) -> String {
        let rest = resolved.strip_prefix("tcp://").unwrap_or(resolved);
        match self.scheme {
            Scheme::Tls => format!("tls://{rest}"),
            s => format!("{}://{rest}{}", s.name(), self.path),
        }
    }
}

impl Source {
    /// Parses a connect's `SOURCE`: `[ipv6]`, `[ipv6]:port`, `host:port` or `host`, where host
    /// is `*`, an IP address or a name (interface or host). As in libzmq, an unbracketed
    /// address with colons ends with its port after the last one (`::1:0` is `::1`, any port).
    /// libzmq 4.3.4 requires the port and resolves no host names for a source (such a connect
    /// never connects); oxmq takes a missing port as 0 and resolves names.
    fn parse(s: &str) -> Result<Source> {
        let (host, port) = match s.strip_prefix('[') {
            Some(rest) => match rest.split_once(']').ok_or(Error::Invalid)? {
                (h, "") => (h, None),
                (h, p) => (h, Some(p.strip_prefix(':').ok_or(Error::Invalid)?)),
            },
            None => match s.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (s, None),
            },
        };
        let port = match port {
            None | Some("*") => 0,
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().map_err(|_| Error::Invalid)?,
            Some(_) => return Err(Error::Invalid),
        };
        let host = if host == "*" {
            Host::Any
        } else if let Ok(ip) = host.parse::<std::net::IpAddr>() {
            Host::Ip(ip)
        } else if !host.is_empty()
            && host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'%' | b':'))
        {
            // The characters libzmq's connect lets through (an IPv6 zone, "fe80::1%eth0",
            // included: getaddrinfo reads it).
            Host::Name(host.to_string())
        } else {
            return Err(Error::Invalid);
        };
        Ok(Source { host, port })
    }
}

fn parse_tcp(addr: &str, bind: bool) -> Result<Endpoint> {
    // A connect endpoint may name a source address first: "src;dst" (see `Source::parse`).
    let (source, addr) = match addr.rsplit_once(';') {
        Some((src, dst)) if !bind => (Some(Source::parse(src)?), dst),
        Some(_) => return Err(Error::Invalid),
        None => (None, addr),
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
    Ok(Endpoint::Tcp { host, port, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(host: Host, port: u16) -> Endpoint {
        Endpoint::Tcp { host, port, source: None }
    }

    #[test]
    fn parses_the_forms_libzmq_accepts() {
        assert_eq!(Endpoint::parse("tcp://127.0.0.1:5555", false).unwrap(), tcp(Host::Ip("127.0.0.1".parse().unwrap()), 5555));
        assert_eq!(Endpoint::parse("tcp://*:*", true).unwrap(), tcp(Host::Any, 0));
        assert_eq!(Endpoint::parse("tcp://[::1]:0", true).unwrap(), tcp(Host::Ip("::1".parse().unwrap()), 0));
        assert_eq!(Endpoint::parse("tcp://localhost:80", false).unwrap(), tcp(Host::Name("localhost".into()), 80));
        assert_eq!(Endpoint::parse("ipc://@name", true).unwrap(), Endpoint::Ipc("@name".into()));
        assert_eq!(Endpoint::parse("ipc://@", true), Err(Error::Invalid));
        assert_eq!(Endpoint::parse("inproc://x", false).unwrap(), Endpoint::Inproc("x".into()));
    }

    /// The source of "tcp://src;dst", as `Source` (host, port) or the error `connect` gives.
    fn source(src: &str) -> Result<(Host, u16)> {
        match Endpoint::parse(&format!("tcp://{src};127.0.0.1:5555"), false)? {
            Endpoint::Tcp { source: Some(s), .. } => Ok((s.host, s.port)),
            e => panic!("no source in {e:?}"),
        }
    }

    #[test]
    fn a_source_is_an_address_an_interface_a_host_or_any_with_an_optional_port() {
        let ip = |s: &str| Host::Ip(s.parse().unwrap());
        let name = |s: &str| Host::Name(s.to_string());
        assert_eq!(source("127.0.0.1:0"), Ok((ip("127.0.0.1"), 0)));
        assert_eq!(source("127.0.0.2:5560"), Ok((ip("127.0.0.2"), 5560)));
        assert_eq!(source("127.0.0.1"), Ok((ip("127.0.0.1"), 0)), "no port: any");
        assert_eq!(source("127.0.0.1:*"), Ok((ip("127.0.0.1"), 0)));
        assert_eq!(source("[127.0.0.1]:7"), Ok((ip("127.0.0.1"), 7)));
        assert_eq!(source("[::1]:7"), Ok((ip("::1"), 7)));
        assert_eq!(source("[::1]"), Ok((ip("::1"), 0)));
        assert_eq!(source("::1:0"), Ok((ip("::1"), 0)), "libzmq: the port follows the last colon");
        assert_eq!(source("lo"), Ok((name("lo"), 0)));
        assert_eq!(source("eth0:0"), Ok((name("eth0"), 0)));
        assert_eq!(source("localhost:5555"), Ok((name("localhost"), 5555)));
        assert_eq!(source("my-host.example_1"), Ok((name("my-host.example_1"), 0)));
        assert_eq!(source("fe80::1%eth0:0"), Ok((name("fe80::1%eth0"), 0)), "a zone: getaddrinfo reads it");
        assert_eq!(source("*"), Ok((Host::Any, 0)));
        assert_eq!(source("*:5560"), Ok((Host::Any, 5560)));
    }

    #[test]
    fn a_source_that_can_never_bind_is_refused_by_connect() {
        for bad in [
            "",
            ":0",
            "127.0.0.1:",
            "127.0.0.1:x",
            "127.0.0.1:65536",
            "lo:-1",
            "foo bar",
            "a/b:0",
            "[::1",
            "[::1]x",
            "[::1]:",
            "h;x",
        ] {
            assert_eq!(source(bad), Err(Error::Invalid), "{bad:?}");
        }
        assert_eq!(Endpoint::parse("tcp://127.0.0.1:0;127.0.0.1:5555", true), Err(Error::Invalid), "bind has no source");
        assert_eq!(
            Endpoint::parse("tcp://127.0.0.1:0;127.0.0.1:*", false),
            Err(Error::Invalid),
            "the destination still needs a port"
        );
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

    #[test]
    fn layered_endpoints_carry_a_tcp_endpoint_and_a_path() {
        let (ep, l) = Endpoint::parse_layered("ws://127.0.0.1:5555/zmq/a", false).unwrap();
        assert_eq!(ep, tcp(Host::Ip("127.0.0.1".parse().unwrap()), 5555));
        let l = l.unwrap();
        assert_eq!((l.scheme, l.path.as_str(), l.host.as_str()), (Scheme::Ws, "/zmq/a", "127.0.0.1"));
        let (_, l) = Endpoint::parse_layered("wss://localhost:443", false).unwrap();
        let l = l.unwrap();
        assert_eq!(
            (l.scheme, l.path.as_str(), l.host.as_str(), l.authority.as_str()),
            (Scheme::Wss, "/", "localhost", "localhost:443")
        );
        let (ep, l) = Endpoint::parse_layered("ws://*:*/x", true).unwrap();
        assert_eq!(ep, tcp(Host::Any, 0));
        assert_eq!(l.unwrap().bound("tcp://0.0.0.0:4000"), "ws://0.0.0.0:4000/x");
        let (_, l) = Endpoint::parse_layered("tls://[::1]:7", false).unwrap();
        assert_eq!(l.unwrap().host, "::1");
        assert_eq!(Endpoint::parse_layered("tls://h:7/x", false), Err(Error::Invalid), "tls has no path");
        assert_eq!(Endpoint::parse_layered("ws://h:*/x", false), Err(Error::Invalid), "connect needs a port");
        assert_eq!(Endpoint::parse_layered("ws://a;h:7/x", false), Err(Error::Invalid));
        assert_eq!(Endpoint::parse_layered("ws://h:7/a b", false), Err(Error::Invalid));
        assert!(Endpoint::parse_layered("tcp://h:7", false).unwrap().1.is_none());
    }
}
