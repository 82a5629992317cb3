//! tls:// and wss:// end to end over loopback, with certificates made at test time (rcgen):
//! server authentication, mutual TLS, the peer's subject as a message property, and the
//! refusals (untrusted, expired, wrong host name, missing client certificate, bad PEM).

mod common;

use common::*;
use oxmq::monitor::event as ev;
use oxmq::{opt, Context, Error, MonitorEvent, Socket, SocketType as T};
use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use std::io::Read;
use std::time::Duration;

/// A CA and what it signs, as PEM text.
struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

struct Leaf {
    cert: String,
    key: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        Ca { cert: p.self_signed(&key).unwrap(), key }
    }

    fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A certificate for `names` (DNS names or IP addresses) with common name `cn`.
    fn leaf(&self, cn: &str, names: &[&str], client: bool, expired: bool) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        p.distinguished_name.push(DnType::OrganizationName, "oxmq tests");
        p.extended_key_usages =
            vec![if client { ExtendedKeyUsagePurpose::ClientAuth } else { ExtendedKeyUsagePurpose::ServerAuth }];
        if expired {
            p.not_before = rcgen::date_time_ymd(2001, 1, 1);
            p.not_after = rcgen::date_time_ymd(2002, 1, 1);
        }
        let cert = p.signed_by(&key, &self.cert, &self.key).unwrap();
        Leaf { cert: cert.pem(), key: key.serialize_pem() }
    }
}

fn set_identity(s: &mut Socket, leaf: &Leaf) {
    s.set_bytes(opt::WSS_CERT_PEM, leaf.cert.as_bytes()).unwrap();
    s.set_bytes(opt::WSS_KEY_PEM, leaf.key.as_bytes()).unwrap();
}

fn server(ctx: &Context, kind: T, ca: &Ca, endpoint: &str) -> (Socket, String) {
    let mut s = socket(ctx, kind);
    set_identity(&mut s, &ca.leaf("server", &["localhost", "127.0.0.1"], false, false));
    s.bind(endpoint).unwrap();
    let ep = s.last_endpoint().unwrap();
    (s, ep)
}

fn client(ctx: &Context, kind: T, trust: &Ca) -> Socket {
    let mut s = socket(ctx, kind);
    s.set_bytes(opt::WSS_TRUST_PEM, trust.pem().as_bytes()).unwrap();
    s
}

/// Starts monitoring `s`; the reader socket.
fn watch(ctx: &Context, s: &mut Socket) -> Socket {
    let ep = format!("inproc://{}", unique("mon"));
    s.monitor(Some(&ep), ev::ALL).unwrap();
    let mut r = ctx.socket(T::Pair).unwrap();
    r.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    r.connect(&ep).unwrap();
    r
}

/// The first handshake outcome the monitor reports.
fn handshake_outcome(r: &mut Socket) -> MonitorEvent {
    loop {
        let e = MonitorEvent::recv(r, 1, 0).expect("a handshake event");
        if matches!(
            e.event,
            ev::HANDSHAKE_SUCCEEDED | ev::HANDSHAKE_FAILED_AUTH | ev::HANDSHAKE_FAILED_PROTOCOL | ev::HANDSHAKE_FAILED_NO_DETAIL
        ) {
            return e;
        }
    }
}

#[test]
fn tls_carries_zmtp_and_names_the_servers_subject() {
    let ctx = Context::new();
    let ca = Ca::new("Test CA");
    let (mut rep, ep) = server(&ctx, T::Rep, &ca, "tls://127.0.0.1:*");
    assert!(ep.starts_with("tls://127.0.0.1:"), "{ep}");
    let mut req = client(&ctx, T::Req, &ca);
    req.connect(&ep).unwrap();
    for i in 0..20 {
        req.send(format!("q{i}").as_bytes(), 0).unwrap();
        let m = rep.recv(0).unwrap();
        assert_eq!(m, format!("q{i}").as_bytes());
        assert_eq!(m.gets("TLS-Peer-Subject"), None, "no client certificate");
        rep.send("a", 0).unwrap();
        let m = req.recv(0).unwrap();
        assert_eq!(m.gets("TLS-Peer-Subject"), Some(&b"O=oxmq tests,CN=server"[..]));
        assert_eq!(m.gets("ZMTP-Version"), Some(&b"3.1"[..]));
    }
    // Large messages cross TLS records.
    let big = vec![0x5Au8; 1 << 20];
    req.send(&big[..], 0).unwrap();
    assert_eq!(recv_bytes(&mut rep), big);
}

