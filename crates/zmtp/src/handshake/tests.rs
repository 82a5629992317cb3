use super::*;
use crate::frame::encode_frame;

fn greeting(minor: u8, mech: &[u8]) -> Vec<u8> {
    let mut g = Greeting::new(Version::V3_1, mech, false, 0).to_bytes();
    g[11] = minor;
    g.to_vec()
}

fn ready(props: &[(&str, &[u8])]) -> Vec<u8> {
    let mut m = Metadata::new();
    for (n, v) in props {
        m.insert(n, Bytes::copy_from_slice(v));
    }
    let mut out = Vec::new();
    Command::Ready(m).encode(&mut out);
    out
}

fn run(config: Config, input: &[u8]) -> (Handshake, Result<usize, HandshakeError>, Vec<u8>) {
    let mut hs = Handshake::new(config);
    let r = hs.handle_input(input);
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    (hs, r, out)
}

#[test]
fn staged_greeting() {
    let mut hs = Handshake::new(Config::new(SocketType::Dealer));
    let mut out = Vec::new();
    hs.poll_transmit(&mut out);
    assert_eq!(out, [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F]);
    let peer = greeting(1, b"NULL");
    assert_eq!(hs.handle_input(&peer[..10]), Ok(10));
    out.clear();
    hs.poll_transmit(&mut out);
    assert_eq!(out, [3]);
    assert_eq!(hs.handle_input(&peer[10..11]), Ok(1));
    out.clear();
    hs.poll_transmit(&mut out);
    assert_eq!(out.len(), 53);
    assert_eq!(&out[..5], b"\x01NULL");
    assert_eq!(hs.version(), None);
    assert_eq!(hs.handle_input(&peer[11..]), Ok(53));
    assert_eq!(hs.version(), Some(Version::V3_1));
    out.clear();
    hs.poll_transmit(&mut out);
    // READY for a DEALER with an empty Identity, as in RFC 23's example.
    assert_eq!(out, ready(&[("Socket-Type", b"DEALER"), ("Identity", b"")]));
    assert!(!hs.has_transmit());
}

#[test]
fn completes_and_leaves_trailing_data() {
    let mut input = greeting(1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"ROUTER"), ("X-App", b"1")]));
    let split = input.len();
    encode_frame(b"data", false, false, &mut input);
    let (hs, r, out) = run(Config::new(SocketType::Dealer), &input);
    assert_eq!(r, Ok(split));
    assert!(hs.is_complete());
    assert!(out.len() > GREETING_LEN);
    let peer = hs.peer().unwrap();
    assert_eq!(peer.socket_type, Some(SocketType::Router));
    assert_eq!(peer.routing_id, None);
    assert_eq!(peer.metadata.get("x-app"), Some(&b"1"[..]));
    assert_eq!(peer.version, Version::V3_1);
    let mut hs = hs;
    assert_eq!(hs.handle_input(&input[split..]), Ok(0));
}

#[test]
fn version_negotiation_and_identity() {
    let mut input = greeting(0, b"NULL");
    input.extend(ready(&[("Socket-Type", b"DEALER"), ("Identity", b"abc")]));
    let (hs, r, _) = run(Config::new(SocketType::Router), &input);
    assert_eq!(r, Ok(input.len()));
    let peer = hs.peer().unwrap();
    assert_eq!(peer.version, Version::V3_0);
    assert_eq!(peer.routing_id.as_deref(), Some(&b"abc"[..]));
    let mut hs = Handshake::with_version(Config::new(SocketType::Router), Version::V3_0);
    let mut input = greeting(1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"DEALER")]));
    hs.handle_input(&input).unwrap();
    assert_eq!(hs.peer().unwrap().version, Version::V3_0);
}

#[test]
fn byte_at_a_time() {
    let mut input = greeting(1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"PUB"), ("X-Big", &[7u8; 300])]));
    let mut hs = Handshake::new(Config::new(SocketType::Sub));
    for b in &input {
        assert_eq!(hs.handle_input(std::slice::from_ref(b)), Ok(1));
    }
    assert!(hs.is_complete());
    assert_eq!(hs.peer().unwrap().metadata.get("X-Big").map(|v| v.len()), Some(300));
}

