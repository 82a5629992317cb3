//! The direct receive path (`socket/direct.rs`): a receiver blocked in `recv` reads its tcp and
//! ipc connections itself, and the I/O thread's epoll stops reporting their input meanwhile.
//!
//! What must hold whichever thread reads: the path is taken in an exchange; input goes back to
//! the I/O thread when the wait ends, or when no wait comes for it after a quick exchange lent
//! it on (else a later message would never be read); a command frame
//! read mid-wait (PING) is answered; the end of a stream and a hostile frame read mid-wait end
//! the connection. Raw peers speak hand-written ZMTP (`common/raw.rs`).

mod common;

use common::raw::*;
use common::*;
use oxmq::{opt, poll, Context, Error, PollItem, SocketStats, SocketType as T};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `n` REQ/REP round trips over `t`, the REP echoing on its own thread, every reply checked in
/// order; the two sockets' statistics after it, REP's then REQ's.
fn exchange(mut rep: oxmq::Socket, mut req: oxmq::Socket, n: u32, t: Transport) -> (SocketStats, SocketStats) {
    let server = std::thread::spawn(move || {
        for _ in 0..n {
            let m = rep.recv(0).expect("request");
            rep.send(m, 0).expect("reply");
        }
        rep.stats()
    });
    for i in 0..n {
        req.send(&i.to_be_bytes()[..], 0).unwrap();
        assert_eq!(recv_bytes(&mut req), i.to_be_bytes(), "{t:?} reply {i}");
    }
    (server.join().expect("server"), req.stats())
}

/// REQ/REP over tcp and ipc: every reply arrives in order, and the waits read input themselves.
#[test]
fn an_exchange_takes_the_direct_path() {
    for t in [Transport::Tcp, Transport::Ipc] {
        let ctx = Context::new();
        let (rep, req, _) = pair(&ctx, t, T::Rep, T::Req);
        let (rep, req) = exchange(rep, req, 300, t);
        // Each of the 600 waits arms its connection before the peer can answer, so the input is
        // read by the waiting thread unless the I/O thread held the session at that moment.
        assert!(rep.direct_reads + req.direct_reads > 0, "{t:?}: no input was read by a waiting receiver");
    }
}

/// A thread-safe socket's receiver waits as a plain socket's does and without the socket's
/// lock: a CLIENT's receiving thread reads the replies itself while the main thread sends each
/// request on the same socket as soon as the previous reply is in (a wait that held the lock
/// would keep that send out until the receive timed out, and the test would fail).
#[test]
fn a_thread_safe_receiver_takes_the_direct_path_without_the_lock() {
    const N: u32 = 300;
    for t in [Transport::Tcp, Transport::Ipc] {
        let ctx = Context::new();
        let server = ctx.sync_socket(T::Server).unwrap();
        server.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
        let ep = t.bind_endpoint();
        server.bind(&ep).unwrap();
        let ep = if ep.starts_with("tcp://") { server.last_endpoint().unwrap() } else { ep };
        let client = Arc::new(ctx.sync_socket(T::Client).unwrap());
        client.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
        client.connect(&ep).unwrap();
        let echo = std::thread::spawn(move || {
            for _ in 0..N {
                let m = server.recv(0).expect("request");
                let mut reply = oxmq::Msg::copy_from(&m);
                reply.set_routing_id(m.routing_id()).unwrap();
                server.send_msg(&mut reply, 0).expect("reply");
            }
            server.with(|s| Ok(s.stats().direct_reads)).unwrap()
        });
        let (got_tx, got_rx) = std::sync::mpsc::channel();
        let receiver = {
            let client = client.clone();
            std::thread::spawn(move || {
                for i in 0..N {
                    let m = client.recv(0).expect("reply");
                    assert_eq!(m.as_slice(), i.to_be_bytes(), "reply {i}");
                    got_tx.send(i).unwrap();
                }
                client.with(|s| Ok(s.stats().direct_reads)).unwrap()
            })
        };
        for i in 0..N {
            client.send(&i.to_be_bytes()[..], 0).unwrap();
            assert_eq!(got_rx.recv_timeout(DEADLINE), Ok(i), "{t:?}: reply {i} never came");
        }
        let direct = receiver.join().expect("receiver") + echo.join().expect("echo");
        assert!(direct > 0, "{t:?}: no input was read by a waiting receiver");
    }
}

