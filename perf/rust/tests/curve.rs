//! The perf tools' CURVE switch end to end over TCP, in-process: a CURVE server and client
//! with the fixed keys exchange the counted messages; a NULL client gets nothing through to a
//! CURVE server.
use oxmq::{Context, SocketType};

fn free_endpoint() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("tcp://127.0.0.1:{}", l.local_addr().unwrap().port())
}

#[test]
fn throughput_and_latency_over_curve() {
    let ctx = Context::new();
    let ep = free_endpoint();
    let (c, e) = (ctx.clone(), ep.clone());
    let rx = std::thread::spawn(move || oxmq_perf::local_thr_curve(&c, &e, 256, 2000, true));
    oxmq_perf::remote_thr_curve(&ctx, &ep, 256, 2000, true).unwrap();
    let r = rx.join().unwrap().unwrap();
    assert_eq!((r.size, r.count), (256, 2000));

    let ep = free_endpoint();
    let (c, e) = (ctx.clone(), ep.clone());
    let echo = std::thread::spawn(move || oxmq_perf::local_lat_curve(&c, &e, 64, 200, true));
    let r = oxmq_perf::remote_lat_curve(&ctx, &ep, 64, 200, true).unwrap();
    echo.join().unwrap().unwrap();
    assert_eq!(r.roundtrips, 200);
    ctx.term().unwrap();
}

#[test]
fn curve_server_refuses_a_null_client() {
    let ctx = Context::new();
    let ep = free_endpoint();
    // LINGER 0 everywhere: a failed assertion must report, not wait forever in the context's
    // teardown for a message nobody can take.
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_int(oxmq::opt::LINGER, 0).unwrap();
    oxmq_perf::curve_setup(&mut pull, true, true).unwrap();
    pull.bind(&ep).unwrap();
    pull.set_int(oxmq::opt::RCVTIMEO, 300).unwrap();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.set_int(oxmq::opt::LINGER, 0).unwrap();
    push.connect(&ep).unwrap();
    // The server's refusal ends the NULL client's session for good, and its pipe with it: if
    // that happens before this send, the socket has no peer left and a blocking send would
    // wait forever. So the send does not wait; queued or refused, the message must not arrive.
    let _ = push.send_msg(&mut oxmq::Msg::with_size(8), oxmq::opt::DONTWAIT);
    let mut m = oxmq::Msg::new();
    assert!(pull.recv_msg(&mut m, 0).is_err(), "a NULL client's message came through");
    // A CURVE client on the same endpoint does get through.
    let mut good = ctx.socket(SocketType::Push).unwrap();
    good.set_int(oxmq::opt::LINGER, 0).unwrap();
    oxmq_perf::curve_setup(&mut good, true, false).unwrap();
    good.connect(&ep).unwrap();
    good.send_msg(&mut oxmq::Msg::with_size(8), 0).unwrap();
    pull.set_int(oxmq::opt::RCVTIMEO, 10_000).unwrap();
    if let Err(e) = pull.recv_msg(&mut m, 0) {
        panic!("the CURVE client's message did not arrive in 10 s: {e} (pull {:?}, good {:?})", pull.stats(), good.stats());
    }
    assert_eq!(m.len(), 8);
    pull.set_int(oxmq::opt::RCVTIMEO, 200).unwrap();
    assert!(pull.recv_msg(&mut m, 0).is_err(), "a message beyond the CURVE client's one");
}