#[test]
fn refuses_incompatible_socket_type_with_error_command() {
    let mut input = greeting(1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"PUSH")]));
    let (mut hs, r, out) = run(Config::new(SocketType::Push), &input);
    assert_eq!(r, Err(HandshakeError::IncompatibleSocketType { ours: SocketType::Push, peer: SocketType::Push }));
    let mut expected = Vec::new();
    Command::Error { reason: Bytes::from_static(b"Invalid socket type") }.encode(&mut expected);
    assert!(out.ends_with(&expected));
    // The error sticks and no second ERROR is queued.
    assert!(hs.handle_input(b"x").is_err());
    assert!(!hs.has_transmit());
    assert!(hs.error().is_some());
    assert!(hs.peer().is_none());
}

#[test]
fn metadata_errors() {
    let cases: Vec<(Vec<u8>, HandshakeError)> = vec![
        (ready(&[("X-Other", b"1")]), HandshakeError::MissingSocketType),
        (ready(&[("Socket-Type", b"FOO")]), HandshakeError::UnknownSocketType),
        (ready(&[("Socket-Type", b"DEALER"), ("Identity", &[1u8; 256])]), HandshakeError::IdentityTooLong { len: 256 }),
        (b"\x04\x07\x05READY\x00".to_vec(), HandshakeError::Metadata(crate::MetadataError::EmptyName { offset: 0 })),
        (b"\x04\x00".to_vec(), HandshakeError::Command(crate::CommandError::Empty)),
        (b"\x04\x05\x04PING".to_vec(), HandshakeError::Command(crate::CommandError::Truncated { command: "PING" })),
        (b"\x04\x06\x04PONG\x00".to_vec(), HandshakeError::UnexpectedCommand(Bytes::from_static(b"PONG"))),
        (b"\x00\x01x".to_vec(), HandshakeError::UnexpectedMessage),
        (b"\x05".to_vec(), HandshakeError::Frame(crate::FrameError::CommandWithMore)),
        (b"\x08".to_vec(), HandshakeError::Frame(crate::FrameError::ReservedFlags { flags: 8 })),
        (
            b"\x06\x80\x00\x00\x00\x00\x00\x00\x00".to_vec(),
            HandshakeError::Frame(crate::FrameError::LengthOverflow { len: 1 << 63 }),
        ),
        (b"\x05\x04ERROR\x03400".to_vec(), HandshakeError::Frame(crate::FrameError::CommandWithMore)),
        (b"\x04\x0a\x05ERROR\x03400".to_vec(), HandshakeError::PeerError { reason: Bytes::from_static(b"400") }),
    ];
    for (frame, expected) in cases {
        let mut input = greeting(1, b"NULL");
        input.extend(&frame);
        let (_, r, _) = run(Config::new(SocketType::Dealer), &input);
        assert_eq!(r, Err(expected));
    }
}

#[test]
fn handshake_commands_respect_max_size() {
    let mut config = Config::new(SocketType::Pair);
    config.max_msg_size = Some(10);
    let mut input = greeting(1, b"NULL");
    input.extend(ready(&[("Socket-Type", b"PAIR")]));
    let (_, r, _) = run(config, &input);
    assert!(matches!(r, Err(HandshakeError::Frame(crate::FrameError::TooLarge { max: 10, .. }))));
}

#[test]
fn greeting_errors() {
    let (_, r, _) = run(Config::new(SocketType::Pair), &greeting(1, b"PLAIN"));
    assert_eq!(r, Err(HandshakeError::MechanismMismatch));
    let (_, r, _) = run(Config::new(SocketType::Pair), &greeting(1, b"BOGUS"));
    assert_eq!(r, Err(HandshakeError::UnknownMechanism));
    // "NULL" followed by junk instead of zero padding is not NULL.
    let mut g = greeting(1, b"NULL");
    g[16] = b'X';
    let (_, r, _) = run(Config::new(SocketType::Pair), &g);
    assert_eq!(r, Err(HandshakeError::UnknownMechanism));
    let mut g = greeting(1, b"NULL");
    g[10] = 2;
    // Revision 2 is spoken to as 3.x, as libzmq does.
    let (hs, r, out) = run(Config::new(SocketType::Pair), &g[..11]);
    assert_eq!(r, Ok(11));
    assert!(hs.error().is_none());
    assert_eq!(out.len(), GREETING_LEN);
    g[9] = 0x7D;
    let (_, r, _) = run(Config::new(SocketType::Pair), &g);
    assert_eq!(r, Err(HandshakeError::BadSignature));
}