#[test]
fn mutual_tls_requires_and_names_the_client() {
    let ctx = Context::new();
    let ca = Ca::new("Test CA");
    let mut pull = socket(&ctx, T::Pull);
    set_identity(&mut pull, &ca.leaf("server", &["localhost"], false, false));
    pull.set_bytes(opt::WSS_TRUST_PEM, ca.pem().as_bytes()).unwrap();
    let mut mon = watch(&ctx, &mut pull);
    pull.bind("tls://127.0.0.1:*").unwrap();
    let ep = pull.last_endpoint().unwrap().replace("127.0.0.1", "localhost");
    // Without a certificate: refused by the server.
    let mut anon = client(&ctx, T::Push, &ca);
    anon.connect(&ep).unwrap();
    // EAGAIN once the refused session has ended its pipe: either way nothing may arrive.
    let _ = anon.send("never", opt::DONTWAIT);
    let e = handshake_outcome(&mut mon);
    assert_eq!((e.event, e.value), (ev::HANDSHAKE_FAILED_AUTH, 400), "{e:?}");
    assert_quiet(&mut pull);
    // With one: accepted, and its subject is on every message.
    let mut known = client(&ctx, T::Push, &ca);
    set_identity(&mut known, &ca.leaf("client-7", &[], true, false));
    known.connect(&ep).unwrap();
    known.send("hello", 0).unwrap();
    let m = pull.recv(0).unwrap();
    assert_eq!(m, &b"hello"[..]);
    assert_eq!(m.gets("TLS-Peer-Subject"), Some(&b"O=oxmq tests,CN=client-7"[..]));
    assert_eq!(pull.stats().protocol_errors, 1, "the refused client is counted");
}

/// A client that does not accept the server's certificate: refused, counted, the client never
/// retries, and the server and its other clients go on.
fn refused(configure: impl Fn(&mut Socket), server_leaf: impl Fn(&Ca) -> Leaf) {
    let ctx = Context::new();
    let ca = Ca::new("Test CA");
    let mut pull = socket(&ctx, T::Pull);
    set_identity(&mut pull, &server_leaf(&ca));
    pull.bind("tls://127.0.0.1:*").unwrap();
    let ep = pull.last_endpoint().unwrap();
    let mut bad = client(&ctx, T::Push, &ca);
    configure(&mut bad);
    let mut mon = watch(&ctx, &mut bad);
    bad.connect(&ep).unwrap();
    send_refused(&mut bad, "never");
    let e = handshake_outcome(&mut mon);
    assert_eq!((e.event, e.value), (ev::HANDSHAKE_FAILED_AUTH, 400), "{e:?}");
    assert_eq!(bad.stats().protocol_errors, 1);
    assert_quiet(&mut pull);
    // The process's other TLS sockets go on.
    let mut other = socket(&ctx, T::Pull);
    set_identity(&mut other, &ca.leaf("server", &["127.0.0.1"], false, false));
    other.bind("tls://127.0.0.1:*").unwrap();
    let mut good = client(&ctx, T::Push, &ca);
    good.connect(&other.last_endpoint().unwrap()).unwrap();
    good.send("fine", 0).unwrap();
    assert_eq!(recv_bytes(&mut other), b"fine");
}

#[test]
fn an_untrusted_server_is_refused() {
    let stranger = Ca::new("Stranger CA");
    let leaf = stranger.leaf("server", &["127.0.0.1"], false, false);
    refused(|_| {}, move |_| Leaf { cert: leaf.cert.clone(), key: leaf.key.clone() });
}

#[test]
fn an_expired_server_certificate_is_refused() {
    refused(|_| {}, |ca| ca.leaf("server", &["127.0.0.1"], false, true));
}

