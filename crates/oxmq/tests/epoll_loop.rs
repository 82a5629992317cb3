//! ZMQ_FD in a plain epoll loop: several hundred PULL sockets, fed over inproc and tcp from
//! another thread in random bursts, must deliver every message in order without the loop
//! spinning, both under libzmq's edge-triggered contract (EPOLLET, read ZMQ_EVENTS/receive
//! until EAGAIN) and under oxmq's level-triggered mode (`OXMQ_FD_LEVEL`: plain epoll, one
//! message per wake-up). Also the `Poller` (add, modify, remove, timeouts, plain fds).

mod common;

use common::unique;
use oxmq::{opt, Context, Error, PollEvent, Poller, Socket, SocketType};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const SOCKETS: usize = 300;
const BURSTS: usize = 3000;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// What one run saw.
#[derive(Debug)]
struct Outcome {
    messages: u64,
    bursts: u64,
    wakeups: u64,
    empty_wakeups: u64,
}

fn epoll_drive(level: bool) -> Outcome {
    let ctx = Context::new();
    let mut pulls: Vec<Socket> = Vec::new();
    let mut eps = Vec::new();
    for i in 0..SOCKETS {
        let mut s = ctx.socket(SocketType::Pull).unwrap();
        s.set_int(opt::RCVHWM, 0).unwrap();
        if i % 2 == 0 {
            let ep = format!("inproc://{}", unique("epoll"));
            s.bind(&ep).unwrap();
            eps.push(ep);
        } else {
            s.bind("tcp://127.0.0.1:*").unwrap();
            eps.push(s.last_endpoint().unwrap());
        }
        if level {
            s.set_fd_level(opt::POLLIN).unwrap();
            assert_eq!(s.get_int(opt::OXMQ_FD_LEVEL).unwrap(), i32::from(opt::POLLIN));
        }
        pulls.push(s);
    }
    // SAFETY: plain syscalls on descriptors this test owns.
    let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(epfd >= 0);
    for (i, s) in pulls.iter().enumerate() {
        let bits = libc::EPOLLIN as u32 | if level { 0 } else { libc::EPOLLET as u32 };
        let mut ev = libc::epoll_event { events: bits, u64: i as u64 };
        // SAFETY: valid epoll fd, socket fd and event.
        assert_eq!(unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, s.fd(), &mut ev) }, 0);
    }

    // The feeder: one PUSH per PULL, random bursts to random sockets. It keeps its sockets
    // open until told to go, so no disconnection lands in the idle check below.
    let (plan_tx, plan_rx) = mpsc::channel::<Vec<u64>>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let fctx = ctx.clone();
    let feeder = std::thread::spawn(move || {
        let mut pushes: Vec<Socket> = eps
            .iter()
            .map(|ep| {
                let mut s = fctx.socket(SocketType::Push).unwrap();
                s.set_int(opt::SNDHWM, 0).unwrap();
                s.connect(ep).unwrap();
                s
            })
            .collect();
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut sent = vec![0u64; SOCKETS];
        for b in 0..BURSTS {
            let i = (rng.next() % SOCKETS as u64) as usize;
            let n = 1 + rng.next() % 40;
            for _ in 0..n {
                let mut body = [0u8; 12];
                body[..4].copy_from_slice(&(i as u32).to_le_bytes());
                body[4..].copy_from_slice(&sent[i].to_le_bytes());
                pushes[i].send(&body[..], 0).unwrap();
                sent[i] += 1;
            }
            // Pacing a load generator (not waiting for anything): bursts separated by short
            // gaps let receivers drain and go back to sleep, which is where wake-ups happen.
            if b % 8 == 0 {
                std::thread::sleep(Duration::from_micros(rng.next() % 300));
            }
        }
        plan_tx.send(sent).unwrap();
        done_rx.recv().unwrap();
        drop(pushes);
    });

    let mut expected: Option<Vec<u64>> = None;
    let mut got = vec![0u64; SOCKETS];
    let mut total = 0u64;
    let (mut wakeups, mut empty) = (0u64, 0u64);
    let mut evs = vec![libc::epoll_event { events: 0, u64: 0 }; 512];
    let t0 = Instant::now();
    loop {
        if expected.is_none() {
            expected = plan_rx.try_recv().ok();
        }
        if let Some(exp) = &expected {
            if exp.iter().sum::<u64>() == total {
                assert_eq!(exp, &got);
                break;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "timed out with {total} messages received");
        // SAFETY: `evs` holds 512 writable events.
        let n = unsafe { libc::epoll_wait(epfd, evs.as_mut_ptr(), evs.len() as i32, 5_000) };
        assert!(n >= 0, "epoll_wait: {}", std::io::Error::last_os_error());
        if n == 0 && expected.is_some() {
            panic!(
                "{} mode: no wake-up for 5 s with {} of {} messages received: a message was missed",
                if level { "level" } else { "edge" },
                total,
                expected.as_ref().unwrap().iter().sum::<u64>()
            );
        }
        for ev in &evs[..n as usize] {
            let i = ev.u64 as usize;
            wakeups += 1;
            let s = &mut pulls[i];
            let mut this = 0;
            if !level {
                // libzmq's contract: read ZMQ_EVENTS, then receive until EAGAIN.
                let _ = s.events().unwrap();
            }
            loop {
                match s.recv(opt::DONTWAIT) {
                    Ok(m) => {
                        assert_eq!(u32::from_le_bytes(m[..4].try_into().unwrap()) as usize, i);
                        assert_eq!(u64::from_le_bytes(m[4..12].try_into().unwrap()), got[i], "order on socket {i}");
                        got[i] += 1;
                        total += 1;
                        this += 1;
                        if level {
                            break; // one message per wake-up: the descriptor stays readable
                        }
                    }
                    Err(Error::Again) => break,
                    Err(e) => panic!("recv: {e}"),
                }
            }
            if this == 0 {
                empty += 1;
            }
        }
    }
    // Idle: nothing is ready, so the descriptors must stay quiet (no spin).
    // SAFETY: as above.
    let n = unsafe { libc::epoll_wait(epfd, evs.as_mut_ptr(), evs.len() as i32, 200) };
    assert_eq!(n, 0, "descriptors readable with nothing to receive");
    if level {
        for s in &mut pulls {
            assert_eq!(s.events().unwrap() & opt::POLLIN, 0);
        }
    }
    done_tx.send(()).unwrap();
    feeder.join().unwrap();
    // SAFETY: our own epoll descriptor.
    unsafe { libc::close(epfd) };
    Outcome { messages: total, bursts: BURSTS as u64, wakeups, empty_wakeups: empty }
}

