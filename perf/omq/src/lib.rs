//! libzmq's classic perf tools on omq.rs (crates `omq-tokio` / `omq-proto`), so the harness
//! (perf/harness/impl_omq.py) can set a third ZMTP implementation beside oxmq and libzmq.
//!
//! Same command lines, output lines and stopwatch points as perf/c (libzmq's `perf/*.cpp`):
//!
//! - `local_thr <bind-to> <message-size> <message-count> [<enable_curve>]`: PULL; the clock
//!   starts when the first message arrives and stops at the last one.
//! - `remote_thr <connect-to> <message-size> <message-count> [<enable_curve>]`: PUSH; sends,
//!   then closes with infinite linger (omq's native default linger is zero, libzmq's infinite),
//!   so every message reaches the peer before the process exits.
//! - `local_lat <bind-to> <message-size> <roundtrip-count> [<enable_curve>]`: REP echo.
//! - `remote_lat <connect-to> <message-size> <roundtrip-count> [<enable_curve>]`: REQ; one-way
//!   latency = elapsed / (2 × round trips).
//!
//! How omq is driven: the way its own two-process benchmark peer (`bench_peer_tokio`'s default
//! mode) does: a tokio `current_thread` runtime on the main thread and `Context::current()`,
//! so the ZMTP I/O runs on the application thread (no separate I/O thread, unlike libzmq and
//! oxmq); sends try `try_send` first and await `send` only when the pipe is full; receives
//! try `try_recv` first and await `recv` only when nothing is queued, yielding to the
//! runtime every batch so the connection tasks keep reading. Messages up to
//! `MAX_INLINE_MESSAGE` bytes are built inline per send (`Message::from_slice`), larger ones
//! share one `Bytes` body (a reference-count bump), as oxmq's Rust tools clone one body.
//!
//! `OMQ_IO_THREADS=N` (N > 0) in the environment gives omq N I/O threads of its own instead,
//! for comparison; the harness does not set it.
//!
//! CURVE (`<enable_curve>` non-zero): the binder is the server, the connecter the client, with
//! the zmq_curve(7) example keys perf/c/perf_curve.h uses, so these tools can face the C ones.

use bytes::Bytes;
use omq_tokio::{Context, ContextConfig, CurveKeypair, CurvePublicKey, CurveSecretKey, Error, Message, Options, Socket, SocketType};
use std::time::Instant;

/// The perf tools' CURVE keys (Z85), the same as perf/c/perf_curve.h and perf/rust.
pub const SERVER_PUBLIC: &str = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
pub const SERVER_SECRET: &str = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
pub const CLIENT_PUBLIC: &str = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
pub const CLIENT_SECRET: &str = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

/// A failed step, printed like libzmq's tools: `error in bind: ...`.
pub struct PerfError(pub String);

fn step<T>(what: &str, r: omq_tokio::error::Result<T>) -> Result<T, PerfError> {
    r.map_err(|e| PerfError(format!("error in {what}: {e}")))
}

/// `<endpoint> <message-size> <count> [<enable_curve>]`.
pub struct Args {
    pub endpoint: String,
    pub size: usize,
    pub count: u64,
    pub curve: bool,
}

pub fn parse_args(argv: &[String]) -> Option<Args> {
    if argv.len() != 4 && argv.len() != 5 {
        return None;
    }
    let size = argv[2].trim().parse::<usize>().ok()?;
    let count = argv[3].trim().parse::<u64>().ok()?;
    if count == 0 {
        return None;
    }
    let curve = match argv.get(4) {
        Some(c) => c.trim().parse::<i64>().ok()? != 0,
        None => false,
    };
    Some(Args { endpoint: argv[1].clone(), size, count, curve })
}

/// Socket options: omq's defaults, plus CURVE when asked (binder = server).
fn options(curve: bool, server: bool) -> Result<Options, PerfError> {
    let o = Options::default();
    if !curve {
        return Ok(o);
    }
    let key = |what: &str, r: omq_tokio::error::Result<CurveSecretKey>| step(what, r);
    if server {
        let secret = key("curve server key", CurveSecretKey::from_z85(SERVER_SECRET))?;
        let public = step("curve server key", CurvePublicKey::from_z85(SERVER_PUBLIC))?;
        Ok(o.curve_server(CurveKeypair { public, secret }))
    } else {
        let secret = key("curve client key", CurveSecretKey::from_z85(CLIENT_SECRET))?;
        let public = step("curve client key", CurvePublicKey::from_z85(CLIENT_PUBLIC))?;
        let server = step("curve server key", CurvePublicKey::from_z85(SERVER_PUBLIC))?;
        Ok(o.curve_client(CurveKeypair { public, secret }, server))
    }
}