#[test]
fn the_wrong_host_name_is_refused() {
    refused(|s| s.set_bytes(opt::WSS_HOSTNAME, b"other.example").unwrap(), |ca| ca.leaf("server", &["localhost"], false, false));
}

#[test]
fn bad_options_are_einval_where_they_are_given() {
    let ctx = Context::new();
    let mut s = socket(&ctx, T::Push);
    assert_eq!(s.set_bytes(opt::WSS_KEY_PEM, b"not a key"), Err(Error::Invalid));
    assert_eq!(
        s.set_bytes(opt::WSS_CERT_PEM, b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
        Err(Error::Invalid)
    );
    assert_eq!(s.set_bytes(opt::WSS_TRUST_PEM, b""), Ok(()), "empty clears");
    assert_eq!(s.set_int(opt::WSS_TRUST_SYSTEM, 2), Err(Error::Invalid));
    // A server without a certificate, a client that trusts nothing: EINVAL at bind/connect.
    assert_eq!(s.bind("tls://127.0.0.1:*"), Err(Error::Invalid));
    assert_eq!(s.connect("tls://127.0.0.1:5555"), Err(Error::Invalid));
    assert_eq!(s.connect("wss://127.0.0.1:5555/x"), Err(Error::Invalid));
    // A certificate whose key is another's.
    let ca = Ca::new("Test CA");
    let (a, b) = (ca.leaf("a", &["localhost"], false, false), ca.leaf("b", &["localhost"], false, false));
    s.set_bytes(opt::WSS_CERT_PEM, a.cert.as_bytes()).unwrap();
    s.set_bytes(opt::WSS_KEY_PEM, b.key.as_bytes()).unwrap();
    assert_eq!(s.bind("tls://127.0.0.1:*"), Err(Error::Invalid));
}

/// A tls client's first bytes are a TLS ClientHello: nothing of ZMTP (whose greeting opens
/// with 0xFF) goes out before the server's certificate is verified.
#[test]
fn a_client_sends_nothing_of_zmtp_before_the_handshake() {
    let ctx = Context::new();
    let ca = Ca::new("Test CA");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut push = client(&ctx, T::Push, &ca);
    push.connect(&format!("tls://127.0.0.1:{port}")).unwrap();
    push.send("secret", opt::DONTWAIT).unwrap();
    let (mut c, _) = listener.accept().unwrap();
    c.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = c.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got.first(), Some(&0x16), "a TLS handshake record");
    assert!(!got.windows(6).any(|w| w == b"secret"), "no application data");
    // The greeting as oxmq writes it (signature, padding 0..01, 0x7F, major version 3): a
    // ClientHello's random bytes hold a bare 0xFF .. 0x7F pair at some offset now and then,
    // these 11 bytes practically never.
    let greeting = [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3];
    assert!(!got.windows(greeting.len()).any(|w| w == greeting), "no ZMTP greeting");
}

#[test]
fn wss_carries_zws_over_tls() {
    let ctx = Context::new();
    let ca = Ca::new("Test CA");
    let (mut pull, ep) = server(&ctx, T::Pull, &ca, "wss://127.0.0.1:*/secure");
    assert!(ep.starts_with("wss://127.0.0.1:") && ep.ends_with("/secure"), "{ep}");
    let mut push = client(&ctx, T::Push, &ca);
    push.connect(&ep.replace("127.0.0.1", "localhost")).unwrap();
    for i in 0..50 {
        push.send(format!("m{i}").as_bytes(), 0).unwrap();
    }
    for i in 0..50 {
        let m = pull.recv(0).unwrap();
        assert_eq!(m, format!("m{i}").as_bytes());
    }
    let big = vec![7u8; 300_000];
    push.send(&big[..], 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), big);
    // PUB/SUB over wss.
    let (mut publ, ep) = server(&ctx, T::Pub, &ca, "wss://127.0.0.1:*/feed");
    let mut sub = client(&ctx, T::Sub, &ca);
    sub.set_bytes(opt::SUBSCRIBE, b"t").unwrap();
    sub.connect(&ep).unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"t-probe");
    publ.send("t-real", 0).unwrap();
    let m = recv_skipping(&mut sub, b"t-probe");
    assert_eq!(m, b"t-real");
}

