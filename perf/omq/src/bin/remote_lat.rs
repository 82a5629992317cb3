//! `remote_lat <connect-to> <message-size> <roundtrip-count> [<enable_curve>]` on omq.rs: REQ side.
fn main() {
    omq_perf::main_with("remote_lat <connect-to> <message-size> <roundtrip-count> [<enable_curve>]", |a| {
        omq_perf::run(async |ctx| omq_perf::remote_lat(ctx, a).await.map(Some))
    });
}
