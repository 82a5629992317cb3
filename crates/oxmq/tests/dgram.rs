//! DGRAM (libzmq's draft raw-udp socket) over real udp on loopback, IPv4 and IPv6 (the IPv6
//! cases skip with a message where the host has no `::1`): [address, body] messages both ways,
//! the address text byte for byte as libzmq's, bare bodies on the wire checked against plain
//! udp sockets, and the errors libzmq gives. Udp may drop a datagram, so a first exchange is
//! repeated until it arrives, within the deadline.

mod common;

use common::*;
use oxmq::{opt, Context, Error, Socket, SocketType as T};
use std::net::UdpSocket;
use std::time::{Duration, Instant};

/// Whether this host has an IPv6 loopback to test on.
fn ipv6_loopback() -> bool {
    UdpSocket::bind("[::1]:0").is_ok()
}

/// A DGRAM bound to `ep` (IPV6 set with `ipv6`), and the port it got.
fn dgram_on(ctx: &Context, ep: &str, ipv6: bool) -> (Socket, u16) {
    let mut s = socket(ctx, T::Dgram);
    s.set_int(opt::IPV6, ipv6 as i32).unwrap();
    s.bind(ep).unwrap_or_else(|e| panic!("bind {ep}: {e:?}"));
    let last = s.last_endpoint().unwrap();
    let port = last.rsplit_once(':').unwrap().1.parse().unwrap();
    (s, port)
}

/// Sends `[to, body]` from `from` until `at` receives a message (udp may drop one), within
/// [`DEADLINE`]; returns what `at` received as [address, body].
fn exchange(from: &mut Socket, to: &[u8], body: &[u8], at: &mut Socket) -> (Vec<u8>, Vec<u8>) {
    let end = Instant::now() + DEADLINE;
    loop {
        send_parts(from, &[to, body]);
        if let Some(addr) = try_recv(at, 200) {
            assert!(at.rcvmore(), "the address frame comes with MORE");
            let body = recv_bytes(at);
            assert!(!at.rcvmore(), "two frames only");
            return (addr.to_vec(), body);
        }
        assert!(Instant::now() < end, "nothing arrived at {:?}", String::from_utf8_lossy(to));
    }
}

fn text(addr: &str) -> Vec<u8> {
    format!("{addr}\0").into_bytes()
}

#[test]
fn roundtrip_over_ipv4_names_the_sender() {
    let ctx = Context::new();
    let (mut a, pa) = dgram_on(&ctx, "udp://127.0.0.1:*", false);
    let (mut b, pb) = dgram_on(&ctx, "udp://127.0.0.1:*", false);
    // As test_dgram.c: the destination without a NUL, as strlen gives it.
    let (from, body) = exchange(&mut a, format!("127.0.0.1:{pb}").as_bytes(), b"Is someone there ?", &mut b);
    assert_eq!(from, text(&format!("127.0.0.1:{pa}")));
    assert_eq!(body, b"Is someone there ?");
    // The received address, NUL and all, sends the answer back.
    let (from, body) = exchange(&mut b, &from, b"Yes, there is !", &mut a);
    assert_eq!(from, text(&format!("127.0.0.1:{pb}")));
    assert_eq!(body, b"Yes, there is !");
    // An empty body is a datagram too.
    let (_, body) = exchange(&mut a, format!("127.0.0.1:{pb}").as_bytes(), b"", &mut b);
    assert!(body.is_empty());
}

#[test]
fn roundtrip_over_ipv6() {
    if !ipv6_loopback() {
        eprintln!("skip: no IPv6 loopback (::1) on this host");
        return;
    }
    let ctx = Context::new();
    let (mut a, pa) = dgram_on(&ctx, "udp://[::1]:*", true);
    let (mut b, pb) = dgram_on(&ctx, "udp://[::1]:*", true);
    let (from, body) = exchange(&mut a, format!("[::1]:{pb}").as_bytes(), b"six", &mut b);
    assert_eq!((from.clone(), body), (text(&format!("[::1]:{pa}")), b"six".to_vec()));
    let (from, body) = exchange(&mut b, &from, b"back", &mut a);
    assert_eq!((from, body), (text(&format!("[::1]:{pb}")), b"back".to_vec()));
}

#[test]
fn wildcard_with_ipv6_takes_both_families() {
    if !ipv6_loopback() {
        eprintln!("skip: no IPv6 loopback (::1) on this host");
        return;
    }
    let ctx = Context::new();
    let (mut dual, pd) = dgram_on(&ctx, "udp://*:*", true);
    let (mut v4, p4) = dgram_on(&ctx, "udp://127.0.0.1:*", false);
    let (mut v6, p6) = dgram_on(&ctx, "udp://[::1]:*", true);
    // An IPv4 peer is named as IPv4, and answered through the same socket.
    let (from, _) = exchange(&mut v4, format!("127.0.0.1:{pd}").as_bytes(), b"4", &mut dual);
    assert_eq!(from, text(&format!("127.0.0.1:{p4}")));
    let (_, body) = exchange(&mut dual, &from, b"to 4", &mut v4);
    assert_eq!(body, b"to 4");
    let (from, _) = exchange(&mut v6, format!("[::1]:{pd}").as_bytes(), b"6", &mut dual);
    assert_eq!(from, text(&format!("[::1]:{p6}")));
    let (_, body) = exchange(&mut dual, &from, b"to 6", &mut v6);
    assert_eq!(body, b"to 6");
}

