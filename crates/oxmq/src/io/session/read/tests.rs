//! The read path's core, `decode_into`: ZMTP frames into the socket's pipe as the socket
//! type's policy takes them (everything; a PUB's subscriptions only; nothing for a PUSH;
//! SUBSCRIBE/CANCEL and JOIN/LEAVE commands as messages), whole messages only, a full pipe
//! pausing the decoder with the message held, and the receive buffer grown towards a frame.

use super::decode_into;
use crate::chunk::MAX_PIECE;
use crate::io::config::{Inbound, LinkPolicy};
use crate::io::session::buffers::{RxBuf, LARGE_READ_CHUNK};
use crate::msg::Msg;
use crate::pipe::{pipe, PipeEnd, Read};
use std::time::Instant;
use zmtp::data::{DataPhase, Decoded};
use zmtp::Version;

fn policy(inbound: Inbound, subscriptions: bool, joins: bool) -> LinkPolicy {
    let mut p = crate::io::sim::config(zmtp::SocketType::Dealer, (0, 0), (100, 0)).policy;
    p.inbound = inbound;
    p.takes_subscriptions = subscriptions;
    p.takes_joins = joins;
    p
}

/// A connection's read side: its data phase, buffers, and the pipe (the session's end, and
/// the socket's end to read what arrived), the socket's direction bounded by `hwm`.
struct Reader {
    data: DataPhase,
    rx: RxBuf,
    partial: Vec<Msg>,
    held: Vec<Msg>,
    socket: PipeEnd,
    session: PipeEnd,
    policy: LinkPolicy,
}

impl Reader {
    fn new(policy: LinkPolicy, hwm: u64, max: Option<u64>) -> Reader {
        let (socket, session) = pipe([0, hwm]);
        let data = DataPhase::new(Version::V3_1, max, None, false, Default::default(), Instant::now());
        Reader { data, rx: RxBuf::new(), partial: Vec::new(), held: Vec::new(), socket, session, policy }
    }

    /// The peer's bytes arrive; decoded as a read batch is, then flushed.
    fn input(&mut self, bytes: &[u8]) -> Result<Decoded, zmtp::Error> {
        self.rx.buf.extend_from_slice(bytes);
        let r = decode_into(&mut self.data, &mut self.rx, &mut self.partial, &mut self.held, &mut self.session, &self.policy);
        self.session.flush();
        r
    }

    /// Every frame the socket can read now, with its flags.
    fn arrived(&mut self) -> Vec<Msg> {
        std::iter::from_fn(|| match self.socket.read() {
            Read::Msg(m) => Some(m),
            _ => None,
        })
        .collect()
    }
}

