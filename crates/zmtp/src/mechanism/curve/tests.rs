use super::*;
use crate::frame::parse_header;

fn bodies(mut wire: &[u8]) -> Vec<Bytes> {
    let mut v = Vec::new();
    while let Some(h) = parse_header(wire, None).unwrap() {
        let end = h.header_len + h.body_len as usize;
        v.push(Bytes::copy_from_slice(&wire[h.header_len..end]));
        wire = &wire[end..];
    }
    v
}

fn meta(t: &str) -> Metadata {
    let mut m = Metadata::new();
    m.insert("Socket-Type", Bytes::copy_from_slice(t.as_bytes()));
    m
}

struct Pair {
    client: Client,
    server: Server,
    hello: Bytes,
}

/// Runs HELLO and WELCOME through the pair and returns the client's INITIATE body.
fn initiate_of(p: &mut Pair) -> Bytes {
    let mut out = Vec::new();
    p.server.on_command(&p.hello, &mut out).unwrap();
    let welcome = bodies(&out).remove(0);
    out.clear();
    p.client.on_command(&welcome, &mut out).unwrap();
    bodies(&out).remove(0)
}

fn pair(server_key_seen_by_client: Option<[u8; 32]>) -> (Pair, CurveKeyPair, CurveKeyPair) {
    let s = CurveKeyPair::generate();
    let c = CurveKeyPair::generate();
    let client = Client::new(&CurveClientKeys {
        public: c.public,
        secret: c.secret.clone(),
        server: server_key_seen_by_client.unwrap_or(s.public),
    });
    let server = Server::new(&CurveServerKeys { secret: s.secret.clone() }, ZapMode::Skip);
    let mut p = Pair { client, server, hello: Bytes::new() };
    let mut out = Vec::new();
    p.client.start(&meta("DEALER"), &mut out);
    p.server.start(&meta("ROUTER"));
    p.hello = bodies(&out).remove(0);
    (p, s, c)
}

/// Runs the handshake to the end; returns (INITIATE body, READY body).
fn complete(p: &mut Pair) -> (Bytes, Bytes) {
    let mut out = Vec::new();
    assert!(matches!(p.server.on_command(&p.hello, &mut out), Ok(Status::InProgress)));
    let welcome = bodies(&out).remove(0);
    out.clear();
    assert!(matches!(p.client.on_command(&welcome, &mut out), Ok(Status::InProgress)));
    let initiate = bodies(&out).remove(0);
    out.clear();
    match p.server.on_command(&initiate, &mut out) {
        Ok(Status::Complete(m)) => assert_eq!(m.get("Socket-Type"), Some(&b"DEALER"[..])),
        other => panic!("{other:?}"),
    }
    let ready = bodies(&out).remove(0);
    match p.client.on_command(&ready, &mut Vec::new()) {
        Ok(Status::Complete(m)) => assert_eq!(m.get("Socket-Type"), Some(&b"ROUTER"[..])),
        other => panic!("{other:?}"),
    }
    (initiate, ready)
}

#[test]
fn hello_layout_matches_libzmq() {
    let (p, _, _) = pair(None);
    let h = &p.hello;
    assert_eq!(h.len(), 200);
    assert_eq!(&h[..8], b"\x05HELLO\x01\x00");
    assert!(h[8..80].iter().all(|&b| b == 0));
    assert_eq!(&h[80..112], &p.client.cn_public);
    assert_eq!(u64_at(h, 112), 1);
}

#[test]
fn handshake_and_messages_both_ways() {
    let (mut p, _, c) = pair(None);
    let (initiate, ready) = complete(&mut p);
    assert_eq!(&initiate[..9], b"\x08INITIATE");
    assert_eq!(u64_at(&initiate, 105), 2);
    assert_eq!(u64_at(&ready, 6), 1);
    assert_eq!(p.server.client_key(), Some(&c.public));
    let mut cc = p.client.take_cipher().unwrap();
    let mut sc = p.server.take_cipher().unwrap();
    assert!(p.client.take_cipher().is_none());
    for (i, body) in [&b""[..], b"hello", &[7u8; 300]].iter().enumerate() {
        let mut wire = Vec::new();
        cc.seal(i == 0, false, body, &mut wire).unwrap();
        // A MESSAGE is sent as a frame without flags, as libzmq does.
        let h = parse_header(&wire, None).unwrap().unwrap();
        assert!(!h.more && !h.command);
        assert_eq!(h.body_len as usize, MESSAGE_OVERHEAD + body.len());
        let f = sc.open(BytesMut::from(&wire[h.header_len..])).unwrap();
        assert_eq!((&f.body[..], f.more, f.command), (*body, i == 0, false));
    }
    let mut wire = Vec::new();
    sc.seal(false, true, b"\x04PING\x00\x00", &mut wire).unwrap();
    let h = parse_header(&wire, None).unwrap().unwrap();
    let f = cc.open(BytesMut::from(&wire[h.header_len..])).unwrap();
    assert!(f.command && &f.body[..] == b"\x04PING\x00\x00");
}

