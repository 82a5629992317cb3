//! The ZAP handler end to end: RFC 27 requests sent from DEALER and REQ sockets over
//! `inproc://zeromq.zap.01` to an `Authenticator`, and the replies checked frame by frame.
//! Each test has its own context, so each has its own ZAP endpoint.

mod common;

use common::*;
use oxmq::auth::{Authenticator, Certificate, Policy, ZAP_ENDPOINT};
use oxmq::{opt, Context, Error, Socket, SocketType};
use std::path::PathBuf;

/// A fresh empty directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let p = std::env::temp_dir().join(unique("auth"));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A DEALER connected to the handler, as a server's session would be.
fn client(ctx: &Context) -> Socket {
    let mut s = ctx.socket(SocketType::Dealer).unwrap();
    s.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    s.set_int(opt::LINGER, 0).unwrap();
    s.connect(ZAP_ENDPOINT).unwrap();
    s
}

/// Sends one request (delimiter first, as a DEALER must) and returns the reply without the
/// delimiter: [version, request id, status code, status text, user id, metadata].
fn ask(s: &mut Socket, id: &str, domain: &str, address: &str, mechanism: &str, creds: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut frames: Vec<Vec<u8>> =
        vec![vec![], b"1.0".to_vec(), id.into(), domain.into(), address.into(), b"ID".to_vec(), mechanism.into()];
    frames.extend(creds.iter().map(|c| c.to_vec()));
    s.send_multipart(frames, 0).unwrap();
    reply(s)
}

fn reply(s: &mut Socket) -> Vec<Vec<u8>> {
    let r = s.recv_multipart(0).expect("a ZAP reply");
    assert!(r[0].is_empty(), "delimiter first");
    r[1..].iter().map(|m| m.to_vec()).collect()
}

fn status(r: &[Vec<u8>]) -> (String, String, String) {
    assert_eq!(r.len(), 6, "{r:?}");
    assert_eq!(r[0], b"1.0");
    let s = |i: usize| String::from_utf8(r[i].clone()).unwrap();
    (s(2), s(3), s(4))
}

fn ok(user: &str) -> (String, String, String) {
    ("200".into(), "OK".into(), user.into())
}

fn no(text: &str) -> (String, String, String) {
    ("400".into(), text.into(), String::new())
}

#[test]
fn address_lists_follow_pyzmq() {
    let ctx = Context::new();
    let auth = Authenticator::start(&ctx).unwrap();
    let mut c = client(&ctx);
    // No policy: NULL passes, with the request id echoed.
    let r = ask(&mut c, "0001", "global", "127.0.0.1", "NULL", &[]);
    assert_eq!(r[1], b"0001");
    assert_eq!(status(&r), ok("anonymous"));
    auth.deny(["10.0.0.1"]);
    assert_eq!(status(&ask(&mut c, "2", "global", "10.0.0.1", "NULL", &[])), no("Address denied"));
    assert_eq!(status(&ask(&mut c, "3", "global", "127.0.0.1", "NULL", &[])), ok("anonymous"));
    // An allow list overrides the deny list: only its addresses pass.
    auth.allow(["10.0.0.1", "::1"]);
    assert_eq!(status(&ask(&mut c, "4", "global", "10.0.0.1", "NULL", &[])), ok("anonymous"));
    assert_eq!(status(&ask(&mut c, "5", "global", "::1", "NULL", &[])), ok("anonymous"));
    assert_eq!(status(&ask(&mut c, "6", "global", "127.0.0.1", "NULL", &[])), no("Address not allowed"));
    // An allowed address must still authenticate with PLAIN and CURVE.
    assert_eq!(status(&ask(&mut c, "7", "", "10.0.0.1", "PLAIN", &[b"u", b"p"])), no("No passwords defined"));
    assert_eq!(status(&ask(&mut c, "8", "", "10.0.0.1", "CURVE", &[&[7; 32]])), no("Unknown domain"));
    assert_eq!(status(&ask(&mut c, "9", "", "10.0.0.1", "GSSAPI", &[b"x"])), no("Unsupported mechanism"));
    auth.update(|p| {
        p.clear_addresses();
    });
    assert_eq!(status(&ask(&mut c, "10", "global", "10.0.0.1", "NULL", &[])), ok("anonymous"));
}

