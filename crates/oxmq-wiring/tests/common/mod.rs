//! Helpers for the multi-process tests: child processes with line-wise output, a name
//! server process, and directory polling with deadlines.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

pub const SERVER: &str = env!("CARGO_BIN_EXE_oxmq-name-server");
pub const PEER: &str = env!("CARGO_BIN_EXE_oxmq-wiring-peer");
/// Names of dead owners expire within this ttl (the peers' heartbeat setting).
pub const TTL_MS: u64 = 600;

/// A child process whose stdout lines arrive on a channel; killed when dropped.
pub struct Proc {
    pub child: Child,
    pub lines: Receiver<String>,
    stdin: Option<ChildStdin>,
}

impl Proc {
    pub fn spawn(cmd: &mut Command) -> Proc {
        let mut child = cmd
            .env("OXMQ_WIRING_TTL_MS", TTL_MS.to_string())
            .env("OXMQ_WIRING_TIMEOUT_MS", "1000")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        let out: ChildStdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Proc { child, lines, stdin }
    }

    pub fn peer(service: &str, args: &[&str]) -> Proc {
        Proc::spawn(Command::new(PEER).arg(service).args(args))
    }

    /// The next line, within `secs`.
    pub fn line(&self, secs: u64) -> String {
        self.lines.recv_timeout(Duration::from_secs(secs)).unwrap_or_else(|_| panic!("no line within {secs} s"))
    }

    pub fn expect_prefix(&self, prefix: &str) -> String {
        let l = self.line(20);
        assert!(l.starts_with(prefix), "expected {prefix}…, got {l:?}");
        l
    }

    pub fn say(&mut self, line: &str) {
        let s = self.stdin.as_mut().unwrap();
        writeln!(s, "{line}").unwrap();
        s.flush().unwrap();
    }

    pub fn wait_ok(mut self, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                assert!(st.success(), "exit {st}");
                return;
            }
            assert!(Instant::now() < deadline, "process did not exit");
            std::thread::sleep(Duration::from_millis(10)); // polling for exit, with a deadline
        }
    }

    pub fn kill9(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A name server process (memory directory) on a port of its choosing; its `host:port`.
pub fn server_at(bind: &str) -> (Proc, String) {
    server_at_with(bind, &[])
}

/// A name server process with extra arguments of its choosing; its `host:port`.
pub fn server_at_with(bind: &str, extra: &[&str]) -> (Proc, String) {
    let p = Proc::spawn(Command::new(SERVER).args(["--bind", bind, "--print-endpoint"]).args(extra));
    let ep = p.line(20);
    let host = ep.trim_start_matches("tcp://").to_string();
    (p, host)
}

/// Runs `oxmq-wiring-peer lookup` until `ok(result)` holds or the deadline passes; how long
/// it took.
pub fn lookup_until(host: &str, name: &str, ok: impl Fn(Option<&str>) -> bool, secs: u64) -> Duration {
    let t0 = Instant::now();
    loop {
        let out = Command::new(PEER).args([host, "lookup", name]).env("OXMQ_WIRING_TIMEOUT_MS", "1000").output().unwrap();
        let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let found = if out.status.success() { Some(s.as_str()) } else { None };
        if ok(found) {
            return t0.elapsed();
        }
        assert!(t0.elapsed() < Duration::from_secs(secs), "lookup of {name} never satisfied (last: {found:?})");
        std::thread::sleep(Duration::from_millis(50)); // polling the directory, with a deadline
    }
}
