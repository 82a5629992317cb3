//! `local_lat <bind-to> <message-size> <roundtrip-count> [<enable_curve>]` on omq.rs: REP echo.
fn main() {
    omq_perf::main_with("local_lat <bind-to> <message-size> <roundtrip-count> [<enable_curve>]", |a| {
        omq_perf::run(async |ctx| omq_perf::local_lat(ctx, a).await.map(|()| None))
    });
}
