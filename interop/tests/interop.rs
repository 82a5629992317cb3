//! oxmq against libzmq 4.3.5 (bundled with pyzmq), over tcp and ipc, each side binding in turn.
//!
//! The libzmq socket lives in `peers/peer.py`; see `tests/common/mod.rs` for how it is driven.
//! Every valid socket-type pairing of RFC 28-31 is exercised with the oxmq socket on either end.

mod common;

use common::*;
use oxmq::{opt, Context, Error, SocketType as T};
use std::time::Duration;

both_ways!(
    pair_both_directions,
    pair_multipart_empty_frames,
    pair_4mib_round_trip,
    oxmq_pub_libzmq_sub,
    oxmq_pub_libzmq_xsub_filters_on_publisher,
    libzmq_xpub_sees_oxmq_subscriptions,
    oxmq_req_libzmq_rep,
    libzmq_req_oxmq_rep,
    oxmq_req_libzmq_router,
    libzmq_req_oxmq_router,
    oxmq_dealer_libzmq_rep,
    libzmq_dealer_oxmq_rep,
    oxmq_dealer_libzmq_router_ids,
    libzmq_dealer_oxmq_router_ids,
    router_router_oxmq_connects_or_binds,
    oxmq_push_libzmq_pull,
    libzmq_push_oxmq_pull,
    req_rep_through_oxmq_router_dealer_hop,
    reconnect_after_libzmq_restarts,
);

fn noop<S>(_: &mut S) {}

// --- PAIR --------------------------------------------------------------------------------------

fn pair_both_directions(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Pair, "PAIR", noop, noop);
    for i in 0..20 {
        ox.send(format!("ox {i}"), 0).unwrap();
        assert_eq!(py.recv_must(), vec![format!("ox {i}").into_bytes()]);
        py.send(&[format!("py {i}").as_bytes()]);
        assert_eq!(ox_recv(&mut ox), vec![format!("py {i}").into_bytes()]);
    }
}

fn pair_multipart_empty_frames(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Pair, "PAIR", noop, noop);
    let parts: [&[u8]; 5] = [b"", b"a", b"", b"\x00\xff", b""];
    ox_send(&mut ox, &parts);
    assert_eq!(py.recv_must(), parts.iter().map(|p| p.to_vec()).collect::<Vec<_>>());
    py.send(&parts);
    assert_eq!(ox_recv(&mut ox), parts.iter().map(|p| p.to_vec()).collect::<Vec<_>>());
    py.send(&[b""]);
    assert_eq!(ox_recv(&mut ox), vec![Vec::<u8>::new()]);
    // 255/256-byte boundary: short and long frame forms.
    for n in [255usize, 256, 257, 65_536] {
        let body: Vec<u8> = (0..n).map(|i| i as u8).collect();
        ox_send(&mut ox, &[&body, b"tail"]);
        py.cmd("bounce 1 5000");
        assert_eq!(ox_recv(&mut ox), vec![body.clone(), b"tail".to_vec()], "{n}-byte frame");
    }
}

fn pair_4mib_round_trip(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Pair, "PAIR", noop, noop);
    let big: Vec<u8> = (0..4u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    ox_send(&mut ox, &[&big, b"", &big[..1000]]);
    py.start("bounce 1 10000");
    let back = ox_recv(&mut ox);
    assert_eq!(py.reply(REPLY), "ok 1");
    assert_eq!(back.len(), 3);
    assert!(back[0] == big, "4 MiB body changed on the way through libzmq");
    assert_eq!(back[1], b"");
    assert_eq!(back[2], &big[..1000]);
    // libzmq sending 4 MiB frames to oxmq.
    py.cmd("sendn 2 4194304");
    for i in 0..2u32 {
        let m = ox.recv(0).unwrap();
        assert_eq!(m.len(), 4 << 20);
        assert_eq!(&m[..4], &i.to_be_bytes());
    }
}

// --- PUB/SUB -----------------------------------------------------------------------------------

/// Publishes `probe` until the libzmq side receives it. Returns nothing; later reads skip probes.
fn sync_to_py(ox_pub: &mut oxmq::Socket, py: &mut Peer, probe: &[u8]) {
    eventually("libzmq subscriber receives the probe", || {
        ox_pub.send(probe, 0).unwrap();
        loop {
            match py.recv(20) {
                Some(m) if m == vec![probe.to_vec()] => return Some(()),
                Some(_) => continue,
                None => return None,
            }
        }
    });
}

