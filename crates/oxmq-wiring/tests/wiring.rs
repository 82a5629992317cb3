//! The wiring API in one process: scopes, binding, fan-out and balancing, errors, the
//! embedded service, and a name server restart. Every wait has a deadline.

use oxmq_wiring::{Backend, NameServer, Options, Scope, Style, Timing, Wiring, WiringError};
use std::time::{Duration, Instant};

const T: Option<Duration> = Some(Duration::from_secs(10));

fn server() -> NameServer {
    NameServer::start("tcp://127.0.0.1:*", Backend::Memory).expect("name server")
}

fn opts() -> Options {
    Options { timing: Timing { request_timeout: Duration::from_secs(2), ttl: Duration::from_millis(600) }, ..Options::default() }
}

fn handle(ns: &NameServer) -> Wiring {
    Wiring::with_options(ns.endpoint(), opts()).expect("handle")
}

fn recv_str(w: &mut Wiring) -> String {
    String::from_utf8(w.receive_timeout(T).expect("receive").as_slice().to_vec()).unwrap()
}

#[test]
fn local_exchange_to_local_queue() {
    let ns = server();
    let mut w = handle(&ns);
    let eid = w.create_exchange("E", Scope::Local, "").unwrap();
    w.create_queue("Q", Scope::Local, "").unwrap();
    w.bind("E", "Q").unwrap();
    for i in 0..100 {
        w.send(eid, format!("m{i}").into_bytes()).unwrap();
    }
    for i in 0..100 {
        assert_eq!(recv_str(&mut w), format!("m{i}"));
    }
    // Local names are not in the directory.
    assert!(matches!(w.lookup("E"), Err(WiringError::UnknownName(_))));
}

/// A queue owner on its own thread (as in another process): creates its queue with `setup`,
/// says ready, then receives `n` messages. A bound queue accepts a new exchange's wire when
/// its owner calls into the handle, as any bound ZeroMQ socket does, so the owner must be
/// receiving while others bind to it.
fn receiver(
    service: String,
    n: usize,
    setup: impl FnOnce(&mut Wiring) + Send + 'static,
) -> (std::thread::JoinHandle<Vec<String>>, std::sync::mpsc::Receiver<()>) {
    receiver_until(service, move |got| got.len() == n, setup)
}

/// As `receiver`, receiving until `done` holds for what it has so far.
fn receiver_until(
    service: String,
    done: impl Fn(&[String]) -> bool + Send + 'static,
    setup: impl FnOnce(&mut Wiring) + Send + 'static,
) -> (std::thread::JoinHandle<Vec<String>>, std::sync::mpsc::Receiver<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        let mut w = Wiring::with_options(&service, opts()).expect("handle");
        setup(&mut w);
        tx.send(()).unwrap();
        let mut got = vec![];
        while !done(&got) {
            got.push(recv_str(&mut w));
        }
        got
    });
    rx.recv_timeout(Duration::from_secs(10)).expect("receiver ready");
    (t, rx)
}

#[test]
fn global_names_across_handles_fan_out_to_every_queue() {
    let ns = server();
    let mut a = handle(&ns);
    let eid = a.create_exchange("E", Scope::Global, "").unwrap();
    let (b, _) = receiver_until(
        ns.endpoint().into(),
        |got| got.last().map(String::as_str) == Some("three"),
        |w| {
            w.create_queue("QB", Scope::Global, "").unwrap();
        },
    );
    // One wire made from the exchange's side, one from the queue's side.
    a.bind("E", "QB").unwrap();
    let mut c = handle(&ns);
    c.create_queue("QC", Scope::Local, "").unwrap();
    c.bind("E", "QC").unwrap();
    let rec = a.lookup("E").unwrap();
    assert!(rec.endpoint.starts_with("tcp://127.0.0.1:"), "{rec:?}");
    assert_eq!(rec.kind, oxmq_wiring::Kind::Exchange);
    // The queue-side wire is a SUB: it carries what E sends once its subscription has
    // reached E, which `bind` does not wait for (the slow-joiner rule). Probe until it does.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        a.send(eid, &b"probe"[..]).unwrap();
        if c.receive_timeout(Some(Duration::from_millis(20))).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "C's subscription never reached E");
    }
    for m in ["one", "two", "three"] {
        a.send(eid, m.as_bytes()).unwrap();
    }
    // The exchange-side wire gets everything sent after bind returned, in order.
    let got = b.join().unwrap();
    let tail: Vec<&str> = got.iter().map(String::as_str).skip_while(|m| *m == "probe").collect();
    assert_eq!(tail, ["one", "two", "three"], "{got:?}");
    // The queue-side wire too, from its first delivery on.
    let mut got = vec![];
    while got.last().map(String::as_str) != Some("three") {
        got.push(recv_str(&mut c));
    }
    let tail: Vec<&str> = got.iter().map(String::as_str).skip_while(|m| *m == "probe").collect();
    assert_eq!(tail, ["one", "two", "three"], "{got:?}");
}

