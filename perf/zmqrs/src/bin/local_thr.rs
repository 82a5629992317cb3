//! `local_thr <bind-to> <message-size> <message-count>` on zmq.rs.
fn main() {
    zmqrs_perf::main_with(
        "local_thr <bind-to> <message-size> <message-count>",
        |a| async move { zmqrs_perf::local_thr(&a).await.map(Some) },
    );
}
