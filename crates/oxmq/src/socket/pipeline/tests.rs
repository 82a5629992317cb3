//! PUSH and PULL at the pattern level (zmq_socket(3)): PUSH deals messages round robin and
//! skips a peer at its high-water mark, never dropping (it blocks when all are full); PULL
//! fair-queues from its pushers. Neither goes the other way.

use super::{Pull, Push};
use crate::error::Error;
use crate::socket::harness::{parts, Bench};
use crate::socket::Pattern;

#[test]
fn push_deals_round_robin() {
    let mut push = Bench::new(Push::new());
    let peers = [push.attach(), push.attach(), push.attach()];
    for i in 0..9 {
        push.send(&[&format!("{i}")]).unwrap();
    }
    for (k, &p) in peers.iter().enumerate() {
        let want: Vec<_> = (0..3).map(|j| parts(&[&format!("{}", k + 3 * j)])).collect();
        assert_eq!(push.peer_recv_all(p), want, "puller {k}");
    }
}

#[test]
fn push_skips_a_blocked_puller_and_counts_it() {
    let mut push = Bench::new(Push::new());
    let blocked = push.attach_with([1, 0], Some(b""), None);
    let (b, c) = (push.attach(), push.attach());
    for i in 0..7 {
        push.send(&[&format!("{i}")]).unwrap();
    }
    assert_eq!(push.peer_recv_all(blocked), [parts(&["0"])], "one message fills it");
    let (nb, nc) = (push.peer_recv_all(b).len(), push.peer_recv_all(c).len());
    assert_eq!(nb + nc, 6, "nothing lost");
    assert!(nb.abs_diff(nc) <= 1, "the others share the rest: {nb}/{nc}");
    assert_eq!(push.pattern.drops().hwm_reached, 1);
}

#[test]
fn push_blocks_when_every_puller_is_full_and_resumes_on_room() {
    let mut push = Bench::new(Push::new());
    let p = push.attach_with([3, 0], Some(b""), None);
    for i in 0..3 {
        push.send(&[&format!("{i}")]).unwrap();
    }
    assert_eq!(push.send(&["3"]), Err(Error::Again), "never a drop");
    assert!(!push.has_out());
    assert_eq!(push.peer_recv(p), Some(parts(&["0"])));
    assert!(push.has_out());
    push.send(&["3"]).unwrap();
    assert_eq!(push.peer_recv_all(p).len(), 3);
}

#[test]
fn push_receives_nothing_and_discards_what_a_peer_sends() {
    let mut push = Bench::new(Push::new());
    let p = push.attach();
    assert_eq!(push.recv(), Err(Error::NotSup));
    push.peer_send(p, &["unwanted"]);
    assert!(!push.has_in());
    // The peer goes: its leftover is drained, so the close is seen and the pipe let go.
    push.drop_peer(p);
    push.pump();
    assert!(!push.attached(p));
    assert_eq!(push.send(&["x"]), Err(Error::Again), "no puller left");
}

#[test]
fn pull_fair_queues_pushers() {
    let mut pull = Bench::new(Pull::new());
    let (a, b, c) = (pull.attach(), pull.attach(), pull.attach());
    for i in 0..4 {
        pull.peer_send(a, &[&format!("a{i}")]);
    }
    pull.peer_send(b, &["b0", "more"]);
    pull.peer_send(c, &["c0"]);
    let mut got = Vec::new();
    while let Ok(m) = pull.recv() {
        got.push(m);
    }
    assert_eq!(
        got,
        [parts(&["a0"]), parts(&["b0", "more"]), parts(&["c0"]), parts(&["a1"]), parts(&["a2"]), parts(&["a3"])],
        "the busy pusher does not starve the others"
    );
    assert_eq!(pull.send(&["x"]), Err(Error::NotSup));
    assert!(!pull.has_out());
}

#[test]
fn pull_takes_what_a_pusher_sent_before_it_left() {
    let mut pull = Bench::new(Pull::new());
    let p = pull.attach();
    pull.peer_send(p, &["last words"]);
    pull.drop_peer(p);
    assert!(pull.has_in());
    assert_eq!(pull.recv(), Ok(parts(&["last words"])));
    assert_eq!(pull.recv(), Err(Error::Again));
    assert!(!pull.attached(p), "then the pipe goes");
}
