//! End-to-end checks of the core paths over each transport. The full conformance suite lives
//! in `tests/`; these catch a broken engine at `cargo test --lib` speed.

use crate::{opt, Context, Msg, SocketType};

fn endpoints(tag: &str) -> Vec<String> {
    vec![
        "tcp://127.0.0.1:*".to_string(),
        format!("ipc:///tmp/oxmq-smoke-{}-{tag}.ipc", std::process::id()),
        format!("inproc://smoke-{tag}"),
    ]
}

fn timeouts(s: &mut crate::Socket) {
    s.set_int(opt::RCVTIMEO, 5000).unwrap();
    s.set_int(opt::SNDTIMEO, 5000).unwrap();
}

#[test]
fn push_pull_every_transport() {
    for ep in endpoints("pp") {
        let ctx = Context::new();
        let mut pull = ctx.socket(SocketType::Pull).unwrap();
        timeouts(&mut pull);
        pull.bind(&ep).unwrap();
        let ep = pull.last_endpoint().unwrap();
        let mut push = ctx.socket(SocketType::Push).unwrap();
        timeouts(&mut push);
        push.connect(&ep).unwrap();
        for i in 0..1000u32 {
            push.send(Msg::from(i.to_be_bytes().to_vec()), 0).unwrap();
        }
        push.send_multipart(["a", "", "c"], 0).unwrap();
        push.send(vec![7u8; 100_000], 0).unwrap();
        for i in 0..1000u32 {
            assert_eq!(pull.recv(0).unwrap(), &i.to_be_bytes()[..], "{ep}");
        }
        let parts = pull.recv_multipart(0).unwrap();
        assert_eq!(parts, vec![Msg::from("a"), Msg::from(""), Msg::from("c")]);
        assert_eq!(pull.recv(0).unwrap().len(), 100_000);
    }
}

#[test]
fn req_rep_every_transport() {
    for ep in endpoints("rr") {
        let ctx = Context::new();
        let mut rep = ctx.socket(SocketType::Rep).unwrap();
        timeouts(&mut rep);
        rep.bind(&ep).unwrap();
        let ep = rep.last_endpoint().unwrap();
        let mut req = ctx.socket(SocketType::Req).unwrap();
        timeouts(&mut req);
        req.connect(&ep).unwrap();
        assert_eq!(req.recv(0), Err(crate::Error::Fsm));
        for i in 0..50 {
            req.send(format!("ping {i}"), 0).unwrap();
            assert_eq!(req.send("again", 0), Err(crate::Error::Fsm));
            let m = rep.recv(0).unwrap();
            assert_eq!(m, format!("ping {i}").as_str());
            rep.send(m, 0).unwrap();
            assert_eq!(req.recv(0).unwrap(), format!("ping {i}").as_str());
        }
    }
}

#[test]
fn pub_sub_filters_every_transport() {
    for ep in endpoints("ps") {
        let ctx = Context::new();
        let mut publ = ctx.socket(SocketType::Pub).unwrap();
        publ.bind(&ep).unwrap();
        let ep = publ.last_endpoint().unwrap();
        let mut sub = ctx.socket(SocketType::Sub).unwrap();
        timeouts(&mut sub);
        sub.subscribe("A").unwrap();
        sub.connect(&ep).unwrap();
        // The subscription travels asynchronously: publish until the first one arrives.
        sub.set_int(opt::RCVTIMEO, 20).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            publ.send("B-no", 0).unwrap();
            publ.send("A-yes", 0).unwrap();
            if let Ok(m) = sub.recv(0) {
                assert_eq!(m, "A-yes");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no subscription over {ep}");
        }
    }
}

#[test]
fn dealer_router_identities_tcp() {
    let ctx = Context::new();
    let mut router = ctx.socket(SocketType::Router).unwrap();
    timeouts(&mut router);
    router.bind("tcp://127.0.0.1:*").unwrap();
    let ep = router.last_endpoint().unwrap();
    let mut dealer = ctx.socket(SocketType::Dealer).unwrap();
    timeouts(&mut dealer);
    dealer.set_bytes(opt::ROUTING_ID, b"D1").unwrap();
    dealer.connect(&ep).unwrap();
    dealer.send("hello", 0).unwrap();
    let parts = router.recv_multipart(0).unwrap();
    assert_eq!(parts, vec![Msg::from("D1"), Msg::from("hello")]);
    router.send_multipart(["D1", "world"], 0).unwrap();
    assert_eq!(dealer.recv(0).unwrap(), "world");
    router.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    assert_eq!(router.send_multipart(["nobody", "x"], 0), Err(crate::Error::HostUnreach));
}