/// `poll` over a few sockets sleeps as `recv` does: in a REQ/REP exchange whose both ends wait
/// in `poll` (beside a second, silent socket and a plain descriptor), the waits read input
/// themselves, every reply arrives in order, and the plain descriptor is still reported when it
/// becomes readable.
#[test]
fn poll_takes_the_direct_path() {
    for t in [Transport::Tcp, Transport::Ipc] {
        let ctx = Context::new();
        let (mut rep, mut req, _) = pair(&ctx, t, T::Rep, T::Req);
        let (mut quiet, _quiet_peer, _) = pair(&ctx, t, T::Pull, T::Push);
        let server = std::thread::spawn(move || {
            for _ in 0..300 {
                let mut items = [PollItem::socket(&mut rep, opt::POLLIN)];
                assert_eq!(poll(&mut items, 5_000).expect("poll"), 1, "a request");
                let m = rep.recv(opt::DONTWAIT).expect("request");
                rep.send(m, 0).expect("reply");
            }
            rep.stats().direct_reads
        });
        let (r, w) = nix_pipe();
        for i in 0..300u32 {
            req.send(&i.to_be_bytes()[..], 0).unwrap();
            let mut items = [
                PollItem::socket(&mut quiet, opt::POLLIN),
                PollItem::socket(&mut req, opt::POLLIN),
                PollItem::fd(r, opt::POLLIN),
            ];
            assert_eq!(poll(&mut items, 5_000).expect("poll"), 1, "{t:?}: reply {i}");
            assert!(items[1].is_readable() && !items[0].is_readable() && !items[2].is_readable());
            assert_eq!(req.recv(opt::DONTWAIT).unwrap().to_vec(), i.to_be_bytes(), "{t:?} reply {i}");
        }
        let direct = server.join().expect("server") + req.stats().direct_reads;
        assert!(direct > 0, "{t:?}: no input was read by a polling thread");
        // A plain descriptor that becomes readable ends the wait (the writer most likely
        // writes during it; before it, the first look reports the byte, as it must too).
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            // SAFETY: `w` is the pipe's open write end.
            assert_eq!(unsafe { libc::write(w, b"x".as_ptr().cast(), 1) }, 1);
            w
        });
        let mut items = [PollItem::socket(&mut req, opt::POLLIN), PollItem::fd(r, opt::POLLIN)];
        assert_eq!(poll(&mut items, 5_000).expect("poll"), 1);
        assert!(items[1].is_readable(), "{t:?}: the pipe's byte was not reported");
        let w = writer.join().unwrap();
        // SAFETY: both ends are open descriptors of this test.
        unsafe {
            libc::close(r);
            libc::close(w);
        }
    }
}

/// A pipe's two ends (read, write).
fn nix_pipe() -> (i32, i32) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

/// A wait that times out hands the connection's input back: a message sent afterwards reaches
/// the socket through the I/O thread and its descriptor, with nobody in `recv`.
#[test]
fn input_goes_back_to_the_io_thread_when_a_wait_ends() {
    for t in [Transport::Tcp, Transport::Ipc] {
        let ctx = Context::new();
        let (mut a, mut b, _) = pair(&ctx, t, T::Pair, T::Pair);
        b.send("hello", 0).unwrap();
        assert_eq!(recv_bytes(&mut a), b"hello");
        a.set_int(opt::RCVTIMEO, 30).unwrap();
        for _ in 0..3 {
            assert_eq!(a.recv(0).unwrap_err(), Error::Again, "nothing was sent yet");
        }
        b.send("late", 0).unwrap();
        let mut items = [PollItem::socket(&mut a, opt::POLLIN)];
        let n = poll(&mut items, 5_000).expect("poll");
        assert_eq!(n, 1, "{t:?}: a message sent after a timed-out wait never became readable");
        a.set_int(opt::RCVTIMEO, 0).unwrap();
        assert_eq!(a.recv(0).expect("readable").to_vec(), b"late");
    }
}

