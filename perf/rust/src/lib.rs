//! libzmq's classic perf tools, on oxmq.
//!
//! Each tool is a function here and a ten-line binary in `src/bin/`, so the interop tests can run
//! the very same code in-process against a libzmq peer. The command lines, the output lines and
//! the points where the stopwatch starts and stops are libzmq's (`perf/local_thr.cpp` and
//! friends), so numbers from the two implementations can be set side by side:
//!
//! - `local_thr <bind-to> <message-size> <message-count>`: PULL; the clock starts when the first
//!   message arrives and stops at the last one.
//! - `remote_thr <connect-to> <message-size> <message-count>`: PUSH; sends and closes (the close
//!   waits for delivery, LINGER being infinite by default).
//! - `local_lat <bind-to> <message-size> <roundtrip-count>`: REP echo.
//! - `remote_lat <connect-to> <message-size> <roundtrip-count>`: REQ; latency is the elapsed time
//!   divided by twice the round trips.
//! - `inproc_thr` / `inproc_lat <message-size> <count>`: both ends in one process over inproc.
//!
//! The four TCP tools take an optional last argument `<enable_curve>`, as libzmq's perf tools
//! do: a non-zero number turns CURVE on, the binding side being the server and the connecting
//! side the client, with fixed test keys ([`SERVER_SECRET`] and friends) so the two processes
//! need not exchange keys.
//!
//! The hot loops allocate nothing themselves: receivers reuse one [`Msg`]; senders clone one
//! prepared body (a reference-count bump for large bodies, an inline copy for small ones).

pub mod asynch;

use oxmq::{opt, Context, Msg, SocketType};
use std::fmt;
use std::time::Instant;

/// Endpoint the in-process tools use, as libzmq's do.
pub const INPROC_THR_ENDPOINT: &str = "inproc://thr_test";
/// Endpoint of `inproc_lat`.
pub const INPROC_LAT_ENDPOINT: &str = "inproc://lat_test";

/// A failed step, printed the way libzmq's tools print it: `error in zmq_bind: Address already in use`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfError(pub String);

impl fmt::Display for PerfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PerfError {}

fn step<T>(what: &str, r: oxmq::Result<T>) -> Result<T, PerfError> {
    r.map_err(|e| PerfError(format!("error in {what}: {e}")))
}

/// The perf tools' CURVE keys: the example pairs of zmq_curve(7) (Z85), the same as
/// `perf/c/perf_curve.h` uses, so C and Rust tools can face each other.
pub const SERVER_PUBLIC: &str = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
/// Server secret key.
pub const SERVER_SECRET: &str = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
/// Client public key.
pub const CLIENT_PUBLIC: &str = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
/// Client secret key.
pub const CLIENT_SECRET: &str = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

/// Makes `s` a CURVE server (`server`) or client with the fixed keys, when `curve` is set.
pub fn curve_setup(s: &mut oxmq::Socket, curve: bool, server: bool) -> Result<(), PerfError> {
    if !curve {
        return Ok(());
    }
    let set = |s: &mut oxmq::Socket, o: i32, v: &[u8]| step("zmq_setsockopt", s.setsockopt(o, v));
    if server {
        step("zmq_setsockopt", s.set_int(opt::CURVE_SERVER, 1))?;
        set(s, opt::CURVE_SECRETKEY, SERVER_SECRET.as_bytes())
    } else {
        set(s, opt::CURVE_SERVERKEY, SERVER_PUBLIC.as_bytes())?;
        set(s, opt::CURVE_PUBLICKEY, CLIENT_PUBLIC.as_bytes())?;
        set(s, opt::CURVE_SECRETKEY, CLIENT_SECRET.as_bytes())
    }
}

fn check_size(msg: &Msg, size: usize) -> Result<(), PerfError> {
    if msg.len() != size {
        return Err(PerfError("message of incorrect size received".into()));
    }
    Ok(())
}

/// Arguments of every tool: endpoint (absent for the inproc tools), size, count, and for the
/// TCP tools the optional `<enable_curve>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    pub endpoint: String,
    pub size: usize,
    pub count: u64,
    pub curve: bool,
}

