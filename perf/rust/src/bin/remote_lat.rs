//! `remote_lat <connect-to> <message-size> <roundtrip-count>`: REQ side of the latency test.
fn main() {
    oxmq_perf::main_with("remote_lat <connect-to> <message-size> <roundtrip-count>", true, |a| {
        let ctx = oxmq::Context::new();
        let report = oxmq_perf::remote_lat(&ctx, &a.endpoint, a.size, a.count)?;
        ctx.term().map_err(|e| oxmq_perf::PerfError(format!("error in zmq_ctx_term: {e}")))?;
        Ok(Some(report.to_string()))
    });
}
