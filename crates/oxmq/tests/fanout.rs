//! One sending thread feeding many connections (PUB fan-out, a DEALER spreading over peers, a
//! ROUTER sending to many, many PUSH sockets of one connection each) over tcp and ipc: every message arrives, in order, and a stream's
//! bytes go out in batches, not one write system call per delivery (`SocketStats::wire_writes`,
//! `direct_writes`); a sporadic message still goes out on the sending thread.
//!
//! The batching bounds are loose on purpose: under a stream the sender queues a round over all
//! connections in well under a microsecond per delivery while a write call costs several, so
//! the I/O thread finds many messages per connection at each turn. With a rule that judged each
//! connection alone, every delivery was a write of its own from about eight connections on.

mod common;

use common::{Transport, RCV_MS};
use oxmq::{opt, Context, Msg, Socket, SocketStats, SocketType};
use std::time::Duration;

const PEERS: usize = 32;
const MSGS: u64 = 5_000;

fn receivers(ctx: &Context, kind: SocketType, ep: &str, n: usize) -> Vec<Socket> {
    (0..n)
        .map(|i| {
            let mut s = ctx.socket(kind).unwrap();
            s.set_int(opt::LINGER, 0).unwrap();
            s.set_int(opt::RCVHWM, 0).unwrap();
            s.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
            if kind == SocketType::Sub {
                s.subscribe("").unwrap();
            }
            if kind == SocketType::Dealer {
                s.set_bytes(opt::ROUTING_ID, format!("peer{i:02}").as_bytes()).unwrap();
            }
            s.connect(ep).unwrap();
            s
        })
        .collect()
}

/// Checks that a stream's deliveries were batched, and nearly none written on the sender.
fn assert_batched(what: &str, st: &SocketStats, deliveries: u64) {
    assert!(st.wire_writes > 0, "{what}: nothing written? {st:?}");
    assert!(
        st.wire_writes * 2 < deliveries,
        "{what}: {} write calls for {deliveries} deliveries: not batched ({st:?})",
        st.wire_writes
    );
    assert!(
        st.direct_writes * 8 < deliveries,
        "{what}: {} of {deliveries} deliveries written by the sending thread ({st:?})",
        st.direct_writes
    );
}

fn seq(m: &Msg) -> u64 {
    u64::from_le_bytes(m[..8].try_into().unwrap())
}

/// An XPUB bound over `t` (SNDHWM 0 when `unbounded`) and PEERS subscribers in a context of
/// their own, each one's subscription read: every subscriber is attached. The contexts come
/// first, so a caller's binding drops them last.
fn publisher(t: Transport, unbounded: bool) -> ([Context; 2], Socket, Vec<Socket>) {
    let (ctx, sctx) = (Context::new(), Context::new());
    let mut publ = ctx.socket(SocketType::XPub).unwrap();
    publ.set_int(opt::LINGER, 0).unwrap(); // a failure fails, never waits on undelivered data
    if unbounded {
        publ.set_int(opt::SNDHWM, 0).unwrap();
    }
    publ.set_int(opt::XPUB_VERBOSE, 1).unwrap();
    let ep = common::bind(&mut publ, t);
    let subs = receivers(&sctx, SocketType::Sub, &ep, PEERS);
    publ.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    for _ in 0..PEERS {
        publ.recv(0).expect("a subscription from every subscriber");
    }
    ([ctx, sctx], publ, subs)
}

fn pub_fan_out(t: Transport) {
    let (_ctxs, mut publ, mut subs) = publisher(t, true);
    let mut body = [0u8; 100];
    for i in 0..MSGS {
        body[..8].copy_from_slice(&i.to_le_bytes());
        publ.send(&body[..], 0).unwrap();
    }
    let reader = std::thread::spawn(move || {
        for (k, s) in subs.iter_mut().enumerate() {
            for i in 0..MSGS {
                let m = s.recv(0).unwrap_or_else(|e| panic!("subscriber {k}, message {i}: {e}"));
                assert_eq!(seq(&m), i, "subscriber {k}");
            }
        }
    });
    common::within(Duration::from_secs(60), "the subscribers' reads", move || reader.join().unwrap());
    // The counters are bumped just after each write returns: wait for the last one.
    let st = common::eventually("every delivery counted", || {
        let st = publ.stats();
        (st.wire_bytes_out >= PEERS as u64 * MSGS * 100).then_some(st)
    });
    assert_batched(&format!("{t:?} PUB to {PEERS}"), &st, PEERS as u64 * MSGS);
}

