//! PLAIN and CURVE between oxmq and libzmq 4.3.5 (bundled with pyzmq), each side in each role,
//! over tcp and ipc, each side binding in turn.
//!
//! The libzmq socket lives in `peers/peer.py` (its `setint`/`setbytes` commands set the security
//! options); `peers/security_peer.py` runs libzmq's key and Z85 helpers, and a libzmq PLAIN server
//! with pyzmq's ZAP authenticator (libzmq's PLAIN server refuses all clients without one). oxmq's
//! servers ask an oxmq ZAP handler (a REP at `inproc://zeromq.zap.01`, `OxZap` below) about
//! libzmq clients; the User-Id each side's handler returns is read back on the messages
//! (`Msg::gets`, pyzmq's `Frame.get`).

mod common;

use common::*;
use oxmq::monitor::event as ev;
use oxmq::{opt, security, Context, MonitorEvent, Socket, SocketType as T};
use std::process::Command;

both_ways!(
    plain_oxmq_client_libzmq_server,
    plain_oxmq_client_rejected_by_libzmq_zap,
    plain_libzmq_client_refused_by_oxmq_server_without_zap,
    curve_oxmq_client_libzmq_server,
    curve_libzmq_client_oxmq_server,
    curve_oxmq_sub_libzmq_pub_server,
    curve_libzmq_sub_oxmq_pub_server,
    curve_oxmq_client_wrong_server_key,
    curve_libzmq_client_wrong_server_key,
    plain_libzmq_client_accepted_by_oxmq_zap,
    plain_libzmq_client_rejected_by_oxmq_zap,
    curve_libzmq_client_accepted_by_oxmq_zap,
    curve_libzmq_client_rejected_by_oxmq_zap,
);

/// One call to libzmq's helpers; the words after "ok".
fn libzmq_helper(args: &[&str]) -> Vec<String> {
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers").join("security_peer.py");
    let out = Command::new(python()).arg(script).args(args).output().expect("run security_peer.py");
    let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let rest = line.strip_prefix("ok").unwrap_or_else(|| panic!("security_peer.py {args:?}: {line}"));
    rest.split_whitespace().map(str::to_string).collect()
}

/// A key pair made by libzmq (Z85).
fn libzmq_keypair() -> (String, String) {
    let v = libzmq_helper(&["keypair"]);
    (v[0].clone(), v[1].clone())
}

fn bin(z85: &str) -> Vec<u8> {
    security::z85_decode(z85.as_bytes()).unwrap()
}

/// Round trips both ways: single frames, then multi-part messages with empty, short, long
/// (> 255 bytes) and large (zero-copy path) frames.
fn exchange(ox: &mut Socket, py: &mut Peer) {
    for i in 0..10 {
        ox.send(format!("ox {i}"), 0).unwrap();
        assert_eq!(py.recv_must(), vec![format!("ox {i}").into_bytes()]);
        py.send(&[format!("py {i}").as_bytes()]);
        assert_eq!(ox_recv(ox), vec![format!("py {i}").into_bytes()]);
    }
    let big = vec![0x5au8; 70_000];
    let parts: [&[u8]; 5] = [b"", b"a", &[1u8; 300], &big, b"end"];
    let expect: Vec<Vec<u8>> = parts.iter().map(|p| p.to_vec()).collect();
    ox_send(ox, &parts);
    assert_eq!(py.recv_must(), expect);
    py.send(&parts);
    assert_eq!(ox_recv(ox), expect);
}

fn mechanism(s: &mut Socket) -> i32 {
    s.get_int(opt::MECHANISM).unwrap()
}

// --- PLAIN -------------------------------------------------------------------------------------

/// libzmq 4.3.5's PLAIN server drops every client when no ZAP handler is bound (unlike its
/// CURVE server), so the libzmq side runs pyzmq's authenticator (`security_peer.py plain-echo`).
fn plain_oxmq_client_libzmq_server(setup: Setup) {
    plain_against_libzmq_zap(setup, b"password", true);
}

