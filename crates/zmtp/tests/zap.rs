//! ZAP in the handshake, without sockets: where each mechanism pauses, what the request
//! holds, and how each verdict resumes or ends the handshake on both sides.

use bytes::{Bytes, BytesMut};
use zmtp::{
    Config, Connection, CurveClientKeys, CurveKeyPair, CurveServerKeys, Error, HandshakeError, Mechanism, Metadata,
    PlainCredentials, SocketType, ZapConfig, ZapError, ZapReply,
};

fn handler() -> ZapConfig {
    ZapConfig {
        handler: true,
        domain: Bytes::from_static(b"dom"),
        enforce_domain: false,
        peer_address: Bytes::from_static(b"10.1.2.3"),
    }
}

fn config(t: SocketType, m: Mechanism, zap: ZapConfig) -> Config {
    let mut c = Config::new(t);
    c.mechanism = m;
    c.routing_id = Bytes::from_static(b"srv");
    c.zap = zap;
    c
}

thread_local! {
    /// Input the server left unconsumed while paused for ZAP, kept for the next pump (each
    /// test thread drives one pair at a time).
    static SERVER_IN: std::cell::RefCell<BytesMut> = std::cell::RefCell::new(BytesMut::new());
}

/// Moves bytes both ways until both are quiet or `b` pauses for ZAP.
fn pump(a: &mut Connection, b: &mut Connection) -> Result<(), Error> {
    let mut a_in = BytesMut::new();
    let mut b_in = SERVER_IN.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let r = pump_bufs(a, b, &mut a_in, &mut b_in);
    SERVER_IN.with(|s| *s.borrow_mut() = b_in);
    r
}

fn pump_bufs(a: &mut Connection, b: &mut Connection, a_in: &mut BytesMut, b_in: &mut BytesMut) -> Result<(), Error> {
    loop {
        let mut ab = Vec::new();
        a.poll_transmit(&mut ab);
        b_in.extend_from_slice(&ab);
        let mut ba = Vec::new();
        b.poll_transmit(&mut ba);
        a_in.extend_from_slice(&ba);
        if ab.is_empty() && ba.is_empty() {
            // Bytes the paused side has not consumed stay for the next round.
            let before = b_in.len();
            b.handle_input(b_in)?;
            if b_in.len() == before {
                return Ok(());
            }
            continue;
        }
        b.handle_input(b_in)?;
        a.handle_input(a_in)?;
    }
}

fn reply(code: u16) -> Vec<Bytes> {
    let mut metadata = Metadata::new();
    metadata.insert("X-Tier", &b"gold"[..]);
    ZapReply { status_code: code, status_text: Bytes::from_static(b"text"), user_id: Bytes::from_static(b"alice"), metadata }
        .to_frames()
}

fn fresh() {
    SERVER_IN.with(|s| s.borrow_mut().clear());
}

fn plain() -> (Connection, Connection) {
    fresh();
    let creds = PlainCredentials::new(b"admin", b"secret").unwrap();
    let client = Connection::new(config(SocketType::Dealer, Mechanism::PlainClient(creds), ZapConfig::default()));
    let server = Connection::new(config(SocketType::Router, Mechanism::PlainServer, handler()));
    (client, server)
}

fn curve(zap: ZapConfig) -> (Connection, Connection, [u8; 32]) {
    fresh();
    let s = CurveKeyPair::generate();
    let c = CurveKeyPair::generate();
    let client = Mechanism::CurveClient(CurveClientKeys { public: c.public, secret: c.secret, server: s.public });
    let server = Mechanism::CurveServer(CurveServerKeys { secret: s.secret });
    (
        Connection::new(config(SocketType::Dealer, client, ZapConfig::default())),
        Connection::new(config(SocketType::Router, server, zap)),
        c.public,
    )
}

/// Runs to the ZAP pause, answers `code`, and runs on; returns both sides' results.
fn verdict(a: &mut Connection, b: &mut Connection, code: u16) -> (Result<(), Error>, Result<(), Error>) {
    pump(a, b).unwrap();
    assert!(b.zap_request().is_some(), "the server pauses for ZAP");
    assert!(!b.is_handshake_complete());
    let on_server = b.handle_zap_reply(&reply(code));
    let on_client = pump(a, b);
    (on_server, on_client)
}

#[test]
fn plain_pauses_after_hello_with_the_credentials() {
    let (mut a, mut b) = plain();
    pump(&mut a, &mut b).unwrap();
    let r = b.zap_request().unwrap().frames();
    let want: [&[u8]; 9] = [b"", b"1.0", b"1", b"dom", b"10.1.2.3", b"srv", b"PLAIN", b"admin", b"secret"];
    assert_eq!(r.iter().map(|f| f.as_ref()).collect::<Vec<_>>(), want);
    let (s, c) = verdict(&mut a, &mut b, 200);
    s.unwrap();
    c.unwrap();
    assert!(a.is_handshake_complete() && b.is_handshake_complete());
    let z = b.zap_reply().unwrap();
    assert_eq!((&z.user_id[..], z.metadata.get("X-Tier")), (&b"alice"[..], Some(&b"gold"[..])));
}

