//! ZMTP 1.0 (RFC 13) and 2.0 (RFC 15) peers over tcp, in both roles: oxmq binds and a raw
//! legacy peer connects, or a raw legacy peer listens and oxmq connects. The peers' bytes are
//! written by hand from the RFCs and libzmq's `zmtp_engine.cpp` (what a 2.x/3.x libzmq sends),
//! so these tests do not depend on the codec they test. Interop with real legacy
//! implementations (JeroMQ 0.3.6, netty4-zmtp, jzmq) lives in `interop/tests/legacy_peers.rs`.
//!
//! Checked: the bytes oxmq sends each revision (signature, major version, socket-type byte,
//! identity), multipart messages both ways in the peer's framing, routing ids from the peer's
//! identity message, subscriptions as messages, libzmq's implied subscribe-all for a 1.0 peer
//! of a PUB, the `ZMTP-Version` property, and the refusal of legacy peers by secured sockets.

mod common;

use common::*;
use oxmq::{opt, Context, SocketType as T};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The signature a ZMTP 2.0 peer sends (padding: an empty identity, length 1).
const SIG: [u8; 10] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x7F];

/// A ZMTP 1.0 frame: length counting the flags octet, flags, body.
fn v1(more: bool, body: &[u8]) -> Vec<u8> {
    let len = body.len() as u64 + 1;
    let mut f = if len < 255 { vec![len as u8] } else { [&[0xFF][..], &len.to_be_bytes()].concat() };
    f.push(more as u8);
    f.extend_from_slice(body);
    f
}

/// A ZMTP 2.0 frame: flags (MORE, LONG), 1- or 8-octet length, body.
fn v2(more: bool, body: &[u8]) -> Vec<u8> {
    let mut f = if body.len() < 256 {
        vec![more as u8, body.len() as u8]
    } else {
        [&[more as u8 | 2][..], &(body.len() as u64).to_be_bytes()].concat()
    };
    f.extend_from_slice(body);
    f
}

fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut b = vec![0u8; n];
    s.read_exact(&mut b).unwrap_or_else(|e| panic!("reading {n} bytes from oxmq: {e}"));
    b
}

/// Reads one frame in the given revision's framing: (more, body).
fn read_frame(s: &mut TcpStream, v1_framing: bool) -> (bool, Vec<u8>) {
    if v1_framing {
        let first = read_n(s, 1)[0];
        let len = if first == 0xFF { u64::from_be_bytes(read_n(s, 8).try_into().unwrap()) } else { u64::from(first) };
        let flags = read_n(s, 1)[0];
        assert_eq!(flags & !1, 0, "1.0 flags {flags:#x}");
        (flags == 1, read_n(s, len as usize - 1))
    } else {
        let flags = read_n(s, 1)[0];
        assert_eq!(flags & !3, 0, "2.0 flags {flags:#x}");
        let len = if flags & 2 != 0 { u64::from_be_bytes(read_n(s, 8).try_into().unwrap()) } else { u64::from(read_n(s, 1)[0]) };
        (flags & 1 == 1, read_n(s, len as usize))
    }
}

/// Reads one whole message.
fn read_msg(s: &mut TcpStream, v1_framing: bool) -> Vec<Vec<u8>> {
    let mut parts = Vec::new();
    loop {
        let (more, body) = read_frame(s, v1_framing);
        parts.push(body);
        if !more {
            return parts;
        }
    }
}

fn port(ep: &str) -> u16 {
    ep.rsplit(':').next().unwrap().parse().unwrap()
}

/// Accepts oxmq's connection, failing the test at the deadline (the accept runs on a thread
/// of its own, so a missing connection cannot hang the test).
fn accept(l: &TcpListener) -> TcpStream {
    let l = l.try_clone().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(l.accept().map(|(s, _)| s));
    });
    rx.recv_timeout(DEADLINE).expect("oxmq did not connect").expect("accept")
}

/// The 2.0 opening as the peer sees it and does it: oxmq's signature (padding = its routing id
/// length + 1), major 3 once our signature is in, then its socket-type byte once our revision
/// is in, and its identity frame once our greeting is complete.
fn open_v2(s: &mut TcpStream, our_type: u8, our_id: &[u8], oxmq_type: u8, oxmq_id: &[u8]) {
    let mut sig = vec![0xFF];
    sig.extend_from_slice(&(oxmq_id.len() as u64 + 1).to_be_bytes());
    sig.push(0x7F);
    assert_eq!(read_n(s, 10), sig, "oxmq's signature");
    s.write_all(&SIG).unwrap();
    assert_eq!(read_n(s, 1), [3], "oxmq's major version");
    s.write_all(&[0x01, our_type]).unwrap();
    assert_eq!(read_n(s, 1), [oxmq_type], "oxmq's socket-type byte");
    s.write_all(&v2(false, our_id)).unwrap();
    assert_eq!(read_frame(s, false), (false, oxmq_id.to_vec()), "oxmq's identity frame");
}

