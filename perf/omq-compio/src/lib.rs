//! libzmq's classic perf tools on omq.rs' io_uring backend (`omq-compio`), for the async
//! section (perf/harness/async_bench.py) beside omq-tokio (perf/omq) and oxmq.
//!
//! Same command lines, output lines and stopwatch points as perf/c and perf/omq:
//!
//! - `local_thr <bind-to> <message-size> <message-count>`: PULL; the clock starts when the
//!   first message arrives and stops at the last one.
//! - `remote_thr <connect-to> <message-size> <message-count>`: PUSH.
//! - `local_lat <bind-to> <message-size> <roundtrip-count>`: REP echo.
//! - `remote_lat <connect-to> <message-size> <roundtrip-count>`: REQ; one-way latency =
//!   elapsed / (2 × round trips).
//!
//! How omq-compio is driven: as its own benchmarks do, one compio runtime on the main thread
//! (`#[compio::main]`, io_uring), receives trying `try_recv` before awaiting `recv`, and a
//! connecting socket waiting until its connection has a peer before it sends.
//!
//! One departure, for the omq.rs snapshot this builds against (c52db81): a PUSH closed right
//! after its last send loses what it still holds (the PULL's `recv` returns `Closed` short of
//! the count, `linger_forever` or not), so `remote_thr` stays `COMPIO_THR_LINGER_MS` (3,000 by
//! default) before it closes. The receiver's clock stops at its last message, so the wait is
//! not measured.

use bytes::Bytes;
use omq_compio::{Message, Options, Socket, SocketType};
use std::time::{Duration, Instant};

/// `<endpoint> <message-size> <count>`.
pub struct Args {
    pub endpoint: String,
    pub size: usize,
    pub count: u64,
}

/// The arguments, or usage on stderr and exit 1.
pub fn args(usage: &str) -> Args {
    let a: Vec<String> = std::env::args().collect();
    let parsed = (a.len() == 4)
        .then(|| Some(Args { endpoint: a[1].clone(), size: a[2].parse().ok()?, count: a[3].parse().ok().filter(|&n| n > 0)? }))
        .flatten();
    parsed.unwrap_or_else(|| {
        eprintln!("usage: {usage}");
        std::process::exit(1)
    })
}

/// Prints `error in WHAT: E` and exits 1, as perf/c's tools do.
fn die(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("error in {what}: {e}");
    std::process::exit(1)
}

fn endpoint(s: &str) -> omq_compio::endpoint::Endpoint {
    s.parse().unwrap_or_else(|e| die("endpoint", e))
}

fn check_size(m: &Message, size: usize) {
    if m.byte_len() != size || m.len() != 1 {
        die("recv", "message of incorrect size received");
    }
}

async fn recv(s: &Socket) -> Message {
    match s.try_recv() {
        Ok(m) => m,
        Err(_) => s.recv().await.unwrap_or_else(|e| die("recv", e)),
    }
}

async fn send(s: &Socket, m: Message) {
    s.send(m).await.unwrap_or_else(|e| die("send", e))
}

/// `connect` returns before the handshake; omq-compio's own benchmarks wait for a peer too.
async fn connected(s: &Socket) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s.connections().await.unwrap_or_default().iter().any(|c| c.peer_info.is_some()) {
        if Instant::now() > deadline {
            die("connect", "no peer within 10 s");
        }
        compio::time::sleep(Duration::from_millis(1)).await;
    }
}

fn elapsed_us(start: Instant) -> f64 {
    (start.elapsed().as_micros() as f64).max(1.0)
}

/// PULL side of the throughput test.
pub async fn local_thr(a: Args) {
    let s = Socket::new(SocketType::Pull, Options::default());
    s.bind(endpoint(&a.endpoint)).await.unwrap_or_else(|e| die("bind", e));
    check_size(&recv(&s).await, a.size);
    let start = Instant::now();
    for _ in 1..a.count {
        check_size(&recv(&s).await, a.size);
    }
    let rate = (a.count as f64 / elapsed_us(start) * 1e6) as u64;
    println!(
        "message size: {} [B]\nmessage count: {}\nmean throughput: {} [msg/s]\nmean throughput: {:.3} [Mb/s]",
        a.size,
        a.count,
        rate,
        rate as f64 * a.size as f64 * 8.0 / 1e6
    );
}

/// PUSH side of the throughput test (see the module comment on its wait before closing).
pub async fn remote_thr(a: Args) {
    let s = Socket::new(SocketType::Push, Options::default().linger_forever());
    s.connect(endpoint(&a.endpoint)).await.unwrap_or_else(|e| die("connect", e));
    connected(&s).await;
    let body = Bytes::from(vec![0u8; a.size]);
    for _ in 0..a.count {
        send(&s, Message::single(body.clone())).await;
    }
    let linger = std::env::var("COMPIO_THR_LINGER_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(3_000);
    compio::time::sleep(Duration::from_millis(linger)).await;
    s.close().await.unwrap_or_else(|e| die("close", e));
}

/// REP side of the latency test: echoes `count` messages.
pub async fn local_lat(a: Args) {
    let s = Socket::new(SocketType::Rep, Options::default().linger_forever());
    s.bind(endpoint(&a.endpoint)).await.unwrap_or_else(|e| die("bind", e));
    for _ in 0..a.count {
        let m = recv(&s).await;
        check_size(&m, a.size);
        send(&s, m).await;
    }
    s.close().await.unwrap_or_else(|e| die("close", e));
}

/// REQ side of the latency test.
pub async fn remote_lat(a: Args) {
    let s = Socket::new(SocketType::Req, Options::default());
    s.connect(endpoint(&a.endpoint)).await.unwrap_or_else(|e| die("connect", e));
    connected(&s).await;
    let mut m = Message::single(Bytes::from(vec![0u8; a.size]));
    let start = Instant::now();
    for _ in 0..a.count {
        send(&s, m).await;
        m = recv(&s).await;
        check_size(&m, a.size);
    }
    println!(
        "message size: {} [B]\nroundtrip count: {}\naverage latency: {:.3} [us]",
        a.size,
        a.count,
        elapsed_us(start) / (2.0 * a.count as f64)
    );
}