#[test]
fn subject_lists_judge_null_over_tls() {
    let ctx = Context::new();
    let auth = Authenticator::start(&ctx).unwrap();
    let mut c = client(&ctx);
    let (alice, bob): (&[u8], &[u8]) = (b"O=Example,CN=alice", b"O=Example,CN=bob");
    // A subject becomes the User-Id; none, "anonymous".
    assert_eq!(status(&ask(&mut c, "1", "", "127.0.0.1", "NULL", &[alice])), ok("O=Example,CN=alice"));
    auth.update(|p| {
        p.deny_subjects(["O=Example,CN=bob"]);
    });
    assert_eq!(status(&ask(&mut c, "2", "", "127.0.0.1", "NULL", &[bob])), no("Subject denied"));
    assert_eq!(status(&ask(&mut c, "3", "", "127.0.0.1", "NULL", &[])), ok("anonymous"));
    // An allow list overrides the deny list, and a request without a subject fails it.
    auth.update(|p| {
        p.allow_subjects(["O=Example,CN=bob"]);
    });
    assert_eq!(status(&ask(&mut c, "4", "", "127.0.0.1", "NULL", &[bob])), ok("O=Example,CN=bob"));
    assert_eq!(status(&ask(&mut c, "5", "", "127.0.0.1", "NULL", &[alice])), no("Subject not allowed"));
    assert_eq!(status(&ask(&mut c, "6", "", "127.0.0.1", "NULL", &[])), no("Subject not allowed"));
    assert_eq!(status(&ask(&mut c, "7", "", "127.0.0.1", "NULL", &[alice, bob])), no("Invalid credentials"));
    // The address check still comes first.
    auth.deny(["10.0.0.1"]);
    assert_eq!(status(&ask(&mut c, "8", "", "10.0.0.1", "NULL", &[bob])), no("Address denied"));
    auth.update(|p| {
        p.clear_subjects();
    });
    assert_eq!(status(&ask(&mut c, "9", "", "127.0.0.1", "NULL", &[alice])), ok("O=Example,CN=alice"));
}

#[test]
fn plain_with_password_file_and_reload() {
    let dir = TempDir::new();
    let file = dir.0.join("passwords");
    std::fs::write(&file, "# users\nadmin=Password\nbob=b=2\n").unwrap();
    let ctx = Context::new();
    let auth = Authenticator::start(&ctx).unwrap();
    auth.update(|p| p.plain_file("*", &file).map(drop)).unwrap();
    auth.update(|p| {
        p.plain_passwords("memory", [("carol", "c")]);
    });
    let mut c = client(&ctx);
    assert_eq!(status(&ask(&mut c, "1", "", "127.0.0.1", "PLAIN", &[b"admin", b"Password"])), ok("admin"));
    assert_eq!(status(&ask(&mut c, "2", "*", "127.0.0.1", "PLAIN", &[b"bob", b"b=2"])), ok("bob"));
    assert_eq!(status(&ask(&mut c, "3", "", "127.0.0.1", "PLAIN", &[b"admin", b"Bogus"])), no("Invalid password"));
    assert_eq!(status(&ask(&mut c, "4", "", "127.0.0.1", "PLAIN", &[b"eve", b"Password"])), no("Invalid username"));
    assert_eq!(status(&ask(&mut c, "5", "other", "127.0.0.1", "PLAIN", &[b"admin", b"Password"])), no("Invalid domain"));
    assert_eq!(status(&ask(&mut c, "6", "memory", "127.0.0.1", "PLAIN", &[b"carol", b"c"])), ok("carol"));
    assert_eq!(status(&ask(&mut c, "7", "", "127.0.0.1", "PLAIN", &[b"admin"])), no("Invalid credentials"));
    // The file changes; the handler sees it after reload, not before.
    std::fs::write(&file, "admin=NewPassword\n").unwrap();
    assert_eq!(status(&ask(&mut c, "8", "", "127.0.0.1", "PLAIN", &[b"admin", b"Password"])), ok("admin"));
    auth.reload().unwrap();
    assert_eq!(status(&ask(&mut c, "9", "", "127.0.0.1", "PLAIN", &[b"admin", b"Password"])), no("Invalid password"));
    assert_eq!(status(&ask(&mut c, "10", "", "127.0.0.1", "PLAIN", &[b"admin", b"NewPassword"])), ok("admin"));
    assert_eq!(status(&ask(&mut c, "11", "", "127.0.0.1", "PLAIN", &[b"bob", b"b=2"])), no("Invalid username"));
    // A reload that fails leaves the policy as it was.
    std::fs::remove_file(&file).unwrap();
    assert!(auth.reload().is_err());
    assert_eq!(status(&ask(&mut c, "12", "", "127.0.0.1", "PLAIN", &[b"admin", b"NewPassword"])), ok("admin"));
}

