//! A connection's timer on sessions joined in memory: one timer per connection at its
//! earliest deadline (the handshake's, then the heartbeats'), none without deadlines, and none
//! left behind by connections that come and go.

use crate::io::sim::{config, Net};
use std::time::Duration;

const DEALER: zmtp::SocketType = zmtp::SocketType::Dealer;
const MS: Duration = Duration::from_millis(1);

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

/// The server's side of each connection ends with its socket's pipe (the session is removed,
/// not lost), the client's is lost and reconnects: neither leaves its deadline queued.
#[test]
fn connections_that_come_and_go_leave_no_timer_behind() {
    let mut net = Net::new();
    let (server, client) = (net.socket(), net.socket());
    net.listen(server, "svc", config(DEALER, (1_000, 3_000), (10, 0)));
    net.connect(client, "svc", config(DEALER, (1_000, 3_000), (10, 0)));
    for round in 0..20 {
        net.socks[server].pipes.clear(); // long before a PING is due
        net.run_until(MS, Duration::from_secs(1), |n| n.socks[server].pipes.len() == 1);
        let t = net.timers();
        assert_eq!((t.len(), deadlines(&net).len()), (2, 2), "round {round}: only the live connections' deadlines: {t:?}");
    }
}