fn py_collect_until(py: &mut Peer, end: &[u8]) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    loop {
        let m = py.recv_must();
        assert_eq!(m.len(), 1);
        if m[0] == end {
            return got;
        }
        if !m[0].ends_with(b"probe") {
            got.push(m[0].clone());
        }
    }
}

fn oxmq_pub_libzmq_sub(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Pub, "SUB", noop, noop);
    py.set_bytes("SUBSCRIBE", b"A");
    py.set_bytes("SUBSCRIBE", b"B");
    // A probe through "A" proves only that subscription arrived; "B" came after it.
    sync_to_py(&mut ox, &mut py, b"A-probe");
    sync_to_py(&mut ox, &mut py, b"B-probe");
    for m in ["A1", "C1", "B1", "AB", "a1"] {
        ox.send(m, 0).unwrap();
    }
    ox.send("A-end", 0).unwrap();
    assert_eq!(py_collect_until(&mut py, b"A-end"), vec![b"A1".to_vec(), b"B1".to_vec(), b"AB".to_vec()]);
    py.set_bytes("UNSUBSCRIBE", b"A");
    py.set_bytes("SUBSCRIBE", b"S");
    sync_to_py(&mut ox, &mut py, b"S-probe");
    for m in ["A2", "B2", "S1"] {
        ox.send(m, 0).unwrap();
    }
    ox.send("S-end", 0).unwrap();
    assert_eq!(py_collect_until(&mut py, b"S-end"), vec![b"B2".to_vec(), b"S1".to_vec()]);
}

/// XSUB does not filter: what arrives is exactly what the oxmq PUB chose to send, so this checks
/// that oxmq applies libzmq's subscribe/unsubscribe messages (0x01/0x00 + topic).
fn oxmq_pub_libzmq_xsub_filters_on_publisher(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Pub, "XSUB", noop, noop);
    py.send(&[b"\x01A"]);
    sync_to_py(&mut ox, &mut py, b"A-probe");
    for m in ["B1", "A1", "C1"] {
        ox.send(m, 0).unwrap();
    }
    ox.send("A-end", 0).unwrap();
    assert_eq!(py_collect_until(&mut py, b"A-end"), vec![b"A1".to_vec()]);
    // Cancel first: "SYNC-probe" also matches "S", so the probe getting through proves only
    // what was sent before "S" has been applied.
    py.send(&[b"\x00A"]);
    py.send(&[b"\x01S"]);
    py.send(&[b"\x01SYNC"]);
    sync_to_py(&mut ox, &mut py, b"SYNC-probe");
    for m in ["A2", "S1", "B2"] {
        ox.send(m, 0).unwrap();
    }
    ox.send("SYNC-end", 0).unwrap();
    assert_eq!(py_collect_until(&mut py, b"SYNC-end"), vec![b"S1".to_vec()]);
}

fn libzmq_xpub_sees_oxmq_subscriptions(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Sub, "XPUB", noop, |p| p.set_int("XPUB_VERBOSE", 1));
    ox.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
    // A bound SUB attaches a new peer when the application next uses the socket, as libzmq's
    // does (an idle bound libzmq SUB sends nothing either), so keep using it the way a poll
    // loop would while the XPUB waits.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let first = loop {
        ox.events().unwrap();
        if let Some(m) = py.recv(50) {
            break m;
        }
        assert!(std::time::Instant::now() < deadline, "libzmq's XPUB saw no subscription");
    };
    assert_eq!(first, vec![b"\x01A".to_vec()], "subscription as libzmq's XPUB sees it");
    ox.set_bytes(opt::SUBSCRIBE, b"").unwrap();
    assert_eq!(py.recv_must(), vec![b"\x01".to_vec()]);
    ox.set_bytes(opt::UNSUBSCRIBE, b"").unwrap();
    assert_eq!(py.recv_must(), vec![b"\x00".to_vec()]);
    py.send(&[b"A1"]);
    py.send(&[b"B1"]);
    py.send(&[b"A2", b"second frame"]);
    assert_eq!(ox_recv(&mut ox), vec![b"A1".to_vec()]);
    assert_eq!(ox_recv(&mut ox), vec![b"A2".to_vec(), b"second frame".to_vec()]);
    ox.set_bytes(opt::UNSUBSCRIBE, b"A").unwrap();
    ox.set_bytes(opt::SUBSCRIBE, b"B").unwrap();
    assert_eq!(py.recv_must(), vec![b"\x00A".to_vec()]);
    assert_eq!(py.recv_must(), vec![b"\x01B".to_vec()]);
    py.send(&[b"A3"]);
    py.send(&[b"B2"]);
    assert_eq!(ox_recv(&mut ox), vec![b"B2".to_vec()]);
    ox.set_int(opt::RCVTIMEO, 100).unwrap();
    assert_eq!(ox.recv(0).unwrap_err(), Error::Again);
}

