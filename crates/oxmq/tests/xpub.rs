//! XPUB's options (zmq_setsockopt(3)): XPUB_WELCOME_MSG, XPUB_MANUAL, XPUB_MANUAL_LAST_VALUE,
//! XPUB_NODROP, and INVERT_MATCHING on both sides; and the last-value cache the manual modes
//! exist for (the zguide's "lvcache": an XSUB/XPUB proxy that replays the cached value of a
//! topic to each new subscriber, and only to it).

mod common;

use common::*;
use oxmq::{opt, Context, Error, PollItem, Socket, SocketType as T};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn welcome_reaches_new_subscriber(t: Transport) {
    let ctx = Context::new();
    let mut xpub = socket(&ctx, T::XPub);
    xpub.set_bytes(opt::XPUB_WELCOME_MSG, b"W").unwrap();
    let ep = bind(&mut xpub, t);
    let mut sub = socket(&ctx, T::Sub);
    sub.subscribe("W").unwrap();
    sub.connect(&ep).unwrap();
    // A bound socket attaches new peers when the application calls into it; the welcome
    // goes out then, ahead of anything else.
    assert_eq!(recv_bytes(&mut xpub), b"\x01W");
    assert_eq!(recv_bytes(&mut sub), b"W");
    // An empty value clears it: the next subscriber gets nothing.
    xpub.set_bytes(opt::XPUB_WELCOME_MSG, b"").unwrap();
    xpub.set_int(opt::XPUB_VERBOSE, 1).unwrap();
    let mut sub2 = socket(&ctx, T::Sub);
    sub2.subscribe("W").unwrap();
    sub2.connect(&ep).unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01W", "second subscriber attached");
    assert_quiet(&mut sub2);
}

/// Manual mode: what the subscriber asks for is not applied; the application applies
/// whatever it wants to the pipe of the subscription it received last.
fn manual_applies_to_last_pipe(t: Transport) {
    let ctx = Context::new();
    let mut xpub = socket(&ctx, T::XPub);
    xpub.set_int(opt::XPUB_MANUAL, 1).unwrap();
    let ep = bind(&mut xpub, t);

    let mut sub1 = socket(&ctx, T::Sub);
    sub1.subscribe("").unwrap();
    sub1.connect(&ep).unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01");
    // Not applied automatically: nothing is delivered yet.
    xpub.send("A0", 0).unwrap();
    assert_quiet(&mut sub1);
    xpub.subscribe("A").unwrap(); // to sub1's pipe

    let mut sub2 = socket(&ctx, T::Sub);
    sub2.subscribe("").unwrap();
    sub2.connect(&ep).unwrap();
    // Every subscription is passed up in manual mode, duplicates included.
    assert_eq!(recv_bytes(&mut xpub), b"\x01");
    xpub.subscribe("B").unwrap(); // to sub2's pipe

    xpub.send("A1", 0).unwrap();
    xpub.send("B1", 0).unwrap();
    xpub.send("C1", 0).unwrap();
    assert_eq!(recv_bytes(&mut sub1), b"A1");
    assert_eq!(recv_bytes(&mut sub2), b"B1");
    assert_quiet(&mut sub1);
    assert_quiet(&mut sub2);

    // UNSUBSCRIBE applies to the last pipe too (sub2's).
    xpub.unsubscribe("B").unwrap();
    xpub.send("B2", 0).unwrap();
    xpub.send("A2", 0).unwrap();
    assert_eq!(recv_bytes(&mut sub1), b"A2");
    assert_quiet(&mut sub2);

    // Subscribers that go away unsubscribe from what they had asked for (not from what the
    // application applied), each of them: the application applied it per pipe, so it hears of
    // every pipe's departure even when another subscriber still wants the prefix (libzmq's
    // test_xpub_manual test_xpub_proxy_unsubscribe_on_disconnect).
    drop(sub1);
    assert_eq!(recv_bytes(&mut xpub), b"\x00", "sub1 left");
    drop(sub2);
    assert_eq!(recv_bytes(&mut xpub), b"\x00", "sub2 left");
}

