//! Socket counters (`Socket::stats`, `Socket::peer_stats`) with exact numbers: drops on
//! purpose (PUB at HWM, ROUTER with no route, a frame over MAXMSGSIZE from a raw peer),
//! messages and bytes both ways over tcp, connections, reconnects (over ipc), handshake failures.

mod common;

use common::{ipc_path, unique};
use oxmq::{opt, Context, Error, Socket, SocketStats, SocketType};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Waits until `f` holds for the socket's stats; returns them.
fn wait_stats(s: &mut Socket, what: &str, f: impl Fn(&SocketStats) -> bool) -> SocketStats {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let st = s.stats();
        if f(&st) {
            return st;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}: {st:?}");
        // Not settling: polling an observable counter with a deadline, off the hot path.
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn pub_at_hwm_counts_exactly_the_drops() {
    // inproc: the pipe's limit is PUB's SNDHWM plus SUB's RCVHWM, and nothing moves while
    // the SUB does not read, so the counts are deterministic.
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("stats-pub"));
    let mut publ = ctx.socket(SocketType::Pub).unwrap();
    publ.set_int(opt::SNDHWM, 10).unwrap();
    publ.bind(&ep).unwrap();
    let mut sub = ctx.socket(SocketType::Sub).unwrap();
    sub.set_int(opt::RCVHWM, 5).unwrap();
    sub.subscribe("").unwrap();
    sub.connect(&ep).unwrap();
    const N: u64 = 100;
    for i in 0..N {
        publ.send(format!("msg{i:03}"), 0).unwrap(); // 6 bytes each
    }
    let st = publ.stats();
    assert_eq!(st.msgs_out, N);
    assert_eq!(st.bytes_out, 6 * N);
    assert_eq!(st.dropped_hwm, N - 15);
    assert_eq!(st.dropped_no_route, 0);
    assert_eq!(st.peers, 1);
    assert_eq!(publ.dropped_messages(), N - 15);
    let peers = publ.peer_stats();
    assert_eq!(peers.len(), 1);
    assert_eq!(peers[0].queued_out, 15, "{peers:?}");
    assert_eq!(peers[0].queued_in, None);
    // The subscriber gets exactly the first 15.
    for i in 0..15 {
        assert_eq!(sub.recv(0).unwrap(), format!("msg{i:03}").as_str());
    }
    assert_eq!(sub.recv(opt::DONTWAIT).unwrap_err(), Error::Again);
    let ss = sub.stats();
    assert_eq!((ss.msgs_in, ss.bytes_in, ss.dropped_hwm), (15, 90, 0));
    // No subscriber matching: not a drop.
    let mut p2 = ctx.socket(SocketType::Pub).unwrap();
    p2.send("nobody", 0).unwrap();
    assert_eq!(p2.stats().dropped_hwm, 0);
    assert_eq!(p2.stats().msgs_out, 1);
}

#[test]
fn router_counts_unroutable_messages() {
    let ctx = Context::new();
    let mut router = ctx.socket(SocketType::Router).unwrap();
    router.bind("tcp://127.0.0.1:*").unwrap();
    let ep = router.last_endpoint().unwrap();
    let mut dealer = ctx.socket(SocketType::Dealer).unwrap();
    dealer.set_bytes(opt::ROUTING_ID, b"known").unwrap();
    dealer.connect(&ep).unwrap();
    dealer.send("hello", 0).unwrap();
    let parts = router.recv_multipart(0).unwrap();
    assert_eq!(parts[0], "known");
    for _ in 0..7 {
        router.send_multipart(["nobody", "lost"], 0).unwrap();
    }
    router.send_multipart(["known", "found"], 0).unwrap();
    assert_eq!(dealer.recv(0).unwrap(), "found");
    let st = router.stats();
    assert_eq!(st.dropped_no_route, 7);
    assert_eq!(st.dropped_hwm, 0);
    assert_eq!(st.msgs_out, 8);
    assert_eq!(st.peers, 1);
    // With MANDATORY the send fails instead, and is not counted as a drop.
    router.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    assert_eq!(st.bytes_out, 7 * 10 + 10);
    assert_eq!(router.send_multipart(["nobody", "x"], 0).unwrap_err(), Error::HostUnreach);
    let st = router.stats();
    assert_eq!((st.dropped_no_route, st.msgs_out, st.bytes_out), (7, 8, 80), "a refused send is not counted");
    // Nor is a send that would block.
    let mut lonely = ctx.socket(SocketType::Push).unwrap();
    assert_eq!(lonely.send("nowhere", opt::DONTWAIT).unwrap_err(), Error::Again);
    assert_eq!((lonely.stats().msgs_out, lonely.stats().bytes_out), (0, 0));
}

/// A hand-written ZMTP 3.0 NULL greeting and READY for `socket_type`.
fn raw_handshake(socket_type: &[u8]) -> Vec<u8> {
    let mut g = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x7F, 3, 0];
    let mut mech = [0u8; 20];
    mech[..4].copy_from_slice(b"NULL");
    g.extend_from_slice(&mech);
    g.push(0);
    g.extend_from_slice(&[0u8; 31]);
    let mut body = vec![5];
    body.extend_from_slice(b"READY");
    body.push(11);
    body.extend_from_slice(b"Socket-Type");
    body.extend_from_slice(&(socket_type.len() as u32).to_be_bytes());
    body.extend_from_slice(socket_type);
    g.extend_from_slice(&[0x04, body.len() as u8]);
    g.extend_from_slice(&body);
    g
}

