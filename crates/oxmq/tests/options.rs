//! Socket options (zmq_setsockopt / zmq_getsockopt) and endpoint forms that belong to one
//! transport: tcp wildcards, IPv6, host names, abstract ipc, inproc in either order.

mod common;

use common::*;
use oxmq::{opt, Context, Error, SocketType as T};

#[test]
fn wrong_length_and_unknown_options_are_invalid() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Dealer).unwrap();
    assert_eq!(s.setsockopt(opt::SNDHWM, &[0u8; 3]).unwrap_err(), Error::Invalid);
    assert_eq!(s.setsockopt(opt::SNDHWM, &[0u8; 8]).unwrap_err(), Error::Invalid);
    assert_eq!(s.setsockopt(opt::LINGER, &[]).unwrap_err(), Error::Invalid);
    // MAXMSGSIZE is an int64.
    assert_eq!(s.setsockopt(opt::MAXMSGSIZE, &5i32.to_ne_bytes()).unwrap_err(), Error::Invalid);
    s.setsockopt(opt::MAXMSGSIZE, &5i64.to_ne_bytes()).unwrap();
    // Unknown option numbers.
    assert_eq!(s.setsockopt(9999, &1i32.to_ne_bytes()).unwrap_err(), Error::Invalid);
    assert_eq!(s.setsockopt(-1, &1i32.to_ne_bytes()).unwrap_err(), Error::Invalid);
    let mut buf = [0u8; 64];
    assert_eq!(s.getsockopt(9999, &mut buf).unwrap_err(), Error::Invalid);
    // Out-of-range values.
    assert_eq!(s.set_int(opt::SNDHWM, -1).unwrap_err(), Error::Invalid);
    assert_eq!(s.set_int(opt::LINGER, -2).unwrap_err(), Error::Invalid);
    assert_eq!(s.set_int(opt::RCVTIMEO, -2).unwrap_err(), Error::Invalid);
    // A routing id may not be empty or longer than 255 bytes, nor start with a zero byte.
    assert_eq!(s.set_bytes(opt::ROUTING_ID, &[]).unwrap_err(), Error::Invalid);
    assert_eq!(s.set_bytes(opt::ROUTING_ID, &[b'x'; 256]).unwrap_err(), Error::Invalid);
    s.set_bytes(opt::ROUTING_ID, &[b'x'; 255]).unwrap();
    // SUBSCRIBE on anything but SUB (and XSUB) is invalid.
    assert_eq!(s.set_bytes(opt::SUBSCRIBE, b"x").unwrap_err(), Error::Invalid);
    // A buffer too small for the value.
    assert_eq!(s.getsockopt(opt::SNDHWM, &mut buf[..3]).unwrap_err(), Error::Invalid);
    // Flags other than DONTWAIT/SNDMORE are not an error in libzmq; we only check the known ones.
}

#[test]
fn integer_options_round_trip_with_libzmq_defaults() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Router).unwrap();
    for (o, default) in [
        (opt::SNDHWM, 1000),
        (opt::RCVHWM, 1000),
        (opt::LINGER, -1),
        (opt::RCVTIMEO, -1),
        (opt::SNDTIMEO, -1),
        (opt::RECONNECT_IVL, 100),
        (opt::RECONNECT_IVL_MAX, 0),
        (opt::BACKLOG, 100),
        (opt::IMMEDIATE, 0),
        (opt::IPV6, 0),
        (opt::ROUTER_MANDATORY, 0),
        (opt::HANDSHAKE_IVL, 30_000),
    ] {
        assert_eq!(s.get_int(o).unwrap(), default, "default of option {o}");
        s.set_int(o, 1).unwrap();
        assert_eq!(s.get_int(o).unwrap(), 1, "option {o} after set");
    }
    let mut v = [0u8; 8];
    assert_eq!(s.getsockopt(opt::MAXMSGSIZE, &mut v).unwrap(), 8);
    assert_eq!(i64::from_ne_bytes(v), -1, "MAXMSGSIZE default");
    // The raw interface agrees with the typed helpers.
    s.setsockopt(opt::SNDHWM, &77i32.to_ne_bytes()).unwrap();
    let mut b = [0u8; 4];
    assert_eq!(s.getsockopt(opt::SNDHWM, &mut b).unwrap(), 4);
    assert_eq!(i32::from_ne_bytes(b), 77);
}

