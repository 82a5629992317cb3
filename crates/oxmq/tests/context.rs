//! Context life cycle: shutdown wakes blocked calls with ETERM, term waits for sockets, socket
//! limits and context options (zmq_ctx_new, zmq_ctx_shutdown, zmq_ctx_term, zmq_ctx_set).

mod common;

use common::*;
use oxmq::{opt, Context, Error, SocketType as T};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

#[test]
fn shutdown_wakes_blocked_recv_with_term() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Pull).unwrap();
    s.bind(&format!("inproc://{}", unique("shutdown"))).unwrap();
    let (started_tx, started_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        started_tx.send(()).unwrap();
        let r = s.recv(0); // RCVTIMEO is infinite: only shutdown can end this
        done_tx.send(r.map(|m| m.to_vec())).unwrap();
    });
    started_rx.recv_timeout(DEADLINE).unwrap();
    // The receive must still be blocked: nothing can arrive.
    assert!(done_rx.recv_timeout(Duration::from_millis(50)).is_err(), "recv returned without a message");
    ctx.shutdown();
    let r = done_rx.recv_timeout(DEADLINE).expect("recv still blocked after ctx.shutdown()");
    assert_eq!(r.unwrap_err(), Error::Term);
}

#[test]
fn shutdown_wakes_blocked_send_with_term() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Push).unwrap();
    s.set_int(opt::LINGER, 0).unwrap();
    s.set_int(opt::SNDHWM, 1).unwrap(); // HWM applies to pipes created after it is set
    s.connect(&format!("tcp://127.0.0.1:{}", free_port())).unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Fill the queue of a connection that never completes, then block.
        let mut r = Ok(());
        for _ in 0..100 {
            r = s.send("x", 0);
            if r.is_err() {
                break;
            }
        }
        done_tx.send(r).unwrap();
    });
    assert!(done_rx.recv_timeout(Duration::from_millis(50)).is_err(), "send did not block at HWM");
    ctx.shutdown();
    let r = done_rx.recv_timeout(DEADLINE).expect("send still blocked after ctx.shutdown()");
    assert_eq!(r.unwrap_err(), Error::Term);
}

#[test]
fn after_shutdown_everything_is_term() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Dealer).unwrap();
    ctx.shutdown();
    assert_eq!(ctx.socket(T::Dealer).err(), Some(Error::Term));
    assert_eq!(s.send("x", opt::DONTWAIT).unwrap_err(), Error::Term);
    assert_eq!(s.recv(opt::DONTWAIT).unwrap_err(), Error::Term);
    assert_eq!(s.connect("tcp://127.0.0.1:1").unwrap_err(), Error::Term);
    assert_eq!(s.bind("inproc://x").unwrap_err(), Error::Term);
    // Closing (dropping) the socket after shutdown is fine, and term then returns.
    drop(s);
    within(Duration::from_secs(2), "term after shutdown", move || ctx.term().unwrap());
}

#[test]
fn term_waits_for_every_socket_to_close() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Rep).unwrap();
    s.bind(&format!("inproc://{}", unique("term"))).unwrap();
    let closed = Arc::new(AtomicBool::new(false));
    let closed2 = closed.clone();
    let (blocked_tx, blocked_rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        blocked_tx.send(()).unwrap();
        assert_eq!(s.recv(0).unwrap_err(), Error::Term);
        // Keep the socket open a while after ETERM: term must wait for the close.
        std::thread::sleep(Duration::from_millis(200));
        closed2.store(true, Ordering::SeqCst);
        drop(s);
    });
    blocked_rx.recv_timeout(DEADLINE).unwrap();
    let c = ctx.clone();
    within(DEADLINE, "ctx.term()", move || c.term().unwrap());
    assert!(closed.load(Ordering::SeqCst), "term returned before the socket was closed");
    worker.join().unwrap();
}

#[test]
fn term_with_no_sockets_returns() {
    let ctx = Context::new();
    let s = ctx.socket(T::Pub).unwrap();
    drop(s);
    within(Duration::from_secs(2), "term", move || ctx.term().unwrap());
}

#[test]
fn max_sockets_limit() {
    let ctx = Context::new();
    assert!(ctx.get(opt::MAX_SOCKETS).unwrap() >= 1023, "libzmq default is 1023");
    ctx.set(opt::MAX_SOCKETS, 3).unwrap();
    assert_eq!(ctx.get(opt::MAX_SOCKETS).unwrap(), 3);
    let a = ctx.socket(T::Pair).unwrap();
    let _b = ctx.socket(T::Pair).unwrap();
    let _c = ctx.socket(T::Pair).unwrap();
    assert_eq!(ctx.socket(T::Pair).err(), Some(Error::MFile));
    drop(a);
    // A closed socket frees its slot.
    let _d = ctx.socket(T::Pair).unwrap();
}