#[test]
fn process_scope_is_seen_by_other_handles_but_not_the_directory() {
    let ns = server();
    let (a, _) = receiver(ns.endpoint().into(), 1, |w| {
        w.create_queue("PQ", Scope::Process, "").unwrap();
    });
    let mut b = handle(&ns);
    let eid = b.create_exchange("PE", Scope::Local, "").unwrap();
    b.bind("PE", "PQ").unwrap();
    b.send(eid, &b"hi"[..]).unwrap();
    assert_eq!(a.join().unwrap(), ["hi"]);
    assert!(matches!(b.lookup("PQ"), Err(WiringError::UnknownName(_))));
    // The handle is gone with its thread, and its process name with it.
    let mut c = handle(&ns);
    c.create_queue("PQ", Scope::Process, "").unwrap();
    let mut d = handle(&ns);
    assert!(matches!(d.create_queue("PQ", Scope::Process, ""), Err(WiringError::NameTaken(_))));
}

#[test]
fn load_balancing_sends_each_message_to_one_queue() {
    let ns = server();
    let mut a = handle(&ns);
    let eid = a.create_exchange_with("LB", Scope::Local, "", Style::LoadBalance).unwrap();
    let (b, _) = receiver(ns.endpoint().into(), 5, |w| {
        w.create_queue("Q1", Scope::Global, "").unwrap();
    });
    let (c, _) = receiver(ns.endpoint().into(), 5, |w| {
        w.create_queue("Q2", Scope::Global, "").unwrap();
    });
    a.bind("LB", "Q1").unwrap();
    a.bind("LB", "Q2").unwrap();
    for i in 0..10 {
        a.send(eid, format!("{i}").into_bytes()).unwrap();
    }
    let mut got: Vec<u32> = b.join().unwrap().iter().map(|s| s.parse().unwrap()).collect();
    got.extend(c.join().unwrap().iter().map(|s| s.parse::<u32>().unwrap()));
    got.sort();
    assert_eq!(got, (0..10).collect::<Vec<_>>());
}

#[test]
fn errors_come_back_typed() {
    let ns = server();
    let mut a = handle(&ns);
    let mut b = handle(&ns);
    let eid = a.create_exchange("E", Scope::Global, "").unwrap();
    a.create_queue("Q", Scope::Local, "").unwrap();
    // Unknown names, on either side.
    assert!(matches!(a.bind("E", "nope"), Err(WiringError::UnknownName(n)) if n == "nope"));
    assert!(matches!(a.bind("nope", "Q"), Err(WiringError::UnknownName(_))));
    // A global name is owned once, across handles; and a local one once per handle.
    assert!(matches!(b.create_queue("E", Scope::Global, ""), Err(WiringError::NameTaken(_))));
    assert!(matches!(a.create_queue("Q", Scope::Local, ""), Err(WiringError::NameTaken(_))));
    // Kinds must match.
    assert!(matches!(a.bind("Q", "E"), Err(WiringError::Invalid(_))));
    b.create_queue("BQ", Scope::Local, "").unwrap();
    assert!(matches!(b.bind("E", "E"), Err(WiringError::Invalid(_))));
    // Bad locations, ids, names.
    for loc in ["127.0.0.1:99999", "127.0.0.1:port", "no such host:1", "256.1.1.1:0"] {
        let e = a.create_queue("L", Scope::Global, loc).unwrap_err();
        assert!(matches!(e, WiringError::BadLocation(_)), "{loc}: {e:?}");
        assert_eq!(e.errno(), libc::EINVAL);
    }
    assert!(matches!(a.send(eid + 7, &b"x"[..]), Err(WiringError::Invalid(_))));
    assert!(matches!(a.create_exchange("", Scope::Local, ""), Err(WiringError::Invalid(_))));
    assert!(matches!(a.create_exchange("a/b", Scope::Local, ""), Err(WiringError::Invalid(_))));
    // A receive with nothing to read ends at its timeout.
    let t0 = Instant::now();
    assert!(matches!(a.receive_timeout(Some(Duration::from_millis(100))), Err(WiringError::Timeout)));
    assert!(t0.elapsed() < Duration::from_secs(2));
    // A handle with no queue cannot receive.
    let mut c = handle(&ns);
    assert!(matches!(c.receive_timeout(Some(Duration::from_millis(10))), Err(WiringError::Invalid(_))));
    // Neither end ours.
    let mut d = handle(&ns);
    d.create_queue("DQ", Scope::Global, "").unwrap();
    assert!(matches!(c.bind("E", "DQ"), Err(WiringError::Invalid(_))));
}