#[test]
fn datagrams_are_bare_bodies() {
    let ctx = Context::new();
    let (mut d, pd) = dgram_on(&ctx, "udp://127.0.0.1:*", false);
    let raw = UdpSocket::bind("127.0.0.1:0").unwrap();
    raw.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let praw = raw.local_addr().unwrap().port();
    // A plain udp datagram arrives as [sender, body]; a large one whole.
    let big: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
    for body in [&b"plain"[..], &big] {
        let end = Instant::now() + DEADLINE;
        let m = loop {
            raw.send_to(body, ("127.0.0.1", pd)).unwrap();
            if let Some(m) = try_recv(&mut d, 200) {
                break m;
            }
            assert!(Instant::now() < end, "nothing arrived");
        };
        assert_eq!(&m[..], &text(&format!("127.0.0.1:{praw}"))[..]);
        assert_eq!(recv_bytes(&mut d), body);
    }
    // A DGRAM message goes out as the body alone.
    let end = Instant::now() + DEADLINE;
    let mut buf = [0u8; 64];
    loop {
        send_parts(&mut d, &[format!("127.0.0.1:{praw}").as_bytes(), b"bare"]);
        if let Ok((n, from)) = raw.recv_from(&mut buf) {
            assert_eq!((&buf[..n], from.port()), (&b"bare"[..], pd));
            break;
        }
        assert!(Instant::now() < end, "nothing arrived");
    }
}

#[test]
fn refuses_what_libzmq_refuses() {
    let ctx = Context::new();
    let mut d = socket(&ctx, T::Dgram);
    // Nowhere to send before a bind.
    assert_eq!(d.send_multipart([&b"127.0.0.1:5555"[..], b"x"], opt::DONTWAIT), Err(Error::Again));
    // udp only, and bound: a DGRAM does not connect.
    assert_eq!(d.connect("udp://127.0.0.1:5555"), Err(Error::NoCompatProto));
    assert_eq!(d.connect("tcp://127.0.0.1:5555"), Err(Error::NoCompatProto));
    assert_eq!(d.bind("tcp://127.0.0.1:*"), Err(Error::NoCompatProto));
    assert_eq!(d.bind(&format!("inproc://{}", unique("dgram"))), Err(Error::NoCompatProto));
    assert_eq!(d.bind("udp://[::1]:*"), Err(Error::NoDev)); // IPv6 needs ZMQ_IPV6
    d.bind("udp://127.0.0.1:*").unwrap();
    let port: u16 = d.last_endpoint().unwrap().rsplit_once(':').unwrap().1.parse().unwrap();
    // One udp socket per DGRAM.
    assert_eq!(d.bind("udp://127.0.0.1:*"), Err(Error::NotSup));
    // The shape: an address with MORE, then one body.
    assert_eq!(d.send("no more flag", 0), Err(Error::Invalid));
    for bad in ["", "127.0.0.1", "127.0.0.1:0", "localhost:5555", "127.0.0.1:port", "::1:5555"] {
        assert_eq!(d.send(bad, opt::SNDMORE), Err(Error::Invalid), "{bad:?}");
    }
    d.send(format!("127.0.0.1:{port}"), opt::SNDMORE).unwrap();
    assert_eq!(d.send("third frame?", opt::SNDMORE), Err(Error::Invalid));
    d.send("to itself", 0).unwrap();
    let end = Instant::now() + DEADLINE;
    let m = loop {
        if let Some(m) = try_recv(&mut d, 200) {
            break m;
        }
        d.send_multipart([format!("127.0.0.1:{port}").as_bytes(), b"to itself"], 0).unwrap();
        assert!(Instant::now() < end, "nothing arrived");
    };
    assert_eq!(&m[..], &text(&format!("127.0.0.1:{port}"))[..]);
    assert_eq!(recv_bytes(&mut d), b"to itself");
    // Unbound, the endpoint can be bound again.
    let last = d.last_endpoint().unwrap();
    d.unbind(&last).unwrap();
    d.bind("udp://127.0.0.1:*").unwrap();
}

/// An IPv4 DGRAM cannot reach an IPv6 address: the message is dropped by its engine and counted
/// (dropped_unsendable), and the socket goes on sending.
#[test]
fn an_ipv6_destination_from_an_ipv4_socket_is_counted() {
    let ctx = Context::new();
    let (mut a, _) = dgram_on(&ctx, "udp://127.0.0.1:*", false);
    let (mut b, pb) = dgram_on(&ctx, "udp://127.0.0.1:*", false);
    send_parts(&mut a, &[b"[::1]:9", b"lost"]);
    eventually("the IPv6 destination is counted", || (a.stats().dropped_unsendable == 1).then_some(()));
    let (_, body) = exchange(&mut a, format!("127.0.0.1:{pb}").as_bytes(), b"still here", &mut b);
    assert_eq!(body, b"still here");
    assert_eq!(a.stats().dropped_unsendable, 1);
}
