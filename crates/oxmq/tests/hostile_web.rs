//! Hostile WebSocket peers (beside `hostile.rs`): raw TCP clients that send a malformed or
//! oversized HTTP upgrade, an unmasked client frame, a fragmented control frame, a text frame,
//! a stray continuation frame or a fragmented message past MAXMSGSIZE
//! to an oxmq PULL bound at ws://, while a well-behaved oxmq PUSH keeps talking to it. Each
//! hostile connection is answered (an HTTP error for a bad upgrade) and closed, reported as
//! HANDSHAKE_FAILED_PROTOCOL with libzmq's ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED, counted as a
//! protocol error, and nothing it sent is delivered. (TLS refusals: `tls.rs`.)

mod common;

use common::raw::expect_closed;
use common::*;
use oxmq::monitor::{event as ev, protocol_error};
use oxmq::{opt, Context, MonitorEvent, Socket, SocketType as T};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const CLOSE_DEADLINE: Duration = Duration::from_secs(5);

struct Server {
    _ctx: Context,
    pull: Socket,
    good: Socket,
    mon: Socket,
    ep: String,
    seq: u32,
}

impl Server {
    fn new() -> Server {
        Server::with_maxmsgsize(-1)
    }

    fn with_maxmsgsize(max: i64) -> Server {
        let ctx = Context::new();
        let mut pull = socket(&ctx, T::Pull);
        pull.set_bytes(opt::MAXMSGSIZE, &max.to_ne_bytes()).unwrap();
        let mon_ep = format!("inproc://{}", unique("mon"));
        pull.monitor(Some(&mon_ep), ev::HANDSHAKE_FAILED_PROTOCOL).unwrap();
        let mut mon = ctx.socket(T::Pair).unwrap();
        mon.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
        mon.connect(&mon_ep).unwrap();
        pull.bind("ws://127.0.0.1:*/zmq").unwrap();
        let ep = pull.last_endpoint().unwrap();
        let mut good = socket(&ctx, T::Push);
        good.connect(&ep).unwrap();
        let mut s = Server { _ctx: ctx, pull, good, mon, ep, seq: 0 };
        s.exchange();
        s
    }

    /// The good peer's message arrives, in order.
    fn exchange(&mut self) {
        self.seq += 1;
        let m = format!("good-{}", self.seq);
        self.good.send(m.as_bytes(), 0).unwrap();
        assert_eq!(recv_bytes(&mut self.pull), m.as_bytes());
    }

    fn addr(&self) -> String {
        let rest = self.ep.trim_start_matches("ws://");
        rest[..rest.find('/').unwrap()].to_string()
    }

    fn raw(&self) -> TcpStream {
        let c = TcpStream::connect(self.addr()).unwrap();
        c.set_read_timeout(Some(CLOSE_DEADLINE)).unwrap();
        c
    }

    /// A raw client past a valid upgrade (ZWS2.0/NULL).
    fn upgraded(&self) -> TcpStream {
        let mut c = self.raw();
        write!(
            c,
            "GET /zmq HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Protocol: ZWS2.0/NULL\r\n\r\n"
        )
        .unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            c.read_exact(&mut b).unwrap();
            head.push(b[0]);
        }
        assert!(head.starts_with(b"HTTP/1.1 101"));
        c
    }

    /// The monitor reports the refusal; the good peer goes on; the counter moved.
    fn refused(&mut self, what: &str, before: u64) {
        let e = MonitorEvent::recv(&mut self.mon, 1, 0).unwrap_or_else(|e| panic!("{what}: no event: {e}"));
        assert_eq!((e.event, e.value), (ev::HANDSHAKE_FAILED_PROTOCOL, protocol_error::WS_UNSPECIFIED), "{what}");
        assert_eq!(self.pull.stats().protocol_errors, before + 1, "{what}");
        self.exchange();
        assert_quiet(&mut self.pull);
    }
}

/// Reads the server's answer up to the close: its bytes.
fn answer(c: &mut TcpStream, what: &str) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        assert!(got.len() < 1 << 16, "{what}: runaway answer");
    }
}

