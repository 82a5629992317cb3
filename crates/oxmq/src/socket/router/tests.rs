//! ROUTER at the pattern level (zmq_socket(3)): each message received behind its peer's
//! routing id, each message sent routed by its first frame; unroutable messages dropped and
//! counted, or EHOSTUNREACH under ROUTER_MANDATORY (EAGAIN for a full peer); duplicate ids,
//! ROUTER_HANDOVER, ROUTER_NOTIFY. Last, one test through a real socket over inproc.

use super::Router;
use crate::error::Error;
use crate::opt;
use crate::socket::harness::{parts, Bench};
use crate::socket::Pattern;

fn router() -> Bench<Router> {
    Bench::new(Router::new())
}

#[test]
fn receives_each_message_behind_its_senders_routing_id() {
    let mut r = router();
    let (a, b) = (r.attach_with([0, 0], Some(b"A"), None), r.attach_with([0, 0], Some(b"B"), None));
    r.peer_send(a, &["one", "two"]);
    r.peer_send(b, &["three"]);
    assert_eq!(r.recv(), Ok(parts(&["A", "one", "two"])));
    assert_eq!(r.recv(), Ok(parts(&["B", "three"])));
    assert_eq!(r.recv(), Err(Error::Again));
}

#[test]
fn routes_by_the_first_frame_to_that_peer_only() {
    let mut r = router();
    let peers = ["A", "B", "C"].map(|id| r.attach_with([0, 0], Some(id.as_bytes()), None));
    r.send(&["B", "x", "y"]).unwrap();
    r.send(&["C", "z"]).unwrap();
    r.send(&["B", "w"]).unwrap();
    assert_eq!(r.peer_recv_all(peers[0]), Vec::<Vec<Vec<u8>>>::new());
    assert_eq!(r.peer_recv_all(peers[1]), [parts(&["x", "y"]), parts(&["w"])], "without the routing frame");
    assert_eq!(r.peer_recv_all(peers[2]), [parts(&["z"])]);
}

#[test]
fn anonymous_peers_get_distinct_generated_ids_that_route_back() {
    let mut r = router();
    let (a, b) = (r.attach(), r.attach());
    r.peer_send(a, &["from a"]);
    r.peer_send(b, &["from b"]);
    let ma = r.recv().unwrap();
    let mb = r.recv().unwrap();
    for m in [&ma, &mb] {
        assert_eq!((m[0].len(), m[0][0]), (5, 0), "a zero byte and a 32-bit counter, as libzmq: {m:?}");
    }
    assert_ne!(ma[0], mb[0]);
    r.send_bytes(&[&mb[0], b"reply"]).unwrap();
    assert_eq!((r.peer_recv(a), r.peer_recv(b)), (None, Some(parts(&["reply"]))));
}

#[test]
fn a_peer_identified_late_is_routed_once_its_id_arrives() {
    let mut r = router();
    let p = r.attach_with([0, 0], None, None);
    r.send(&["L", "lost"]).unwrap(); // not known yet: dropped
    r.announce(p, b"L");
    r.peer_send(p, &["hi"]);
    assert_eq!(r.recv(), Ok(parts(&["L", "hi"])));
    r.send(&["L", "found"]).unwrap();
    assert_eq!(r.peer_recv_all(p), [parts(&["found"])]);
    assert_eq!(r.pattern.drops().no_route, 1);
}

#[test]
fn unroutable_messages_are_dropped_and_counted() {
    let mut r = router();
    let p = r.attach_with([0, 0], Some(b"A"), None);
    assert_eq!(r.send(&["nobody", "x", "y"]), Ok(()), "silently, by default");
    r.send(&["A", "z"]).unwrap();
    assert_eq!(r.peer_recv_all(p), [parts(&["z"])], "the dropped message's frames went nowhere");
    let d = r.pattern.drops();
    assert_eq!((d.no_route, d.hwm), (1, 0));
}

#[test]
fn router_mandatory_says_ehostunreach_and_eagain() {
    let mut r = router();
    assert_eq!(r.set_int(opt::ROUTER_MANDATORY, 1), Some(Ok(())));
    assert_eq!(r.get_int(opt::ROUTER_MANDATORY), Some(1));
    let p = r.attach_with([1, 0], Some(b"A"), None);
    assert_eq!(r.send(&["nobody", "x"]), Err(Error::HostUnreach));
    r.send(&["A", "1"]).unwrap();
    let mut id = crate::msg::Msg::from("A");
    id.set_more(true);
    assert_eq!(r.send_msg(&mut id), Err(Error::Again), "a full peer: would block");
    assert_eq!(id, "A", "the refused frame is handed back");
    assert_eq!(r.pattern.peer_state(&mut r.pipes, b"A"), Ok(0), "no POLLOUT for it");
    assert_eq!(r.pattern.peer_state(&mut r.pipes, b"B"), Err(Error::HostUnreach));
    assert_eq!(r.peer_recv(p), Some(parts(&["1"])));
    assert_eq!(r.pattern.peer_state(&mut r.pipes, b"A"), Ok(opt::POLLOUT));
    r.send(&["A", "2"]).unwrap();
    assert_eq!(r.peer_recv(p), Some(parts(&["2"])));
    let d = r.pattern.drops();
    assert_eq!((d.hwm_reached, d.hwm, d.no_route), (1, 0, 0), "nothing dropped under MANDATORY");
}