fn dealer_spreads_over_peers(t: Transport) {
    let (ctx, rctx) = (Context::new(), Context::new());
    let mut dealer = ctx.socket(SocketType::Dealer).unwrap();
    dealer.set_int(opt::LINGER, 0).unwrap(); // a failure fails, never waits on undelivered data
    dealer.set_int(opt::SNDHWM, 0).unwrap();
    let ep = common::bind(&mut dealer, t);
    let mut peers = receivers(&rctx, SocketType::Dealer, &ep, PEERS);
    // Every peer is attached once each has answered a hello (the bound side attaches peers as
    // they come; round robin needs them all).
    for p in peers.iter_mut() {
        p.send("hello", 0).unwrap();
    }
    dealer.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    for _ in 0..PEERS {
        dealer.recv(0).unwrap();
    }
    let n = PEERS as u64 * MSGS;
    let mut body = [0u8; 100];
    for i in 0..n {
        body[..8].copy_from_slice(&i.to_le_bytes());
        dealer.send(&body[..], 0).unwrap();
    }
    let reader = std::thread::spawn(move || {
        let mut seen = 0u64;
        for (k, p) in peers.iter_mut().enumerate() {
            let mut last = None;
            for _ in 0..MSGS {
                let m = p.recv(0).unwrap_or_else(|e| panic!("peer {k}: {e}"));
                let s = seq(&m);
                assert!(last.is_none_or(|l| s > l), "peer {k}: out of order");
                last = Some(s);
                seen += 1;
            }
        }
        seen
    });
    let seen = common::within(Duration::from_secs(60), "the peers' reads", move || reader.join().unwrap());
    assert_eq!(seen, n);
    let st = dealer.stats();
    assert_batched(&format!("{t:?} DEALER over {PEERS}"), &st, n);
}

fn router_sends_to_many(t: Transport) {
    let (ctx, rctx) = (Context::new(), Context::new());
    let mut router = ctx.socket(SocketType::Router).unwrap();
    router.set_int(opt::LINGER, 0).unwrap(); // a failure fails, never waits on undelivered data
    router.set_int(opt::SNDHWM, 0).unwrap();
    router.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    let ep = common::bind(&mut router, t);
    let mut peers = receivers(&rctx, SocketType::Dealer, &ep, PEERS);
    for p in peers.iter_mut() {
        p.send("hello", 0).unwrap();
    }
    router.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    let mut ids = Vec::new();
    for _ in 0..PEERS {
        ids.push(router.recv(0).unwrap());
        router.recv(0).unwrap();
    }
    let mut body = [0u8; 100];
    for i in 0..MSGS {
        body[..8].copy_from_slice(&i.to_le_bytes());
        for id in &ids {
            router.send(id.clone(), opt::SNDMORE).unwrap();
            router.send(&body[..], 0).unwrap();
        }
    }
    let reader = std::thread::spawn(move || {
        for (k, p) in peers.iter_mut().enumerate() {
            for i in 0..MSGS {
                let m = p.recv(0).unwrap_or_else(|e| panic!("peer {k}, message {i}: {e}"));
                assert_eq!(seq(&m), i, "peer {k}");
            }
        }
    });
    common::within(Duration::from_secs(60), "the peers' reads", move || reader.join().unwrap());
    let st = router.stats();
    assert_batched(&format!("{t:?} ROUTER to {PEERS}"), &st, PEERS as u64 * MSGS);
}

