//! Golden wire vectors shared with other implementations.
//!
//! `tests/vectors/index.md` lists every vector as a markdown table row
//! `| file | kind | expect | description |`. This test:
//!
//! * regenerates every vector it knows how to build with the crate's encoders
//!   and checks the committed file matches byte for byte (run with
//!   `ZMTP_WRITE_VECTORS=1` to rewrite the files after a deliberate change);
//! * reads the index and checks every listed file decodes to the expected
//!   outcome, so a vector added to the index is picked up without code.
//!
//! Kinds: `greeting` (64-byte greeting, parsed and re-encoded), `greeting:2.0`
//! (a ZMTP 2.0 peer's 12-byte greeting), `frames` or `frames/max=N` (a frame
//! sequence through `FrameDecoder`, re-encoded when valid), `frames:1.0` and
//! `frames:2.0` (the same in ZMTP 1.0's and 2.0's framing), `command` (one
//! command frame, parsed and re-encoded), `handshake:TYPE` (peer bytes fed in
//! one piece to a NULL `Handshake` of socket type TYPE). Expectations:
//! `valid`, `complete` (handshake finished), `incomplete` (needs more bytes, no
//! error), `error:Variant` (the outermost error variant name).

use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use zmtp::legacy::GreetingV2;
use zmtp::{
    encode_frame, encode_frame_for, encode_subscription, Command, Config, FrameDecoder, Greeting, Handshake, Metadata,
    SocketType, Version,
};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

fn cmd(c: Command) -> Vec<u8> {
    let mut v = Vec::new();
    c.encode(&mut v);
    v
}

fn ready(props: &[(&str, &[u8])]) -> Vec<u8> {
    let mut m = Metadata::new();
    for (n, v) in props {
        m.insert(n, Bytes::copy_from_slice(v));
    }
    cmd(Command::Ready(m))
}

fn greeting(version: Version, mech: &[u8]) -> Vec<u8> {
    Greeting::new(version, mech, false, 0).to_bytes().to_vec()
}