#[test]
fn a_full_peer_loses_the_message_without_mandatory() {
    let mut r = router();
    let p = r.attach_with([1, 0], Some(b"A"), None);
    r.send(&["A", "1"]).unwrap();
    assert_eq!(r.send(&["A", "2", "more"]), Ok(()));
    assert_eq!(r.peer_recv_all(p), [parts(&["1"])]);
    assert_eq!(r.pattern.drops().hwm, 1);
}

#[test]
fn a_lone_routing_frame_is_ignored() {
    let mut r = router();
    let p = r.attach_with([0, 0], Some(b"A"), None);
    assert_eq!(r.send(&["A"]), Ok(()));
    r.send(&["A", "real"]).unwrap();
    assert_eq!(r.peer_recv_all(p), [parts(&["real"])], "the lone frame did not start a message");
}

#[test]
fn a_duplicate_routing_id_is_refused_and_the_first_peer_kept() {
    let mut r = router();
    let first = r.attach_with([0, 0], Some(b"X"), None);
    let second = r.attach_with([0, 0], Some(b"X"), None);
    assert!(r.attached(first) && !r.attached(second));
    assert!(r.peer_sees_close(second));
    r.send(&["X", "m"]).unwrap();
    assert_eq!(r.peer_recv(first), Some(parts(&["m"])));
}

#[test]
fn router_handover_gives_the_id_to_the_newcomer() {
    let mut r = router();
    assert_eq!(r.set_int(opt::ROUTER_HANDOVER, 1), Some(Ok(())));
    let old = r.attach_with([0, 0], Some(b"X"), None);
    let new = r.attach_with([0, 0], Some(b"X"), None);
    assert!(!r.attached(old) && r.attached(new));
    assert!(r.peer_sees_close(old), "the old connection is closed");
    r.send(&["X", "m"]).unwrap();
    assert_eq!(r.peer_recv(new), Some(parts(&["m"])));
}

#[test]
fn router_notify_reports_arrivals_and_departures() {
    let mut r = router();
    assert_eq!(r.set_int(opt::ROUTER_NOTIFY, 4), Some(Err(Error::Invalid)));
    r.set_int(opt::ROUTER_NOTIFY, opt::NOTIFY_CONNECT | opt::NOTIFY_DISCONNECT).unwrap().unwrap();
    let p = r.attach_with([0, 0], Some(b"P"), None);
    assert!(r.has_in());
    assert_eq!(r.recv(), Ok(parts(&["P", ""])), "connect: [id, empty frame]");
    r.peer_send(p, &["bye"]);
    r.drop_peer(p);
    assert_eq!(r.recv(), Ok(parts(&["P", "bye"])));
    assert_eq!(r.recv(), Ok(parts(&["P", ""])), "then the disconnect notice");
    assert_eq!(r.recv(), Err(Error::Again));
}

#[test]
fn receives_fair_queued() {
    let mut r = router();
    let (a, b) = (r.attach_with([0, 0], Some(b"A"), None), r.attach_with([0, 0], Some(b"B"), None));
    for i in 0..3 {
        r.peer_send(a, &[&i.to_string()]);
    }
    r.peer_send(b, &["b"]);
    let ids: Vec<_> = std::iter::from_fn(|| r.recv().ok()).map(|m| m[0].clone()).collect();
    assert_eq!(ids, [b"A", b"B", b"A", b"A"].map(|i| i.to_vec()));
}

mod over_inproc {
    use crate::testing::{socket, unique};
    use crate::{opt, Context, Msg, SocketType};

    /// A peer that sends and leaves at once: its pipe closes with the message in it, so the
    /// close comes with no wake-up of its own once the message is read. ROUTER_NOTIFY's notice
    /// still follows at once, for a waiting receive and for poll alike.
    #[test]
    fn notify_disconnect_follows_a_peers_last_message() {
        let ctx = Context::new();
        let ep = format!("inproc://{}", unique("notify"));
        let mut router = socket(&ctx, SocketType::Router);
        router.set_int(opt::ROUTER_NOTIFY, opt::NOTIFY_DISCONNECT).unwrap();
        router.bind(&ep).unwrap();
        for (id, poll) in [("waits", false), ("polls", true)] {
            let mut dealer = socket(&ctx, SocketType::Dealer);
            dealer.set_bytes(opt::ROUTING_ID, id.as_bytes()).unwrap();
            dealer.connect(&ep).unwrap();
            dealer.send("last", 0).unwrap();
            drop(dealer);
            assert_eq!(router.recv_multipart(0).unwrap(), [Msg::from(id), Msg::from("last")]);
            let flags = if poll {
                assert_eq!(router.events().unwrap() & opt::POLLIN, opt::POLLIN, "{id}");
                opt::DONTWAIT
            } else {
                0 // RCVTIMEO is 5 s: a notice left for the next command would time out
            };
            assert_eq!(router.recv_multipart(flags).unwrap(), [Msg::from(id), Msg::new()], "{id}");
        }
    }
}