/// Fan-in from one thread: many PUSH sockets of one connection each, fed in turn, into one
/// PULL. Each socket alone looks sporadic; the thread is streaming.
fn many_sockets_one_thread(t: Transport) {
    let (ctx, pctx) = (Context::new(), Context::new());
    let mut pull = pctx.socket(SocketType::Pull).unwrap();
    pull.set_int(opt::LINGER, 0).unwrap();
    pull.set_int(opt::RCVHWM, 0).unwrap();
    pull.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    let ep = common::bind(&mut pull, t);
    let mut pushes: Vec<Socket> = (0..PEERS)
        .map(|_| {
            let mut s = ctx.socket(SocketType::Push).unwrap();
            s.set_int(opt::LINGER, 0).unwrap();
            s.set_int(opt::SNDHWM, 0).unwrap();
            s.connect(&ep).unwrap();
            s
        })
        .collect();
    // Each connection up (a PUSH queues until then, but the count below wants every
    // delivery written while the stream runs).
    for (k, p) in pushes.iter_mut().enumerate() {
        p.send(format!("hello{k}"), 0).unwrap();
    }
    for _ in 0..PEERS {
        pull.recv(0).unwrap();
    }
    let mut body = [0u8; 100];
    for i in 0..MSGS {
        body[..8].copy_from_slice(&i.to_le_bytes());
        for p in pushes.iter_mut() {
            p.send(&body[..], 0).unwrap();
        }
    }
    let reader = std::thread::spawn(move || {
        for i in 0..PEERS as u64 * MSGS {
            pull.recv(0).unwrap_or_else(|e| panic!("message {i}: {e}"));
        }
    });
    common::within(Duration::from_secs(60), "the PULL's reads", move || reader.join().unwrap());
    let mut st = SocketStats::default();
    for p in pushes.iter_mut() {
        let s = p.stats();
        st.wire_writes += s.wire_writes;
        st.direct_writes += s.direct_writes;
    }
    assert_batched(&format!("{t:?} {PEERS} PUSH sockets, one thread"), &st, PEERS as u64 * MSGS);
}

/// A publisher's message to subscribers that have just subscribed goes to the I/O thread, not
/// one write each on the sending thread: a subscription is input, but no message a publisher
/// sends answers it (a connection that has read input counts its next write as a reply, which
/// goes direct).
fn first_message_to_new_subscribers_is_batched(t: Transport) {
    let (_ctxs, mut publ, mut subs) = publisher(t, false);
    publ.send("first", 0).unwrap();
    for (k, s) in subs.iter_mut().enumerate() {
        assert_eq!(s.recv(0).unwrap_or_else(|e| panic!("subscriber {k}: {e}")), "first");
    }
    let st = common::eventually("every delivery counted", || {
        let st = publ.stats();
        (st.wire_bytes_out >= PEERS as u64 * 7).then_some(st)
    });
    // The publisher waited for the subscriptions, so its first write answers that wait and may
    // go direct; the rest of the round are the I/O thread's, however long the round takes (a
    // preemption in the middle of it does not make the thread sporadic).
    assert!(
        st.direct_writes <= 1,
        "{t:?}: {} of {PEERS} first deliveries written by the sending thread ({st:?})",
        st.direct_writes
    );
}

/// A sender that sends now and then, each message after the last has been received and the
/// connection has been quiet a while, writes it itself: no hop to the I/O thread.
fn sporadic_messages_go_direct(t: Transport) {
    let ctx = Context::new();
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_int(opt::LINGER, 0).unwrap(); // a failure fails, never waits on undelivered data
    pull.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    let ep = common::bind(&mut pull, t);
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.set_int(opt::LINGER, 0).unwrap(); // a failure fails, never waits on undelivered data
    push.connect(&ep).unwrap();
    const N: u64 = 5;
    for i in 0..N {
        // Not settling: the pause is what makes the sender sporadic, the condition under test.
        std::thread::sleep(Duration::from_millis(2));
        push.send(format!("m{i}"), 0).unwrap();
        assert_eq!(pull.recv(0).unwrap(), format!("m{i}").as_str());
    }
    let st = push.stats();
    // The first send may find the connection still in its handshake; the I/O thread may hold
    // the session at the moment of another. Most go direct.
    assert!(st.direct_writes >= N - 2, "{t:?}: only {} of {N} sporadic sends went direct ({st:?})", st.direct_writes);
}