/// Every vector this crate can produce, built with the public encoders.
fn generate() -> Vec<(&'static str, Vec<u8>)> {
    let mut v: Vec<(&'static str, Vec<u8>)> = Vec::new();
    v.push(("greeting_null_3_1.bin", greeting(Version::V3_1, b"NULL")));
    v.push(("greeting_null_3_0.bin", greeting(Version::V3_0, b"NULL")));
    let mut dealer = Config::new(SocketType::Dealer);
    dealer.routing_id = Bytes::from_static(b"abc");
    v.push(("ready_dealer_identity_abc.bin", cmd(Command::Ready(dealer.metadata()))));
    v.push(("ready_router.bin", cmd(Command::Ready(Config::new(SocketType::Router).metadata()))));
    let mut f = Vec::new();
    encode_frame(b"hello", true, false, &mut f);
    v.push(("frame_hello_more.bin", f));
    let mut f = Vec::new();
    encode_frame(&[0x61; 300], false, false, &mut f);
    v.push(("frame_long_300.bin", f));
    let mut f = Vec::new();
    encode_frame(b"", false, false, &mut f);
    v.push(("frame_empty.bin", f));
    let mut f = Vec::new();
    encode_frame(b"a", true, false, &mut f);
    encode_frame(b"", true, false, &mut f);
    encode_frame(b"c", false, false, &mut f);
    v.push(("multipart_3.bin", f));
    let mut f = Vec::new();
    encode_subscription(Version::V3_1, true, b"topic", &mut f);
    v.push(("subscribe_topic_3_1.bin", f));
    let mut f = Vec::new();
    encode_subscription(Version::V3_1, false, b"topic", &mut f);
    v.push(("cancel_topic_3_1.bin", f));
    let mut f = Vec::new();
    encode_subscription(Version::V3_0, true, b"topic", &mut f);
    v.push(("subscription_msg_3_0.bin", f));
    let mut f = Vec::new();
    encode_subscription(Version::V3_0, false, b"topic", &mut f);
    v.push(("cancel_msg_3_0.bin", f));
    v.push(("ping_ttl100_ab.bin", cmd(Command::Ping { ttl: 100, context: Bytes::from_static(b"ab") })));
    v.push(("pong_ab.bin", cmd(Command::Pong { context: Bytes::from_static(b"ab") })));
    v.push(("error_invalid_socket_type.bin", cmd(Command::Error { reason: Bytes::from_static(b"Invalid socket type") })));
    v.push(("join_weather.bin", cmd(Command::Join(Bytes::from_static(b"weather")))));
    v.push(("leave_weather.bin", cmd(Command::Leave(Bytes::from_static(b"weather")))));
    let mut f = Vec::new();
    encode_frame(b"weather", true, false, &mut f);
    encode_frame(b"sunny", false, false, &mut f);
    v.push(("radio_group_weather_sunny.bin", f));
    let mut h = greeting(Version::V3_1, b"NULL");
    h.extend(ready(&[("Socket-Type", b"RADIO")]));
    v.push(("handshake_radio_3_1.bin", h));
    let mut h = greeting(Version::V3_1, b"NULL");
    h.extend(ready(&[("Socket-Type", b"CLIENT")]));
    v.push(("handshake_client_3_1.bin", h));
    v.push(("invalid_join_long.bin", {
        let mut body = b"\x04JOIN".to_vec();
        body.extend_from_slice(&[b'g'; 256]);
        let mut f = Vec::new();
        encode_frame(&body, false, true, &mut f);
        f
    }));
    let mut h = greeting(Version::V3_1, b"NULL");
    h.extend(ready(&[("Socket-Type", b"ROUTER")]));
    v.push(("handshake_router_3_1.bin", h));
    let mut h = greeting(Version::V3_0, b"NULL");
    h.extend(ready(&[("Socket-Type", b"DEALER"), ("Identity", b"abc")]));
    v.push(("handshake_dealer_abc_3_0.bin", h));
    v.push(("invalid_reserved_flags.bin", vec![0x08, 0x00]));
    v.push(("invalid_length_2_62.bin", vec![0x02, 0x40, 0, 0, 0, 0, 0, 0, 0]));
    v.push(("invalid_length_top_bit.bin", vec![0x02, 0x80, 0, 0, 0, 0, 0, 0, 0]));
    v.push(("invalid_command_more.bin", vec![0x05, 0x00]));
    v.push(("invalid_ready_truncated.bin", b"\x04\x09\x05READY\x03ab".to_vec()));
    v.push(("invalid_ping_short.bin", b"\x04\x06\x04PING\x00".to_vec()));
    v.push(("truncated_greeting.bin", greeting(Version::V3_1, b"NULL")[..40].to_vec()));
    // A 2.0 peer's greeting (revision 1) whose socket-type byte is 1: a PUB.
    let mut g = greeting(Version::V3_1, b"NULL");
    g[10] = 1;
    v.push(("greeting_zmtp_2_0.bin", g[..12].to_vec()));
    v.push(("greeting_zmtp_1_0.bin", vec![0x01, 0x00]));
    legacy(&mut v);
    v.push(("handshake_mechanism_plain.bin", greeting(Version::V3_1, b"PLAIN")));
    let mut h = greeting(Version::V3_1, b"NULL");
    h.extend(ready(&[("Socket-Type", b"PUSH")]));
    v.push(("handshake_incompatible_push.bin", h));
    let mut h = greeting(Version::V3_1, b"NULL");
    h.extend(cmd(Command::Error { reason: Bytes::from_static(b"400") }));
    v.push(("handshake_peer_error_400.bin", h));
    let mut h = greeting(Version::V3_1, b"NULL");
    encode_frame(b"early", false, false, &mut h);
    v.push(("handshake_message_before_ready.bin", h));
    v
}

/// The ZMTP 1.0 and 2.0 vectors (names and bytes fixed: the JVM codec is checked
/// against the same files).
fn legacy(v: &mut Vec<(&'static str, Vec<u8>)>) {
    let frame = |version, body: &[u8], more| {
        let mut f = Vec::new();
        encode_frame_for(version, body, more, &mut f);
        f
    };
    use Version::{V1_0, V2_0};
    v.push(("zmtp10_identity_empty.bin", frame(V1_0, b"", false)));
    v.push(("zmtp10_identity_abc.bin", frame(V1_0, b"abc", false)));
    v.push(("zmtp10_frame_hello_more.bin", frame(V1_0, b"hello", true)));
    v.push(("zmtp10_frame_long_300.bin", frame(V1_0, &[0x61; 300], false)));
    v.push(("zmtp20_identity_abc.bin", frame(V2_0, b"abc", false)));
    v.push(("zmtp20_frame_hello_more.bin", frame(V2_0, b"hello", true)));
    v.push(("zmtp20_frame_long_300.bin", frame(V2_0, &[0x61; 300], false)));
    let mut f = frame(V2_0, b"a", true);
    f.extend(frame(V2_0, b"", true));
    f.extend(frame(V2_0, b"c", false));
    v.push(("zmtp20_multipart_3.bin", f));
    let dealer = GreetingV2::new(SocketType::Dealer, 0).to_bytes().to_vec();
    v.push(("zmtp20_greeting_dealer.bin", dealer.clone()));
    let mut h = dealer;
    h.extend(frame(V2_0, b"abc", false));
    v.push(("zmtp20_handshake_dealer_abc.bin", h));
    v.push(("zmtp10_handshake_abc.bin", frame(V1_0, b"abc", false)));
    // Beyond the fixed set: edge cases of both framings.
    v.push(("zmtp10_frame_253.bin", frame(V1_0, &[0x62; 253], true)));
    v.push(("zmtp10_frame_254.bin", frame(V1_0, &[0x62; 254], false)));
    v.push(("zmtp10_invalid_zero_length.bin", vec![0x00]));
    v.push(("zmtp10_invalid_flags.bin", vec![0x02, 0x02, 0x61]));
    v.push(("zmtp20_invalid_command_flag.bin", vec![0x04, 0x00]));
    let mut f = SIGNATURE.to_vec();
    f.extend([1, 8]);
    v.push(("zmtp20_greeting_push.bin", f));
    let mut f = SIGNATURE.to_vec();
    f.extend([1, 42]);
    v.push(("zmtp20_greeting_unknown_type.bin", f));
    let mut h = SIGNATURE.to_vec();
    h.extend([0, 5]);
    h.extend(frame(V1_0, b"abc", false));
    v.push(("zmtp10_signature_handshake_abc.bin", h));
    let mut h = GreetingV2::new(SocketType::Dealer, 0).to_bytes().to_vec();
    h.extend(frame(V2_0, &[0x69; 256], false));
    v.push(("zmtp20_handshake_identity_256.bin", h));
}

const SIGNATURE: [u8; 10] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F];

#[test]
fn generated_vectors_match_files() {
    let write = std::env::var_os("ZMTP_WRITE_VECTORS").is_some();
    for (name, bytes) in generate() {
        let path = dir().join(name);
        if write {
            std::fs::write(&path, &bytes).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(committed, bytes, "{name} differs from the encoder's output");
    }
}

struct Row {
    file: String,
    kind: String,
    expect: String,
}

fn index() -> Vec<Row> {
    let text = std::fs::read_to_string(dir().join("index.md")).unwrap();
    text.lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split('|').map(|c| c.trim().trim_matches('`').to_owned()).collect::<Vec<_>>())
        .filter(|cols| cols.len() >= 4 && cols[0].ends_with(".bin"))
        .map(|cols| Row { file: cols[0].clone(), kind: cols[1].clone(), expect: cols[2].clone() })
        .collect()
}

fn variant<E: std::fmt::Debug>(e: &E) -> String {
    let s = format!("{e:?}");
    s.chars().take_while(|c| c.is_ascii_alphanumeric()).collect()
}

/// Decodes one vector by kind; returns the outcome and, for valid
/// encodable kinds, the re-encoded bytes.
fn check(row: &Row, bytes: &[u8]) -> (String, Option<Vec<u8>>) {
    let (kind, max) = match row.kind.split_once("/max=") {
        Some((k, m)) => (k, Some(m.parse::<u64>().unwrap())),
        None => (row.kind.as_str(), None),
    };
    let frames = |version: Version| {
        let mut dec = FrameDecoder::for_version(version, max);
        let mut buf = BytesMut::from(bytes);
        let mut out = Vec::new();
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(f)) => f.encode_for(version, &mut out),
                Ok(None) if buf.is_empty() => return ("valid".into(), Some(out)),
                Ok(None) => return ("incomplete".into(), None),
                Err(e) => return (format!("error:{}", variant(&e)), None),
            }
        }
    };
    match kind {
        "greeting" => {
            let Ok(arr) = <[u8; 64]>::try_from(bytes) else {
                return ("incomplete".into(), None);
            };
            match Greeting::parse(&arr) {
                Ok(g) => ("valid".into(), Some(g.to_bytes().to_vec())),
                Err(e) => (format!("error:{}", variant(&e)), None),
            }
        }
        "greeting:2.0" => {
            let Ok(arr) = <[u8; 12]>::try_from(bytes) else {
                return ("incomplete".into(), None);
            };
            match GreetingV2::parse(&arr) {
                Ok(g) => ("valid".into(), Some(g.to_bytes().to_vec())),
                Err(e) => (format!("error:{}", variant(&e)), None),
            }
        }
        "frames" => frames(Version::V3_1),
        "frames:1.0" => frames(Version::V1_0),
        "frames:2.0" => frames(Version::V2_0),
        "command" => {
            let mut dec = FrameDecoder::new(max);
            let mut buf = BytesMut::from(bytes);
            match dec.decode(&mut buf) {
                Ok(Some(f)) if f.command && buf.is_empty() => match Command::parse(&f.body) {
                    Ok(c) => ("valid".into(), Some(cmd(c))),
                    Err(e) => (format!("error:{}", variant(&e)), None),
                },
                Ok(Some(_)) => ("error:NotACommand".into(), None),
                Ok(None) => ("incomplete".into(), None),
                Err(e) => (format!("error:{}", variant(&e)), None),
            }
        }
        k if k.starts_with("handshake:") => {
            let name = k.strip_prefix("handshake:").unwrap_or_default();
            let ty = SocketType::from_name(name.as_bytes()).expect("socket type in kind");
            let mut config = Config::new(ty);
            config.max_msg_size = max;
            let mut hs = Handshake::new(config);
            match hs.handle_input(bytes) {
                Ok(_) if hs.is_complete() => ("complete".into(), None),
                Ok(_) => ("incomplete".into(), None),
                Err(e) => (format!("error:{}", variant(&e)), None),
            }
        }
        other => panic!("{}: unknown kind {other}", row.file),
    }
}

#[test]
fn index_vectors_decode_as_expected() {
    let rows = index();
    assert!(rows.len() >= 25, "index has {} rows", rows.len());
    for row in &rows {
        let bytes = std::fs::read(dir().join(&row.file)).unwrap_or_else(|e| panic!("{}: {e}", row.file));
        let (outcome, reencoded) = check(row, &bytes);
        assert_eq!(outcome, row.expect, "{} ({})", row.file, row.kind);
        if let Some(re) = reencoded {
            assert_eq!(re, bytes, "{}: re-encoding differs", row.file);
        }
    }
    // Every generated vector is documented.
    for (name, _) in generate() {
        assert!(rows.iter().any(|r| r.file == name), "{name} missing from index.md");
    }
}
