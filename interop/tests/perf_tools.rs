//! oxmq's perf tools (crate oxmq-perf) against libzmq's perf behaviour in pyzmq, a few thousand
//! messages each way: proof that the tools speak the wire protocol, not a benchmark.
//!
//! The tool functions run in-process (the binaries are thin wrappers around them). If the
//! binaries exist in this test's own profile directory (`target/release/local_thr`, or
//! `target/ci-test/...` under the test command's profile), they are also run.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const COUNT: u64 = 5000;

/// Starts `peer.py perf ROLE ...`; binders print "bound" first.
fn spawn_perf(role: &str, ep: &str, size: usize, count: u64) -> (std::process::Child, mpsc_lines::Lines) {
    let mut child = Command::new(python())
        .arg(peer_script())
        .args(["perf", role, ep, &size.to_string(), &count.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn peer.py perf");
    let lines = mpsc_lines::Lines::new(child.stdout.take().unwrap());
    (child, lines)
}

mod mpsc_lines {
    use std::sync::mpsc;
    use std::time::Duration;

    pub struct Lines(mpsc::Receiver<String>);

    impl Lines {
        pub fn new(r: impl std::io::Read + Send + 'static) -> Lines {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                use std::io::BufRead;
                for l in std::io::BufReader::new(r).lines().map_while(Result::ok) {
                    if tx.send(l).is_err() {
                        break;
                    }
                }
            });
            Lines(rx)
        }

        pub fn next(&self) -> Option<String> {
            self.0.recv_timeout(Duration::from_secs(60)).ok()
        }
    }
}

struct Kill(std::process::Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_tcp() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("tcp://127.0.0.1:{}", l.local_addr().unwrap().port())
}

#[test]
fn oxmq_local_thr_against_libzmq_remote_thr() {
    require_pyzmq!();
    for size in [1usize, 100, 10_000] {
        let ctx = oxmq::Context::new();
        let ep = free_tcp();
        let ep2 = ep.clone();
        let c = ctx.clone();
        let rx = std::thread::spawn(move || oxmq_perf::local_thr(&c, &ep2, size, COUNT));
        // remote_thr connects (and reconnects) until local_thr has bound.
        let (child, _lines) = spawn_perf("remote_thr", &ep, size, COUNT);
        let _k = Kill(child);
        let report = rx.join().unwrap().unwrap();
        assert_eq!((report.size, report.count), (size, COUNT));
        let text = report.to_string();
        assert!(text.starts_with(&format!("message size: {size} [B]\nmessage count: {COUNT}\nmean throughput: ")), "{text}");
        eprintln!("oxmq local_thr <- libzmq remote_thr, {size} B:\n{text}");
    }
}

#[test]
fn oxmq_remote_thr_against_libzmq_local_thr() {
    require_pyzmq!();
    let ep = free_tcp();
    let (child, lines) = spawn_perf("local_thr", &ep, 100, COUNT);
    let _k = Kill(child);
    assert_eq!(lines.next().as_deref(), Some("bound"));
    let ctx = oxmq::Context::new();
    oxmq_perf::remote_thr(&ctx, &ep, 100, COUNT).unwrap();
    ctx.term().unwrap();
    let out: Vec<String> = (0..4).map(|_| lines.next().expect("local_thr output")).collect();
    assert_eq!(out[0], "message size: 100 [B]");
    assert_eq!(out[1], format!("message count: {COUNT}"));
    eprintln!("libzmq local_thr <- oxmq remote_thr: {out:?}");
}

#[test]
fn oxmq_remote_lat_against_libzmq_local_lat() {
    require_pyzmq!();
    let ep = free_tcp();
    let (child, lines) = spawn_perf("local_lat", &ep, 64, 2000);
    let _k = Kill(child);
    assert_eq!(lines.next().as_deref(), Some("bound"));
    let ctx = oxmq::Context::new();
    let r = oxmq_perf::remote_lat(&ctx, &ep, 64, 2000).unwrap();
    assert_eq!((r.size, r.roundtrips), (64, 2000));
    eprintln!("oxmq remote_lat -> libzmq local_lat:\n{r}");
}

#[test]
fn oxmq_local_lat_against_libzmq_remote_lat() {
    require_pyzmq!();
    let ep = free_tcp();
    let ctx = oxmq::Context::new();
    let c = ctx.clone();
    let ep2 = ep.clone();
    let server = std::thread::spawn(move || oxmq_perf::local_lat(&c, &ep2, 64, 2000));
    let (child, lines) = spawn_perf("remote_lat", &ep, 64, 2000);
    let _k = Kill(child);
    server.join().unwrap().unwrap();
    let out: Vec<String> = (0..3).map(|_| lines.next().expect("remote_lat output")).collect();
    assert_eq!(out[0], "message size: 64 [B]");
    assert_eq!(out[1], "roundtrip count: 2000");
    assert!(out[2].starts_with("average latency: ") && out[2].ends_with(" [us]"));
    eprintln!("libzmq remote_lat -> oxmq local_lat: {out:?}");
}

/// The perf binaries of this test's profile, when built (a workspace `cargo test` builds them
/// for oxmq-perf's own tests; else `cargo build --release -p oxmq-perf`).
#[test]
fn release_binaries_against_libzmq() {
    require_pyzmq!();
    // This test runs from target/PROFILE/deps/.
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).map(PathBuf::from).unwrap();
    let bin = |name: &str| dir.join(name);
    if !bin("local_thr").exists() || !bin("remote_lat").exists() {
        eprintln!("skip: {} has no local_thr (cargo build --release -p oxmq-perf)", dir.display());
        return;
    }
    let ep = free_tcp();
    let local = Command::new(bin("local_thr")).args([&ep, "100", "5000"]).stdout(Stdio::piped()).spawn().unwrap();
    let mut local = Kill(local);
    let (child, _l) = spawn_perf("remote_thr", &ep, 100, 5000);
    let _k = Kill(child);
    let out = local.0.stdout.take().unwrap();
    let lines: Vec<String> = BufReader::new(out).lines().map_while(Result::ok).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[0], "message size: 100 [B]");
    assert_eq!(lines[1], "message count: 5000");
    assert!(lines[2].starts_with("mean throughput: ") && lines[2].ends_with(" [msg/s]"));
    assert!(lines[3].starts_with("mean throughput: ") && lines[3].ends_with(" [Mb/s]"));
    assert!(local.0.wait().unwrap().success());

    let ep = free_tcp();
    let (child, lines) = spawn_perf("local_lat", &ep, 1, 1000);
    let _k2 = Kill(child);
    assert_eq!(lines.next().as_deref(), Some("bound"));
    let out = Command::new(bin("remote_lat")).args([&ep, "1", "1000"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("message size: 1 [B]\nroundtrip count: 1000\naverage latency: "), "{text}");
}
