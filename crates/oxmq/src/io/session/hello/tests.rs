//! HELLO_MSG and DISCONNECT_MSG on sessions joined in memory: the hello opens every
//! connection, reconnections included, ahead of what the pipe held; the farewell is what an
//! accepted peer's pipe yields last, and only an accepted peer's.

use crate::io::sim::{config, Net};
use crate::pipe::Read;
use std::time::Duration;

const DEALER: zmtp::SocketType = zmtp::SocketType::Dealer;
const MS: Duration = Duration::from_millis(1);

fn peers(net: &Net, sock: usize) -> u64 {
    net.socks[sock].handle.io_stats.totals().peers
}

#[test]
fn the_hello_opens_every_connection_before_what_was_queued() {
    let mut net = Net::new();
    let (server, client) = (net.socket(), net.socket());
    net.listen(server, "svc", config(DEALER, (0, 0), (100, 0)));
    let mut cfg = config(DEALER, (0, 0), (100, 0));
    cfg.policy.hello = Some(bytes::Bytes::from_static(b"hello"));
    net.connect(client, "svc", cfg);
    net.socks[client].send(0, b"first");
    net.settle();
    assert_eq!(net.socks[server].recv_all(0), [&b"hello"[..], b"first"]);
    // The server drops the connection: the client reconnects and says hello again, first.
    net.socks[server].pipes.clear();
    net.run_until(MS, Duration::from_secs(1), |n| peers(n, client) == 0);
    net.socks[client].send(0, b"queued while apart");
    net.run_until(MS, Duration::from_secs(1), |n| n.socks[server].pipes.len() == 1);
    net.settle();
    assert_eq!(net.socks[server].recv_all(0), [&b"hello"[..], b"queued while apart"]);
    assert!(net.socks[client].recv_all(0).is_empty(), "the accepting side sends none of its own");
}

#[test]
fn the_farewell_is_an_accepted_peers_last_message() {
    let mut net = Net::new();
    let (server, client) = (net.socket(), net.socket());
    let mut scfg = config(DEALER, (0, 0), (100, 0));
    scfg.policy.farewell = Some(bytes::Bytes::from_static(b"gone"));
    net.listen(server, "svc", scfg);
    let mut ccfg = config(DEALER, (0, 0), (100, 0));
    ccfg.policy.farewell = Some(bytes::Bytes::from_static(b"never for a connect"));
    net.connect(client, "svc", ccfg);
    net.socks[server].send(0, b"to client");
    net.socks[client].send(0, b"1");
    net.socks[client].send(0, b"2");
    net.settle();
    assert_eq!(net.socks[server].recv_all(0), [b"1", b"2"], "no farewell while the peer is there");
    // The server goes: the client's pipe survives (it reconnects) and yields no farewell.
    net.set_listening("svc", false);
    net.socks[server].pipes.clear();
    net.run_until(MS, Duration::from_secs(1), |n| peers(n, client) == 0);
    assert_eq!(net.socks[client].recv_all(0), [&b"to client"[..]]);
    assert!(matches!(net.socks[client].pipes[0].read(), Read::Empty), "not closed, no farewell");
    // Back up; then the client goes: the server's pipe ends with the farewell.
    net.set_listening("svc", true);
    net.run_until(MS, Duration::from_secs(1), |n| peers(n, client) == 1);
    net.socks[client].send(0, b"last");
    net.settle();
    net.socks[client].pipes.clear();
    net.run_until(MS, Duration::from_secs(1), |n| n.sessions() == 0);
    assert_eq!(net.socks[server].recv_all(0), [&b"last"[..], b"gone"]);
    assert!(matches!(net.socks[server].pipes[0].read(), Read::Closed), "then the close");
}
