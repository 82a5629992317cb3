//! The conformance suite: every test here runs over tcp, ipc and inproc (see `per_transport!`).
//!
//! Written from libzmq's man pages (zmq_socket, zmq_setsockopt, zmq_connect) and the RFCs:
//! 28/REQREP, 29/PUBSUB, 30/PIPELINE, 31/EXPAIR. Tests wait on events with deadlines; a
//! message that must not arrive is checked with a short receive timeout.

mod common;

use common::*;
use oxmq::{opt, Context, Error, Msg, SocketType as T};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

per_transport!(
    pair_pair_both_ways,
    pair_multipart_and_empty_frames,
    pair_large_message_4mib,
    pair_every_body_size_across_storage_boundaries,
    pair_large_bodies_held_while_more_arrive,
    pub_sub_prefix_subscriptions,
    pub_sub_unsubscribe,
    sub_filters_into_a_reused_msg,
    pub_sub_overlapping_prefixes_deliver_once,
    pub_sub_many_topics,
    pub_sub_two_subscribers,
    pub_sub_multipart_subscribe_before_connect,
    sub_binds_and_publisher_connects_later,
    dealer_dealer_both_ways,
    req_rep_strict_alternation,
    req_rep_multipart,
    req_router_envelope,
    dealer_rep_envelope,
    dealer_router_routing_ids_both_ways,
    router_router_explicit_routing_ids,
    router_mandatory_unknown_peer,
    router_drops_unknown_peer_silently,
    push_round_robin_three_pullers,
    pull_three_pushers_under_backpressure,
    pull_fair_queue_exact_rotation_inproc,
    push_blocks_at_hwm,
    pub_drops_at_hwm,
    rcvtimeo_and_sndtimeo_give_again,
    connect_before_bind,
    reconnect_after_peer_rebinds,
    unbind_and_disconnect,
    unbind_drops_accepted_connections,
    maxmsgsize_disconnects_and_drops,
    immediate_queues_only_on_live_connections,
    linger_zero_discards,
    linger_timeout_bounds_term,
    nothing_accepted_is_lost_on_close,
);

fn ctx() -> Context {
    Context::new()
}

// --- PAIR (RFC 31) -----------------------------------------------------------------------------

fn pair_pair_both_ways(t: Transport) {
    let ctx = ctx();
    let (mut a, mut b, _) = pair(&ctx, t, T::Pair, T::Pair);
    for i in 0..100 {
        b.send(format!("b->a {i}"), 0).unwrap();
        assert_eq!(recv_bytes(&mut a), format!("b->a {i}").into_bytes());
        a.send(format!("a->b {i}"), 0).unwrap();
        assert_eq!(recv_bytes(&mut b), format!("a->b {i}").into_bytes());
    }
    assert_quiet(&mut a);
    assert_quiet(&mut b);
}

fn pair_multipart_and_empty_frames(t: Transport) {
    let ctx = ctx();
    let (mut a, mut b, _) = pair(&ctx, t, T::Pair, T::Pair);
    let parts: [&[u8]; 5] = [b"", b"one", b"", b"three", b""];
    send_parts(&mut b, &parts);
    // Frame by frame, with RCVMORE set on all but the last.
    for (i, p) in parts.iter().enumerate() {
        let m = a.recv(0).unwrap();
        assert_eq!(&m[..], *p, "frame {i}");
        assert_eq!(m.more(), i + 1 < parts.len(), "more flag of frame {i}");
        assert_eq!(a.rcvmore(), i + 1 < parts.len(), "RCVMORE after frame {i}");
    }
    // A message of one empty frame.
    a.send(Msg::new(), 0).unwrap();
    assert_eq!(recv_parts(&mut b), vec![Vec::<u8>::new()]);
    // SNDMORE by hand, then recv_multipart.
    a.send("x", opt::SNDMORE).unwrap();
    a.send("y", opt::SNDMORE).unwrap();
    a.send("z", 0).unwrap();
    assert_eq!(recv_parts(&mut b), vec![b"x".to_vec(), b"y".to_vec(), b"z".to_vec()]);
}

/// Bodies change storage with their size (inline up to 38 bytes, pieces of a shared chunk up
/// to 4 KiB on both ends, their own memory above): every size around those edges arrives
/// whole, in order, as single frames and inside multi-part messages, and writing into one
/// received body (which may share its chunk with the next) changes nothing else.
fn pair_every_body_size_across_storage_boundaries(t: Transport) {
    let ctx = ctx();
    let (mut a, mut b, _) = pair(&ctx, t, T::Pair, T::Pair);
    let body = |len: usize| -> Vec<u8> { (0..len).map(|i| (i * 31 + len) as u8).collect() };
    let sizes: Vec<usize> =
        (0..=80).chain(2000..=2100).chain(4050..=4150).chain([255, 256, 257, 8191, 8192, 8193, 70_000]).collect();
    for &n in &sizes {
        b.send(body(n), 0).unwrap();
    }
    for &n in &sizes {
        let m = a.recv(0).unwrap();
        assert_eq!(&m[..], &body(n)[..], "size {n}");
    }
    let parts: Vec<Vec<u8>> = [37, 38, 39, 40, 2047, 2048, 2049, 4095, 4096, 4097, 300].iter().map(|&n| body(n)).collect();
    let refs: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
    send_parts(&mut b, &refs);
    assert_eq!(recv_parts(&mut a), parts);
    // Two neighbours in one chunk: a write into the first leaves the second as it was.
    b.send(body(300), 0).unwrap();
    b.send(body(301), 0).unwrap();
    let mut first = a.recv(0).unwrap();
    let second = a.recv(0).unwrap();
    first.as_mut_slice().fill(0xEE);
    assert!(first.iter().all(|&x| x == 0xEE));
    assert_eq!(&second[..], &body(301)[..]);
    // A clone shares nothing writable with its original.
    let mut copy = second.clone();
    copy.as_mut_slice()[0] ^= 1;
    assert_eq!(&second[..], &body(301)[..]);
}

/// Large bodies are split off the connection's receive buffer without copying, and a buffer
/// given up while such bodies live is reused once they are gone (`Conn::grow_rx`): bodies the
/// application keeps while many more arrive (frames straddling reads, buffers recycled many
/// times over) still hold their own bytes at the end.
fn pair_large_bodies_held_while_more_arrive(t: Transport) {
    let ctx = ctx();
    let (mut a, mut b, _) = pair(&ctx, t, T::Pair, T::Pair);
    const N: usize = 600;
    let size = |i: usize| 8193 + (i * 7919) % 62_000;
    let body = move |i: usize| -> Vec<u8> { (0..size(i)).map(|k| (k * 131 + i * 7) as u8).collect() };
    let sender = std::thread::spawn(move || {
        for i in 0..N {
            b.send(body(i), 0).unwrap();
        }
        b
    });
    let mut kept = Vec::new();
    for i in 0..N {
        let m = a.recv(0).unwrap();
        assert!(m[..] == body(i)[..], "{t:?}: message {i} arrived wrong");
        if i % 5 == 0 {
            kept.push((i, m));
        }
    }
    for (i, m) in &kept {
        assert!(m[..] == body(*i)[..], "{t:?}: message {i} changed while later ones arrived");
    }
    drop(sender.join().unwrap());
}