/// Parses `<endpoint> <message-size> <count> [<enable_curve>]` (or `<message-size> <count>`
/// when `endpoint` is false). `None` means: print the usage line and exit 1, as libzmq does.
pub fn parse_args(argv: &[String], endpoint: bool) -> Option<Args> {
    let want = if endpoint { 4 } else { 3 };
    if argv.len() != want && !(endpoint && argv.len() == want + 1) {
        return None;
    }
    let rest = &argv[want - 2..want];
    let size = rest[0].trim().parse::<usize>().ok()?;
    let count = rest[1].trim().parse::<u64>().ok()?;
    if count == 0 {
        return None;
    }
    let curve = match argv.get(want) {
        Some(c) => c.trim().parse::<i64>().ok()? != 0,
        None => false,
    };
    let endpoint = if endpoint { argv[1].clone() } else { String::new() };
    Some(Args { endpoint, size, count, curve })
}

/// Throughput measured by the receiving side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThrReport {
    pub size: usize,
    pub count: u64,
    /// Microseconds from the first message to the last (at least 1).
    pub elapsed_us: u64,
}

impl ThrReport {
    /// Messages per second, truncated like libzmq's `unsigned long` cast.
    pub fn msgs_per_sec(&self) -> u64 {
        (self.count as f64 / self.elapsed_us as f64 * 1_000_000.0) as u64
    }

    /// Megabits per second, computed from the truncated rate as libzmq does.
    pub fn megabits(&self) -> f64 {
        (self.msgs_per_sec() as f64 * self.size as f64 * 8.0) / 1_000_000.0
    }
}

impl fmt::Display for ThrReport {
    /// libzmq's four output lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "message size: {} [B]", self.size)?;
        writeln!(f, "message count: {}", self.count)?;
        writeln!(f, "mean throughput: {} [msg/s]", self.msgs_per_sec())?;
        writeln!(f, "mean throughput: {:.3} [Mb/s]", self.megabits())
    }
}

/// Latency measured by the requesting side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatReport {
    pub size: usize,
    pub roundtrips: u64,
    pub elapsed_us: u64,
}

impl LatReport {
    /// One-way latency in microseconds: elapsed / (2 × round trips).
    pub fn latency_us(&self) -> f64 {
        self.elapsed_us as f64 / (self.roundtrips as f64 * 2.0)
    }
}

impl fmt::Display for LatReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "message size: {} [B]", self.size)?;
        writeln!(f, "roundtrip count: {}", self.roundtrips)?;
        writeln!(f, "average latency: {:.3} [us]", self.latency_us())
    }
}

fn elapsed_us(start: Instant) -> u64 {
    (start.elapsed().as_micros() as u64).max(1)
}

/// A body of `size` zero bytes to clone per send.
fn body(size: usize) -> Msg {
    Msg::with_size(size)
}

/// PULL side of the throughput test. Blocks until `count` messages have arrived.
pub fn local_thr(ctx: &Context, bind_to: &str, size: usize, count: u64) -> Result<ThrReport, PerfError> {
    local_thr_curve(ctx, bind_to, size, count, false)
}

/// [`local_thr`], as a CURVE server when `curve` is set.
pub fn local_thr_curve(ctx: &Context, bind_to: &str, size: usize, count: u64, curve: bool) -> Result<ThrReport, PerfError> {
    let mut s = step("zmq_socket", ctx.socket(SocketType::Pull))?;
    curve_setup(&mut s, curve, true)?;
    step("zmq_bind", s.bind(bind_to))?;
    pull_loop(&mut s, size, count)
}

fn pull_loop(s: &mut oxmq::Socket, size: usize, count: u64) -> Result<ThrReport, PerfError> {
    let mut msg = Msg::new();
    step("zmq_recvmsg", s.recv_msg(&mut msg, 0))?;
    check_size(&msg, size)?;
    let start = Instant::now();
    for _ in 1..count {
        step("zmq_recvmsg", s.recv_msg(&mut msg, 0))?;
        check_size(&msg, size)?;
    }
    Ok(ThrReport { size, count, elapsed_us: elapsed_us(start) })
}

