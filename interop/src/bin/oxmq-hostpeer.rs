//! `oxmq-hostpeer`: one socket in one role, for the multi-host fault tests
//! (`scripts/test.d/90-hosts.sh`, driven by `interop/hosts/hosts.py`), which run it inside
//! network namespaces.
//!
//! ```text
//! oxmq-hostpeer ROLE ENDPOINT [--name N] [--rate MSG_PER_S] [--hwm N] [--timeout MS]
//!                             [--follow IVL_MS] [--linger MS] [--no-hb]
//! ROLE: pub | sub | push | pull | rep | req | router | dealer
//! ```
//! Servers (pub, pull, rep, router) bind ENDPOINT; the others connect to it. Every socket has
//! heartbeats (HEARTBEAT_IVL 200 ms, HEARTBEAT_TIMEOUT 1000 ms) unless `--no-hb`, and
//! reconnects every 100 ms. Senders send `SOURCE SEQ` at `--rate`; `req` is the guide's lazy
//! pirate (a reply within `--timeout` or the socket is closed, reopened and the request sent
//! again); `dealer` keeps up to 10 requests in flight and sends again those unanswered after
//! `--timeout`; `rep` and `router` echo. Receivers note sequence gaps.
//!
//! It stops at "stop" or end of input on stdin, and prints one JSON object per line on stdout:
//! `ready`; `mon` (a connection event, with its time); `tick` every 200 ms (counts and the
//! socket's `stats()`); `resume` (the first message, and the first after 300 ms without one);
//! `retry`; and
//! at the end `summary` (for receivers, the sequence numbers received, as ranges). Times are
//! milliseconds since the Unix epoch, so processes on one machine compare.

use oxmq::monitor::{event, MonitorEvent};
use oxmq::{opt, Context, Error, Socket, SocketType};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn now_ms() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0)
}

fn say(line: String) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{{\"t\":{},{}}}", now_ms(), line);
    let _ = o.flush();
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

struct Args {
    role: String,
    endpoint: String,
    name: String,
    rate: u32,
    hwm: i32,
    timeout: u64,
    follow: Option<i32>,
    linger: i32,
    hb: bool,
}

fn args() -> Args {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 2 {
        eprintln!("usage: oxmq-hostpeer ROLE ENDPOINT [--name N] [--rate R] [--hwm N] [--timeout MS] [--follow IVL] [--linger MS] [--no-hb]");
        std::process::exit(2);
    }
    let mut r = Args {
        role: a[0].clone(),
        endpoint: a[1].clone(),
        name: a[0].clone(),
        rate: 200,
        hwm: 1000,
        timeout: 1000,
        follow: None,
        linger: 1000,
        hb: true,
    };
    let mut i = 2;
    let num = |v: Option<&String>| -> i64 { v.and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("bad number")) };
    while i < a.len() {
        match a[i].as_str() {
            "--name" => r.name = a[i + 1].clone(),
            "--rate" => r.rate = num(a.get(i + 1)) as u32,
            "--hwm" => r.hwm = num(a.get(i + 1)) as i32,
            "--timeout" => r.timeout = num(a.get(i + 1)) as u64,
            "--follow" => r.follow = Some(num(a.get(i + 1)) as i32),
            "--linger" => r.linger = num(a.get(i + 1)) as i32,
            "--no-hb" => {
                r.hb = false;
                i += 1;
                continue;
            }
            x => panic!("unknown argument {x}"),
        }
        i += 2;
    }
    r
}

/// The socket for a role, configured and bound or connected, with a monitor thread.
fn open(ctx: &Context, a: &Args, kind: SocketType, bind: bool) -> Socket {
    let mut s = ctx.socket(kind).expect("socket");
    s.set_bytes(opt::OXMQ_NAME, a.name.as_bytes()).expect("OXMQ_NAME");
    if a.hb {
        s.set_int(opt::HEARTBEAT_IVL, 200).unwrap();
        s.set_int(opt::HEARTBEAT_TIMEOUT, 1000).unwrap();
        s.set_int(opt::HEARTBEAT_TTL, 1000).unwrap();
    }
    s.set_int(opt::RECONNECT_IVL, 100).unwrap();
    s.set_int(opt::RECONNECT_IVL_MAX, 500).unwrap();
    s.set_int(opt::SNDHWM, a.hwm).unwrap();
    s.set_int(opt::RCVHWM, a.hwm).unwrap();
    s.set_int(opt::LINGER, a.linger).unwrap();
    s.set_int(opt::RCVTIMEO, 50).unwrap();
    if let Some(ivl) = a.follow {
        s.set_int(opt::OXMQ_DNS_FOLLOW, 1).unwrap();
        s.set_int(opt::OXMQ_DNS_IVL, ivl).unwrap();
    }
    if kind == SocketType::Sub {
        s.subscribe("").unwrap();
    }
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let mon = format!("inproc://mon-{}", SEQ.fetch_add(1, Ordering::Relaxed));
    let wanted = event::CONNECTED | event::ACCEPTED | event::DISCONNECTED | event::HANDSHAKE_SUCCEEDED | event::CLOSED;
    s.monitor_versioned(Some(&mon), wanted, 2, SocketType::Pair).expect("monitor");
    let mut r = ctx.socket(SocketType::Pair).expect("monitor reader");
    r.connect(&mon).expect("monitor connect");
    std::thread::spawn(move || loop {
        match MonitorEvent::recv(&mut r, 2, 0) {
            Ok(e) => {
                let what = event::name(e.event).unwrap_or("?");
                say(format!("\"ev\":\"mon\",\"what\":\"{what}\",\"remote\":\"{}\"", esc(&e.remote)));
                if e.event == event::MONITOR_STOPPED {
                    return;
                }
            }
            Err(_) => return,
        }
    });
    if bind {
        s.bind(&a.endpoint).expect("bind");
    } else {
        s.connect(&a.endpoint).expect("connect");
    }
    s
}