#[test]
fn config_metadata_filters_properties() {
    let mut c = Config::new(SocketType::Router);
    c.routing_id = Bytes::from_static(b"id");
    c.properties = vec![
        ("X-Good".into(), Bytes::from_static(b"1")),
        ("identity".into(), Bytes::from_static(b"spoof")),
        ("bad name".into(), Bytes::new()),
    ];
    let m = c.metadata();
    let names: Vec<_> = m.iter().map(|(n, _)| n.to_owned()).collect();
    assert_eq!(names, ["Socket-Type", "Identity", "X-Good"]);
    assert_eq!(m.get("identity"), Some(&b"id"[..]));
    assert_eq!(Config::new(SocketType::Pub).metadata().len(), 1);
}

/// Feeds `input` to a fresh handshake in one piece and byte by byte; both must
/// consume and send the same.
fn run_both(config: Config, input: &[u8]) -> (Handshake, Result<usize, HandshakeError>, Vec<u8>) {
    let (hs, r, out) = run(config.clone(), input);
    let mut one = Handshake::new(config);
    let mut out1 = Vec::new();
    let mut r1 = Ok(0);
    for (i, b) in input.iter().enumerate() {
        match one.handle_input(std::slice::from_ref(b)) {
            Ok(1) => r1 = Ok(i + 1),
            Ok(_) => break,
            Err(e) => {
                r1 = Err(e);
                break;
            }
        }
    }
    one.poll_transmit(&mut out1);
    assert_eq!(r1, r, "byte at a time");
    assert_eq!(out1, out, "byte at a time");
    (hs, r, out)
}

const SIG: [u8; 10] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F];

#[test]
fn zmtp_1_0_unversioned_peer() {
    // Identity "abc" then a data frame, which stays with the caller.
    let input = b"\x04\x00abc\x06\x01hello";
    let mut c = Config::new(SocketType::Router);
    c.routing_id = Bytes::from_static(b"me");
    let (hs, r, out) = run_both(c, input);
    assert_eq!(r, Ok(5));
    let peer = hs.peer().unwrap();
    assert_eq!(peer.version, Version::V1_0);
    assert_eq!(peer.socket_type, None);
    assert_eq!(peer.routing_id.as_deref(), Some(&b"abc"[..]));
    assert!(!peer.implies_subscribe_all);
    assert_eq!(hs.version(), Some(Version::V1_0));
    // Our signature is our identity frame's header (length 3 = "me" + flags), then "me".
    assert_eq!(out, b"\xff\0\0\0\0\0\0\0\x03\x7fme");
    // A long identity header (FF, 8-byte length, flags without bit 0).
    let mut input = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 11, 0];
    input.extend_from_slice(b"0123456789");
    let (hs, r, out) = run_both(Config::new(SocketType::Dealer), &input);
    assert_eq!(r, Ok(20));
    assert_eq!(hs.peer().unwrap().routing_id.as_deref(), Some(&b"0123456789"[..]));
    assert_eq!(out, SIG);
    // An empty identity is complete after two bytes.
    let (hs, r, _) = run_both(Config::new(SocketType::Pull), b"\x01\x00");
    assert_eq!(r, Ok(2));
    assert_eq!(hs.peer().unwrap().routing_id.as_deref(), Some(&b""[..]));
}

#[test]
fn zmtp_1_0_peer_of_a_publisher_subscribes_to_all() {
    for (ty, implied) in [(SocketType::Pub, true), (SocketType::XPub, true), (SocketType::Sub, false)] {
        let (hs, _, _) = run_both(Config::new(ty), b"\x01\x00");
        assert_eq!(hs.peer().unwrap().implies_subscribe_all, implied, "{ty}");
    }
    // Not for a 1.0 peer with a signature (libzmq sets it for unversioned peers only).
    let mut input = SIG.to_vec();
    input.extend([0, 2, 1, 0]);
    let (hs, r, _) = run_both(Config::new(SocketType::Pub), &input);
    assert_eq!(r, Ok(14));
    assert!(!hs.peer().unwrap().implies_subscribe_all);
}

#[test]
fn zmtp_2_0_peer() {
    let mut input = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1, 5];
    input.extend(b"\x00\x03abc\x01\x05hello");
    let (hs, r, out) = run_both(Config::new(SocketType::Router), &input);
    assert_eq!(r, Ok(17));
    let peer = hs.peer().unwrap();
    assert_eq!(peer.version, Version::V2_0);
    assert_eq!(peer.socket_type, Some(SocketType::Dealer));
    assert_eq!(peer.routing_id.as_deref(), Some(&b"abc"[..]));
    assert_eq!(peer.metadata.get(SOCKET_TYPE), Some(&b"DEALER"[..]));
    // Signature, major 3, our 2.0 socket type (ROUTER = 6), our empty identity frame.
    let mut expected = SIG.to_vec();
    expected.extend([3, 6, 0, 0]);
    assert_eq!(out, expected);
    // A long identity header is fine too, up to 255 bytes.
    let mut input = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1, 5, 2, 0, 0, 0, 0, 0, 0, 0, 255];
    input.extend([7u8; 255]);
    let (hs, r, _) = run_both(Config::new(SocketType::Router), &input);
    assert_eq!(r, Ok(input.len()));
    assert_eq!(hs.peer().unwrap().routing_id.as_ref().map(|b| b.len()), Some(255));
}

