//! DEALER at the pattern level (zmq_socket(3)): round robin over the peers that have room,
//! a multi-part message on one pipe, fair queuing in, and no envelope either way.

use super::Dealer;
use crate::error::Error;
use crate::socket::harness::{parts, Bench};
use crate::socket::Pattern;

#[test]
fn sends_round_robin_whole_messages_and_adds_no_envelope() {
    let mut d = Bench::new(Dealer::new());
    let peers = [d.attach(), d.attach(), d.attach()];
    for i in 0..6 {
        d.send(&[&format!("m{i}"), "tail"]).unwrap();
    }
    for (k, &p) in peers.iter().enumerate() {
        let want = [k, k + 3].map(|i| parts(&[&format!("m{i}"), "tail"]));
        assert_eq!(d.peer_recv_all(p), want, "peer {k}: every third message, whole");
    }
}

#[test]
fn receives_fair_queued_with_multi_part_messages_whole() {
    let mut d = Bench::new(Dealer::new());
    let (a, b) = (d.attach(), d.attach());
    for i in 0..3 {
        d.peer_send(a, &[&format!("a{i}"), "x"]);
        d.peer_send(b, &[&format!("b{i}")]);
    }
    let mut got = Vec::new();
    while let Ok(m) = d.recv() {
        got.push(m);
    }
    let want: Vec<_> = (0..3).flat_map(|i| [parts(&[&format!("a{i}"), "x"]), parts(&[&format!("b{i}")])]).collect();
    assert_eq!(got, want, "one message from each peer in turn");
}

#[test]
fn a_peer_at_its_hwm_is_skipped_until_it_reads() {
    let mut d = Bench::new(Dealer::new());
    let slow = d.attach_with([1, 0], Some(b""), None);
    let fast = d.attach();
    for i in 0..5 {
        d.send(&[&format!("m{i}")]).unwrap();
    }
    assert_eq!(d.peer_recv_all(fast), ["m1", "m2", "m3", "m4"].map(|m| parts(&[m])), "the full peer was passed over");
    assert_eq!(d.pattern.drops().hwm_reached, 1, "the full pipe was counted once, then set aside");
    assert_eq!(d.peer_recv_all(slow), [parts(&["m0"])]);
    // Its read makes room: the write activation puts it back in the rotation.
    for i in 5..9 {
        d.send(&[&format!("m{i}")]).unwrap();
        let _ = d.peer_recv_all(slow); // keeps reading: never full again
    }
    assert_eq!(d.peer_recv_all(fast).len(), 2, "shared again, half each");
}

#[test]
fn with_every_peer_full_a_send_would_block() {
    let mut d = Bench::new(Dealer::new());
    let p = d.attach_with([2, 0], Some(b""), None);
    d.send(&["1"]).unwrap();
    d.send(&["2"]).unwrap();
    assert!(!d.has_out());
    assert_eq!(d.send(&["3"]), Err(Error::Again), "never dropped: the caller waits");
    assert_eq!(d.peer_recv(p), Some(parts(&["1"])));
    assert!(d.has_out(), "room again after the peer read");
    d.send(&["3"]).unwrap();
    assert_eq!(d.peer_recv_all(p), [parts(&["2"]), parts(&["3"])]);
}

#[test]
fn without_peers_nothing_goes_or_comes() {
    let mut d = Bench::new(Dealer::new());
    assert_eq!(d.send(&["x"]), Err(Error::Again));
    assert_eq!(d.recv(), Err(Error::Again));
    assert!(!d.has_in() && !d.has_out());
}

#[test]
fn a_peer_lost_mid_message_takes_the_rest_of_it_along() {
    let mut d = Bench::new(Dealer::new());
    let (a, b) = (d.attach(), d.attach());
    d.send_frame(b"head", true).unwrap(); // to `a`, the first in the rotation
    d.drop_peer(a);
    d.pump();
    assert!(!d.attached(a));
    assert_eq!(d.send_frame(b"tail", false), Ok(()), "the rest is dropped, not sent elsewhere");
    d.send(&["whole"]).unwrap();
    assert_eq!(d.peer_recv_all(b), [parts(&["whole"])], "no half message reached the other peer");
}

#[test]
fn stop_sending_takes_a_peer_out_of_the_rotation_and_back() {
    let mut d = Bench::new(Dealer::new());
    let (a, b) = (d.attach(), d.attach());
    let slot = d.slot(a);
    assert!(d.pattern.stop_sending(&mut d.pipes, slot, true));
    for i in 0..3 {
        d.send(&[&format!("m{i}")]).unwrap();
    }
    assert_eq!((d.peer_recv_all(a).len(), d.peer_recv_all(b).len()), (0, 3));
    d.peer_send(a, &["still heard"]);
    assert_eq!(d.recv(), Ok(parts(&["still heard"])), "a peer that gets nothing new may still speak");
    d.pattern.stop_sending(&mut d.pipes, slot, false);
    for i in 0..4 {
        d.send(&[&format!("n{i}")]).unwrap();
    }
    assert_eq!((d.peer_recv_all(a).len(), d.peer_recv_all(b).len()), (2, 2));
}