fn pair_large_message_4mib(t: Transport) {
    let ctx = ctx();
    let (mut a, mut b, _) = pair(&ctx, t, T::Pair, T::Pair);
    let big: Vec<u8> = (0..4 * 1024 * 1024).map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    b.send(big.clone(), 0).unwrap();
    b.send("after", 0).unwrap();
    let got = a.recv(0).unwrap();
    assert_eq!(got.len(), big.len());
    assert!(got[..] == big[..], "4 MiB body corrupted");
    assert_eq!(recv_bytes(&mut a), b"after");
    // recv_into reports the full length even when the buffer is smaller (zmq_recv).
    b.send(big.clone(), 0).unwrap();
    let mut small = [0u8; 16];
    assert_eq!(a.recv_into(&mut small, 0).unwrap(), big.len());
    assert_eq!(&small[..], &big[..16]);
}

// --- PUB/SUB (RFC 29) --------------------------------------------------------------------------

fn pub_sub_prefix_subscriptions(t: Transport) {
    let ctx = ctx();
    let (mut publ, mut sub, _) = pair(&ctx, t, T::Pub, T::Sub);
    sub.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"BC").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"A-probe");
    for m in ["A1", "B1", "BC1", "C1", "AB", "BCD", "b", ""] {
        publ.send(m, 0).unwrap();
    }
    publ.send("A-end", 0).unwrap();
    let mut got = Vec::new();
    loop {
        let m = recv_skipping(&mut sub, b"A-probe");
        if m == b"A-end" {
            break;
        }
        got.push(String::from_utf8(m).unwrap());
    }
    assert_eq!(got, ["A1", "BC1", "AB", "BCD"]);
    // An empty subscription matches everything, the empty message included.
    sub.set_bytes(opt::SUBSCRIBE, b"").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"Z-probe");
    publ.send("", 0).unwrap();
    publ.send("Z-end", 0).unwrap();
    let mut rest = Vec::new();
    loop {
        let m = recv_skipping(&mut sub, b"Z-probe");
        if m == b"Z-end" {
            break;
        }
        if !m.starts_with(b"A-probe") {
            rest.push(m);
        }
    }
    assert_eq!(rest, vec![Vec::<u8>::new()]);
}

/// `recv_msg` (zmq_msg_recv's path, which reads each frame straight into the caller's `Msg`)
/// filters as `recv` does: whole multipart messages skipped, prefetched ones after a poll
/// kept, and when only skipped frames were there the `Msg` is left empty, as libzmq leaves it.
fn sub_filters_into_a_reused_msg(t: Transport) {
    let ctx = ctx();
    let (mut publ, mut sub, _) = pair(&ctx, t, T::Pub, T::Sub);
    sub.set_bytes(opt::SUBSCRIBE, b"k").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"k-probe");
    send_parts(&mut publ, &[b"x-skip", b"k-in-a-skipped-message"]);
    send_parts(&mut publ, &[b"k1", b"tail"]);
    publ.send("y-skip", 0).unwrap();
    publ.send("k2", 0).unwrap();
    publ.send("k-end", 0).unwrap();
    let mut m = Msg::copy_from(b"previous");
    let mut got = Vec::new();
    loop {
        sub.recv_msg(&mut m, 0).unwrap();
        let body = String::from_utf8(m.to_vec()).unwrap();
        if body == "k-probe" {
            continue;
        }
        got.push((body.clone(), m.more()));
        if body == "k-end" {
            break;
        }
    }
    assert_eq!(got, [("k1".into(), true), ("tail".into(), false), ("k2".into(), false), ("k-end".into(), false)]);
    // A message seen by poll (prefetched) is the next one received.
    publ.send("k3", 0).unwrap();
    let mut items = [oxmq::PollItem::Socket { socket: &mut sub, events: opt::POLLIN, revents: 0 }];
    assert_eq!(oxmq::poll(&mut items, 5000).unwrap(), 1);
    sub.recv_msg(&mut m, opt::DONTWAIT).unwrap();
    assert_eq!(&m[..], b"k3");
    // Only non-matching frames queued: EAGAIN, and the Msg holds none of them (empty, or
    // still the last message when nothing at all had arrived).
    send_parts(&mut publ, &[b"z-skip", b"k-tail-of-a-skipped-message"]);
    publ.send("k-mark", 0).unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        match sub.recv_msg(&mut m, opt::DONTWAIT) {
            Ok(()) => {
                assert_eq!(&m[..], b"k-mark", "nothing but the mark matches");
                break;
            }
            Err(Error::Again) => {
                assert!(m.is_empty() || &m[..] == b"k3", "a skipped frame was left in the Msg: {:?}", &m[..])
            }
            Err(e) => panic!("{e:?}"),
        }
        assert!(Instant::now() < end, "k-mark never arrived");
        std::thread::yield_now();
    }
}

/// A subscriber whose prefixes overlap ("", "a", "ab") gets each message once, however many
/// of its prefixes match; a second subscriber with one prefix gets its share.
fn pub_sub_overlapping_prefixes_deliver_once(t: Transport) {
    let ctx = ctx();
    let (mut publ, mut sub, ep) = pair(&ctx, t, T::Pub, T::Sub);
    let mut other = socket(&ctx, T::Sub);
    other.connect(&ep).unwrap();
    for p in ["", "a", "ab"] {
        sub.set_bytes(opt::SUBSCRIBE, p.as_bytes()).unwrap();
    }
    other.set_bytes(opt::SUBSCRIBE, b"ab").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"ab-probe");
    sync_pub_sub(&mut publ, &mut other, b"ab-probe");
    for m in ["abc", "x", "a", "ab", "ab-end"] {
        publ.send(m, 0).unwrap();
    }
    let mut got = Vec::new();
    loop {
        let m = recv_skipping(&mut sub, b"ab-probe");
        got.push(String::from_utf8(m).unwrap());
        if got.last().unwrap() == "ab-end" {
            break;
        }
    }
    assert_eq!(got, ["abc", "x", "a", "ab", "ab-end"]);
    let mut got = Vec::new();
    loop {
        let m = recv_skipping(&mut other, b"ab-probe");
        got.push(String::from_utf8(m).unwrap());
        if got.last().unwrap() == "ab-end" {
            break;
        }
    }
    assert_eq!(got, ["abc", "ab", "ab-end"]);
}

