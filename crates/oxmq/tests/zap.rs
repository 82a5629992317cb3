//! ZAP (RFC 27) end to end over real transports: an oxmq handler bound at
//! `inproc://zeromq.zap.01` decides, the server's handshake waits for it, and the verdict's
//! user id and metadata arrive on every message of the connection (`Msg::gets`).
//!
//! A client refused with ERROR (400/500) stops, as libzmq's does; one dropped silently (300,
//! or no handler) reconnects and is asked again.

mod common;

use common::*;
use oxmq::{opt, Context, Socket, SocketType};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

const ZAP: &str = "inproc://zeromq.zap.01";

type Frames = Vec<Vec<u8>>;

/// A ZAP handler thread: records each request and answers with `decide(request)`.
struct Handler {
    requests: Arc<Mutex<Vec<Frames>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Handler {
    /// Binds a REP (or ROUTER) handler; `decide` gets the request frames after the delimiter
    /// and returns the reply frames after the delimiter.
    fn start(ctx: &Context, kind: SocketType, decide: impl Fn(&Frames) -> Frames + Send + 'static) -> Handler {
        let mut s = ctx.socket(kind).unwrap();
        s.set_int(opt::RCVTIMEO, 20).unwrap();
        s.set_int(opt::LINGER, 0).unwrap();
        s.bind(ZAP).unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, st) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::Acquire) {
                let Ok(parts) = s.recv_multipart(0) else { continue };
                let mut parts: Frames = parts.iter().map(|m| m.to_vec()).collect();
                // ROUTER: [peer, "", request...]; REP strips the envelope itself.
                let envelope: Frames = if kind == SocketType::Router { parts.drain(..2).collect() } else { vec![] };
                let reply = decide(&parts);
                r.lock().unwrap().push(parts);
                let all: Vec<&[u8]> = envelope.iter().chain(reply.iter()).map(|f| &f[..]).collect();
                s.send_multipart(all, 0).unwrap();
            }
        });
        Handler { requests, stop, thread: Some(thread) }
    }

    fn asked(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    fn first(&self) -> Frames {
        self.requests.lock().unwrap()[0].clone()
    }

    /// Waits until the handler has been asked `n` times.
    fn wait_asked(&self, n: usize) {
        eventually("ZAP requests", || (self.asked() >= n).then_some(()));
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A reply (after the delimiter) with `code`, user id "user:<first credential>" and an
/// X-Role property.
fn reply(code: &str, user: &[u8]) -> Frames {
    let mut meta = Vec::new();
    meta.push(6);
    meta.extend_from_slice(b"X-Role");
    meta.extend_from_slice(&5u32.to_be_bytes());
    meta.extend_from_slice(b"admin");
    vec![b"1.0".to_vec(), b"1".to_vec(), code.as_bytes().to_vec(), b"text".to_vec(), user.to_vec(), meta]
}

/// PLAIN: 200 for password "secret", else the password is the status code to answer.
fn plain_policy(req: &Frames) -> Frames {
    let (user, pass) = (&req[6], &req[7]);
    if pass == b"secret" {
        reply("200", user)
    } else {
        reply(std::str::from_utf8(pass).unwrap(), b"")
    }
}

fn plain_server(ctx: &Context, t: Transport) -> (Socket, String) {
    let mut server = socket(ctx, SocketType::Router);
    server.set_int(opt::PLAIN_SERVER, 1).unwrap();
    server.set_bytes(opt::ZAP_DOMAIN, b"test-domain").unwrap();
    server.set_bytes(opt::ROUTING_ID, b"srv").unwrap();
    let ep = bind(&mut server, t);
    (server, ep)
}

fn plain_client(ctx: &Context, ep: &str, password: &[u8]) -> Socket {
    let mut c = socket(ctx, SocketType::Dealer);
    c.set_bytes(opt::ROUTING_ID, b"cli").unwrap();
    c.set_bytes(opt::PLAIN_USERNAME, b"alice").unwrap();
    c.set_bytes(opt::PLAIN_PASSWORD, password).unwrap();
    c.connect(ep).unwrap();
    c
}

#[test]
fn plain_accepted_request_fields_and_metadata() {
    let ctx = Context::new();
    let h = Handler::start(&ctx, SocketType::Rep, plain_policy);
    let (mut server, ep) = plain_server(&ctx, Transport::Tcp);
    let mut client = plain_client(&ctx, &ep, b"secret");
    client.send("hello", 0).unwrap();
    let parts = server.recv_multipart(0).unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0], "cli");
    let body = &parts[1];
    assert_eq!(*body, "hello");
    assert_eq!(body.gets("User-Id"), Some(&b"alice"[..]));
    assert_eq!(body.gets("X-Role"), Some(&b"admin"[..]));
    assert_eq!(body.gets("Socket-Type"), Some(&b"DEALER"[..]));
    assert_eq!(body.gets("Identity"), Some(&b"cli"[..]));
    assert_eq!(body.gets("Peer-Address"), Some(&b"127.0.0.1"[..]));
    assert_eq!(body.gets("No-Such"), None);
    let req = h.first();
    let want: [&[u8]; 8] = [b"1.0", b"1", b"test-domain", b"127.0.0.1", b"srv", b"PLAIN", b"alice", b"secret"];
    assert_eq!(req, want.map(|f| f.to_vec()));
    // Every later message carries the same properties; replies to the client carry the
    // server's (no User-Id: the client asked nobody).
    client.send("again", 0).unwrap();
    let parts = server.recv_multipart(0).unwrap();
    assert_eq!(parts[1].gets("User-Id"), Some(&b"alice"[..]));
    server.send_multipart([&b"cli"[..], b"back"], 0).unwrap();
    let back = client.recv(0).unwrap();
    assert_eq!(back.gets("Socket-Type"), Some(&b"ROUTER"[..]));
    assert_eq!(back.gets("Identity"), Some(&b"srv"[..]));
    assert_eq!(back.gets("User-Id"), None);
    // A message built locally has none.
    assert_eq!(oxmq::Msg::from("x").gets("Socket-Type"), None);
    assert_eq!(h.asked(), 1);
}

