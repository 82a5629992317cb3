//! What oxmq puts on the wire, checked against a hand-written peer (RFC 23/37 bytes), for
//! behaviour that an oxmq-to-oxmq test cannot see.

use oxmq::{opt, Context, SocketType as T};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Greeting (NULL, version 3.minor) + READY announcing `socket_type`.
fn hello(minor: u8, socket_type: &[u8]) -> Vec<u8> {
    let mut g = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, minor];
    let mut mech = [0u8; 20];
    mech[..4].copy_from_slice(b"NULL");
    g.extend_from_slice(&mech);
    g.push(0);
    g.extend_from_slice(&[0; 31]);
    let mut body = vec![5];
    body.extend_from_slice(b"READY");
    body.push(11);
    body.extend_from_slice(b"Socket-Type");
    body.extend_from_slice(&(socket_type.len() as u32).to_be_bytes());
    body.extend_from_slice(socket_type);
    g.push(4);
    g.push(body.len() as u8);
    g.extend_from_slice(&body);
    g
}

/// Reads until `want` appears in what the peer sent, or fails at the deadline.
fn read_until_contains(s: &mut TcpStream, want: &[u8], what: &str) {
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    let mut all = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        if all.windows(want.len()).any(|w| w == want) {
            return;
        }
        match s.read(&mut buf) {
            Ok(0) => panic!("{what}: connection closed; got {all:02x?}"),
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
        assert!(Instant::now() < end, "{what}: not sent within 5 s without further API calls; got {all:02x?}");
    }
}

/// A SUB that binds sends the subscriptions it already has to every peer that connects, for
/// 3.1 peers as a SUBSCRIBE command, for 3.0 peers as a message starting with 0x01. Like
/// libzmq (checked against 4.3.5: an idle bound SUB sends nothing), the new peer is attached
/// when the application next uses the socket; here that is `events()`, as a poll loop does.
#[test]
fn bound_sub_sends_existing_subscriptions_after_handshake() {
    for (minor, expect) in [(1u8, &b"\x04\x0b\x09SUBSCRIBEA"[..]), (0, &b"\x00\x02\x01A"[..])] {
        let ctx = Context::new();
        let mut sub = ctx.socket(T::Sub).unwrap();
        sub.set_int(opt::LINGER, 0).unwrap();
        sub.bind("tcp://127.0.0.1:*").unwrap();
        sub.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
        let ep = sub.last_endpoint().unwrap();
        let port: u16 = ep.rsplit(':').next().unwrap().parse().unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(&hello(minor, b"XPUB")).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_millis(20))).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut got = Vec::new();
        loop {
            sub.events().unwrap();
            let mut buf = [0u8; 512];
            if let Ok(n) = std::io::Read::read(&mut s, &mut buf) {
                got.extend_from_slice(&buf[..n]);
            }
            if got.windows(expect.len()).any(|w| w == expect) {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no subscription to a ZMTP 3.{minor} peer: {got:?}");
        }
    }
}

/// The same for a SUB that connects (the pipe exists before the connection).
#[test]
fn connected_sub_sends_existing_subscriptions_after_handshake() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let ctx = Context::new();
    let mut sub = ctx.socket(T::Sub).unwrap();
    sub.set_int(opt::LINGER, 0).unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
    sub.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (mut s, _) = l.accept().unwrap();
    s.write_all(&hello(1, b"PUB")).unwrap();
    read_until_contains(&mut s, b"\x04\x0b\x09SUBSCRIBEA", "subscription to a ZMTP 3.1 peer");
}

/// Reads until the peer closes the connection, or fails at `within`; returns how long it took.
fn wait_for_close(s: &mut TcpStream, within: Duration, what: &str) -> Duration {
    s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return start.elapsed(),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return start.elapsed(),
            _ => {}
        }
        assert!(start.elapsed() < within, "{what}: connection still open after {within:?}");
    }
}

