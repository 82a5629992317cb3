//! DGRAM at the pattern level: [address, body] messages through its one udp pipe, each
//! shape error refused with EINVAL before anything is written.

use super::Dgram;
use crate::error::Error;
use crate::socket::harness::{parts, Bench};

#[test]
fn sends_address_and_body_and_refuses_other_shapes() {
    let mut b = Bench::new(Dgram::new());
    assert_eq!(b.send(&["127.0.0.1:5555", "x"]), Err(Error::Again), "no bind: nowhere to send");
    let p = b.attach_with([0, 0], None, Some("udp://127.0.0.1:5555"));
    let second = b.attach_with([0, 0], None, None);
    assert!(!b.attached(second), "one pipe only");
    assert_eq!(b.send(&["127.0.0.1:5555"]), Err(Error::Invalid), "an address alone");
    assert_eq!(b.send(&["not an address", "x"]), Err(Error::Invalid));
    assert_eq!(b.send(&["127.0.0.1:0", "x"]), Err(Error::Invalid), "port 0");
    b.send_frame(b"[::1]:7\0", true).unwrap();
    assert_eq!(b.send_frame(b"body", true), Err(Error::Invalid), "two frames only");
    b.send_frame(b"body", false).unwrap();
    assert_eq!(b.peer_recv_all(p), [vec![b"[::1]:7\0".to_vec(), b"body".to_vec()]]);
    b.peer_send(p, &["10.0.0.1:9\0", "datagram"]);
    assert_eq!(b.recv(), Ok(parts(&["10.0.0.1:9\0", "datagram"])));
}