#[test]
fn plain_refusals_400_500_300() {
    for code in ["400", "500", "300"] {
        let ctx = Context::new();
        let h = Handler::start(&ctx, SocketType::Rep, plain_policy);
        let (mut server, ep) = plain_server(&ctx, Transport::Tcp);
        let mut client = plain_client(&ctx, &ep, code.as_bytes());
        send_refused(&mut client, "hello");
        if code == "300" {
            // 300 closes without ERROR ("try later"): the client reconnects and is asked again.
            h.wait_asked(2);
            assert_quiet(&mut server);
        } else {
            // 400/500 send ERROR: the client's session ends for good, as libzmq's does after a
            // handshake protocol error, so it is never asked again (it would reconnect within
            // RECONNECT_IVL, 100 ms, well inside the quiet period otherwise).
            h.wait_asked(1);
            assert_quiet(&mut server);
            assert_eq!(h.asked(), 1, "a refused client does not retry");
        }
    }
}

#[test]
fn plain_without_handler_refuses_until_one_is_bound() {
    let ctx = Context::new();
    let (mut server, ep) = plain_server(&ctx, Transport::Ipc);
    let mut client = plain_client(&ctx, &ep, b"secret");
    client.send("hello", 0).unwrap();
    assert_quiet(&mut server);
    // The client keeps reconnecting; once a handler exists it is let in.
    let h = Handler::start(&ctx, SocketType::Rep, plain_policy);
    let parts = server.recv_multipart(0).unwrap();
    assert_eq!(parts[1], "hello");
    assert_eq!(parts[1].gets("User-Id"), Some(&b"alice"[..]));
    // ipc has no peer IP: no Peer-Address.
    assert_eq!(parts[1].gets("Peer-Address"), None);
    assert!(h.asked() >= 1);
}

#[test]
fn router_handler_and_malformed_reply_then_recovery() {
    let ctx = Context::new();
    let bad = Arc::new(AtomicBool::new(true));
    let b2 = bad.clone();
    let h = Handler::start(&ctx, SocketType::Router, move |req| {
        if b2.swap(false, Ordering::AcqRel) {
            vec![b"9.9".to_vec(), b"1".to_vec(), b"200".to_vec(), vec![], vec![], vec![]]
        } else {
            plain_policy(req)
        }
    });
    let (mut server, ep) = plain_server(&ctx, Transport::Tcp);
    let mut client = plain_client(&ctx, &ep, b"secret");
    client.send("hello", 0).unwrap();
    // The malformed reply failed the first handshake only; the retry is accepted.
    let parts = server.recv_multipart(0).unwrap();
    assert_eq!(parts[1], "hello");
    assert_eq!(parts[1].gets("User-Id"), Some(&b"alice"[..]));
    assert!(h.asked() >= 2);
}

fn curve_pair(ctx: &Context, enforce: bool) -> (Socket, Socket, [u8; 32]) {
    let (spub, ssec) = oxmq::security::curve_keypair();
    let (cpub, csec) = oxmq::security::curve_keypair();
    let mut server = socket(ctx, SocketType::Pull);
    server.set_int(opt::CURVE_SERVER, 1).unwrap();
    server.set_bytes(opt::CURVE_SECRETKEY, ssec.as_bytes()).unwrap();
    if enforce {
        server.set_int(opt::ZAP_ENFORCE_DOMAIN, 1).unwrap();
    }
    let ep = bind(&mut server, Transport::Tcp);
    let mut client = socket(ctx, SocketType::Push);
    client.set_bytes(opt::CURVE_SERVERKEY, spub.as_bytes()).unwrap();
    client.set_bytes(opt::CURVE_PUBLICKEY, cpub.as_bytes()).unwrap();
    client.set_bytes(opt::CURVE_SECRETKEY, csec.as_bytes()).unwrap();
    client.connect(&ep).unwrap();
    (server, client, oxmq::security::parse_curve_key(cpub.as_bytes()).unwrap())
}