/// Runs `f` on a current_thread runtime on this thread. The context is `Context::current()`
/// (I/O on this thread) unless `OMQ_IO_THREADS` is set to N > 0: then omq owns N I/O threads
/// (`Context::with_config`), libzmq's shape; the same switch as omq's `bench_peer_tokio`.
pub fn run<T>(f: impl AsyncFnOnce(Context) -> Result<T, PerfError>) -> Result<T, PerfError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PerfError(format!("error in tokio runtime: {e}")))?;
    let owned = std::env::var_os("OMQ_IO_THREADS").is_some() && ContextConfig::from_env().io_threads > 0;
    let (out, ctx) = rt.block_on(async {
        let ctx = if owned { Context::with_config(ContextConfig::from_env()) } else { Context::current() };
        (f(ctx.clone()).await, ctx)
    });
    ctx.term(); // joins owned I/O threads outside the runtime; a no-op for Context::current()
    out
}

fn check_size(msg: &Message, size: usize) -> Result<(), PerfError> {
    if msg.byte_len() != size || msg.len() != 1 {
        return Err(PerfError("message of incorrect size received".into()));
    }
    Ok(())
}

/// Messages taken per turn before yielding to the runtime (omq's bench: 64 KiB, at most 128).
fn batch(size: usize) -> u64 {
    (64 * 1024 / size.max(1)).clamp(1, 128) as u64
}

async fn recv(s: &Socket) -> Result<Message, PerfError> {
    match s.try_recv() {
        Ok(m) => Ok(m),
        Err(Error::WouldBlock) => step("recv", s.recv().await),
        Err(e) => Err(PerfError(format!("error in recv: {e}"))),
    }
}

async fn send(s: &Socket, msg: Message) -> Result<(), PerfError> {
    match s.try_send(msg) {
        Ok(()) => Ok(()),
        Err(omq_tokio::TrySendError::Full(msg)) => step("send", s.send(msg).await),
        Err(e) => Err(PerfError(format!("error in send: {e}"))),
    }
}

/// A body of `size` zero bytes, built per send: inline up to MAX_INLINE_MESSAGE, else a
/// shared `Bytes` (cloning it is a reference-count bump).
struct Body {
    bytes: Bytes,
}

impl Body {
    fn new(size: usize) -> Self {
        Body { bytes: Bytes::from(vec![0u8; size]) }
    }

    fn msg(&self) -> Message {
        if self.bytes.len() <= omq_tokio::message::MAX_INLINE_MESSAGE {
            Message::from_slice(&self.bytes)
        } else {
            Message::single(self.bytes.clone())
        }
    }
}

fn elapsed_us(start: Instant) -> u64 {
    (start.elapsed().as_micros() as u64).max(1)
}

/// PULL side of the throughput test; returns libzmq's four output lines.
pub async fn local_thr(ctx: Context, a: &Args) -> Result<String, PerfError> {
    let s = ctx.socket(SocketType::Pull, options(a.curve, true)?);
    step("bind", s.bind(a.endpoint.as_str()).await)?;
    check_size(&recv(&s).await?, a.size)?;
    let start = Instant::now();
    let per_turn = batch(a.size);
    for i in 1..a.count {
        check_size(&recv(&s).await?, a.size)?;
        if i % per_turn == 0 {
            tokio::task::coop::consume_budget().await;
        }
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

/// PUSH side of the throughput test: sends, then closes waiting for delivery.
pub async fn remote_thr(ctx: Context, a: &Args) -> Result<(), PerfError> {
    let s = ctx.socket(SocketType::Push, options(a.curve, false)?.linger_forever());
    step("connect", s.connect(a.endpoint.as_str()).await)?;
    let body = Body::new(a.size);
    for _ in 0..a.count {
        send(&s, body.msg()).await?;
    }
    step("close", s.close().await)
}

/// REP side of the latency test: echoes `count` messages.
pub async fn local_lat(ctx: Context, a: &Args) -> Result<(), PerfError> {
    let s = ctx.socket(SocketType::Rep, options(a.curve, true)?.linger_forever());
    step("bind", s.bind(a.endpoint.as_str()).await)?;
    for _ in 0..a.count {
        let msg = recv(&s).await?;
        check_size(&msg, a.size)?;
        send(&s, msg).await?;
    }
    // The last reply must leave before the process does (libzmq's zmq_ctx_term waits too).
    step("close", s.close().await)
}

/// REQ side of the latency test; returns libzmq's three output lines.
pub async fn remote_lat(ctx: Context, a: &Args) -> Result<String, PerfError> {
    let s = ctx.socket(SocketType::Req, options(a.curve, false)?);
    step("connect", s.connect(a.endpoint.as_str()).await)?;
    let mut msg = Body::new(a.size).msg();
    let start = Instant::now();
    for _ in 0..a.count {
        // The echo comes back into `msg` and is sent again as is, as libzmq's tool does.
        send(&s, msg).await?;
        msg = recv(&s).await?;
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

/// Shared `main`: parse, run, print; usage → exit 1, failure → message on stderr, exit 1
/// (as perf/c's `die`).
pub fn main_with(usage: &str, tool: impl FnOnce(&Args) -> Result<Option<String>, PerfError>) {
    let argv: Vec<String> = std::env::args().collect();
    let Some(args) = parse_args(&argv) else {
        println!("usage: {usage}");
        std::process::exit(1);
    };
    match tool(&args) {
        Ok(Some(out)) => print!("{out}"),
        Ok(None) => {}
        Err(PerfError(e)) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
