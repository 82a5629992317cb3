//! `remote_thr <connect-to> <message-size> <message-count> [<enable_curve>]`: PUSH side of the throughput test.
fn main() {
    oxmq_perf::main_with("remote_thr <connect-to> <message-size> <message-count> [<enable_curve>]", true, |a| {
        let ctx = oxmq::Context::new();
        oxmq_perf::remote_thr_curve(&ctx, &a.endpoint, a.size, a.count, a.curve)?;
        // The socket is closed; term waits for it to finish sending (LINGER is infinite).
        ctx.term().map_err(|e| oxmq_perf::PerfError(format!("error in zmq_ctx_term: {e}")))?;
        Ok(None)
    });
}
