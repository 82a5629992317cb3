//! STREAM at the pattern level (zmq_socket(3)): raw peers named by routing id; each read
//! arrives as [id, bytes], a connect and a disconnect as [id, empty]; [id, bytes] is written as
//! it is, [id, empty] closes that connection; an unknown id is EHOSTUNREACH, a full peer
//! EAGAIN. The raw session side (what puts these messages in the pipe) is `io/session/raw.rs`.

use super::Stream;
use crate::error::Error;
use crate::opt;
use crate::socket::harness::{parts, Bench};
use crate::socket::Pattern;

/// A raw connection as its session opens it: an empty routing id (the socket names it), then
/// the connect notification. Returns the peer and the id the socket gave it.
fn connection(b: &mut Bench<Stream>, hwm: u64, endpoint: Option<&str>) -> (usize, Vec<u8>) {
    let p = b.attach_with([hwm, 0], Some(b""), endpoint);
    b.peer_send(p, &[""]);
    let m = b.recv().unwrap();
    assert_eq!((m.len(), m[1].len()), (2, 0), "a connect notification: {m:?}");
    (p, m[0].clone())
}

#[test]
fn each_read_arrives_behind_the_connections_id() {
    let mut b = Bench::new(Stream::new());
    let (p, id) = connection(&mut b, 0, None);
    assert_eq!((id.len(), id[0]), (5, 0), "a generated id, as libzmq makes them");
    assert_eq!(b.pattern.getsockopt(opt::ROUTING_ID), Some(id.clone()), "libzmq reports the last generated id");
    b.peer_send(p, &["GET / HTTP/1.0\r\n"]);
    assert_eq!(b.recv(), Ok(vec![id.clone(), b"GET / HTTP/1.0\r\n".to_vec()]));
    let (_, other) = connection(&mut b, 0, None);
    assert_ne!(other, id);
}

#[test]
fn sends_bytes_as_they_are_to_the_named_connection() {
    let mut b = Bench::new(Stream::new());
    let (p, id) = connection(&mut b, 0, None);
    let (q, _) = connection(&mut b, 0, None);
    b.send_bytes(&[&id, b"HTTP/1.0 200 OK\r\n"]).unwrap();
    assert_eq!(b.peer_recv_all(p), [parts(&["HTTP/1.0 200 OK\r\n"])], "one frame, no envelope");
    assert_eq!(b.peer_recv_all(q).len(), 0);
    assert_eq!(b.send(&["unknown", "x"]), Err(Error::HostUnreach));
    assert_eq!(b.send_bytes(&[&id]), Ok(()), "a lone id frame is ignored");
    b.send_bytes(&[&id, b"after"]).unwrap();
    assert_eq!(b.peer_recv_all(p), [parts(&["after"])]);
}

#[test]
fn an_empty_frame_closes_the_connection() {
    let mut b = Bench::new(Stream::new());
    let (p, id) = connection(&mut b, 0, None);
    b.send_bytes(&[&id, b"last"]).unwrap();
    b.send_bytes(&[&id, b""]).unwrap();
    assert_eq!(b.peer_recv_all(p), [parts(&["last"])], "what was queued goes first");
    assert!(b.peer_sees_close(p));
    assert_eq!(b.send_bytes(&[&id, b"x"]), Err(Error::HostUnreach), "the id is gone");
}

#[test]
fn a_full_connection_says_eagain() {
    let mut b = Bench::new(Stream::new());
    let (p, id) = connection(&mut b, 1, None);
    b.send_bytes(&[&id, b"1"]).unwrap();
    let mut frame = crate::msg::Msg::copy_from(&id);
    frame.set_more(true);
    assert_eq!(b.send_msg(&mut frame), Err(Error::Again));
    assert_eq!(b.peer_recv(p), Some(parts(&["1"])));
    b.send_bytes(&[&id, b"2"]).unwrap();
    assert_eq!(b.peer_recv(p), Some(parts(&["2"])));
}

#[test]
fn a_disconnect_ends_an_accepted_peers_id_but_not_a_connected_ones() {
    let mut b = Bench::new(Stream::new());
    let (acc, acc_id) = connection(&mut b, 0, None);
    let (con, con_id) = connection(&mut b, 0, Some("tcp://127.0.0.1:9"));
    for (p, id) in [(acc, &acc_id), (con, &con_id)] {
        b.peer_send(p, &[""]); // the session's disconnect notification
        assert_eq!(b.recv(), Ok(vec![id.clone(), Vec::new()]));
    }
    assert_eq!(b.send_bytes(&[&acc_id, b"x"]), Err(Error::HostUnreach), "an accepted peer is gone for good");
    b.send_bytes(&[&con_id, b"queued for the next connection"]).unwrap();
    b.peer_send(con, &[""]); // reconnected
    assert_eq!(b.recv(), Ok(vec![con_id.clone(), Vec::new()]), "the same id again");
    assert_eq!(b.peer_recv_all(con), [parts(&["queued for the next connection"])]);
}

#[test]
fn connect_routing_id_names_the_connection_and_a_duplicate_is_refused() {
    let mut b = Bench::new(Stream::new());
    let p = b.attach_with([0, 0], Some(b"web"), Some("tcp://127.0.0.1:80"));
    let dup = b.attach_with([0, 0], Some(b"web"), Some("tcp://127.0.0.1:81"));
    assert!(b.attached(p) && !b.attached(dup));
    b.send(&["web", "GET"]).unwrap();
    assert_eq!(b.peer_recv_all(p), [parts(&["GET"])]);
    assert_eq!(b.pattern.getsockopt(opt::ROUTING_ID), None, "no id was generated");
}
