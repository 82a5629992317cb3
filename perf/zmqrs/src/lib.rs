//! libzmq's classic perf tools on zmq.rs (crates.io `zeromq`), so the harness's async section
//! (perf/harness/async_bench.py) can set it beside oxmq and omq.rs.
//!
//! Same command lines, output lines and stopwatch points as perf/c (libzmq's `perf/*.cpp`):
//! `local_thr`/`remote_thr` (PULL/PUSH; the clock runs from the first message to the last),
//! `local_lat`/`remote_lat` (REP echo / REQ; one-way latency = elapsed / (2 × round trips)).
//! tcp only, no CURVE (zmq.rs has none).
//!
//! How zmq.rs is driven: as its own examples, on tokio's multi-thread runtime
//! (`#[tokio::main]`); each socket's connections are tokio tasks.
//! zmq.rs has no LINGER: a socket dropped with messages in its writer queue loses them, so a
//! side that sends last (`remote_thr`, `local_lat`) stays half a second before it exits
//! ([`linger`]), where libzmq's `zmq_ctx_term` waits for delivery.

use bytes::Bytes;
use std::time::{Duration, Instant};
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

/// A failed step, printed like libzmq's tools: `error in bind: ...`.
pub struct PerfError(pub String);

fn step<T, E: std::fmt::Display>(what: &str, r: Result<T, E>) -> Result<T, PerfError> {
    r.map_err(|e| PerfError(format!("error in {what}: {e}")))
}

/// `<endpoint> <message-size> <count>`.
pub struct Args {
    pub endpoint: String,
    pub size: usize,
    pub count: u64,
}

fn parse_args(argv: &[String]) -> Option<Args> {
    if argv.len() != 4 {
        return None;
    }
    let size = argv[2].trim().parse::<usize>().ok()?;
    let count = argv[3].trim().parse::<u64>().ok()?;
    (count > 0).then(|| Args { endpoint: argv[1].clone(), size, count })
}

fn check_size(msg: &ZmqMessage, size: usize) -> Result<(), PerfError> {
    if msg.len() != 1 || msg.get(0).map(|b| b.len()) != Some(size) {
        return Err(PerfError("message of incorrect size received".into()));
    }
    Ok(())
}

fn elapsed_us(start: Instant) -> u64 {
    (start.elapsed().as_micros() as u64).max(1)
}

/// Gives zmq.rs's connection tasks time to write what `send` queued before the process
/// exits (it has no LINGER, and it notices a peer's departure only late: neither the
/// monitor's `Disconnected` nor a REP's receive ended within a minute here). The clock of the
/// measurement has stopped on the other side by then; a message lost anyway would leave the
/// receiver waiting and the harness's run would time out, not report a number.
async fn linger() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// PULL side of the throughput test; returns libzmq's four output lines.
pub async fn local_thr(a: &Args) -> Result<String, PerfError> {
    let mut s = zeromq::PullSocket::new();
    step("bind", s.bind(&a.endpoint).await)?;
    check_size(&step("recv", s.recv().await)?, a.size)?;
    let start = Instant::now();
    for _ in 1..a.count {
        check_size(&step("recv", s.recv().await)?, a.size)?;
    }
    let elapsed = elapsed_us(start);
    drop(s);
    let rate = (a.count as f64 / elapsed as f64 * 1_000_000.0) as u64;
    let megabits = rate as f64 * a.size as f64 * 8.0 / 1_000_000.0;
    Ok(format!(
        "message size: {} [B]\nmessage count: {}\nmean throughput: {} [msg/s]\nmean throughput: {:.3} [Mb/s]\n",
        a.size, a.count, rate, megabits
    ))
}

/// PUSH side of the throughput test: sends, then waits for the receiver to leave.
pub async fn remote_thr(a: &Args) -> Result<(), PerfError> {
    let mut s = zeromq::PushSocket::new();
    step("connect", s.connect(&a.endpoint).await)?;
    let body = Bytes::from(vec![0u8; a.size]);
    for _ in 0..a.count {
        step("send", s.send(ZmqMessage::from(body.clone())).await)?;
    }
    linger().await;
    Ok(())
}

/// REP side of the latency test: echoes `count` messages.
pub async fn local_lat(a: &Args) -> Result<(), PerfError> {
    let mut s = zeromq::RepSocket::new();
    step("bind", s.bind(&a.endpoint).await)?;
    for _ in 0..a.count {
        let msg = step("recv", s.recv().await)?;
        check_size(&msg, a.size)?;
        step("send", s.send(msg).await)?;
    }
    linger().await;
    Ok(())
}

/// REQ side of the latency test; returns libzmq's three output lines.
pub async fn remote_lat(a: &Args) -> Result<String, PerfError> {
    let mut s = zeromq::ReqSocket::new();
    step("connect", s.connect(&a.endpoint).await)?;
    let mut msg = ZmqMessage::from(Bytes::from(vec![0u8; a.size]));
    let start = Instant::now();
    for _ in 0..a.count {
        step("send", s.send(msg).await)?;
        msg = step("recv", s.recv().await)?;
        check_size(&msg, a.size)?;
    }
    let elapsed = elapsed_us(start);
    drop(s);
    Ok(format!(
        "message size: {} [B]\nroundtrip count: {}\naverage latency: {:.3} [us]\n",
        a.size,
        a.count,
        elapsed as f64 / (2.0 * a.count as f64)
    ))
}

/// Shared `main`: parse, run on tokio's multi-thread runtime, print; usage → exit 1, failure
/// → message on stderr, exit 1 (as perf/c's `die`).
pub fn main_with<F>(usage: &str, tool: impl FnOnce(Args) -> F)
where
    F: std::future::Future<Output = Result<Option<String>, PerfError>>,
{
    let argv: Vec<String> = std::env::args().collect();
    let Some(args) = parse_args(&argv) else {
        println!("usage: {usage}");
        std::process::exit(1);
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    match rt.block_on(tool(args)) {
        Ok(Some(out)) => print!("{out}"),
        Ok(None) => {}
        Err(PerfError(e)) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