#[test]
fn getsockopt_type_for_every_socket_type() {
    let ctx = Context::new();
    for (kind, raw) in [
        (T::Pair, 0),
        (T::Pub, 1),
        (T::Sub, 2),
        (T::Req, 3),
        (T::Rep, 4),
        (T::Dealer, 5),
        (T::Router, 6),
        (T::Pull, 7),
        (T::Push, 8),
    ] {
        let mut s = ctx.socket(kind).unwrap();
        assert_eq!(s.get_int(opt::TYPE).unwrap(), raw, "{kind:?}");
        assert_eq!(s.socket_type(), kind);
        assert_eq!(kind.as_raw(), raw);
        assert_eq!(T::from_raw(raw), Some(kind));
        // TYPE is read-only.
        assert_eq!(s.set_int(opt::TYPE, raw).unwrap_err(), Error::Invalid);
    }
    assert_eq!(T::from_raw(99), None);
    assert_eq!(T::from_raw(-1), None);
}

#[test]
fn getsockopt_rcvmore_follows_frames() {
    let ctx = Context::new();
    let (mut a, mut b, _) = pair(&ctx, Transport::Inproc, T::Pair, T::Pair);
    assert_eq!(a.get_int(opt::RCVMORE).unwrap(), 0);
    b.send_multipart([&b"1"[..], b"2", b"3"], 0).unwrap();
    for more in [1, 1, 0] {
        a.recv(0).unwrap();
        assert_eq!(a.get_int(opt::RCVMORE).unwrap(), more);
        assert_eq!(a.rcvmore(), more == 1);
    }
}

#[test]
fn last_endpoint_is_nul_terminated_string() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Pull).unwrap();
    assert_eq!(s.last_endpoint().unwrap(), "", "before any bind");
    s.bind("tcp://127.0.0.1:*").unwrap();
    let ep = s.last_endpoint().unwrap();
    let port: u16 = ep.strip_prefix("tcp://127.0.0.1:").expect(&ep).parse().expect(&ep);
    assert_ne!(port, 0);
    let mut buf = [0xAAu8; 256];
    let n = s.getsockopt(opt::LAST_ENDPOINT, &mut buf).unwrap();
    assert_eq!(n, ep.len() + 1, "length includes the NUL");
    assert_eq!(&buf[..ep.len()], ep.as_bytes());
    assert_eq!(buf[ep.len()], 0);
    assert_eq!(s.getsockopt(opt::LAST_ENDPOINT, &mut buf[..ep.len()]).unwrap_err(), Error::Invalid);
    // inproc and ipc report the endpoint as given.
    let ipc = format!("ipc://{}", ipc_path());
    s.bind(&ipc).unwrap();
    assert_eq!(s.last_endpoint().unwrap(), ipc);
    let inproc = format!("inproc://{}", unique("le"));
    s.bind(&inproc).unwrap();
    assert_eq!(s.last_endpoint().unwrap(), inproc);
    // Connect also sets it.
    let mut c = ctx.socket(T::Push).unwrap();
    c.set_int(opt::LINGER, 0).unwrap();
    c.connect(&ep).unwrap();
    assert_eq!(c.last_endpoint().unwrap(), ep);
}

#[test]
fn bad_endpoints() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Pull).unwrap();
    assert_eq!(s.bind("foo://bar").unwrap_err(), Error::ProtoNoSupport);
    assert_eq!(s.connect("foo://bar").unwrap_err(), Error::ProtoNoSupport);
    assert_eq!(s.bind("no-scheme").unwrap_err(), Error::Invalid);
    assert_eq!(s.bind("tcp://127.0.0.1").unwrap_err(), Error::Invalid, "no port");
    assert_eq!(s.bind("tcp://127.0.0.1:99999").unwrap_err(), Error::Invalid, "port out of range");
    assert_eq!(s.connect("tcp://127.0.0.1:*").unwrap_err(), Error::Invalid, "wildcard connect");
    assert_eq!(s.bind("inproc://").unwrap_err(), Error::Invalid, "empty inproc name");
    s.bind("tcp://127.0.0.1:*").unwrap();
    let ep = s.last_endpoint().unwrap();
    let mut t = ctx.socket(T::Pull).unwrap();
    assert_eq!(t.bind(&ep).unwrap_err(), Error::AddrInUse);
    let name = format!("inproc://{}", unique("dup"));
    s.bind(&name).unwrap();
    assert_eq!(t.bind(&name).unwrap_err(), Error::AddrInUse);
}