#[test]
fn unreachable_service_is_an_error_not_a_hang() {
    // A port nothing listens on: bind a listener to learn a free port, then close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut o = opts();
    o.timing.request_timeout = Duration::from_millis(300);
    let t0 = Instant::now();
    let e = Wiring::with_options(&format!("127.0.0.1:{port}"), o).err().expect("must fail");
    assert!(matches!(e, WiringError::Unreachable(_)), "{e:?}");
    assert_eq!(e.errno(), libc::EHOSTUNREACH);
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert!(matches!(Wiring::with_options("tcp://bad host", opts()), Err(WiringError::BadLocation(_))));
}

#[test]
fn a_goodbye_withdraws_names_at_once() {
    let ns = server();
    let mut a = handle(&ns);
    let b = handle(&ns);
    a.create_exchange("GONE", Scope::Global, "").unwrap();
    assert!(b.lookup("GONE").is_ok());
    drop(a);
    assert!(matches!(b.lookup("GONE"), Err(WiringError::UnknownName(_))));
}

#[test]
fn names_come_back_after_a_name_server_restart() {
    let ns = server();
    let ep = ns.endpoint().to_string();
    let mut owner = handle(&ns);
    let eid = owner.create_exchange("R", Scope::Global, "").unwrap();
    let mut q = handle(&ns);
    q.create_queue("RQ", Scope::Local, "").unwrap();
    q.bind("R", "RQ").unwrap();
    ns.stop();
    let ns2 = NameServer::start(&ep, Backend::Memory).expect("restart on the same port");
    let c = Wiring::with_options(ns2.endpoint(), opts()).unwrap();
    // The owner's next heartbeat finds its session unknown and registers again.
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.lookup("R").is_err() {
        assert!(Instant::now() < deadline, "name not re-registered after restart");
        std::thread::sleep(Duration::from_millis(20)); // polling a condition with a deadline
    }
    // The data wire never depended on the service.
    owner.send(eid, &b"still"[..]).unwrap();
    assert_eq!(recv_str(&mut q), "still");
}

#[test]
fn embedded_service_on_an_empty_host() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let o = Options { embedded_port: port, ..opts() };
    let mut a = Wiring::with_options("", o.clone()).unwrap();
    assert_eq!(a.service(), format!("tcp://127.0.0.1:{port}"));
    let eid = a.create_exchange("E", Scope::Global, "").unwrap();
    let t = std::thread::spawn(move || {
        let mut b = Wiring::with_options("", o).unwrap();
        b.create_queue("Q", Scope::Local, "").unwrap();
        b.bind("E", "Q").unwrap();
        recv_str(&mut b)
    });
    // The queue-side wire is up when its subscription has reached the exchange: keep
    // sending until the other handle has one.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !t.is_finished() {
        a.send(eid, &b"embedded"[..]).unwrap();
        assert!(Instant::now() < deadline, "nothing arrived through the embedded service");
        std::thread::sleep(Duration::from_millis(10)); // pacing the sender, not a settle wait
    }
    assert_eq!(t.join().unwrap(), "embedded");
}

#[test]
fn the_issue_snippet_in_rust() {
    let ns = server();
    let mut w = handle(&ns);
    let eid = w.create_exchange("E", Scope::Global, "").unwrap();
    w.create_queue("Q", Scope::Global, "").unwrap();
    w.bind("E", "Q").unwrap();
    w.send(eid, vec![0u8; 10]).unwrap();
    let m = w.receive_timeout(T).unwrap();
    assert_eq!(m.as_slice(), &[0u8; 10]);
}