// --- REQ/REP, ROUTER, DEALER -------------------------------------------------------------------

fn oxmq_req_libzmq_rep(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Req, "REP", noop, noop);
    py.start("bounce 10 5000");
    for i in 0..9 {
        ox.send(format!("req {i}"), 0).unwrap();
        assert_eq!(ox_recv(&mut ox), vec![format!("req {i}").into_bytes()]);
    }
    ox_send(&mut ox, &[b"multi", b"", b"part"]);
    assert_eq!(ox_recv(&mut ox), vec![b"multi".to_vec(), vec![], b"part".to_vec()]);
    assert_eq!(py.reply(REPLY), "ok 10");
}

fn libzmq_req_oxmq_rep(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Rep, "REQ", noop, noop);
    for i in 0..10 {
        py.send(&[format!("q{i}").as_bytes(), b"x"]);
        assert_eq!(ox_recv(&mut ox), vec![format!("q{i}").into_bytes(), b"x".to_vec()]);
        ox.send(format!("a{i}"), 0).unwrap();
        assert_eq!(py.recv_must(), vec![format!("a{i}").into_bytes()]);
    }
    // libzmq REQ enforces alternation too.
    py.send(&[b"one"]);
    assert!(py.try_send(&[b"two"]).unwrap_err().starts_with("err EFSM"));
}

fn oxmq_req_libzmq_router(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Req, "ROUTER", |s| s.set_bytes(opt::ROUTING_ID, b"ox-req").unwrap(), noop);
    ox.send("hello", 0).unwrap();
    assert_eq!(py.recv_must(), vec![b"ox-req".to_vec(), vec![], b"hello".to_vec()]);
    py.send(&[b"ox-req", b"", b"world"]);
    assert_eq!(ox_recv(&mut ox), vec![b"world".to_vec()]);
}

fn libzmq_req_oxmq_router(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Router, "REQ", noop, noop);
    py.send(&[b"hello"]);
    let p = ox_recv(&mut ox);
    assert_eq!(p.len(), 3, "{p:?}");
    assert!(!p[0].is_empty());
    assert_eq!(&p[1..], [vec![], b"hello".to_vec()]);
    ox_send(&mut ox, &[&p[0], b"", b"world", b"2"]);
    assert_eq!(py.recv_must(), vec![b"world".to_vec(), b"2".to_vec()]);
}

fn oxmq_dealer_libzmq_rep(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Dealer, "REP", noop, noop);
    py.start("bounce 2 5000");
    ox_send(&mut ox, &[b"", b"hello"]);
    assert_eq!(ox_recv(&mut ox), vec![vec![], b"hello".to_vec()]);
    // A two-hop envelope is kept by libzmq's REP and returned.
    ox_send(&mut ox, &[b"hop", b"", b"q"]);
    assert_eq!(ox_recv(&mut ox), vec![b"hop".to_vec(), vec![], b"q".to_vec()]);
    assert_eq!(py.reply(REPLY), "ok 2");
}

fn libzmq_dealer_oxmq_rep(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Rep, "DEALER", noop, noop);
    py.send(&[b"", b"hello"]);
    assert_eq!(ox_recv(&mut ox), vec![b"hello".to_vec()]);
    ox.send("world", 0).unwrap();
    assert_eq!(py.recv_must(), vec![vec![], b"world".to_vec()]);
    py.send(&[b"h2", b"h1", b"", b"deep"]);
    assert_eq!(ox_recv(&mut ox), vec![b"deep".to_vec()]);
    ox.send("back", 0).unwrap();
    assert_eq!(py.recv_must(), vec![b"h2".to_vec(), b"h1".to_vec(), vec![], b"back".to_vec()]);
}

