//! `remote_lat <connect-to> <message-size> <roundtrip-count> [<enable_curve>]`: REQ side of the latency test.
fn main() {
    oxmq_perf::main_with("remote_lat <connect-to> <message-size> <roundtrip-count> [<enable_curve>]", true, |a| {
        let ctx = oxmq::Context::new();
        let report = oxmq_perf::remote_lat_curve(&ctx, &a.endpoint, a.size, a.count, a.curve)?;
        ctx.term().map_err(|e| oxmq_perf::PerfError(format!("error in zmq_ctx_term: {e}")))?;
        Ok(Some(report.to_string()))
    });
}
