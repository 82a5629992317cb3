//! `local_thr <bind-to> <message-size> <message-count> [<enable_curve>]` on omq.rs: PULL side.
fn main() {
    omq_perf::main_with("local_thr <bind-to> <message-size> <message-count> [<enable_curve>]", |a| {
        omq_perf::run(async |ctx| omq_perf::local_thr(ctx, a).await.map(Some))
    });
}
