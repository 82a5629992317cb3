//! When a connecting session tries again and when it gives up, on sessions joined in memory:
//! RECONNECT_STOP's conditions, RECONNECT_IVL -1, a session that closes with nothing left to
//! send, and a pipe kept across reconnects or made per connection. (The intervals and their
//! backoff are in `io/sim/tests.rs`.)

use crate::io::config::SessionConfig;
use crate::io::sim::{config, Net};
use crate::opt;
use crate::pipe::Read;
use std::time::Duration;

const DEALER: zmtp::SocketType = zmtp::SocketType::Dealer;
const MS: Duration = Duration::from_millis(1);

fn cfg(stop: i32) -> SessionConfig {
    let mut c = config(DEALER, (0, 0), (100, 0));
    assert_eq!(c.link.set(opt::RECONNECT_STOP, &stop.to_ne_bytes()), Ok(true));
    c
}

/// A net whose listener "svc" is down, and a client socket.
fn refusing() -> (Net, usize) {
    let mut net = Net::new();
    let server = net.socket();
    net.listen(server, "svc", config(DEALER, (0, 0), (100, 0)));
    net.set_listening("svc", false);
    let client = net.socket();
    (net, client)
}

#[test]
fn a_refused_connect_retries_unless_reconnect_stop_says_conn_refused() {
    for (stop, tries) in [(0, 4), (opt::RECONNECT_STOP_HANDSHAKE_FAILED, 4), (opt::RECONNECT_STOP_CONN_REFUSED, 1)] {
        let (mut net, client) = refusing();
        let t0 = net.now();
        net.connect(client, "svc", cfg(stop));
        net.advance(Duration::from_millis(350));
        assert_eq!(net.attempts("svc", t0).len(), tries, "RECONNECT_STOP {stop:#x}");
        assert_eq!(net.sessions(), usize::from(tries > 1), "the session ends when it stops");
    }
}

#[test]
fn after_disconnect_a_refusal_is_final_only_once_the_socket_has_disconnected() {
    let (mut net, client) = refusing();
    let t0 = net.now();
    net.connect(client, "svc", cfg(opt::RECONNECT_STOP_AFTER_DISCONNECT));
    net.advance(Duration::from_millis(150));
    assert_eq!(net.attempts("svc", t0).len(), 2, "retries before any disconnect");
    net.socks[client].handle.disconnected.store(true, std::sync::atomic::Ordering::Relaxed);
    net.advance(Duration::from_millis(500));
    assert_eq!(net.attempts("svc", t0).len(), 3, "the next refusal ends it");
    assert_eq!(net.sessions(), 0);
}

#[test]
fn a_handshake_that_never_ends_stops_the_session_with_handshake_failed() {
    for (stop, tries) in [(0, 2), (opt::RECONNECT_STOP_HANDSHAKE_FAILED, 1)] {
        let mut net = Net::new();
        net.listen_mute("mute");
        let client = net.socket();
        let mut c = cfg(stop);
        c.handshake.handshake_ivl = 200;
        let t0 = net.now();
        net.connect(client, "mute", c);
        net.advance(Duration::from_millis(350));
        assert_eq!(net.attempts("mute", t0).len(), tries, "RECONNECT_STOP {stop:#x}");
        assert_eq!(net.socks[client].handle.io_stats.totals().handshake_failures, 1);
    }
}

#[test]
fn reconnect_ivl_minus_one_never_reconnects() {
    let (mut net, client) = refusing();
    let mut c = config(DEALER, (0, 0), (-1, 0));
    c.reconnect_ivl = -1;
    let t0 = net.now();
    net.connect(client, "svc", c);
    net.advance(Duration::from_secs(5));
    assert_eq!((net.attempts("svc", t0).len(), net.sessions()), (1, 0));
}

#[test]
fn a_session_closed_with_nothing_to_send_does_not_reconnect() {
    let mut net = Net::new();
    let (server, client) = (net.socket(), net.socket());
    net.listen(server, "svc", config(DEALER, (0, 0), (100, 0)));
    let t0 = net.now();
    net.connect(client, "svc", config(DEALER, (0, 0), (100, 0)));
    net.socks[client].pipes.clear();
    net.settle();
    net.socks[server].pipes.clear();
    net.run_until(MS, Duration::from_secs(1), |n| n.sessions() == 0);
    net.advance(Duration::from_secs(1));
    assert_eq!(net.attempts("svc", t0).len(), 1);
}

#[test]
fn the_pipe_outlives_a_reconnect_only_when_the_socket_keeps_its_peers() {
    for keeps in [true, false] {
        let mut net = Net::new();
        let (server, client) = (net.socket(), net.socket());
        net.listen(server, "svc", config(DEALER, (0, 0), (100, 0)));
        let mut c = config(DEALER, (0, 0), (100, 0));
        c.policy.keeps_pipe = keeps;
        net.connect(client, "svc", c);
        net.socks[server].pipes.clear(); // the server drops the connection
        net.run_until(MS, Duration::from_secs(1), |n| n.socks[server].pipes.len() == 1);
        let pipes = &mut net.socks[client].pipes;
        if keeps {
            assert_eq!(pipes.len(), 1, "the same pipe carries the next connection");
        } else {
            assert_eq!(pipes.len(), 2, "a new pipe per connection (ROUTER, IMMEDIATE)");
            assert!(matches!(pipes[0].read(), Read::Msg(m) if m.is_routing_id()), "the old one's peer id");
            assert!(matches!(pipes[0].read(), Read::Closed), "and then its close");
        }
        let last = net.socks[client].pipes.len() - 1;
        net.socks[client].send(last, b"over the new connection");
        net.settle();
        assert_eq!(net.socks[server].recv_all(0), [&b"over the new connection"[..]], "keeps: {keeps}");
    }
}

/// A connecting session that ends while its next attempt is queued (its socket closed between
/// two refused connects) takes that timer with it, rather than leaving it for the reactor to
/// fire for nobody up to RECONNECT_IVL_MAX later.
#[test]
fn a_session_that_ends_between_attempts_leaves_no_timer_behind() {
    let (mut net, client) = refusing();
    net.connect_piped(client, "svc", config(DEALER, (0, 0), (1_000, 0)));
    assert_eq!(net.timers(), [(Duration::from_secs(1), false)], "the next attempt, queued");
    net.socks[client].pipes.clear();
    net.settle();
    assert_eq!((net.sessions(), net.timers()), (0, vec![]));
}