/// Waits up to `ms` for `s` to have a message, through its descriptor alone (no direct wait:
/// what the I/O thread delivers); true once it has one.
fn readable_through_fd(s: &mut oxmq::Socket, ms: u64) -> bool {
    let deadline = Instant::now() + Duration::from_millis(ms);
    loop {
        if s.events().expect("events") & opt::POLLIN != 0 {
            return true;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let mut p = libc::pollfd { fd: s.fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        unsafe { libc::poll(&mut p, 1, left.as_millis().max(1) as i32) };
    }
}

/// A quick exchange lends each wait's input to the next (`io/session/lease.rs`: no
/// `epoll_ctl` pair per message), and input lent to a receiver that stops receiving is taken
/// back by the I/O thread: a request sent after the exchange reaches the socket through its
/// descriptor with nobody in `recv`. Whether the last wait of an exchange lent its input
/// depends on how long it took, so exchanges go on (at most 50 rounds) until a lease lapsed.
/// `poll` lends as `recv` does (the server waits in `poll`, then receives without waiting).
#[test]
fn input_lent_between_waits_goes_back_to_the_io_thread_when_no_wait_comes() {
    for (t, polls) in [(Transport::Tcp, false), (Transport::Ipc, false), (Transport::Tcp, true)] {
        let ctx = Context::new();
        let (mut rep, mut req, _) = pair(&ctx, t, T::Rep, T::Req);
        let mut lapsed = false;
        for round in 0..50 {
            let server = std::thread::spawn(move || {
                for _ in 0..20 {
                    if polls {
                        let mut items = [PollItem::socket(&mut rep, opt::POLLIN)];
                        assert_eq!(poll(&mut items, 5_000).expect("poll"), 1, "a request");
                    }
                    let m = rep.recv(if polls { opt::DONTWAIT } else { 0 }).expect("request");
                    rep.send(m, 0).expect("reply");
                }
                rep
            });
            for i in 0..20u32 {
                req.send(&i.to_be_bytes()[..], 0).unwrap();
                assert_eq!(recv_bytes(&mut req), i.to_be_bytes(), "{t:?} reply {i}");
            }
            rep = server.join().expect("server");
            req.send("late", 0).unwrap();
            assert!(readable_through_fd(&mut rep, 5_000), "{t:?} round {round}: a request sent after the exchange never arrived");
            assert_eq!(rep.recv(opt::DONTWAIT).expect("late").to_vec(), b"late");
            rep.send("ok", 0).unwrap();
            assert_eq!(recv_bytes(&mut req), b"ok");
            let stats = rep.stats();
            let lent = if polls { stats.lent_waits } else { stats.lent_waits + req.stats().lent_waits };
            assert!(lent > 0, "{t:?} (poll: {polls}): no wait found its input lent: {stats:?}");
            if stats.lease_lapses > 0 {
                lapsed = true;
                break;
            }
        }
        assert!(lapsed, "{t:?} (poll: {polls}): no lease lapsed in 50 exchanges: the I/O thread read every late request itself");
    }
}

/// A raw peer's byte stream: tcp or a unix stream.
trait Wire: Read + Write + Send {}
impl Wire for TcpStream {}
impl Wire for UnixStream {}

/// A raw ZMTP 3.1 DEALER connected to an oxmq DEALER that echoes, with its handshake done.
struct RawPeer {
    stream: Box<dyn Wire>,
    /// Everything read from oxmq so far (its greeting, READY, then frames).
    seen: Vec<u8>,
}

impl RawPeer {
    /// Connects to oxmq's tcp or ipc endpoint `ep` and sends a DEALER's handshake.
    fn connect(ep: &str) -> RawPeer {
        let timeout = Some(Duration::from_millis(50));
        let mut stream: Box<dyn Wire> = match ep.strip_prefix("ipc://") {
            Some(path) => {
                let s = UnixStream::connect(path).expect("connect");
                s.set_read_timeout(timeout).unwrap();
                Box::new(s)
            }
            None => {
                let s = TcpStream::connect(ep.trim_start_matches("tcp://")).expect("connect");
                s.set_read_timeout(timeout).unwrap();
                Box::new(s)
            }
        };
        stream.write_all(&handshake(b"DEALER")).unwrap();
        RawPeer { stream, seen: Vec::new() }
    }

    /// Reads until `needle` has been seen after `from`; panics at the deadline.
    fn read_until(&mut self, from: usize, needle: &[u8], what: &str) -> usize {
        let t0 = Instant::now();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(i) = self.seen[from..].windows(needle.len()).position(|w| w == needle) {
                return from + i + needle.len();
            }
            assert!(t0.elapsed() < DEADLINE, "{what} did not arrive");
            match self.stream.read(&mut buf) {
                Ok(0) => panic!("oxmq closed the connection while waiting for {what}"),
                Ok(n) => self.seen.extend_from_slice(&buf[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(e) => panic!("read: {e}"),
            }
        }
    }
}

/// An oxmq DEALER bound on tcp with a thread that echoes messages back until it receives
/// `stop`, keeping `direct` at the socket's count of direct reads after each message.
fn echo_server(ctx: &Context, direct: Arc<AtomicU64>, (t, window): Case) -> (String, std::thread::JoinHandle<()>) {
    let mut s = socket(ctx, T::Dealer);
    with_window(&mut s, window);
    let ep = bind(&mut s, t);
    let h = std::thread::spawn(move || loop {
        let m = s.recv(0).expect("echo: message");
        direct.store(s.stats().direct_reads, Ordering::Relaxed);
        if m.as_slice() == b"stop" {
            break;
        }
        s.send(m, 0).expect("echo: send");
    });
    (ep, h)
}

/// A PING arriving while the receiver waits is read by that thread, handed to the I/O thread
/// (commands need its timers and replies), answered with a PONG, and the message behind it in
/// the same read is still delivered, in order. Whether the waiting thread or the I/O thread
/// reads a given exchange is a race, so the exchanges go on (at least 40, at most 2,000) until
/// the waiting thread has read one.
#[test]
fn a_command_read_mid_wait_is_handled() {
    for case in CASES {
        let ctx = Context::new();
        let direct = Arc::new(AtomicU64::new(0));
        let (ep, server) = echo_server(&ctx, direct.clone(), case);
        let mut peer = RawPeer::connect(&ep);
        peer.stream.write_all(&frame(0, b"first")).unwrap();
        let mut at = peer.read_until(0, &frame(0, b"first"), "the first echo");
        let mut exchanges = 0u32;
        while exchanges < 40 || (direct.load(Ordering::Relaxed) == 0 && exchanges < 2000) {
            let context = exchanges.to_be_bytes();
            let body = [b'm', context[2], context[3]];
            let mut bytes = ping(0, &context);
            bytes.extend(frame(0, &body));
            peer.stream.write_all(&bytes).unwrap();
            let mut pong = vec![4];
            pong.extend_from_slice(b"PONG");
            pong.extend_from_slice(&context);
            let pong_at = peer.read_until(at, &command(&pong), "a PONG");
            at = peer.read_until(at, &frame(0, &body), "the echo after a PING").max(pong_at);
            exchanges += 1;
        }
        peer.stream.write_all(&frame(0, b"stop")).unwrap();
        server.join().expect("echo server");
        assert!(
            direct.load(Ordering::Relaxed) > 0,
            "{case:?}: no input was read by the waiting receiver in {exchanges} exchanges"
        );
    }
}

/// An oxmq DEALER bound on tcp with one raw peer whose first message has arrived.
fn dealer_with_raw_peer(ctx: &Context, t: Transport) -> (oxmq::Socket, String, RawPeer) {
    let mut s = socket(ctx, T::Dealer);
    let ep = bind(&mut s, t);
    let mut peer = RawPeer::connect(&ep);
    peer.stream.write_all(&frame(0, b"hello")).unwrap();
    assert_eq!(recv_bytes(&mut s), b"hello");
    (s, ep, peer)
}

/// A thread waiting in `recv` on `s` for up to `ms`; joining it gives the socket back.
fn waiting_receiver(mut s: oxmq::Socket, ms: i32) -> std::thread::JoinHandle<(oxmq::Socket, oxmq::Result<Vec<u8>>)> {
    s.set_int(opt::RCVTIMEO, ms).unwrap();
    std::thread::spawn(move || {
        let r = s.recv(0).map(|m| m.to_vec());
        (s, r)
    })
}

/// The transports and spin windows the mid-wait cases run with: the default window, and one
/// that outlasts the wait (the waiting thread then looks at the connection without sleeping:
/// over ipc by reading it, over tcp by polling it).
type Case = (Transport, Option<i32>);
const CASES: [Case; 4] =
    [(Transport::Tcp, None), (Transport::Tcp, Some(1_000_000)), (Transport::Ipc, None), (Transport::Ipc, Some(1_000_000))];

fn with_window(s: &mut oxmq::Socket, window: Option<i32>) {
    if let Some(us) = window {
        s.set_int(opt::OXMQ_RECV_SPIN, us).unwrap();
    }
}

/// The end of the stream read mid-wait: the connection ends (the I/O thread closes it) and the
/// socket counts no peer.
#[test]
fn the_end_of_a_stream_read_mid_wait_ends_the_connection() {
    for case in CASES {
        let ctx = Context::new();
        let (mut s, _, peer) = dealer_with_raw_peer(&ctx, case.0);
        assert_eq!(s.stats().peers, 1);
        with_window(&mut s, case.1);
        let waiter = waiting_receiver(s, 1_500);
        drop(peer);
        let (mut s, r) = waiter.join().expect("waiter");
        assert_eq!(r, Err(Error::Again), "{case:?}: nothing was sent before the close");
        eventually("the closed peer to be gone", || (s.stats().peers == 0).then_some(()));
    }
}

/// A frame with reserved flag bits read mid-wait: oxmq drops that connection, delivers nothing
/// of it, and the socket goes on serving others.
#[test]
fn a_hostile_frame_read_mid_wait_drops_the_connection() {
    for case in CASES {
        let ctx = Context::new();
        let (mut s, ep, mut hostile) = dealer_with_raw_peer(&ctx, case.0);
        with_window(&mut s, case.1);
        let waiter = waiting_receiver(s, 1_000);
        hostile.stream.write_all(&frame(0xF0, b"evil")).unwrap();
        expect_closed(&mut hostile.stream, DEADLINE, "sent reserved flag bits");
        let (mut s, r) = waiter.join().expect("waiter");
        assert_eq!(r, Err(Error::Again), "{case:?}: the hostile frame must not be delivered");
        let mut good = RawPeer::connect(&ep);
        good.stream.write_all(&frame(0, b"after")).unwrap();
        s.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
        assert_eq!(recv_bytes(&mut s), b"after");
    }
}

/// The receive spin (`OXMQ_RECV_SPIN`): with a window far longer than a round trip, replies in
/// a REQ/REP exchange arrive while the waits still look (polling tcp, reading ipc); with the
/// window at 0 no wait spins.
#[test]
fn replies_arrive_while_a_wait_spins_and_never_with_the_spin_off() {
    for t in [Transport::Tcp, Transport::Ipc] {
        for (window, spins) in [(1_000_000, true), (0, false)] {
            let ctx = Context::new();
            let (mut rep, mut req, _) = pair(&ctx, t, T::Rep, T::Req);
            req.set_int(opt::OXMQ_RECV_SPIN, window).unwrap();
            rep.set_int(opt::OXMQ_RECV_SPIN, window).unwrap();
            assert_eq!(req.get_int(opt::OXMQ_RECV_SPIN).unwrap(), window);
            let (rep, req) = exchange(rep, req, 200, t);
            let spun = rep.spun_waits + req.spun_waits;
            if spins {
                // A one-second window outlasts any reply here, so only waits that could not poll
                // their connection (the I/O thread held its session) sleep.
                assert!(spun > 0, "{t:?}: no reply arrived while a wait spun");
            } else {
                assert_eq!(spun, 0, "{t:?}: a wait spun with OXMQ_RECV_SPIN at 0");
            }
        }
    }
}

/// OXMQ_RECV_SPIN takes 0 to 1,000,000 microseconds as a 4-byte int, and nothing else.
#[test]
fn the_spin_option_rejects_bad_values() {
    let ctx = Context::new();
    let mut s = ctx.socket(T::Pair).unwrap();
    for bad in [-1, 1_000_001, i32::MIN] {
        assert_eq!(s.set_int(opt::OXMQ_RECV_SPIN, bad).unwrap_err(), Error::Invalid, "{bad}");
    }
    assert_eq!(s.setsockopt(opt::OXMQ_RECV_SPIN, &[1, 0]).unwrap_err(), Error::Invalid);
    s.set_int(opt::OXMQ_RECV_SPIN, 250).unwrap();
    assert_eq!(s.get_int(opt::OXMQ_RECV_SPIN).unwrap(), 250);
}

/// A stream that keeps the receiver's queue at its HWM: the connection stops at the HWM, and
/// the receiving thread, reading the queue down, resumes it itself (`Session::direct_resume`)
/// instead of waking the I/O thread. Bodies cross the inline, piece and zero-copy sizes, and
/// heartbeat PINGs arrive mid-stream (a command the resume must leave to the I/O thread).
/// Every message arrives, whole and in order.
#[test]
fn a_stream_held_at_the_hwm_is_resumed_by_the_reader() {
    for t in [Transport::Tcp, Transport::Ipc] {
        let ctx = Context::new();
        let mut pull = socket(&ctx, T::Pull);
        pull.set_int(opt::RCVHWM, 16).unwrap();
        let ep = bind(&mut pull, t);
        let mut push = socket(&ctx, T::Push);
        push.set_int(opt::SNDHWM, 16).unwrap();
        push.set_int(opt::HEARTBEAT_IVL, 1).unwrap();
        // PINGs every millisecond, but no timeout: a receiver held at its HWM answers late,
        // and a dropped connection would lose what was in flight.
        push.set_int(opt::HEARTBEAT_TIMEOUT, 60_000).unwrap();
        push.connect(&ep).unwrap();
        const N: u32 = 20_000;
        let size = |i: u32| [4, 40, 300, 2100, 9000][(i % 5) as usize];
        let sender = std::thread::spawn(move || {
            for i in 0..N {
                let mut body = vec![(i % 251) as u8; size(i)];
                body[..4].copy_from_slice(&i.to_be_bytes());
                push.send(body, 0).expect("send");
            }
            push
        });
        let stats = within(Duration::from_secs(60), "the stream", move || {
            for i in 0..N {
                let m = recv_bytes(&mut pull);
                assert_eq!(m.len(), size(i), "{t:?}: message {i}'s size");
                assert_eq!(m[..4], i.to_be_bytes(), "{t:?}: message {i} out of order");
                assert!(m[4..].iter().all(|&b| b == (i % 251) as u8), "{t:?}: message {i}'s body");
            }
            pull.stats()
        });
        drop(sender.join().expect("sender"));
        assert_eq!(stats.reconnects + stats.connections, 1, "{t:?}: the connection was dropped: {stats:?}");
        assert!(stats.direct_resumes > 0, "{t:?}: the reader never resumed the input itself: {stats:?}");
    }
}

/// `wait_recv_also`: a wait on one socket also ends when another socket's level-triggered
/// descriptor becomes readable, keeps the direct path for its own connections, and times out
/// when neither has anything.
#[test]
fn a_wait_also_watches_other_sockets() {
    for t in [Transport::Tcp, Transport::Ipc] {
        let ctx = Context::new();
        let (mut main, mut main_peer, _) = pair(&ctx, t, T::Pair, T::Pair);
        let (mut other, mut other_peer, _) = pair(&ctx, t, T::Pull, T::Push);
        other.set_fd_level(opt::POLLIN).unwrap();
        // Both connections are up before the waits start.
        main_peer.send("m0", 0).unwrap();
        assert_eq!(recv_bytes(&mut main), b"m0");
        other_peer.send("o0", 0).unwrap();
        assert_eq!(recv_bytes(&mut other), b"o0");
        assert_eq!(other.recv(opt::DONTWAIT).unwrap_err(), Error::Again);

        assert_eq!(
            main.wait_recv_also(Some(Duration::from_millis(30)), &[other.fd()]).unwrap_err(),
            Error::Again,
            "{t:?}: nothing sent, the wait times out"
        );
        let fd = other.fd();
        let sender = std::thread::spawn(move || {
            other_peer.send("o1", 0).unwrap();
            other_peer
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match other.recv(opt::DONTWAIT) {
                Ok(m) => {
                    assert_eq!(m.to_vec(), b"o1");
                    break;
                }
                Err(Error::Again) => {}
                Err(e) => panic!("{e:?}"),
            }
            assert!(Instant::now() < deadline, "{t:?}: the other socket's message never woke the wait");
            match main.wait_recv_also(Some(Duration::from_secs(5)), &[fd]) {
                Ok(()) | Err(Error::Again) => {}
                Err(e) => panic!("{e:?}"),
            }
        }
        let _other_peer = sender.join().unwrap();
        assert_eq!(main.recv(opt::DONTWAIT).unwrap_err(), Error::Again, "the main socket got nothing");

        // The main socket's own input ends the wait too, read on this thread.
        let before = main.stats().direct_reads;
        let echo = std::thread::spawn(move || {
            for i in 0..50u32 {
                main_peer.send(&i.to_be_bytes()[..], 0).unwrap();
                assert_eq!(recv_bytes(&mut main_peer), b"ack");
            }
        });
        for i in 0..50u32 {
            let m = loop {
                match main.recv(opt::DONTWAIT) {
                    Ok(m) => break m,
                    Err(Error::Again) => main
                        .wait_recv_also(Some(Duration::from_secs(5)), &[fd])
                        .or_else(|e| if e == Error::Again { Ok(()) } else { Err(e) })
                        .unwrap(),
                    Err(e) => panic!("{e:?}"),
                }
            };
            assert_eq!(m.to_vec(), i.to_be_bytes());
            main.send("ack", 0).unwrap();
        }
        echo.join().unwrap();
        assert!(main.stats().direct_reads > before, "{t:?}: the main socket's waits never read directly");
        assert_eq!(main.wait_recv_also(None, &[fd; 5]).unwrap_err(), Error::Invalid);
    }
}