fn stats_json(s: &mut Socket) -> String {
    let st = s.stats();
    format!(
        "\"stats\":{{\"msgs_out\":{},\"msgs_in\":{},\"peers\":{},\"connections\":{},\"reconnects\":{},\"handshake_failures\":{},\"dropped_hwm\":{},\"dropped_disconnected\":{},\"dropped_vanished\":{},\"hwm_reached\":{}}}",
        st.msgs_out,
        st.msgs_in,
        st.peers,
        st.connections,
        st.reconnects,
        st.handshake_failures,
        st.dropped_hwm,
        st.dropped_disconnected,
        st.dropped_vanished,
        st.hwm_reached
    )
}

/// Compresses a set of sequence numbers into `"a-b"` ranges.
fn ranges(set: &BTreeSet<u64>) -> String {
    let mut out = Vec::new();
    let mut it = set.iter().copied();
    if let Some(first) = it.next() {
        let (mut lo, mut hi) = (first, first);
        for x in it {
            if x == hi + 1 {
                hi = x;
            } else {
                out.push(format!("\"{lo}-{hi}\""));
                lo = x;
                hi = x;
            }
        }
        out.push(format!("\"{lo}-{hi}\""));
    }
    format!("[{}]", out.join(","))
}

/// Paces a sender at `rate` messages per second.
struct Pace {
    start: Instant,
    rate: u32,
    sent: u64,
}

impl Pace {
    fn due(&self) -> bool {
        self.start.elapsed().as_secs_f64() * f64::from(self.rate) >= self.sent as f64
    }
}

