//! PAIR at the pattern level (zmq_socket(3), RFC 31): one peer at a time, both directions; a
//! second peer is refused; a full pipe makes a send wait.

use super::Pair;
use crate::error::Error;
use crate::socket::harness::{parts, Bench};

#[test]
fn talks_to_its_one_peer_both_ways() {
    let mut pair = Bench::new(Pair::new());
    assert_eq!(pair.send(&["early"]), Err(Error::Again), "no peer yet: would block");
    assert_eq!(pair.recv(), Err(Error::Again));
    let p = pair.attach();
    pair.send(&["to", "peer"]).unwrap();
    assert_eq!(pair.peer_recv(p), Some(parts(&["to", "peer"])));
    pair.peer_send(p, &["back"]);
    assert!(pair.has_in());
    assert_eq!(pair.recv(), Ok(parts(&["back"])));
    assert!(!pair.has_in());
}

#[test]
fn refuses_a_second_peer_and_takes_a_new_one_after_the_first_left() {
    let mut pair = Bench::new(Pair::new());
    let first = pair.attach();
    let second = pair.attach();
    assert!(!pair.attached(second), "refused");
    assert!(pair.peer_sees_close(second), "its pipe closed at once");
    pair.send(&["x"]).unwrap();
    assert_eq!(pair.peer_recv(first), Some(parts(&["x"])), "the first peer keeps the socket");
    pair.drop_peer(first);
    pair.pump();
    assert!(!pair.attached(first));
    let third = pair.attach();
    assert!(pair.attached(third));
    pair.send(&["y"]).unwrap();
    assert_eq!(pair.peer_recv(third), Some(parts(&["y"])));
}

#[test]
fn a_full_pipe_makes_a_send_wait_not_drop() {
    let mut pair = Bench::new(Pair::new());
    let p = pair.attach_with([2, 0], Some(b""), None);
    pair.send(&["1"]).unwrap();
    pair.send(&["2", "two"]).unwrap();
    assert!(!pair.has_out());
    assert_eq!(pair.send(&["3"]), Err(Error::Again));
    assert_eq!(pair.peer_recv(p), Some(parts(&["1"])));
    assert!(pair.has_out());
    pair.send(&["3"]).unwrap();
    assert_eq!(pair.peer_recv_all(p), [parts(&["2", "two"]), parts(&["3"])]);
}