/// PUSH side of the throughput test. Returns once the socket is closed, which (LINGER being
/// infinite) means every message was handed to the peer.
pub fn remote_thr(ctx: &Context, connect_to: &str, size: usize, count: u64) -> Result<(), PerfError> {
    remote_thr_curve(ctx, connect_to, size, count, false)
}

/// [`remote_thr`], as a CURVE client when `curve` is set.
pub fn remote_thr_curve(ctx: &Context, connect_to: &str, size: usize, count: u64, curve: bool) -> Result<(), PerfError> {
    let mut s = step("zmq_socket", ctx.socket(SocketType::Push))?;
    curve_setup(&mut s, curve, false)?;
    step("zmq_connect", s.connect(connect_to))?;
    push_loop(&mut s, size, count)
}

fn push_loop(s: &mut oxmq::Socket, size: usize, count: u64) -> Result<(), PerfError> {
    let template = body(size);
    for _ in 0..count {
        let mut msg = template.clone();
        step("zmq_sendmsg", s.send_msg(&mut msg, 0))?;
    }
    Ok(())
}

/// REP side of the latency test: echoes `roundtrips` messages.
pub fn local_lat(ctx: &Context, bind_to: &str, size: usize, roundtrips: u64) -> Result<(), PerfError> {
    local_lat_curve(ctx, bind_to, size, roundtrips, false)
}

/// [`local_lat`], as a CURVE server when `curve` is set.
pub fn local_lat_curve(ctx: &Context, bind_to: &str, size: usize, roundtrips: u64, curve: bool) -> Result<(), PerfError> {
    let mut s = step("zmq_socket", ctx.socket(SocketType::Rep))?;
    curve_setup(&mut s, curve, true)?;
    step("zmq_bind", s.bind(bind_to))?;
    echo_loop(&mut s, size, roundtrips)
}

fn echo_loop(s: &mut oxmq::Socket, size: usize, roundtrips: u64) -> Result<(), PerfError> {
    let mut msg = Msg::new();
    for _ in 0..roundtrips {
        step("zmq_recvmsg", s.recv_msg(&mut msg, 0))?;
        check_size(&msg, size)?;
        step("zmq_sendmsg", s.send_msg(&mut msg, 0))?;
    }
    Ok(())
}

/// REQ side of the latency test.
pub fn remote_lat(ctx: &Context, connect_to: &str, size: usize, roundtrips: u64) -> Result<LatReport, PerfError> {
    remote_lat_curve(ctx, connect_to, size, roundtrips, false)
}

/// [`remote_lat`], as a CURVE client when `curve` is set.
pub fn remote_lat_curve(
    ctx: &Context,
    connect_to: &str,
    size: usize,
    roundtrips: u64,
    curve: bool,
) -> Result<LatReport, PerfError> {
    let mut s = step("zmq_socket", ctx.socket(SocketType::Req))?;
    curve_setup(&mut s, curve, false)?;
    step("zmq_connect", s.connect(connect_to))?;
    req_loop(&mut s, size, roundtrips)
}

fn req_loop(s: &mut oxmq::Socket, size: usize, roundtrips: u64) -> Result<LatReport, PerfError> {
    let template = body(size);
    let mut msg = template.clone();
    let start = Instant::now();
    for _ in 0..roundtrips {
        // The echo comes back into `msg`, so it is sent again as is (as libzmq's tool does).
        step("zmq_sendmsg", s.send_msg(&mut msg, 0))?;
        step("zmq_recvmsg", s.recv_msg(&mut msg, 0))?;
        check_size(&msg, size)?;
    }
    Ok(LatReport { size, roundtrips, elapsed_us: elapsed_us(start) })
}