/// NODROP: at the high-water mark `send` reports EAGAIN instead of dropping, and nothing sent
/// is lost.
fn nodrop_blocks_at_hwm(t: Transport) {
    let ctx = Context::new();
    let mut xpub = socket(&ctx, T::XPub);
    xpub.set_int(opt::XPUB_NODROP, 1).unwrap();
    xpub.set_int(opt::SNDHWM, 10).unwrap();
    xpub.set_int(opt::SNDTIMEO, 50).unwrap();
    let ep = bind(&mut xpub, t);
    let mut sub = socket(&ctx, T::Sub);
    sub.set_int(opt::RCVHWM, 10).unwrap();
    sub.subscribe("").unwrap();
    sub.connect(&ep).unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01");

    let body = vec![7u8; 1024];
    let mut sent = 0u64;
    // Blocking sends (SNDTIMEO 50 ms) until one times out with EAGAIN: the queues between
    // here and the subscriber that does not read are full. A PUB would have dropped instead.
    loop {
        match xpub.send(body.as_slice(), 0) {
            Ok(()) => sent += 1,
            Err(Error::Again) => break,
            Err(e) => panic!("send: {e:?}"),
        }
        assert!(sent < 1_000_000, "NODROP never pushed back");
    }
    assert_eq!(xpub.send(body.as_slice(), opt::DONTWAIT).unwrap_err(), Error::Again);
    assert_eq!(xpub.events().unwrap() & opt::POLLOUT, 0, "not writable at HWM");
    assert_eq!(xpub.dropped_messages(), 0);
    for _ in 0..sent {
        assert_eq!(recv_bytes(&mut sub).len(), 1024);
    }
    // Room again: sends go through.
    xpub.set_int(opt::SNDTIMEO, RCV_MS).unwrap();
    xpub.send("after", 0).unwrap();
    assert_eq!(recv_bytes(&mut sub), b"after");
}

/// INVERT_MATCHING on PUB and SUB: the subscriber gets exactly what its prefixes do not match.
/// (The publisher's side alone is shown by `invert_matching_xpub_side`.)
fn invert_matching_pub_sub(t: Transport) {
    let ctx = Context::new();
    let mut publ = socket(&ctx, T::Pub);
    publ.set_int(opt::INVERT_MATCHING, 1).unwrap();
    assert_eq!(publ.get_int(opt::INVERT_MATCHING).unwrap(), 1);
    let ep = bind(&mut publ, t);
    let mut sub = socket(&ctx, T::Sub);
    sub.set_int(opt::INVERT_MATCHING, 1).unwrap();
    sub.subscribe("A").unwrap();
    sub.connect(&ep).unwrap();
    // Before the subscription arrives the publisher sends everything to the new pipe; the
    // subscriber filters. Once "A" is known, "A" messages never leave the publisher.
    sync_pub_sub(&mut publ, &mut sub, b"probe");
    publ.send("A1", 0).unwrap();
    publ.send("B1", 0).unwrap();
    assert_eq!(recv_skipping(&mut sub, b"probe"), b"B1");
    assert_quiet(&mut sub);
}

/// The publisher side alone: an inverted XPUB with an ordinary subscriber that subscribes to
/// everything sends it nothing, then everything but "A" once the application swaps the
/// subscription in manual mode.
fn invert_matching_xpub_side(t: Transport) {
    let ctx = Context::new();
    let mut xpub = socket(&ctx, T::XPub);
    xpub.set_int(opt::INVERT_MATCHING, 1).unwrap();
    xpub.set_int(opt::XPUB_MANUAL, 1).unwrap();
    let ep = bind(&mut xpub, t);
    let mut sub = socket(&ctx, T::Sub);
    sub.subscribe("").unwrap();
    sub.connect(&ep).unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01");
    xpub.subscribe("A").unwrap();
    xpub.send("A1", 0).unwrap();
    xpub.send("B1", 0).unwrap();
    assert_eq!(recv_bytes(&mut sub), b"B1");
    assert_quiet(&mut sub);
}

per_transport!(
    welcome_reaches_new_subscriber,
    manual_applies_to_last_pipe,
    nodrop_blocks_at_hwm,
    invert_matching_pub_sub,
    invert_matching_xpub_side,
);

#[test]
fn xpub_options_are_validated() {
    let ctx = Context::new();
    let mut xpub = socket(&ctx, T::XPub);
    for o in [opt::XPUB_NODROP, opt::XPUB_MANUAL, opt::XPUB_MANUAL_LAST_VALUE, opt::INVERT_MATCHING] {
        assert_eq!(xpub.set_int(o, 2).unwrap_err(), Error::Invalid, "option {o}");
        assert_eq!(xpub.setsockopt(o, &[1]).unwrap_err(), Error::Invalid, "option {o}");
    }
    let mut publ = socket(&ctx, T::Pub);
    assert_eq!(publ.set_int(opt::XPUB_MANUAL, 1).unwrap_err(), Error::Invalid, "PUB has no XPUB options");
    // Manual SUBSCRIBE before any subscription arrived applies to nothing, and is accepted.
    xpub.set_int(opt::XPUB_MANUAL, 1).unwrap();
    xpub.subscribe("x").unwrap();
}