fn pub_sub_unsubscribe(t: Transport) {
    let ctx = ctx();
    let (mut publ, mut sub, _) = pair(&ctx, t, T::Pub, T::Sub);
    sub.set_bytes(opt::SUBSCRIBE, b"keep").unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"drop").unwrap();
    // Two identical subscriptions need two unsubscriptions (libzmq counts them).
    sub.set_bytes(opt::SUBSCRIBE, b"twice").unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"twice").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"keep-probe");
    sub.set_bytes(opt::UNSUBSCRIBE, b"drop").unwrap();
    sub.set_bytes(opt::UNSUBSCRIBE, b"twice").unwrap();
    // Subscriptions travel in order on one connection: once "sync" flows, the publisher has
    // seen the unsubscriptions above.
    sub.set_bytes(opt::SUBSCRIBE, b"sync").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"sync-probe");
    for m in ["drop1", "keep1", "twice1", "drop2", "keep2"] {
        publ.send(m, 0).unwrap();
    }
    publ.send("keep-mark", 0).unwrap();
    let mut got = Vec::new();
    loop {
        let m = String::from_utf8(recv_bytes(&mut sub)).unwrap();
        if m == "keep-mark" {
            break;
        }
        if !m.contains("probe") {
            got.push(m);
        }
    }
    assert_eq!(got, ["keep1", "twice1", "keep2"]);
    sub.set_bytes(opt::UNSUBSCRIBE, b"twice").unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"sync2").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"sync2-probe");
    publ.send("twice2", 0).unwrap();
    publ.send("keep3", 0).unwrap();
    publ.send("keep-end", 0).unwrap();
    let mut got = Vec::new();
    loop {
        let m = String::from_utf8(recv_bytes(&mut sub)).unwrap();
        if m == "keep-end" {
            break;
        }
        if !m.contains("probe") {
            got.push(m);
        }
    }
    assert_eq!(got, ["keep3"], "\"twice\" unsubscribed twice must be gone");
    // Unsubscribing from something never subscribed is not an error in libzmq.
    sub.set_bytes(opt::UNSUBSCRIBE, b"never").unwrap();
}

fn pub_sub_many_topics(t: Transport) {
    let ctx = ctx();
    let (mut publ, mut sub, _) = pair(&ctx, t, T::Pub, T::Sub);
    for i in 0..500 {
        sub.set_bytes(opt::SUBSCRIBE, format!("topic/{i:03}/").as_bytes()).unwrap();
    }
    sub.set_bytes(opt::SUBSCRIBE, b"end").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"topic/499/probe");
    // 1000 topics published, even ones subscribed below 500.
    for i in 0..1000 {
        publ.send(format!("topic/{i:03}/x"), 0).unwrap();
        publ.send(format!("topic/{i:04}/x"), 0).unwrap();
    }
    publ.send("end", 0).unwrap();
    let mut got = Vec::new();
    loop {
        let m = String::from_utf8(recv_bytes(&mut sub)).unwrap();
        if m == "end" {
            break;
        }
        if !m.ends_with("probe") {
            got.push(m);
        }
    }
    let want: Vec<String> = (0..500).map(|i| format!("topic/{i:03}/x")).collect();
    assert_eq!(got, want);
}

fn pub_sub_two_subscribers(t: Transport) {
    let ctx = ctx();
    let mut publ = socket(&ctx, T::Pub);
    let ep = bind(&mut publ, t);
    let mut subs: Vec<_> = (0..2).map(|_| socket(&ctx, T::Sub)).collect();
    for (i, s) in subs.iter_mut().enumerate() {
        s.connect(&ep).unwrap();
        s.set_bytes(opt::SUBSCRIBE, format!("s{i}").as_bytes()).unwrap();
        s.set_bytes(opt::SUBSCRIBE, b"all").unwrap();
    }
    for (i, s) in subs.iter_mut().enumerate() {
        sync_pub_sub(&mut publ, s, format!("s{i}-probe").as_bytes());
    }
    for m in ["s0-a", "all-1", "s1-a", "all-2"] {
        publ.send(m, 0).unwrap();
    }
    publ.send("all-end", 0).unwrap();
    for (i, s) in subs.iter_mut().enumerate() {
        let mut got = Vec::new();
        loop {
            let m = String::from_utf8(recv_bytes(s)).unwrap();
            if m == "all-end" {
                break;
            }
            if !m.ends_with("probe") {
                got.push(m);
            }
        }
        // Published in the order s0-a, all-1, s1-a, all-2.
        let want: Vec<String> = if i == 0 {
            vec!["s0-a".into(), "all-1".into(), "all-2".into()]
        } else {
            vec!["all-1".into(), "s1-a".into(), "all-2".into()]
        };
        assert_eq!(got, want, "subscriber {i}");
    }
}

fn pub_sub_multipart_subscribe_before_connect(t: Transport) {
    let ctx = ctx();
    let mut publ = socket(&ctx, T::Pub);
    let ep = bind(&mut publ, t);
    let mut sub = socket(&ctx, T::Sub);
    // Subscriptions made before the connection are sent when it comes up.
    sub.set_bytes(opt::SUBSCRIBE, b"topic").unwrap();
    sub.connect(&ep).unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"topic-probe");
    // Only the first frame is matched; the whole message follows it or none of it does.
    send_parts(&mut publ, &[b"other", b"topic", b"x"]);
    send_parts(&mut publ, &[b"topic/1", b"", b"body"]);
    send_parts(&mut publ, &[b"nope", b"topic"]);
    send_parts(&mut publ, &[b"topic/2", b"tail"]);
    let mut got = Vec::new();
    while got.len() < 2 {
        let p = recv_parts(&mut sub);
        if p != vec![b"topic-probe".to_vec()] {
            got.push(p);
        }
    }
    assert_eq!(got[0], vec![b"topic/1".to_vec(), vec![], b"body".to_vec()]);
    assert_eq!(got[1], vec![b"topic/2".to_vec(), b"tail".to_vec()]);
    assert_quiet(&mut sub);
}

/// SUB binds and subscribes; the PUB connects afterwards. The SUB must send its existing
/// subscriptions to each newly attached peer (RFC 29; libzmq's xsub_t::xattach_pipe).
fn sub_binds_and_publisher_connects_later(t: Transport) {
    let ctx = ctx();
    let mut sub = socket(&ctx, T::Sub);
    let ep = bind(&mut sub, t);
    sub.set_bytes(opt::SUBSCRIBE, b"early").unwrap();
    let mut publ = socket(&ctx, T::Pub);
    publ.connect(&ep).unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"early-probe");
    // A subscription made while connected also reaches it.
    sub.set_bytes(opt::SUBSCRIBE, b"late").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"late-probe");
    publ.send("other", 0).unwrap();
    publ.send("late-1", 0).unwrap();
    assert_eq!(recv_skipping(&mut sub, b"early-probe"), b"late-1".to_vec());
}

