//! `local_lat <bind-to> <message-size> <roundtrip-count>`: REP echo side of the latency test.
fn main() {
    oxmq_perf::main_with("local_lat <bind-to> <message-size> <roundtrip-count>", true, |a| {
        let ctx = oxmq::Context::new();
        oxmq_perf::local_lat(&ctx, &a.endpoint, a.size, a.count)?;
        ctx.term().map_err(|e| oxmq_perf::PerfError(format!("error in zmq_ctx_term: {e}")))?;
        Ok(None)
    });
}