#[test]
fn curve_certificate_directory_and_reload() {
    let dir = TempDir::new();
    let mut alice = Certificate::generate();
    alice.set_meta("name", "alice").unwrap();
    alice.set_meta("Group", "admins").unwrap();
    alice.save(&dir.0, "alice").unwrap();
    let bob = Certificate::generate();
    let ctx = Context::new();
    let mut policy = Policy::new();
    policy.curve_directory("*", &dir.0).unwrap();
    let auth = Authenticator::with_policy(&ctx, policy).unwrap();
    let mut c = client(&ctx);

    let r = ask(&mut c, "1", "", "127.0.0.1", "CURVE", &[alice.public_key()]);
    assert_eq!(status(&r), ok(&alice.public_z85()));
    let meta = zmtp::Metadata::parse(&r[5]).unwrap();
    assert_eq!(meta.get("name"), Some(&b"alice"[..]));
    assert_eq!(meta.get("Group"), Some(&b"admins"[..]));
    assert_eq!(status(&ask(&mut c, "2", "", "127.0.0.1", "CURVE", &[bob.public_key()])), no("Unknown key"));
    assert_eq!(status(&ask(&mut c, "3", "", "127.0.0.1", "CURVE", &[&[1; 31]])), no("Invalid credentials"));
    assert_eq!(status(&ask(&mut c, "4", "elsewhere", "127.0.0.1", "CURVE", &[bob.public_key()])), no("Unknown domain"));

    // Add bob's public certificate, remove alice's: effective after reload.
    bob.save(&dir.0, "bob").unwrap();
    std::fs::remove_file(dir.0.join("alice.key")).unwrap();
    assert_eq!(status(&ask(&mut c, "5", "", "127.0.0.1", "CURVE", &[bob.public_key()])), no("Unknown key"));
    auth.reload().unwrap();
    let r = ask(&mut c, "6", "", "127.0.0.1", "CURVE", &[bob.public_key()]);
    assert_eq!(status(&r), ok(&bob.public_z85()));
    assert!(r[5].is_empty(), "bob's certificate has no metadata");
    assert_eq!(status(&ask(&mut c, "7", "", "127.0.0.1", "CURVE", &[alice.public_key()])), no("Unknown key"));

    // A broken certificate fails the reload and keeps the old key set.
    std::fs::write(dir.0.join("broken.key"), "curve\n    public-key = \"nope\"\n").unwrap();
    assert!(auth.reload().is_err());
    assert_eq!(status(&ask(&mut c, "8", "", "127.0.0.1", "CURVE", &[bob.public_key()])), ok(&bob.public_z85()));

    // A callback decides for another domain.
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let bob_key = *bob.public_key();
    let log = asked.clone();
    auth.update(|p| {
        p.curve_callback("db", move |domain, key| {
            log.lock().unwrap().push(domain.to_string());
            *key == bob_key
        });
    });
    assert_eq!(status(&ask(&mut c, "10", "db", "127.0.0.1", "CURVE", &[bob.public_key()])), ok(&bob.public_z85()));
    assert_eq!(status(&ask(&mut c, "11", "db", "127.0.0.1", "CURVE", &[alice.public_key()])), no("Unknown key"));
    assert_eq!(*asked.lock().unwrap(), ["db", "db"]);

    // Allow any, for one domain.
    auth.update(|p| p.curve_directory("open", oxmq::auth::CURVE_ALLOW_ANY).map(drop)).unwrap();
    assert_eq!(status(&ask(&mut c, "9", "open", "127.0.0.1", "CURVE", &[alice.public_key()])), ok(&alice.public_z85()));
}

#[test]
fn malformed_requests() {
    let ctx = Context::new();
    let _auth = Authenticator::start(&ctx).unwrap();
    let mut c = client(&ctx);
    // No delimiter, and a delimiter with only a version: nothing to echo, so dropped. The
    // next reply must be the one for the valid request that follows.
    c.send_multipart([&b"1.0"[..], b"x", b"dom", b"127.0.0.1", b"id", b"NULL"], 0).unwrap();
    c.send_multipart([&b""[..], b"1.0"], 0).unwrap();
    c.send_multipart([&b""[..]], 0).unwrap();
    let r = ask(&mut c, "after", "", "127.0.0.1", "NULL", &[]);
    assert_eq!(r[1], b"after");
    // With a request id but too few frames, or a wrong version: answered 400.
    c.send_multipart([&b""[..], b"1.0", b"short", b"dom"], 0).unwrap();
    let r = reply(&mut c);
    assert_eq!(r[1], b"short");
    assert_eq!(status(&r), no("Not enough frames"));
    c.send_multipart([&b""[..], b"2.0", b"v2", b"", b"127.0.0.1", b"", b"NULL"], 0).unwrap();
    let r = reply(&mut c);
    assert_eq!(r[1], b"v2");
    assert_eq!(status(&r), no("Invalid version"));
    assert_eq!(status(&ask(&mut c, "m", "", "127.0.0.1", "", &[])), no("Unsupported mechanism"));
    // Binary request ids are echoed unchanged.
    c.send_multipart([&b""[..], b"1.0", &[0, 255, 0], b"", b"127.0.0.1", b"", b"NULL"], 0).unwrap();
    assert_eq!(reply(&mut c)[1], vec![0, 255, 0]);
}

