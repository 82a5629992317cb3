//! What each socket type asks of its links, decided here once per bind or connect so that the
//! I/O side never needs to know socket types: which inbound traffic a link delivers, whether
//! it turns subscriptions into commands, whether its pipe outlives a reconnect, raw or ZMTP,
//! and the session's snapshot of the socket's options ([`SessionConfig`]).

use super::options::Options;
use super::SocketType;
use crate::io::config::{HandshakeOptions, Inbound, LinkPolicy, SessionConfig};
use crate::transport::connect::SocksProxy;
use crate::transport::{ListenOptions, StreamOptions};

impl SocketType {
    /// ROUTER, DEALER and REQ send PROBE_ROUTER's empty message to each new peer.
    pub(crate) fn probes(self) -> bool {
        matches!(self, SocketType::Router | SocketType::Dealer | SocketType::Req)
    }

    /// The types that send HELLO_MSG first on each new connection, as libzmq 4.3's.
    pub(crate) fn sends_hello(self) -> bool {
        use SocketType as T;
        matches!(self, T::Router | T::Dealer | T::Client | T::Server | T::Peer)
    }

    /// The types that receive DISCONNECT_MSG from a peer that goes, as libzmq 4.3's.
    pub(crate) fn takes_disconnect_msg(self) -> bool {
        matches!(self, SocketType::Router | SocketType::Server | SocketType::Peer)
    }
}

/// CONFLATE's directions for a socket of `kind`: (its reads, its writes) keep only the newest
/// message. CONFLATE applies to DEALER, PULL, PUSH, PUB and SUB, as libzmq; subscriptions are
/// never conflated: a SUB's outbound and a PUB's inbound direction carry them, and dropping one
/// would silently change what is delivered.
pub(crate) fn conflate(kind: SocketType, o: &Options) -> (bool, bool) {
    use SocketType as T;
    if !o.conflate || !matches!(kind, T::Dealer | T::Pull | T::Push | T::Pub | T::Sub) {
        return (false, false);
    }
    (kind != T::Pub, kind != T::Sub)
}

/// The link rules for a socket of `kind` with options `o`.
pub(crate) fn link_policy(kind: SocketType, o: &Options) -> LinkPolicy {
    use SocketType as T;
    let by_id = kind == T::Router && o.link.connect_routing_id.is_none();
    let non_empty = |b: &bytes::Bytes| (!b.is_empty()).then(|| b.clone());
    LinkPolicy {
        // DGRAM never gets a stream link (its binds and connects are refused before).
        wire_type: kind.wire().unwrap_or(zmtp::SocketType::Pair),
        inbound: match kind {
            T::Push => Inbound::Nothing,
            T::Pub => Inbound::Subscriptions,
            _ => Inbound::All,
        },
        takes_subscriptions: matches!(kind, T::Pub | T::XPub),
        takes_joins: kind == T::Radio,
        sends_subscriptions: matches!(kind, T::Sub | T::XSub),
        publishes: matches!(kind, T::Pub | T::XPub | T::Radio),
        raw: kind == T::Stream,
        keeps_pipe: !by_id && !o.immediate,
        conflate: conflate(kind, o),
        probe: o.probe_router && kind.probes(),
        hello: if kind.sends_hello() { non_empty(&o.link.hello_msg) } else { None },
        farewell: if kind.takes_disconnect_msg() { non_empty(&o.link.disconnect_msg) } else { None },
    }
}

/// The stream options of `o`.
pub(crate) fn stream_options(o: &Options) -> StreamOptions {
    StreamOptions {
        tcp_keepalive: o.tcp_keepalive,
        tcp_keepalive_cnt: o.tcp_keepalive_cnt,
        tcp_keepalive_idle: o.tcp_keepalive_idle,
        tcp_keepalive_intvl: o.tcp_keepalive_intvl,
        sndbuf: o.sndbuf,
        rcvbuf: o.rcvbuf,
        tos: o.tos,
        priority: o.priority,
        tcp_maxrt: o.tcp_maxrt,
        bound_device: o.bound_device.clone(),
        ipv6: o.ipv6,
        socks: (!o.socks_proxy.is_empty()).then(|| SocksProxy {
            proxy: o.socks_proxy.clone(),
            username: o.socks_username.clone(),
            password: o.socks_password.clone(),
        }),
    }
}

/// A listener's options.
pub(crate) fn listen_options(o: &Options) -> ListenOptions {
    ListenOptions { stream: stream_options(o), backlog: o.backlog, use_fd: o.use_fd, filters: o.accept_filters.clone() }
}