#[test]
fn tcp_any_address_port_zero() {
    let ctx = Context::new();
    let mut pull = socket(&ctx, T::Pull);
    pull.bind("tcp://*:0").unwrap();
    let ep = pull.last_endpoint().unwrap();
    let port: u16 = ep.strip_prefix("tcp://0.0.0.0:").unwrap_or_else(|| panic!("LAST_ENDPOINT {ep}")).parse().unwrap();
    assert_ne!(port, 0);
    let mut push = socket(&ctx, T::Push);
    push.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    push.send("via *:0", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"via *:0");
}

#[test]
fn tcp_localhost_name() {
    let ctx = Context::new();
    let mut pull = socket(&ctx, T::Pull);
    pull.bind("tcp://127.0.0.1:*").unwrap();
    let port = pull.last_endpoint().unwrap().rsplit(':').next().unwrap().to_string();
    let mut push = socket(&ctx, T::Push);
    push.connect(&format!("tcp://localhost:{port}")).unwrap();
    push.send("via localhost", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"via localhost");
    // Binding by name works too.
    let mut rep = socket(&ctx, T::Rep);
    rep.bind("tcp://localhost:*").unwrap();
    let ep = rep.last_endpoint().unwrap();
    let mut req = socket(&ctx, T::Req);
    req.connect(&ep).unwrap();
    req.send("q", 0).unwrap();
    assert_eq!(recv_bytes(&mut rep), b"q");
}

/// IPV4ONLY, deprecated in libzmq but still read and written by it, is IPV6's opposite.
#[test]
fn ipv4only_is_ipv6s_opposite() {
    let ctx = Context::new();
    let mut s = socket(&ctx, T::Pull);
    assert_eq!(s.get_int(opt::IPV4ONLY).unwrap(), 1);
    s.set_int(opt::IPV4ONLY, 0).unwrap();
    assert_eq!(s.get_int(opt::IPV6).unwrap(), 1);
    s.set_int(opt::IPV6, 0).unwrap();
    assert_eq!(s.get_int(opt::IPV4ONLY).unwrap(), 1);
    assert!(s.set_int(opt::IPV4ONLY, 2).is_err());
}

#[test]
fn tcp_ipv6_loopback() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("skip: no IPv6 loopback on this host");
        return;
    }
    let ctx = Context::new();
    let mut pull = socket(&ctx, T::Pull);
    // Without IPV6 an IPv6 address cannot be bound.
    assert!(pull.bind("tcp://[::1]:*").is_err(), "IPv6 bind without IPV6=1");
    pull.set_int(opt::IPV6, 1).unwrap();
    pull.bind("tcp://[::1]:*").unwrap();
    let ep = pull.last_endpoint().unwrap();
    assert!(ep.starts_with("tcp://[::1]:"), "LAST_ENDPOINT {ep}");
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::IPV6, 1).unwrap();
    push.connect(&ep).unwrap();
    push.send("over v6", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"over v6");
    // Context-wide IPV6 is inherited by new sockets.
    let ctx6 = Context::new();
    ctx6.set(opt::CTX_IPV6, 1).unwrap();
    let mut s = ctx6.socket(T::Pull).unwrap();
    assert_eq!(s.get_int(opt::IPV6).unwrap(), 1);
}

#[test]
fn ipc_abstract_namespace() {
    let ctx = Context::new();
    let ep = format!("ipc://@{}", unique("abstract"));
    let mut pull = socket(&ctx, T::Pull);
    pull.bind(&ep).unwrap();
    assert_eq!(pull.last_endpoint().unwrap(), ep);
    let mut push = socket(&ctx, T::Push);
    push.connect(&ep).unwrap();
    push.send("abstract", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"abstract");
    // No file appears for an abstract socket.
    assert!(!std::path::Path::new(&ep["ipc://".len()..]).exists());
}

#[test]
fn ipc_path_is_removed_on_unbind() {
    let ctx = Context::new();
    let path = ipc_path();
    let ep = format!("ipc://{path}");
    let mut pull = socket(&ctx, T::Pull);
    pull.bind(&ep).unwrap();
    assert!(std::path::Path::new(&path).exists(), "socket file exists while bound");
    pull.unbind(&ep).unwrap();
    let mut again = socket(&ctx, T::Pull);
    again.bind(&ep).unwrap();
}