#[test]
fn refusals_send_the_status_code_except_300() {
    for code in [400, 500] {
        let (mut a, mut b) = plain();
        let (s, c) = verdict(&mut a, &mut b, code);
        let Err(Error::Handshake(e)) = s else { panic!("{s:?}") };
        assert_eq!((e.zap_status_code(), e.is_auth_failure()), (Some(code), true));
        // The client learns the code from the ERROR command.
        let Err(Error::Handshake(e)) = c else { panic!("{c:?}") };
        assert_eq!(e.zap_status_code(), Some(code), "{e:?}");
    }
    let (mut a, mut b) = plain();
    let (s, c) = verdict(&mut a, &mut b, 300);
    assert!(matches!(s, Err(Error::Handshake(HandshakeError::ZapRefused { status: 300, .. }))));
    assert!(c.is_err(), "the server stays failed");
    assert!(a.error().is_none() && !a.is_handshake_complete(), "a 300 is a silent disconnect");
    let mut out = Vec::new();
    b.poll_transmit(&mut out);
    assert!(out.is_empty());
}

#[test]
fn malformed_replies_fail_the_handshake() {
    let (mut a, mut b) = plain();
    pump(&mut a, &mut b).unwrap();
    let mut bad = reply(200);
    bad[1] = Bytes::from_static(b"9.9");
    assert_eq!(b.handle_zap_reply(&bad), Err(Error::Handshake(HandshakeError::ZapReply(ZapError::Version))));
    // Sticky, and a second reply is refused.
    assert!(b.handle_zap_reply(&reply(200)).is_err());
    let (mut a, mut b) = plain();
    pump(&mut a, &mut b).unwrap();
    assert_eq!(b.handle_zap_reply(&reply(200)[..3]), Err(Error::Handshake(HandshakeError::ZapReply(ZapError::FrameCount(3)))));
}

#[test]
fn curve_pauses_after_initiate_with_the_client_key() {
    let (mut a, mut b, key) = curve(handler());
    pump(&mut a, &mut b).unwrap();
    let r = b.zap_request().unwrap();
    assert_eq!((r.mechanism, r.credentials.as_slice()), (&b"CURVE"[..], &[Bytes::copy_from_slice(&key)][..]));
    let (s, c) = verdict(&mut a, &mut b, 200);
    s.unwrap();
    c.unwrap();
    assert!(a.is_handshake_complete() && b.is_handshake_complete());
    let (mut a, mut b, _) = curve(handler());
    let (_, c) = verdict(&mut a, &mut b, 400);
    let Err(Error::Handshake(e)) = c else { panic!("{c:?}") };
    assert_eq!(e.zap_status_code(), Some(400));
}

#[test]
fn curve_without_handler_proceeds_unless_enforced() {
    let (mut a, mut b, _) = curve(ZapConfig::default());
    pump(&mut a, &mut b).unwrap();
    assert!(b.is_handshake_complete() && b.zap_reply().is_none());
    let enforced = ZapConfig { enforce_domain: true, ..ZapConfig::default() };
    let (mut a, mut b, _) = curve(enforced);
    assert_eq!(pump(&mut a, &mut b), Err(Error::Handshake(HandshakeError::NoZapHandler)));
}

#[test]
fn null_asks_only_with_a_domain() {
    let null = |zap| {
        fresh();
        (
            Connection::new(config(SocketType::Dealer, Mechanism::Null, ZapConfig::default())),
            Connection::new(config(SocketType::Router, Mechanism::Null, zap)),
        )
    };
    // A handler but no domain: no ZAP.
    let (mut a, mut b) = null(ZapConfig { domain: Bytes::new(), ..handler() });
    pump(&mut a, &mut b).unwrap();
    assert!(b.is_handshake_complete());
    // A domain: READY waits for the verdict.
    let (mut a, mut b) = null(handler());
    let (s, c) = verdict(&mut a, &mut b, 200);
    s.unwrap();
    c.unwrap();
    assert!(a.is_handshake_complete() && b.is_handshake_complete());
    let r = null(handler());
    let (mut a, mut b) = r;
    let (_, c) = verdict(&mut a, &mut b, 500);
    let Err(Error::Handshake(e)) = c else { panic!("{c:?}") };
    assert_eq!(e.zap_status_code(), Some(500));
    // A domain and no handler: proceed, unless enforced.
    let (mut a, mut b) = null(ZapConfig { handler: false, ..handler() });
    pump(&mut a, &mut b).unwrap();
    assert!(b.is_handshake_complete());
    let (mut a, mut b) = null(ZapConfig { handler: false, enforce_domain: true, ..handler() });
    assert_eq!(pump(&mut a, &mut b), Err(Error::Handshake(HandshakeError::NoZapHandler)));
}
