//! The write path's core, `fill`: frames from the pipe into one batch, large bodies written
//! from their own memory, the protocol's own commands first, a message cut short by a
//! reconnect skipped to its end, the batch bounded, a closed and empty pipe reported.

use super::{fill, MAX_BIGS, WRITE_BATCH};
use crate::io::session::buffers::TxBuf;
use crate::io::session::read::ZERO_COPY_MIN;
use crate::msg::{Msg, COMMAND, ROUTING_ID};
use crate::pipe::{pipe, PipeEnd};
use std::time::{Duration, Instant};
use zmtp::data::{Body, DataPhase, Flow, Sink};
use zmtp::Version;

/// What a peer decodes: frames (body, MORE) and commands, in order.
#[derive(Default)]
struct Peer(Vec<Seen>);

#[derive(Debug, PartialEq)]
enum Seen {
    Frame(Vec<u8>, bool),
    Command(zmtp::Command),
}

impl Sink for Peer {
    fn frame(&mut self, more: bool, body: &mut Body<'_>) -> Flow {
        self.0.push(Seen::Frame(body.as_slice().to_vec(), more));
        Flow::Go
    }
    fn command(&mut self, cmd: &zmtp::Command, _body: &[u8]) -> Flow {
        self.0.push(Seen::Command(cmd.clone()));
        Flow::Go
    }
    fn control(&mut self, cmd: &zmtp::Command) {
        self.0.push(Seen::Command(cmd.clone()));
    }
}

fn data_phase() -> DataPhase {
    DataPhase::new(Version::V3_1, None, None, false, Default::default(), Instant::now())
}

/// The batch as the stream carries it (large bodies at their offsets), consumed.
fn drain(tx: &mut TxBuf) -> Vec<u8> {
    let mut wire = Vec::new();
    let mut start = tx.pos;
    for (at, m) in &tx.bigs {
        wire.extend_from_slice(&tx.buf[start..*at]);
        wire.extend_from_slice(m);
        start = *at;
    }
    wire.extend_from_slice(&tx.buf[start..]);
    tx.advance(tx.buf.len() - tx.pos + tx.big_bytes);
    wire
}

fn decode(wire: Vec<u8>) -> Vec<Seen> {
    let mut peer = Peer::default();
    let mut buf = bytes::BytesMut::from(&wire[..]);
    data_phase().decode(&mut buf, &mut peer).expect("the batch decodes");
    assert!(buf.is_empty(), "whole frames only");
    peer.0
}

fn frame(body: &[u8], more: bool) -> Seen {
    Seen::Frame(body.to_vec(), more)
}

/// The socket's end (writing) and the session's (read by `fill`).
fn pipes() -> (PipeEnd, PipeEnd) {
    pipe([0, 0])
}

fn send(socket: &mut PipeEnd, frames: &[&[u8]]) {
    for (i, f) in frames.iter().enumerate() {
        let mut m = Msg::copy_from(f);
        m.set_more(i + 1 < frames.len());
        socket.write(m);
    }
    socket.flush();
}

#[test]
fn frames_go_out_as_written_with_large_bodies_from_their_own_memory() {
    let (mut socket, mut session) = pipes();
    let (mid, large) = (vec![2u8; 1000], vec![3u8; ZERO_COPY_MIN]);
    send(&mut socket, &[b"a", b"", &mid]);
    send(&mut socket, &[&large]);
    let (mut d, mut tx) = (data_phase(), TxBuf::new());
    let (mut skip, mut drained) = (false, false);
    fill(&mut d, &mut tx, &mut session, &mut skip, &mut drained);
    assert_eq!((tx.bigs.len(), tx.big_bytes), (1, large.len()), "the large body is not copied");
    assert!(tx.buf.len() < 1100, "the batch holds its header only: {}", tx.buf.len());
    assert!(!drained);
    assert_eq!(decode(drain(&mut tx)), [frame(b"a", true), frame(b"", true), frame(&mid, false), frame(&large, false)]);
}

#[test]
fn a_message_cut_short_by_a_reconnect_is_skipped_to_its_end() {
    let (mut socket, mut session) = pipes();
    send(&mut socket, &[b"rest of", b"the old message"]);
    send(&mut socket, &[b"next", b"whole"]);
    let (mut d, mut tx) = (data_phase(), TxBuf::new());
    let (mut skip, mut drained) = (true, false);
    fill(&mut d, &mut tx, &mut session, &mut skip, &mut drained);
    assert!(!skip, "at a boundary again");
    assert_eq!(decode(drain(&mut tx)), [frame(b"next", true), frame(b"whole", false)]);
}

