//! Harness for the interop tests: a libzmq socket in a Python child process (peers/peer.py),
//! driven line by line, and helpers to wire it to an oxmq socket over tcp or ipc.
//!
//! Every child runs under two limits: peer.py exits by itself after a hard timeout, and the
//! [`Peer`] guard kills it when the test ends, passes or panics. Every reply is awaited with a
//! deadline, so a silent peer fails the test instead of hanging it.

#![allow(dead_code)]

use oxmq::{opt, Context, Error, Msg, Socket, SocketType};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

/// How long any reply from the peer may take.
pub const REPLY: Duration = Duration::from_secs(20);
/// Hard lifetime of a peer process, in seconds.
pub const HARD_TIMEOUT_S: u32 = 90;
/// Receive timeout of oxmq sockets in these tests.
pub const RCV_MS: i32 = 5_000;

pub fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string())
}

pub fn peer_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers").join("peer.py")
}

/// Whether pyzmq can be imported; `Err` holds the reason.
pub fn pyzmq() -> &'static Result<String, String> {
    static CHECK: OnceLock<Result<String, String>> = OnceLock::new();
    CHECK.get_or_init(|| {
        let out = Command::new(python())
            .args(["-c", "import zmq; print(zmq.zmq_version())"])
            .output()
            .map_err(|e| format!("cannot run {}: {e}", python()))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(format!("pyzmq is not importable ({}); pip install pyzmq", String::from_utf8_lossy(&out.stderr).trim()))
        }
    })
}

/// Returns from the test when pyzmq is missing (printing why), or fails it when CI is set.
#[macro_export]
macro_rules! require_pyzmq {
    () => {
        if let Err(why) = $crate::common::pyzmq() {
            if std::env::var_os("CI").is_some() {
                panic!("CI is set and the libzmq peer is unavailable: {why}");
            }
            eprintln!("skip: {why}");
            return;
        }
    };
}

/// A libzmq socket in a child process.
pub struct Peer {
    pub kind: String,
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Peer {
    pub fn spawn(kind: &str) -> Peer {
        Peer::spawn_with(kind, Command::new(python()))
    }

    /// Spawns the peer with `cmd` as the launcher (e.g. `ip netns exec NS python3`).
    pub fn spawn_with(kind: &str, mut cmd: Command) -> Peer {
        let mut child = cmd
            .arg(peer_script())
            .arg(kind)
            .arg(HARD_TIMEOUT_S.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn peer.py");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        let mut p = Peer { kind: kind.to_string(), child, stdin, lines: rx };
        assert_eq!(p.reply(REPLY), "ok ready", "peer.py {kind} did not start");
        p
    }

    /// Sends a command without waiting for its reply (for `serve`).
    pub fn start(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to peer");
        self.stdin.flush().unwrap();
    }

    /// The next reply line.
    pub fn reply(&mut self, within: Duration) -> String {
        match self.lines.recv_timeout(within) {
            Ok(l) => l,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("libzmq {} peer: no reply within {within:?}", self.kind),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("libzmq {} peer exited (see its stderr above)", self.kind),
        }
    }

    /// Runs a command; `Ok(rest)` for "ok rest"/"msg rest", `Err(line)` for "err ...".
    pub fn try_cmd(&mut self, line: &str) -> Result<String, String> {
        self.start(line);
        let r = self.reply(REPLY);
        if let Some(rest) = r.strip_prefix("ok").or_else(|| r.strip_prefix("msg")) {
            Ok(rest.trim_start().to_string())
        } else {
            Err(r)
        }
    }

    pub fn cmd(&mut self, line: &str) -> String {
        let short: String = line.chars().take(80).collect();
        self.try_cmd(line).unwrap_or_else(|e| panic!("libzmq {} peer: `{short}` failed: {e}", self.kind))
    }

    pub fn bind(&mut self, ep: &str) -> String {
        self.cmd(&format!("bind {ep}"))
    }

    pub fn connect(&mut self, ep: &str) {
        self.cmd(&format!("connect {ep}"));
    }

    pub fn set_int(&mut self, name: &str, v: i64) {
        self.cmd(&format!("setint {name} {v}"));
    }

    pub fn set_bytes(&mut self, name: &str, v: &[u8]) {
        self.cmd(&format!("setbytes {name} {}", hex(v)));
    }

    pub fn send(&mut self, parts: &[&[u8]]) {
        let frames: Vec<String> = parts.iter().map(|p| hex(p)).collect();
        self.cmd(&format!("send {}", frames.join(" ")));
    }

    pub fn try_send(&mut self, parts: &[&[u8]]) -> Result<(), String> {
        let frames: Vec<String> = parts.iter().map(|p| hex(p)).collect();
        self.try_cmd(&format!("send {}", frames.join(" "))).map(|_| ())
    }

    /// One whole message, or `None` when nothing arrives within `ms`.
    pub fn recv(&mut self, ms: u32) -> Option<Vec<Vec<u8>>> {
        match self.try_cmd(&format!("recv {ms}")) {
            Ok(rest) => Some(unhex_frames(&rest)),
            Err(e) if e.starts_with("err EAGAIN") => None,
            Err(e) => panic!("libzmq {} peer: recv failed: {e}", self.kind),
        }
    }

    /// One whole message that must arrive.
    pub fn recv_must(&mut self) -> Vec<Vec<u8>> {
        self.recv(RCV_MS as u32).unwrap_or_else(|| panic!("libzmq {} peer: nothing received", self.kind))
    }

    /// Sends a signal to the child (`STOP` freezes it with its sockets open, `CONT` resumes).
    pub fn signal(&mut self, sig: &str) {
        let st = Command::new("kill").arg(format!("-{sig}")).arg(self.child.id().to_string()).status().expect("run kill");
        assert!(st.success(), "kill -{sig} failed");
    }

    /// Stops the child at once, like a crash.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".to_string();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

pub fn unhex_frames(s: &str) -> Vec<Vec<u8>> {
    s.split_whitespace().map(unhex).collect()
}

// --- Wiring ------------------------------------------------------------------------------------

static SEQ: AtomicU64 = AtomicU64::new(0);

/// Transports shared with libzmq (inproc cannot cross a process).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Ipc,
}

impl Transport {
    pub fn bind_endpoint(self) -> String {
        match self {
            Transport::Tcp => "tcp://127.0.0.1:*".into(),
            Transport::Ipc => {
                let n = SEQ.fetch_add(1, Ordering::Relaxed);
                let p = std::env::temp_dir().join(format!("oxmq-interop-{}-{n}.sock", std::process::id()));
                format!("ipc://{}", p.display())
            }
        }
    }
}

/// Which side binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binder {
    Oxmq,
    Libzmq,
}

#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub transport: Transport,
    pub binder: Binder,
}

