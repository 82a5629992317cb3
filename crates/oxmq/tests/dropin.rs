//! Behaviour libzmq's own test programs rely on (issue 19): work that libzmq does when a
//! connection is made, not when the application next calls into a socket. Each test waits on
//! an event with a deadline (RCVTIMEO), never a sleep.

mod common;

use common::*;
use oxmq::{opt, Context, SocketType};

/// PUB connects over inproc before the SUB binds (libzmq's test_inproc_connect): the SUB's
/// subscription reaches the publisher at bind, so a message published after the bind, while
/// the SUB is not being called, is delivered.
#[test]
fn inproc_subscription_is_sent_at_bind() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("cbb-pubsub"));
    let mut publ = socket(&ctx, SocketType::Pub);
    publ.connect(&ep).unwrap();
    publ.send("before", 0).unwrap(); // no subscriber yet: dropped
    let mut sub = socket(&ctx, SocketType::Sub);
    sub.set_bytes(opt::SUBSCRIBE, b"").unwrap();
    sub.bind(&ep).unwrap();
    // Inproc: the subscription is in the pipe once bind returns; PUB reads it on send.
    publ.send("after", 0).unwrap();
    assert_eq!(recv_bytes(&mut sub), b"after");
}

/// A PROBE_ROUTER ROUTER connecting over tcp announces itself as soon as the connection is
/// up (libzmq's test_probe_router): the server receives the probe while the client is never
/// called again.
#[test]
fn probe_is_sent_when_the_connection_comes_up() {
    let ctx = Context::new();
    let mut server = socket(&ctx, SocketType::Router);
    let ep = bind(&mut server, Transport::Tcp);
    let mut client = socket(&ctx, SocketType::Router);
    client.set_bytes(opt::ROUTING_ID, b"X").unwrap();
    client.set_int(opt::PROBE_ROUTER, 1).unwrap();
    client.connect(&ep).unwrap();
    assert_eq!(recv_parts(&mut server), vec![b"X".to_vec(), Vec::new()]);
    drop(client);
}

/// A SUB forwards a duplicate SUBSCRIBE (libzmq 4.3): an XPUB_VERBOSE publisher sees it,
/// a plain XPUB filters it itself (libzmq's test_xpub_verbose).
#[test]
fn sub_forwards_duplicate_subscriptions() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("xpub-verbose"));
    let mut xpub = socket(&ctx, SocketType::XPub);
    xpub.bind(&ep).unwrap();
    let mut sub = socket(&ctx, SocketType::Sub);
    sub.connect(&ep).unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01A");
    sub.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
    assert_quiet(&mut xpub);
    xpub.set_int(opt::XPUB_VERBOSE, 1).unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01A");
}

/// XSUB does not filter what arrives (libzmq filters for SUB only): an XPUB_MANUAL publisher
/// subscribes the pipe to "B" by setsockopt, and the XSUB, which asked for "A", gets "B"
/// (libzmq's test_xpub_manual test_basic).
#[test]
fn xsub_passes_what_a_manual_xpub_routes_to_it() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("xpub-manual"));
    let mut xpub = socket(&ctx, SocketType::XPub);
    xpub.set_int(opt::XPUB_MANUAL, 1).unwrap();
    xpub.bind(&ep).unwrap();
    let mut xsub = socket(&ctx, SocketType::XSub);
    xsub.connect(&ep).unwrap();
    xsub.send(&b"\x01A"[..], 0).unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01A");
    xpub.set_bytes(opt::SUBSCRIBE, b"B").unwrap();
    xpub.send("A", 0).unwrap();
    xpub.send("B", 0).unwrap();
    assert_eq!(recv_bytes(&mut xsub), b"B");
}

/// Sends `body()` to `to` without waiting until EAGAIN; returns how many went.
fn burst(s: &mut oxmq::Socket, to: Option<&[u8]>, mut body: impl FnMut() -> Vec<u8>) -> usize {
    for n in 0..1000 {
        if let Some(id) = to {
            match s.send(id.to_vec(), opt::DONTWAIT | opt::SNDMORE) {
                Ok(()) => {}
                Err(oxmq::Error::Again) => return n,
                Err(e) => panic!("{e:?}"),
            }
        }
        match s.send(body(), opt::DONTWAIT) {
            Ok(()) => {}
            Err(oxmq::Error::Again) if to.is_none() => return n,
            Err(e) => panic!("{e:?}"),
        }
    }
    panic!("a thousand sends never met the HWM");
}

