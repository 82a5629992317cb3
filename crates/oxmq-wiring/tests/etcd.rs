//! The name service over a real etcd: two name servers share one directory; names of a
//! SIGKILLed owner and of a SIGKILLed name server expire through etcd's leases.
//!
//! Needs the `etcd` binary (Debian's etcd-server). Without it the tests print why and pass,
//! unless `OXMQ_WIRING_REQUIRE_ETCD=1` (set by scripts/test.d/70-wiring.sh, which installs
//! etcd), when its absence is a failure.

mod common;
use common::*;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Etcd {
    child: Child,
    url: String,
    _dir: TempDir,
}

struct TempDir(std::path::PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn etcd() -> Option<Etcd> {
    let found = Command::new("etcd").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    if !found {
        assert!(std::env::var("OXMQ_WIRING_REQUIRE_ETCD").is_err(), "etcd is required but not installed");
        eprintln!("skipped: no etcd binary (apt-get install etcd-server)");
        return None;
    }
    // The ports are free when chosen but may be taken before etcd binds them (another test's
    // etcd, an outgoing connection): an etcd that exits is started again on new ports.
    for _attempt in 0..5 {
        let dir = std::env::temp_dir().join(format!("oxmq-wiring-etcd-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cp, pp) = (free_port(), free_port());
        let url = format!("http://127.0.0.1:{cp}");
        let child = Command::new("etcd")
            .args(["--data-dir", dir.to_str().unwrap(), "--name", "oxmq-test"])
            .args(["--listen-client-urls", &url, "--advertise-client-urls", &url])
            .args(["--listen-peer-urls", &format!("http://127.0.0.1:{pp}")])
            .args(["--initial-advertise-peer-urls", &format!("http://127.0.0.1:{pp}")])
            .args(["--initial-cluster", &format!("oxmq-test=http://127.0.0.1:{pp}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start etcd");
        let mut e = Etcd { child, url, _dir: TempDir(dir) };
        // Ready when a lease can be granted (with a deadline).
        let client = oxmq_wiring::etcd::Etcd::new(&e.url).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if client.grant(5).is_ok() {
                return Some(e);
            }
            if e.child.try_wait().ok().flatten().is_some() {
                break; // exited: most likely a port taken meanwhile; try new ones
            }
            assert!(Instant::now() < deadline, "etcd did not come up");
            std::thread::sleep(Duration::from_millis(50)); // polling for readiness, with a deadline
        }
    }
    panic!("etcd exited at start five times");
}

#[test]
fn two_name_servers_share_one_directory_in_etcd() {
    let Some(etcd) = etcd() else { return };
    let (_a, host_a) = server_at_with("tcp://127.0.0.1:*", &["--etcd", &etcd.url]);
    let (_b, host_b) = server_at_with("tcp://127.0.0.1:*", &["--etcd", &etcd.url]);

    // Three processes wired only by names, registered through different servers.
    let n = 20;
    let consumer = Proc::peer(&host_a, &["queue", "Q2", &n.to_string()]);
    consumer.expect_prefix("READY");
    let relay = Proc::peer(&host_b, &["relay", "Q1", "E2", "Q2", &n.to_string()]);
    relay.expect_prefix("READY");
    let source = Proc::peer(&host_a, &["source", "E1", "Q1", &n.to_string()]);
    source.expect_prefix("READY");
    for i in 0..n {
        assert_eq!(consumer.line(20), format!("GOT relayed msg-{i}"));
    }
    source.wait_ok(20);
    relay.wait_ok(20);
    consumer.wait_ok(20);

    // One owner per name across servers.
    let mut owner = Proc::peer(&host_a, &["exchange", "EX"]);
    owner.expect_prefix("READY ");
    lookup_until(&host_b, "EX", |r| r.is_some_and(|s| s.starts_with("exchange tcp://")), 10);
    let out = Command::new(PEER).args([host_b.as_str(), "queue", "EX", "1"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already taken"));

    // A SIGKILLed owner's name expires (its server revokes the session's lease).
    owner.kill9();
    let gone = lookup_until(&host_b, "EX", |r| r.is_none(), 15);
    assert!(gone < Duration::from_millis(TTL_MS * 4), "expired after {gone:?}");
    // And a new owner, through the other server, is found again.
    let owner2 = Proc::peer(&host_b, &["exchange", "EX"]);
    owner2.expect_prefix("READY ");
    lookup_until(&host_a, "EX", |r| r.is_some(), 10);
}

#[test]
fn a_dead_name_servers_names_expire_in_etcd() {
    let Some(etcd) = etcd() else { return };
    let (mut a, host_a) = server_at_with("tcp://127.0.0.1:*", &["--etcd", &etcd.url]);
    let (_b, host_b) = server_at_with("tcp://127.0.0.1:*", &["--etcd", &etcd.url]);
    let owner = Proc::peer(&host_a, &["queue", "ORPHAN", "1"]);
    owner.expect_prefix("READY");
    lookup_until(&host_b, "ORPHAN", |r| r.is_some(), 10);
    // Server A dies with the lease it kept alive: etcd expires it (at least etcd's minimum
    // lease TTL, a few seconds), though the owner lives on.
    a.kill9();
    lookup_until(&host_b, "ORPHAN", |r| r.is_none(), 20);
    drop(owner);
}
