//! ZMTP heartbeats against libzmq (pyzmq): a frozen peer (SIGSTOP: its sockets stay open, it
//! just stops answering) is detected within the heartbeat timeout or the TTL it announced, the
//! connecting side reconnects once it resumes, and an idle connection with heartbeats on
//! either or both sides stays up for many intervals (each side answers the other's PINGs).

mod common;

use common::*;
use oxmq::{opt, Context, Error, Socket, SocketType as T};
use std::time::{Duration, Instant};

both_ways!(idle_link_survives_heartbeats_both_sides, libzmq_pings_get_pongs);

fn noop<S>(_: &mut S) {}

/// Interval and timeout used by these tests, in milliseconds.
const IVL: i32 = 100;
const TIMEOUT: i32 = 400;
/// How long an idle link is watched: many intervals.
const IDLE_MS: i64 = 1_500;

fn heartbeats(s: &mut Socket) {
    s.set_int(opt::HEARTBEAT_IVL, IVL).unwrap();
    s.set_int(opt::HEARTBEAT_TIMEOUT, TIMEOUT).unwrap();
    s.set_int(opt::HEARTBEAT_TTL, 1_000).unwrap();
}

fn py_heartbeats(p: &mut Peer) {
    p.set_int("HEARTBEAT_IVL", IVL as i64);
    p.set_int("HEARTBEAT_TIMEOUT", TIMEOUT as i64);
    p.set_int("HEARTBEAT_TTL", 1_000);
    p.cmd("monitor");
}

fn py_monitor_only(p: &mut Peer) {
    p.cmd("monitor");
}

/// Watches an idle PAIR link for IDLE_MS: nothing may arrive, libzmq must not see the
/// connection drop, and a message must still go both ways afterwards.
fn watch_idle(ox: &mut Socket, py: &mut Peer) {
    ox.send("first", 0).unwrap();
    assert_eq!(py.recv_must(), vec![b"first".to_vec()]);
    let before = py.cmd("events 0");
    assert_eq!(ox_try_recv(ox, IDLE_MS), None, "nothing is sent on an idle link");
    let after = py.cmd("events 0");
    assert!(after.ends_with("disconnected=0"), "libzmq saw the link drop: {after}");
    assert_eq!(before, after, "libzmq saw a reconnection while the link was idle");
    ox.send("second", 0).unwrap();
    assert_eq!(py.recv_must(), vec![b"second".to_vec()]);
    py.send(&[b"back"]);
    assert_eq!(ox_recv(ox), vec![b"back".to_vec()]);
}

/// Heartbeats on both sides: each sends PINGs with a TTL and each answers the other's.
fn idle_link_survives_heartbeats_both_sides(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Pair, "PAIR", heartbeats, py_heartbeats);
    watch_idle(&mut ox, &mut py);
}

/// Only libzmq sends PINGs (with a timeout): it keeps the link only because we answer.
fn libzmq_pings_get_pongs(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::Pair, "PAIR", noop, |p: &mut Peer| {
        p.set_int("HEARTBEAT_IVL", IVL as i64);
        p.set_int("HEARTBEAT_TIMEOUT", TIMEOUT as i64);
        py_monitor_only(p);
    });
    watch_idle(&mut ox, &mut py);
}

/// Waits until `cond` holds, for at most `limit`; returns how long it took.
fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "timed out after {limit:?} waiting for: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
    start.elapsed()
}