fn oxmq_dealer_libzmq_router_ids(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) =
        link(setup, &ctx, T::Dealer, "ROUTER", |s| s.set_bytes(opt::ROUTING_ID, b"ox-dealer").unwrap(), noop);
    ox_send(&mut ox, &[b"hi", b""]);
    assert_eq!(py.recv_must(), vec![b"ox-dealer".to_vec(), b"hi".to_vec(), vec![]]);
    py.send(&[b"ox-dealer", b"back", b"2"]);
    assert_eq!(ox_recv(&mut ox), vec![b"back".to_vec(), b"2".to_vec()]);
}

fn libzmq_dealer_oxmq_router_ids(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Router,
        "DEALER",
        |s| s.set_int(opt::ROUTER_MANDATORY, 1).unwrap(),
        |p| p.set_bytes("ROUTING_ID", b"py-dealer"),
    );
    py.send(&[b"hi"]);
    assert_eq!(ox_recv(&mut ox), vec![b"py-dealer".to_vec(), b"hi".to_vec()]);
    ox_send(&mut ox, &[b"py-dealer", b"back"]);
    assert_eq!(py.recv_must(), vec![b"back".to_vec()]);
    assert_eq!(ox.send_multipart([&b"nobody"[..], b"x"], 0).unwrap_err(), Error::HostUnreach);
}

fn router_router_oxmq_connects_or_binds(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Router,
        "ROUTER",
        |s| {
            s.set_bytes(opt::ROUTING_ID, b"ox").unwrap();
            s.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
        },
        |p| {
            p.set_bytes("ROUTING_ID", b"py");
            p.set_int("ROUTER_MANDATORY", 1);
        },
    );
    // The connecting side learns the binder's id when the handshake completes.
    match setup.binder {
        Binder::Libzmq => {
            eventually("oxmq ROUTER can route to \"py\"", || match ox.send_multipart([&b"py"[..], b"ping"], opt::DONTWAIT) {
                Ok(()) => Some(()),
                Err(Error::HostUnreach) => None,
                Err(e) => panic!("{e:?}"),
            });
            assert_eq!(py.recv_must(), vec![b"ox".to_vec(), b"ping".to_vec()]);
            py.send(&[b"ox", b"pong"]);
        }
        Binder::Oxmq => {
            eventually("libzmq ROUTER can route to \"ox\"", || match py.try_send(&[b"ox", b"ping"]) {
                Ok(()) => Some(()),
                Err(e) if e.starts_with("err EHOSTUNREACH") => None,
                Err(e) => panic!("{e}"),
            });
            assert_eq!(ox_recv(&mut ox), vec![b"py".to_vec(), b"ping".to_vec()]);
            ox_send(&mut ox, &[b"py", b"pong"]);
            assert_eq!(py.recv_must(), vec![b"ox".to_vec(), b"pong".to_vec()]);
            py.send(&[b"ox", b"pong"]);
        }
    }
    assert_eq!(ox_recv(&mut ox), vec![b"py".to_vec(), b"pong".to_vec()]);
}

// --- PUSH/PULL ---------------------------------------------------------------------------------

fn oxmq_push_libzmq_pull(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Push, "PULL", noop, noop);
    // The reader runs meanwhile: 5000 messages exceed both HWMs plus ipc's kernel buffers.
    py.start("recvn 5000 5000");
    for i in 0..5000u32 {
        let mut body = i.to_be_bytes().to_vec();
        body.resize(100, 0);
        ox.send(body, 0).unwrap();
    }
    assert_eq!(py.reply(REPLY), "ok 5000 100");
    ox_send(&mut ox, &[b"a", b"", b"c"]);
    assert_eq!(py.recv_must(), vec![b"a".to_vec(), vec![], b"c".to_vec()]);
}

