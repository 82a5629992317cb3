//! `local_lat <bind-to> <message-size> <roundtrip-count> [<enable_curve>]`: REP echo side of the latency test.
fn main() {
    oxmq_perf::main_with("local_lat <bind-to> <message-size> <roundtrip-count> [<enable_curve>]", true, |a| {
        let ctx = oxmq::Context::new();
        oxmq_perf::local_lat_curve(&ctx, &a.endpoint, a.size, a.count, a.curve)?;
        ctx.term().map_err(|e| oxmq_perf::PerfError(format!("error in zmq_ctx_term: {e}")))?;
        Ok(None)
    });
}