#[test]
fn connect_before_bind_tcp() {
    let ctx = Context::new();
    // Find a free port, release it, connect first, bind later.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let ep = format!("tcp://127.0.0.1:{port}");
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.connect(&ep).unwrap();
    push.send("early", 0).unwrap();
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    timeouts(&mut pull);
    pull.bind(&ep).unwrap();
    assert_eq!(pull.recv(0).unwrap(), "early");
}

#[test]
fn close_delivers_everything() {
    for ep in endpoints("linger") {
        let ctx = Context::new();
        let mut pull = ctx.socket(SocketType::Pull).unwrap();
        timeouts(&mut pull);
        pull.bind(&ep).unwrap();
        let ep = pull.last_endpoint().unwrap();
        let mut push = ctx.socket(SocketType::Push).unwrap();
        push.set_int(opt::SNDHWM, 0).unwrap();
        push.connect(&ep).unwrap();
        for i in 0..10_000u32 {
            push.send(Msg::from(i.to_be_bytes().to_vec()), 0).unwrap();
        }
        drop(push);
        for i in 0..10_000u32 {
            assert_eq!(pull.recv(0).unwrap(), &i.to_be_bytes()[..], "{ep}");
        }
    }
}

/// A peer that replies and closes at once: the reply and the connection's end arrive in one
/// read, and the reply must still be delivered (it was once left unpublished in the pipe).
#[test]
fn reply_then_close_is_delivered() {
    for ep in ["tcp://127.0.0.1:*".to_string(), format!("ipc:///tmp/oxmq-smoke-{}-rtc.ipc", std::process::id())] {
        for size in [1usize, 4096, 65536] {
            let server_ctx = Context::new();
            let mut rep = server_ctx.socket(SocketType::Rep).unwrap();
            rep.bind(&ep).unwrap();
            let ep = rep.last_endpoint().unwrap();
            let t = std::thread::spawn(move || {
                timeouts(&mut rep);
                for _ in 0..20 {
                    let m = rep.recv(0).unwrap();
                    rep.send(m, 0).unwrap();
                }
                drop(rep);
                server_ctx.term().unwrap();
            });
            let ctx = Context::new();
            let mut req = ctx.socket(SocketType::Req).unwrap();
            timeouts(&mut req);
            req.connect(&ep).unwrap();
            for i in 0..20 {
                req.send(vec![i as u8; size], 0).unwrap();
                assert_eq!(req.recv(0).unwrap().len(), size, "{ep} {size} B: reply {i} lost");
            }
            t.join().unwrap();
        }
    }
}

#[test]
fn xpub_xsub_every_transport() {
    for ep in endpoints("xx") {
        let ctx = Context::new();
        let mut xpub = ctx.socket(SocketType::XPub).unwrap();
        timeouts(&mut xpub);
        xpub.bind(&ep).unwrap();
        let ep = xpub.last_endpoint().unwrap();
        let mut xsub = ctx.socket(SocketType::XSub).unwrap();
        timeouts(&mut xsub);
        xsub.connect(&ep).unwrap();
        let mut sub = ctx.socket(SocketType::Sub).unwrap();
        timeouts(&mut sub);
        sub.connect(&ep).unwrap();
        xsub.send(&b"\x01A"[..], 0).unwrap();
        assert_eq!(xpub.recv(0).unwrap(), &b"\x01A"[..], "{ep}");
        // A second subscriber to the same topic is not reported without XPUB_VERBOSE.
        sub.subscribe("A").unwrap();
        sub.subscribe("B").unwrap();
        assert_eq!(xpub.recv(0).unwrap(), &b"\x01B"[..], "{ep}");
        xpub.send("A-data", 0).unwrap();
        assert_eq!(xsub.recv(0).unwrap(), "A-data");
        assert_eq!(sub.recv(0).unwrap(), "A-data");
        // XSUB forwards other messages upstream; XPUB passes them up.
        xsub.send("hello upstream", 0).unwrap();
        assert_eq!(xpub.recv(0).unwrap(), "hello upstream");
        // The only subscriber of B goes away: XPUB reports the unsubscription.
        drop(sub);
        assert_eq!(xpub.recv(0).unwrap(), &b"\x00B"[..], "{ep}");
        xpub.set_int(opt::XPUB_VERBOSE, 1).unwrap();
        xsub.send(&b"\x01A"[..], 0).unwrap();
        assert_eq!(xpub.recv(0).unwrap(), &b"\x01A"[..], "verbose shows duplicates over {ep}");
    }
}