// --- DEALER/DEALER -----------------------------------------------------------------------------

fn dealer_dealer_both_ways(t: Transport) {
    let ctx = ctx();
    let (mut a, mut b, _) = pair(&ctx, t, T::Dealer, T::Dealer);
    send_parts(&mut b, &[b"", b"from b"]);
    assert_eq!(recv_parts(&mut a), vec![vec![], b"from b".to_vec()]);
    send_parts(&mut a, &[b"from a", b""]);
    assert_eq!(recv_parts(&mut b), vec![b"from a".to_vec(), vec![]]);
}

// --- REQ/REP (RFC 28) --------------------------------------------------------------------------

fn req_rep_strict_alternation(t: Transport) {
    let ctx = ctx();
    let (mut rep, mut req, _) = pair(&ctx, t, T::Rep, T::Req);
    // REQ must send first; REP must receive first.
    assert_eq!(req.recv(opt::DONTWAIT).unwrap_err(), Error::Fsm);
    assert_eq!(rep.send("no", opt::DONTWAIT).unwrap_err(), Error::Fsm);
    for i in 0..20 {
        req.send(format!("req {i}"), 0).unwrap();
        assert_eq!(req.send("again", opt::DONTWAIT).unwrap_err(), Error::Fsm, "REQ sends twice");
        assert_eq!(recv_bytes(&mut rep), format!("req {i}").into_bytes());
        assert_eq!(rep.recv(opt::DONTWAIT).unwrap_err(), Error::Fsm, "REP receives twice");
        rep.send(format!("rep {i}"), 0).unwrap();
        assert_eq!(rep.send("again", opt::DONTWAIT).unwrap_err(), Error::Fsm, "REP replies twice");
        assert_eq!(recv_bytes(&mut req), format!("rep {i}").into_bytes());
    }
}

fn req_rep_multipart(t: Transport) {
    let ctx = ctx();
    let (mut rep, mut req, _) = pair(&ctx, t, T::Rep, T::Req);
    send_parts(&mut req, &[b"a", b"", b"c"]);
    assert_eq!(recv_parts(&mut rep), vec![b"a".to_vec(), vec![], b"c".to_vec()]);
    send_parts(&mut rep, &[b"", b"y"]);
    assert_eq!(recv_parts(&mut req), vec![vec![], b"y".to_vec()]);
}

fn req_router_envelope(t: Transport) {
    let ctx = ctx();
    let (mut router, mut req, _) = pair(&ctx, t, T::Router, T::Req);
    req.send("hello", 0).unwrap();
    let parts = recv_parts(&mut router);
    assert_eq!(parts.len(), 3, "ROUTER sees [id, delimiter, body]: {parts:?}");
    assert!(!parts[0].is_empty(), "generated routing id is not empty");
    assert_eq!(parts[0][0], 0, "libzmq-generated routing ids start with a zero byte");
    assert_eq!(parts[1], b"");
    assert_eq!(parts[2], b"hello");
    send_parts(&mut router, &[&parts[0], b"", b"world"]);
    assert_eq!(recv_parts(&mut req), vec![b"world".to_vec()]);
    // A reply that arrives without the empty delimiter is dropped by REQ (RFC 28).
    req.send("second", 0).unwrap();
    let p = recv_parts(&mut router);
    send_parts(&mut router, &[&p[0], b"no-delimiter"]);
    send_parts(&mut router, &[&p[0], b"", b"good"]);
    assert_eq!(recv_parts(&mut req), vec![b"good".to_vec()]);
}

fn dealer_rep_envelope(t: Transport) {
    let ctx = ctx();
    let (mut rep, mut dealer, _) = pair(&ctx, t, T::Rep, T::Dealer);
    send_parts(&mut dealer, &[b"", b"hello"]);
    assert_eq!(recv_parts(&mut rep), vec![b"hello".to_vec()]);
    rep.send("world", 0).unwrap();
    assert_eq!(recv_parts(&mut dealer), vec![vec![], b"world".to_vec()]);
    // A deeper envelope is kept and returned in full.
    send_parts(&mut dealer, &[b"hop2", b"hop1", b"", b"q"]);
    assert_eq!(recv_parts(&mut rep), vec![b"q".to_vec()]);
    send_parts(&mut rep, &[b"r1", b"r2"]);
    assert_eq!(recv_parts(&mut dealer), vec![b"hop2".to_vec(), b"hop1".to_vec(), vec![], b"r1".to_vec(), b"r2".to_vec()]);
}

fn dealer_router_routing_ids_both_ways(t: Transport) {
    let ctx = ctx();
    // DEALERs connect to a bound ROUTER, each with an explicit id.
    let mut router = socket(&ctx, T::Router);
    let ep = bind(&mut router, t);
    let mut d1 = socket(&ctx, T::Dealer);
    d1.set_bytes(opt::ROUTING_ID, b"dealer-1").unwrap();
    assert_eq!(d1.get_bytes(opt::ROUTING_ID).unwrap(), b"dealer-1");
    d1.connect(&ep).unwrap();
    let mut d2 = socket(&ctx, T::Dealer);
    d2.set_bytes(opt::ROUTING_ID, b"dealer-2").unwrap();
    d2.connect(&ep).unwrap();
    send_parts(&mut d1, &[b"from 1"]);
    send_parts(&mut d2, &[b"from 2", b"part 2"]);
    let mut seen = BTreeMap::new();
    for _ in 0..2 {
        let p = recv_parts(&mut router);
        seen.insert(p[0].clone(), p[1..].to_vec());
    }
    assert_eq!(seen[&b"dealer-1".to_vec()], vec![b"from 1".to_vec()]);
    assert_eq!(seen[&b"dealer-2".to_vec()], vec![b"from 2".to_vec(), b"part 2".to_vec()]);
    // Replies routed by id, in the other order.
    send_parts(&mut router, &[b"dealer-2", b"to 2"]);
    send_parts(&mut router, &[b"dealer-1", b"to 1", b""]);
    assert_eq!(recv_parts(&mut d2), vec![b"to 2".to_vec()]);
    assert_eq!(recv_parts(&mut d1), vec![b"to 1".to_vec(), vec![]]);
    assert_quiet(&mut d1);
    assert_quiet(&mut d2);

    // The other way: the ROUTER connects to a bound DEALER; the DEALER's id is what the
    // ROUTER sees, and the ROUTER can address it once it has spoken.
    let mut dealer = socket(&ctx, T::Dealer);
    dealer.set_bytes(opt::ROUTING_ID, b"bound-dealer").unwrap();
    let ep2 = bind(&mut dealer, t);
    let mut r2 = socket(&ctx, T::Router);
    r2.connect(&ep2).unwrap();
    dealer.send("hi router", 0).unwrap();
    assert_eq!(recv_parts(&mut r2), vec![b"bound-dealer".to_vec(), b"hi router".to_vec()]);
    send_parts(&mut r2, &[b"bound-dealer", b"hi dealer"]);
    assert_eq!(recv_parts(&mut dealer), vec![b"hi dealer".to_vec()]);
}