#[test]
fn zmtp_1_0_peer_with_signature() {
    let mut input = SIG.to_vec();
    input.extend([0, 99]); // revision 0; its socket-type byte is not judged
    input.extend(b"\x04\x00abc");
    let mut c = Config::new(SocketType::Router);
    c.routing_id = Bytes::from_static(b"r");
    let (hs, r, out) = run_both(c, &input);
    assert_eq!(r, Ok(17));
    let peer = hs.peer().unwrap();
    assert_eq!((peer.version, peer.socket_type), (Version::V1_0, None));
    assert_eq!(peer.routing_id.as_deref(), Some(&b"abc"[..]));
    let mut expected = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 2, 0x7F, 3, 6];
    expected.extend(b"\x02\x00r");
    assert_eq!(out, expected);
}

#[test]
fn legacy_refusals() {
    let v2 = |ty: u8, rest: &[u8]| {
        let mut g = vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1, ty];
        g.extend_from_slice(rest);
        g
    };
    // Incompatible and unknown 2.0 socket types; no ERROR command (2.0 has none).
    let (_, r, out) = run_both(Config::new(SocketType::Push), &v2(8, b""));
    assert_eq!(r, Err(HandshakeError::IncompatibleSocketType { ours: SocketType::Push, peer: SocketType::Push }));
    assert_eq!(out.len(), 12);
    let (_, r, _) = run_both(Config::new(SocketType::Push), &v2(11, b""));
    assert_eq!(r, Err(HandshakeError::UnknownSocketType));
    // Security: a PLAIN server, a CURVE-less NULL socket with a ZAP domain.
    let mut plain = Config::new(SocketType::Dealer);
    plain.mechanism = Mechanism::PlainServer;
    let (_, r, _) = run_both(plain.clone(), b"\x01\x00");
    assert_eq!(r, Err(HandshakeError::LegacySecurity { version: Version::V1_0 }));
    let (_, r, _) = run_both(plain, &v2(11, b""));
    assert_eq!(r, Err(HandshakeError::LegacySecurity { version: Version::V2_0 }));
    let mut zap = Config::new(SocketType::Dealer);
    zap.zap.domain = "global".into();
    let (_, r, _) = run_both(zap, &v2(5, b""));
    assert_eq!(r, Err(HandshakeError::LegacySecurity { version: Version::V2_0 }));
    // A type 2.0 did not have.
    let (_, r, _) = run_both(Config::new(SocketType::Client), b"\x01\x00");
    assert_eq!(r, Err(HandshakeError::LegacySocketType { ours: SocketType::Client, version: Version::V1_0 }));
    // Oversized identities are refused from the header, before the body arrives.
    let (_, r, _) = run_both(Config::new(SocketType::Router), &v2(5, &[2, 0, 0, 0, 0, 0, 0, 1, 0]));
    assert_eq!(r, Err(HandshakeError::IdentityTooLong { len: 256 }));
    let (_, r, _) = run_both(Config::new(SocketType::Router), &[0xFF, 0x40, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(r, Err(HandshakeError::IdentityTooLong { len: (1 << 62) - 1 }));
    let mut small = Config::new(SocketType::Router);
    small.max_msg_size = Some(2);
    let (_, r, _) = run_both(small, b"\x04\x00abc");
    assert_eq!(r, Err(HandshakeError::Frame(crate::FrameError::TooLarge { len: 3, max: 2 })));
    // Malformed 1.0 and 2.0 identity frames.
    let (_, r, _) = run_both(Config::new(SocketType::Router), b"\x00");
    assert_eq!(r, Err(HandshakeError::Frame(crate::FrameError::ZeroLength)));
    let (_, r, _) = run_both(Config::new(SocketType::Router), b"\x02\x04x");
    assert_eq!(r, Err(HandshakeError::Frame(crate::FrameError::ReservedFlags { flags: 4 })));
    let (_, r, _) = run_both(Config::new(SocketType::Router), &v2(5, &[4, 0]));
    assert_eq!(r, Err(HandshakeError::Frame(crate::FrameError::ReservedFlags { flags: 4 })));
}
