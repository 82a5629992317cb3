//! The draft types on the wire, checked against a hand-written ZMTP 3.1 peer: RADIO/DISH's
//! JOIN command and group frames (libzmq's radio/dish sessions), and the single-part rule
//! enforced on what a peer sends.

use oxmq::{opt, Context, SocketType as T};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Greeting (NULL, ZMTP 3.1) + READY announcing `socket_type`.
fn hello(socket_type: &[u8]) -> Vec<u8> {
    let mut g = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 1];
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

/// Reads into `all` until `want` appears, or fails at the deadline.
fn read_until_contains(s: &mut TcpStream, all: &mut Vec<u8>, want: &[u8], what: &str) {
    s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    let mut buf = [0u8; 4096];
    loop {
        if all.windows(want.len()).any(|w| w == want) {
            return;
        }
        match s.read(&mut buf) {
            Ok(0) => panic!("{what}: connection closed; got {all:02x?}"),
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
        assert!(Instant::now() < end, "{what}: not seen within 5 s; got {all:02x?}");
    }
}

fn socket(ctx: &Context, kind: T) -> oxmq::Socket {
    let mut s = ctx.socket(kind).unwrap();
    s.set_int(opt::LINGER, 0).unwrap();
    s.set_int(opt::RCVTIMEO, 5000).unwrap();
    s
}

/// A DISH peer's JOIN makes the RADIO send that group as [group (MORE), body] frames, and
/// nothing of other groups.
#[test]
fn radio_sends_joined_group_frames_only() {
    let ctx = Context::new();
    let mut radio = socket(&ctx, T::Radio);
    radio.bind("tcp://127.0.0.1:*").unwrap();
    let ep = radio.last_endpoint().unwrap();
    let mut peer = TcpStream::connect(ep.trim_start_matches("tcp://")).unwrap();
    peer.write_all(&hello(b"DISH")).unwrap();
    peer.write_all(b"\x04\x07\x04JOINtv").unwrap();
    let mut all = Vec::new();
    let end = Instant::now() + Duration::from_secs(5);
    let want: &[u8] = b"\x01\x02tv\x00\x04news";
    while !all.windows(want.len()).any(|w| w == want) {
        radio.send_group("other", "zzzz", 0).unwrap();
        radio.send_group("tv", "news", 0).unwrap();
        let mut buf = [0u8; 4096];
        peer.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
        if let Ok(n) = peer.read(&mut buf) {
            assert!(n > 0, "radio closed the connection");
            all.extend_from_slice(&buf[..n]);
        }
        assert!(Instant::now() < end, "no tv frames; got {all:02x?}");
    }
    assert!(!all.windows(5).any(|w| w == b"other"), "a group not joined went out: {all:02x?}");
    // LEAVE stops the group.
    peer.write_all(b"\x04\x08\x05LEAVEtv").unwrap();
    peer.write_all(b"\x04\x08\x04JOINxyz").unwrap();
    all.clear();
    let want: &[u8] = b"\x01\x03xyz\x00\x04mark";
    let end = Instant::now() + Duration::from_secs(5);
    while !all.windows(want.len()).any(|w| w == want) {
        radio.send_group("xyz", "mark", 0).unwrap();
        let mut buf = [0u8; 4096];
        if let Ok(n) = peer.read(&mut buf) {
            all.extend_from_slice(&buf[..n]);
        }
        assert!(Instant::now() < end, "no xyz frames; got {all:02x?}");
    }
    // The LEAVE was read before the JOIN: from here, tv is gone.
    all.clear();
    radio.send_group("tv", "gone", 0).unwrap();
    radio.send_group("xyz", "last", 0).unwrap();
    read_until_contains(&mut peer, &mut all, b"last", "xyz after tv");
    assert!(!all.windows(4).any(|w| w == b"gone"), "left group still sent: {all:02x?}");
}

/// A DISH sends its joins as JOIN commands on connect and keeps only well-formed
/// [group, body] messages of joined groups.
#[test]
fn dish_sends_join_and_drops_malformed_messages() {
    let ctx = Context::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut dish = socket(&ctx, T::Dish);
    dish.join("tv").unwrap();
    dish.connect(&format!("tcp://{}", listener.local_addr().unwrap())).unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    peer.write_all(&hello(b"RADIO")).unwrap();
    let mut all = Vec::new();
    read_until_contains(&mut peer, &mut all, b"\x04\x07\x04JOINtv", "JOIN command");
    dish.join("fm").unwrap();
    read_until_contains(&mut peer, &mut all, b"\x04\x07\x04JOINfm", "second JOIN");
    dish.leave("fm").unwrap();
    read_until_contains(&mut peer, &mut all, b"\x04\x08\x05LEAVEfm", "LEAVE command");
    // Three frames (not group + body), a lone frame, a group not joined, then a good one.
    peer.write_all(b"\x01\x02tv\x01\x01a\x00\x01b").unwrap();
    peer.write_all(b"\x00\x02tv").unwrap();
    peer.write_all(b"\x01\x02fm\x00\x01c").unwrap();
    peer.write_all(b"\x01\x02tv\x00\x05hello").unwrap();
    let (g, m) = dish.recv_group(0).unwrap();
    assert_eq!((&g[..], &m[..]), (&b"tv"[..], &b"hello"[..]));
    assert_eq!(dish.dropped_messages(), 2, "the 3-frame and the lone frame");
}

/// SERVER drops a multi-part message from a peer (draft types are single-part) and keeps the
/// connection.
#[test]
fn server_drops_multipart_from_a_client() {
    let ctx = Context::new();
    let mut server = socket(&ctx, T::Server);
    server.bind("tcp://127.0.0.1:*").unwrap();
    let ep = server.last_endpoint().unwrap();
    let mut peer = TcpStream::connect(ep.trim_start_matches("tcp://")).unwrap();
    peer.write_all(&hello(b"CLIENT")).unwrap();
    peer.write_all(b"\x01\x01a\x00\x01b").unwrap();
    peer.write_all(b"\x00\x02ok").unwrap();
    let m = server.recv(0).unwrap();
    assert_eq!(&m[..], b"ok");
    assert_ne!(m.routing_id(), 0);
    assert_eq!(server.dropped_messages(), 1);
    let mut r = oxmq::Msg::from("re");
    r.set_routing_id(m.routing_id()).unwrap();
    server.send_msg(&mut r, 0).unwrap();
    let mut all = Vec::new();
    read_until_contains(&mut peer, &mut all, b"\x00\x02re", "reply");
}