fn router_router_explicit_routing_ids(t: Transport) {
    let ctx = ctx();
    let mut server = socket(&ctx, T::Router);
    server.set_bytes(opt::ROUTING_ID, b"server").unwrap();
    let ep = bind(&mut server, t);
    let mut client = socket(&ctx, T::Router);
    client.set_bytes(opt::ROUTING_ID, b"client").unwrap();
    client.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    client.connect(&ep).unwrap();
    // The client learns "server" when the handshake completes; until then EHOSTUNREACH.
    eventually("client can route to \"server\"", || match client.send_multipart([&b"server"[..], b"ping"], opt::DONTWAIT) {
        Ok(()) => Some(()),
        Err(Error::HostUnreach) => None,
        Err(e) => panic!("send: {e:?}"),
    });
    assert_eq!(recv_parts(&mut server), vec![b"client".to_vec(), b"ping".to_vec()]);
    send_parts(&mut server, &[b"client", b"pong", b""]);
    assert_eq!(recv_parts(&mut client), vec![b"server".to_vec(), b"pong".to_vec(), vec![]]);
}

fn router_mandatory_unknown_peer(t: Transport) {
    let ctx = ctx();
    let (mut router, mut dealer, _) = pair(&ctx, t, T::Router, T::Dealer);
    router.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    assert_eq!(router.get_int(opt::ROUTER_MANDATORY).unwrap(), 1);
    assert_eq!(router.send_multipart([&b"nobody"[..], b"x"], 0).unwrap_err(), Error::HostUnreach);
    assert_eq!(router.send_multipart([&b"nobody"[..], b"x"], opt::DONTWAIT).unwrap_err(), Error::HostUnreach);
    // A known peer still works afterwards, and nothing half-sent leaked to it.
    dealer.send("hi", 0).unwrap();
    let p = recv_parts(&mut router);
    send_parts(&mut router, &[&p[0], b"ok"]);
    assert_eq!(recv_parts(&mut dealer), vec![b"ok".to_vec()]);
    assert_quiet(&mut dealer);
}

fn router_drops_unknown_peer_silently(t: Transport) {
    let ctx = ctx();
    let (mut router, mut dealer, _) = pair(&ctx, t, T::Router, T::Dealer);
    // ROUTER_MANDATORY off (default): the message is dropped and send succeeds.
    assert_eq!(router.get_int(opt::ROUTER_MANDATORY).unwrap(), 0);
    router.send_multipart([&b"nobody"[..], b"lost"], 0).unwrap();
    dealer.send("hi", 0).unwrap();
    let p = recv_parts(&mut router);
    send_parts(&mut router, &[&p[0], b"found"]);
    assert_eq!(recv_parts(&mut dealer), vec![b"found".to_vec()]);
}

// --- PUSH/PULL (RFC 30) ------------------------------------------------------------------------

fn push_round_robin_three_pullers(t: Transport) {
    let ctx = ctx();
    let mut pullers = Vec::new();
    let mut push = socket(&ctx, T::Push);
    for _ in 0..3 {
        let mut p = socket(&ctx, T::Pull);
        let ep = bind(&mut p, t);
        // Outgoing connections queue before they complete (zmq_setsockopt, ZMQ_IMMEDIATE), so
        // all three pipes take part in the round robin from the first message.
        push.connect(&ep).unwrap();
        pullers.push(p);
    }
    for i in 0..30u8 {
        push.send(vec![i], 0).unwrap();
    }
    let mut firsts = Vec::new();
    for (k, p) in pullers.iter_mut().enumerate() {
        let got: Vec<u8> = (0..10).map(|_| recv_bytes(p)[0]).collect();
        for w in got.windows(2) {
            assert_eq!(w[1], w[0] + 3, "puller {k} got {got:?}: not strict round robin");
        }
        firsts.push(got[0]);
        assert_quiet(p);
    }
    firsts.sort();
    assert_eq!(firsts, [0, 1, 2]);
}

fn pull_three_pushers_under_backpressure(t: Transport) {
    const HWM: i32 = 20;
    let ctx = ctx();
    let mut pull = socket(&ctx, T::Pull);
    pull.set_int(opt::RCVHWM, HWM).unwrap();
    let ep = bind(&mut pull, t);
    let (full_tx, full_rx) = std::sync::mpsc::channel();
    let mut threads = Vec::new();
    let mut go = Vec::new();
    const PER_PUSHER: u32 = 2000;
    for k in 0..3u8 {
        let ctx = ctx.clone();
        let ep = ep.clone();
        let full_tx = full_tx.clone();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        go.push(go_tx);
        threads.push(std::thread::spawn(move || {
            let mut push = socket(&ctx, T::Push);
            push.set_int(opt::SNDHWM, HWM).unwrap();
            push.set_int(opt::SNDTIMEO, 20_000).unwrap();
            push.connect(&ep).unwrap();
            // A PUSH also reaches EAGAIN before its connection completes; say hello first so
            // that "full" below means backed up all the way to the PULL.
            push.send(vec![b'h', k], 0).unwrap();
            go_rx.recv_timeout(DEADLINE).expect("go");
            let mut signalled = false;
            for i in 0..PER_PUSHER {
                let mut body = vec![k];
                body.extend_from_slice(&i.to_be_bytes());
                if !signalled {
                    match push.send(body.clone(), opt::DONTWAIT) {
                        Ok(()) => continue,
                        Err(Error::Again) => {
                            signalled = true;
                            full_tx.send(k).unwrap();
                        }
                        Err(e) => panic!("send: {e:?}"),
                    }
                }
                push.send(body, 0).unwrap();
            }
            if !signalled {
                full_tx.send(k).unwrap();
            }
            // Default linger would also work; be explicit that everything must go out.
            push.set_int(opt::LINGER, -1).unwrap();
        }));
    }
    let mut hellos: Vec<u8> = (0..3).map(|_| recv_bytes(&mut pull)[1]).collect();
    hellos.sort();
    assert_eq!(hellos, [0, 1, 2]);
    for g in &go {
        g.send(()).unwrap();
    }
    // Wait until every pusher has hit its high-water mark: all three paths are backed up.
    for _ in 0..3 {
        full_rx.recv_timeout(DEADLINE).expect("every pusher reaches its HWM");
    }
    let mut order = Vec::new();
    let mut next = [0u32; 3];
    for _ in 0..3 * PER_PUSHER {
        let m = recv_bytes(&mut pull);
        let k = m[0] as usize;
        let i = u32::from_be_bytes(m[1..5].try_into().unwrap());
        assert_eq!(i, next[k], "pusher {k}: messages out of order or lost");
        next[k] += 1;
        order.push(k);
    }
    for th in threads {
        th.join().unwrap();
    }
    // Which queue holds messages at each read depends on thread scheduling (a descheduled
    // pusher has an empty queue), so rotation is asserted in pull_fair_queue_exact_rotation_inproc
    // where every queue is filled before the first read. Here: nothing lost, nothing reordered,
    // under back-pressure from three concurrent pushers.
    assert!(order.contains(&0) && order.contains(&1) && order.contains(&2));
    assert_eq!(next, [PER_PUSHER; 3]);
}

