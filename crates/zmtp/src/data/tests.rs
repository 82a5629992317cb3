use super::*;
use crate::command::Command;
use crate::error::{Error, FrameError};
use crate::frame::encode_frame_for;
use crate::heartbeat::HeartbeatConfig;
use bytes::{Bytes, BytesMut};
use std::time::{Duration, Instant};

fn phase(version: Version) -> DataPhase {
    DataPhase::new(version, None, None, false, HeartbeatConfig::default(), Instant::now())
}

/// Records what it is given; pauses after `pause_after` frames, takes bodies over `take_over`.
#[derive(Default)]
struct Rec {
    frames: Vec<(bool, Vec<u8>, bool)>,
    commands: Vec<Command>,
    pause_after: Option<usize>,
    take_over: usize,
    refuse: bool,
}

impl Sink for Rec {
    fn frame(&mut self, more: bool, body: &mut Body<'_>) -> Flow {
        if self.refuse {
            return Flow::Refuse;
        }
        let taken = body.len() > self.take_over;
        let bytes = if taken {
            body.take().to_vec()
        } else if let Some(w) = body.window::<8>() {
            w[..body.len().min(8)].iter().copied().chain(body.as_slice().iter().skip(8).copied()).collect()
        } else {
            body.as_slice().to_vec()
        };
        self.frames.push((more, bytes, taken));
        if self.pause_after == Some(self.frames.len()) {
            return Flow::Pause;
        }
        Flow::Go
    }

    fn command(&mut self, cmd: &Command, _body: &[u8]) -> Flow {
        self.commands.push(cmd.clone());
        Flow::Go
    }
}

fn wire(version: Version, frames: &[(&[u8], bool)]) -> BytesMut {
    let mut out = Vec::new();
    for (b, more) in frames {
        encode_frame_for(version, b, *more, &mut out);
    }
    BytesMut::from(&out[..])
}

#[test]
fn frames_reach_the_sink_in_every_revision() {
    for v in [Version::V1_0, Version::V2_0, Version::V3_0, Version::V3_1] {
        let big = vec![7u8; 300];
        let mut rx = wire(v, &[(b"a", true), (b"", true), (&big, false), (b"tail", false)]);
        let mut sink = Rec { take_over: 100, ..Rec::default() };
        assert_eq!(phase(v).decode(&mut rx, &mut sink), Ok(Decoded::Drained), "{v:?}");
        assert!(rx.is_empty());
        assert_eq!(
            sink.frames,
            vec![
                (true, b"a".to_vec(), false),
                (true, vec![], false),
                (false, big.clone(), true),
                (false, b"tail".to_vec(), false)
            ],
            "{v:?}"
        );
    }
}

#[test]
fn a_taken_body_shares_the_buffer() {
    let mut rx = wire(Version::V3_1, &[(&[1u8; 500], false)]);
    let base = rx.as_ptr() as usize;
    struct Take(Option<Bytes>);
    impl Sink for Take {
        fn frame(&mut self, _more: bool, body: &mut Body<'_>) -> Flow {
            self.0 = Some(body.take());
            Flow::Go
        }
        fn command(&mut self, _: &Command, _: &[u8]) -> Flow {
            Flow::Go
        }
    }
    let mut sink = Take(None);
    phase(Version::V3_1).decode(&mut rx, &mut sink).unwrap();
    assert_eq!(sink.0.unwrap().as_ptr() as usize, base + 9, "no copy: the body is where it arrived");
}

#[test]
fn partial_frames_wait_and_say_what_is_missing() {
    let full = wire(Version::V3_1, &[(b"one", false), (&[2u8; 1000], false)]);
    let mut rx = BytesMut::from(&full[..5 + 9 + 10]);
    let mut d = phase(Version::V3_1);
    let mut sink = Rec::default();
    assert_eq!(d.decode(&mut rx, &mut sink), Ok(Decoded::Partial { missing: 990 }));
    assert_eq!(rx.len(), 9 + 10, "the incomplete frame stays at the front");
    rx.extend_from_slice(&full[5 + 9 + 10..]);
    assert_eq!(d.decode(&mut rx, &mut sink), Ok(Decoded::Drained));
    assert_eq!(sink.frames.len(), 2);
    let mut half_header = BytesMut::from(&[0x02u8, 0, 0][..]);
    assert_eq!(d.decode(&mut half_header, &mut sink), Ok(Decoded::Drained), "a partial header is not an error");
    assert_eq!(half_header.len(), 3);
}