#[test]
fn router_binds_2_0_dealer_connects() {
    let ctx = Context::new();
    let mut router = socket(&ctx, T::Router);
    router.bind("tcp://127.0.0.1:*").unwrap();
    let mut peer = TcpStream::connect(("127.0.0.1", port(&router.last_endpoint().unwrap()))).unwrap();
    open_v2(&mut peer, 5, b"peer-1", 6, b"");
    // A multipart request: the routing id is the peer's identity message.
    let mut req = v2(true, b"a");
    req.extend(v2(true, b""));
    req.extend(v2(false, &[b'z'; 300]));
    peer.write_all(&req).unwrap();
    let msgs = router.recv_multipart(0).unwrap();
    let parts: Vec<_> = msgs.iter().map(|m| m.to_vec()).collect();
    assert_eq!(parts, vec![b"peer-1".to_vec(), b"a".to_vec(), vec![], vec![b'z'; 300]]);
    assert_eq!(msgs[1].gets("ZMTP-Version"), Some(&b"2.0"[..]));
    assert_eq!(msgs[1].gets("Socket-Type"), Some(&b"DEALER"[..]));
    send_parts(&mut router, &[b"peer-1", b"x", &[b'y'; 1000]]);
    assert_eq!(read_msg(&mut peer, false), vec![b"x".to_vec(), vec![b'y'; 1000]]);
}

#[test]
fn rep_binds_1_0_req_connects() {
    // A libzmq 2.x REQ: identity message first, no signature; its request carries the empty
    // delimiter frame.
    let ctx = Context::new();
    let mut rep = socket(&ctx, T::Rep);
    rep.set_bytes(opt::ROUTING_ID, b"srv").unwrap();
    rep.bind("tcp://127.0.0.1:*").unwrap();
    let mut peer = TcpStream::connect(("127.0.0.1", port(&rep.last_endpoint().unwrap()))).unwrap();
    let mut hello = v1(false, b"");
    hello.extend(v1(true, b""));
    hello.extend(v1(false, b"question"));
    peer.write_all(&hello).unwrap();
    // oxmq's signature is its identity frame's long header (length 4 = "srv" + flags), then
    // the identity's body.
    assert_eq!(read_n(&mut peer, 13), [0xFF, 0, 0, 0, 0, 0, 0, 0, 4, 0x7F, b's', b'r', b'v']);
    let m = rep.recv(0).unwrap();
    assert_eq!(&m[..], b"question");
    assert_eq!(m.gets("ZMTP-Version"), Some(&b"1.0"[..]));
    assert_eq!(m.gets("Socket-Type"), None, "a 1.0 peer does not announce its type");
    rep.send(&[b'r'; 260][..], 0).unwrap();
    assert_eq!(read_msg(&mut peer, true), vec![vec![], vec![b'r'; 260]]);
}

#[test]
fn dealer_connects_to_1_0_router() {
    // The legacy peer listens; oxmq connects and speaks first.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let ctx = Context::new();
    let mut dealer = socket(&ctx, T::Dealer);
    dealer.set_bytes(opt::ROUTING_ID, b"me").unwrap();
    dealer.connect(&format!("tcp://127.0.0.1:{}", l.local_addr().unwrap().port())).unwrap();
    let mut peer = accept(&l);
    assert_eq!(read_n(&mut peer, 10), [0xFF, 0, 0, 0, 0, 0, 0, 0, 3, 0x7F]);
    peer.write_all(&v1(false, b"legacy-router")).unwrap();
    assert_eq!(read_n(&mut peer, 2), b"me");
    send_parts(&mut dealer, &[b"one", b"", b"three"]);
    assert_eq!(read_msg(&mut peer, true), vec![b"one".to_vec(), vec![], b"three".to_vec()]);
    let mut reply = v1(true, b"r1");
    reply.extend(v1(false, b"r2"));
    peer.write_all(&reply).unwrap();
    assert_eq!(recv_parts(&mut dealer), vec![b"r1".to_vec(), b"r2".to_vec()]);
}

