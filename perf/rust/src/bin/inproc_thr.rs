//! `inproc_thr <message-size> <message-count>`: both throughput ends in one process.
fn main() {
    oxmq_perf::main_with("inproc_thr <message-size> <message-count>", false, |a| {
        Ok(Some(oxmq_perf::inproc_thr(a.size, a.count)?.to_string()))
    });
}