/// The last-value cache. A publisher sends topic updates; a proxy (XSUB upstream, XPUB with
/// XPUB_MANUAL_LAST_VALUE downstream) caches the last value of each topic. When a subscriber
/// subscribes, the proxy applies the subscription, forwards it upstream, and sends the cached
/// value, which goes to that subscriber only: the earlier subscriber gets no duplicate.
#[test]
fn last_value_cache_proxy() {
    let ctx = Context::new();
    let mut publ = socket(&ctx, T::Pub);
    let pub_ep = bind(&mut publ, Transport::Tcp);

    let mut xsub = socket(&ctx, T::XSub);
    xsub.connect(&pub_ep).unwrap();
    let mut xpub = socket(&ctx, T::XPub);
    xpub.set_int(opt::XPUB_MANUAL_LAST_VALUE, 1).unwrap();
    let sub_ep = bind(&mut xpub, Transport::Tcp);

    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let proxy = std::thread::spawn(move || lvc_proxy(xsub, xpub, &stop2));

    let mut early = socket(&ctx, T::Sub);
    early.subscribe("A").unwrap();
    early.connect(&sub_ep).unwrap();
    // Publish until the first subscriber sees updates: the path is up.
    let mut n = 0;
    loop {
        n += 1;
        publ.send(format!("A={n}"), 0).unwrap();
        if let Some(m) = try_recv(&mut early, 20) {
            if m.starts_with(b"A=") {
                break;
            }
        }
        assert!(n < 500, "updates never reached the first subscriber");
    }
    publ.send("A=last", 0).unwrap();
    loop {
        if recv_bytes(&mut early) == b"A=last" {
            break;
        }
    }
    // The publisher is now silent. A late subscriber still learns the value at once.
    let mut late = socket(&ctx, T::Sub);
    late.subscribe("A").unwrap();
    late.connect(&sub_ep).unwrap();
    assert_eq!(recv_bytes(&mut late), b"A=last");
    assert_quiet(&mut early);
    // And later updates reach both.
    publ.send("A=next", 0).unwrap();
    assert_eq!(recv_bytes(&mut late), b"A=next");
    assert_eq!(recv_bytes(&mut early), b"A=next");

    stop.store(true, Ordering::SeqCst);
    proxy.join().unwrap();
}

fn lvc_proxy(mut xsub: Socket, mut xpub: Socket, stop: &AtomicBool) {
    let mut cache: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    while !stop.load(Ordering::SeqCst) {
        let mut items = [
            PollItem::Socket { socket: &mut xsub, events: opt::POLLIN, revents: 0 },
            PollItem::Socket { socket: &mut xpub, events: opt::POLLIN, revents: 0 },
        ];
        oxmq::poll(&mut items, 20).unwrap();
        while let Ok(m) = xsub.recv(opt::DONTWAIT) {
            let topic = m.split(|&b| b == b'=').next().unwrap_or_default().to_vec();
            cache.insert(topic, m.to_vec());
            xpub.send(m, 0).unwrap();
        }
        while let Ok(m) = xpub.recv(opt::DONTWAIT) {
            if m.first() == Some(&1) {
                let topic = m[1..].to_vec();
                xpub.subscribe(&topic).unwrap();
                if let Some(v) = cache.get(&topic) {
                    xpub.send(v.as_slice(), 0).unwrap(); // to the new subscriber only
                }
            } else if m.first() == Some(&0) {
                xpub.unsubscribe(&m[1..]).unwrap();
            }
            xsub.send(m, 0).unwrap();
        }
    }
}

/// ONLY_FIRST_SUBSCRIBE (draft): by default (RFC 29) a subscription is a message of one frame,
/// so frames of a multi-part message are data; with the option on XSUB and XPUB the first
/// frame of any message may subscribe or cancel, and the frames after it are parsed only when
/// it did, so a data message may carry frames that start with 0 or 1.
#[test]
fn only_first_subscribe_parses_the_first_frame_of_a_multipart_message() {
    let ctx = Context::new();
    for only_first in [false, true] {
        let mut xpub = socket(&ctx, T::XPub);
        xpub.set_int(opt::ONLY_FIRST_SUBSCRIBE, only_first as i32).unwrap();
        let ep = bind(&mut xpub, Transport::Inproc);
        let mut xsub = socket(&ctx, T::XSub);
        xsub.set_int(opt::ONLY_FIRST_SUBSCRIBE, only_first as i32).unwrap();
        xsub.connect(&ep).unwrap();
        // A data message whose second frame looks like a cancel: data either way.
        send_parts(&mut xsub, &[b"ABC", b"\x00BC"]);
        assert_eq!(recv_parts(&mut xpub), vec![b"ABC".to_vec(), b"\x00BC".to_vec()], "only_first {only_first}");
        // A subscription in the first frame of a two-frame message.
        send_parts(&mut xsub, &[b"\x01T", b"\x01U"]);
        assert_eq!(recv_parts(&mut xpub), vec![b"\x01T".to_vec(), b"\x01U".to_vec()], "passed up either way");
        xsub.send("\x01Z", 0).unwrap(); // a plain subscription, a marker for what came before
        assert_eq!(recv_bytes(&mut xpub), b"\x01Z");
        xpub.send("U: subscribed only with the option", 0).unwrap();
        xpub.send("Z: subscribed", 0).unwrap();
        let first = recv_bytes(&mut xsub);
        if only_first {
            assert_eq!(first, b"U: subscribed only with the option");
            assert_eq!(recv_bytes(&mut xsub), b"Z: subscribed");
        } else {
            assert_eq!(first, b"Z: subscribed", "RFC 29: the two frames were data");
        }
    }
}
