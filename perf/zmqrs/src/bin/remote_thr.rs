//! `remote_thr <connect-to> <message-size> <message-count>` on zmq.rs.
fn main() {
    zmqrs_perf::main_with("remote_thr <connect-to> <message-size> <message-count>", |a| async move {
        zmqrs_perf::remote_thr(&a).await.map(|()| None)
    });
}