/// A bound oxmq ROUTER (ROUTER_MANDATORY) with heartbeats: a frozen DEALER's routing id
/// becomes unroutable within the timeout; when the peer resumes, libzmq reconnects and the id
/// routes again.
#[test]
fn router_drops_a_frozen_peer() {
    require_pyzmq!();
    let ctx = Context::new();
    let mut ox = ox_socket(&ctx, T::Router);
    heartbeats(&mut ox);
    ox.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    ox.bind("tcp://127.0.0.1:*").unwrap();
    let ep = ox.last_endpoint().unwrap();
    let mut py = Peer::spawn("DEALER");
    py.set_bytes("ROUTING_ID", b"frozen");
    py.set_int("RECONNECT_IVL", 20);
    py.connect(&ep);
    py.send(&[b"hello"]);
    assert_eq!(ox_recv(&mut ox), vec![b"frozen".to_vec(), b"hello".to_vec()]);
    ox_send(&mut ox, &[b"frozen", b"before"]);
    assert_eq!(py.recv_must(), vec![b"before".to_vec()]);

    py.signal("STOP");
    let took = wait_for("the frozen peer to become unroutable", Duration::from_secs(10), || {
        matches!(ox.send_multipart([&b"frozen"[..], b"x"], opt::DONTWAIT), Err(Error::HostUnreach))
    });
    assert!(took < Duration::from_millis(8 * TIMEOUT as u64), "detection took {took:?}");

    py.signal("CONT");
    wait_for("the resumed peer to reconnect", Duration::from_secs(10), || {
        ox.send_multipart([&b"frozen"[..], b"after"], opt::DONTWAIT).is_ok()
    });
    // Messages sent before the drop may still arrive first.
    loop {
        let m = py.recv_must();
        if m == vec![b"after".to_vec()] {
            break;
        }
        assert_eq!(m, vec![b"x".to_vec()]);
    }
}

/// A connecting oxmq DEALER (IMMEDIATE, so a dropped link leaves no pipe to send into) with
/// heartbeats to a bound libzmq ROUTER that freezes: the link is dropped within the timeout,
/// and when the peer resumes oxmq reconnects and traffic flows again.
#[test]
fn connecting_side_drops_a_frozen_peer_and_reconnects() {
    require_pyzmq!();
    let ctx = Context::new();
    let mut py = Peer::spawn("ROUTER");
    let ep = py.bind("tcp://127.0.0.1:*");
    let mut ox = ox_socket(&ctx, T::Dealer);
    heartbeats(&mut ox);
    ox.set_int(opt::IMMEDIATE, 1).unwrap();
    ox.connect(&ep).unwrap();
    ox.send("one", 0).unwrap();
    assert_eq!(py.recv_must()[1], b"one");

    py.signal("STOP");
    let took =
        wait_for("the link to the frozen peer to drop", Duration::from_secs(10), || ox.events().unwrap() & opt::POLLOUT == 0);
    assert!(took < Duration::from_millis(8 * TIMEOUT as u64), "detection took {took:?}");

    py.signal("CONT");
    ox.send("two", 0).unwrap(); // blocks (SNDTIMEO) until the new connection is up
    let m = py.recv_must();
    assert_eq!(m[1], b"two");
    py.send(&[&m[0], b"reply"]);
    assert_eq!(ox_recv(&mut ox), vec![b"reply".to_vec()]);
}

/// We send no PINGs, but libzmq announces a TTL in its own: when it freezes, we drop the link
/// once the TTL passes without traffic.
#[test]
fn peer_ttl_is_honoured() {
    require_pyzmq!();
    let ctx = Context::new();
    let mut py = Peer::spawn("ROUTER");
    py.set_int("HEARTBEAT_IVL", IVL as i64);
    py.set_int("HEARTBEAT_TTL", 500);
    let ep = py.bind("tcp://127.0.0.1:*");
    let mut ox = ox_socket(&ctx, T::Dealer);
    ox.set_int(opt::IMMEDIATE, 1).unwrap();
    ox.connect(&ep).unwrap();
    ox.send("one", 0).unwrap();
    assert_eq!(py.recv_must()[1], b"one");
    // Stay idle past the TTL: libzmq's PINGs keep the link alive.
    assert_eq!(ox_try_recv(&mut ox, 800), None);
    assert!(ox.events().unwrap() & opt::POLLOUT != 0, "link dropped although the peer pings");

    py.signal("STOP");
    let took = wait_for("the TTL to expire", Duration::from_secs(10), || ox.events().unwrap() & opt::POLLOUT == 0);
    assert!(took < Duration::from_millis(2_500), "TTL of 500 ms took {took:?}");
    py.signal("CONT");
}

#[test]
fn heartbeat_options_validate_like_libzmq() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Dealer).unwrap();
    assert_eq!(s.get_int(opt::HEARTBEAT_IVL), Ok(0));
    assert_eq!(s.get_int(opt::HEARTBEAT_TTL), Ok(0));
    assert_eq!(s.get_int(opt::HEARTBEAT_TIMEOUT), Ok(-1));
    s.set_int(opt::HEARTBEAT_TTL, 1_234).unwrap();
    assert_eq!(s.get_int(opt::HEARTBEAT_TTL), Ok(1_200), "kept in deciseconds");
    assert_eq!(s.set_int(opt::HEARTBEAT_TTL, 6_553_600), Err(Error::Invalid));
    assert_eq!(s.set_int(opt::HEARTBEAT_IVL, -1), Err(Error::Invalid));
    assert_eq!(s.set_int(opt::HEARTBEAT_TIMEOUT, -1), Err(Error::Invalid));
}

