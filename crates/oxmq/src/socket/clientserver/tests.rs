//! SERVER and PEER at the pattern level (RFC 41, zmq_socket(3)'s draft types): each pipe gets
//! a routing id (never 0) the socket assigns; received messages carry it, sent ones are routed
//! by it (EHOSTUNREACH for 0 or an unknown peer, EAGAIN for a full one); single-part only.

use super::Server;
use crate::error::Error;
use crate::msg::Msg;
use crate::socket::harness::{parts, Bench};
use crate::socket::Pattern;

fn to(id: u32, body: &str) -> Msg {
    let mut m = Msg::from(body);
    m.set_routing_id(id).unwrap();
    m
}

/// The routing id SERVER gives peer `p`'s messages (sends one and reads it).
fn id_of(b: &mut Bench<Server>, p: usize) -> u32 {
    b.peer_send(p, &["hello"]);
    let m = b.recv_frame().unwrap();
    assert_eq!(m, "hello");
    m.routing_id()
}

#[test]
fn server_names_each_peer_and_routes_replies_by_that_name() {
    let mut b = Bench::new(Server::new(false));
    let (x, y) = (b.attach(), b.attach());
    let (ix, iy) = (id_of(&mut b, x), id_of(&mut b, y));
    assert!(ix != 0 && iy != 0 && ix != iy, "distinct ids, never 0: {ix} {iy}");
    b.send_msg(&mut to(iy, "to y")).unwrap();
    b.send_msg(&mut to(ix, "to x")).unwrap();
    let got = b.peer_recv_msgs(y).unwrap();
    assert_eq!(got, [Msg::from("to y")]);
    assert_eq!(got[0].routing_id(), 0, "the id is not the peer's to see");
    assert_eq!(b.peer_recv_all(x), [parts(&["to x"])]);
    assert_eq!(b.pattern.last_peer_id(), 0, "SERVER: no connect_peer");
}

#[test]
fn server_refuses_what_it_cannot_route() {
    let mut b = Bench::new(Server::new(false));
    let p = b.attach();
    let id = id_of(&mut b, p);
    assert_eq!(b.send(&["no id"]), Err(Error::HostUnreach), "id 0");
    assert_eq!(b.send_msg(&mut to(id.wrapping_add(1), "x")), Err(Error::HostUnreach), "unknown id");
    let mut m = to(id, "part");
    m.set_more(true);
    assert_eq!(b.send_msg(&mut m), Err(Error::Invalid), "single-part only");
    assert_eq!(b.peer_recv_all(p).len(), 0);
    assert!(b.has_out(), "a send may go to any peer");
}

#[test]
fn a_departed_peers_id_stops_routing() {
    let mut b = Bench::new(Server::new(false));
    let p = b.attach();
    let id = id_of(&mut b, p);
    b.send_msg(&mut to(id, "1")).unwrap(); // now the cached destination
    b.drop_peer(p);
    b.pump();
    assert!(!b.attached(p));
    assert_eq!(b.send_msg(&mut to(id, "2")), Err(Error::HostUnreach));
    let q = b.attach();
    assert_ne!(id_of(&mut b, q), id, "a new peer gets a new id");
}

#[test]
fn a_full_peer_makes_a_send_wait() {
    let mut b = Bench::new(Server::new(false));
    let p = b.attach_with([1, 0], Some(b""), None);
    let id = id_of(&mut b, p);
    b.send_msg(&mut to(id, "1")).unwrap();
    let mut m = to(id, "2");
    assert_eq!(b.send_msg(&mut m), Err(Error::Again));
    assert_eq!((m.routing_id(), &m[..]), (id, &b"2"[..]), "handed back untouched");
    assert_eq!(b.peer_recv(p), Some(parts(&["1"])));
    b.send_msg(&mut m).unwrap();
    assert_eq!(b.peer_recv(p), Some(parts(&["2"])));
}

#[test]
fn a_destination_given_beside_the_message_routes_it() {
    // `Socket::send_msg_to` sets `Pipes::route_to` for the send instead of the message's id.
    let mut b = Bench::new(Server::new(false));
    let p = b.attach();
    let id = id_of(&mut b, p);
    b.pipes.route_to = id;
    let r = b.send(&["routed aside"]);
    b.pipes.route_to = 0;
    r.unwrap();
    assert_eq!(b.peer_recv(p), Some(parts(&["routed aside"])));
}

#[test]
fn multi_part_messages_from_a_peer_are_dropped_and_counted() {
    let mut b = Bench::new(Server::new(false));
    let (p, q) = (b.attach(), b.attach());
    b.peer_send(p, &["multi", "part"]);
    assert!(!b.has_in(), "nothing well-formed to receive");
    b.peer_send(q, &["single"]);
    b.peer_send(p, &["also single"]);
    let mut got: Vec<_> = std::iter::from_fn(|| b.recv().ok()).collect();
    got.sort();
    assert_eq!(got, [parts(&["also single"]), parts(&["single"])]);
    assert_eq!(b.pattern.drops().malformed, 1);
}

#[test]
fn peer_reports_the_id_of_the_pipe_attached_last() {
    let mut b = Bench::new(Server::new(true));
    let p = b.attach();
    let first = b.pattern.last_peer_id();
    assert_ne!(first, 0);
    b.attach();
    let second = b.pattern.last_peer_id();
    assert_ne!(second, first);
    b.send_msg(&mut to(first, "to the first")).unwrap();
    assert_eq!(b.peer_recv(p), Some(parts(&["to the first"])), "addressable before it spoke");
}
