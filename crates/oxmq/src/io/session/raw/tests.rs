//! STREAM's raw link: the encoder side's rules (`fill`), and whole raw sessions joined in
//! memory: no greeting, a connect and a disconnect notification, bytes as they come.

use super::fill;
use crate::io::session::buffers::TxBuf;
use crate::io::session::read::ZERO_COPY_MIN;
use crate::io::sim::{config, Net};
use crate::msg::{Msg, ROUTING_ID};
use crate::pipe::{pipe, Read};
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

#[test]
fn fill_writes_bodies_as_they_are_and_skips_ids_and_empty_messages() {
    let (mut socket, mut session) = pipe([0, 0]);
    let mut id = Msg::from("id");
    id.set_flags(ROUTING_ID);
    socket.write(id);
    socket.write(Msg::from("GET /"));
    socket.write(Msg::new());
    let large = vec![1u8; ZERO_COPY_MIN];
    socket.write(Msg::from(large.clone()));
    socket.write(Msg::from(" tail"));
    socket.flush();
    drop(socket);
    let (mut tx, mut drained) = (TxBuf::new(), false);
    fill(&mut tx, &mut session, &mut drained);
    assert!(drained);
    assert_eq!(tx.bigs.len(), 1, "the large body is written from its own memory");
    let at = tx.bigs[0].0;
    assert_eq!((&tx.buf[..at], &tx.buf[at..]), (&b"GET /"[..], &b" tail"[..]), "and in its place in the stream");
    assert_eq!(&tx.bigs[0].1[..], &large[..]);
}

/// Two raw sockets: a client connected to a server at "raw".
fn raw_pair(notify: bool, connect_id: Option<&'static [u8]>) -> (Net, usize, usize) {
    let mut net = Net::new();
    let (server, client) = (net.socket(), net.socket());
    let mut cfg = config(zmtp::SocketType::Stream, (0, 0), (100, 0));
    cfg.policy.raw = true;
    cfg.link.stream_notify = notify;
    net.listen(server, "raw", cfg.clone());
    cfg.link.connect_routing_id = connect_id.map(bytes::Bytes::from_static);
    net.connect(client, "raw", cfg);
    (net, server, client)
}

/// Every message pipe `i` of `sock` holds, routing ids as ("id", bytes).
fn read_all(net: &mut Net, sock: usize, i: usize) -> Vec<(bool, Vec<u8>)> {
    std::iter::from_fn(|| match net.socks[sock].pipes[i].read() {
        Read::Msg(m) => Some((m.is_routing_id(), m.to_vec())),
        _ => None,
    })
    .collect()
}

#[test]
fn a_raw_session_announces_its_connection_and_carries_bytes_as_they_come() {
    let (mut net, server, client) = raw_pair(true, Some(b"web"));
    assert_eq!(read_all(&mut net, client, 0), [(true, b"web".to_vec()), (false, vec![])], "id, then the connect notice");
    assert_eq!(read_all(&mut net, server, 0), [(true, vec![]), (false, vec![])], "the socket names an accepted peer");
    let body: Vec<u8> = (0..5_000u32).map(|i| i as u8).collect();
    net.socks[client].send(0, b"GET / HTTP/1.0\r\n\r\n");
    net.socks[client].send(0, &body);
    net.settle();
    let got: Vec<u8> = read_all(&mut net, server, 0)
        .into_iter()
        .flat_map(|(id, b)| {
            assert!(!id && !b.is_empty(), "data only, never an empty message");
            b
        })
        .collect();
    assert_eq!(got, [&b"GET / HTTP/1.0\r\n\r\n"[..], &body].concat(), "no framing: the bytes as sent");
    net.socks[client].pipes.clear();
    net.run_until(MS, Duration::from_secs(1), |n| n.sessions() == 0);
    assert_eq!(read_all(&mut net, server, 0), [(false, vec![])], "the disconnect notice");
    assert!(matches!(net.socks[server].pipes[0].read(), Read::Closed));
}

#[test]
fn without_stream_notify_there_are_no_notices() {
    let (mut net, server, client) = raw_pair(false, None);
    assert_eq!(read_all(&mut net, client, 0), [(true, vec![])]);
    net.socks[client].send(0, b"x");
    net.settle();
    net.socks[client].pipes.clear();
    net.run_until(MS, Duration::from_secs(1), |n| n.sessions() == 0);
    assert_eq!(read_all(&mut net, server, 0), [(true, vec![]), (false, b"x".to_vec())]);
}