#[test]
fn the_sink_pauses_and_refuses() {
    let mut rx = wire(Version::V3_1, &[(b"1", false), (b"2", false), (b"3", false)]);
    let mut d = phase(Version::V3_1);
    let mut sink = Rec { pause_after: Some(1), ..Rec::default() };
    assert_eq!(d.decode(&mut rx, &mut sink), Ok(Decoded::Paused));
    assert_eq!(rx.len(), 6, "what follows the paused frame stays");
    sink.pause_after = None;
    assert_eq!(d.decode(&mut rx, &mut sink), Ok(Decoded::Drained));
    assert_eq!(sink.frames.len(), 3);
    let mut rx = wire(Version::V3_1, &[(b"x", false)]);
    let mut refusing = Rec { refuse: true, ..Rec::default() };
    assert_eq!(d.decode(&mut rx, &mut refusing), Err(Error::Refused));
}

#[test]
fn the_size_limit_is_enforced_before_the_body_arrives() {
    let mut d = DataPhase::new(Version::V3_1, Some(10), None, false, HeartbeatConfig::default(), Instant::now());
    let mut rx = BytesMut::from(&[0x00u8, 11][..]);
    assert_eq!(d.decode(&mut rx, &mut Rec::default()), Err(Error::Frame(FrameError::TooLarge { len: 11, max: 10 })));
}

#[test]
fn socket_commands_go_to_the_sink_and_the_protocols_are_answered() {
    let mut out = Vec::new();
    Command::Subscribe(Bytes::from_static(b"t")).encode(&mut out);
    Command::Ping { ttl: 0, context: Bytes::from_static(b"ctx") }.encode(&mut out);
    Command::Join(Bytes::from_static(b"g")).encode(&mut out);
    Command::Pong { context: Bytes::new() }.encode(&mut out);
    Command::Unknown { name: Bytes::from_static(b"x"), data: Bytes::new() }.encode(&mut out);
    let mut rx = BytesMut::from(&out[..]);
    let mut d = phase(Version::V3_1);
    let mut sink = Rec::default();
    assert_eq!(d.decode(&mut rx, &mut sink), Ok(Decoded::Drained));
    assert_eq!(sink.commands, vec![Command::Subscribe(Bytes::from_static(b"t")), Command::Join(Bytes::from_static(b"g"))]);
    assert!(d.has_control(), "the PING is answered");
    let mut tx = Vec::new();
    d.flush_control(&mut tx);
    let mut pong = Vec::new();
    Command::Pong { context: Bytes::from_static(b"ctx") }.encode(&mut pong);
    assert_eq!(tx, pong);
}

#[test]
fn ready_and_error_end_the_data_phase() {
    for (cmd, want) in [
        (Command::Ready(crate::Metadata::new()), Error::UnexpectedCommand(Bytes::from_static(b"READY"))),
        (Command::Error { reason: Bytes::from_static(b"bye") }, Error::Peer { reason: Bytes::from_static(b"bye") }),
    ] {
        let mut out = Vec::new();
        cmd.encode(&mut out);
        let mut rx = BytesMut::from(&out[..]);
        assert_eq!(phase(Version::V3_1).decode(&mut rx, &mut Rec::default()), Err(want));
    }
}