/// The snapshot a session of a socket of `kind` takes of its options.
pub(crate) fn session_config(kind: SocketType, o: &Options) -> SessionConfig {
    let sec = &o.security;
    SessionConfig {
        policy: link_policy(kind, o),
        stream: stream_options(o),
        link: o.link.clone(),
        handshake: HandshakeOptions {
            routing_id: o.routing_id.clone(),
            mechanism: sec.mechanism(),
            max_msg_size: o.max_msg_size(),
            properties: o.app_metadata.clone(),
            zap_domain: sec.zap_domain.clone(),
            zap_enforce_domain: sec.zap_enforce_domain,
            zap: sec.zap.clone(),
            handshake_ivl: o.handshake_ivl,
        },
        hwm: [super::hwm(o.sndhwm), super::hwm(o.rcvhwm)],
        reconnect_ivl: o.reconnect_ivl,
        reconnect_ivl_max: o.reconnect_ivl_max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opt;

    #[test]
    fn hello_and_disconnect_msgs_apply_to_libzmqs_types() {
        let mut o = Options::new(false);
        assert_eq!(link_policy(SocketType::Dealer, &o).hello, None, "empty: none");
        o.set(opt::HELLO_MSG, b"hi").unwrap();
        o.set(opt::DISCONNECT_MSG, b"bye").unwrap();
        for t in [SocketType::Router, SocketType::Dealer, SocketType::Client, SocketType::Server, SocketType::Peer] {
            assert_eq!(link_policy(t, &o).hello.as_deref(), Some(&b"hi"[..]), "{t:?}");
        }
        for t in [SocketType::Req, SocketType::Pub, SocketType::Stream, SocketType::Channel] {
            assert_eq!(link_policy(t, &o).hello, None, "{t:?}");
        }
        for t in [SocketType::Router, SocketType::Server, SocketType::Peer] {
            assert_eq!(link_policy(t, &o).farewell.as_deref(), Some(&b"bye"[..]), "{t:?}");
        }
        for t in [SocketType::Dealer, SocketType::Client, SocketType::Rep] {
            assert_eq!(link_policy(t, &o).farewell, None, "{t:?}");
        }
        o.set(opt::HELLO_MSG, b"").unwrap();
        assert_eq!(link_policy(SocketType::Router, &o).hello, None, "an empty value clears it");
    }

    #[test]
    fn inbound_traffic_and_subscriptions_by_type() {
        let o = Options::new(false);
        let p = |t| link_policy(t, &o);
        assert_eq!(p(SocketType::Push).inbound, Inbound::Nothing);
        assert_eq!(p(SocketType::Pub).inbound, Inbound::Subscriptions);
        assert_eq!(p(SocketType::XPub).inbound, Inbound::All, "XPUB passes other messages up too");
        assert!(p(SocketType::Pub).takes_subscriptions && p(SocketType::XPub).takes_subscriptions);
        assert!(!p(SocketType::Sub).takes_subscriptions);
        assert!(p(SocketType::Sub).sends_subscriptions && p(SocketType::XSub).sends_subscriptions);
        assert!(!p(SocketType::Dealer).sends_subscriptions);
        assert!(p(SocketType::Radio).takes_joins && !p(SocketType::Dish).takes_joins);
        assert!(p(SocketType::Stream).raw && !p(SocketType::Router).raw);
        assert!(p(SocketType::Pub).publishes && p(SocketType::Radio).publishes && !p(SocketType::Push).publishes);
    }

    #[test]
    fn a_routers_pipe_is_per_connection_unless_named() {
        let mut o = Options::new(false);
        assert!(!link_policy(SocketType::Router, &o).keeps_pipe);
        assert!(link_policy(SocketType::Dealer, &o).keeps_pipe);
        assert!(link_policy(SocketType::Stream, &o).keeps_pipe, "STREAM keeps the peer's routing id");
        o.set(opt::CONNECT_ROUTING_ID, b"peer").unwrap();
        assert!(link_policy(SocketType::Router, &o).keeps_pipe);
        o.set(opt::IMMEDIATE, &1i32.to_ne_bytes()).unwrap();
        assert!(!link_policy(SocketType::Dealer, &o).keeps_pipe, "IMMEDIATE: a pipe per connection");
    }

    #[test]
    fn conflate_keeps_subscriptions() {
        let mut o = Options::new(false);
        o.set(opt::CONFLATE, &1i32.to_ne_bytes()).unwrap();
        assert_eq!(conflate(SocketType::Sub, &o), (true, false), "a SUB's subscriptions go out whole");
        assert_eq!(conflate(SocketType::Pub, &o), (false, true), "a PUB's inbound carries subscriptions");
        assert_eq!(conflate(SocketType::Pull, &o), (true, true));
        assert_eq!(conflate(SocketType::Router, &o), (false, false), "not a conflating type");
    }
}