fn libzmq_push_oxmq_pull(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Pull, "PUSH", noop, noop);
    py.start("sendn 5000 100");
    for i in 0..5000u32 {
        let m = ox.recv(0).unwrap_or_else(|e| panic!("message {i}: {e:?}"));
        assert_eq!(m.len(), 100);
        assert_eq!(&m[..4], &i.to_be_bytes());
    }
    assert_eq!(py.reply(REPLY), "ok 5000");
    py.send(&[b"x", b"", b"z"]);
    assert_eq!(ox_recv(&mut ox), vec![b"x".to_vec(), vec![], b"z".to_vec()]);
}

// --- Envelopes through a hop -------------------------------------------------------------------

/// libzmq REQ → oxmq ROUTER ⇄ oxmq DEALER → libzmq REP, the classic broker: the envelope that
/// libzmq's REQ and REP build and strip passes through oxmq unchanged.
fn req_rep_through_oxmq_router_dealer_hop(setup: Setup) {
    let ctx = Context::new();
    let (mut front, mut client, _) = link(setup, &ctx, T::Router, "REQ", noop, noop);
    let (mut back, mut server, _) = link(setup, &ctx, T::Dealer, "REP", noop, noop);
    server.start("bounce 5 5000");
    for i in 0..5 {
        let body = format!("request {i}");
        client.send(&[body.as_bytes()]);
        let req = ox_recv(&mut front);
        assert_eq!(req.len(), 3, "[client id, delimiter, body]: {req:?}");
        let refs: Vec<&[u8]> = req.iter().map(|p| p.as_slice()).collect();
        ox_send(&mut back, &refs);
        let rep = ox_recv(&mut back);
        assert_eq!(rep, req, "libzmq REP must return the envelope it was given");
        let refs: Vec<&[u8]> = rep.iter().map(|p| p.as_slice()).collect();
        ox_send(&mut front, &refs);
        assert_eq!(client.recv_must(), vec![body.into_bytes()]);
    }
    assert_eq!(server.reply(REPLY), "ok 5");
}

// --- Restarts ----------------------------------------------------------------------------------

fn reconnect_after_libzmq_restarts(setup: Setup) {
    if setup.binder == Binder::Oxmq {
        // The oxmq binder stays; the libzmq connecter is replaced by a new process.
        let ctx = Context::new();
        let (mut ox, mut py, ep) = link(setup, &ctx, T::Router, "DEALER", noop, |p| p.set_bytes("ROUTING_ID", b"gen1"));
        py.send(&[b"one"]);
        assert_eq!(ox_recv(&mut ox), vec![b"gen1".to_vec(), b"one".to_vec()]);
        py.kill();
        let mut py2 = Peer::spawn("DEALER");
        py2.set_bytes("ROUTING_ID", b"gen2");
        py2.connect(&ep);
        py2.send(&[b"two"]);
        assert_eq!(ox_recv(&mut ox), vec![b"gen2".to_vec(), b"two".to_vec()]);
        ox_send(&mut ox, &[b"gen2", b"welcome back"]);
        assert_eq!(py2.recv_must(), vec![b"welcome back".to_vec()]);
        return;
    }
    // libzmq binds; it dies and a new process binds the same endpoint; oxmq reconnects.
    let ctx = Context::new();
    let (mut ox, mut py, ep) = link(setup, &ctx, T::Dealer, "ROUTER", noop, noop);
    py.start("serve 3000");
    ox.send("first", 0).unwrap();
    assert_eq!(ox_recv(&mut ox), vec![b"first".to_vec()]);
    py.kill();
    let mut py2 = Peer::spawn("ROUTER");
    let ep2 = eventually("the endpoint can be bound again", || py2.try_cmd(&format!("bind {ep}")).ok());
    assert_eq!(ep2, ep);
    py2.start("serve 3000");
    let mut n = 0;
    eventually("oxmq DEALER reconnects to the new libzmq ROUTER", || {
        n += 1;
        ox.send(format!("probe {n}"), opt::DONTWAIT).ok();
        ox_try_recv(&mut ox, 20)
    });
    ox.send("after", 0).unwrap();
    loop {
        let m = ox_recv(&mut ox);
        if m == vec![b"after".to_vec()] {
            break;
        }
        assert!(m[0].starts_with(b"probe "), "unexpected {m:?}");
    }
    let _ = Duration::ZERO;
}