/// Wake-ups that find nothing come only from events that bring no message (a peer attaching)
/// and from a wake-up signal racing with a receive that already took the message: at most
/// one per burst plus a couple per socket. A spinning descriptor would blow far past that.
fn check_no_spin(o: &Outcome) {
    eprintln!("{o:?}");
    let bound = o.bursts + 2 * SOCKETS as u64;
    assert!(o.empty_wakeups <= bound, "{} empty wake-ups (bound {bound}): {o:?}", o.empty_wakeups);
}

#[test]
fn epoll_edge_triggered_drain_until_eagain() {
    let o = epoll_drive(false);
    check_no_spin(&o);
}

#[test]
fn epoll_level_triggered_one_message_per_wakeup() {
    let o = epoll_drive(true);
    // Level mode: every message is its own wake-up.
    assert!(o.wakeups >= o.messages);
    check_no_spin(&o);
}

#[test]
fn level_mode_is_readable_exactly_while_a_message_waits() {
    let ctx = Context::new();
    let mut pull = ctx.socket(SocketType::Pull).unwrap();
    let ep = format!("inproc://{}", unique("lvl"));
    pull.bind(&ep).unwrap();
    pull.set_fd_level(opt::POLLIN).unwrap();
    let mut push = ctx.socket(SocketType::Push).unwrap();
    push.connect(&ep).unwrap();
    let readable = |s: &Socket, ms: i32| {
        let mut p = libc::pollfd { fd: s.fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut p, 1, ms) == 1 }
    };
    // A peer attaching brings no message: at most one look finds nothing, then quiet.
    if readable(&pull, 0) {
        assert_eq!(pull.recv(opt::DONTWAIT).unwrap_err(), Error::Again);
    }
    assert!(!readable(&pull, 50));
    push.send("a", 0).unwrap();
    push.send("b", 0).unwrap();
    assert!(readable(&pull, 5_000));
    assert!(readable(&pull, 0), "level: still readable before anything is read");
    assert_eq!(pull.recv(0).unwrap(), "a");
    assert!(readable(&pull, 0), "one message left: still readable");
    assert_eq!(pull.recv(0).unwrap(), "b");
    assert!(!readable(&pull, 0), "nothing left: not readable");
    // Blocking receive in level mode must not spin on its own descriptor.
    pull.set_int(opt::RCVTIMEO, 100).unwrap();
    let t = Instant::now();
    assert_eq!(pull.recv(0).unwrap_err(), Error::Again);
    assert!(t.elapsed() >= Duration::from_millis(100));
    // POLLOUT: a PUSH with room is writable; at HWM it is not.
    let mut p2 = ctx.socket(SocketType::Push).unwrap();
    p2.set_int(opt::SNDHWM, 1).unwrap();
    let ep2 = format!("inproc://{}", unique("lvl2"));
    let mut sink = ctx.socket(SocketType::Pull).unwrap();
    sink.set_int(opt::RCVHWM, 1).unwrap();
    sink.bind(&ep2).unwrap();
    p2.connect(&ep2).unwrap();
    p2.set_fd_level(opt::POLLOUT).unwrap();
    assert!(readable(&p2, 0));
    while p2.send("x", opt::DONTWAIT).is_ok() {}
    assert!(!readable(&p2, 0), "at HWM: not writable, not readable");
    assert_eq!(sink.recv(0).unwrap(), "x");
    assert_eq!(sink.recv(0).unwrap(), "x");
    assert!(readable(&p2, 5_000), "room again after the peer read");
    // Bad values.
    assert_eq!(pull.set_int(opt::OXMQ_FD_LEVEL, 4).unwrap_err(), Error::Invalid);
    pull.set_fd_level(0).unwrap();
    assert_eq!(pull.get_int(opt::OXMQ_FD_LEVEL).unwrap(), 0);
}