/// With HEARTBEAT_IVL, a PING carrying our TTL in deciseconds is sent every interval; a peer
/// that then says nothing at all is dropped after HEARTBEAT_TIMEOUT.
#[test]
fn heartbeat_ping_carries_ttl_and_a_silent_peer_is_dropped() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let ctx = Context::new();
    let mut d = ctx.socket(T::Dealer).unwrap();
    d.set_int(opt::LINGER, 0).unwrap();
    d.set_int(opt::HEARTBEAT_IVL, 100).unwrap();
    d.set_int(opt::HEARTBEAT_TTL, 1_000).unwrap();
    d.set_int(opt::HEARTBEAT_TIMEOUT, 300).unwrap();
    d.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let (mut s, _) = l.accept().unwrap();
    s.write_all(&hello(1, b"ROUTER")).unwrap();
    // Command flag, size 7, "PING", TTL 10 deciseconds, no context.
    read_until_contains(&mut s, b"\x04\x07\x04PING\x00\x0a", "PING with our TTL");
    let took = wait_for_close(&mut s, Duration::from_secs(5), "silent peer");
    assert!(took < Duration::from_millis(1_500), "dropped after {took:?}, timeout is 300 ms");
}

/// As libzmq, PINGs go to a ZMTP 3.0 peer too, and one that stays silent is dropped (libzmq's
/// test_heartbeat_timeout_router mocks exactly such a peer).
#[test]
fn a_silent_zmtp_3_0_peer_is_pinged_and_dropped() {
    let ctx = Context::new();
    let mut r = ctx.socket(T::Router).unwrap();
    r.set_int(opt::LINGER, 0).unwrap();
    r.set_int(opt::HEARTBEAT_IVL, 50).unwrap();
    r.bind("tcp://127.0.0.1:*").unwrap();
    let ep = r.last_endpoint().unwrap();
    let port: u16 = ep.rsplit(':').next().unwrap().parse().unwrap();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&hello(0, b"DEALER")).unwrap();
    read_until_contains(&mut s, b"\x04\x07\x04PING", "PING to a 3.0 peer");
    let took = wait_for_close(&mut s, Duration::from_secs(5), "silent 3.0 peer");
    assert!(took < Duration::from_millis(1_500), "dropped after {took:?}, timeout is 50 ms");
}

/// Without heartbeats of our own, the TTL a peer announces in its PING is honoured: silence
/// for that long drops the connection (and the PING is answered first).
#[test]
fn peer_ttl_drops_a_silent_peer() {
    let ctx = Context::new();
    let mut r = ctx.socket(T::Router).unwrap();
    r.set_int(opt::LINGER, 0).unwrap();
    r.bind("tcp://127.0.0.1:*").unwrap();
    let ep = r.last_endpoint().unwrap();
    let port: u16 = ep.rsplit(':').next().unwrap().parse().unwrap();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&hello(1, b"DEALER")).unwrap();
    // PING, TTL 3 deciseconds, context "ab".
    s.write_all(b"\x04\x09\x04PING\x00\x03ab").unwrap();
    read_until_contains(&mut s, b"\x04\x07\x04PONGab", "PONG echoing the context");
    let took = wait_for_close(&mut s, Duration::from_secs(5), "peer silent past its TTL");
    assert!(took < Duration::from_millis(1_500), "dropped after {took:?}, TTL is 300 ms");
}

/// An idle link whose peer announces no TTL and with no HEARTBEAT_IVL of ours is never dropped
/// for silence (heartbeats are off by default).
#[test]
fn no_heartbeats_by_default() {
    let ctx = Context::new();
    let mut r = ctx.socket(T::Router).unwrap();
    r.set_int(opt::LINGER, 0).unwrap();
    r.bind("tcp://127.0.0.1:*").unwrap();
    let ep = r.last_endpoint().unwrap();
    let port: u16 = ep.rsplit(':').next().unwrap().parse().unwrap();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&hello(1, b"DEALER")).unwrap();
    s.write_all(b"\x04\x07\x04PING\x00\x00").unwrap();
    read_until_contains(&mut s, b"\x04\x05\x04PONG", "PONG");
    s.set_read_timeout(Some(Duration::from_millis(600))).unwrap();
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
        other => panic!("an idle link without heartbeats changed: {other:?}"),
    }
}
