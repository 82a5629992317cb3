//! XPUB/XSUB against libzmq 4.3.5 (pyzmq): forwarding through an oxmq proxy between libzmq
//! publisher and subscriber, through libzmq's proxy between oxmq ones, and XPUB_WELCOME_MSG,
//! XPUB_MANUAL and INVERT_MATCHING with a libzmq peer on the other end.

mod common;

use common::*;
use oxmq::{opt, Context, Error, SocketType as T};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

both_ways!(
    oxmq_proxy_between_libzmq_pub_and_sub,
    oxmq_xpub_welcome_reaches_libzmq_sub,
    oxmq_xpub_manual_with_libzmq_sub,
    oxmq_pub_invert_matching_libzmq_sub,
    libzmq_pub_invert_matching_oxmq_sub,
);

fn noop<S>(_: &mut S) {}

/// Publishes `probe` from the libzmq PUB until the libzmq SUB receives it.
fn sync_py_to_py(publ: &mut Peer, sub: &mut Peer, probe: &[u8]) {
    eventually("subscription travelled through the proxy", || {
        publ.send(&[probe]);
        loop {
            match sub.recv(20) {
                Some(m) if m == vec![probe.to_vec()] => return Some(()),
                Some(_) => continue,
                None => return None,
            }
        }
    });
}

fn sync_to_py(ox_pub: &mut oxmq::Socket, py: &mut Peer, probe: &[u8]) {
    eventually("libzmq subscriber receives the probe", || {
        ox_pub.send(probe, 0).unwrap();
        loop {
            match py.recv(20) {
                Some(m) if m == vec![probe.to_vec()] => return Some(()),
                Some(_) => continue,
                None => return None,
            }
        }
    });
}

/// Frames received by the libzmq peer up to `end`, leaving out probes.
fn py_collect_until(py: &mut Peer, end: &[u8]) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    loop {
        let m = py.recv_must();
        assert_eq!(m.len(), 1);
        if m[0] == end {
            return got;
        }
        if !m[0].ends_with(b"probe") {
            got.push(m[0].clone());
        }
    }
}

fn ox_collect_until(ox: &mut oxmq::Socket, end: &[u8]) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    loop {
        let m = ox_recv(ox);
        assert_eq!(m.len(), 1);
        if m[0] == end {
            return got;
        }
        if !m[0].ends_with(b"probe") {
            got.push(m[0].clone());
        }
    }
}

/// libzmq PUB → oxmq XSUB ⇄ oxmq XPUB → libzmq SUB, `oxmq::proxy` in the middle. The
/// subscription travels up through both oxmq sockets (the libzmq publisher filters on it),
/// the data down.
fn oxmq_proxy_between_libzmq_pub_and_sub(setup: Setup) {
    let ctx = Context::new();
    let mut xsub = ox_socket(&ctx, T::XSub);
    let mut xpub = ox_socket(&ctx, T::XPub);
    let mut publ = Peer::spawn("PUB");
    let mut sub = Peer::spawn("SUB");
    sub.set_bytes("SUBSCRIBE", b"A");
    match setup.binder {
        Binder::Oxmq => {
            let ep = setup.transport.bind_endpoint();
            xsub.bind(&ep).unwrap();
            publ.connect(&xsub.last_endpoint().unwrap());
            let ep = setup.transport.bind_endpoint();
            xpub.bind(&ep).unwrap();
            sub.connect(&xpub.last_endpoint().unwrap());
        }
        Binder::Libzmq => {
            let ep = publ.bind(&setup.transport.bind_endpoint());
            xsub.connect(&ep).unwrap();
            let ep = sub.bind(&setup.transport.bind_endpoint());
            xpub.connect(&ep).unwrap();
        }
    }
    let proxy = std::thread::spawn(move || oxmq::proxy::proxy(&mut xsub, &mut xpub, None));

    sync_py_to_py(&mut publ, &mut sub, b"A-probe");
    for m in [&b"B1"[..], b"A1", b"C1", b"A2"] {
        publ.send(&[m]);
    }
    publ.send(&[b"A-end"]);
    assert_eq!(py_collect_until(&mut sub, b"A-end"), vec![b"A1".to_vec(), b"A2".to_vec()]);
    // A new subscription travels the same way.
    sub.set_bytes("SUBSCRIBE", b"S");
    sync_py_to_py(&mut publ, &mut sub, b"S-probe");
    publ.send(&[b"S1"]);
    publ.send(&[b"S-end"]);
    assert_eq!(py_collect_until(&mut sub, b"S-end"), vec![b"S1".to_vec()]);

    ctx.shutdown();
    assert_eq!(proxy.join().unwrap().unwrap_err(), Error::Term);
}

