//! `fanout <tcp|ipc> <subscribers> <message-size> <message-count>`: one PUB streaming to N SUB
//! sockets, the subscribers read by one thread of their own context (their own I/O thread),
//! every message checked in order. Prints deliveries per second, CPU per delivery (the whole
//! process), and the publisher's write system calls per delivery, of which direct.
//!
//! A quick probe of the engine's fan-out; the harness's scale section runs publisher and
//! subscribers in separate processes against libzmq as well.
use oxmq::{opt, Context, Msg, PollEvent, Poller, Socket, SocketType};
use std::time::Instant;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given; RUSAGE_SELF is always valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: fanout <tcp|ipc> <subscribers> <message-size> <message-count>");
        std::process::exit(1);
    }
    let (proto, n, size, count): (&str, usize, usize, u64) =
        (&args[1], args[2].parse().unwrap(), args[3].parse().unwrap(), args[4].parse().unwrap());
    let size = size.max(8);
    let dir = std::env::temp_dir().join(format!("oxmq-fanout-{}", std::process::id()));
    let bind = match proto {
        "tcp" => "tcp://127.0.0.1:*".to_string(),
        "ipc" => {
            std::fs::create_dir_all(&dir).unwrap();
            format!("ipc://{}/pub", dir.display())
        }
        _ => panic!("tcp or ipc"),
    };
    let pctx = Context::new();
    let mut publ = pctx.socket(SocketType::XPub).unwrap();
    publ.set_int(opt::SNDHWM, 0).unwrap();
    publ.set_int(opt::XPUB_VERBOSE, 1).unwrap(); // report every subscription, not only new ones
    publ.bind(&bind).unwrap();
    let ep = publ.last_endpoint().unwrap();

    let reader = std::thread::spawn(move || {
        let sctx = Context::new();
        let mut poller: Poller<Socket> = Poller::new().unwrap();
        for _ in 0..n {
            let mut s = sctx.socket(SocketType::Sub).unwrap();
            s.set_int(opt::RCVHWM, 0).unwrap();
            s.subscribe("").unwrap();
            s.connect(&ep).unwrap();
            poller.add_socket(s, opt::POLLIN).unwrap();
        }
        let mut next = vec![0u64; n];
        let mut done = 0;
        let mut ready: Vec<PollEvent> = Vec::new();
        let mut m = Msg::new();
        while done < n {
            poller.wait(&mut ready, 10_000).unwrap();
            assert!(!ready.is_empty(), "subscribers stalled");
            for ev in &ready {
                let s = poller.socket(ev.token).unwrap();
                while s.recv_msg(&mut m, opt::DONTWAIT).is_ok() {
                    let seq = u64::from_le_bytes(m[..8].try_into().unwrap());
                    assert_eq!(seq, next[ev.token], "subscriber {} out of order", ev.token);
                    next[ev.token] += 1;
                    if seq + 1 == count {
                        done += 1;
                    }
                }
            }
        }
        drop(poller);
        sctx.term().unwrap();
    });

    for _ in 0..n {
        publ.recv(0).unwrap(); // each subscription
    }
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let mut body = vec![0u8; size];
    for seq in 0..count {
        body[..8].copy_from_slice(&seq.to_le_bytes());
        publ.send(&body[..], 0).unwrap();
    }
    reader.join().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let st = publ.stats();
    let deliveries = n as f64 * count as f64;
    println!(
        "{proto} subscribers={n} size={size} deliveries/s={:.0} cpu/delivery={:.0}ns writes/delivery={:.3} direct_writes={}",
        deliveries / secs,
        cpu * 1e9 / deliveries,
        st.wire_writes as f64 / deliveries,
        st.direct_writes
    );
    drop(publ);
    pctx.term().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
