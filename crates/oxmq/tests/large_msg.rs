//! Large messages. Past a context's MAX_MSGSZ, once the application set one (issue 19): a
//! frame larger than the bound cannot be received by any oxmq peer of that context (the
//! decoder refuses it and drops the connection), so the sender refuses it up front with
//! `MsgSize` instead of losing it on the wire. Without it, as in libzmq, a message may be as
//! large as memory allows: one over 2 GiB crosses tcp whole (issue 44).

mod common;

use common::*;
use oxmq::{opt, Context, Error, Msg, SocketType};

fn body(n: usize) -> Msg {
    let mut v = vec![b'x'; n];
    v[n - 1] = b'y';
    Msg::from_bytes_uncopied(v.into())
}

/// The bound itself goes through whole; one byte more is refused at send, and the connection
/// is still usable afterwards (nothing was lost or half-sent).
#[test]
fn frame_over_ctx_max_msgsz_is_refused_at_send() {
    let ctx = Context::new();
    ctx.set(opt::MAX_MSGSZ, 1000).unwrap();
    for t in [Transport::Tcp, Transport::Ipc, Transport::Inproc] {
        let (mut a, mut b, _) = pair(&ctx, t, SocketType::Pair, SocketType::Pair);
        let mut m = body(1001);
        assert_eq!(b.send_msg(&mut m, 0), Err(Error::MsgSize), "{t:?}");
        assert_eq!(m.len(), 1001, "a refused frame is left to the caller");
        let mut m = body(1000);
        b.send_msg(&mut m, 0).unwrap();
        let got = recv_bytes(&mut a);
        assert_eq!((got.len(), got[999]), (1000, b'y'), "{t:?}");
    }
}

/// Bytes of memory available (`MemAvailable`), if the system says.
fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A message over 2 GiB (2^31 + 1 bytes) moves over tcp whole, as libzmq moves it (issue 44:
/// it was refused with `MsgSize`): its 64-bit frame size, the sender writing the body from its
/// own memory, the receiver growing its buffer as the bytes arrive (doubling, never to the size
/// the header claims) and handing the body over without a copy. Checked at its first and last
/// bytes and on either side of 2^31. Both ends are in this process: the sent body and the
/// received one, about 4.3 GB at the peak. Skipped, saying so, where memory is short.
#[test]
fn over_2gib_moves_whole_over_tcp() {
    let n = (1usize << 31) + 1;
    let need = 3 * n as u64;
    match mem_available() {
        Some(avail) if avail >= need => {}
        avail => {
            eprintln!("skipped: a {n}-byte message needs about {need} bytes of memory here, {avail:?} available");
            return;
        }
    }
    let ctx = Context::new();
    let (mut a, mut b, _) = pair(&ctx, Transport::Tcp, SocketType::Pair, SocketType::Pair);
    a.set_int(opt::RCVTIMEO, 300_000).unwrap();
    let mut v = vec![b'x'; n];
    v[0] = b'F';
    v[(1 << 31) - 1] = b'L';
    v[n - 1] = b'Z'; // at 2^31
    let mut m = Msg::from_bytes_uncopied(v.into());
    let started = std::time::Instant::now();
    b.send("head", opt::SNDMORE).unwrap();
    b.send_msg(&mut m, 0).unwrap();
    assert_eq!(recv_bytes(&mut a), b"head");
    assert!(a.rcvmore());
    let got = a.recv(0).unwrap();
    eprintln!("{n} bytes over tcp in {:?}", started.elapsed());
    assert!(!a.rcvmore());
    assert_eq!(got.len(), n);
    let g = got.as_slice();
    assert_eq!((g[0], g[1], g[(1 << 31) - 2], g[(1 << 31) - 1], g[n - 1]), (b'F', b'x', b'x', b'L', b'Z'));
    drop(got);
    // The connection goes on.
    b.send("after", 0).unwrap();
    assert_eq!(recv_bytes(&mut a), b"after");
}

/// [`over_2gib_moves_whole_over_tcp`] under CURVE (libzmq seals any size): the sender seals
/// the body into its output buffer, the receiver opens it in place. About 6.5 GB at the peak
/// (the body, its sealed copy, the received body), so left out of the default run:
/// `cargo test --release -p oxmq --test large_msg -- --ignored`.
#[test]
#[ignore = "needs about 6.5 GB of memory"]
fn over_2gib_moves_whole_under_curve() {
    let n = (1usize << 31) + 1;
    if mem_available().is_some_and(|a| a < 4 * n as u64) {
        eprintln!("skipped: not enough memory");
        return;
    }
    let ctx = Context::new();
    let (spub, ssec) = oxmq::security::curve_keypair();
    let (cpub, csec) = oxmq::security::curve_keypair();
    let mut a = socket(&ctx, SocketType::Pair);
    a.set_int(opt::CURVE_SERVER, 1).unwrap();
    a.set_bytes(opt::CURVE_SECRETKEY, ssec.as_bytes()).unwrap();
    let ep = bind(&mut a, Transport::Tcp);
    let mut b = socket(&ctx, SocketType::Pair);
    b.set_bytes(opt::CURVE_SERVERKEY, spub.as_bytes()).unwrap();
    b.set_bytes(opt::CURVE_PUBLICKEY, cpub.as_bytes()).unwrap();
    b.set_bytes(opt::CURVE_SECRETKEY, csec.as_bytes()).unwrap();
    b.connect(&ep).unwrap();
    a.set_int(opt::RCVTIMEO, 300_000).unwrap();
    let mut v = vec![b'x'; n];
    v[0] = b'F';
    v[n - 1] = b'Z';
    let mut m = Msg::from_bytes_uncopied(v.into());
    b.send_msg(&mut m, 0).unwrap();
    let got = a.recv(0).unwrap();
    let g = got.as_slice();
    assert_eq!((g.len(), g[0], g[1], g[n - 2], g[n - 1]), (n, b'F', b'x', b'x', b'Z'));
}

/// A large frame inside a multi-part message (written from its own memory rather than copied
/// into the batch) is still part of that one message: a PUSH at SNDHWM 1 towards a PULL at
/// RCVHWM 1 goes on sending after it, message after message.
#[test]
fn large_middle_frame_counts_as_part_of_its_message() {
    let ctx = Context::new();
    for t in [Transport::Tcp, Transport::Ipc] {
        let mut pull = socket(&ctx, SocketType::Pull);
        pull.set_int(opt::RCVHWM, 1).unwrap();
        let ep = bind(&mut pull, t);
        let mut push = socket(&ctx, SocketType::Push);
        push.set_int(opt::SNDHWM, 1).unwrap();
        push.connect(&ep).unwrap();
        for round in 0..20u8 {
            push.send([round].as_slice(), opt::SNDMORE).unwrap();
            let mut big = body(64 * 1024);
            push.send_msg(&mut big, opt::SNDMORE).unwrap();
            push.send("end", 0).unwrap_or_else(|e| panic!("{t:?} round {round}: {e:?}"));
            assert_eq!(recv_bytes(&mut pull), [round]);
            assert!(pull.rcvmore());
            assert_eq!(recv_bytes(&mut pull).len(), 64 * 1024);
            assert_eq!(recv_bytes(&mut pull), b"end");
        }
    }
}
