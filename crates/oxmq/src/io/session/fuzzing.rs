//! The engine's data path under a fuzzer (and its unit tests): arbitrary bytes decoded through
//! the session's own sink into a real pipe, as a connection would decode them, and what
//! arrived written back through the session's own encoder and decoded again. Driven by the
//! fuzz target `engine_data` (`fuzz/`), which reaches it through `oxmq::fuzzing`.

use super::buffers::{RxBuf, TxBuf};
use super::read::decode_into;
use super::write::fill;
use crate::io::config::Inbound;
use crate::msg::Msg;
use crate::pipe::{pipe, PipeEnd, Read};
use std::time::Instant;
use zmtp::data::{Body, DataPhase, Decoded, Flow, Sink};
use zmtp::Version;

/// The first byte picks the revision (bits 0-1), the inbound policy (bits 2-3: all, a PUB's
/// subscriptions only, a PUSH's nothing; bit 4: commands into the pipe), subscriptions as
/// commands on the way out (bit 5) and a tiny HWM (bit 6); the second the read size (1-256).
/// The rest arrives in reads of that size. Everything the pipe then holds goes back out through
/// the encoder and must decode to the same frames.
pub fn data_phase(input: &[u8]) {
    let [mode, chunk, rest @ ..] = input else { return };
    let version = [Version::V1_0, Version::V2_0, Version::V3_0, Version::V3_1][usize::from(mode & 3)];
    let inbound = [Inbound::All, Inbound::Subscriptions, Inbound::Nothing, Inbound::All][usize::from(mode >> 2 & 3)];
    let commands = mode & 0x10 != 0;
    let mut policy = crate::io::sim::config(zmtp::SocketType::Dealer, (0, 0), (100, 0)).policy;
    policy.inbound = inbound;
    policy.takes_subscriptions = commands;
    policy.takes_joins = commands;
    let hwm = if mode & 0x40 != 0 { 2 } else { 1000 };
    let (mut socket, mut session) = pipe([hwm, hwm]);
    let mut data = DataPhase::new(version, Some(64 * 1024), None, mode & 0x20 != 0, Default::default(), Instant::now());
    let (mut rx, mut partial, mut held) = (RxBuf::new(), Vec::new(), Vec::new());
    let mut received: Vec<Msg> = Vec::new();
    let take_all = |socket: &mut PipeEnd, received: &mut Vec<Msg>| {
        while let Read::Msg(m) = socket.read() {
            if !m.is_routing_id() {
                received.push(m);
            }
        }
    };
    'reads: for piece in rest.chunks(usize::from(*chunk) + 1) {
        rx.buf.extend_from_slice(piece);
        loop {
            if !held.is_empty() {
                take_all(&mut socket, &mut received); // the socket reads: room again
                if !session.check_write() {
                    continue;
                }
                for m in held.drain(..) {
                    session.write(m);
                }
            }
            match decode_into(&mut data, &mut rx, &mut partial, &mut held, &mut session, &policy) {
                Ok(Decoded::Paused) => continue,
                Ok(_) => break,
                Err(_) => break 'reads, // the connection would end here
            }
        }
        session.flush();
    }
    session.flush();
    take_all(&mut socket, &mut received);
    // Back out: the socket sends what it received; the session encodes it.
    let frames: Vec<(bool, Vec<u8>)> = received.iter().map(|m| (m.more(), m.to_vec())).collect();
    for m in received {
        socket.write(m);
    }
    socket.flush();
    let mut out = DataPhase::new(version, None, None, false, Default::default(), Instant::now());
    let (mut tx, mut skip, mut drained) = (TxBuf::new(), false, false);
    let mut wire = Vec::new();
    loop {
        fill(&mut out, &mut tx, &mut session, &mut skip, &mut drained);
        if tx.is_empty() {
            break;
        }
        // The batch as the stream would carry it: large bodies from their own memory.
        let mut start = tx.pos;
        for (at, m) in &tx.bigs {
            wire.extend_from_slice(&tx.buf[start..*at]);
            wire.extend_from_slice(m);
            start = *at;
        }
        wire.extend_from_slice(&tx.buf[start..]);
        let n = tx.buf.len() - tx.pos + tx.big_bytes;
        tx.advance(n);
    }
    let mut again = DataPhase::new(version, None, None, false, Default::default(), Instant::now());
    let mut rec = Record(Vec::new());
    let mut buf = bytes::BytesMut::from(&wire[..]);
    assert_eq!(again.decode(&mut buf, &mut rec), Ok(Decoded::Drained), "the encoder's output decodes");
    assert!(buf.is_empty());
    assert_eq!(rec.0.len(), frames.len(), "as many frames back as went out");
    assert!(rec.0 == frames, "the same frames back");
}

/// Every frame, as it arrived.
struct Record(Vec<(bool, Vec<u8>)>);

impl Sink for Record {
    fn frame(&mut self, more: bool, body: &mut Body<'_>) -> Flow {
        self.0.push((more, body.as_slice().to_vec()));
        Flow::Go
    }

    fn command(&mut self, _cmd: &zmtp::Command, _body: &[u8]) -> Flow {
        Flow::Go
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(version: Version, parts: &[(&[u8], bool)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (b, more) in parts {
            zmtp::encode_frame_for(version, b, *more, &mut out);
        }
        out
    }

    #[test]
    fn messages_go_through_the_engines_sink_and_encoder_and_back() {
        let big = vec![9u8; 20_000];
        for mode in 0..=0x7Fu8 {
            let version = [Version::V1_0, Version::V2_0, Version::V3_0, Version::V3_1][usize::from(mode & 3)];
            let wire = frames(version, &[(b"a", true), (b"", true), (&big, false), (b"\x01sub", false), (&[7; 300], false)]);
            for chunk in [0u8, 6, 255] {
                let mut input = vec![mode, chunk];
                input.extend_from_slice(&wire);
                data_phase(&input);
            }
        }
    }

    #[test]
    fn hostile_bytes_end_the_connection_without_harm() {
        for input in [&[3u8, 5, 0x10, 0][..], &[3, 0, 0x02, 0x40, 0, 0, 0, 0, 0, 0, 0], &[3, 1, 0x04, 0x00], &[0, 0, 0, 5]] {
            data_phase(input);
        }
    }
}
