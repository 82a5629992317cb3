//! `remote_thr <connect-to> <message-size> <message-count>` on omq-compio.
#[compio::main]
async fn main() {
    omq_compio_perf::remote_thr(omq_compio_perf::args("remote_thr <connect-to> <message-size> <message-count>")).await
}
