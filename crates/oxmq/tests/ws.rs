//! ws:// end to end over loopback: every pattern, NULL, PLAIN and CURVE negotiated in the
//! upgrade, the resource path, large messages, and a peer speaking ZWS 2.0 by hand (as a
//! browser's WebSocket would), including plain `ZWS2.0` without a mechanism.

mod common;

use common::*;
use oxmq::auth::Authenticator;
use oxmq::{opt, Context, Socket, SocketType as T};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Binds `s` at `ws://127.0.0.1:*{path}` and returns the endpoint to connect to.
fn bind_ws(s: &mut Socket, path: &str) -> String {
    s.bind(&format!("ws://127.0.0.1:*{path}")).unwrap();
    let ep = s.last_endpoint().unwrap();
    assert!(ep.starts_with("ws://127.0.0.1:") && ep.ends_with(path), "{ep}");
    ep
}

fn push_pull(ctx: &Context, bind_pull: bool) {
    let (mut pull, mut push) = (socket(ctx, T::Pull), socket(ctx, T::Push));
    if bind_pull {
        let ep = bind_ws(&mut pull, "/zmq");
        push.connect(&ep).unwrap();
    } else {
        let ep = bind_ws(&mut push, "/zmq");
        pull.connect(&ep).unwrap();
    }
    for i in 0..100 {
        push.send(format!("m{i}").as_bytes(), 0).unwrap();
    }
    for i in 0..100 {
        assert_eq!(recv_bytes(&mut pull), format!("m{i}").as_bytes());
    }
}

#[test]
fn push_pull_either_side_binds() {
    let ctx = Context::new();
    push_pull(&ctx, true);
    push_pull(&ctx, false);
}

#[test]
fn req_rep_dealer_router_and_multipart() {
    let ctx = Context::new();
    let mut rep = socket(&ctx, T::Rep);
    let ep = bind_ws(&mut rep, "/");
    let mut req = socket(&ctx, T::Req);
    req.connect(&ep).unwrap();
    for _ in 0..10 {
        req.send("ping", 0).unwrap();
        assert_eq!(recv_bytes(&mut rep), b"ping");
        rep.send("pong", 0).unwrap();
        assert_eq!(recv_bytes(&mut req), b"pong");
    }
    let mut router = socket(&ctx, T::Router);
    let ep = bind_ws(&mut router, "/r");
    let mut dealer = socket(&ctx, T::Dealer);
    dealer.set_bytes(opt::ROUTING_ID, b"d1").unwrap();
    dealer.connect(&ep).unwrap();
    send_parts(&mut dealer, &[b"a", b"", b"c"]);
    let parts = recv_parts(&mut router);
    assert_eq!(parts, [b"d1".to_vec(), b"a".to_vec(), vec![], b"c".to_vec()]);
    send_parts(&mut router, &[b"d1", b"back"]);
    assert_eq!(recv_parts(&mut dealer), [b"back".to_vec()]);
}

#[test]
fn pub_sub_subscriptions_travel_as_messages() {
    let ctx = Context::new();
    let mut publ = socket(&ctx, T::Pub);
    let ep = bind_ws(&mut publ, "/feed");
    let mut sub = socket(&ctx, T::Sub);
    sub.set_bytes(opt::SUBSCRIBE, b"a").unwrap();
    sub.connect(&ep).unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"a-probe");
    publ.send("b-skipped", 0).unwrap();
    publ.send("a-kept", 0).unwrap();
    assert_eq!(recv_skipping(&mut sub, b"a-probe"), b"a-kept");
    // The publisher sees the connection's properties: ZMTP 3.0 under ZWS.
    let mut xpub = socket(&ctx, T::XPub);
    let ep = bind_ws(&mut xpub, "/x");
    let mut sub2 = socket(&ctx, T::Sub);
    sub2.set_bytes(opt::SUBSCRIBE, b"topic").unwrap();
    sub2.connect(&ep).unwrap();
    let m = xpub.recv(0).unwrap();
    assert_eq!(&m[..], b"\x01topic");
    assert_eq!(m.gets("ZMTP-Version"), Some(&b"3.0"[..]));
}

#[test]
fn large_messages_stream_through() {
    let ctx = Context::new();
    let (mut pull, mut push) = (socket(&ctx, T::Pull), socket(&ctx, T::Push));
    let ep = bind_ws(&mut pull, "/big");
    push.connect(&ep).unwrap();
    for size in [125usize, 126, 65535, 65536, 3 << 20] {
        let body: Vec<u8> = (0..size).map(|i| (i * 7) as u8).collect();
        push.send(&body[..], 0).unwrap();
        assert_eq!(recv_bytes(&mut pull), body, "size {size}");
    }
}