#[test]
fn replayed_reordered_and_tampered_messages_are_refused() {
    let (mut p, _, _) = pair(None);
    complete(&mut p);
    let mut cc = p.client.take_cipher().unwrap();
    let mut sc = p.server.take_cipher().unwrap();
    let (mut m1, mut m2) = (Vec::new(), Vec::new());
    cc.seal(false, false, b"one", &mut m1).unwrap();
    cc.seal(false, false, b"two", &mut m2).unwrap();
    let body = |w: &Vec<u8>| BytesMut::from(&w[2..]);
    // Reordered: two arrives first, then one is stale.
    sc.open(body(&m2)).unwrap();
    assert_eq!(sc.open(body(&m1)), Err(CipherError::InvalidNonce { nonce: 3, last: 4 }));
    // Replayed.
    assert!(matches!(sc.open(body(&m2)), Err(CipherError::InvalidNonce { .. })));
    // Tampered: flip one ciphertext bit of a fresh message.
    let mut m3 = Vec::new();
    cc.seal(false, false, b"three", &mut m3).unwrap();
    let last = m3.len() - 1;
    m3[last] ^= 1;
    assert_eq!(sc.open(body(&m3)), Err(CipherError::Tampered));
    // A forged nonce does not advance the window: the genuine next one is fine.
    let mut m4 = Vec::new();
    cc.seal(false, false, b"four", &mut m4).unwrap();
    assert_eq!(&sc.open(body(&m4)).unwrap().body[..], b"four");
    // The client cannot open its own direction's messages (prefix differs).
    let mut m5 = Vec::new();
    cc.seal(false, false, b"five", &mut m5).unwrap();
    let mut cc2_view = cc;
    assert_eq!(cc2_view.open(body(&m5)), Err(CipherError::Tampered));
    assert_eq!(sc.open(BytesMut::from(&b"\x05READY"[..])), Err(CipherError::NotMessage));
    assert_eq!(sc.open(BytesMut::from(&b"\x07MESSAGE\x00\x00"[..])), Err(CipherError::Malformed));
}

#[test]
fn wrong_server_key_fails_at_hello() {
    let other = CurveKeyPair::generate();
    let (mut p, _, _) = pair(Some(other.public));
    assert_eq!(p.server.on_command(&p.hello, &mut Vec::new()).unwrap_err(), HandshakeError::Cryptographic { command: "HELLO" });
}

#[test]
fn hello_without_padding_or_with_wrong_version() {
    let (mut p, _, _) = pair(None);
    let mut short = p.hello.to_vec();
    short.drain(8..80);
    assert_eq!(
        p.server.on_command(&Bytes::from(short), &mut Vec::new()).unwrap_err(),
        HandshakeError::MalformedCommand { command: "HELLO" }
    );
    let (mut p, _, _) = pair(None);
    let mut v2 = p.hello.to_vec();
    v2[6] = 2;
    assert_eq!(
        p.server.on_command(&Bytes::from(v2), &mut Vec::new()).unwrap_err(),
        HandshakeError::UnsupportedCurveVersion { major: 2, minor: 0 }
    );
}

#[test]
fn tampered_cookie_and_forged_vouch_are_refused() {
    // Cookie bit flipped.
    let (mut p, _, _) = pair(None);
    let mut initiate = initiate_of(&mut p).to_vec();
    initiate[40] ^= 1;
    assert_eq!(p.server.on_command(&Bytes::from(initiate), &mut Vec::new()).unwrap_err(), HandshakeError::BadCookie);

    // A client whose INITIATE claims a long-term key it does not hold:
    // the vouch was sealed with another secret.
    let (mut p, _, _) = pair(None);
    let mut out = Vec::new();
    p.server.on_command(&p.hello, &mut out).unwrap();
    let welcome = bodies(&out).remove(0);
    p.client.public = CurveKeyPair::generate().public;
    out.clear();
    p.client.on_command(&welcome, &mut out).unwrap();
    let initiate = bodies(&out).remove(0);
    assert_eq!(p.server.on_command(&initiate, &mut Vec::new()).unwrap_err(), HandshakeError::BadVouch);

    // INITIATE box tampered.
    let (mut p, _, _) = pair(None);
    let mut initiate = initiate_of(&mut p).to_vec();
    let last = initiate.len() - 1;
    initiate[last] ^= 0x80;
    assert_eq!(
        p.server.on_command(&Bytes::from(initiate), &mut Vec::new()).unwrap_err(),
        HandshakeError::Cryptographic { command: "INITIATE" }
    );
}

