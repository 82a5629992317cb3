//! A connection's timer on sessions joined in memory: one timer per connection at its
//! earliest deadline (the handshake's, then the heartbeats'), none without deadlines, and none
//! left behind by connections that come and go.

use crate::io::sim::{config, Net};
use std::time::Duration;

const DEALER: zmtp::SocketType = zmtp::SocketType::Dealer;

fn deadlines(net: &Net) -> Vec<Duration> {
    net.timers().into_iter().filter(|&(_, deadline)| deadline).map(|(d, _)| d).collect()
}

#[test]
fn a_handshake_has_its_timeout_and_an_idle_link_without_heartbeats_none() {
    let mut net = Net::new();
    net.listen_mute("mute");
    let client = net.socket();
    let mut cfg = config(DEALER, (0, 0), (100, 0));
    cfg.handshake.handshake_ivl = 500;
    net.connect(client, "mute", cfg);
    assert_eq!(deadlines(&net), [Duration::from_millis(500)], "the handshake's");
    let mut net = Net::new();
    let (server, client) = (net.socket(), net.socket());
    net.listen(server, "svc", config(DEALER, (0, 0), (100, 0)));
    net.connect(client, "svc", config(DEALER, (0, 0), (100, 0)));
    assert_eq!(net.socks[client].pipes.len(), 1, "connected");
    assert_eq!(deadlines(&net), [], "the handshake's timer went with it; no heartbeats, no timer");
}

#[test]
fn each_connection_keeps_one_timer_at_its_next_heartbeat() {
    let mut net = Net::new();
    let (server, client) = (net.socket(), net.socket());
    net.listen(server, "svc", config(DEALER, (100, 300), (100, 0)));
    net.connect(client, "svc", config(DEALER, (100, 300), (100, 0)));
    for _ in 0..25 {
        let d = deadlines(&net);
        assert_eq!(d.len(), 2, "one per connection: {d:?}");
        assert!(d.iter().all(|&t| t <= Duration::from_millis(100)), "never later than the next PING: {d:?}");
        net.advance(Duration::from_millis(37));
    }
}
