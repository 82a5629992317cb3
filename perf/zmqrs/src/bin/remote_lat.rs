//! `remote_lat <connect-to> <message-size> <roundtrip-count>` on zmq.rs.
fn main() {
    zmqrs_perf::main_with("remote_lat <connect-to> <message-size> <roundtrip-count>", |a| async move {
        zmqrs_perf::remote_lat(&a).await.map(Some)
    });
}
