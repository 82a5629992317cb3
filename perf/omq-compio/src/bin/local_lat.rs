//! `local_lat <bind-to> <message-size> <roundtrip-count>` on omq-compio.
#[compio::main]
async fn main() {
    omq_compio_perf::local_lat(omq_compio_perf::args("local_lat <bind-to> <message-size> <roundtrip-count>")).await
}