#[test]
fn routing_ids_stay_home_and_command_messages_go_as_commands() {
    let (mut socket, mut session) = pipes();
    let mut id = Msg::from("peer-id");
    id.set_flags(ROUTING_ID);
    socket.write(id);
    let mut body = Vec::new();
    zmtp::Command::Join("g".into()).encode_body(&mut body);
    let mut join = Msg::from(body);
    join.set_flags(COMMAND);
    socket.write(join);
    send(&mut socket, &[b"data"]);
    let (mut d, mut tx) = (data_phase(), TxBuf::new());
    fill(&mut d, &mut tx, &mut session, &mut false, &mut false);
    assert_eq!(decode(drain(&mut tx)), [Seen::Command(zmtp::Command::Join("g".into())), frame(b"data", false)]);
}

#[test]
fn the_protocols_own_commands_go_first() {
    let (mut socket, mut session) = pipes();
    let t0 = Instant::now();
    let hb = zmtp::HeartbeatConfig { interval: Some(Duration::from_millis(10)), timeout: None, ttl_ds: 0, by_transport: false };
    let mut d = DataPhase::new(Version::V3_1, None, None, false, hb, t0);
    d.expire(t0 + Duration::from_millis(10), false).unwrap();
    assert!(d.has_control(), "a PING is due");
    send(&mut socket, &[b"data"]);
    let mut tx = TxBuf::new();
    // The pipe is looked at afresh once per batch, when nothing is encoded yet: with a PING
    // encoded first, the data goes in the next batch (`write_side` fills again after writing).
    let mut seen = Vec::new();
    for _ in 0..2 {
        fill(&mut d, &mut tx, &mut session, &mut false, &mut false);
        seen.extend(decode(drain(&mut tx)));
    }
    assert!(matches!(seen[0], Seen::Command(zmtp::Command::Ping { .. })), "{seen:?}");
    assert_eq!(seen[1..], [frame(b"data", false)]);
}

#[test]
fn a_batch_is_bounded_and_the_rest_waits_in_the_pipe() {
    let (mut socket, mut session) = pipes();
    let n = 3 * WRITE_BATCH / 1000;
    for _ in 0..n {
        send(&mut socket, &[&[7u8; 1000]]);
    }
    let (mut d, mut tx) = (data_phase(), TxBuf::new());
    let mut seen = 0;
    let mut batches = 0;
    while seen < n {
        fill(&mut d, &mut tx, &mut session, &mut false, &mut false);
        assert!(tx.buf.len() < WRITE_BATCH + 1100, "one batch: {}", tx.buf.len());
        seen += decode(drain(&mut tx)).len();
        batches += 1;
    }
    assert_eq!((seen, batches), (n, 4), "every message, in batches of about WRITE_BATCH");
    // Large bodies: at most MAX_BIGS per batch (one writev).
    for _ in 0..MAX_BIGS + 4 {
        send(&mut socket, &[&[8u8; ZERO_COPY_MIN]]);
    }
    fill(&mut d, &mut tx, &mut session, &mut false, &mut false);
    assert_eq!(tx.bigs.len(), MAX_BIGS);
    assert_eq!(decode(drain(&mut tx)).len(), MAX_BIGS);
    fill(&mut d, &mut tx, &mut session, &mut false, &mut false);
    assert_eq!(decode(drain(&mut tx)).len(), 4);
}

#[test]
fn a_closed_pipe_is_reported_drained_after_its_last_message() {
    let (mut socket, mut session) = pipes();
    send(&mut socket, &[b"last"]);
    let mut half = Msg::from("half, never completed");
    half.set_more(true);
    socket.write(half);
    drop(socket);
    let (mut d, mut tx) = (data_phase(), TxBuf::new());
    let (mut drained, mut seen) = (false, Vec::new());
    for _ in 0..2 {
        fill(&mut d, &mut tx, &mut session, &mut false, &mut drained);
        seen.extend(decode(drain(&mut tx)));
    }
    assert!(drained, "found by the batch after the last message's");
    assert_eq!(seen, [frame(b"last", false)], "the half message is not sent");
}