fn plain_oxmq_client_rejected_by_libzmq_zap(setup: Setup) {
    plain_against_libzmq_zap(setup, b"wrong", false);
}

/// A child process that must not outlive the test.
struct Child(std::process::Child, std::sync::mpsc::Receiver<String>);

impl Child {
    fn line(&self) -> String {
        self.1.recv_timeout(REPLY).expect("security_peer.py did not answer")
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn plain_echo_peer(mode: &str, ep: &str) -> Child {
    use std::io::BufRead;
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers").join("security_peer.py");
    let mut child = Command::new(python())
        .arg(script)
        .args(["plain-echo", mode, ep, "admin", "password", "2500"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn security_peer.py");
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    Child(child, rx)
}

fn plain_against_libzmq_zap(setup: Setup, password: &[u8], accepted: bool) {
    let ctx = Context::new();
    let mut ox = ox_socket(&ctx, T::Pair);
    ox.set_bytes(opt::PLAIN_USERNAME, b"admin").unwrap();
    ox.set_bytes(opt::PLAIN_PASSWORD, password).unwrap();
    assert_eq!(mechanism(&mut ox), security::PLAIN);
    // The handshake's outcome as the monitor reports it (libzmq's events and values).
    let mon_ep = format!("inproc://security-monitor-{}", std::process::id());
    let handshake_events =
        ev::HANDSHAKE_SUCCEEDED | ev::HANDSHAKE_FAILED_AUTH | ev::HANDSHAKE_FAILED_PROTOCOL | ev::HANDSHAKE_FAILED_NO_DETAIL;
    ox.monitor(Some(&mon_ep), handshake_events).unwrap();
    let mut mon = ctx.socket(T::Pair).unwrap();
    mon.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    mon.connect(&mon_ep).unwrap();
    let peer = match setup.binder {
        Binder::Libzmq => {
            let p = plain_echo_peer("bind", &setup.transport.bind_endpoint());
            let line = p.line();
            let ep = line.strip_prefix("ok ").unwrap_or_else(|| panic!("security_peer.py: {line}"));
            ox.connect(ep).unwrap();
            p
        }
        Binder::Oxmq => {
            let ep = setup.transport.bind_endpoint();
            ox.bind(&ep).unwrap();
            let real = if ep.starts_with("tcp://") { ox.last_endpoint().unwrap() } else { ep };
            let p = plain_echo_peer("connect", &real);
            assert!(p.line().starts_with("ok "));
            p
        }
    };
    let first = MonitorEvent::recv(&mut mon, 1, 0).expect("no handshake event from oxmq's monitor");
    if accepted {
        assert_eq!(first.event, ev::HANDSHAKE_SUCCEEDED);
        for i in 0..5 {
            ox.send(format!("ping {i}"), 0).unwrap();
            let back = ox.recv(0).unwrap();
            assert_eq!(back, format!("ping {i}").as_str());
            // libzmq's READY properties reach oxmq's messages; no User-Id on the client side.
            assert_eq!(back.gets("Socket-Type"), Some(&b"PAIR"[..]));
            assert_eq!(back.gets("User-Id"), None);
        }
        // libzmq's ZAP handler (pyzmq's authenticator) named the user; libzmq's Frame.get
        // reads it on the message oxmq sent.
        assert_eq!(peer.line(), "user admin");
        let parts: [&[u8]; 3] = [b"", &[3u8; 300], b"x"];
        ox_send(&mut ox, &parts);
        assert_eq!(ox_recv(&mut ox), parts.iter().map(|p| p.to_vec()).collect::<Vec<_>>());
    } else {
        // libzmq 4.3.5's PLAIN server answers the ZAP refusal with ERROR "400"; libzmq's client
        // reports that as HANDSHAKE_FAILED_AUTH with the status code, and so must oxmq's.
        assert_eq!(
            (ev::name(first.event), first.value),
            (ev::name(ev::HANDSHAKE_FAILED_AUTH), 400),
            "oxmq's PLAIN client did not report libzmq's ERROR as an auth failure"
        );
        // A bound PAIR has no pipe before a handshake succeeds: the send may be refused.
        let _ = ox.send("must not arrive", opt::DONTWAIT);
        assert_eq!(ox_try_recv(&mut ox, 1500), None);
        assert_eq!(peer.line(), "ok 0", "libzmq received a message from a rejected PLAIN client");
    }
}

fn plain_libzmq_client_refused_by_oxmq_server_without_zap(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Pair,
        "PAIR",
        |s| s.set_int(opt::PLAIN_SERVER, 1).unwrap(),
        |p| {
            p.set_bytes("PLAIN_USERNAME", b"admin");
            p.set_bytes("PLAIN_PASSWORD", b"password");
        },
    );
    assert_eq!(ox.get_int(opt::PLAIN_SERVER).unwrap(), 1);
    // No ZAP handler: the oxmq server refuses the client, as libzmq's does; nothing crosses.
    // A bound PAIR has no pipe before a handshake succeeds, so the send may be refused; the
    // peer's blocking send is not used because its PAIR may have no pipe either.
    let _ = ox.send("must not arrive", opt::DONTWAIT);
    assert_eq!(py.recv(1500), None, "a client refused by PLAIN got a message");
    assert_eq!(ox_try_recv(&mut ox, 100), None, "a PLAIN server without ZAP accepted a client");
}

// --- CURVE -------------------------------------------------------------------------------------

/// oxmq as a CURVE client with `server_public`; its own keys come from oxmq's generator, given
/// as Z85 text (libzmq's 40-character form).
fn ox_curve_client(s: &mut Socket, server_public: &str) {
    let (public, secret) = security::curve_keypair();
    s.set_bytes(opt::CURVE_PUBLICKEY, public.as_bytes()).unwrap();
    s.set_bytes(opt::CURVE_SECRETKEY, secret.as_bytes()).unwrap();
    s.set_bytes(opt::CURVE_SERVERKEY, server_public.as_bytes()).unwrap();
}

/// libzmq as a CURVE client with `server_public`; keys passed as 32 binary bytes.
fn py_curve_client(p: &mut Peer, server_public: &str) {
    let (public, secret) = libzmq_keypair();
    p.set_bytes("CURVE_PUBLICKEY", &bin(&public));
    p.set_bytes("CURVE_SECRETKEY", &bin(&secret));
    p.set_bytes("CURVE_SERVERKEY", &bin(server_public));
}

fn curve_oxmq_client_libzmq_server(setup: Setup) {
    let ctx = Context::new();
    let (server_public, server_secret) = libzmq_keypair();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Pair,
        "PAIR",
        |s| ox_curve_client(s, &server_public),
        |p| {
            p.set_int("CURVE_SERVER", 1);
            p.set_bytes("CURVE_SECRETKEY", &bin(&server_secret));
        },
    );
    assert_eq!(mechanism(&mut ox), security::CURVE);
    assert_eq!(ox.get_int(opt::CURVE_SERVER).unwrap(), 0);
    exchange(&mut ox, &mut py);
}

fn curve_libzmq_client_oxmq_server(setup: Setup) {
    let ctx = Context::new();
    let (server_public, server_secret) = security::curve_keypair();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Pair,
        "PAIR",
        |s| {
            s.set_int(opt::CURVE_SERVER, 1).unwrap();
            s.set_bytes(opt::CURVE_SECRETKEY, &bin(&server_secret)).unwrap();
        },
        |p| py_curve_client(p, &server_public),
    );
    assert_eq!(ox.get_int(opt::CURVE_SERVER).unwrap(), 1);
    exchange(&mut ox, &mut py);
}

/// Subscriptions travel as commands sealed inside MESSAGE (flags byte 0x02).
fn curve_oxmq_sub_libzmq_pub_server(setup: Setup) {
    let ctx = Context::new();
    let (server_public, server_secret) = libzmq_keypair();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Sub,
        "PUB",
        |s| {
            ox_curve_client(s, &server_public);
            s.subscribe("A").unwrap();
        },
        |p| {
            p.set_int("CURVE_SERVER", 1);
            p.set_bytes("CURVE_SECRETKEY", &bin(&server_secret));
        },
    );
    // Publish until the subscription has arrived, then check filtering.
    eventually("subscription reaches libzmq", || {
        py.send(&[b"A-probe"]);
        ox_try_recv(&mut ox, 50)
    });
    py.send(&[b"B1"]);
    py.send(&[b"A1"]);
    let got = eventually("A1", || match ox_try_recv(&mut ox, 100) {
        Some(m) if m == vec![b"A-probe".to_vec()] => None,
        other => other,
    });
    assert_eq!(got, vec![b"A1".to_vec()]);
}

