//! The engine hook under the async layer, without an executor: a counting waker.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Wake, Waker};

struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counting() -> (Arc<Count>, Waker) {
    let c = Arc::new(Count(AtomicUsize::new(0)));
    (c.clone(), Waker::from(c))
}

/// A socket whose receives go pending at once (no spin: see `AsyncSocket::spin_by_default`),
/// for the tests of the engine's wake-ups.
fn without_spin(ctx: &Context, kind: SocketType) -> AsyncSocket {
    let mut s = AsyncSocket::new(ctx, kind).unwrap();
    s.set_int(opt::OXMQ_RECV_SPIN, 0).unwrap();
    s
}

/// An async PULL without spin bound at the inproc `endpoint`, and a blocking PUSH connected.
fn pull_over_inproc(ctx: &Context, endpoint: &str) -> (AsyncSocket, Socket) {
    let mut pull = without_spin(ctx, SocketType::Pull);
    pull.bind(endpoint).unwrap();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.connect(endpoint).unwrap();
    (pull, push)
}

fn eventfd_readable(s: &Socket) -> bool {
    let mut pfd = libc::pollfd { fd: s.fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, zero timeout.
    unsafe { libc::poll(&mut pfd, 1, 0) == 1 }
}

#[test]
fn a_pending_receive_is_woken_by_the_engine_not_the_eventfd() {
    let ctx = Context::new();
    let (mut pull, mut push) = pull_over_inproc(&ctx, "inproc://hook-wake");
    let (count, waker) = counting();
    let mut cx = TaskContext::from_waker(&waker);
    // The attach command is queued: the poll processes it and then goes pending.
    assert!(pull.poll_recv(&mut cx).is_pending());
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
    push.send("a", opt::SNDMORE).unwrap();
    push.send("b", 0).unwrap();
    assert_eq!(count.0.load(Ordering::SeqCst), 1, "the flush's read activation woke the task");
    assert!(!eventfd_readable(pull.get_ref()), "the eventfd was not signalled for a waker");
    match pull.poll_recv(&mut cx) {
        Poll::Ready(Ok(m)) => assert_eq!(m.to_bytes(), [Bytes::from("a"), Bytes::from("b")]),
        other => panic!("expected the message, got {:?}", other.map(|r| r.map(|m| m.len()))),
    }
    // Pending again; the socket given back to blocking use is signalled through its eventfd.
    assert!(pull.poll_recv(&mut cx).is_pending());
    let mut blocking = pull.into_inner();
    push.send("c", 0).unwrap();
    assert_eq!(count.0.load(Ordering::SeqCst), 1, "the waker was forgotten");
    assert!(eventfd_readable(&blocking));
    assert_eq!(blocking.recv(0).unwrap(), "c");
}

#[test]
fn a_queued_command_is_seen_at_registration() {
    let ctx = Context::new();
    let mut s = AsyncSocket::new(&ctx, SocketType::Pull).unwrap();
    s.bind("inproc://hook-queued").unwrap();
    let (count, waker) = counting();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.connect("inproc://hook-queued").unwrap(); // queues an attach command
    assert!(s.sock.register_waker(WakerSlot::Recv, &waker), "a queued command means: try again");
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
}

#[test]
fn receive_and_send_wakers_are_kept_apart() {
    let ctx = Context::new();
    let mut s = AsyncSocket::new(&ctx, SocketType::Pair).unwrap();
    s.bind("inproc://hook-apart").unwrap();
    let (rc, rw) = counting();
    let (sc, sw) = counting();
    assert!(!s.sock.register_waker(WakerSlot::Recv, &rw));
    assert!(!s.sock.register_waker(WakerSlot::Send, &sw));
    let mut peer = ctx.socket(SocketType::Pair).unwrap();
    peer.connect("inproc://hook-apart").unwrap();
    assert_eq!((rc.0.load(Ordering::SeqCst), sc.0.load(Ordering::SeqCst)), (1, 1));
}

#[test]
fn shutdown_wakes_a_pending_receive_with_term() {
    let ctx = Context::new();
    let mut s = without_spin(&ctx, SocketType::Sub);
    let (count, waker) = counting();
    let mut cx = TaskContext::from_waker(&waker);
    assert!(s.poll_recv(&mut cx).is_pending());
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
    ctx.shutdown();
    assert_eq!(count.0.load(Ordering::SeqCst), 1);
    assert!(matches!(s.poll_recv(&mut cx), Poll::Ready(Err(Error::Term))));
}

#[test]
fn an_empty_message_is_invalid() {
    let ctx = Context::new();
    let mut s = AsyncSocket::new(&ctx, SocketType::Pub).unwrap();
    assert_eq!(s.try_send(&mut Message::new()).unwrap_err(), Error::Invalid);
}

/// `poll_send`'s paths: a single frame refused with an error (not a wait) comes back with
/// the message untouched, a single frame at the high-water mark leaves it untouched and goes
/// pending, and one that goes leaves the message empty; an empty message is refused by the
/// general path.
#[test]
fn poll_send_says_what_became_of_the_message() {
    let ctx = Context::new();
    let (count, waker) = counting();
    let mut cx = TaskContext::from_waker(&waker);
    let mut rep = AsyncSocket::new(&ctx, SocketType::Rep).unwrap();
    let mut m = Message::from("early");
    assert!(matches!(rep.poll_send(&mut cx, &mut m), Poll::Ready(Err(Error::Fsm))));
    assert_eq!(m.len(), 1);
    assert_eq!(m[0], "early");
    assert!(matches!(rep.poll_send(&mut cx, &mut Message::new()), Poll::Ready(Err(Error::Invalid))));

    let mut push = AsyncSocket::new(&ctx, SocketType::Push).unwrap();
    push.set_int(opt::SNDHWM, 1).unwrap();
    push.bind("inproc://poll-send-paths").unwrap();
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_int(opt::RCVHWM, 1).unwrap();
    pull.connect("inproc://poll-send-paths").unwrap();
    let mut sent = 0;
    let mut m = Message::from("x");
    while let Poll::Ready(r) = push.poll_send(&mut cx, &mut m) {
        r.unwrap();
        assert!(m.is_empty(), "a sent message is left empty");
        sent += 1;
        assert!(sent < 100, "the high-water mark stops the sender");
        m = Message::from("x");
    }
    assert_eq!(m.len(), 1, "a refused frame stays with the caller");
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
    assert_eq!(pull.recv(0).unwrap(), "x");
    assert!(count.0.load(Ordering::SeqCst) >= 1, "room wakes the pending send");
    assert!(matches!(push.poll_send(&mut cx, &mut m), Poll::Ready(Ok(()))));
    assert!(m.is_empty());
}

#[test]
fn the_spin_backs_off_while_spins_run_out_and_comes_back_at_once() {
    let mut g = SpinGate::default();
    assert!(g.open());
    // Each spin that runs out closes the gate for twice as many receives, up to the cap.
    for skip in [1, 2, 4, 8, 16, 32, 64, 64] {
        g.spin_ran_out();
        for _ in 0..skip {
            assert!(!g.open());
            g.skipped();
        }
        assert!(g.open(), "open again after {skip} receives");
    }
    // A spin that finds its message resets the backoff.
    g.spin_succeeded();
    g.spin_ran_out();
    g.skipped();
    assert!(g.open());
}

/// Polls `s` until a poll goes pending without waking its task (the receive now waits for the
/// engine), counting the polls that woke it; panics if a message comes or 10 s pass.
fn polls_until_registered(s: &mut AsyncSocket, count: &Count, cx: &mut TaskContext<'_>) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut yielded = 0;
    loop {
        let before = count.0.load(Ordering::SeqCst);
        assert!(s.poll_recv(cx).is_pending(), "nothing was sent");
        match count.0.load(Ordering::SeqCst) - before {
            0 => return yielded,
            1 => yielded += 1,
            n => panic!("one poll woke its task {n} times"),
        }
        assert!(Instant::now() < deadline, "the spin never ended");
    }
}

/// Waits (bounded) until the engine has woken the task `count` counts.
fn woken(count: &Count, times: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while count.0.load(Ordering::SeqCst) < times {
        assert!(Instant::now() < deadline, "the engine never woke the task");
        std::thread::yield_now();
    }
}

/// An async PULL bound over tcp and a blocking PUSH connected to it.
fn pull_over_tcp(ctx: &Context) -> (AsyncSocket, Socket) {
    let mut pull = AsyncSocket::new(ctx, SocketType::Pull).unwrap();
    pull.bind("tcp://127.0.0.1:*").unwrap();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.connect(&pull.last_endpoint().unwrap()).unwrap();
    (pull, push)
}

/// A receive that finds nothing, on a socket with a spin window, yields between looks (each
/// poll returns `Pending` having woken its own task) while the window lasts, reading its tcp
/// connection on the polling thread; then it hands the input back and waits for the engine,
/// whose I/O thread reads the next message and wakes the task.
#[test]
fn a_receive_yields_while_the_spin_lasts_then_waits_for_the_engine() {
    let ctx = Context::new();
    let (mut pull, mut push) = pull_over_tcp(&ctx);
    let (count, waker) = counting();
    let mut cx = TaskContext::from_waker(&waker);

    // A window longer than the test: every poll until a message comes is a look that yields.
    // Messages sent one at a time, each once the receive has looked: the looks hold the
    // connection's input (lent from one look to the next), so they read it themselves, unless
    // the thread stalled past the lease and the I/O thread took the input back meanwhile.
    pull.set_int(opt::OXMQ_RECV_SPIN, 1_000_000).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    for i in 0..20 {
        let before = count.0.load(Ordering::SeqCst);
        assert!(pull.poll_recv(&mut cx).is_pending());
        assert_eq!(count.0.load(Ordering::SeqCst), before + 1, "the receive yielded: its task is woken already");
        push.send(format!("{i}"), 0).unwrap();
        let m = loop {
            let before = count.0.load(Ordering::SeqCst);
            match pull.poll_recv(&mut cx) {
                Poll::Ready(r) => break r.unwrap(),
                Poll::Pending => assert_eq!(count.0.load(Ordering::SeqCst), before + 1, "every look yields"),
            }
            assert!(Instant::now() < deadline, "message {i} never came");
        };
        assert_eq!(m[0], format!("{i}").as_str());
    }
    let direct = pull.get_mut().stats().direct_reads;
    assert!(direct >= 1, "the looks read the connection on this thread");
    assert!(!pull.spins_in_place, "every look came on this thread");

    // A window of a millisecond: the looks run it out, then the receive waits for the engine.
    pull.set_int(opt::OXMQ_RECV_SPIN, 1_000).unwrap();
    let yielded = polls_until_registered(&mut pull, &count, &mut cx);
    assert!(yielded >= 1, "the receive looked at least once before it waited");
    let now = count.0.load(Ordering::SeqCst);
    push.send("read by the I/O thread", 0).unwrap();
    woken(&count, now + 1);
    match pull.poll_recv(&mut cx) {
        Poll::Ready(Ok(m)) => assert_eq!(m[0], "read by the I/O thread"),
        other => panic!("expected the message, got {:?}", other.map(|r| r.map(|m| m.len()))),
    }
    assert_eq!(pull.get_mut().stats().direct_reads, direct, "the I/O thread read the last message, after the looks");
}

/// An executor that polls a task on another thread than the one it yielded on (tokio's
/// multi-thread scheduler) makes the socket spin in place, as a blocking receive does: the
/// rest of the window is spent on that thread, after which the receive waits for the engine
/// without having woken its task; and a later receive's spin starts in place.
#[test]
fn a_receive_moved_between_threads_spins_in_place() {
    let ctx = Context::new();
    let (mut pull, mut push) = pull_over_tcp(&ctx);
    let (count, waker) = counting();
    pull.set_int(opt::OXMQ_RECV_SPIN, 200_000).unwrap();
    assert!(pull.poll_recv(&mut TaskContext::from_waker(&waker)).is_pending());
    assert_eq!(count.0.load(Ordering::SeqCst), 1, "the first look yielded");
    std::thread::scope(|t| {
        t.spawn(|| {
            let mut cx = TaskContext::from_waker(&waker);
            assert!(pull.poll_recv(&mut cx).is_pending(), "nothing was sent");
        });
    });
    assert!(pull.spins_in_place);
    assert_eq!(count.0.load(Ordering::SeqCst), 1, "the spin in place ran the window out, then waited");
    push.send("after the window", 0).unwrap();
    woken(&count, 2);
    match pull.poll_recv(&mut TaskContext::from_waker(&waker)) {
        Poll::Ready(Ok(m)) => assert_eq!(m[0], "after the window"),
        other => panic!("expected the message, got {:?}", other.map(|r| r.map(|m| m.len()))),
    }

    pull.set_int(opt::OXMQ_RECV_SPIN, 2_000).unwrap();
    assert!(pull.gate.open(), "a new window opens the gate");
    assert_eq!(polls_until_registered(&mut pull, &count, &mut TaskContext::from_waker(&waker)), 0);
    assert_eq!(count.0.load(Ordering::SeqCst), 2, "a spin in place never wakes its task");
    assert!(!pull.gate.open(), "the receive spun, in place, and ran the window out");
}

/// `recv_into` takes a one-frame message in place of the frame it holds, the rest of a
/// multi-part message after it, and any message into a message of several frames; a poll that
/// finds nothing leaves the message as it was.
#[test]
fn recv_into_replaces_the_frames_only_when_a_message_comes() {
    let ctx = Context::new();
    let (mut pull, mut push) = pull_over_inproc(&ctx, "inproc://recv-into");
    let (count, waker) = counting();
    let mut cx = TaskContext::from_waker(&waker);

    let mut m = Message::from("kept");
    assert!(pull.poll_recv_into(&mut cx, &mut m).is_pending());
    assert_eq!(m.to_bytes(), [Bytes::from("kept")], "a pending receive leaves the message alone");

    push.send("one", 0).unwrap();
    woken(&count, 1);
    assert!(matches!(pull.poll_recv_into(&mut cx, &mut m), Poll::Ready(Ok(()))));
    assert_eq!(m.to_bytes(), [Bytes::from("one")]);

    // In place: the one frame takes the next message's first frame, then the rest follows.
    push.send("a", opt::SNDMORE).unwrap();
    push.send("b", opt::SNDMORE).unwrap();
    push.send("c", 0).unwrap();
    push.send("single", 0).unwrap();
    assert!(matches!(pull.poll_recv_into(&mut cx, &mut m), Poll::Ready(Ok(()))));
    assert_eq!(m.to_bytes(), [Bytes::from("a"), Bytes::from("b"), Bytes::from("c")]);
    // Into three frames: replaced whole.
    assert!(matches!(pull.poll_recv_into(&mut cx, &mut m), Poll::Ready(Ok(()))));
    assert_eq!(m.to_bytes(), [Bytes::from("single")]);
}

/// A dropped `recv_into` future takes nothing from the socket.
#[test]
fn a_dropped_recv_into_loses_no_message() {
    let ctx = Context::new();
    let (mut pull, mut push) = pull_over_inproc(&ctx, "inproc://recv-into-cancel");
    let (count, waker) = counting();
    let mut cx = TaskContext::from_waker(&waker);
    let mut m = Message::new();
    {
        let mut f = pull.recv_into(&mut m);
        assert!(std::future::Future::poll(std::pin::Pin::new(&mut f), &mut cx).is_pending());
    }
    push.send("still there", 0).unwrap();
    woken(&count, 1);
    let mut m2 = Message::from("x");
    assert!(matches!(pull.poll_recv_into(&mut cx, &mut m2), Poll::Ready(Ok(()))));
    assert_eq!(m2[0], "still there");
    assert!(m.is_empty());
}
