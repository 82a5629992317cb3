//! The socket monitor over tcp, ipc and inproc: event sequences, values, the three message
//! formats, stopping and restarting, and bad arguments. (The sequences are compared with
//! libzmq's in `interop/tests/monitor.rs`.)

mod common;

use common::{ipc_path, unique, RCV_MS};
use oxmq::monitor::{event as ev, protocol_error};
use oxmq::{opt, Context, Error, MonitorEvent, Socket, SocketType};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// Starts monitoring `s` (format `version`) and returns the connected reader.
fn watch(ctx: &Context, s: &mut Socket, events: u64, version: u8) -> Socket {
    let ep = format!("inproc://{}", unique("mon"));
    s.monitor_versioned(Some(&ep), events, version, SocketType::Pair).unwrap();
    let mut r = ctx.socket(SocketType::Pair).unwrap();
    r.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    r.connect(&ep).unwrap();
    r
}

/// Reads events until `last` arrives (included); fails on timeout.
fn until(r: &mut Socket, version: u8, last: u64) -> Vec<MonitorEvent> {
    let mut out = Vec::new();
    loop {
        let e = MonitorEvent::recv(r, version, 0).unwrap_or_else(|err| panic!("no event after {out:?}: {err}"));
        let done = e.event == last;
        out.push(e);
        if done {
            return out;
        }
        assert!(out.len() < 64, "runaway event stream: {out:?}");
    }
}

fn kinds(evs: &[MonitorEvent]) -> Vec<&'static str> {
    evs.iter().map(|e| ev::name(e.event).unwrap_or("?")).collect()
}

fn roundtrip(req: &mut Socket, rep: &mut Socket) {
    req.send("ping", 0).unwrap();
    assert_eq!(rep.recv(0).unwrap(), "ping");
    rep.send("pong", 0).unwrap();
    assert_eq!(req.recv(0).unwrap(), "pong");
}

fn timeouts(s: &mut Socket) {
    s.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    s.set_int(opt::SNDTIMEO, RCV_MS).unwrap();
}

/// Bind side: LISTENING, ACCEPTED, HANDSHAKE_SUCCEEDED, DISCONNECTED when the peer goes,
/// CLOSED and MONITOR_STOPPED on close (libzmq's sequence), over tcp and ipc.
fn bind_side(ep: &str) {
    let ctx = Context::new();
    let mut rep = ctx.socket(SocketType::Rep).unwrap();
    timeouts(&mut rep);
    let mut r = watch(&ctx, &mut rep, ev::ALL, 1);
    rep.bind(ep).unwrap();
    let bound = rep.last_endpoint().unwrap();
    let mut req = ctx.socket(SocketType::Req).unwrap();
    timeouts(&mut req);
    req.set_int(opt::LINGER, 0).unwrap();
    req.connect(&bound).unwrap();
    roundtrip(&mut req, &mut rep);
    drop(req);
    let evs = until(&mut r, 1, ev::DISCONNECTED);
    assert_eq!(kinds(&evs), ["LISTENING", "ACCEPTED", "HANDSHAKE_SUCCEEDED", "DISCONNECTED"]);
    // Version 1 names a bound socket's events by its local address: the endpoint bound.
    for e in &evs {
        assert_eq!(e.local, bound, "{e:?}");
    }
    let listen_fd = evs[0].value;
    assert_eq!(evs[1].value, evs[3].value, "ACCEPTED and DISCONNECTED carry the connection's fd");
    drop(rep);
    let evs = until(&mut r, 1, ev::MONITOR_STOPPED);
    assert_eq!(kinds(&evs), ["CLOSED", "MONITOR_STOPPED"]);
    assert_eq!(evs[0].value, listen_fd);
    assert_eq!(evs[0].local, bound);
    assert_eq!(evs[1].local, "");
}

#[test]
fn bind_side_tcp() {
    bind_side("tcp://127.0.0.1:*");
}

#[test]
fn bind_side_ipc() {
    bind_side(&format!("ipc://{}", ipc_path()));
}

