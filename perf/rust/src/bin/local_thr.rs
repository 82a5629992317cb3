//! `local_thr <bind-to> <message-size> <message-count> [<enable_curve>]`: PULL side of the throughput test.
fn main() {
    oxmq_perf::main_with("local_thr <bind-to> <message-size> <message-count> [<enable_curve>]", true, |a| {
        let ctx = oxmq::Context::new();
        let report = oxmq_perf::local_thr_curve(&ctx, &a.endpoint, a.size, a.count, a.curve)?;
        ctx.term().map_err(|e| oxmq_perf::PerfError(format!("error in zmq_ctx_term: {e}")))?;
        Ok(Some(report.to_string()))
    });
}