fn main() {
    let a = args();
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                match line {
                    Ok(l) if l.trim() == "stop" => break,
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            stop.store(true, Ordering::SeqCst);
        });
    }
    let ctx = Context::new();
    let kind = match a.role.as_str() {
        "pub" => SocketType::Pub,
        "sub" => SocketType::Sub,
        "push" => SocketType::Push,
        "pull" => SocketType::Pull,
        "rep" => SocketType::Rep,
        "req" => SocketType::Req,
        "router" => SocketType::Router,
        "dealer" => SocketType::Dealer,
        r => panic!("unknown role {r}"),
    };
    let bind = matches!(kind, SocketType::Pub | SocketType::Pull | SocketType::Rep | SocketType::Router);
    let mut s = open(&ctx, &a, kind, bind);
    say(format!("\"ev\":\"ready\",\"role\":\"{}\",\"name\":\"{}\"", a.role, esc(&a.name)));
    let mut last_tick = Instant::now();
    let mut last_rx = Instant::now();
    let mut rx = 0u64;
    let mut tx = 0u64;
    let mut got: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    let mut pace = Pace { start: Instant::now(), rate: a.rate, sent: 0 };
    // Request-reply clients.
    let mut acked: BTreeSet<u64> = BTreeSet::new();
    let mut retries = 0u64;
    let mut req_seq = 0u64;
    let mut req_sent_at: Option<Instant> = None;
    let mut inflight: BTreeMap<u64, Instant> = BTreeMap::new();
    let mut dups = 0u64;
    let timeout = Duration::from_millis(a.timeout);
    let note_rx = |body: &[u8], got: &mut BTreeMap<String, BTreeSet<u64>>, rx: &mut u64, last_rx: &mut Instant| {
        let text = String::from_utf8_lossy(body);
        if let Some((src, seq)) = text.split_once(' ') {
            if let Ok(seq) = seq.parse::<u64>() {
                got.entry(src.to_string()).or_default().insert(seq);
            }
        }
        if *rx == 0 || last_rx.elapsed() >= Duration::from_millis(300) {
            say(format!("\"ev\":\"resume\",\"rx\":{}", *rx + 1));
        }
        *rx += 1;
        *last_rx = Instant::now();
    };
    while !stop.load(Ordering::SeqCst) {
        match kind {
            SocketType::Pub | SocketType::Push => {
                if pace.due() {
                    let m = format!("{} {}", a.name, pace.sent);
                    match s.send(m, opt::DONTWAIT) {
                        Ok(()) => {
                            pace.sent += 1;
                            tx += 1;
                        }
                        // PUSH with every peer full: try again later (nothing is dropped).
                        Err(Error::Again) => std::thread::sleep(Duration::from_millis(5)),
                        Err(e) => panic!("send: {e}"),
                    }
                } else {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            SocketType::Sub | SocketType::Pull => match s.recv(0) {
                Ok(m) => note_rx(&m, &mut got, &mut rx, &mut last_rx),
                Err(Error::Again) => {}
                Err(e) => panic!("recv: {e}"),
            },
            SocketType::Rep => match s.recv(0) {
                Ok(m) => {
                    rx += 1;
                    s.send(m, 0).expect("reply");
                    tx += 1;
                }
                Err(Error::Again) => {}
                Err(e) => panic!("recv: {e}"),
            },
            SocketType::Router => match s.recv_multipart(0) {
                Ok(parts) => {
                    rx += 1;
                    s.send_multipart(parts, 0).expect("reply");
                    tx += 1;
                }
                Err(Error::Again) => {}
                Err(e) => panic!("recv: {e}"),
            },
            SocketType::Req => {
                // The lazy pirate: one request at a time, at most `rate` per second.
                if req_sent_at.is_none() {
                    if !pace.due() {
                        std::thread::sleep(Duration::from_millis(1));
                        continue;
                    }
                    s.send(format!("{} {}", a.name, req_seq), 0).expect("request");
                    tx += 1;
                    req_sent_at = Some(Instant::now());
                }
                match s.recv(0) {
                    Ok(m) => {
                        let want = format!("{} {}", a.name, req_seq);
                        assert_eq!(&m[..], want.as_bytes(), "a reply to another request");
                        acked.insert(req_seq);
                        note_rx(&m, &mut got, &mut rx, &mut last_rx);
                        req_seq += 1;
                        pace.sent += 1;
                        req_sent_at = None;
                    }
                    Err(Error::Again) => {
                        if req_sent_at.is_some_and(|t| t.elapsed() >= timeout) {
                            retries += 1;
                            say(format!("\"ev\":\"retry\",\"seq\":{req_seq}"));
                            drop(s);
                            s = open(&ctx, &a, kind, false);
                            req_sent_at = None; // sent again at once, same sequence number
                        }
                    }
                    Err(e) => panic!("recv: {e}"),
                }
            }
            SocketType::Dealer => {
                if inflight.len() < 10 && pace.due() {
                    let seq = pace.sent;
                    s.send(format!("{} {}", a.name, seq), 0).expect("request");
                    tx += 1;
                    pace.sent += 1;
                    inflight.insert(seq, Instant::now());
                }
                match s.recv(opt::DONTWAIT) {
                    Ok(m) => {
                        let text = String::from_utf8_lossy(&m).into_owned();
                        let seq: u64 = text.split_once(' ').and_then(|(_, q)| q.parse().ok()).expect("reply seq");
                        if inflight.remove(&seq).is_some() {
                            acked.insert(seq);
                            note_rx(&m, &mut got, &mut rx, &mut last_rx);
                        } else {
                            dups += 1; // the answer to a request sent twice
                        }
                    }
                    Err(Error::Again) => std::thread::sleep(Duration::from_millis(1)),
                    Err(e) => panic!("recv: {e}"),
                }
                let late: Vec<u64> = inflight.iter().filter(|(_, t)| t.elapsed() >= timeout).map(|(q, _)| *q).collect();
                for seq in late {
                    retries += 1;
                    say(format!("\"ev\":\"retry\",\"seq\":{seq}"));
                    s.send(format!("{} {}", a.name, seq), 0).expect("request again");
                    inflight.insert(seq, Instant::now());
                }
            }
            _ => unreachable!(),
        }
        if last_tick.elapsed() >= Duration::from_millis(200) {
            last_tick = Instant::now();
            let st = stats_json(&mut s);
            say(format!("\"ev\":\"tick\",\"rx\":{rx},\"tx\":{tx},\"acked\":{},{st}", acked.len()));
        }
    }
    let st = stats_json(&mut s);
    let seqs: Vec<String> = got.iter().map(|(k, v)| format!("\"{}\":{}", esc(k), ranges(v))).collect();
    say(format!(
        "\"ev\":\"summary\",\"role\":\"{}\",\"rx\":{rx},\"tx\":{tx},\"acked\":{},\"unacked\":{},\"retries\":{retries},\"dups\":{dups},\"seqs\":{{{}}},{st}",
        a.role,
        acked.len(),
        inflight.len() + u64::from(req_sent_at.is_some()) as usize,
        seqs.join(",")
    ));
}
