//! `local_lat <bind-to> <message-size> <roundtrip-count>` on zmq.rs.
fn main() {
    zmqrs_perf::main_with("local_lat <bind-to> <message-size> <roundtrip-count>", |a| async move {
        zmqrs_perf::local_lat(&a).await.map(|()| None)
    });
}
