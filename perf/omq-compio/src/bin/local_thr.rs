//! `local_thr <bind-to> <message-size> <message-count>` on omq-compio.
#[compio::main]
async fn main() {
    omq_compio_perf::local_thr(omq_compio_perf::args("local_thr <bind-to> <message-size> <message-count>")).await
}
