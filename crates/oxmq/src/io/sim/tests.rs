//! Sessions joined in memory on simulated time: a whole session over a layered stream
//! (handshake, traffic both ways, heartbeats, close), heartbeats finding a cut link, the
//! handshake's timeout, reconnect intervals and their backoff, LINGER. None of them sleeps:
//! time moves when a test moves it.

use super::*;

const DEALER: zmtp::SocketType = zmtp::SocketType::Dealer;
const MS: Duration = Duration::from_millis(1);

fn peers(net: &Net, sock: usize) -> u64 {
    net.socks[sock].handle.io_stats.totals().peers
}

/// A client socket connected to a server socket at "svc"; both pipes attached.
fn pair(net: &mut Net, heartbeat: (i32, i32)) -> (usize, usize) {
    let (server, client) = (net.socket(), net.socket());
    net.listen(server, "svc", config(DEALER, heartbeat, (100, 0)));
    net.connect(client, "svc", config(DEALER, heartbeat, (100, 0)));
    assert_eq!((net.socks[server].pipes.len(), net.socks[client].pipes.len()), (1, 1), "both ends attached");
    (server, client)
}

fn body(i: usize) -> Vec<u8> {
    // Short, mid-size and large bodies (inline, chunk pieces, taken off the buffer and written
    // from their own memory), longer than the link hands out per read.
    let len = [1, 37, 200, 5_000, 70_000][i % 5];
    (0..len).map(|k| (i + k) as u8).collect()
}

/// Each message's length and a checksum: what a failure prints.
fn shape(msgs: &[Vec<u8>]) -> Vec<(usize, u64)> {
    msgs.iter().map(|m| (m.len(), m.iter().enumerate().map(|(i, b)| (i as u64 + 1) * u64::from(*b)).sum())).collect()
}

#[test]
fn a_whole_session_runs_over_a_layered_stream() {
    let mut net = Net::new();
    let (server, client) = pair(&mut net, (50, 200));
    for i in 0..60 {
        net.socks[client].send(0, &body(i));
    }
    net.settle();
    let got = net.socks[server].recv_all(0);
    assert_eq!(shape(&got), shape(&(0..60).map(body).collect::<Vec<_>>()), "every message, whole and in order");
    for i in 0..20 {
        net.socks[server].send(0, &body(i));
    }
    net.settle();
    assert_eq!(net.socks[client].recv_all(0).len(), 20, "and back");
    // Heartbeats flow on an idle link and keep it up.
    net.advance(Duration::from_secs(2));
    assert_eq!((peers(&net, server), peers(&net, client)), (1, 1), "still connected after 2 s idle with PINGs");
    // The client closes with messages queued: they are delivered, then the link closes in
    // order (half-close, the peer reads all, then the end of the stream).
    for i in 0..10 {
        net.socks[client].send(0, &body(i));
    }
    net.socks[client].pipes.clear();
    net.run_until(MS, Duration::from_secs(1), |n| n.sessions() == 0);
    let got = net.socks[server].recv_all(0);
    assert_eq!(shape(&got), shape(&(0..10).map(body).collect::<Vec<_>>()), "what was queued at close arrived");
    assert!(matches!(net.socks[server].pipes[0].read(), Read::Closed), "then the server's pipe closed");
    let c = net.socks[client].handle.io_stats.totals();
    assert_eq!((c.connections, c.handshake_failures, c.protocol_errors), (1, 0, 0));
}

#[test]
fn heartbeats_find_a_cut_link_within_interval_plus_timeout() {
    let mut net = Net::new();
    let (_server, client) = pair(&mut net, (100, 300));
    net.advance(Duration::from_millis(250)); // some PINGs and PONGs go by
    net.cut_links();
    let took = net.run_until(MS, Duration::from_secs(2), |n| peers(n, client) == 0);
    assert!(took >= Duration::from_millis(300) && took <= Duration::from_millis(401), "found after {took:?}");
    // The client reconnects over a new link (the listener is up) after RECONNECT_IVL.
    let took = net.run_until(MS, Duration::from_secs(1), |n| peers(n, client) == 1);
    assert!(took <= Duration::from_millis(101), "reconnected after {took:?}");
    assert_eq!(net.socks[client].handle.io_stats.totals().reconnects, 1);
}