/// Mutual TLS with a ZAP domain: two clients with certificates from the same CA, one of
/// which the ZAP handler `handler` (started on `ctx`) refuses by subject. The refused one is
/// HANDSHAKE_FAILED_AUTH 400 at the server and delivers nothing; the other's messages carry
/// its subject as TLS-Peer-Subject and the handler's User-Id.
fn zap_by_subject(ctx: &Context, expect_user: &str) {
    let ca = Ca::new("Test CA");
    let mut pull = socket(ctx, T::Pull);
    set_identity(&mut pull, &ca.leaf("server", &["localhost"], false, false));
    pull.set_bytes(opt::WSS_TRUST_PEM, ca.pem().as_bytes()).unwrap();
    pull.set_bytes(opt::ZAP_DOMAIN, b"global").unwrap();
    let mut mon = watch(ctx, &mut pull);
    pull.bind("tls://127.0.0.1:*").unwrap();
    let ep = pull.last_endpoint().unwrap().replace("127.0.0.1", "localhost");
    let mut denied = client(ctx, T::Push, &ca);
    set_identity(&mut denied, &ca.leaf("mallory", &[], true, false));
    denied.connect(&ep).unwrap();
    // EAGAIN once the refused session has ended its pipe: either way nothing may arrive.
    let _ = denied.send("never", opt::DONTWAIT);
    let e = handshake_outcome(&mut mon);
    assert_eq!((e.event, e.value), (ev::HANDSHAKE_FAILED_AUTH, 400), "{e:?}");
    assert_quiet(&mut pull);
    let mut allowed = client(ctx, T::Push, &ca);
    set_identity(&mut allowed, &ca.leaf("client-7", &[], true, false));
    allowed.connect(&ep).unwrap();
    allowed.send("hello", 0).unwrap();
    let m = pull.recv(0).unwrap();
    assert_eq!(m, &b"hello"[..]);
    assert_eq!(m.gets("TLS-Peer-Subject"), Some(&b"O=oxmq tests,CN=client-7"[..]));
    assert_eq!(m.gets("User-Id"), Some(expect_user.as_bytes()));
}

#[test]
fn the_authenticator_allows_and_denies_by_certificate_subject() {
    let ctx = Context::new();
    let mut policy = oxmq::auth::Policy::new();
    policy.deny_subjects(["O=oxmq tests,CN=mallory"]);
    let _auth = oxmq::auth::Authenticator::with_policy(&ctx, policy).unwrap();
    zap_by_subject(&ctx, "O=oxmq tests,CN=client-7");
}

#[test]
fn a_raw_zap_handler_sees_the_certificate_subject_as_null_credentials() {
    let ctx = Context::new();
    let mut rep = socket(&ctx, T::Rep);
    rep.bind(oxmq::auth::ZAP_ENDPOINT).unwrap();
    // Two requests: the refused client does not come back, the accepted one asks once.
    let handler = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for _ in 0..2 {
            let req = recv_parts(&mut rep);
            let (mechanism, credentials) = (req[5].clone(), req[6..].to_vec());
            let ok = credentials.first().is_some_and(|s| s.as_slice() == b"O=oxmq tests,CN=client-7");
            let code: &[u8] = if ok { b"200" } else { b"400" };
            send_parts(&mut rep, &[b"1.0", &req[1], code, b"by subject", if ok { b"client-7" } else { b"" }, b""]);
            seen.push((mechanism, credentials));
        }
        seen
    });
    zap_by_subject(&ctx, "client-7");
    let seen = handler.join().unwrap();
    assert_eq!(
        seen,
        [
            (b"NULL".to_vec(), vec![b"O=oxmq tests,CN=mallory".to_vec()]),
            (b"NULL".to_vec(), vec![b"O=oxmq tests,CN=client-7".to_vec()])
        ]
    );
}