/// Enough small messages that the layer keeps more than its high-water mark of frames: once
/// it did and then drained them all into the socket, it said WouldBlock with no writable edge
/// to come, and the stream stalled (found by the web benchmark at ~300,000 messages of 256 B).
#[test]
fn a_long_stream_of_small_messages_never_stalls() {
    let ctx = Context::new();
    let (mut pull, mut push) = (socket(&ctx, T::Pull), socket(&ctx, T::Push));
    let ep = bind_ws(&mut pull, "/many");
    push.connect(&ep).unwrap();
    let n = 400_000u32;
    let sender = std::thread::spawn(move || {
        let mut body = [0u8; 256];
        for i in 0..n {
            body[..4].copy_from_slice(&i.to_le_bytes());
            push.send(&body[..], 0).unwrap();
        }
        push
    });
    for i in 0..n {
        let m = pull.recv(0).unwrap_or_else(|e| panic!("message {i}: {e:?}"));
        assert_eq!(m[..4], i.to_le_bytes());
    }
    drop(sender.join().unwrap());
}

#[test]
fn plain_through_the_upgrade() {
    let ctx = Context::new();
    let auth = Authenticator::start(&ctx).unwrap();
    auth.update(|p| {
        p.plain_passwords("web", [("alice", "secret")]);
    });
    let mut server = socket(&ctx, T::Pull);
    server.set_int(opt::PLAIN_SERVER, 1).unwrap();
    server.set_bytes(opt::ZAP_DOMAIN, b"web").unwrap();
    let ep = bind_ws(&mut server, "/p");
    let mut client = socket(&ctx, T::Push);
    client.set_bytes(opt::PLAIN_USERNAME, b"alice").unwrap();
    client.set_bytes(opt::PLAIN_PASSWORD, b"secret").unwrap();
    client.connect(&ep).unwrap();
    client.send("hi", 0).unwrap();
    let m = server.recv(0).unwrap();
    assert_eq!(&m[..], b"hi");
    assert_eq!(m.gets("User-Id"), Some(&b"alice"[..]));
    // A NULL client offers no protocol the PLAIN server speaks: refused in the upgrade.
    let mut null = socket(&ctx, T::Push);
    null.connect(&ep).unwrap();
    // EAGAIN once the refused session has ended its pipe: either way nothing may arrive.
    let _ = null.send("never", opt::DONTWAIT);
    assert_quiet(&mut server);
    // A browser offers PLAIN under its browser-safe name and is answered with it.
    let (_c, head) = upgrade(&ep, "ZWS2.0-PLAIN");
    assert!(head.starts_with("HTTP/1.1 101") && head.contains("Sec-WebSocket-Protocol: ZWS2.0-PLAIN\r\n"), "{head}");
}

#[test]
fn curve_through_the_upgrade() {
    let ctx = Context::new();
    let (server_pub, server_sec) = oxmq::security::curve_keypair();
    let (client_pub, client_sec) = oxmq::security::curve_keypair();
    let mut server = socket(&ctx, T::Rep);
    server.set_int(opt::CURVE_SERVER, 1).unwrap();
    server.set_bytes(opt::CURVE_SECRETKEY, server_sec.as_bytes()).unwrap();
    let ep = bind_ws(&mut server, "/c");
    let mut client = socket(&ctx, T::Req);
    client.set_bytes(opt::CURVE_SERVERKEY, server_pub.as_bytes()).unwrap();
    client.set_bytes(opt::CURVE_PUBLICKEY, client_pub.as_bytes()).unwrap();
    client.set_bytes(opt::CURVE_SECRETKEY, client_sec.as_bytes()).unwrap();
    client.connect(&ep).unwrap();
    client.send("secret", 0).unwrap();
    assert_eq!(recv_bytes(&mut server), b"secret");
    server.send("ok", 0).unwrap();
    assert_eq!(recv_bytes(&mut client), b"ok");
}

#[test]
fn a_bound_path_serves_only_itself() {
    let ctx = Context::new();
    let mut pull = socket(&ctx, T::Pull);
    let ep = bind_ws(&mut pull, "/only");
    let wrong = ep.replace("/only", "/other");
    let mut push = socket(&ctx, T::Push);
    push.connect(&wrong).unwrap();
    // EAGAIN once the refused session has ended its pipe: either way nothing may arrive.
    let _ = push.send("lost", opt::DONTWAIT);
    assert_quiet(&mut pull);
    let mut good = socket(&ctx, T::Push);
    good.connect(&ep).unwrap();
    good.send("found", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"found");
}

// --- ZWS 2.0 by hand, as a browser's WebSocket speaks it ------------------------------------

/// A client frame: final, `opcode`, masked with `key`.
pub fn client_frame(opcode: u8, payload: &[u8], key: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => f.push(0x80 | n as u8),
        n if n <= 0xFFFF => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(&key);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    f
}