/// A network namespace joined to ours by a veth pair, removed on drop.
struct Netns {
    ns: String,
    host_if: String,
    host_ip: String,
    peer_ip: String,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("ip").args(args).output().map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

impl Netns {
    /// `Err` with the reason when this machine cannot make one (not root, no iproute2).
    fn new() -> Result<Netns, String> {
        let pid = std::process::id();
        let n = Netns {
            ns: format!("oxmqhb{pid}"),
            host_if: format!("oxh{pid}a"),
            host_ip: format!("10.213.{}.{}", (pid / 64) % 250, (pid % 64) * 4 + 1),
            peer_ip: format!("10.213.{}.{}", (pid / 64) % 250, (pid % 64) * 4 + 2),
        };
        let peer_if = format!("oxh{pid}b");
        ip(&["netns", "add", &n.ns])?;
        // From here on, Drop cleans up whatever was made.
        ip(&["link", "add", &n.host_if, "type", "veth", "peer", "name", &peer_if])?;
        ip(&["link", "set", &peer_if, "netns", &n.ns])?;
        ip(&["addr", "add", &format!("{}/30", n.host_ip), "dev", &n.host_if])?;
        ip(&["link", "set", &n.host_if, "up"])?;
        ip(&["netns", "exec", &n.ns, "ip", "addr", "add", &format!("{}/30", n.peer_ip), "dev", &peer_if])?;
        ip(&["netns", "exec", &n.ns, "ip", "link", "set", &peer_if, "up"])?;
        ip(&["netns", "exec", &n.ns, "ip", "link", "set", "lo", "up"])?;
        Ok(n)
    }

    /// Takes the link down (packets vanish: no FIN, no RST) or up again.
    fn link(&self, up: bool) {
        ip(&["link", "set", &self.host_if, if up { "up" } else { "down" }]).unwrap();
    }

    fn launcher(&self) -> std::process::Command {
        let mut c = std::process::Command::new("ip");
        c.args(["netns", "exec", &self.ns, &python()]);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["link", "del", &self.host_if]);
        let _ = ip(&["netns", "del", &self.ns]);
    }
}

/// A cut link (the peer's interface goes away without a FIN or RST: only heartbeats can tell)
/// is detected within the heartbeat timeout; when the link returns, oxmq reconnects and
/// traffic flows again. The libzmq peer runs in its own network namespace.
#[test]
fn cut_link_is_detected_and_reconnected() {
    require_pyzmq!();
    let net = match Netns::new() {
        Ok(n) => n,
        Err(why) => {
            eprintln!("skip: cannot make a network namespace ({why}); needs root and iproute2");
            return;
        }
    };
    let ctx = Context::new();
    let mut py = Peer::spawn_with("ROUTER", net.launcher());
    let ep = py.bind(&format!("tcp://{}:*", net.peer_ip));
    let mut ox = ox_socket(&ctx, T::Dealer);
    heartbeats(&mut ox);
    ox.set_int(opt::IMMEDIATE, 1).unwrap();
    ox.connect(&ep).unwrap();
    ox.send("one", 0).unwrap();
    let m = py.recv_must();
    assert_eq!(m[1], b"one");

    net.link(false);
    let took = wait_for("the cut link to be dropped", Duration::from_secs(10), || ox.events().unwrap() & opt::POLLOUT == 0);
    assert!(took < Duration::from_millis(8 * TIMEOUT as u64), "detection took {took:?}");

    net.link(true);
    wait_for("a new connection over the restored link", Duration::from_secs(20), || ox.events().unwrap() & opt::POLLOUT != 0);
    ox.send("two", 0).unwrap();
    let m = py.recv_must();
    assert_eq!(m[1], b"two");
    py.send(&[&m[0], b"reply"]);
    assert_eq!(ox_recv(&mut ox), vec![b"reply".to_vec()]);
}