/// oxmq PUB → libzmq XSUB ⇄ libzmq XPUB (`zmq.proxy`) → oxmq SUB.
fn libzmq_proxy_between_oxmq_pub_and_sub(t: Transport) {
    let mut child = Command::new(python())
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("peers").join("proxy_peer.py"))
        .arg(t.bind_endpoint())
        .arg(t.bind_endpoint())
        .arg(HARD_TIMEOUT_S.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn proxy_peer.py");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words.len(), 3, "proxy_peer.py said {line:?}");
    let (xsub_ep, xpub_ep) = (words[1].to_string(), words[2].to_string());

    let ctx = Context::new();
    let mut publ = ox_socket(&ctx, T::Pub);
    publ.connect(&xsub_ep).unwrap();
    let mut sub = ox_socket(&ctx, T::Sub);
    sub.subscribe("A").unwrap();
    sub.connect(&xpub_ep).unwrap();
    eventually("subscription travelled through libzmq's proxy", || {
        publ.send("A-probe", 0).unwrap();
        while let Some(m) = ox_try_recv(&mut sub, 20) {
            if m == vec![b"A-probe".to_vec()] {
                return Some(());
            }
        }
        None
    });
    for m in ["B1", "A1", "C1", "A2", "A-end"] {
        publ.send(m, 0).unwrap();
    }
    assert_eq!(ox_collect_until(&mut sub, b"A-end"), vec![b"A1".to_vec(), b"A2".to_vec()]);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn libzmq_proxy_between_oxmq_pub_and_sub_tcp() {
    require_pyzmq!();
    libzmq_proxy_between_oxmq_pub_and_sub(Transport::Tcp);
}

#[test]
fn libzmq_proxy_between_oxmq_pub_and_sub_ipc() {
    require_pyzmq!();
    libzmq_proxy_between_oxmq_pub_and_sub(Transport::Ipc);
}

fn oxmq_xpub_welcome_reaches_libzmq_sub(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::XPub,
        "SUB",
        |s| s.set_bytes(opt::XPUB_WELCOME_MSG, b"W-welcome").unwrap(),
        |p| p.set_bytes("SUBSCRIBE", b"W"),
    );
    // A bound XPUB attaches the new peer when the application uses it: keep it busy the way
    // a poll loop would while libzmq waits for the welcome.
    let end = Instant::now() + Duration::from_secs(10);
    let first = loop {
        ox.events().unwrap();
        if let Some(m) = py.recv(50) {
            break m;
        }
        assert!(Instant::now() < end, "the libzmq SUB got no welcome message");
    };
    assert_eq!(first, vec![b"W-welcome".to_vec()]);
    assert_eq!(ox_recv(&mut ox), vec![b"\x01W".to_vec()]);
}

fn oxmq_xpub_manual_with_libzmq_sub(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(setup, &ctx, T::XPub, "SUB", |s| s.set_int(opt::XPUB_MANUAL, 1).unwrap(), noop);
    py.set_bytes("SUBSCRIBE", b"");
    // A bound libzmq SUB attaches the new peer (and sends it the subscription) only when the
    // application calls into it: keep it busy while waiting.
    let first = eventually("the subscription reaches the oxmq XPUB", || {
        if py.recv(1).is_some() {
            panic!("the libzmq SUB received data before any subscription was applied");
        }
        ox_try_recv(&mut ox, 20)
    });
    assert_eq!(first, vec![b"\x01".to_vec()]);
    // Not applied: the libzmq SUB wants everything, but gets nothing yet.
    ox.send("A0", 0).unwrap();
    assert_eq!(py.recv(200), None);
    // Apply a narrower prefix to that subscriber's pipe: the filtering is oxmq's.
    ox.subscribe("A").unwrap();
    for m in ["B1", "A1", "C1", "A-end"] {
        ox.send(m, 0).unwrap();
    }
    assert_eq!(py_collect_until(&mut py, b"A-end"), vec![b"A1".to_vec()]);
    // The subscriber's unsubscription reaches the application too.
    py.set_bytes("UNSUBSCRIBE", b"");
    assert_eq!(ox_recv(&mut ox), vec![b"\x00".to_vec()]);
}

fn oxmq_pub_invert_matching_libzmq_sub(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Pub,
        "SUB",
        |s| s.set_int(opt::INVERT_MATCHING, 1).unwrap(),
        |p| {
            p.set_int("INVERT_MATCHING", 1);
            p.set_bytes("SUBSCRIBE", b"A");
        },
    );
    sync_to_py(&mut ox, &mut py, b"P-probe");
    for m in ["A1", "B1", "AB", "C1", "P-end"] {
        ox.send(m, 0).unwrap();
    }
    assert_eq!(py_collect_until(&mut py, b"P-end"), vec![b"B1".to_vec(), b"C1".to_vec()]);
}

fn libzmq_pub_invert_matching_oxmq_sub(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Sub,
        "PUB",
        |s| {
            s.set_int(opt::INVERT_MATCHING, 1).unwrap();
            s.subscribe("A").unwrap();
        },
        |p| p.set_int("INVERT_MATCHING", 1),
    );
    eventually("libzmq publisher reaches the oxmq subscriber", || {
        py.send(&[b"P-probe"]);
        ox_try_recv(&mut ox, 20).filter(|m| m == &vec![b"P-probe".to_vec()])
    });
    for m in [&b"A1"[..], b"B1", b"AB", b"C1", b"P-end"] {
        py.send(&[m]);
    }
    assert_eq!(ox_collect_until(&mut ox, b"P-end"), vec![b"B1".to_vec(), b"C1".to_vec()]);
}