fn addr_of(ep: &str) -> String {
    ep.trim_start_matches("tcp://").to_string()
}

/// Reads until the peer closes (its greeting and READY are discarded).
fn wait_closed(s: &mut TcpStream) {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

#[test]
fn oversized_frame_and_handshake_failure_are_counted() {
    let ctx = Context::new();
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_bytes(opt::MAXMSGSIZE, &100i64.to_ne_bytes()).unwrap();
    pull.bind("tcp://127.0.0.1:*").unwrap();
    let addr = addr_of(&pull.last_endpoint().unwrap());

    let mut raw = TcpStream::connect(&addr).unwrap();
    let mut bytes = raw_handshake(b"PUSH");
    bytes.extend_from_slice(&[0, 3]);
    bytes.extend_from_slice(b"ok!"); // within the limit: delivered
    bytes.extend_from_slice(&[0, 101]);
    bytes.extend_from_slice(&[b'x'; 101]); // one byte over
    raw.write_all(&bytes).unwrap();
    wait_closed(&mut raw);
    assert_eq!(pull.recv(0).unwrap(), "ok!");
    let st = wait_stats(&mut pull, "an oversized frame", |s| s.dropped_oversized == 1 && s.peers == 0);
    assert_eq!((st.msgs_in, st.bytes_in, st.connections, st.handshake_failures), (1, 3, 1, 0));
    assert_eq!(st.wire_bytes_in, bytes.len() as u64);

    // A peer that sends garbage instead of a greeting fails the handshake.
    let mut bad = TcpStream::connect(&addr).unwrap();
    bad.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    wait_closed(&mut bad);
    let st = wait_stats(&mut pull, "a handshake failure", |s| s.handshake_failures == 1);
    assert_eq!((st.dropped_oversized, st.connections, st.peers), (1, 1, 0));
}

#[test]
fn messages_and_bytes_both_ways_over_tcp_are_exact() {
    let ctx = Context::new();
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    pull.bind("tcp://127.0.0.1:*").unwrap();
    let ep = pull.last_endpoint().unwrap();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.connect(&ep).unwrap();
    let (mut msgs, mut bytes) = (0u64, 0u64);
    for i in 0..500usize {
        let n = (i * 37) % 3000;
        if i % 10 == 0 {
            // A three-frame message: one message, every frame's bytes.
            push.send_multipart([vec![1u8; n], vec![2u8; 7], vec![]], 0).unwrap();
            bytes += n as u64 + 7;
        } else {
            push.send(vec![0u8; n], 0).unwrap();
            bytes += n as u64;
        }
        msgs += 1;
    }
    let mut got = 0;
    while got < msgs {
        pull.recv_multipart(0).unwrap();
        got += 1;
    }
    let out = push.stats();
    assert_eq!((out.msgs_out, out.bytes_out, out.msgs_in, out.bytes_in), (msgs, bytes, 0, 0));
    let inn = pull.stats();
    assert_eq!((inn.msgs_in, inn.bytes_in, inn.msgs_out, inn.bytes_out), (msgs, bytes, 0, 0));
    assert_eq!((out.peers, inn.peers, out.connections, inn.connections), (1, 1, 1, 1));
    // On the wire: framing on top of the payload; what one side wrote the other read.
    let sent_wire = wait_stats(&mut push, "everything written", |s| s.wire_bytes_out > bytes).wire_bytes_out;
    let inn = wait_stats(&mut pull, "wire bytes to match", |s| s.wire_bytes_in == sent_wire);
    assert!(inn.wire_bytes_in > bytes, "{inn:?}");
    assert!(pull.peer_stats().iter().all(|p| p.queued_in == Some(0) && p.queued_out == 0), "{:?}", pull.peer_stats());
}

#[test]
fn queue_depth_per_peer_over_tcp() {
    let ctx = Context::new();
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    pull.bind("tcp://127.0.0.1:*").unwrap();
    let ep = pull.last_endpoint().unwrap();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.connect(&ep).unwrap();
    for _ in 0..50 {
        push.send("q", 0).unwrap();
    }
    // The I/O thread delivers all 50 into the PULL's pipe; nobody reads them yet.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let p = pull.peer_stats();
        if p.len() == 1 && p[0].queued_in == Some(50) {
            break;
        }
        assert!(Instant::now() < deadline, "{p:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
    for _ in 0..20 {
        pull.recv(0).unwrap();
    }
    assert_eq!(pull.peer_stats()[0].queued_in, Some(30));
}

#[test]
fn reconnects_are_counted() {
    let ctx = Context::new();
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    // ipc: binding a tcp port again after closing it races with other tests' binds to "*",
    // which may be handed that very port meanwhile.
    pull.bind(&format!("ipc://{}", ipc_path())).unwrap();
    let ep = pull.last_endpoint().unwrap();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.set_int(opt::RECONNECT_IVL, 10).unwrap();
    push.connect(&ep).unwrap();
    push.send("one", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap(), "one");
    pull.set_int(opt::LINGER, 0).unwrap();
    drop(pull);
    wait_stats(&mut push, "the disconnection", |s| s.peers == 0);
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    pull.bind(&ep).unwrap();
    let st = wait_stats(&mut push, "the reconnection", |s| s.peers == 1);
    assert_eq!((st.connections, st.reconnects), (2, 1));
    push.send("two", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap(), "two");
}
