//! CLIENT, SCATTER, GATHER and CHANNEL at the pattern level (zmq_socket(3)'s draft types):
//! the classic pattern they wrap, restricted to single-part messages (MORE on send is EINVAL,
//! a multi-part message from a peer is dropped whole and counted).

use super::SinglePart;
use crate::error::Error;
use crate::socket::dealer::Dealer;
use crate::socket::harness::{parts, Bench};
use crate::socket::pair::Pair;
use crate::socket::pipeline::{Pull, Push};
use crate::socket::Pattern;

#[test]
fn client_load_balances_single_part_messages() {
    let mut b = Bench::new(SinglePart::new(Dealer::new()));
    let (p, q) = (b.attach(), b.attach());
    assert_eq!(b.send(&["two", "parts"]), Err(Error::Invalid));
    for i in 0..4 {
        b.send(&[&i.to_string()]).unwrap();
    }
    assert_eq!(b.peer_recv_all(p), [parts(&["0"]), parts(&["2"])], "the refused frame sent nothing");
    assert_eq!(b.peer_recv_all(q), [parts(&["1"]), parts(&["3"])]);
}

#[test]
fn client_drops_multi_part_messages_whole_and_counts_them() {
    let mut b = Bench::new(SinglePart::new(Dealer::new()));
    let p = b.attach();
    b.peer_send(p, &["a", "b", "c"]);
    b.peer_send(p, &["ok"]);
    b.peer_send(p, &["x", "y"]);
    assert!(b.has_in(), "the well-formed message is found behind the bad one");
    assert_eq!(b.recv(), Ok(parts(&["ok"])));
    assert!(!b.has_in());
    assert_eq!(b.recv(), Err(Error::Again));
    assert_eq!(b.pattern.drops().malformed, 2);
}

#[test]
fn scatter_deals_and_gather_fair_queues() {
    let mut s = Bench::new(SinglePart::new(Push::new()));
    let (p, q) = (s.attach(), s.attach());
    for i in 0..4 {
        s.send(&[&i.to_string()]).unwrap();
    }
    assert_eq!((s.peer_recv_all(p).len(), s.peer_recv_all(q).len()), (2, 2));
    assert_eq!(s.recv(), Err(Error::NotSup));

    let mut g = Bench::new(SinglePart::new(Pull::new()));
    let (a, b) = (g.attach(), g.attach());
    g.peer_send(a, &["a0"]);
    g.peer_send(a, &["a1"]);
    g.peer_send(b, &["b0", "multi"]);
    g.peer_send(b, &["b1"]);
    let got: Vec<_> = std::iter::from_fn(|| g.recv().ok()).collect();
    assert_eq!(got, [parts(&["a0"]), parts(&["a1"]), parts(&["b1"])], "b's first turn went to its bad message");
    assert_eq!(g.pattern.drops().malformed, 1);
    assert_eq!(g.send(&["x"]), Err(Error::NotSup));
}

#[test]
fn channel_keeps_one_peer() {
    let mut b = Bench::new(SinglePart::new(Pair::new()));
    let p = b.attach();
    let refused = b.attach();
    assert!(!b.attached(refused));
    b.send(&["hi"]).unwrap();
    assert_eq!(b.peer_recv(p), Some(parts(&["hi"])));
    assert_eq!(b.send(&["a", "b"]), Err(Error::Invalid));
}