#[test]
fn replayed_initiate_nonce_and_tampered_ready_and_welcome() {
    // An INITIATE whose nonce does not exceed HELLO's.
    let (mut p, _, _) = pair(None);
    let mut initiate = initiate_of(&mut p).to_vec();
    initiate[105..113].copy_from_slice(&1u64.to_be_bytes());
    assert_eq!(p.server.on_command(&Bytes::from(initiate), &mut Vec::new()).unwrap_err(), HandshakeError::InvalidNonce);

    // WELCOME from a server that does not hold the key the client expects.
    let (mut p, _, _) = pair(None);
    let mut out = Vec::new();
    p.server.on_command(&p.hello, &mut out).unwrap();
    let mut welcome = bodies(&out).remove(0).to_vec();
    welcome[100] ^= 1;
    assert_eq!(
        p.client.on_command(&Bytes::from(welcome), &mut Vec::new()).unwrap_err(),
        HandshakeError::Cryptographic { command: "WELCOME" }
    );

    // READY tampered.
    let (mut p, _, _) = pair(None);
    let initiate = initiate_of(&mut p);
    out.clear();
    p.server.on_command(&initiate, &mut out).unwrap();
    let mut ready = bodies(&out).remove(0).to_vec();
    ready[20] ^= 1;
    assert_eq!(
        p.client.on_command(&Bytes::from(ready), &mut Vec::new()).unwrap_err(),
        HandshakeError::Cryptographic { command: "READY" }
    );
}

#[test]
fn error_during_handshake_and_unexpected_commands() {
    let (mut p, _, _) = pair(None);
    let err = p.client.on_command(&Bytes::from_static(b"\x05ERROR\x03400"), &mut Vec::new());
    assert_eq!(err.unwrap_err().zap_status_code(), Some(400));
    let (mut p, _, _) = pair(None);
    assert_eq!(
        p.server.on_command(&Bytes::from_static(b"\x08INITIATE"), &mut Vec::new()).unwrap_err(),
        HandshakeError::UnexpectedCommand(Bytes::from_static(b"INITIATE"))
    );
    // A second HELLO after WELCOME.
    let (mut p, _, _) = pair(None);
    p.server.on_command(&p.hello, &mut Vec::new()).unwrap();
    assert!(p.server.on_command(&p.hello, &mut Vec::new()).is_err());
}

#[test]
fn keys() {
    // RFC 26 / zmq_curve(7) example key pair (Z85).
    let secret = crate::z85::decode_key(b"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6").unwrap();
    let public = crate::z85::decode_key(b"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7").unwrap();
    assert_eq!(CurveSecretKey::from_bytes(secret).public_key(), public);
    let kp = CurveKeyPair::generate();
    assert_eq!(kp.secret.public_key(), kp.public);
    assert!(!format!("{:?}", kp.secret).contains(&format!("{:?}", kp.secret.expose())[1..10]));
    assert_ne!(kp.secret, CurveKeyPair::generate().secret);
    assert_eq!(kp.secret, kp.secret.clone());
}

#[test]
fn matches_nacl_crypto_box() {
    // crypto_box test vector from NaCl's tests/box.c (Alice to Bob), first
    // 16 ciphertext bytes after the MAC.
    let alice_sk = [
        0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d, 0x3c, 0x16, 0xc1, 0x72, 0x51, 0xb2, 0x66, 0x45, 0xdf, 0x4c, 0x2f, 0x87,
        0xeb, 0xc0, 0x99, 0x2a, 0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a,
    ];
    let bob_pk = [
        0xde, 0x9e, 0xdb, 0x7d, 0x7b, 0x7d, 0xc1, 0xb4, 0xd3, 0x5b, 0x61, 0xc2, 0xec, 0xe4, 0x35, 0x37, 0x3f, 0x83, 0x43, 0xc8,
        0x5b, 0x78, 0x67, 0x4d, 0xad, 0xfc, 0x7e, 0x14, 0x6f, 0x88, 0x2b, 0x4f,
    ];
    let nonce: [u8; 24] = [
        0x69, 0x69, 0x6e, 0xe9, 0x55, 0xb6, 0x2b, 0x73, 0xcd, 0x62, 0xbd, 0xa8, 0x75, 0xfc, 0x73, 0xd6, 0x82, 0x19, 0xe0, 0x03,
        0x6b, 0x7a, 0x0b, 0x37,
    ];
    let m: [u8; 16] = [0xbe, 0x07, 0x5f, 0xc5, 0x3c, 0x81, 0xf2, 0xd5, 0xcf, 0x14, 0x13, 0x16, 0xeb, 0xeb, 0x0c, 0x7b];
    let k = precompute(&StaticSecret::from(alice_sk), &bob_pk).unwrap();
    let mut out = Vec::new();
    seal(&k, crypto_secretbox::Nonce::from_slice(&nonce), &m, &mut out);
    // Expected ciphertext bytes 0..16 (after the 16-byte MAC) from box.out.
    assert_eq!(&out[16..32], &[0x8e, 0x99, 0x3b, 0x9f, 0x48, 0x68, 0x12, 0x73, 0xc2, 0x96, 0x50, 0xba, 0x32, 0xfc, 0x76, 0xce]);
}
