//! REQ and REP at the pattern level (zmq_socket(3)): REQ's strict send/receive alternation,
//! its envelope and its choice of reply, REQ_RELAXED and REQ_CORRELATE; REP's fair queue and
//! its echo of each request's envelope to the requester.

use super::{Rep, Req};
use crate::error::Error;
use crate::opt;
use crate::socket::harness::{parts, Bench};

#[test]
fn req_alternates_send_and_receive_or_says_efsm() {
    let mut req = Bench::new(Req::new());
    let p = req.attach();
    assert_eq!(req.recv(), Err(Error::Fsm), "a receive before any request");
    req.send(&["hello"]).unwrap();
    assert_eq!(req.peer_recv(p), Some(parts(&["", "hello"])), "the request behind an empty delimiter");
    assert_eq!(req.send(&["again"]), Err(Error::Fsm), "a second request before the reply");
    assert!(!req.has_out(), "no POLLOUT while the reply is due");
    assert!(!req.has_in(), "and no POLLIN before it comes");
    req.peer_send(p, &["", "world"]);
    assert!(req.has_in());
    assert_eq!(req.recv(), Ok(parts(&["world"])), "the reply without its delimiter");
    assert_eq!(req.recv(), Err(Error::Fsm), "one reply per request");
    assert!(req.has_out());
    req.send(&["next", "part"]).unwrap();
    assert_eq!(req.peer_recv(p), Some(parts(&["", "next", "part"])), "a multi-part request");
    assert_eq!(req.peer_recv(p), None, "the refused send left nothing behind");
}

#[test]
fn req_spreads_requests_over_its_peers_in_turn() {
    let mut req = Bench::new(Req::new());
    let peers: Vec<usize> = (0..3).map(|_| req.attach()).collect();
    let mut order = Vec::new();
    for i in 0..6 {
        req.send(&[&format!("r{i}")]).unwrap();
        let p = *peers.iter().find(|&&p| req.peer_recv(p).is_some()).expect("one peer got it");
        order.push(p);
        req.peer_send(p, &["", "ok"]);
        assert_eq!(req.recv(), Ok(parts(&["ok"])));
    }
    assert_eq!(&order[..3], &order[3..], "round robin: the same cycle twice");
    let mut first = order[..3].to_vec();
    first.sort_unstable();
    assert_eq!(first, peers, "each peer once per cycle");
}

#[test]
fn req_takes_the_reply_only_from_the_peer_it_asked() {
    let mut req = Bench::new(Req::new());
    let (a, b) = (req.attach(), req.attach());
    req.send(&["q"]).unwrap();
    let (asked, other) = if req.peer_recv(a).is_some() { (a, b) } else { (b, a) };
    req.peer_send(other, &["", "not yours"]);
    assert_eq!(req.recv(), Err(Error::Again), "another peer's message is dropped, not taken");
    req.peer_send(asked, &["", "yours"]);
    assert_eq!(req.recv(), Ok(parts(&["yours"])));
}

#[test]
fn req_drops_a_reply_without_its_delimiter() {
    let mut req = Bench::new(Req::new());
    let p = req.attach();
    req.send(&["q"]).unwrap();
    req.peer_send(p, &["no delimiter"]);
    req.peer_send(p, &["x", "still none"]);
    req.peer_send(p, &["", "good"]);
    assert_eq!(req.recv(), Ok(parts(&["good"])), "malformed replies are dropped whole");
}

#[test]
fn req_relaxed_sends_again_and_drops_the_stale_reply() {
    let mut req = Bench::new(Req::new());
    assert_eq!(req.set_int(opt::REQ_RELAXED, 1), Some(Ok(())));
    assert_eq!(req.get_int(opt::REQ_RELAXED), Some(1));
    let (a, b) = (req.attach(), req.attach());
    req.send(&["first"]).unwrap();
    assert!(req.has_out(), "relaxed: POLLOUT while a reply is due");
    req.send(&["second"]).unwrap();
    let (p1, p2) = if req.peer_recv(a).is_some() { (a, b) } else { (b, a) };
    assert_eq!(req.peer_recv(p2), Some(parts(&["", "second"])), "the second request went to the next peer");
    req.peer_send(p1, &["", "late"]);
    req.peer_send(p2, &["", "current"]);
    assert_eq!(req.recv(), Ok(parts(&["current"])), "the reply to the abandoned request is dropped");
}