/// A ZWS message: flags byte then body, as one binary client frame.
fn zws(flags: u8, body: &[u8]) -> Vec<u8> {
    let mut p = vec![flags];
    p.extend_from_slice(body);
    client_frame(0x2, &p, [0x12, 0x34, 0x56, 0x78])
}

/// Connects to `ep` (a ws endpoint) and sends the upgrade offering `protocol`; returns the
/// stream and the server's response head.
fn upgrade(ep: &str, protocol: &str) -> (TcpStream, String) {
    let rest = ep.trim_start_matches("ws://");
    let (addr, path) = rest.split_at(rest.find('/').unwrap());
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Protocol: {protocol}\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        c.read_exact(&mut b).unwrap();
        head.push(b[0]);
    }
    (c, String::from_utf8(head).unwrap())
}

/// Reads one server frame: (opcode, payload); servers never mask.
fn read_frame(c: &mut TcpStream) -> (u8, Vec<u8>) {
    let mut h = [0u8; 2];
    c.read_exact(&mut h).unwrap();
    assert_eq!(h[1] & 0x80, 0, "a server frame is never masked");
    let len = match h[1] & 0x7F {
        126 => {
            let mut l = [0u8; 2];
            c.read_exact(&mut l).unwrap();
            u16::from_be_bytes(l) as usize
        }
        127 => {
            let mut l = [0u8; 8];
            c.read_exact(&mut l).unwrap();
            u64::from_be_bytes(l) as usize
        }
        n => n as usize,
    };
    let mut p = vec![0u8; len];
    c.read_exact(&mut p).unwrap();
    (h[0] & 0x0F, p)
}