/// A sender that closes right after its last send, over wss (ws over TLS, both holding output
/// of their own): every message arrives. A close used to shut the tcp write side while the
/// layers still held bytes, which were then lost (the web benchmark's wss runs hung about one
/// in thirty under load waiting for them).
#[test]
fn wss_delivers_everything_a_closing_sender_wrote() {
    let ctx = Context::new();
    let ca = Ca::new("Test CA");
    let (mut pull, ep) = server(&ctx, T::Pull, &ca, "wss://127.0.0.1:*/feed");
    let n = 200_000u32;
    let sender = {
        let mut push = client(&ctx, T::Push, &ca);
        push.set_bytes(opt::WSS_HOSTNAME, b"localhost").unwrap();
        push.set_int(opt::LINGER, -1).unwrap();
        push.connect(&ep).unwrap();
        std::thread::spawn(move || {
            let mut body = [0u8; 256];
            for i in 0..n {
                body[..4].copy_from_slice(&i.to_le_bytes());
                push.send(&body[..], 0).unwrap();
            }
            drop(push); // closes with everything still in the layers' buffers
        })
    };
    for i in 0..n {
        let m = pull.recv(0).unwrap_or_else(|e| panic!("message {i}: {e:?}"));
        assert_eq!(m[..4], i.to_le_bytes());
    }
    sender.join().unwrap();
}

/// WSS_TRUST_SYSTEM takes the system's trust store (rustls-native-certs: the platform's, or the
/// file SSL_CERT_FILE names). The environment is the whole process's, so the client runs in a
/// child process of this test binary (this same test, told so by OXMQ_TLS_SYSTEM_ENDPOINT) with
/// SSL_CERT_FILE naming a file of one CA: the server's, then another.
#[test]
fn trust_system_verifies_against_the_systems_store() {
    if let Ok(ep) = std::env::var("OXMQ_TLS_SYSTEM_ENDPOINT") {
        return trust_system_client(&ep);
    }
    let ctx = Context::new();
    let ca = Ca::new("System CA");
    let (mut pull, ep) = server(&ctx, T::Pull, &ca, "tls://127.0.0.1:*");
    let dir = std::env::temp_dir().join(unique("oxmq-system-store"));
    std::fs::create_dir_all(&dir).unwrap();
    let child = |store: &str, expect: &str| {
        let file = dir.join(format!("{expect}.pem"));
        std::fs::write(&file, store).unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "trust_system_verifies_against_the_systems_store", "--nocapture", "--test-threads=1"])
            .env("OXMQ_TLS_SYSTEM_ENDPOINT", &ep)
            .env("OXMQ_TLS_SYSTEM_EXPECT", expect)
            .env("SSL_CERT_FILE", &file)
            .env_remove("SSL_CERT_DIR")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{expect}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    child(&ca.pem(), "trusted");
    assert_eq!(recv_bytes(&mut pull), b"through the system's store");
    child(&Ca::new("Another CA").pem(), "refused");
    assert_quiet(&mut pull);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child's half: a client with WSS_TRUST_SYSTEM and no WSS_TRUST_PEM.
fn trust_system_client(ep: &str) {
    let ctx = Context::new();
    let mut push = socket(&ctx, T::Push);
    let mut no_anchor = socket(&ctx, T::Push);
    assert_eq!(no_anchor.connect(ep).unwrap_err(), Error::Invalid, "without TRUST_SYSTEM no anchor is set");
    push.set_int(opt::WSS_TRUST_SYSTEM, 1).unwrap();
    let mut mon = watch(&ctx, &mut push);
    push.connect(ep).unwrap();
    let e = handshake_outcome(&mut mon);
    match std::env::var("OXMQ_TLS_SYSTEM_EXPECT").unwrap().as_str() {
        "trusted" => {
            assert_eq!(e.event, ev::HANDSHAKE_SUCCEEDED, "{e:?}");
            push.send("through the system's store", 0).unwrap();
        }
        _ => assert_eq!((e.event, e.value), (ev::HANDSHAKE_FAILED_AUTH, 400), "{e:?}"),
    }
    push.set_int(opt::LINGER, 5000).unwrap();
}
