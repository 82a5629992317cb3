//! `inproc_lat <message-size> <roundtrip-count>`: both latency ends in one process.
fn main() {
    oxmq_perf::main_with("inproc_lat <message-size> <roundtrip-count>", false, |a| {
        Ok(Some(oxmq_perf::inproc_lat(a.size, a.count)?.to_string()))
    });
}