#[test]
fn control_waits_for_a_message_boundary() {
    let mut d = DataPhase::new(
        Version::V3_1,
        None,
        None,
        false,
        HeartbeatConfig { interval: Some(Duration::from_millis(10)), timeout: None, ttl_ds: 3, by_transport: false },
        Instant::now(),
    );
    let mut tx = Vec::new();
    d.encode_frame(&mut tx, true, b"first");
    d.expire(Instant::now() + Duration::from_millis(10), false).unwrap();
    assert!(!d.has_control(), "no PING is queued inside a message: the next interval sends it");
    d.encode_frame(&mut tx, false, b"last");
    d.expire(Instant::now() + Duration::from_millis(20), false).unwrap();
    assert!(d.has_control());
    let before = tx.len();
    d.flush_control(&mut tx);
    let mut ping = Vec::new();
    Command::Ping { ttl: 3, context: Bytes::new() }.encode(&mut ping);
    assert_eq!(&tx[before..], &ping[..]);
}

#[test]
fn a_transport_ping_is_noted_not_encoded_and_silence_still_times_out() {
    let t0 = Instant::now();
    let ms = Duration::from_millis;
    let hb = HeartbeatConfig { interval: Some(ms(10)), timeout: Some(ms(30)), ttl_ds: 0, by_transport: true };
    let mut d = DataPhase::new(Version::V3_0, None, None, false, hb, t0);
    let mut tx = Vec::new();
    d.encode_frame(&mut tx, true, b"half a message");
    d.expire(t0 + ms(10), false).unwrap();
    assert!(d.take_transport_ping(), "due even inside a message: the transport sends it between frames");
    assert!(!d.take_transport_ping(), "once per PING");
    assert!(!d.has_control(), "no ZMTP PING is encoded");
    d.note_input(); // the pong
    d.expire(t0 + ms(20), false).unwrap();
    assert!(d.take_transport_ping());
    d.expire(t0 + ms(30), false).unwrap();
    d.expire(t0 + ms(40), false).unwrap();
    assert!(d.expire(t0 + ms(61), false).is_err(), "nothing arrived since the PING at 20 ms");
}

#[test]
fn the_short_path_and_header_only_write_what_the_general_path_writes() {
    for v in [Version::V1_0, Version::V2_0, Version::V3_0, Version::V3_1] {
        for (len, more) in [(0usize, false), (5, true), (38, false)] {
            let body: Vec<u8> = (0..len as u8).collect();
            let mut window = [0xEEu8; 38];
            window[..len].copy_from_slice(&body);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            phase(v).encode_short(&mut a, more, len, &window);
            encode_frame_for(v, &body, more, &mut b);
            assert_eq!(a, b, "{v:?} {len} {more}");
        }
        let big = vec![3u8; 9000];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(phase(v).encode_header_only(&mut a, true, big.len(), Some(3)));
        a.extend_from_slice(&big);
        encode_frame_for(v, &big, true, &mut b);
        assert_eq!(a, b, "{v:?}");
    }
}

#[test]
fn subscriptions_become_commands_for_31_only() {
    let mut d = DataPhase::new(Version::V3_1, None, None, true, HeartbeatConfig::default(), Instant::now());
    let mut tx = Vec::new();
    d.encode_short(&mut tx, false, 3, b"\x01ab");
    let mut want = Vec::new();
    crate::command::encode_subscription(Version::V3_1, true, b"ab", &mut want);
    assert_eq!(tx, want);
    let mut tx = Vec::new();
    d.encode_frame(&mut tx, true, b"\x01ab");
    assert_eq!(tx, [1, 3, 1, b'a', b'b'], "a multi-part message is not a subscription");
    let mut d = DataPhase::new(Version::V3_0, None, None, true, HeartbeatConfig::default(), Instant::now());
    let mut tx = Vec::new();
    d.encode_short(&mut tx, false, 3, b"\x00ab");
    assert_eq!(tx, [0, 3, 0, b'a', b'b'], "3.0: the message form");
}

#[test]
fn legacy_peers_get_no_commands() {
    for v in [Version::V1_0, Version::V2_0] {
        let mut d = phase(v);
        let mut tx = Vec::new();
        d.encode_command_body(&mut tx, b"\x04JOINg");
        d.encode_command(&Command::Ping { ttl: 0, context: Bytes::new() }, &mut tx);
        assert!(tx.is_empty(), "{v:?}");
    }
}