/// With every queue filled before the first read (inproc writes straight into the pipe), a
/// fair queue must rotate strictly: one message from each peer in turn (libzmq's fq_t).
fn pull_fair_queue_exact_rotation_inproc(t: Transport) {
    if t != Transport::Inproc {
        eprintln!("skip: over tcp/ipc arrival timing decides what is queued; see pull_three_pushers_under_backpressure");
        return;
    }
    let ctx = ctx();
    let mut pull = socket(&ctx, T::Pull);
    let ep = bind(&mut pull, t);
    let mut pushers: Vec<_> = (0..3).map(|_| socket(&ctx, T::Push)).collect();
    for p in pushers.iter_mut() {
        p.connect(&ep).unwrap();
    }
    for (k, p) in pushers.iter_mut().enumerate() {
        for i in 0..10u8 {
            p.send(vec![k as u8, i], 0).unwrap();
        }
        // A multi-part message counts once in the rotation.
        p.send_multipart([vec![k as u8, 10], vec![b'm']], 0).unwrap();
    }
    let mut order = Vec::new();
    for _ in 0..33 {
        let parts = recv_parts(&mut pull);
        order.push(parts[0][0]);
        if parts[0][1] == 10 {
            assert_eq!(parts.len(), 2);
        }
    }
    let mut first3 = order[..3].to_vec();
    first3.sort();
    assert_eq!(first3, [0, 1, 2], "{order:?}");
    for i in 3..order.len() {
        assert_eq!(order[i], order[i % 3], "not a strict rotation: {order:?}");
    }
    assert_quiet(&mut pull);
}

// --- High-water marks and timeouts -------------------------------------------------------------

fn push_blocks_at_hwm(t: Transport) {
    let ctx = ctx();
    let mut pull = socket(&ctx, T::Pull);
    pull.set_int(opt::RCVHWM, 5).unwrap();
    let ep = bind(&mut pull, t);
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::SNDHWM, 5).unwrap();
    push.connect(&ep).unwrap();
    // Make sure the connection is up, so the count below is not just the unconnected queue.
    push.send("hello", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"hello");
    let body = vec![7u8; 64 * 1024];
    let mut accepted = 0u32;
    let end = Instant::now() + DEADLINE;
    loop {
        match push.send(body.clone(), opt::DONTWAIT) {
            Ok(()) => accepted += 1,
            Err(Error::Again) => break,
            Err(e) => panic!("send: {e:?}"),
        }
        assert!(Instant::now() < end && accepted < 100_000, "PUSH never reached its HWM");
    }
    if t == Transport::Inproc {
        // inproc has no kernel buffers: the pipe holds at most SNDHWM + RCVHWM.
        assert!(accepted <= 10, "inproc accepted {accepted} > SNDHWM + RCVHWM");
    }
    assert!(accepted >= 1, "nothing accepted before EAGAIN");
    // A blocking send now waits for SNDTIMEO and fails with EAGAIN.
    push.set_int(opt::SNDTIMEO, 100).unwrap();
    let t0 = Instant::now();
    let r = push.send(body.clone(), 0);
    let waited = t0.elapsed();
    let extra = match r {
        Err(Error::Again) => {
            assert!(waited >= Duration::from_millis(80), "SNDTIMEO 100 returned after {waited:?}");
            0
        }
        // The I/O thread may have drained one message into the kernel meanwhile (tcp/ipc).
        Ok(()) if t != Transport::Inproc => 1,
        other => panic!("blocking send at HWM: {other:?}"),
    };
    // Everything accepted is delivered, in order, and nothing else.
    for _ in 0..accepted + extra {
        assert_eq!(recv_bytes(&mut pull).len(), body.len());
    }
    // Draining made room again.
    push.set_int(opt::SNDTIMEO, RCV_MS).unwrap();
    push.send("tail", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"tail");
}

fn pub_drops_at_hwm(t: Transport) {
    let ctx = ctx();
    let mut publ = socket(&ctx, T::Pub);
    publ.set_int(opt::SNDHWM, 10).unwrap();
    let ep = bind(&mut publ, t);
    let mut sub = socket(&ctx, T::Sub);
    sub.set_int(opt::RCVHWM, 10).unwrap();
    sub.connect(&ep).unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"").unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"probe");
    // Flood without reading: PUB never blocks and never fails, it drops.
    const N: u32 = 20_000;
    let body = vec![1u8; 1024];
    let t0 = Instant::now();
    for i in 0..N {
        let mut m = i.to_be_bytes().to_vec();
        m.extend_from_slice(&body);
        publ.send(m, 0).expect("PUB send at HWM must succeed (drop), not block or fail");
    }
    assert!(t0.elapsed() < DEADLINE, "PUB blocked");
    // Now drain, publishing an end marker until it gets through.
    let mut got = Vec::new();
    let end = Instant::now() + DEADLINE;
    'outer: loop {
        publ.send("end", opt::DONTWAIT).unwrap();
        while let Some(m) = try_recv(&mut sub, 5) {
            if &m[..] == b"end" {
                break 'outer;
            }
            if &m[..] == b"probe" {
                continue;
            }
            got.push(u32::from_be_bytes(m[..4].try_into().unwrap()));
        }
        assert!(Instant::now() < end, "end marker never arrived");
    }
    assert!(!got.is_empty(), "no flood message arrived at all");
    assert!((got.len() as u32) < N, "PUB with SNDHWM 10 delivered all {N} messages to a non-reading SUB");
    assert!(got.windows(2).all(|w| w[0] < w[1]), "PUB reordered or duplicated messages");
}

