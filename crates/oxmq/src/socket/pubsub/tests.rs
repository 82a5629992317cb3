//! PUB, SUB, XPUB and XSUB at the pattern level (zmq_socket(3), RFC 29): PUB sends to the
//! subscribers of a prefix and drops (and counts) for one at its HWM, never blocking; SUB
//! filters by prefix and counts its subscriptions; XPUB passes subscriptions up (first and
//! last by default, XPUB_VERBOSE, XPUB_VERBOSER, XPUB_MANUAL), welcomes newcomers, and with
//! XPUB_NODROP waits instead of dropping; XSUB subscribes by message.

use super::{Pub, Sub};
use crate::error::Error;
use crate::opt;
use crate::socket::harness::{parts, Bench, Parts};
use crate::socket::Pattern;

/// A subscription message: 0x01 then the prefix.
fn sub(prefix: &str) -> Vec<u8> {
    [&[1u8][..], prefix.as_bytes()].concat()
}

/// A cancellation message: 0x00 then the prefix.
fn unsub(prefix: &str) -> Vec<u8> {
    [&[0u8][..], prefix.as_bytes()].concat()
}

fn one(frame: Vec<u8>) -> Parts {
    vec![frame]
}

/// A publisher with a subscriber for each of `prefixes` (peer `i` subscribed to `prefixes[i]`).
fn publisher(p: Pub, prefixes: &[&str]) -> Bench<Pub> {
    let mut b = Bench::new(p);
    for prefix in prefixes {
        let s = b.attach();
        b.peer_send_bytes(s, &[&sub(prefix)]);
    }
    b.pump();
    b
}

#[test]
fn pub_sends_each_message_to_the_subscribers_of_a_prefix_of_it() {
    let mut b = publisher(Pub::new(), &["a", "b", ""]);
    for m in ["apple", "banana", "cherry"] {
        b.send(&[m]).unwrap();
    }
    assert_eq!(b.peer_recv_all(0), [parts(&["apple"])]);
    assert_eq!(b.peer_recv_all(1), [parts(&["banana"])]);
    assert_eq!(b.peer_recv_all(2).len(), 3, "the empty prefix matches everything");
    b.send(&["ab", "tail"]).unwrap();
    assert_eq!(b.peer_recv_all(0), [parts(&["ab", "tail"])], "matched on the first frame, sent whole");
}

#[test]
fn pub_drops_for_a_subscriber_at_its_hwm_and_counts_the_drops() {
    let mut b = Bench::new(Pub::new());
    let slow = b.attach_with([2, 0], Some(b""), None);
    let fast = b.attach();
    b.peer_send_bytes(slow, &[&sub("")]);
    b.peer_send_bytes(fast, &[&sub("")]);
    for i in 0..5 {
        assert_eq!(b.send(&[&i.to_string(), "x"]), Ok(()), "PUB never blocks");
        assert!(b.has_out());
    }
    assert_eq!(b.peer_recv_all(slow), [parts(&["0", "x"]), parts(&["1", "x"])], "whole messages or nothing");
    assert_eq!(b.peer_recv_all(fast).len(), 5, "the others lose nothing");
    let d = b.pattern.drops();
    assert_eq!((d.hwm, d.hwm_reached), (3, 3));
    b.send(&["5"]).unwrap();
    assert_eq!(b.peer_recv_all(slow), [parts(&["5"])], "room again once it read");
}

#[test]
fn pub_applies_cancellations_and_ignores_other_upstream_messages() {
    let mut b = publisher(Pub::new(), &["t"]);
    b.peer_send_bytes(0, &[&sub("u"), b"not a subscription: two frames"]);
    b.peer_send(0, &["plain data"]);
    b.send(&["u1"]).unwrap();
    assert_eq!(b.peer_recv_all(0), Vec::<Parts>::new(), "a multi-part message is never a subscription");
    b.peer_send_bytes(0, &[&unsub("t")]);
    b.send(&["t1"]).unwrap();
    assert_eq!(b.peer_recv_all(0), Vec::<Parts>::new(), "cancelled");
    assert_eq!(b.recv(), Err(Error::NotSup), "a PUB receives nothing");
    assert!(!b.has_in());
}

#[test]
fn pub_forgets_a_subscriber_that_left() {
    let mut b = publisher(Pub::new(), &["t", "t"]);
    assert_eq!(b.pattern.fanout(), Some((2, 1)), "two pipes, one prefix");
    b.drop_peer(0);
    b.pump();
    assert!(!b.attached(0));
    b.send(&["t1"]).unwrap();
    assert_eq!(b.peer_recv_all(1), [parts(&["t1"])]);
    assert_eq!(b.pattern.fanout(), Some((1, 1)));
}