/// Connect side over tcp: CONNECT_DELAYED, CONNECTED, HANDSHAKE_SUCCEEDED; the peer goes:
/// DISCONNECTED, CONNECT_RETRIED, then each refused attempt CONNECT_DELAYED, CLOSED,
/// CONNECT_RETRIED; the peer comes back: connected again.
#[test]
fn connect_side_tcp_reconnects() {
    let ctx = Context::new();
    let mut rep = ctx.socket(SocketType::Rep).unwrap();
    timeouts(&mut rep);
    rep.bind("tcp://127.0.0.1:*").unwrap();
    let ep = rep.last_endpoint().unwrap();
    let mut req = ctx.socket(SocketType::Req).unwrap();
    timeouts(&mut req);
    req.set_int(opt::RECONNECT_IVL, 50).unwrap();
    let mut r = watch(&ctx, &mut req, ev::ALL, 1);
    req.connect(&ep).unwrap();
    roundtrip(&mut req, &mut rep);
    let evs = until(&mut r, 1, ev::HANDSHAKE_SUCCEEDED);
    assert_eq!(kinds(&evs), ["CONNECT_DELAYED", "CONNECTED", "HANDSHAKE_SUCCEEDED"]);
    assert_eq!(evs[0].value, libc::EINPROGRESS as u64);
    for e in &evs {
        assert_eq!(e.local, ep, "a connecting socket's v1 endpoint is the remote one");
    }
    rep.set_int(opt::LINGER, 0).unwrap();
    drop(rep);
    let mut evs = until(&mut r, 1, ev::CONNECT_RETRIED);
    evs.extend(until(&mut r, 1, ev::CONNECT_RETRIED));
    assert_eq!(kinds(&evs), ["DISCONNECTED", "CONNECT_RETRIED", "CONNECT_DELAYED", "CLOSED", "CONNECT_RETRIED"]);
    assert_eq!(evs[1].value, 50, "CONNECT_RETRIED carries the interval");
    // The peer is back on the same port: the next attempt connects.
    let mut rep = ctx.socket(SocketType::Rep).unwrap();
    timeouts(&mut rep);
    rep.bind(&ep).unwrap();
    let evs = until(&mut r, 1, ev::HANDSHAKE_SUCCEEDED);
    assert_eq!(kinds(&evs[evs.len() - 2..]), ["CONNECTED", "HANDSHAKE_SUCCEEDED"]);
    req.send("again", 0).unwrap();
    assert_eq!(rep.recv(0).unwrap(), "again");
}

/// Connect side over ipc: connect completes at once (no CONNECT_DELAYED, as libzmq); a path
/// nobody listens on: CLOSED, CONNECT_RETRIED.
#[test]
fn connect_side_ipc() {
    let ctx = Context::new();
    let path = format!("ipc://{}", ipc_path());
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    timeouts(&mut pull);
    pull.bind(&path).unwrap();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    let mut r = watch(&ctx, &mut push, ev::ALL, 1);
    push.connect(&path).unwrap();
    push.send("x", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap(), "x");
    let evs = until(&mut r, 1, ev::HANDSHAKE_SUCCEEDED);
    assert_eq!(kinds(&evs), ["CONNECTED", "HANDSHAKE_SUCCEEDED"]);
    assert_eq!(evs[0].local, path);

    let mut lone = ctx.socket(SocketType::Push).unwrap();
    lone.set_int(opt::RECONNECT_IVL, 50).unwrap();
    let mut r2 = watch(&ctx, &mut lone, ev::ALL, 1);
    let nowhere = format!("ipc://{}", ipc_path());
    lone.connect(&nowhere).unwrap();
    let evs = until(&mut r2, 1, ev::CONNECT_RETRIED);
    assert_eq!(kinds(&evs), ["CLOSED", "CONNECT_RETRIED"]);
    assert_eq!(evs[1].local, nowhere);
}

/// inproc has no listeners or connections: libzmq raises nothing but MONITOR_STOPPED.
#[test]
fn inproc_raises_only_monitor_stopped() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("mon-inproc"));
    let mut a = ctx.socket(SocketType::Pair).unwrap();
    timeouts(&mut a);
    let mut r = watch(&ctx, &mut a, ev::ALL, 1);
    a.bind(&ep).unwrap();
    let mut b = ctx.socket(SocketType::Pair).unwrap();
    b.connect(&ep).unwrap();
    b.send("hi", 0).unwrap();
    assert_eq!(a.recv(0).unwrap(), "hi");
    drop(b);
    drop(a);
    let evs = until(&mut r, 1, ev::MONITOR_STOPPED);
    assert_eq!(kinds(&evs), ["MONITOR_STOPPED"]);
}