fn curve_libzmq_sub_oxmq_pub_server(setup: Setup) {
    let ctx = Context::new();
    let (server_public, server_secret) = security::curve_keypair();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Pub,
        "SUB",
        |s| {
            s.set_int(opt::CURVE_SERVER, 1).unwrap();
            s.set_bytes(opt::CURVE_SECRETKEY, server_secret.as_bytes()).unwrap();
        },
        |p| {
            py_curve_client(p, &server_public);
            p.set_bytes("SUBSCRIBE", b"A");
        },
    );
    let mut got = None;
    for _ in 0..300 {
        ox.send("A-probe", 0).unwrap();
        if let Some(m) = py.recv(20) {
            got = Some(m);
            break;
        }
    }
    assert_eq!(got, Some(vec![b"A-probe".to_vec()]), "subscription never reached oxmq");
    while py.recv(50).is_some() {}
    ox.send("B1", 0).unwrap();
    ox.send("A1", 0).unwrap();
    assert_eq!(py.recv_must(), vec![b"A1".to_vec()]);
}

/// Sends from whichever side connected (a binding PAIR has no pipe before a handshake) and
/// checks nothing arrives on the other.
fn assert_nothing_delivered(setup: Setup, ox: &mut Socket, py: &mut Peer) {
    match setup.binder {
        Binder::Oxmq => {
            py.set_int("SNDTIMEO", 1000);
            if let Err(e) = py.try_send(&[b"must not arrive"]) {
                assert!(e.starts_with("err EAGAIN"), "libzmq's send failed otherwise: {e}");
            }
            assert_eq!(ox_try_recv(ox, 1500), None, "a message crossed a failed CURVE handshake");
        }
        Binder::Libzmq => {
            ox.send("must not arrive", opt::DONTWAIT).unwrap();
            assert_eq!(py.recv(1500), None, "a message crossed a failed CURVE handshake");
        }
    }
}

