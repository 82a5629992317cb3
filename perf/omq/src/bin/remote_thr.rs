//! `remote_thr <connect-to> <message-size> <message-count> [<enable_curve>]` on omq.rs: PUSH side.
fn main() {
    omq_perf::main_with("remote_thr <connect-to> <message-size> <message-count> [<enable_curve>]", |a| {
        omq_perf::run(async |ctx| omq_perf::remote_thr(ctx, a).await.map(|()| None))
    });
}