fn rcvtimeo_and_sndtimeo_give_again(t: Transport) {
    let ctx = ctx();
    let (mut pull, mut push, _) = pair(&ctx, t, T::Pull, T::Push);
    pull.set_int(opt::RCVTIMEO, 100).unwrap();
    assert_eq!(pull.get_int(opt::RCVTIMEO).unwrap(), 100);
    let t0 = Instant::now();
    assert_eq!(pull.recv(0).unwrap_err(), Error::Again);
    let waited = t0.elapsed();
    assert!(waited >= Duration::from_millis(90) && waited < Duration::from_secs(3), "RCVTIMEO 100 waited {waited:?}");
    assert_eq!(pull.recv(opt::DONTWAIT).unwrap_err(), Error::Again);
    pull.set_int(opt::RCVTIMEO, 0).unwrap();
    assert_eq!(pull.recv(0).unwrap_err(), Error::Again);
    // A message that does arrive is returned before the timeout.
    pull.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    push.send("in time", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"in time");
    // A PUSH with no peer at all blocks on send until SNDTIMEO.
    let mut lonely = ctx.socket(T::Push).unwrap();
    lonely.set_int(opt::SNDTIMEO, 100).unwrap();
    lonely.set_int(opt::LINGER, 0).unwrap();
    let t0 = Instant::now();
    assert_eq!(lonely.send("x", 0).unwrap_err(), Error::Again);
    assert!(t0.elapsed() >= Duration::from_millis(90));
    assert_eq!(lonely.send("x", opt::DONTWAIT).unwrap_err(), Error::Again);
}

// --- Connection management ---------------------------------------------------------------------

fn connect_before_bind(t: Transport) {
    let ctx = ctx();
    let ep = t.fresh_endpoint();
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::RECONNECT_IVL, 10).unwrap();
    push.connect(&ep).unwrap();
    // Queued before anything is bound (IMMEDIATE is off).
    push.send("early 1", 0).unwrap();
    push.send("early 2", 0).unwrap();
    let mut pull = socket(&ctx, T::Pull);
    pull.bind(&ep).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"early 1");
    assert_eq!(recv_bytes(&mut pull), b"early 2");
    push.send("late", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"late");
    // And the REQ/REP way round: bind after connect with a round trip.
    let ep2 = t.fresh_endpoint();
    let mut req = socket(&ctx, T::Req);
    req.set_int(opt::RECONNECT_IVL, 10).unwrap();
    req.connect(&ep2).unwrap();
    req.send("q", 0).unwrap();
    let mut rep = socket(&ctx, T::Rep);
    rep.bind(&ep2).unwrap();
    assert_eq!(recv_bytes(&mut rep), b"q");
    rep.send("a", 0).unwrap();
    assert_eq!(recv_bytes(&mut req), b"a");
}

fn reconnect_after_peer_rebinds(t: Transport) {
    if !t.reconnects() {
        eprintln!("skip: inproc does not reconnect (libzmq: a connect is bound to one binder's life)");
        return;
    }
    let ctx = ctx();
    let mut first = socket(&ctx, T::Rep);
    let ep = bind(&mut first, t);
    let mut dealer = socket(&ctx, T::Dealer);
    dealer.set_int(opt::RECONNECT_IVL, 10).unwrap();
    dealer.connect(&ep).unwrap();
    send_parts(&mut dealer, &[b"", b"one"]);
    assert_eq!(recv_parts(&mut first), vec![b"one".to_vec()]);
    first.send("first", 0).unwrap();
    assert_eq!(recv_parts(&mut dealer), vec![vec![], b"first".to_vec()]);
    drop(first);
    let mut second = socket(&ctx, T::Rep);
    // Closing is asynchronous (libzmq's reaper); the address frees up shortly.
    eventually("the endpoint can be bound again", || match second.bind(&ep) {
        Ok(()) => Some(()),
        Err(Error::AddrInUse) => None,
        Err(e) => panic!("rebind {ep}: {e:?}"),
    });
    // Keep asking until the new REP answers; each request has its own number.
    let mut n = 0u32;
    let got = eventually("the DEALER reconnects to the new REP", || {
        n += 1;
        dealer.send_multipart([&b""[..], format!("probe {n}").as_bytes()], opt::DONTWAIT).ok();
        if let Some(m) = try_recv(&mut second, 20) {
            return Some(m.to_vec());
        }
        None
    });
    assert!(got.starts_with(b"probe "), "{got:?}");
    second.send("second", 0).unwrap();
    assert_eq!(recv_parts(&mut dealer), vec![vec![], b"second".to_vec()]);
}

/// zmq_unbind drops the connections the endpoint accepted with their queues: nothing the
/// peer sends afterwards is received (libzmq's test_reconnect_ivl relies on it), while a
/// connection of another endpoint of the same socket carries on.
fn unbind_drops_accepted_connections(t: Transport) {
    if !t.is_wire() {
        return; // inproc pipes are not accepted connections
    }
    let ctx = ctx();
    let mut pair = socket(&ctx, T::Pair);
    let ep = bind(&mut pair, t);
    let mut peer = socket(&ctx, T::Pair);
    peer.set_int(opt::RECONNECT_IVL, -1).unwrap();
    peer.connect(&ep).unwrap();
    peer.send("before", 0).unwrap();
    assert_eq!(recv_bytes(&mut pair), b"before");
    pair.unbind(&ep).unwrap();
    // Whether it goes out before the peer sees the close or not, it must not arrive.
    let _ = peer.send("after", opt::DONTWAIT);
    assert_quiet(&mut pair);
}