#[test]
fn inproc_bind_and_connect_in_either_order() {
    let ctx = Context::new();
    // bind, then connect
    let ep = format!("inproc://{}", unique("order"));
    let mut a = socket(&ctx, T::Pair);
    a.bind(&ep).unwrap();
    let mut b = socket(&ctx, T::Pair);
    b.connect(&ep).unwrap();
    b.send("bind first", 0).unwrap();
    assert_eq!(recv_bytes(&mut a), b"bind first");
    // connect, send, then bind
    let ep2 = format!("inproc://{}", unique("order"));
    let mut c = socket(&ctx, T::Pair);
    c.connect(&ep2).unwrap();
    c.send("connect first", 0).unwrap();
    let mut d = socket(&ctx, T::Pair);
    d.bind(&ep2).unwrap();
    assert_eq!(recv_bytes(&mut d), b"connect first");
    d.send("back", 0).unwrap();
    assert_eq!(recv_bytes(&mut c), b"back");
    // inproc endpoints belong to one context.
    let other = Context::new();
    let mut e = other.socket(T::Pair).unwrap();
    e.set_int(opt::LINGER, 0).unwrap();
    e.set_int(opt::SNDTIMEO, 0).unwrap();
    e.connect(&ep).unwrap();
    e.send("x", opt::DONTWAIT).ok();
    assert_quiet(&mut a);
}

#[test]
fn socket_type_mismatch_is_refused() {
    // RFC 23: a PUSH may only talk to a PULL. A PUSH connected to a PUB gets no peer.
    let ctx = Context::new();
    let mut publ = socket(&ctx, T::Pub);
    let ep = bind(&mut publ, Transport::Tcp);
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::IMMEDIATE, 1).unwrap();
    push.connect(&ep).unwrap();
    // A valid peer on the same PUSH proves the connection attempts were made.
    let mut pull = socket(&ctx, T::Pull);
    let ep2 = bind(&mut pull, Transport::Tcp);
    push.connect(&ep2).unwrap();
    eventually("PUSH reaches its valid peer", || push.send("x", opt::DONTWAIT).ok());
    for i in 0..10 {
        push.send(format!("m{i}"), 0).unwrap();
    }
    assert_eq!(recv_bytes(&mut pull), b"x");
    for i in 0..10 {
        assert_eq!(recv_bytes(&mut pull), format!("m{i}").into_bytes(), "all go to the PULL, none to the PUB");
    }
}

/// zmq_disconnect and zmq_unbind find a tcp endpoint given another way, by the address it
/// names, as libzmq 4.3 does (`resolve_tcp_addr`); a tcp endpoint that names no address is
/// ENOENT there, not EINVAL. Each case was checked against libzmq 4.3.5 through pyzmq.
#[test]
fn unbind_and_disconnect_find_a_tcp_endpoint_by_the_address_it_names() {
    let ctx = Context::new();
    let mut pull = ctx.socket(T::Pull).unwrap();
    pull.bind("tcp://127.0.0.1:*").unwrap();
    let ep = pull.last_endpoint().unwrap();
    let port = ep.rsplit(':').next().unwrap().to_string();
    let mut push = ctx.socket(T::Push).unwrap();
    push.connect(&ep).unwrap();
    push.send("x", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"x");
    push.disconnect(&format!("tcp://localhost:{port}")).unwrap();
    assert_eq!(push.disconnect(&ep).unwrap_err(), Error::NoEnt, "already disconnected");
    let mut mapped = ctx.socket(T::Push).unwrap();
    mapped.connect(&ep).unwrap();
    mapped.disconnect(&format!("tcp://[::ffff:127.0.0.1]:{port}")).unwrap();
    // The endpoint string is the key: connected by name, it is not found by the address.
    let mut named = ctx.socket(T::Push).unwrap();
    named.connect(&format!("tcp://localhost:{port}")).unwrap();
    assert_eq!(named.disconnect(&ep).unwrap_err(), Error::NoEnt);
    named.disconnect(&format!("tcp://localhost:{port}")).unwrap();
    // Not found, or naming no address: ENOENT. Not an endpoint: EINVAL, EPROTONOSUPPORT.
    for s in ["tcp://127.0.0.1", "tcp://no-such-host.invalid:1", "tcp://*:1"] {
        assert_eq!(push.disconnect(s).unwrap_err(), Error::NoEnt, "disconnect {s}");
        assert_eq!(pull.unbind(s).unwrap_err(), Error::NoEnt, "unbind {s}");
    }
    assert_eq!(push.disconnect("junk").unwrap_err(), Error::Invalid);
    assert_eq!(pull.unbind("junk").unwrap_err(), Error::Invalid);
    assert_eq!(push.disconnect("foo://x").unwrap_err(), Error::ProtoNoSupport);
    pull.unbind(&format!("tcp://localhost:{port}")).unwrap();
    assert_eq!(pull.unbind(&ep).unwrap_err(), Error::NoEnt, "already unbound");
}