/// A non-blocking burst towards a peer that does not read stops at about the HWM, not after
/// whatever the kernel's socket buffers absorb (libzmq's test_router_mandatory_hwm, whose
/// limit is 10 per burst): at the HWM a non-blocking send re-reads its connection's progress
/// at most once per millisecond, as libzmq's sender does. The buffers are made as large as
/// the kernel allows, so they alone would take dozens of these messages.
#[test]
fn nonblocking_burst_stops_at_the_hwm_not_the_kernel_buffers() {
    let ctx = Context::new();
    let mut router = socket(&ctx, SocketType::Router);
    router.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    router.set_int(opt::SNDHWM, 1).unwrap();
    router.set_int(opt::SNDBUF, 1 << 22).unwrap();
    let ep = bind(&mut router, Transport::Tcp);
    let mut dealer = socket(&ctx, SocketType::Dealer);
    dealer.set_bytes(opt::ROUTING_ID, b"X").unwrap();
    dealer.set_int(opt::RCVHWM, 1).unwrap();
    dealer.set_int(opt::RCVBUF, 1 << 22).unwrap();
    dealer.connect(&ep).unwrap();
    let mut bursts = vec![];
    for _ in 0..5 {
        // The burst starts right after a receive, as in libzmq's program.
        dealer.send("hello", 0).unwrap();
        assert_eq!(recv_parts(&mut router), [b"X".to_vec(), b"hello".to_vec()]);
        let n = burst(&mut router, Some(b"X"), || vec![7u8; 64 * 1024]);
        bursts.push(n);
        // Everything accepted arrives.
        for _ in 0..n {
            assert_eq!(recv_bytes(&mut dealer).len(), 64 * 1024);
        }
    }
    eprintln!("bursts {bursts:?}");
    assert!(bursts.iter().all(|&n| n < 10), "messages before each EAGAIN: {bursts:?}");
}

/// After a non-blocking refusal at the HWM the room still shows: poll reports POLLOUT once
/// the reader made some, and a non-blocking send then succeeds at once (PUSH parks a full
/// pipe until its write activation, which must come even when the reader made room before
/// the refusal registered for it). Every message accepted arrives, in order.
#[test]
fn room_after_a_nonblocking_refusal_shows_in_poll_and_the_next_send() {
    for t in [Transport::Tcp, Transport::Ipc, Transport::Inproc] {
        let ctx = Context::new();
        let mut push = socket(&ctx, SocketType::Push);
        push.set_int(opt::SNDHWM, 1).unwrap();
        let ep = bind(&mut push, t);
        let mut pull = socket(&ctx, SocketType::Pull);
        pull.set_int(opt::RCVHWM, 1).unwrap();
        pull.connect(&ep).unwrap();
        let (mut next, mut expect) = (0u32, 0u32);
        for _ in 0..20 {
            burst(&mut push, None, || {
                next += 1;
                (next - 1).to_le_bytes().to_vec()
            });
            next -= 1; // the refused one
            while expect < next {
                assert_eq!(recv_bytes(&mut pull), expect.to_le_bytes(), "{t:?}");
                expect += 1;
            }
            let mut items = [oxmq::PollItem::socket(&mut push, opt::POLLOUT)];
            assert_eq!(oxmq::poll(&mut items, RCV_MS as i64).unwrap(), 1, "{t:?}: no POLLOUT with room");
            push.send(next.to_le_bytes().to_vec(), opt::DONTWAIT).unwrap_or_else(|e| panic!("{t:?}: POLLOUT, then {e:?}"));
            next += 1;
        }
        while expect < next {
            assert_eq!(recv_bytes(&mut pull), expect.to_le_bytes(), "{t:?}");
            expect += 1;
        }
    }
}