#[test]
fn req_correlate_tags_each_request_and_accepts_only_the_current_id() {
    let mut req = Bench::new(Req::new());
    req.set_int(opt::REQ_RELAXED, 1).unwrap().unwrap();
    req.set_int(opt::REQ_CORRELATE, 1).unwrap().unwrap();
    let p = req.attach();
    req.send(&["one"]).unwrap();
    req.send(&["two"]).unwrap();
    let r1 = req.peer_recv(p).unwrap();
    let r2 = req.peer_recv(p).unwrap();
    assert_eq!((r1.len(), r2.len()), (3, 3), "[request id, delimiter, body]: {r1:?}");
    assert_eq!((&r1[1..], &r2[1..]), (&parts(&["", "one"])[..], &parts(&["", "two"])[..]));
    let id = |r: &[Vec<u8>]| u32::from_ne_bytes(r[0][..].try_into().expect("4 bytes"));
    assert_eq!(id(&r2), id(&r1).wrapping_add(1), "ids count up");
    // The reply to the first request comes on the same pipe, so only the id tells them apart.
    req.peer_send_bytes(p, &[&r1[0], b"", b"stale"]);
    req.peer_send_bytes(p, &[b"", b"no id"]);
    req.peer_send_bytes(p, &[&r2[0], b"", b"fresh"]);
    assert_eq!(req.recv(), Ok(parts(&["fresh"])));
}

#[test]
fn req_options_take_libzmqs_values() {
    let mut req = Bench::new(Req::new());
    assert_eq!(req.set_int(opt::REQ_CORRELATE, -1), Some(Err(Error::Invalid)));
    assert_eq!(req.set_int(opt::REQ_CORRELATE, 7), Some(Ok(())), "any value >= 0 is a boolean");
    assert_eq!(req.get_int(opt::REQ_CORRELATE), Some(1));
    assert_eq!(req.set_int(opt::ROUTER_MANDATORY, 1), None, "not a REQ option");
}

#[test]
fn req_without_peers_would_block() {
    let mut req = Bench::new(Req::new());
    assert_eq!(req.send(&["q"]), Err(Error::Again));
    assert!(!req.has_out());
    let p = req.attach();
    req.send(&["q"]).unwrap();
    assert_eq!(req.peer_recv(p), Some(parts(&["", "q"])), "the refused request was not half-sent");
}

#[test]
fn rep_echoes_the_envelope_to_the_requester() {
    let mut rep = Bench::new(Rep::new());
    let p = rep.attach();
    assert_eq!(rep.send(&["early"]), Err(Error::Fsm), "a reply before a request");
    rep.peer_send(p, &["hop2", "hop1", "", "request"]);
    assert_eq!(rep.recv(), Ok(parts(&["request"])), "the envelope is not the application's");
    assert_eq!(rep.recv(), Err(Error::Fsm), "a receive before the reply");
    assert!(rep.has_out() && !rep.has_in());
    rep.send(&["re", "ply"]).unwrap();
    assert_eq!(rep.peer_recv(p), Some(parts(&["hop2", "hop1", "", "re", "ply"])));
    assert_eq!(rep.send(&["twice"]), Err(Error::Fsm), "one reply per request");
}

#[test]
fn rep_fair_queues_requesters_and_answers_each() {
    let mut rep = Bench::new(Rep::new());
    let (a, b) = (rep.attach(), rep.attach());
    for i in 0..3 {
        rep.peer_send(a, &["", &format!("a{i}")]);
        rep.peer_send(b, &["", &format!("b{i}")]);
    }
    let mut seen = Vec::new();
    for _ in 0..6 {
        let req = rep.recv().unwrap();
        let body = String::from_utf8(req[0].clone()).unwrap();
        rep.send(&[&format!("re:{body}")]).unwrap();
        seen.push(body);
    }
    assert_eq!(seen, ["a0", "b0", "a1", "b1", "a2", "b2"], "in turn, not one peer's backlog first");
    let got = |rep: &mut Bench<Rep>, p| {
        rep.peer_recv_all(p).into_iter().map(|m| String::from_utf8(m[1].clone()).unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(got(&mut rep, a), ["re:a0", "re:a1", "re:a2"]);
    assert_eq!(got(&mut rep, b), ["re:b0", "re:b1", "re:b2"]);
}

#[test]
fn rep_drops_a_request_without_a_delimiter() {
    let mut rep = Bench::new(Rep::new());
    let p = rep.attach();
    rep.peer_send(p, &["no delimiter"]);
    rep.peer_send(p, &["id", "still none"]);
    rep.peer_send(p, &["", "good"]);
    assert_eq!(rep.recv(), Ok(parts(&["good"])));
    rep.send(&["ok"]).unwrap();
    assert_eq!(rep.peer_recv(p), Some(parts(&["", "ok"])), "with the good request's envelope only");
}

#[test]
fn rep_drops_the_reply_to_a_requester_that_left() {
    let mut rep = Bench::new(Rep::new());
    let (a, b) = (rep.attach(), rep.attach());
    rep.peer_send(a, &["", "from a"]);
    rep.drop_peer(a);
    assert_eq!(rep.recv(), Ok(parts(&["from a"])), "what it sent before leaving is delivered");
    assert_eq!(rep.send(&["lost"]), Ok(()), "the reply is dropped, never an error");
    rep.peer_send(b, &["", "from b"]);
    assert_eq!(rep.recv(), Ok(parts(&["from b"])), "and REP takes the next request");
    rep.send(&["to b"]).unwrap();
    assert_eq!(rep.peer_recv_all(b), [parts(&["", "to b"])]);
}