#[test]
fn invert_matching_delivers_to_the_subscribers_that_do_not_match() {
    let mut b = Bench::new(Pub::new());
    assert_eq!(b.set_int(opt::INVERT_MATCHING, 1), None, "also kept by the shared options");
    let (a, z) = (b.attach(), b.attach());
    b.peer_send_bytes(a, &[&sub("a")]);
    b.peer_send_bytes(z, &[&sub("z")]);
    b.send(&["apple"]).unwrap();
    assert_eq!((b.peer_recv_all(a).len(), b.peer_recv_all(z)), (0, vec![parts(&["apple"])]));
}

#[test]
fn sub_keeps_what_its_subscriptions_match() {
    let mut b = Bench::new(Sub::new());
    b.set_bytes(opt::SUBSCRIBE, b"ab").unwrap().unwrap();
    let p = b.attach();
    assert_eq!(b.peer_recv_all(p), [one(sub("ab"))], "a new publisher is told the subscriptions");
    b.peer_send(p, &["xyz"]);
    assert!(!b.has_in(), "nothing that matches");
    b.peer_send(p, &["abc"]);
    b.peer_send(p, &["xyz", "ab"]);
    b.peer_send(p, &["ab", "tail"]);
    b.peer_send(p, &["a"]);
    assert!(b.has_in());
    assert_eq!(b.recv(), Ok(parts(&["abc"])));
    assert_eq!(b.recv(), Ok(parts(&["ab", "tail"])), "matched by its first frame, and whole");
    assert_eq!(b.recv(), Err(Error::Again));
    assert_eq!(b.send(&["x"]), Err(Error::NotSup));
    assert!(!b.has_out());
}

#[test]
fn sub_counts_subscriptions_and_cancels_upstream_on_the_last() {
    let mut b = Bench::new(Sub::new());
    let p = b.attach();
    b.set_bytes(opt::SUBSCRIBE, b"t").unwrap().unwrap();
    b.set_bytes(opt::SUBSCRIBE, b"t").unwrap().unwrap();
    assert_eq!(b.peer_recv_all(p), [one(sub("t")), one(sub("t"))], "every SUBSCRIBE goes up, as libzmq 4.3's");
    b.set_bytes(opt::UNSUBSCRIBE, b"t").unwrap().unwrap();
    assert_eq!(b.peer_recv_all(p), Vec::<Parts>::new(), "one reference left: nothing to cancel");
    b.peer_send(p, &["t1"]);
    assert_eq!(b.recv(), Ok(parts(&["t1"])), "still subscribed");
    b.set_bytes(opt::UNSUBSCRIBE, b"t").unwrap().unwrap();
    assert_eq!(b.peer_recv_all(p), [one(unsub("t"))]);
    b.peer_send(p, &["t2"]);
    assert_eq!(b.recv(), Err(Error::Again), "a message in flight after the cancel is filtered out");
    b.set_bytes(opt::UNSUBSCRIBE, b"never").unwrap().unwrap();
    assert_eq!(b.peer_recv_all(p), Vec::<Parts>::new(), "nothing to cancel for a prefix never subscribed");
    assert_eq!(b.pattern.fanout(), Some((0, 0)));
}

#[test]
fn sub_sends_its_subscriptions_again_after_a_reconnect() {
    let mut b = Bench::new(Sub::new());
    let p = b.attach();
    b.set_bytes(opt::SUBSCRIBE, b"a").unwrap().unwrap();
    b.set_bytes(opt::SUBSCRIBE, b"b").unwrap().unwrap();
    let _ = b.peer_recv_all(p);
    b.peer(p).hiccup(); // the session's peer is a new publisher now
    b.pump();
    let mut again = b.peer_recv_all(p);
    again.sort();
    assert_eq!(again, [one(sub("a")), one(sub("b"))]);
}

#[test]
fn xpub_passes_up_the_first_subscription_and_the_last_cancel() {
    let mut b = publisher(Pub::xpub(), &["t", "t"]);
    assert_eq!(b.recv(), Ok(one(sub("t"))));
    assert_eq!(b.recv(), Err(Error::Again), "the duplicate is not shown");
    b.peer_send_bytes(0, &[&unsub("t")]);
    assert!(!b.has_in(), "another subscriber still wants it");
    b.peer_send_bytes(1, &[&unsub("t")]);
    assert_eq!(b.recv(), Ok(one(unsub("t"))));
}

#[test]
fn xpub_verbose_shows_every_subscription_and_verboser_every_cancel() {
    let mut b = Bench::new(Pub::xpub());
    assert_eq!(b.set_int(opt::XPUB_VERBOSE, 1), Some(Ok(())));
    let (x, y) = (b.attach(), b.attach());
    b.peer_send_bytes(x, &[&sub("t")]);
    b.peer_send_bytes(y, &[&sub("t")]);
    assert_eq!((b.recv(), b.recv()), (Ok(one(sub("t"))), Ok(one(sub("t")))));
    b.peer_send_bytes(x, &[&unsub("t")]);
    assert!(!b.has_in(), "VERBOSE alone: only the last cancel");
    b.set_int(opt::XPUB_VERBOSER, 1).unwrap().unwrap();
    b.peer_send_bytes(x, &[&sub("t")]);
    b.peer_send_bytes(x, &[&unsub("t")]);
    assert_eq!((b.recv(), b.recv()), (Ok(one(sub("t"))), Ok(one(unsub("t")))), "VERBOSER: every cancel");
}