#[test]
fn req_client_and_several_servers() {
    let ctx = Context::new();
    let _auth = Authenticator::start(&ctx).unwrap();
    // A REQ adds and strips the delimiter itself (RFC 27: a REQ server sends none).
    let mut req = ctx.socket(SocketType::Req).unwrap();
    req.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    req.connect(ZAP_ENDPOINT).unwrap();
    let mut dealers: Vec<Socket> = (0..3).map(|_| client(&ctx)).collect();
    for (i, d) in dealers.iter_mut().enumerate() {
        let frames: Vec<Vec<u8>> =
            vec![vec![], b"1.0".to_vec(), format!("d{i}").into(), vec![], b"127.0.0.1".to_vec(), vec![], b"NULL".to_vec()];
        d.send_multipart(frames, 0).unwrap();
    }
    req.send_multipart([&b"1.0"[..], b"req", b"", b"127.0.0.1", b"", b"NULL"], 0).unwrap();
    let r: Vec<Vec<u8>> = req.recv_multipart(0).unwrap().iter().map(|m| m.to_vec()).collect();
    assert_eq!(r[1], b"req");
    assert_eq!(status(&r), ok("anonymous"));
    // Each dealer gets its own reply back.
    for (i, d) in dealers.iter_mut().enumerate() {
        assert_eq!(reply(d)[1], format!("d{i}").into_bytes());
    }
}

#[test]
fn one_handler_per_context_and_restart() {
    let ctx = Context::new();
    let auth = Authenticator::start(&ctx).unwrap();
    assert!(auth.is_running());
    assert!(matches!(Authenticator::start(&ctx), Err(Error::AddrInUse)));
    // Another context has its own endpoint.
    let other = Context::new();
    let _elsewhere = Authenticator::start(&other).unwrap();
    auth.stop();
    assert!(!auth.is_running());
    auth.stop(); // idempotent
    drop(auth);
    let again = Authenticator::start(&ctx).unwrap();
    let mut c = client(&ctx);
    assert_eq!(status(&ask(&mut c, "1", "", "127.0.0.1", "NULL", &[])), ok("anonymous"));
    drop(again);
}

#[test]
fn reconfigured_while_serving() {
    // One thread keeps flipping the password while requests flow; every reply must be one
    // of the two consistent answers, and the last one must follow the last setting.
    let ctx = Context::new();
    let auth = std::sync::Arc::new(Authenticator::start(&ctx).unwrap());
    let flipper = {
        let auth = auth.clone();
        std::thread::spawn(move || {
            for i in 0..200 {
                let pw = if i % 2 == 0 { "even" } else { "odd" };
                auth.update(|p| {
                    p.plain_passwords("*", [("u", pw)]);
                });
            }
        })
    };
    let mut c = client(&ctx);
    for i in 0..200 {
        let r = ask(&mut c, &i.to_string(), "", "127.0.0.1", "PLAIN", &[b"u", b"odd"]);
        let s = status(&r);
        assert!(s == ok("u") || s == no("Invalid password") || s == no("No passwords defined"), "{s:?}");
    }
    flipper.join().unwrap();
    assert_eq!(status(&ask(&mut c, "last", "", "127.0.0.1", "PLAIN", &[b"u", b"odd"])), ok("u"));
}

#[test]
fn context_term_ends_the_handler() {
    let ctx = Context::new();
    let auth = Authenticator::start(&ctx).unwrap();
    let t = {
        let ctx = ctx.clone();
        std::thread::spawn(move || ctx.term())
    };
    let deadline = std::time::Instant::now() + DEADLINE;
    while auth.is_running() {
        assert!(std::time::Instant::now() < deadline, "handler still running after term");
        std::thread::yield_now();
    }
    t.join().unwrap().unwrap();
    drop(auth);
}
