//! End to end over real processes: a name server process, peers wired only by names, a
//! service restart, an owner killed with SIGKILL. Every wait has a deadline.

mod common;
use common::*;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn three_processes_wired_only_by_names() {
    let (_ns, host) = server_at("tcp://127.0.0.1:*");
    let n = 50;
    let consumer = Proc::peer(&host, &["queue", "Q2", &n.to_string()]);
    consumer.expect_prefix("READY tcp://127.0.0.1:");
    let relay = Proc::peer(&host, &["relay", "Q1", "E2", "Q2", &n.to_string()]);
    relay.expect_prefix("READY");
    let source = Proc::peer(&host, &["source", "E1", "Q1", &n.to_string()]);
    source.expect_prefix("READY");
    source.expect_prefix("SENT");
    for i in 0..n {
        assert_eq!(consumer.line(20), format!("GOT relayed msg-{i}"));
    }
    relay.expect_prefix("SENT");
    source.wait_ok(20);
    relay.wait_ok(20);
    consumer.wait_ok(20);
}

#[test]
fn a_killed_owner_expires_and_a_new_one_is_found_again() {
    let (_ns, host) = server_at("tcp://127.0.0.1:*");
    let mut owner = Proc::peer(&host, &["exchange", "EX"]);
    let first = owner.expect_prefix("READY ");
    lookup_until(&host, "EX", |r| r.is_some(), 10);
    // A consumer wired to EX by name, before the owner dies.
    let sink = Proc::peer(&host, &["sink", "EX", "2"]);
    sink.expect_prefix("READY");
    // The sink's subscription may still be in flight: send until it has a message.
    loop {
        owner.say("before");
        owner.expect_prefix("SENT");
        if let Ok(l) = sink.lines.recv_timeout(Duration::from_millis(100)) {
            assert_eq!(l, "GOT before");
            break;
        }
    }
    owner.kill9();
    // No goodbye: the name goes when the heartbeats stop, within the ttl (plus the server's
    // sweep and one lookup's round trip).
    let gone = lookup_until(&host, "EX", |r| r.is_none(), 10);
    assert!(gone < Duration::from_millis(TTL_MS * 3), "expired after {gone:?}");
    // A new owner (another port) is found again, and the sink's wire follows it.
    let mut owner2 = Proc::peer(&host, &["exchange", "EX"]);
    let second = owner2.expect_prefix("READY ");
    assert_ne!(first, second);
    lookup_until(&host, "EX", |r| r.is_some_and(|s| second.ends_with(s.split(' ').nth(1).unwrap_or("?"))), 10);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        owner2.say("after");
        owner2.expect_prefix("SENT");
        if let Ok(l) = sink.lines.recv_timeout(Duration::from_millis(100)) {
            assert_eq!(l, "GOT after");
            break;
        }
        assert!(Instant::now() < deadline, "the sink never followed the name to its new owner");
    }
    sink.wait_ok(10);
}

#[test]
fn names_survive_a_name_server_restart() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let bind = format!("tcp://127.0.0.1:{port}");
    let (mut ns, host) = server_at(&bind);
    let consumer = Proc::peer(&host, &["queue", "RQ", "1"]);
    consumer.expect_prefix("READY");
    ns.kill9();
    let (_ns2, host2) = server_at(&bind);
    assert_eq!(host, host2);
    // The owner's next heartbeat finds its session unknown and registers RQ again.
    lookup_until(&host, "RQ", |r| r.is_some_and(|s| s.starts_with("queue tcp://")), 15);
    let source = Proc::peer(&host, &["source", "RE", "RQ", "1"]);
    source.expect_prefix("READY");
    assert_eq!(consumer.line(20), "GOT msg-0");
    source.wait_ok(20);
    consumer.wait_ok(20);
}

#[test]
fn two_owners_of_one_name_are_refused() {
    let (_ns, host) = server_at("tcp://127.0.0.1:*");
    let first = Proc::peer(&host, &["queue", "ONE", "1"]);
    first.expect_prefix("READY");
    let out = Command::new(PEER).args([host.as_str(), "queue", "ONE", "1"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already taken") && err.contains(&format!("errno {}", libc::EADDRINUSE)), "{err}");
}