mod tcp {
    use super::*;
    #[test]
    fn pub_fan_out() {
        super::pub_fan_out(Transport::Tcp)
    }
    #[test]
    fn dealer_spreads_over_peers() {
        super::dealer_spreads_over_peers(Transport::Tcp)
    }
    #[test]
    fn router_sends_to_many() {
        super::router_sends_to_many(Transport::Tcp)
    }
    #[test]
    fn many_sockets_one_thread() {
        super::many_sockets_one_thread(Transport::Tcp)
    }
    #[test]
    fn sporadic_messages_go_direct() {
        super::sporadic_messages_go_direct(Transport::Tcp)
    }
    #[test]
    fn first_message_to_new_subscribers_is_batched() {
        super::first_message_to_new_subscribers_is_batched(Transport::Tcp)
    }
}

mod ipc {
    use super::*;
    #[test]
    fn pub_fan_out() {
        super::pub_fan_out(Transport::Ipc)
    }
    #[test]
    fn dealer_spreads_over_peers() {
        super::dealer_spreads_over_peers(Transport::Ipc)
    }
    #[test]
    fn router_sends_to_many() {
        super::router_sends_to_many(Transport::Ipc)
    }
    #[test]
    fn many_sockets_one_thread() {
        super::many_sockets_one_thread(Transport::Ipc)
    }
    #[test]
    fn sporadic_messages_go_direct() {
        super::sporadic_messages_go_direct(Transport::Ipc)
    }
    #[test]
    fn first_message_to_new_subscribers_is_batched() {
        super::first_message_to_new_subscribers_is_batched(Transport::Ipc)
    }
}

/// Connections accepted by one bound socket leave no timer behind in its I/O thread, while
/// they are up and after a churn: each one's handshake deadline is cancelled when the
/// handshake completes or the connection ends (it used to stay queued for HANDSHAKE_IVL,
/// about 100 bytes a connection).
#[test]
fn accepted_connections_leave_no_timers() {
    let (ctx, cctx) = (Context::new(), Context::new());
    let mut router = ctx.socket(SocketType::Router).unwrap();
    router.set_int(opt::LINGER, 0).unwrap();
    router.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    let ep = common::bind(&mut router, Transport::Tcp);
    let round_trip = |router: &mut Socket, d: &mut Socket, i: usize| {
        d.send(format!("hello{i}"), 0).unwrap();
        let id = router.recv(0).unwrap();
        router.recv(0).unwrap();
        router.send(id, opt::SNDMORE).unwrap();
        router.send("bye", 0).unwrap();
        assert_eq!(d.recv(0).unwrap(), "bye");
    };
    let dealer = || {
        let mut d = cctx.socket(SocketType::Dealer).unwrap();
        d.set_int(opt::LINGER, 0).unwrap();
        d.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
        d.connect(&ep).unwrap();
        d
    };
    // The reactor's gauge is refreshed before each of its waits.
    let no_timers = |what: &str| common::eventually(what, || (ctx.io_timers_pending() == 0).then_some(()));
    // Up: 100 connections past their handshake.
    let mut open: Vec<Socket> = (0..100).map(|_| dealer()).collect();
    for (i, d) in open.iter_mut().enumerate() {
        round_trip(&mut router, d, i);
    }
    no_timers("no pending timers with 100 connections up");
    drop(open);
    // Churn: 300 connect / round trip / close cycles.
    for i in 0..300 {
        let mut d = dealer();
        round_trip(&mut router, &mut d, i);
    }
    no_timers("no pending timers after 300 connect/close cycles");
}