/// A busy port: CLOSED (no endpoint) then BIND_FAILED with EADDRINUSE and the address without
/// its scheme, exactly as libzmq; bind itself fails with AddrInUse.
#[test]
fn bind_failed() {
    let ctx = Context::new();
    let mut a = ctx.socket(SocketType::Rep).unwrap();
    a.bind("tcp://127.0.0.1:*").unwrap();
    let ep = a.last_endpoint().unwrap();
    let mut b = ctx.socket(SocketType::Rep).unwrap();
    let mut r = watch(&ctx, &mut b, ev::ALL, 1);
    assert_eq!(b.bind(&ep), Err(Error::AddrInUse));
    drop(b);
    let evs = until(&mut r, 1, ev::MONITOR_STOPPED);
    assert_eq!(kinds(&evs), ["CLOSED", "BIND_FAILED", "MONITOR_STOPPED"]);
    assert_eq!(evs[0].local, "");
    assert_eq!(evs[1].value, libc::EADDRINUSE as u64);
    assert_eq!(evs[1].local, ep.trim_start_matches("tcp://"));
}

fn greeting(mechanism: &[u8]) -> Vec<u8> {
    let mut g = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 1];
    let mut m = mechanism.to_vec();
    m.resize(20, 0);
    g.extend_from_slice(&m);
    g.push(0);
    g.resize(64, 0);
    g
}

