//! The edges of `Socket::fd` (ZMQ_FD) that an event loop needs, under libzmq's edge-triggered
//! contract: after the loop has read `events()` and found nothing to receive, the next message
//! must make the descriptor readable, whatever the socket did in between by its user's own
//! calls (a send that turns a REQ into one awaiting its reply, a connect that attaches a
//! pipe). zeromq.js's callback API hung on each (tests/c/test_event_loop.c drives the same
//! through the C ABI, in zeromq.js's own loop).

mod common;

use common::{socket, unique};
use oxmq::{opt, Context, Socket, SocketType as T};

/// True when `s`'s descriptor polls readable within `ms`.
fn signals(s: &Socket, ms: i32) -> bool {
    let mut pfd = libc::pollfd { fd: s.fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd for the duration of the call.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    assert!(rc >= 0, "poll: {}", std::io::Error::last_os_error());
    rc == 1
}

/// Waits on the descriptor, reading `events()` at each signal as a loop does (a signal may
/// be for something else: a peer attached, room to send), until it reports POLLIN; false if
/// the descriptor stays quiet for `ms` before that.
fn signals_input(s: &mut Socket, ms: i32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms as u64);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now()).as_millis() as i32;
        if !signals(s, left) {
            return false;
        }
        if s.events().unwrap() & opt::POLLIN != 0 {
            return true;
        }
    }
}

/// Reads `events()` until the descriptor is quiet (looking drains it), as a loop does.
fn settle(s: &mut Socket) -> i16 {
    let mut ev = s.events().unwrap();
    while signals(s, 0) {
        ev = s.events().unwrap();
    }
    ev
}

fn endpoints(tag: &str) -> [String; 3] {
    [format!("inproc://{}", unique(tag)), "tcp://127.0.0.1:*".into(), format!("ipc://{}", common::ipc_path())]
}

/// REQ: `events()` while no request is out says "no POLLIN" without looking at any pipe; the
/// send that follows must leave the pipes watched, or the reply arrives unannounced (the
/// burst of zeromq.js's compat "should support a burst" hung on its last reply so).
#[test]
fn a_reply_signals_after_a_request_sent_without_looking_again() {
    for ep in endpoints("req-edge") {
        let ctx = Context::new();
        let mut rep = socket(&ctx, T::Rep);
        rep.bind(&ep).unwrap();
        let ep = rep.last_endpoint().unwrap();
        let mut req = socket(&ctx, T::Req);
        req.connect(&ep).unwrap();
        for i in 0..20 {
            // The loop looks: nothing to receive (no request out), and the descriptor quiet.
            assert_eq!(settle(&mut req) & opt::POLLIN, 0);
            req.send(format!("q{i}"), opt::DONTWAIT).unwrap();
            assert_eq!(rep.recv(0).unwrap(), format!("q{i}").as_str());
            rep.send(format!("r{i}"), 0).unwrap();
            // Nothing looks at REQ after its send but the descriptor.
            assert!(signals_input(&mut req, 5000), "{ep}: reply {i} never signalled ZMQ_FD");
            assert_eq!(req.recv(opt::DONTWAIT).unwrap(), format!("r{i}").as_str());
        }
    }
}

/// REQ_RELAXED: replies to a request given up on are dropped when the next request begins,
/// as libzmq's REQ drops them (the looking that arms the pipes is that drop).
#[test]
fn a_relaxed_req_drops_late_replies_when_a_request_begins() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("relaxed-edge"));
    let mut rep = socket(&ctx, T::Rep);
    rep.bind(&ep).unwrap();
    let mut req = socket(&ctx, T::Req);
    req.set_int(opt::REQ_RELAXED, 1).unwrap();
    req.connect(&ep).unwrap();
    req.send("q1", 0).unwrap();
    assert_eq!(rep.recv(0).unwrap(), "q1");
    rep.send("late", 0).unwrap();
    assert!(signals_input(&mut req, 5000));
    req.send("q2", 0).unwrap(); // "late" is queued: dropped here
    assert_eq!(rep.recv(0).unwrap(), "q2");
    rep.send("r2", 0).unwrap();
    assert!(signals_input(&mut req, 5000), "the reply to q2 signals");
    assert_eq!(req.recv(opt::DONTWAIT).unwrap(), "r2", "not the late reply");
}

/// A socket that looked before it connected (no pipe then): the pipe its connect attaches
/// must announce its first message. An inproc binder writes its routing id into that pipe
/// before the connecting socket owns it, which woke nobody.
#[test]
fn a_connecting_socket_hears_its_first_message() {
    for ep in endpoints("connect-edge") {
        for (bound, conn) in [(T::Push, T::Pull), (T::XPub, T::Sub), (T::Router, T::Dealer), (T::Pair, T::Pair)] {
            let ctx = Context::new();
            let mut b = socket(&ctx, bound);
            b.bind(&ep).unwrap();
            let ep = b.last_endpoint().unwrap();
            let mut c = socket(&ctx, conn);
            if conn == T::Sub {
                c.subscribe("").unwrap();
            }
            assert_eq!(settle(&mut c) & opt::POLLIN, 0);
            c.connect(&ep).unwrap();
            match bound {
                // The binder learns of the peer first: a subscription, or the dealer's hello.
                T::XPub => assert_eq!(&b.recv(0).unwrap()[..], b"\x01"),
                T::Router => {
                    c.send("hello", 0).unwrap();
                    let id = b.recv(0).unwrap();
                    assert_eq!(b.recv(0).unwrap(), "hello");
                    b.send(id, opt::SNDMORE).unwrap();
                }
                _ => {}
            }
            // The connecting socket is left alone until its descriptor says to look.
            b.send("first", 0).unwrap();
            assert!(signals_input(&mut c, 5000), "{ep} {conn:?}: the first message never signalled ZMQ_FD");
            assert_eq!(c.recv(opt::DONTWAIT).unwrap(), "first");
        }
    }
}