#[test]
fn a_malformed_upgrade_is_answered_400_and_closed() {
    let mut s = Server::new();
    for (i, req) in [
        &b"GARBAGE / HTTP/1.1\r\n\r\n"[..],
        b"GET /zmq HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /zmq HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: a\r\n\
          Sec-WebSocket-Protocol: chat\r\n\r\n",
        b"GET /zmq HTTP/1.1\r\nbad header line\r\n\r\n",
    ]
    .into_iter()
    .enumerate()
    {
        let before = s.pull.stats().protocol_errors;
        let mut c = s.raw();
        c.write_all(req).unwrap();
        let got = answer(&mut c, "malformed");
        assert!(got.starts_with(b"HTTP/1.1 400"), "{i}: {:?}", String::from_utf8_lossy(&got));
        s.refused(&format!("malformed upgrade {i}"), before);
    }
}

#[test]
fn an_oversized_upgrade_is_answered_431_and_closed() {
    let mut s = Server::new();
    let before = s.pull.stats().protocol_errors;
    let mut c = s.raw();
    let mut req = b"GET /zmq HTTP/1.1\r\n".to_vec();
    while req.len() < 20_000 {
        req.extend_from_slice(b"X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    let _ = c.write_all(&req); // the server may close before it has read it all
    let got = answer(&mut c, "oversized");
    assert!(got.starts_with(b"HTTP/1.1 431"), "{:?}", String::from_utf8_lossy(&got));
    s.refused("oversized upgrade", before);
}

#[test]
fn an_unmasked_client_frame_is_refused() {
    let mut s = Server::new();
    let before = s.pull.stats().protocol_errors;
    let mut c = s.upgraded();
    c.write_all(&[0x82, 0x03, 0x00, b'h', b'i']).unwrap();
    expect_closed(&mut c, CLOSE_DEADLINE, "unmasked frame");
    s.refused("unmasked frame", before);
}

#[test]
fn a_fragmented_control_frame_is_refused() {
    let mut s = Server::new();
    let before = s.pull.stats().protocol_errors;
    let mut c = s.upgraded();
    // A ping without FIN (RFC 6455 §5.5: control frames are never fragmented).
    c.write_all(&[0x09, 0x82, 1, 2, 3, 4, b'x' ^ 1, b'y' ^ 2]).unwrap();
    expect_closed(&mut c, CLOSE_DEADLINE, "fragmented ping");
    s.refused("fragmented control frame", before);
}

#[test]
fn text_and_stray_continuation_frames_are_refused() {
    let mut s = Server::new();
    let cases: [(&str, &[u8]); 3] = [
        ("text", &[0x81, 0x81, 0, 0, 0, 0, b'a']),
        ("a continuation with no message begun", &[0x80, 0x81, 0, 0, 0, 0, 0]),
        ("a new message inside a fragmented one", &[0x02, 0x81, 0, 0, 0, 0, 0, 0x82, 0x81, 0, 0, 0, 0, 0]),
    ];
    for (what, frames) in cases {
        let before = s.pull.stats().protocol_errors;
        let mut c = s.upgraded();
        c.write_all(frames).unwrap();
        expect_closed(&mut c, CLOSE_DEADLINE, what);
        s.refused(what, before);
    }
}

#[test]
fn a_fragmented_message_past_maxmsgsize_is_refused_before_it_is_whole() {
    let mut s = Server::with_maxmsgsize(1000);
    let before = s.pull.stats().protocol_errors;
    let mut c = s.upgraded();
    // Fragments of 600 bytes, never the last: refused at the second, with no FIN ever sent.
    for _ in 0..2 {
        let mut f = vec![0x02, 0x80 | 126];
        f.extend_from_slice(&600u16.to_be_bytes());
        f.extend_from_slice(&[0; 4]);
        f.extend_from_slice(&[0; 600]);
        let _ = c.write_all(&f);
    }
    expect_closed(&mut c, CLOSE_DEADLINE, "oversized fragments");
    s.refused("oversized fragments", before);
}