#[test]
fn context_options() {
    let ctx = Context::new();
    assert_eq!(ctx.get(opt::IO_THREADS).unwrap(), 1);
    assert_eq!(ctx.get(opt::MSG_T_SIZE).unwrap(), 64);
    assert!(ctx.get(opt::SOCKET_LIMIT).unwrap() >= ctx.get(opt::MAX_SOCKETS).unwrap());
    assert_eq!(ctx.get(opt::CTX_IPV6).unwrap(), 0);
    assert_eq!(ctx.set(opt::IO_THREADS, -1).unwrap_err(), Error::Invalid);
    assert_eq!(ctx.set(9999, 1).unwrap_err(), Error::Invalid);
    assert_eq!(ctx.get(9999).unwrap_err(), Error::Invalid);
}

#[test]
fn context_is_shared_across_threads() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("threads"));
    let mut pull = socket(&ctx, T::Pull);
    pull.bind(&ep).unwrap();
    let handles: Vec<_> = (0..4u8)
        .map(|k| {
            let c = ctx.clone();
            let ep = ep.clone();
            std::thread::spawn(move || {
                let mut push = c.socket(T::Push).unwrap();
                push.connect(&ep).unwrap();
                for i in 0..100u8 {
                    push.send(vec![k, i], 0).unwrap();
                }
            })
        })
        .collect();
    let mut next = [0u8; 4];
    for _ in 0..400 {
        let m = recv_bytes(&mut pull);
        assert_eq!(m[1], next[m[0] as usize]);
        next[m[0] as usize] += 1;
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(next, [100; 4]);
}

/// A peer that reads late still gets every byte a closed socket had written when the context
/// terminated, even though the peer's own input sat unread at oxmq's end: closing a tcp socket
/// with unread input sends RST, and the kernel then drops what it had not yet delivered.
#[test]
fn term_delivers_the_last_bytes_to_a_peer_whose_input_was_unread() {
    use common::raw::{frame, handshake};
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ctx = Context::new();
    let mut s = ctx.socket(T::Dealer).unwrap();
    s.set_int(opt::RCVHWM, 1).unwrap(); // the session stops reading once a message is held
    s.set_int(opt::LINGER, 10_000).unwrap();
    s.connect(&format!("tcp://{}", listener.local_addr().unwrap())).unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    peer.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    peer.write_all(&handshake(b"DEALER")).unwrap();
    // Input the DEALER never reads: far more than one read of its session takes.
    let mut input = peer.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk: Vec<u8> = (0..256).flat_map(|_| frame(0, &[7u8; 250])).collect();
        for _ in 0..64 {
            if input.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    eventually("a message from the peer", || s.get_int(opt::EVENTS).ok().filter(|e| e & opt::POLLIN as i32 != 0));
    const COUNT: usize = 200;
    let body = vec![b'x'; 10_000];
    for _ in 1..COUNT {
        s.send(&body[..], 0).unwrap();
    }
    s.send(&b"the last message"[..], 0).unwrap();
    let term = std::thread::spawn(move || {
        drop(s);
        drop(ctx);
    });
    // Read everything, late, until oxmq's end of stream. A reset may end it once everything
    // has arrived (the peer's writer fills oxmq's input again after oxmq has emptied it), but
    // must not cut it short.
    let mut seen = Vec::new();
    let mut buf = vec![0u8; 65536];
    let t0 = std::time::Instant::now();
    loop {
        assert!(t0.elapsed() < DEADLINE, "no end of stream from oxmq");
        match peer.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("read after {} bytes: {e}", seen.len()),
        }
    }
    drop(peer);
    within(DEADLINE, "context termination", move || term.join().unwrap());
    writer.join().unwrap();
    assert!(seen.len() > (COUNT - 1) * 10_000, "{} bytes", seen.len());
    assert!(seen.ends_with(&frame(0, b"the last message")), "the stream ends without the last message");
}

/// A closing socket's connection that waits for its peer to take its last bytes (a peer that
/// reads nothing and sends without end) still ends at LINGER.
#[test]
fn term_ends_at_linger_while_a_peer_floods_a_closing_connection() {
    use common::raw::{frame, handshake};
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ctx = Context::new();
    let mut s = ctx.socket(T::Dealer).unwrap();
    s.set_int(opt::LINGER, 300).unwrap();
    s.connect(&format!("tcp://{}", listener.local_addr().unwrap())).unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    peer.write_all(&handshake(b"DEALER")).unwrap();
    // More than the kernel holds for a peer that does not read: the send queue stays full.
    let body = vec![b'x'; 64 * 1024];
    for _ in 0..200 {
        s.send(&body[..], 0).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flood = {
        let (mut out, stop) = (peer.try_clone().unwrap(), stop.clone());
        std::thread::spawn(move || {
            let chunk: Vec<u8> = (0..64).flat_map(|_| frame(0, &[7u8; 1000])).collect();
            while !stop.load(Ordering::Relaxed) && out.write_all(&chunk).is_ok() {}
        })
    };
    within(DEADLINE, "context termination under a flood", move || {
        drop(s);
        drop(ctx);
    });
    stop.store(true, Ordering::Relaxed);
    drop(peer);
    flood.join().unwrap();
}
