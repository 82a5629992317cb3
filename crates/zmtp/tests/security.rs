//! PLAIN and CURVE end to end through two in-memory `Connection`s (no sockets): handshake,
//! data both ways, and the attacks a CURVE peer must survive, each ending in a typed error.

use bytes::{Bytes, BytesMut};
use zmtp::{
    Command, Config, Connection, CurveClientKeys, CurveKeyPair, CurveServerKeys, Error, Event, FrameDecoder, HandshakeError,
    Mechanism, PlainCredentials, SocketType,
};

fn config(t: SocketType, m: Mechanism) -> Config {
    let mut c = Config::new(t);
    c.mechanism = m;
    c
}

fn curve_pair(server_key_for_client: Option<[u8; 32]>) -> (Config, Config) {
    let s = CurveKeyPair::generate();
    let c = CurveKeyPair::generate();
    let client = Mechanism::CurveClient(CurveClientKeys {
        public: c.public,
        secret: c.secret,
        server: server_key_for_client.unwrap_or(s.public),
    });
    let server = Mechanism::CurveServer(CurveServerKeys { secret: s.secret });
    (config(SocketType::Dealer, client), config(SocketType::Router, server))
}

/// Moves bytes both ways until both are quiet; `tap` may alter what `a` sends to `b`.
fn pump_with(a: &mut Connection, b: &mut Connection, mut tap: impl FnMut(&mut Vec<u8>)) -> Result<(), Error> {
    let (mut a_in, mut b_in) = (BytesMut::new(), BytesMut::new());
    loop {
        let mut ab = Vec::new();
        a.poll_transmit(&mut ab);
        tap(&mut ab);
        b_in.extend_from_slice(&ab);
        let mut ba = Vec::new();
        b.poll_transmit(&mut ba);
        a_in.extend_from_slice(&ba);
        if ab.is_empty() && ba.is_empty() {
            return Ok(());
        }
        b.handle_input(&mut b_in)?;
        a.handle_input(&mut a_in)?;
    }
}

fn pump(a: &mut Connection, b: &mut Connection) -> Result<(), Error> {
    pump_with(a, b, |_| {})
}

fn frames(c: &mut Connection) -> Vec<(Vec<u8>, bool)> {
    std::iter::from_fn(|| c.poll_event())
        .filter_map(|e| match e {
            Event::Frame(f) => Some((f.body.to_vec(), f.more)),
            _ => None,
        })
        .collect()
}

fn exchange(a: &mut Connection, b: &mut Connection) {
    a.send_frame(b"held before the handshake", true);
    a.send_frame(&[9u8; 70_000], false);
    pump(a, b).unwrap();
    assert!(a.is_handshake_complete() && b.is_handshake_complete());
    let got = frames(b);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], (b"held before the handshake".to_vec(), true));
    assert_eq!(got[1].0.len(), 70_000);
    b.send_frame(b"back", false);
    b.send_command(&Command::Ping { ttl: 1, context: Bytes::from_static(b"c") });
    pump(a, b).unwrap();
    let ev: Vec<Event> = std::iter::from_fn(|| a.poll_event()).collect();
    assert!(matches!(&ev[0], Event::HandshakeComplete(p) if p.socket_type == Some(SocketType::Router)));
    assert!(matches!(&ev[1], Event::Frame(f) if &f.body[..] == b"back" && !f.more));
    assert!(matches!(&ev[2], Event::Command(Command::Ping { ttl: 1, .. })));
}

#[test]
fn plain_server_without_zap_refuses_every_client() {
    // libzmq's PLAIN server drops a client when no ZAP handler can check the password;
    // accepting instead would let anyone in.
    let creds = PlainCredentials::new(b"admin", b"secret").unwrap();
    let mut a = Connection::new(config(SocketType::Dealer, Mechanism::PlainClient(creds)));
    let mut b = Connection::new(config(SocketType::Router, Mechanism::PlainServer));
    let err = pump(&mut a, &mut b).unwrap_err();
    assert!(matches!(err, Error::Handshake(HandshakeError::NoZapHandler)), "{err:?}");
    assert!(!a.is_handshake_complete() && !b.is_handshake_complete());
}