/// Sends `bytes` from a raw TCP client and returns the monitor's events up to DISCONNECTED.
fn raw_client(bytes: &[u8]) -> Vec<MonitorEvent> {
    let ctx = Context::new();
    let mut rep = ctx.socket(SocketType::Rep).unwrap();
    let mut r = watch(&ctx, &mut rep, ev::ALL, 1);
    rep.bind("tcp://127.0.0.1:*").unwrap();
    let ep = rep.last_endpoint().unwrap();
    let mut c = std::net::TcpStream::connect(ep.trim_start_matches("tcp://")).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(bytes).unwrap();
    if bytes.len() >= 64 {
        // Wait for the server to drop us (EOF or reset), so the event is about our bytes.
        let mut buf = [0u8; 256];
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            match c.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
    drop(c);
    until(&mut r, 1, ev::DISCONNECTED)
}

#[test]
fn handshake_failed_protocol_mechanism_mismatch() {
    let evs = raw_client(&greeting(b"PLAIN"));
    assert_eq!(kinds(&evs), ["LISTENING", "ACCEPTED", "HANDSHAKE_FAILED_PROTOCOL", "DISCONNECTED"]);
    assert_eq!(evs[2].value, protocol_error::ZMTP_MECHANISM_MISMATCH);
}

#[test]
fn handshake_failed_protocol_unexpected_command() {
    let mut b = greeting(b"NULL");
    b.extend_from_slice(b"\x04\x06\x05HELLO");
    let evs = raw_client(&b);
    assert_eq!(kinds(&evs), ["LISTENING", "ACCEPTED", "HANDSHAKE_FAILED_PROTOCOL", "DISCONNECTED"]);
    assert_eq!(evs[2].value, protocol_error::ZMTP_UNEXPECTED_COMMAND);
}

#[test]
fn handshake_cut_short_has_no_detail() {
    let evs = raw_client(&greeting(b"NULL")[..20]);
    assert_eq!(kinds(&evs), ["LISTENING", "ACCEPTED", "HANDSHAKE_FAILED_NO_DETAIL", "DISCONNECTED"]);
    // EPIPE for an orderly close, ECONNRESET if our greeting was still unread (as libzmq).
    assert!([libc::EPIPE as u64, libc::ECONNRESET as u64].contains(&evs[2].value), "{:?}", evs[2]);
}

/// Versions 2 and 3 carry both addresses; version 3 adds the peer's routing id.
#[test]
fn versions_2_and_3_carry_addresses_and_routing_id() {
    let ctx = Context::new();
    let mut router = ctx.socket(SocketType::Router).unwrap();
    timeouts(&mut router);
    let mut r3 = watch(&ctx, &mut router, ev::ALL | ev::HANDSHAKE_FAILED_AUTH, 3);
    router.bind("tcp://127.0.0.1:*").unwrap();
    let ep = router.last_endpoint().unwrap();
    let mut dealer = ctx.socket(SocketType::Dealer).unwrap();
    timeouts(&mut dealer);
    dealer.set_bytes(opt::ROUTING_ID, b"dealer-7").unwrap();
    let mut r2 = watch(&ctx, &mut dealer, ev::ALL, 2);
    dealer.connect(&ep).unwrap();
    dealer.send("x", 0).unwrap();
    let parts = router.recv_multipart(0).unwrap();
    assert_eq!(parts[0], "dealer-7");

    let evs = until(&mut r3, 3, ev::HANDSHAKE_SUCCEEDED);
    assert_eq!(kinds(&evs), ["LISTENING", "ACCEPTED", "HANDSHAKE_SUCCEEDED"]);
    let server_side_remote = evs[2].remote.clone();
    let hs = &evs[2];
    assert_eq!(hs.local, ep);
    assert!(hs.remote.starts_with("tcp://127.0.0.1:") && hs.remote != ep, "{hs:?}");
    assert_eq!(hs.routing_id, b"dealer-7");
    assert!(evs[1].routing_id.is_empty(), "no routing id before the handshake");

    let evs = until(&mut r2, 2, ev::HANDSHAKE_SUCCEEDED);
    assert_eq!(kinds(&evs), ["CONNECT_DELAYED", "CONNECTED", "HANDSHAKE_SUCCEEDED"]);
    let hs = &evs[2];
    assert_eq!(hs.remote, ep);
    assert!(hs.local.starts_with("tcp://127.0.0.1:") && hs.local != ep, "{hs:?}");
    assert_eq!(hs.local, server_side_remote, "both ends name the same connection");

    // The raw frames: v2 is event, count, values, local, remote (5 frames for one value).
    dealer.set_int(opt::LINGER, 0).unwrap();
    drop(dealer);
    let frames = r3.recv_multipart(0).unwrap();
    assert_eq!(frames.len(), 6, "v3 = v2 + routing id");
    assert_eq!(u64::from_ne_bytes(frames[0][..].try_into().unwrap()), ev::DISCONNECTED);
    assert_eq!(&frames[5][..], b"dealer-7");
}

/// Only the events in the mask are sent; stopping sends MONITOR_STOPPED; a new monitor
/// replaces the old one (which is stopped first).
#[test]
fn mask_stop_and_restart() {
    let ctx = Context::new();
    let mut s = ctx.socket(SocketType::Pull).unwrap();
    let mut r = watch(&ctx, &mut s, ev::CLOSED | ev::MONITOR_STOPPED, 1);
    s.bind("tcp://127.0.0.1:*").unwrap(); // LISTENING: not asked for
    let ep = s.last_endpoint().unwrap();
    s.unbind(&ep).unwrap();
    let evs = until(&mut r, 1, ev::CLOSED);
    assert_eq!(kinds(&evs), ["CLOSED"]);
    let mut r2 = watch(&ctx, &mut s, ev::ALL, 1);
    assert_eq!(kinds(&until(&mut r, 1, ev::MONITOR_STOPPED)), ["MONITOR_STOPPED"]);
    s.bind("tcp://127.0.0.1:*").unwrap();
    assert_eq!(kinds(&until(&mut r2, 1, ev::LISTENING)), ["LISTENING"]);
    s.monitor(None, 0).unwrap();
    assert_eq!(kinds(&until(&mut r2, 1, ev::MONITOR_STOPPED)), ["MONITOR_STOPPED"]);
    // Stopped: nothing more arrives.
    s.bind("tcp://127.0.0.1:*").unwrap();
    r2.set_int(opt::RCVTIMEO, 100).unwrap();
    assert_eq!(r2.recv(0).err(), Some(Error::Again));
    // Stopping again is harmless; "" stops too.
    s.monitor(Some(""), 0).unwrap();
}

#[test]
fn bad_arguments() {
    let ctx = Context::new();
    let mut s = ctx.socket(SocketType::Pair).unwrap();
    assert_eq!(s.monitor(Some("tcp://127.0.0.1:5555"), ev::ALL), Err(Error::ProtoNoSupport));
    assert_eq!(s.monitor(Some("bogus"), ev::ALL), Err(Error::Invalid));
    let ep = format!("inproc://{}", unique("mon-bad"));
    // Version 1 has 16 bits of events.
    assert_eq!(s.monitor(Some(&ep), 1 << 16), Err(Error::Invalid));
    assert_eq!(s.monitor_versioned(Some(&ep), ev::ALL, 4, SocketType::Pair), Err(Error::Invalid));
    assert_eq!(s.monitor_versioned(Some(&ep), ev::ALL, 2, SocketType::Req), Err(Error::Invalid));
    s.monitor_versioned(Some(&ep), 1 << 40, 2, SocketType::Push).unwrap();
    // The endpoint is taken by the monitor itself.
    let mut t = ctx.socket(SocketType::Pair).unwrap();
    assert_eq!(t.monitor(Some(&ep), ev::ALL), Err(Error::AddrInUse));
    // Parsing rejects wrong shapes.
    assert!(MonitorEvent::parse(&[oxmq::Msg::from(&b"abc"[..])], 1).is_err());
}

/// With no reader connected the events are dropped, never queued without bound or blocking.
#[test]
fn no_reader_drops_events() {
    let ctx = Context::new();
    let mut s = ctx.socket(SocketType::Pull).unwrap();
    let ep = format!("inproc://{}", unique("mon-none"));
    s.monitor(Some(&ep), ev::ALL).unwrap();
    for _ in 0..100 {
        s.bind("tcp://127.0.0.1:*").unwrap();
        let last = s.last_endpoint().unwrap();
        s.unbind(&last).unwrap();
    }
    let mut r = ctx.socket(SocketType::Pair).unwrap();
    r.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    r.connect(&ep).unwrap();
    s.bind("tcp://127.0.0.1:*").unwrap();
    let evs = until(&mut r, 1, ev::LISTENING);
    assert_eq!(kinds(&evs), ["LISTENING"], "events from before the reader were dropped");
}

/// zmq_socket_monitor_pipes_stats: one PIPES_STATS event per pipe, with the messages queued
/// out and in and the connection's addresses; a peer that read everything shows 0 queued, one
/// that reads nothing shows its full queue. EINVAL without a version-2 monitor asking for it,
/// EAGAIN with no pipes.
fn pipes_stats(t: &str) {
    let ctx = Context::new();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    timeouts(&mut push);
    push.set_int(opt::LINGER, 0).unwrap();
    assert_eq!(push.monitor_pipes_stats(), Err(Error::Invalid), "no monitor");
    let _v1 = watch(&ctx, &mut push, ev::ALL, 1);
    assert_eq!(push.monitor_pipes_stats(), Err(Error::Invalid), "a version-1 monitor cannot carry it");
    let mut r = watch(&ctx, &mut push, ev::PIPES_STATS, 2);
    assert_eq!(push.monitor_pipes_stats(), Err(Error::Again), "no pipes");
    push.set_int(opt::SNDHWM, 5).unwrap();
    push.set_int(opt::SNDBUF, 4096).unwrap();
    push.bind(t).unwrap();
    let ep = push.last_endpoint().unwrap();
    let mut pulls: Vec<Socket> = (0..2)
        .map(|_| {
            let mut p = ctx.socket(SocketType::Pull).unwrap();
            p.set_int(opt::RCVHWM, 5).unwrap();
            p.set_int(opt::RCVBUF, 4096).unwrap();
            p.set_int(opt::LINGER, 0).unwrap();
            p.connect(&ep).unwrap();
            p
        })
        .collect();
    common::eventually("both peers attached", || (push.peer_stats().len() == 2).then_some(()));
    // Fill both queues and everything between (small kernel buffers, 8 KiB messages): a
    // send that waits 300 ms in vain finds every queue full.
    push.set_int(opt::SNDTIMEO, 300).unwrap();
    let mut sent = 0;
    while push.send_msg(&mut oxmq::Msg::with_size(8192), 0).is_ok() {
        sent += 1;
        assert!(sent < 10_000, "never full");
    }
    // The first peer reads all it was given (round robin skips a full queue, so not half).
    pulls[0].set_int(opt::RCVTIMEO, 0).unwrap();
    let stats = common::eventually("the first peer's reads are published", || {
        while pulls[0].recv(0).is_ok() {}
        push.monitor_pipes_stats().unwrap();
        let evs: Vec<MonitorEvent> = (0..2).map(|_| MonitorEvent::recv(&mut r, 2, 0).unwrap()).collect();
        evs.iter().any(|e| e.values[0] == 0).then_some(evs)
    });
    for e in &stats {
        assert_eq!(e.event, ev::PIPES_STATS);
        assert_eq!(e.values.len(), 2);
        assert_eq!(e.values[1], 0, "a PUSH receives nothing");
        assert_eq!(e.local, ep);
        assert!(e.remote.starts_with(&t[..6]) && e.remote != ep, "{e:?}");
    }
    let full = stats.iter().find(|e| e.values[0] != 0).expect("the other peer's queue");
    assert!((1..=5).contains(&full.values[0]), "at most the HWM: {full:?}");
    drop(pulls);
}

#[test]
fn pipes_stats_tcp() {
    pipes_stats("tcp://127.0.0.1:*");
}

#[test]
fn pipes_stats_ipc() {
    pipes_stats(&format!("ipc://{}", ipc_path()));
}