fn wire(frames: &[(&[u8], bool)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (body, more) in frames {
        zmtp::encode_frame_for(Version::V3_1, body, *more, &mut out);
    }
    out
}

fn command(cmd: zmtp::Command) -> Vec<u8> {
    let mut out = Vec::new();
    cmd.encode(&mut out);
    out
}

fn bodies(msgs: &[Msg]) -> Vec<(Vec<u8>, bool)> {
    msgs.iter().map(|m| (m.to_vec(), m.more())).collect()
}

#[test]
fn every_message_arrives_whole_and_in_order_whatever_the_reads() {
    let (small, mid, large) = (vec![1u8; 30], vec![2u8; MAX_PIECE], vec![3u8; MAX_PIECE + 1]);
    let bytes = wire(&[(b"a", true), (&small, true), (b"", false), (&mid, false), (&large, false)]);
    let want = vec![(b"a".to_vec(), true), (small.clone(), true), (vec![], false), (mid.clone(), false), (large.clone(), false)];
    for piece in [1, 7, 300, bytes.len()] {
        let mut r = Reader::new(policy(Inbound::All, false, false), 0, None);
        let mut got = Vec::new();
        for chunk in bytes.chunks(piece) {
            r.input(chunk).unwrap();
            let now = r.arrived();
            assert!(now.last().is_none_or(|m| !m.more()), "never half a message in the pipe (reads of {piece})");
            got.extend(now);
        }
        assert_eq!(bodies(&got), want, "reads of {piece} bytes");
        assert!(r.partial.is_empty() && r.held.is_empty() && r.rx.buf.is_empty());
    }
}

#[test]
fn a_push_takes_nothing_from_its_peers() {
    let mut r = Reader::new(policy(Inbound::Nothing, false, false), 0, None);
    let bytes = wire(&[(b"\x01sub", false), (b"data", false), (b"multi", true), (b"part", false)]);
    assert_eq!(r.input(&bytes), Ok(Decoded::Drained), "read and dropped, not left in the buffer");
    assert!(r.rx.buf.is_empty());
    assert_eq!(r.arrived().len(), 0);
}

#[test]
fn a_pub_takes_subscriptions_only() {
    let mut r = Reader::new(policy(Inbound::Subscriptions, true, false), 0, None);
    let mut bytes = wire(&[(b"\x01topic", false), (b"data", false), (b"\x01two", true), (b"frames", false), (b"", false)]);
    bytes.extend(wire(&[(b"\x00topic", false)]));
    bytes.extend(command(zmtp::Command::Subscribe(bytes::Bytes::from_static(b"cmd"))));
    bytes.extend(command(zmtp::Command::Cancel(bytes::Bytes::from_static(b"cmd"))));
    r.input(&bytes).unwrap();
    let got: Vec<Vec<u8>> = r.arrived().iter().map(|m| m.to_vec()).collect();
    assert_eq!(got, [&b"\x01topic"[..], b"\x00topic", b"\x01cmd", b"\x00cmd"], "3.0 messages and 3.1 commands alike");
}

#[test]
fn commands_a_socket_does_not_take_are_ignored() {
    let mut r = Reader::new(policy(Inbound::All, false, false), 0, None);
    let mut bytes = command(zmtp::Command::Subscribe(bytes::Bytes::from_static(b"t")));
    bytes.extend(command(zmtp::Command::Join(bytes::Bytes::from_static(b"g"))));
    bytes.extend(wire(&[(b"data", false)]));
    r.input(&bytes).unwrap();
    assert_eq!(bodies(&r.arrived()), [(b"data".to_vec(), false)]);
}

#[test]
fn joins_go_up_as_command_messages() {
    let mut r = Reader::new(policy(Inbound::All, false, true), 0, None);
    let mut bytes = command(zmtp::Command::Join(bytes::Bytes::from_static(b"news")));
    bytes.extend(command(zmtp::Command::Leave(bytes::Bytes::from_static(b"news"))));
    r.input(&bytes).unwrap();
    let got = r.arrived();
    assert!(got.iter().all(Msg::is_command));
    let cmds: Vec<_> = got.iter().map(|m| zmtp::Command::parse(m).unwrap()).collect();
    assert_eq!(cmds, [zmtp::Command::Join("news".into()), zmtp::Command::Leave("news".into())]);
}

#[test]
fn a_full_pipe_pauses_the_decoder_with_the_message_held() {
    let mut r = Reader::new(policy(Inbound::All, false, false), 1, None);
    let bytes = wire(&[(b"one", false), (b"two", true), (b"two'", false), (b"three", false)]);
    assert_eq!(r.input(&bytes), Ok(Decoded::Paused));
    assert_eq!(bodies(&r.held), [(b"two".to_vec(), true), (b"two'".to_vec(), false)], "held whole");
    assert!(!r.rx.buf.is_empty(), "the rest waits in the buffer");
    assert_eq!(bodies(&r.arrived()), [(b"one".to_vec(), false)]);
    // The socket read: room again (the session's write activation delivers what it held).
    assert!(r.session.check_write());
    for m in r.held.drain(..) {
        r.session.write(m);
    }
    assert_eq!(r.input(&[]), Ok(Decoded::Paused), "full again at once, with three");
    assert_eq!(bodies(&r.arrived()), [(b"two".to_vec(), true), (b"two'".to_vec(), false)]);
    assert!(r.session.check_write());
    for m in r.held.drain(..) {
        r.session.write(m);
    }
    assert_eq!(r.input(&[]), Ok(Decoded::Drained));
    assert_eq!(bodies(&r.arrived()), [(b"three".to_vec(), false)], "nothing lost, nothing twice");
}

#[test]
fn a_frame_still_arriving_grows_the_buffer_and_large_ones_switch_the_read_size() {
    let mut r = Reader::new(policy(Inbound::All, false, false), 0, None);
    let body = vec![5u8; 300_000];
    let bytes = wire(&[(&body, false)]);
    let first = 100_000;
    assert!(matches!(r.input(&bytes[..first]), Ok(Decoded::Partial { missing }) if missing == (bytes.len() - first) as u64));
    assert!(r.rx.buf.capacity() - r.rx.buf.len() >= 32 * 1024, "room made towards it");
    r.input(&bytes[first..]).unwrap();
    let got = r.arrived();
    assert_eq!((got.len(), got[0].len()), (1, body.len()));
    assert!(got[0].iter().all(|&b| b == 5));
    assert_eq!(r.rx.read_chunk, LARGE_READ_CHUNK, "large frames are read in large steps from now on");
}

#[test]
fn a_frame_over_the_limit_ends_the_connection() {
    let mut r = Reader::new(policy(Inbound::All, false, false), 0, Some(1000));
    let bytes = wire(&[(b"fine", false), (&[0u8; 1001], false)]);
    assert!(matches!(r.input(&bytes), Err(zmtp::Error::Frame(zmtp::FrameError::TooLarge { .. }))));
    assert_eq!(bodies(&r.arrived()), [(b"fine".to_vec(), false)], "what came before it is delivered");
}