fn unbind_and_disconnect(t: Transport) {
    let ctx = ctx();
    let mut pull = socket(&ctx, T::Pull);
    let requested = t.bind_endpoint();
    pull.bind(&requested).unwrap();
    let ep = bound_endpoint(&mut pull, &requested);
    // Unknown endpoints: ENOENT.
    assert_eq!(pull.unbind(&t.fresh_endpoint()).unwrap_err(), Error::NoEnt);
    // Unbind by the resolved endpoint (LAST_ENDPOINT for tcp).
    pull.unbind(&ep).unwrap();
    assert_eq!(pull.unbind(&ep).unwrap_err(), Error::NoEnt, "second unbind");
    // The address is free again (the listener may close asynchronously, as in libzmq).
    let mut other = socket(&ctx, T::Pull);
    eventually("the endpoint can be bound again after unbind", || match other.bind(&ep) {
        Ok(()) => Some(()),
        Err(Error::AddrInUse) => None,
        Err(e) => panic!("bind after unbind {ep}: {e:?}"),
    });

    // Disconnect: a PUSH connected to two PULLs, disconnected from one, sends only to the other.
    let mut a = socket(&ctx, T::Pull);
    let ep_a = bind(&mut a, t);
    let mut b = socket(&ctx, T::Pull);
    let ep_b = bind(&mut b, t);
    let mut push = socket(&ctx, T::Push);
    push.connect(&ep_a).unwrap();
    push.connect(&ep_b).unwrap();
    push.send("to a", 0).unwrap();
    push.send("to b", 0).unwrap();
    assert_eq!(recv_bytes(&mut a), b"to a");
    assert_eq!(recv_bytes(&mut b), b"to b");
    push.disconnect(&ep_a).unwrap();
    assert_eq!(push.disconnect(&ep_a).unwrap_err(), Error::NoEnt, "second disconnect");
    assert_eq!(push.disconnect(&t.fresh_endpoint()).unwrap_err(), Error::NoEnt);
    for i in 0..10 {
        push.send(format!("only b {i}"), 0).unwrap();
    }
    for i in 0..10 {
        assert_eq!(recv_bytes(&mut b), format!("only b {i}").into_bytes());
    }
    assert_quiet(&mut a);
}

fn maxmsgsize_disconnects_and_drops(t: Transport) {
    if !t.is_wire() {
        eprintln!("skip: MAXMSGSIZE applies to decoded wire frames; libzmq ignores it on inproc");
        return;
    }
    let ctx = ctx();
    let mut pull = socket(&ctx, T::Pull);
    pull.setsockopt(opt::MAXMSGSIZE, &1000i64.to_ne_bytes()).unwrap();
    let mut v = [0u8; 8];
    assert_eq!(pull.getsockopt(opt::MAXMSGSIZE, &mut v).unwrap(), 8);
    assert_eq!(i64::from_ne_bytes(v), 1000);
    let ep = bind(&mut pull, t);
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::RECONNECT_IVL, 10).unwrap();
    push.connect(&ep).unwrap();
    push.send(vec![b'x'; 1000], 0).unwrap();
    assert_eq!(recv_bytes(&mut pull).len(), 1000, "a message of exactly MAXMSGSIZE is allowed");
    push.send(vec![b'y'; 1001], 0).unwrap();
    // The peer is disconnected; it reconnects and later small messages arrive. The oversized
    // message never does.
    let mut n = 0u32;
    eventually("small messages flow again after the oversized one", || {
        n += 1;
        push.send(format!("small {n}"), opt::DONTWAIT).ok();
        while let Some(m) = try_recv(&mut pull, 20) {
            assert!(m.len() <= 1000, "message of {} bytes delivered despite MAXMSGSIZE 1000", m.len());
            if m.starts_with(b"small ") {
                return Some(());
            }
        }
        None
    });
}

fn immediate_queues_only_on_live_connections(t: Transport) {
    if t == Transport::Inproc {
        eprintln!("skip: libzmq's inproc connect creates its pipe at once; IMMEDIATE has no effect");
        return;
    }
    let ctx = ctx();
    let ep = t.fresh_endpoint();
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::IMMEDIATE, 1).unwrap();
    assert_eq!(push.get_int(opt::IMMEDIATE).unwrap(), 1);
    push.set_int(opt::RECONNECT_IVL, 10).unwrap();
    push.connect(&ep).unwrap();
    // No completed connection: nothing to queue on.
    assert_eq!(push.send("early", opt::DONTWAIT).unwrap_err(), Error::Again);
    let mut pull = socket(&ctx, T::Pull);
    pull.bind(&ep).unwrap();
    // Once the connection completes, sends go through.
    eventually("IMMEDIATE PUSH accepts a message once connected", || push.send("now", opt::DONTWAIT).ok());
    assert_eq!(recv_bytes(&mut pull), b"now", "the refused early message must not show up");
    // With two peers of which one is down, IMMEDIATE sends only to the live one.
    let dead = t.fresh_endpoint();
    push.connect(&dead).unwrap();
    for i in 0..6 {
        push.send(format!("live {i}"), 0).unwrap();
    }
    for i in 0..6 {
        assert_eq!(recv_bytes(&mut pull), format!("live {i}").into_bytes());
    }
}

fn linger_zero_discards(t: Transport) {
    let ctx = ctx();
    let ep = t.fresh_endpoint();
    let mut push = ctx.socket(T::Push).unwrap();
    assert_eq!(push.get_int(opt::LINGER).unwrap(), -1, "default LINGER is infinite");
    push.set_int(opt::LINGER, 0).unwrap();
    push.connect(&ep).unwrap();
    for _ in 0..10 {
        push.send("pending", 0).unwrap();
    }
    drop(push);
    // Nothing can be delivered (nobody bound); LINGER 0 lets term return at once.
    let c = ctx.clone();
    within(Duration::from_secs(2), "ctx.term() after LINGER 0", move || c.term().unwrap());
}

fn linger_timeout_bounds_term(t: Transport) {
    let ctx = ctx();
    let ep = t.fresh_endpoint();
    let mut push = ctx.socket(T::Push).unwrap();
    push.set_int(opt::LINGER, 300).unwrap();
    assert_eq!(push.get_int(opt::LINGER).unwrap(), 300);
    push.connect(&ep).unwrap();
    push.send("pending", 0).unwrap();
    let t0 = Instant::now();
    drop(push);
    let c = ctx.clone();
    within(Duration::from_secs(5), "ctx.term() with LINGER 300", move || c.term().unwrap());
    let took = t0.elapsed();
    // On inproc an unmatched connect has no session to linger in; only the bound applies.
    if t.is_wire() {
        assert!(took >= Duration::from_millis(250), "term returned after {took:?}, before LINGER expired");
    }
}

/// A PUSH connects, sends 10,000 messages and is dropped at once with the default LINGER:
/// the PULL gets every one, in order.
fn nothing_accepted_is_lost_on_close(t: Transport) {
    const N: u32 = 10_000;
    let ctx = ctx();
    let mut pull = socket(&ctx, T::Pull);
    let ep = bind(&mut pull, t);
    let c = ctx.clone();
    let sender = std::thread::spawn(move || {
        let mut push = c.socket(T::Push).unwrap();
        push.connect(&ep).unwrap();
        for i in 0..N {
            push.send(i.to_be_bytes().to_vec(), 0).unwrap();
        }
        // Dropped here: LINGER -1, close must flush everything already accepted.
    });
    for i in 0..N {
        let m = pull.recv(0).unwrap_or_else(|e| panic!("message {i} of {N} lost: {e:?}"));
        assert_eq!(u32::from_be_bytes(m[..].try_into().unwrap()), i);
    }
    sender.join().unwrap();
    assert_quiet(&mut pull);
}