#[test]
fn a_hand_written_zws_null_client_talks_to_a_rep() {
    let ctx = Context::new();
    let mut rep = socket(&ctx, T::Rep);
    let ep = bind_ws(&mut rep, "/hand");
    let (mut c, head) = upgrade(&ep, "ZWS2.0/NULL");
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert!(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{head}");
    assert!(head.contains("Sec-WebSocket-Protocol: ZWS2.0/NULL\r\n"), "{head}");
    // NULL's READY, then a request (empty delimiter, body).
    let mut ready = vec![5];
    ready.extend_from_slice(b"READY");
    ready.extend_from_slice(&[11]);
    ready.extend_from_slice(b"Socket-Type");
    ready.extend_from_slice(&3u32.to_be_bytes());
    ready.extend_from_slice(b"REQ");
    c.write_all(&zws(0x02, &ready)).unwrap();
    let (op, p) = read_frame(&mut c);
    assert_eq!((op, p[0], &p[1..7]), (0x2, 0x02, &b"\x05READY"[..]), "the server's READY as a command message");
    c.write_all(&zws(0x01, b"")).unwrap();
    c.write_all(&zws(0x00, b"hello")).unwrap();
    assert_eq!(recv_bytes(&mut rep), b"hello");
    rep.send("world", 0).unwrap();
    assert_eq!(read_frame(&mut c), (0x2, b"\x01".to_vec()));
    assert_eq!(read_frame(&mut c), (0x2, b"\x00world".to_vec()));
    // A ping is answered with a pong carrying its payload; a close with a close.
    c.write_all(&client_frame(0x9, b"beat", [1, 2, 3, 4])).unwrap();
    assert_eq!(read_frame(&mut c), (0xA, b"beat".to_vec()));
    c.write_all(&client_frame(0x8, &1000u16.to_be_bytes(), [1, 2, 3, 4])).unwrap();
    assert_eq!(read_frame(&mut c).0, 0x8);
}

#[test]
fn plain_zws2_without_a_mechanism_exchanges_routing_ids() {
    let ctx = Context::new();
    let mut router = socket(&ctx, T::Router);
    router.set_bytes(opt::ROUTING_ID, b"srv").unwrap();
    let ep = bind_ws(&mut router, "/raw");
    let (mut c, head) = upgrade(&ep, "ZWS2.0");
    assert!(head.contains("Sec-WebSocket-Protocol: ZWS2.0\r\n"), "{head}");
    // Our routing id first, then a message.
    c.write_all(&zws(0x00, b"browser")).unwrap();
    c.write_all(&zws(0x00, b"hi")).unwrap();
    assert_eq!(recv_parts(&mut router), [b"browser".to_vec(), b"hi".to_vec()]);
    assert_eq!(read_frame(&mut c), (0x2, b"\x00srv".to_vec()), "the server's routing id first");
    send_parts(&mut router, &[b"browser", b"back"]);
    assert_eq!(read_frame(&mut c), (0x2, b"\x00back".to_vec()));
}

/// `client_frame` with FIN cleared: a fragment that is not a message's last.
fn fragment(opcode: u8, payload: &[u8], key: [u8; 4]) -> Vec<u8> {
    let mut f = client_frame(opcode, payload, key);
    f[0] &= 0x7F;
    f
}

#[test]
fn a_message_sent_in_fragments_arrives_whole() {
    // Browsers send large messages in fragments (Chromium: over about 128 KiB), with control
    // frames allowed between them (RFC 6455 §5.4).
    let ctx = Context::new();
    let mut rep = socket(&ctx, T::Rep);
    let ep = bind_ws(&mut rep, "/frag");
    let (mut c, head) = upgrade(&ep, "ZWS2.0");
    assert!(head.contains("Sec-WebSocket-Protocol: ZWS2.0\r\n"), "{head}");
    // Plain ZWS2.0: the routing id comes first, itself in two fragments.
    c.write_all(&fragment(0x2, b"\x00bro", [1, 1, 1, 1])).unwrap();
    c.write_all(&client_frame(0x0, b"wser", [2, 2, 2, 2])).unwrap();
    let body: Vec<u8> = (0..1_000_003u32).map(|i| (i % 251) as u8).collect();
    let mut payload = vec![0x01]; // the empty delimiter's MORE, then the request
    c.write_all(&client_frame(0x2, &payload, [3, 3, 3, 3])).unwrap();
    payload[0] = 0x00;
    payload.extend_from_slice(&body);
    let cuts = [0, 1, 70_000, 70_000, 600_001, payload.len()];
    for (i, w) in cuts.windows(2).enumerate() {
        let op = if i == 0 { 0x2 } else { 0x0 };
        let last = w[1] == payload.len();
        let key = [i as u8, 0x5A, 0xA5, 7];
        let f = if last { client_frame(op, &payload[w[0]..w[1]], key) } else { fragment(op, &payload[w[0]..w[1]], key) };
        c.write_all(&f).unwrap();
        if i == 2 {
            c.write_all(&client_frame(0x9, b"mid", [4, 4, 4, 4])).unwrap();
        }
    }
    // The server's (empty) routing id, and the answer to the ping between fragments: in either
    // order, as the pong goes out when the ping is read, which may be before the session has
    // written its routing id (RFC 6455 lets a pong go at any time).
    let mut first_two = [read_frame(&mut c), read_frame(&mut c)];
    first_two.sort();
    assert_eq!(first_two, [(0x2, b"\x00".to_vec()), (0xA, b"mid".to_vec())]);
    let got = recv_bytes(&mut rep);
    assert_eq!((got.len(), got.first(), got.last()), (body.len(), body.first(), body.last()));
    assert_eq!(got, body);
    rep.send("done", 0).unwrap();
    assert_eq!(read_frame(&mut c), (0x2, b"\x01".to_vec()));
    assert_eq!(read_frame(&mut c), (0x2, b"\x00done".to_vec()));
}

#[test]
fn heartbeats_are_websocket_pings_and_silence_ends_the_connection() {
    // As libzmq's ws engine: HEARTBEAT_IVL sends ping frames (libzmq ignores ZMTP PING
    // commands over ws), a pong is input, and nothing for HEARTBEAT_TIMEOUT after a ping
    // ends the connection.
    let ctx = Context::new();
    let mut rep = socket(&ctx, T::Rep);
    rep.set_int(opt::HEARTBEAT_IVL, 40).unwrap();
    rep.set_int(opt::HEARTBEAT_TIMEOUT, 400).unwrap();
    let ep = bind_ws(&mut rep, "/hb");
    let (mut c, _) = upgrade(&ep, "ZWS2.0");
    c.write_all(&zws(0x00, b"client")).unwrap(); // plain ZWS2.0: our routing id
    assert_eq!(read_frame(&mut c), (0x2, b"\x00".to_vec()), "the server's routing id");
    // Answered pings keep the link: five in a row, and the link still carries a request.
    for i in 0..5 {
        let (op, payload) = read_frame(&mut c);
        assert_eq!(op, 0x9, "frame {i}: only pings while idle, never a ZMTP PING command: {payload:?}");
        c.write_all(&client_frame(0xA, &payload, [7, 7, 7, 7])).unwrap();
    }
    c.write_all(&zws(0x01, b"")).unwrap();
    c.write_all(&zws(0x00, b"still here")).unwrap();
    assert_eq!(recv_bytes(&mut rep), b"still here");
    // Unanswered: the server ends the connection (a close frame, then the end of the stream).
    let started = std::time::Instant::now();
    loop {
        let mut h = [0u8; 2];
        match c.read_exact(&mut h) {
            Ok(()) => {
                let mut p = vec![0u8; usize::from(h[1] & 0x7F)];
                c.read_exact(&mut p).unwrap();
                assert!(matches!(h[0] & 0x0F, 0x9 | 0x8), "{h:?}");
            }
            Err(_) => break,
        }
        assert!(started.elapsed() < Duration::from_secs(5), "the silent client was never dropped");
    }
}