#[test]
fn curve_client_and_server() {
    let (c, s) = curve_pair(None);
    let mut a = Connection::new(c);
    let mut b = Connection::new(s);
    exchange(&mut a, &mut b);
}

#[test]
fn curve_byte_at_a_time() {
    let (c, s) = curve_pair(None);
    let mut a = Connection::new(c);
    let mut b = Connection::new(s);
    a.send_frame(b"x", false);
    let (mut a_in, mut b_in) = (BytesMut::new(), BytesMut::new());
    loop {
        let mut ab = Vec::new();
        a.poll_transmit(&mut ab);
        let mut ba = Vec::new();
        b.poll_transmit(&mut ba);
        if ab.is_empty() && ba.is_empty() {
            break;
        }
        for byte in ab {
            b_in.extend_from_slice(&[byte]);
            b.handle_input(&mut b_in).unwrap();
        }
        for byte in ba {
            a_in.extend_from_slice(&[byte]);
            a.handle_input(&mut a_in).unwrap();
        }
    }
    assert_eq!(frames(&mut b), vec![(b"x".to_vec(), false)]);
}

#[test]
fn curve_wrong_server_key_fails_cleanly() {
    let (c, s) = curve_pair(Some(CurveKeyPair::generate().public));
    let mut a = Connection::new(c);
    let mut b = Connection::new(s);
    a.send_frame(b"secret data", false);
    let err = pump(&mut a, &mut b).unwrap_err();
    assert_eq!(err, Error::Handshake(HandshakeError::Cryptographic { command: "HELLO" }));
    assert!(frames(&mut b).is_empty());
    assert!(b.error().is_some());
}

#[test]
fn curve_mechanism_mismatch() {
    let (c, _) = curve_pair(None);
    let mut a = Connection::new(c);
    let mut b = Connection::new(config(SocketType::Router, Mechanism::PlainServer));
    let err = pump(&mut a, &mut b).unwrap_err();
    assert_eq!(err, Error::Handshake(HandshakeError::MechanismMismatch));
}

/// After the handshake, tamper with or replay what the client sends.
fn attacked(tamper: impl Fn(&mut Vec<u8>, &mut Option<Vec<u8>>)) -> Result<(), Error> {
    let (c, s) = curve_pair(None);
    let mut a = Connection::new(c);
    let mut b = Connection::new(s);
    pump(&mut a, &mut b).unwrap();
    a.send_frame(b"first", false);
    let mut saved = None;
    pump_with(&mut a, &mut b, |w| tamper(w, &mut saved))?;
    a.send_frame(b"second", false);
    pump_with(&mut a, &mut b, |w| {
        if let Some(old) = saved.take() {
            *w = old; // replace the second MESSAGE with a copy of the first
        }
    })
}

#[test]
fn curve_tampered_message_is_refused() {
    let err = attacked(|w, _| {
        if let Some(last) = w.last_mut() {
            *last ^= 1;
        }
    })
    .unwrap_err();
    assert_eq!(err, Error::Cipher(zmtp::CipherError::Tampered));
}

#[test]
fn curve_replayed_message_is_refused() {
    let err = attacked(|w, saved| {
        if !w.is_empty() && saved.is_none() {
            *saved = Some(w.clone());
        }
    })
    .unwrap_err();
    assert!(matches!(err, Error::Cipher(zmtp::CipherError::InvalidNonce { nonce: 3, last: 3 })));
}

#[test]
fn curve_plain_frame_after_handshake_is_refused() {
    let (c, s) = curve_pair(None);
    let mut a = Connection::new(c);
    let mut b = Connection::new(s);
    pump(&mut a, &mut b).unwrap();
    let mut buf = BytesMut::from(&b"\x00\x05hello"[..]);
    assert_eq!(b.handle_input(&mut buf), Err(Error::Cipher(zmtp::CipherError::NotMessage)));
    // The decoder alone still sees a well-formed frame: the refusal is CURVE's.
    let mut buf = BytesMut::from(&b"\x00\x05hello"[..]);
    assert!(FrameDecoder::new(None).decode(&mut buf).unwrap().is_some());
}