#[test]
fn curve_asks_with_the_client_key() {
    for code in ["200", "400"] {
        let ctx = Context::new();
        let c = code.to_string();
        let h = Handler::start(&ctx, SocketType::Rep, move |req| reply(&c, &req[6]));
        let (mut server, mut client, key) = curve_pair(&ctx, false);
        if code == "200" {
            client.send("sealed", 0).unwrap();
            let m = server.recv(0).unwrap();
            assert_eq!(m, "sealed");
            assert_eq!(m.gets("User-Id"), Some(&key[..]));
            assert_eq!(m.gets("Socket-Type"), Some(&b"PUSH"[..]));
            let req = h.first();
            assert_eq!((&req[2][..], &req[5][..], &req[6][..]), (&b""[..], &b"CURVE"[..], &key[..]));
        } else {
            // Refused with ERROR: the client stops, as libzmq's does.
            send_refused(&mut client, "sealed");
            h.wait_asked(1);
            assert_quiet(&mut server);
            assert_eq!(h.asked(), 1, "a refused client does not retry");
        }
    }
}

#[test]
fn curve_without_handler_proceeds_unless_enforced() {
    let ctx = Context::new();
    let (mut server, mut client, _) = curve_pair(&ctx, false);
    client.send("open", 0).unwrap();
    let m = server.recv(0).unwrap();
    assert_eq!(m, "open");
    assert_eq!(m.gets("User-Id"), None, "no handler, no user id");
    let (mut server, mut client, _) = curve_pair(&ctx, true);
    send_refused(&mut client, "closed");
    assert_quiet(&mut server);
}

fn null_pair(ctx: &Context, domain: &[u8], enforce: bool) -> (Socket, Socket) {
    let mut server = socket(ctx, SocketType::Pull);
    if !domain.is_empty() {
        server.set_bytes(opt::ZAP_DOMAIN, domain).unwrap();
    }
    if enforce {
        server.set_int(opt::ZAP_ENFORCE_DOMAIN, 1).unwrap();
    }
    let ep = bind(&mut server, Transport::Tcp);
    let mut client = socket(ctx, SocketType::Push);
    client.connect(&ep).unwrap();
    (server, client)
}

#[test]
fn null_asks_only_with_a_domain() {
    let ctx = Context::new();
    let h = Handler::start(
        &ctx,
        SocketType::Rep,
        |req| {
            if req[2] == b"deny" {
                reply("400", b"")
            } else {
                reply("200", b"anonymous")
            }
        },
    );
    // No domain: not asked.
    let (mut server, mut client) = null_pair(&ctx, b"", false);
    client.send("plain", 0).unwrap();
    let m = server.recv(0).unwrap();
    assert_eq!(m.gets("User-Id"), None);
    assert_eq!(h.asked(), 0);
    // A domain: asked with mechanism NULL and no credentials.
    let (mut server, mut client) = null_pair(&ctx, b"allow", false);
    client.send("zapped", 0).unwrap();
    let m = server.recv(0).unwrap();
    assert_eq!(m, "zapped");
    assert_eq!(m.gets("User-Id"), Some(&b"anonymous"[..]));
    assert_eq!(h.first(), [&b"1.0"[..], b"1", b"allow", b"127.0.0.1", b"", b"NULL"].map(|f| f.to_vec()));
    let (mut server, mut client) = null_pair(&ctx, b"deny", false);
    send_refused(&mut client, "refused");
    h.wait_asked(2);
    assert_quiet(&mut server);
    assert_eq!(h.asked(), 2, "the refused client does not retry");
}

#[test]
fn null_domain_without_handler_proceeds_unless_enforced() {
    let ctx = Context::new();
    let (mut server, mut client) = null_pair(&ctx, b"dom", false);
    client.send("in", 0).unwrap();
    assert_eq!(server.recv(0).unwrap(), "in");
    let (mut server, mut client) = null_pair(&ctx, b"dom", true);
    send_refused(&mut client, "out");
    assert_quiet(&mut server);
}

#[test]
fn zap_options_read_back() {
    let ctx = Context::new();
    let mut s = socket(&ctx, SocketType::Rep);
    assert_eq!(s.get_bytes(opt::ZAP_DOMAIN).unwrap(), b"\0");
    s.set_bytes(opt::ZAP_DOMAIN, b"global").unwrap();
    assert_eq!(s.get_bytes(opt::ZAP_DOMAIN).unwrap(), b"global\0");
    assert_eq!(s.get_int(opt::ZAP_ENFORCE_DOMAIN).unwrap(), 0);
    s.set_int(opt::ZAP_ENFORCE_DOMAIN, 1).unwrap();
    assert_eq!(s.get_int(opt::ZAP_ENFORCE_DOMAIN).unwrap(), 1);
    assert_eq!(s.set_bytes(opt::ZAP_DOMAIN, &[b'x'; 256]), Err(oxmq::Error::Invalid));
}