#[test]
fn a_silent_link_without_heartbeats_stays_up() {
    let mut net = Net::new();
    let (server, client) = pair(&mut net, (0, 0));
    net.cut_links();
    net.advance(Duration::from_secs(60));
    assert_eq!((peers(&net, server), peers(&net, client)), (1, 1), "nothing to notice the cut");
}

#[test]
fn the_handshake_times_out() {
    let mut net = Net::new();
    net.listen_mute("mute");
    let client = net.socket();
    let mut cfg = config(DEALER, (0, 0), (100, 0));
    cfg.handshake.handshake_ivl = 500;
    let t0 = net.now();
    net.connect(client, "mute", cfg);
    net.run_until(MS, Duration::from_secs(2), |n| n.socks[client].handle.io_stats.totals().handshake_failures == 1);
    assert_eq!(net.elapsed(t0), Duration::from_millis(500), "at HANDSHAKE_IVL");
    net.run_until(MS, Duration::from_secs(2), |n| n.attempts("mute", t0).len() == 2);
    assert_eq!(net.attempts("mute", t0), [Duration::ZERO, Duration::from_millis(600)], "then RECONNECT_IVL later");
    assert!(net.socks[client].pipes.is_empty(), "no peer was ever attached");
}

#[test]
fn reconnects_back_off_to_the_maximum_and_reset_once_connected() {
    let mut net = Net::new();
    let (server, client) = (net.socket(), net.socket());
    net.listen(server, "svc", config(DEALER, (0, 0), (100, 0)));
    net.set_listening("svc", false);
    let t0 = net.now();
    net.connect(client, "svc", config(DEALER, (0, 0), (100, 800)));
    net.advance(Duration::from_millis(3200));
    let ms = |v: &[u64]| v.iter().map(|n| Duration::from_millis(*n)).collect::<Vec<_>>();
    assert_eq!(net.attempts("svc", t0), ms(&[0, 100, 300, 700, 1500, 2300, 3100]), "100, 200, 400, then 800 each");
    net.set_listening("svc", true);
    net.run_until(MS, Duration::from_secs(1), |n| peers(n, client) == 1);
    assert_eq!(net.attempts("svc", t0).last(), Some(&Duration::from_millis(3900)));
    // A connection resets the interval: after the next loss the retries start again from
    // RECONNECT_IVL.
    net.set_listening("svc", false);
    net.advance(MS);
    net.socks[server].pipes.clear(); // the server closes: the client reads the end of the stream
    net.settle();
    let t1 = net.now();
    net.run_until(MS, Duration::from_secs(1), |n| n.attempts("svc", t1).len() == 2);
    assert_eq!(net.attempts("svc", t1), ms(&[100, 300]), "100, then 200 again");
}

#[test]
fn linger_bounds_how_long_a_closing_session_waits() {
    for linger in [0i32, 500] {
        let mut net = Net::new();
        let (_server, client) = pair(&mut net, (0, 0));
        net.socks[client].handle.linger.store(linger, std::sync::atomic::Ordering::Release);
        net.stall_links(); // the server reads nothing more
        for i in 0..40 {
            net.socks[client].send(0, &body(i)); // more than the link and the layer hold
        }
        net.settle();
        let t0 = net.now();
        net.socks[client].pipes.clear();
        net.settle();
        net.run_until(MS, Duration::from_secs(2), |n| n.sessions() == 1); // the server's remains
        assert_eq!(net.elapsed(t0), Duration::from_millis(linger as u64), "LINGER {linger}");
    }
}
