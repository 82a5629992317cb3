//! Helpers for the unit tests that run over real transports: unique endpoints, endpoints that
//! refuse connections, socket monitors, and waiting on a condition with a deadline.
//!
//! Nothing here sleeps to let things settle: a test waits for something observable (an event,
//! a message, a count reaching a value) and fails at a deadline.

use crate::monitor::MonitorEvent;
use crate::{opt, Context, Error, Socket, SocketType};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a test waits for anything that must happen.
pub(crate) const WAIT_MS: i32 = 5_000;

/// The transports with a wire (and so with connections that reconnect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wire {
    Tcp,
    Ipc,
}

/// A name unique within the machine (process id, counter).
pub(crate) fn unique(tag: &str) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    format!("oxmq-unit-{tag}-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed))
}

impl Wire {
    /// An endpoint to bind (tcp: a wildcard port; read it back with `last_endpoint`).
    pub(crate) fn bind_endpoint(self, tag: &str) -> String {
        match self {
            Wire::Tcp => "tcp://127.0.0.1:*".to_string(),
            Wire::Ipc => format!("ipc://{}", ipc_path(tag)),
        }
    }

    /// An endpoint where a connect is refused (ECONNREFUSED): tcp, a port the kernel just
    /// handed out and took back; ipc, a socket file whose listener is gone.
    pub(crate) fn refusing_endpoint(self, tag: &str) -> String {
        match self {
            Wire::Tcp => {
                let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
                format!("tcp://{}", l.local_addr().expect("local_addr"))
            }
            Wire::Ipc => {
                let path = ipc_path(tag);
                // Dropping a std listener closes it and leaves its file behind.
                drop(std::os::unix::net::UnixListener::bind(&path).expect("bind ipc"));
                format!("ipc://{path}")
            }
        }
    }

    /// A listener that accepts connections and never speaks (no ZMTP greeting), and the
    /// endpoint to connect to it.
    pub(crate) fn mute_listener(self, tag: &str) -> (MuteListener, String) {
        match self {
            Wire::Tcp => {
                let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
                let ep = format!("tcp://{}", l.local_addr().expect("local_addr"));
                (MuteListener::Tcp(l), ep)
            }
            Wire::Ipc => {
                let path = ipc_path(tag);
                let l = std::os::unix::net::UnixListener::bind(&path).expect("bind ipc");
                (MuteListener::Ipc(l, path.clone()), format!("ipc://{path}"))
            }
        }
    }
}

/// See [`Wire::mute_listener`].
pub(crate) enum MuteListener {
    Tcp(std::net::TcpListener),
    Ipc(std::os::unix::net::UnixListener, String),
}

impl MuteListener {
    /// Accepts one connection (blocking) and drops it at once: a peer that hangs up
    /// mid-handshake.
    pub(crate) fn accept_and_hang_up(&self) {
        match self {
            MuteListener::Tcp(l) => drop(l.accept().expect("accept")),
            MuteListener::Ipc(l, _) => drop(l.accept().expect("accept")),
        }
    }
}

impl Drop for MuteListener {
    fn drop(&mut self) {
        if let MuteListener::Ipc(_, path) = self {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn ipc_path(tag: &str) -> String {
    std::env::temp_dir().join(format!("{}.sock", unique(tag))).to_string_lossy().into_owned()
}

/// A socket whose sends and receives give up after [`WAIT_MS`], with LINGER 0.
pub(crate) fn socket(ctx: &Context, kind: SocketType) -> Socket {
    let mut s = ctx.socket(kind).expect("socket");
    s.set_int(opt::RCVTIMEO, WAIT_MS).expect("RCVTIMEO");
    s.set_int(opt::SNDTIMEO, WAIT_MS).expect("SNDTIMEO");
    s.set_int(opt::LINGER, 0).expect("LINGER");
    s
}

/// Monitors every event of `s` (version 1) and returns the reader, connected before anything
/// happens so that no event is lost.
pub(crate) fn watch(ctx: &Context, s: &mut Socket) -> Socket {
    let ep = format!("inproc://{}", unique("mon"));
    s.monitor(Some(&ep), crate::monitor::event::ALL).expect("monitor");
    let mut r = socket(ctx, SocketType::Pair);
    r.connect(&ep).expect("connect monitor");
    r
}

/// The next event about `endpoint` (events about other endpoints are skipped), as its name.
pub(crate) fn next_event(r: &mut Socket, endpoint: &str) -> &'static str {
    loop {
        let e = MonitorEvent::recv(r, 1, 0).unwrap_or_else(|err| panic!("no event for {endpoint}: {err:?}"));
        if e.local == endpoint {
            return crate::monitor::event::name(e.event).unwrap_or("?");
        }
    }
}

/// The events about `endpoint` up to and including `last`, by name.
pub(crate) fn events_until(r: &mut Socket, endpoint: &str, last: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    loop {
        let e = next_event(r, endpoint);
        out.push(e);
        if e == last {
            return out;
        }
        assert!(out.len() < 32, "no {last} in {out:?}");
    }
}

/// The events about `endpoint` queued now (read without waiting; others are skipped). Once
/// the sessions concerned have ended, this is everything they raised.
pub(crate) fn queued_events(r: &mut Socket, endpoint: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    loop {
        match MonitorEvent::recv(r, 1, opt::DONTWAIT) {
            Ok(e) if e.local == endpoint => out.push(crate::monitor::event::name(e.event).unwrap_or("?")),
            Ok(_) => {}
            Err(Error::Again) => return out,
            Err(e) => panic!("monitor: {e:?}"),
        }
    }
}

/// Waits until `cond` holds, looking every millisecond, and fails after [`WAIT_MS`]. For
/// states with no event of their own (the I/O threads' session count).
pub(crate) fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_millis(WAIT_MS as u64);
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Waits until the context's I/O threads run no session: every connection has ended.
pub(crate) fn no_sessions(ctx: &Context) {
    eventually("no session left", || ctx.io_sessions().iter().sum::<usize>() == 0);
}
