//! `remote_lat <connect-to> <message-size> <roundtrip-count>` on omq-compio.
#[compio::main]
async fn main() {
    omq_compio_perf::remote_lat(omq_compio_perf::args("remote_lat <connect-to> <message-size> <roundtrip-count>")).await
}
