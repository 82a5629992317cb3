//! `async_local_thr <bind-to> <message-size> <message-count>`: [`local_thr`](oxmq_perf) on the async API (tokio).
fn main() {
    oxmq_perf::main_with("async_local_thr <bind-to> <message-size> <message-count>", true, |a| {
        let ctx = oxmq::Context::new();
        let (ep, size, count) = (a.endpoint.clone(), a.size, a.count);
        let r = oxmq_perf::asynch::run(oxmq_perf::asynch::local_thr(ctx.clone(), ep, size, count)).map(|r| Some(r.to_string()));
        ctx.term().map_err(|e| oxmq_perf::PerfError(format!("error in zmq_ctx_term: {e}")))?;
        r
    });
}