/// `inproc_thr`: PULL bound here, PUSH in a second thread, one context.
pub fn inproc_thr(size: usize, count: u64) -> Result<ThrReport, PerfError> {
    let ctx = Context::new();
    let mut s = step("zmq_socket", ctx.socket(SocketType::Pull))?;
    step("zmq_bind", s.bind(INPROC_THR_ENDPOINT))?;
    let worker_ctx = ctx.clone();
    let worker = std::thread::spawn(move || remote_thr(&worker_ctx, INPROC_THR_ENDPOINT, size, count));
    let report = pull_loop(&mut s, size, count);
    let sent = worker.join().map_err(|_| PerfError("worker thread panicked".into()))?;
    sent?;
    drop(s);
    step("zmq_ctx_term", ctx.term())?;
    report
}

/// `inproc_lat`: REQ bound here, REP echo in a second thread, one context.
pub fn inproc_lat(size: usize, roundtrips: u64) -> Result<LatReport, PerfError> {
    let ctx = Context::new();
    let mut s = step("zmq_socket", ctx.socket(SocketType::Req))?;
    step("zmq_bind", s.bind(INPROC_LAT_ENDPOINT))?;
    let worker_ctx = ctx.clone();
    let worker = std::thread::spawn(move || -> Result<(), PerfError> {
        let mut rep = step("zmq_socket", worker_ctx.socket(SocketType::Rep))?;
        step("zmq_connect", rep.connect(INPROC_LAT_ENDPOINT))?;
        echo_loop(&mut rep, size, roundtrips)
    });
    let report = req_loop(&mut s, size, roundtrips);
    let echoed = worker.join().map_err(|_| PerfError("worker thread panicked".into()))?;
    echoed?;
    drop(s);
    step("zmq_ctx_term", ctx.term())?;
    report
}

/// Shared `main` of the binaries: parse, run, print, and exit like libzmq's tools (usage → 1,
/// failure → the message on stdout and status 255).
pub fn main_with(usage: &str, endpoint: bool, run: impl FnOnce(&Args) -> Result<Option<String>, PerfError>) {
    let argv: Vec<String> = std::env::args().collect();
    let Some(args) = parse_args(&argv, endpoint) else {
        println!("usage: {usage}");
        std::process::exit(1);
    };
    match run(&args) {
        Ok(Some(out)) => print!("{out}"),
        Ok(None) => {}
        Err(e) => {
            println!("{e}");
            std::process::exit(255);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_libzmq_command_lines() {
        let a = parse_args(&argv(&["local_thr", "tcp://*:5555", "100", "1000"]), true).unwrap();
        assert_eq!(a, Args { endpoint: "tcp://*:5555".into(), size: 100, count: 1000, curve: false });
        let a = parse_args(&argv(&["local_thr", "tcp://*:5555", "100", "1000", "1"]), true).unwrap();
        assert!(a.curve);
        assert!(!parse_args(&argv(&["local_thr", "tcp://*:5555", "100", "1000", "0"]), true).unwrap().curve);
        assert!(parse_args(&argv(&["local_thr", "tcp://*:5555", "100", "1000", "x"]), true).is_none());
        assert!(parse_args(&argv(&["inproc_thr", "1", "10", "1"]), false).is_none());
        let a = parse_args(&argv(&["inproc_thr", "1", "10"]), false).unwrap();
        assert_eq!((a.size, a.count), (1, 10));
        assert!(parse_args(&argv(&["local_thr", "tcp://*:5555", "100"]), true).is_none());
        assert!(parse_args(&argv(&["local_thr", "x", "y", "z"]), true).is_none());
        assert!(parse_args(&argv(&["local_thr", "x", "1", "0"]), true).is_none());
    }

    #[test]
    fn throughput_lines_match_libzmq_format() {
        let r = ThrReport { size: 100, count: 1_000_000, elapsed_us: 2_000_000 };
        assert_eq!(
            r.to_string(),
            "message size: 100 [B]\nmessage count: 1000000\nmean throughput: 500000 [msg/s]\nmean throughput: 400.000 [Mb/s]\n"
        );
    }

    #[test]
    fn latency_is_half_the_round_trip() {
        let r = LatReport { size: 1, roundtrips: 1000, elapsed_us: 30_000 };
        assert_eq!(r.to_string(), "message size: 1 [B]\nroundtrip count: 1000\naverage latency: 15.000 [us]\n");
    }
}