pub fn ox_socket(ctx: &Context, kind: SocketType) -> Socket {
    let mut s = ctx.socket(kind).unwrap();
    s.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    s.set_int(opt::SNDTIMEO, RCV_MS).unwrap();
    s.set_int(opt::LINGER, 1000).unwrap();
    s.set_int(opt::RECONNECT_IVL, 20).unwrap();
    s
}

/// Connects an oxmq socket of `ox` and a libzmq socket of `py` as `setup` says. Options that
/// must precede the connection are applied by `pre_ox` / `pre_py`.
pub fn link(
    setup: Setup,
    ctx: &Context,
    ox: SocketType,
    py: &str,
    pre_ox: impl FnOnce(&mut Socket),
    pre_py: impl FnOnce(&mut Peer),
) -> (Socket, Peer, String) {
    let mut s = ox_socket(ctx, ox);
    pre_ox(&mut s);
    let mut p = Peer::spawn(py);
    pre_py(&mut p);
    let ep = setup.transport.bind_endpoint();
    let ep = match setup.binder {
        Binder::Oxmq => {
            s.bind(&ep).unwrap_or_else(|e| panic!("oxmq bind {ep}: {e:?}"));
            let real = if ep.starts_with("tcp://") { s.last_endpoint().unwrap() } else { ep };
            p.connect(&real);
            real
        }
        Binder::Libzmq => {
            let real = p.bind(&ep);
            s.connect(&real).unwrap_or_else(|e| panic!("oxmq connect {real}: {e:?}"));
            real
        }
    };
    (s, p, ep)
}

pub fn ox_recv(s: &mut Socket) -> Vec<Vec<u8>> {
    match s.recv_multipart(0) {
        Ok(parts) => parts.iter().map(|m| m.to_vec()).collect(),
        Err(e) => panic!("oxmq {:?} recv: {e:?}", s.socket_type()),
    }
}

pub fn ox_send(s: &mut Socket, parts: &[&[u8]]) {
    s.send_multipart(parts.iter().copied(), 0).unwrap_or_else(|e| panic!("oxmq {:?} send: {e:?}", s.socket_type()));
}

pub fn ox_try_recv(s: &mut Socket, ms: i64) -> Option<Vec<Vec<u8>>> {
    let mut items = [oxmq::PollItem::Socket { socket: s, events: opt::POLLIN, revents: 0 }];
    if oxmq::poll(&mut items, ms).unwrap() == 0 {
        return None;
    }
    match s.recv_multipart(opt::DONTWAIT) {
        Ok(p) => Some(p.iter().map(|m| m.to_vec()).collect()),
        Err(Error::Again) => None,
        Err(e) => panic!("recv: {e:?}"),
    }
}

/// Retries `attempt` up to a deadline (for conditions with no event of their own).
pub fn eventually<T>(what: &str, mut attempt: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(v) = attempt() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

pub fn bytes_of(m: &Msg) -> Vec<u8> {
    m.to_vec()
}

/// Instantiates `fn name(setup: Setup)` four times: {tcp, ipc} × {oxmq binds, libzmq binds}.
#[macro_export]
macro_rules! both_ways {
    ($($name:ident),* $(,)?) => {
        mod tcp_oxmq_binds {
            use $crate::common::*;
            $( #[test] fn $name() { $crate::require_pyzmq!(); super::$name(Setup { transport: Transport::Tcp, binder: Binder::Oxmq }) } )*
        }
        mod tcp_libzmq_binds {
            use $crate::common::*;
            $( #[test] fn $name() { $crate::require_pyzmq!(); super::$name(Setup { transport: Transport::Tcp, binder: Binder::Libzmq }) } )*
        }
        mod ipc_oxmq_binds {
            use $crate::common::*;
            $( #[test] fn $name() { $crate::require_pyzmq!(); super::$name(Setup { transport: Transport::Ipc, binder: Binder::Oxmq }) } )*
        }
        mod ipc_libzmq_binds {
            use $crate::common::*;
            $( #[test] fn $name() { $crate::require_pyzmq!(); super::$name(Setup { transport: Transport::Ipc, binder: Binder::Libzmq }) } )*
        }
    };
}
