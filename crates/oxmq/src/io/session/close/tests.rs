//! A closing session's orderly end on sessions joined in memory: with LINGER -1 it waits as
//! long as its peer does not read, loses nothing, and closes once the peer has it all; with a
//! LINGER it does not use up, its timer goes with it.

use crate::io::sim::{config, Net};
use std::time::Duration;

const DEALER: zmtp::SocketType = zmtp::SocketType::Dealer;
const MS: Duration = Duration::from_millis(1);

/// A client connected to a server that reads nothing for now, closed with LINGER `linger` (None:
/// the default) and more queued than the link and the layer hold: the net, the server, the
/// client, and what was queued.
fn closed_with_queued_messages(linger: Option<i32>) -> (Net, usize, usize, Vec<Vec<u8>>) {
    let mut net = Net::new();
    let (server, client) = (net.socket(), net.socket());
    net.listen(server, "svc", config(DEALER, (0, 0), (100, 0)));
    net.connect(client, "svc", config(DEALER, (0, 0), (100, 0)));
    if let Some(linger) = linger {
        net.socks[client].handle.linger.store(linger, std::sync::atomic::Ordering::Relaxed);
    }
    net.stall_links();
    let bodies: Vec<Vec<u8>> = (0..40).map(|i| vec![i as u8; 5_000]).collect();
    for b in &bodies {
        net.socks[client].send(0, b);
    }
    net.settle();
    net.socks[client].pipes.clear();
    net.settle();
    (net, server, client, bodies)
}

#[test]
fn with_linger_forever_a_session_waits_for_a_slow_peer_and_loses_nothing() {
    let (mut net, server, client, bodies) = closed_with_queued_messages(None);
    assert_eq!(net.socks[client].handle.linger.load(std::sync::atomic::Ordering::Relaxed), -1);
    net.advance(Duration::from_secs(30));
    assert_eq!(net.sessions(), 2, "still waiting after 30 s: nothing is dropped");
    net.resume_links();
    // The server reads it all; the client closes once nothing it sent is unacknowledged, and
    // the server's session ends on that close.
    net.run_until(MS, Duration::from_secs(1), |n| n.sessions() == 0);
    assert_eq!(net.socks[server].recv_all(0), bodies, "every message, in order");
    assert!(matches!(net.socks[server].pipes[0].read(), crate::pipe::Read::Closed), "then the close");
}

#[test]
fn a_session_that_delivers_within_its_linger_leaves_no_timer_behind() {
    let (mut net, server, _, bodies) = closed_with_queued_messages(Some(60_000));
    assert_eq!(net.timers(), [(Duration::from_secs(60), false)], "LINGER's");
    net.resume_links();
    net.run_until(MS, Duration::from_secs(1), |n| n.sessions() == 0);
    assert_eq!(net.socks[server].recv_all(0), bodies, "delivered within LINGER");
    assert_eq!(net.timers(), [], "and LINGER's timer went with the session");
}