fn curve_oxmq_client_wrong_server_key(setup: Setup) {
    let ctx = Context::new();
    let (_, server_secret) = libzmq_keypair();
    let (someone_else, _) = libzmq_keypair();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Pair,
        "PAIR",
        |s| ox_curve_client(s, &someone_else),
        |p| {
            p.set_int("CURVE_SERVER", 1);
            p.set_bytes("CURVE_SECRETKEY", &bin(&server_secret));
        },
    );
    assert_nothing_delivered(setup, &mut ox, &mut py);
}

fn curve_libzmq_client_wrong_server_key(setup: Setup) {
    let ctx = Context::new();
    let (_, server_secret) = security::curve_keypair();
    let (someone_else, _) = security::curve_keypair();
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Pair,
        "PAIR",
        |s| {
            s.set_int(opt::CURVE_SERVER, 1).unwrap();
            s.set_bytes(opt::CURVE_SECRETKEY, server_secret.as_bytes()).unwrap();
        },
        |p| py_curve_client(p, &someone_else),
    );
    assert_nothing_delivered(setup, &mut ox, &mut py);
}

// --- oxmq's ZAP handler against libzmq clients ---------------------------------------------------

/// An oxmq ZAP handler: a REP at `inproc://zeromq.zap.01` on its own thread, answering each
/// request with `decide(frames after the delimiter)` and counting requests.
struct OxZap {
    asked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OxZap {
    fn start(ctx: &Context, decide: impl Fn(&[Vec<u8>]) -> Vec<Vec<u8>> + Send + 'static) -> OxZap {
        use std::sync::atomic::Ordering;
        let mut rep = ctx.socket(T::Rep).unwrap();
        rep.set_int(opt::RCVTIMEO, 20).unwrap();
        rep.set_int(opt::LINGER, 0).unwrap();
        rep.bind("inproc://zeromq.zap.01").unwrap();
        let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (a, st) = (asked.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::Acquire) {
                let Ok(req) = rep.recv_multipart(0) else { continue };
                let req: Vec<Vec<u8>> = req.iter().map(|m| m.to_vec()).collect();
                let reply = decide(&req);
                rep.send_multipart(reply.iter().map(|f| &f[..]), 0).unwrap();
                a.fetch_add(1, Ordering::AcqRel);
            }
        });
        OxZap { asked, stop, thread: Some(thread) }
    }

    fn asked(&self) -> usize {
        self.asked.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl Drop for OxZap {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A ZAP reply (after the delimiter): `code`, user id `user`, and an X-Tier property.
fn zap_reply(code: &str, user: &[u8]) -> Vec<Vec<u8>> {
    let mut meta = vec![6u8];
    meta.extend_from_slice(b"X-Tier");
    meta.extend_from_slice(&4u32.to_be_bytes());
    meta.extend_from_slice(b"gold");
    vec![b"1.0".to_vec(), b"1".to_vec(), code.as_bytes().to_vec(), b"text".to_vec(), user.to_vec(), meta]
}

/// PLAIN: admin/password is let in (user id "admin"), anyone else refused with 400.
fn plain_policy(req: &[Vec<u8>]) -> Vec<Vec<u8>> {
    if req.len() == 8 && req[5] == b"PLAIN" && req[6] == b"admin" && req[7] == b"password" {
        zap_reply("200", b"admin")
    } else {
        zap_reply("400", b"")
    }
}

fn plain_libzmq_client_accepted_by_oxmq_zap(setup: Setup) {
    plain_libzmq_client_vs_oxmq_zap(setup, b"password");
}

fn plain_libzmq_client_rejected_by_oxmq_zap(setup: Setup) {
    plain_libzmq_client_vs_oxmq_zap(setup, b"wrong");
}

fn plain_libzmq_client_vs_oxmq_zap(setup: Setup, password: &'static [u8]) {
    let ctx = Context::new();
    let zap = OxZap::start(&ctx, plain_policy);
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Pair,
        "PAIR",
        |s| {
            s.set_int(opt::PLAIN_SERVER, 1).unwrap();
            s.set_bytes(opt::ZAP_DOMAIN, b"interop").unwrap();
        },
        |p| {
            p.set_int("SNDTIMEO", 200);
            p.set_bytes("PLAIN_USERNAME", b"admin");
            p.set_bytes("PLAIN_PASSWORD", password);
        },
    );
    if password == b"password" {
        authenticated_exchange(&mut ox, &mut py, b"admin");
    } else {
        assert_refused(setup, &zap, &mut ox, &mut py);
    }
    assert!(zap.asked() >= 1);
}

/// After oxmq's ZAP handler refused the libzmq client, nothing crosses either way. libzmq's
/// client drops its pipe after a refusal (it does not reconnect), so its send is bounded by
/// SNDTIMEO (200 ms, set before connecting) and may fail.
fn assert_refused(setup: Setup, zap: &OxZap, ox: &mut Socket, py: &mut Peer) {
    eventually("the ZAP handler is asked", || (zap.asked() >= 1).then_some(()));
    match setup.binder {
        Binder::Oxmq => {
            let _ = py.try_send(&[b"must not arrive"]);
            assert_eq!(ox_try_recv(ox, 1500), None, "a message crossed a ZAP refusal");
        }
        Binder::Libzmq => {
            let _ = ox.send("must not arrive", opt::DONTWAIT);
            assert_eq!(py.recv(1500), None, "a message crossed a ZAP refusal");
        }
    }
}

/// After a ZAP handler let the libzmq client in as `user`: messages cross both ways, oxmq
/// sees the User-Id and the handler's metadata, libzmq sees oxmq's READY properties.
fn authenticated_exchange(ox: &mut Socket, py: &mut Peer, user: &[u8]) {
    py.send(&[b"from libzmq"]);
    let m = ox.recv(0).unwrap();
    assert_eq!(m, "from libzmq");
    assert_eq!(m.gets("User-Id"), Some(user));
    assert_eq!(m.gets("X-Tier"), Some(&b"gold"[..]));
    assert_eq!(m.gets("Socket-Type"), Some(&b"PAIR"[..]));
    ox.send("from oxmq", 0).unwrap();
    let socket_type = py.cmd(&format!("recvprop {RCV_MS} Socket-Type"));
    assert_eq!(unhex(&socket_type), b"PAIR");
    exchange(ox, py);
}

fn curve_libzmq_client_accepted_by_oxmq_zap(setup: Setup) {
    curve_libzmq_client_vs_oxmq_zap(setup, true);
}

fn curve_libzmq_client_rejected_by_oxmq_zap(setup: Setup) {
    curve_libzmq_client_vs_oxmq_zap(setup, false);
}

fn curve_libzmq_client_vs_oxmq_zap(setup: Setup, allowed: bool) {
    let ctx = Context::new();
    let (server_public, server_secret) = security::curve_keypair();
    let (client_public, client_secret) = libzmq_keypair();
    // The handler allows one key (or, when refusing, a key nobody has), and names the user by
    // the key's Z85 text, as pyzmq's authenticator does.
    let allowed_key = if allowed { bin(&client_public) } else { bin(&security::curve_keypair().0) };
    let zap = OxZap::start(&ctx, move |req| {
        if req.len() == 7 && req[5] == b"CURVE" && req[6] == allowed_key {
            zap_reply("200", security::z85_encode(&req[6]).unwrap().as_bytes())
        } else {
            zap_reply("400", b"")
        }
    });
    let (mut ox, mut py, _) = link(
        setup,
        &ctx,
        T::Pair,
        "PAIR",
        |s| {
            s.set_int(opt::CURVE_SERVER, 1).unwrap();
            s.set_bytes(opt::CURVE_SECRETKEY, server_secret.as_bytes()).unwrap();
        },
        |p| {
            p.set_int("SNDTIMEO", 200);
            p.set_bytes("CURVE_PUBLICKEY", &bin(&client_public));
            p.set_bytes("CURVE_SECRETKEY", &bin(&client_secret));
            p.set_bytes("CURVE_SERVERKEY", &bin(&server_public));
        },
    );
    if allowed {
        authenticated_exchange(&mut ox, &mut py, client_public.as_bytes());
    } else {
        assert_refused(setup, &zap, &mut ox, &mut py);
    }
}

// --- helpers -----------------------------------------------------------------------------------

#[test]
fn key_helpers_agree_with_libzmq() {
    require_pyzmq!();
    assert_eq!(libzmq_helper(&["has", "curve"]), ["1"]);
    let (lib_public, lib_secret) = libzmq_keypair();
    assert_eq!(security::curve_public(lib_secret.as_bytes()).unwrap(), lib_public);
    let (ox_public, ox_secret) = security::curve_keypair();
    assert_eq!(libzmq_helper(&["public", &ox_secret]), std::slice::from_ref(&ox_public));
    let data: Vec<u8> = (0..=255u8).collect();
    let text = security::z85_encode(&data).unwrap();
    assert_eq!(libzmq_helper(&["z85encode", &hex(&data)]), std::slice::from_ref(&text));
    assert_eq!(unhex(&libzmq_helper(&["z85decode", &text])[0]), data);
}