#[test]
fn poller_sockets_and_fds_add_modify_remove_timeout() {
    let ctx = Context::new();
    let mut socks: Vec<Socket> = Vec::new();
    let mut pushes = Vec::new();
    for i in 0..64 {
        let mut pull = ctx.socket(SocketType::Pull).unwrap();
        let ep = if i % 2 == 0 {
            let ep = format!("inproc://{}", unique("poller"));
            pull.bind(&ep).unwrap();
            ep
        } else {
            pull.bind("tcp://127.0.0.1:*").unwrap();
            pull.last_endpoint().unwrap()
        };
        let mut push = ctx.socket(SocketType::Push).unwrap();
        push.connect(&ep).unwrap();
        socks.push(pull);
        pushes.push(push);
    }
    let mut fds = [0i32; 2];
    // SAFETY: a valid array of two ints.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let mut poller: Poller<&mut Socket> = Poller::new().unwrap();
    let tokens: Vec<usize> = socks.iter_mut().map(|s| poller.add_socket(s, opt::POLLIN).unwrap()).collect();
    let tfd = poller.add_fd(fds[0], opt::POLLIN).unwrap();
    assert_eq!(poller.add_fd(fds[0], opt::POLLIN).unwrap_err(), Error::Invalid, "duplicate fd");
    assert_eq!(poller.len(), 65);
    let mut ready: Vec<PollEvent> = Vec::new();

    // Nothing ready: the timeout is honoured.
    let t = Instant::now();
    assert_eq!(poller.wait(&mut ready, 100).unwrap(), 0);
    assert!(t.elapsed() >= Duration::from_millis(100));
    assert_eq!(poller.wait(&mut ready, 0).unwrap(), 0);

    // Three sockets and the pipe become ready: exactly those are reported.
    for &i in &[3usize, 10, 41] {
        pushes[i].send(format!("m{i}"), 0).unwrap();
    }
    // SAFETY: writes one byte from a valid buffer to our pipe.
    assert_eq!(unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) }, 1);
    let mut seen = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.len() < 4 {
        assert!(Instant::now() < deadline, "saw only {seen:?}");
        poller.wait(&mut ready, 1000).unwrap();
        for ev in &ready {
            assert_eq!(ev.events, opt::POLLIN);
            if ev.token == tfd {
                seen.insert(usize::MAX);
                let mut b = [0u8; 1];
                // SAFETY: reads into a valid one-byte buffer.
                assert_eq!(unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) }, 1);
            } else {
                let i = tokens.iter().position(|&t| t == ev.token).unwrap();
                let m = poller.socket(ev.token).unwrap().recv(opt::DONTWAIT).unwrap();
                assert_eq!(m, format!("m{i}").as_str());
                seen.insert(i);
            }
        }
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![3, 10, 41, usize::MAX]);
    assert_eq!(poller.wait(&mut ready, 50).unwrap(), 0, "all drained: nothing ready");

    // modify: watch POLLOUT only on a PULL (never writable): a message does not report it.
    poller.modify(tokens[5], opt::POLLOUT).unwrap();
    pushes[5].send("later", 0).unwrap();
    assert_eq!(poller.wait(&mut ready, 100).unwrap(), 0);
    poller.modify(tokens[5], opt::POLLIN).unwrap();
    assert_eq!(poller.wait(&mut ready, 5_000).unwrap(), 1);
    assert_eq!(ready[0], PollEvent { token: tokens[5], events: opt::POLLIN });

    // remove: the socket comes back in edge mode and is no longer reported.
    let s = poller.remove(tokens[5]).unwrap().unwrap();
    assert_eq!(s.get_int(opt::OXMQ_FD_LEVEL).unwrap(), 0);
    assert_eq!(s.recv(0).unwrap(), "later");
    assert!(matches!(poller.remove(tokens[5]), Err(Error::Invalid)));
    assert_eq!(poller.modify(tokens[5], opt::POLLIN).unwrap_err(), Error::Invalid);
    assert!(poller.remove(tfd).unwrap().is_none());
    assert_eq!(poller.len(), 63);
    drop(poller);
    // SAFETY: our pipe's descriptors.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
}

/// CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rusage to fill for the calling thread.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) }, 0);
    Duration::from_secs(ru.ru_utime.tv_sec as u64 + ru.ru_stime.tv_sec as u64)
        + Duration::from_micros(ru.ru_utime.tv_usec as u64 + ru.ru_stime.tv_usec as u64)
}

#[test]
fn zmq_poll_on_a_level_mode_socket_for_fewer_events_waits_without_spinning() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("level-poll"));
    let mut a = ctx.socket(SocketType::Pair).unwrap();
    let mut b = ctx.socket(SocketType::Pair).unwrap();
    a.bind(&ep).unwrap();
    b.connect(&ep).unwrap();
    // Writable at once, so in level mode the descriptor is readable for POLLOUT.
    a.set_fd_level(opt::POLLIN | opt::POLLOUT).unwrap();
    assert_eq!(a.events().unwrap() & opt::POLLOUT, opt::POLLOUT);
    let cpu = thread_cpu();
    let start = Instant::now();
    let n = {
        let mut items = [oxmq::PollItem::socket(&mut a, opt::POLLIN)];
        oxmq::poll(&mut items, 300).unwrap()
    };
    let waited = start.elapsed();
    let used = thread_cpu() - cpu;
    assert_eq!(n, 0, "nothing to receive");
    assert!(waited >= Duration::from_millis(290), "waited {waited:?}");
    assert!(used < Duration::from_millis(100), "the wait spun: {used:?} of CPU in {waited:?}");
    assert_eq!(a.get_int(opt::OXMQ_FD_LEVEL).unwrap(), i32::from(opt::POLLIN | opt::POLLOUT), "mode restored");
    // And a message still wakes it.
    b.send("x", 0).unwrap();
    let mut items = [oxmq::PollItem::socket(&mut a, opt::POLLIN)];
    assert_eq!(oxmq::poll(&mut items, 5000).unwrap(), 1);
}
