//! The four tcp perf tools on oxmq's async API ([`oxmq::asynch::AsyncSocket`]), with the same
//! command lines, output lines and stopwatch points as the blocking ones, so the harness's
//! async section (perf/harness/async_bench.py) sets them side by side with the blocking tools,
//! omq.rs and zmq.rs.
//!
//! They run on a tokio `current_thread` runtime on the main thread, the way a tokio service
//! drives a socket from one task; `OXMQ_ASYNC_RT=multi` runs them on a multi-thread runtime
//! (two workers) instead. Each receive and send is an `.await` of the async API; nothing
//! calls the blocking API. `OXMQ_ASYNC_SPIN_US=N` sets [`AsyncSocket::set_recv_spin`] to N µs
//! on every socket (default 0: off).

use crate::{LatReport, PerfError, ThrReport};
use oxmq::asynch::{AsyncSocket, Message};
use oxmq::{Context, Msg, SocketType};
use std::time::Instant;

fn step<T>(what: &str, r: oxmq::Result<T>) -> Result<T, PerfError> {
    r.map_err(|e| PerfError(format!("error in {what}: {e}")))
}

fn check(m: &Message, size: usize) -> Result<(), PerfError> {
    if m.len() != 1 || m[0].len() != size {
        return Err(PerfError("message of incorrect size received".into()));
    }
    Ok(())
}

/// A new async socket, with the receive spin `OXMQ_ASYNC_SPIN_US` asks for.
fn socket(ctx: &Context, kind: SocketType) -> Result<AsyncSocket, PerfError> {
    let mut s = step("zmq_socket", AsyncSocket::new(ctx, kind))?;
    if let Some(us) = std::env::var("OXMQ_ASYNC_SPIN_US").ok().and_then(|v| v.trim().parse::<u64>().ok()) {
        s.set_recv_spin(std::time::Duration::from_micros(us));
    }
    Ok(s)
}

fn elapsed_us(start: Instant) -> u64 {
    (start.elapsed().as_micros() as u64).max(1)
}

/// Runs `f` to completion on the runtime `OXMQ_ASYNC_RT` names (`current`, the default, or
/// `multi`).
pub fn run<T: Send + 'static>(f: impl std::future::Future<Output = T> + Send + 'static) -> T {
    match std::env::var("OXMQ_ASYNC_RT").as_deref() {
        Ok("multi") => {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("tokio runtime");
            rt.block_on(async { tokio::spawn(f).await.expect("task") })
        }
        _ => tokio::runtime::Builder::new_current_thread().build().expect("tokio runtime").block_on(f),
    }
}

/// PULL side of the throughput test.
pub async fn local_thr(ctx: Context, bind_to: String, size: usize, count: u64) -> Result<ThrReport, PerfError> {
    let mut s = socket(&ctx, SocketType::Pull)?;
    step("zmq_bind", s.bind(&bind_to))?;
    // Received into one message, as the blocking tool receives into one `Msg`.
    let mut m = Message::from(Msg::new());
    step("zmq_recvmsg", s.recv_into(&mut m).await)?;
    check(&m, size)?;
    let start = Instant::now();
    for _ in 1..count {
        step("zmq_recvmsg", s.recv_into(&mut m).await)?;
        check(&m, size)?;
    }
    Ok(ThrReport { size, count, elapsed_us: elapsed_us(start) })
}

/// PUSH side of the throughput test (the socket's close waits for delivery: LINGER infinite).
pub async fn remote_thr(ctx: Context, connect_to: String, size: usize, count: u64) -> Result<(), PerfError> {
    let mut s = socket(&ctx, SocketType::Push)?;
    step("zmq_connect", s.connect(&connect_to))?;
    let template = Msg::with_size(size);
    for _ in 0..count {
        step("zmq_sendmsg", s.send(template.clone()).await)?;
    }
    Ok(())
}

/// REP side of the latency test: echoes `roundtrips` messages.
pub async fn local_lat(ctx: Context, bind_to: String, size: usize, roundtrips: u64) -> Result<(), PerfError> {
    let mut s = socket(&ctx, SocketType::Rep)?;
    step("zmq_bind", s.bind(&bind_to))?;
    for _ in 0..roundtrips {
        let m = step("zmq_recvmsg", s.recv().await)?;
        check(&m, size)?;
        step("zmq_sendmsg", s.send(m).await)?;
    }
    Ok(())
}

/// REQ side of the latency test.
pub async fn remote_lat(ctx: Context, connect_to: String, size: usize, roundtrips: u64) -> Result<LatReport, PerfError> {
    let mut s = socket(&ctx, SocketType::Req)?;
    step("zmq_connect", s.connect(&connect_to))?;
    let mut m = Message::from(Msg::with_size(size));
    let start = Instant::now();
    for _ in 0..roundtrips {
        step("zmq_sendmsg", s.send(m).await)?;
        m = step("zmq_recvmsg", s.recv().await)?;
        check(&m, size)?;
    }
    Ok(LatReport { size, roundtrips, elapsed_us: elapsed_us(start) })
}