#[test]
fn xpub_cancels_what_only_a_departed_subscriber_wanted() {
    let mut b = publisher(Pub::xpub(), &["shared", "shared"]);
    b.peer_send_bytes(0, &[&sub("mine")]);
    let _ = (b.recv(), b.recv());
    b.drop_peer(0);
    b.pump();
    assert_eq!(b.recv(), Ok(one(unsub("mine"))));
    assert_eq!(b.recv(), Err(Error::Again), "the shared prefix still has a subscriber");
}

#[test]
fn xpub_welcomes_each_new_subscriber_first() {
    let mut b = Bench::new(Pub::xpub());
    assert_eq!(b.set_bytes(opt::XPUB_WELCOME_MSG, b"welcome"), Some(Ok(())));
    let p = b.attach();
    b.peer_send_bytes(p, &[&sub("")]);
    b.send(&["news"]).unwrap();
    assert_eq!(b.peer_recv_all(p), [parts(&["welcome"]), parts(&["news"])]);
    b.set_bytes(opt::XPUB_WELCOME_MSG, b"").unwrap().unwrap();
    let q = b.attach();
    assert_eq!(b.peer_recv_all(q), Vec::<Parts>::new(), "an empty welcome is none");
}

#[test]
fn xpub_manual_leaves_the_subscriptions_to_the_application() {
    let mut b = Bench::new(Pub::xpub());
    b.set_int(opt::XPUB_MANUAL, 1).unwrap().unwrap();
    let p = b.attach();
    b.peer_send_bytes(p, &[&sub("t")]);
    b.peer_send_bytes(p, &[&sub("t")]);
    assert_eq!((b.recv(), b.recv()), (Ok(one(sub("t"))), Ok(one(sub("t")))), "every request is shown");
    b.send(&["t1"]).unwrap();
    assert_eq!(b.peer_recv_all(p), Vec::<Parts>::new(), "not applied by the socket");
    b.set_bytes(opt::SUBSCRIBE, b"t").unwrap().unwrap(); // for the pipe of the last request read
    b.send(&["t2"]).unwrap();
    assert_eq!(b.peer_recv_all(p), [parts(&["t2"])]);
}

#[test]
fn xpub_nodrop_makes_a_send_wait_for_room() {
    let mut b = Bench::new(Pub::xpub());
    b.set_int(opt::XPUB_NODROP, 1).unwrap().unwrap();
    let p = b.attach_with([1, 0], Some(b""), None);
    b.peer_send_bytes(p, &[&sub("")]);
    b.send(&["1"]).unwrap();
    assert!(!b.has_out());
    assert_eq!(b.send(&["2"]), Err(Error::Again), "not dropped");
    assert_eq!(b.peer_recv(p), Some(parts(&["1"])));
    b.send(&["2"]).unwrap();
    assert_eq!(b.peer_recv(p), Some(parts(&["2"])));
    assert_eq!(b.pattern.drops().hwm, 0);
}

#[test]
fn xpub_passes_up_what_an_xsub_sends_that_is_no_subscription() {
    let mut b = publisher(Pub::xpub(), &[]);
    let p = b.attach();
    b.peer_send(p, &["hello", "upstream"]);
    assert_eq!(b.recv(), Ok(parts(&["hello", "upstream"])));
}

#[test]
fn xsub_subscribes_by_message_and_passes_everything_up() {
    let mut b = Bench::new(Sub::xsub());
    let (p, q) = (b.attach(), b.attach());
    assert!(b.has_out());
    b.send_bytes(&[&sub("t")]).unwrap();
    assert_eq!((b.peer_recv_all(p), b.peer_recv_all(q)), (vec![one(sub("t"))], vec![one(sub("t"))]), "to every publisher");
    b.send_bytes(&[&unsub("never")]).unwrap();
    assert_eq!(b.peer_recv_all(p), Vec::<Parts>::new(), "nothing to cancel: not forwarded");
    b.send(&["a", "command"]).unwrap();
    assert_eq!(b.peer_recv_all(q), [parts(&["a", "command"])], "other messages go upstream as they are");
    b.peer_send(p, &["unsubscribed topic"]);
    assert_eq!(b.recv(), Ok(parts(&["unsubscribed topic"])), "XSUB does not filter");
    let late = b.attach();
    assert_eq!(b.peer_recv_all(late), [one(sub("t"))], "a new publisher gets the subscriptions");
}