#[test]
fn sub_connects_to_2_0_pub() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let ctx = Context::new();
    let mut sub = socket(&ctx, T::Sub);
    sub.set_bytes(opt::SUBSCRIBE, b"t").unwrap();
    sub.connect(&format!("tcp://127.0.0.1:{}", l.local_addr().unwrap().port())).unwrap();
    let mut peer = accept(&l);
    open_v2(&mut peer, 1, b"", 2, b"");
    // The subscription arrives as a message (2.0 has no SUBSCRIBE command).
    assert_eq!(read_msg(&mut peer, false), vec![b"\x01t".to_vec()]);
    let mut data = v2(false, b"other");
    data.extend(v2(true, b"t-topic"));
    data.extend(v2(false, b"body"));
    peer.write_all(&data).unwrap();
    assert_eq!(recv_parts(&mut sub), vec![b"t-topic".to_vec(), b"body".to_vec()]);
    sub.set_bytes(opt::UNSUBSCRIBE, b"t").unwrap();
    assert_eq!(read_msg(&mut peer, false), vec![b"\x00t".to_vec()]);
}

#[test]
fn pub_binds_2_0_sub_subscribes() {
    let ctx = Context::new();
    let mut publ = socket(&ctx, T::Pub);
    publ.bind("tcp://127.0.0.1:*").unwrap();
    let mut peer = TcpStream::connect(("127.0.0.1", port(&publ.last_endpoint().unwrap()))).unwrap();
    open_v2(&mut peer, 2, b"", 1, b"");
    peer.write_all(&v2(false, b"\x01news")).unwrap();
    // The subscription reaches the PUB when it next sends: send until the peer sees one.
    peer.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let t0 = Instant::now();
    let mut first = [0u8; 1];
    loop {
        send_parts(&mut publ, &[b"sports", b"no"]);
        send_parts(&mut publ, &[b"news", b"yes"]);
        if peer.read_exact(&mut first).is_ok() {
            break;
        }
        assert!(t0.elapsed() < DEADLINE, "no publication reached the 2.0 subscriber");
    }
    // The first frame's flags byte is in `first`: MORE, then its 1-byte length.
    assert_eq!(first, [1]);
    assert_eq!(read_n(&mut peer, 5), [4, b'n', b'e', b'w', b's']);
    assert_eq!(read_frame(&mut peer, false), (false, b"yes".to_vec()));
}

#[test]
fn pub_implies_subscribe_all_for_1_0_peer() {
    // libzmq 2.x SUBs filter locally and never send subscriptions: libzmq (and oxmq) treat
    // such a peer as subscribed to everything.
    let ctx = Context::new();
    let mut publ = socket(&ctx, T::Pub);
    publ.bind("tcp://127.0.0.1:*").unwrap();
    let mut peer = TcpStream::connect(("127.0.0.1", port(&publ.last_endpoint().unwrap()))).unwrap();
    peer.write_all(&v1(false, b"")).unwrap();
    assert_eq!(read_n(&mut peer, 10), [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F]);
    peer.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let t0 = Instant::now();
    let mut first = [0u8; 1];
    loop {
        publ.send("anything", 0).unwrap();
        if peer.read_exact(&mut first).is_ok() {
            break;
        }
        assert!(t0.elapsed() < DEADLINE, "no publication reached the 1.0 subscriber");
    }
    // Length 9 (flags + 8 bytes), flags 0, body.
    assert_eq!(first, [9]);
    assert_eq!(read_n(&mut peer, 9), b"\0anything");
}

#[test]
fn secured_sockets_refuse_legacy_peers() {
    for (name, setup) in [
        (
            "PLAIN server",
            Box::new(|s: &mut oxmq::Socket| s.set_int(opt::PLAIN_SERVER, 1).unwrap()) as Box<dyn Fn(&mut oxmq::Socket)>,
        ),
        ("ZAP domain", Box::new(|s: &mut oxmq::Socket| s.set_bytes(opt::ZAP_DOMAIN, b"global").unwrap())),
    ] {
        let ctx = Context::new();
        let mut router = socket(&ctx, T::Router);
        setup(&mut router);
        router.bind("tcp://127.0.0.1:*").unwrap();
        let p = port(&router.last_endpoint().unwrap());
        for bytes in [v1(false, b"id"), [&SIG[..], &[1, 5], &v2(false, b"id")].concat()] {
            let mut peer = TcpStream::connect(("127.0.0.1", p)).unwrap();
            peer.write_all(&bytes).unwrap();
            common::raw::expect_closed(&mut peer, Duration::from_secs(5), &format!("spoke ZMTP < 3 to a {name}"));
        }
        let stats = router.stats();
        assert_eq!(stats.handshake_failures, 2, "{name}");
    }
}

#[test]
fn oxmq_peers_still_speak_3_1() {
    let ctx = Context::new();
    let (mut a, mut b, _) = pair(&ctx, Transport::Tcp, T::Pair, T::Pair);
    b.send("hi", 0).unwrap();
    let m = a.recv(0).unwrap();
    assert_eq!(m.gets("ZMTP-Version"), Some(&b"3.1"[..]));
}
