//! Attacks on an oxmq CURVE server over real tcp: a HELLO without its anti-amplification
//! padding, an INITIATE whose vouch was sealed with another key than the one it claims, a
//! MESSAGE with one ciphertext bit flipped, a MESSAGE replayed. Each attacker is a raw tcp
//! client driven by the codec (`zmtp::Connection`) whose bytes are edited on the way out. Each
//! attack must end that connection only: the server reports it (monitor event, counter),
//! delivers nothing from it, and keeps serving a genuine client connected before and after.
//!
//! The same attacks are checked against the codec in `zmtp` (`mechanism/curve.rs`,
//! `tests/security.rs`); here they cross the engine, its sessions and the socket.

mod common;

use bytes::BytesMut;
use common::raw::expect_closed;
use common::*;
use oxmq::monitor::{event as ev, protocol_error as perr};
use oxmq::{opt, Context, MonitorEvent, Socket, SocketType};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use zmtp::{Config, Connection, CurveClientKeys, CurveKeyPair, Mechanism};

const DEADLINE: Duration = Duration::from_secs(10);

struct Server {
    _ctx: Context,
    pull: Socket,
    mon: Socket,
    ep: String,
    server_public: [u8; 32],
    genuine: Socket,
    sent: u32,
}

impl Server {
    /// A CURVE PULL server with a monitor, and a genuine CURVE PUSH client already talking to it.
    fn start() -> Server {
        let ctx = Context::new();
        let keys = CurveKeyPair::generate();
        let mut pull = socket(&ctx, SocketType::Pull);
        pull.set_int(opt::CURVE_SERVER, 1).unwrap();
        pull.set_bytes(opt::CURVE_SECRETKEY, keys.secret.expose()).unwrap();
        let mon_ep = format!("inproc://{}", unique("curve-attack-monitor"));
        pull.monitor(Some(&mon_ep), ev::ALL).unwrap();
        let mut mon = socket(&ctx, SocketType::Pair);
        mon.connect(&mon_ep).unwrap();
        let ep = bind(&mut pull, Transport::Tcp);
        let mut genuine = socket(&ctx, SocketType::Push);
        let me = CurveKeyPair::generate();
        genuine.set_bytes(opt::CURVE_SERVERKEY, &keys.public).unwrap();
        genuine.set_bytes(opt::CURVE_PUBLICKEY, &me.public).unwrap();
        genuine.set_bytes(opt::CURVE_SECRETKEY, me.secret.expose()).unwrap();
        genuine.connect(&ep).unwrap();
        let mut s = Server { _ctx: ctx, pull, mon, ep, server_public: keys.public, genuine, sent: 0 };
        s.genuine_round_trip();
        s.next_event(ev::HANDSHAKE_SUCCEEDED);
        s
    }

    /// The genuine client's next message arrives, and nothing else is in between.
    fn genuine_round_trip(&mut self) {
        self.sent += 1;
        let text = format!("genuine {}", self.sent);
        self.genuine.send(text.as_str(), 0).unwrap();
        assert_eq!(recv_bytes(&mut self.pull), text.as_bytes(), "the genuine client's message");
    }

    /// Skips monitor events until `want` (connection events of the attackers come first).
    fn next_event(&mut self, want: u64) -> MonitorEvent {
        let t0 = Instant::now();
        loop {
            assert!(t0.elapsed() < DEADLINE, "no {} event", ev::name(want).unwrap_or("?"));
            self.mon.set_int(opt::RCVTIMEO, 1000).unwrap();
            if let Ok(e) = MonitorEvent::recv(&mut self.mon, 1, 0) {
                if e.event == want {
                    return e;
                }
            }
        }
    }

    fn client_config(&self, keys: CurveClientKeys) -> Config {
        let mut c = Config::new(zmtp::SocketType::Push);
        c.mechanism = Mechanism::CurveClient(keys);
        c
    }

    fn honest_keys(&self) -> CurveClientKeys {
        let me = CurveKeyPair::generate();
        CurveClientKeys { public: me.public, secret: me.secret, server: self.server_public }
    }
}

/// A raw tcp client speaking through the codec; the handshake's `edit` may change each chunk
/// of bytes the codec wants to send (it is given the chunk's index).
struct Attacker {
    tcp: TcpStream,
    conn: Connection,
}

impl Attacker {
    fn connect(ep: &str, config: Config) -> Attacker {
        let addr = ep.trim_start_matches("tcp://");
        let tcp = TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        Attacker { tcp, conn: Connection::new(config) }
    }

    /// Sends what the codec has to send, edited by `edit`.
    fn flush(&mut self, edit: &mut impl FnMut(usize, &mut Vec<u8>), step: &mut usize) {
        let mut out = Vec::new();
        self.conn.poll_transmit(&mut out);
        if !out.is_empty() {
            edit(*step, &mut out);
            *step += 1;
            // The server may already have closed (a refused HELLO): that is its answer.
            let _ = self.tcp.write_all(&out);
        }
    }

    /// Runs the handshake with `edit` applied to our outgoing chunks; true if it completed.
    fn handshake(&mut self, mut edit: impl FnMut(usize, &mut Vec<u8>)) -> bool {
        let mut step = 0;
        let mut rx = BytesMut::new();
        let t0 = Instant::now();
        self.flush(&mut edit, &mut step);
        while !self.conn.is_handshake_complete() {
            assert!(t0.elapsed() < DEADLINE, "the handshake neither completed nor failed");
            let mut buf = [0u8; 4096];
            match self.tcp.read(&mut buf) {
                Ok(0) => return false,
                Ok(n) => rx.extend_from_slice(&buf[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => continue,
                Err(_) => return false,
            }
            if self.conn.handle_input(&mut rx).is_err() {
                return false;
            }
            self.flush(&mut edit, &mut step);
        }
        true
    }

    /// The bytes of one message frame, sealed in a MESSAGE.
    fn sealed(&mut self, body: &[u8]) -> Vec<u8> {
        self.conn.send_frame(body, false);
        let mut out = Vec::new();
        self.conn.poll_transmit(&mut out);
        out
    }
}

/// An attacker whose honest handshake completed (the server saw it succeed).
fn handshaken(s: &mut Server) -> Attacker {
    let mut a = Attacker::connect(&s.ep, s.client_config(s.honest_keys()));
    assert!(a.handshake(|_, _| {}), "an honest handshake failed");
    s.next_event(ev::HANDSHAKE_SUCCEEDED);
    a
}

/// A refused handshake: the monitor says why (`protocol_error`), the attack is contained and
/// counted as one handshake failure.
fn assert_refused(s: &mut Server, a: &mut Attacker, protocol_error: u64, what: &str) {
    let e = s.next_event(ev::HANDSHAKE_FAILED_PROTOCOL);
    assert_eq!(e.value, protocol_error, "{what}");
    assert_contained(s, a, what);
    assert_eq!(s.pull.stats().handshake_failures, 1);
}

/// After an attack: the attacker's connection is closed, its handshake failure (if any) was
/// reported, nothing it sent arrived, and the genuine client still gets through.
fn assert_contained(s: &mut Server, a: &mut Attacker, what: &str) {
    expect_closed(&mut a.tcp, DEADLINE, what);
    s.genuine_round_trip();
    assert_quiet(&mut s.pull);
}

#[test]
fn hello_without_padding_is_refused() {
    let mut s = Server::start();
    let mut a = Attacker::connect(&s.ep, s.client_config(s.honest_keys()));
    let mut edited = false;
    let done = a.handshake(|_, out| {
        // HELLO as a short command frame: flags 0x04, length 200, then "\x05HELLO", version
        // 1.0, and 72 bytes of zero padding. Drop the padding and fix the length.
        let Some(at) = out.windows(8).position(|w| w == b"\x04\xc8\x05HELLO") else { return };
        out.drain(at + 10..at + 82);
        out[at + 1] = 200 - 72;
        edited = true;
    });
    assert!(edited, "the codec sent no HELLO");
    assert!(!done, "a HELLO without padding was accepted");
    assert_refused(&mut s, &mut a, perr::ZMTP_MALFORMED_COMMAND_HELLO, "sent a HELLO without padding");
}

#[test]
fn initiate_with_a_forged_vouch_is_refused() {
    let mut s = Server::start();
    // The INITIATE claims a long-term key whose secret the attacker does not hold: its vouch
    // is sealed with the attacker's own secret, so it does not open under the claimed key.
    let mut keys = s.honest_keys();
    keys.public = CurveKeyPair::generate().public;
    let mut a = Attacker::connect(&s.ep, s.client_config(keys));
    assert!(!a.handshake(|_, _| {}), "a forged vouch was accepted");
    assert_refused(&mut s, &mut a, perr::ZMTP_CRYPTOGRAPHIC, "forged its vouch");
}

#[test]
fn tampered_message_drops_only_its_connection() {
    let mut s = Server::start();
    let mut a = handshaken(&mut s);
    // One good message first: the connection works.
    let good = a.sealed(b"attacker 1");
    a.tcp.write_all(&good).unwrap();
    assert_eq!(recv_bytes(&mut s.pull), b"attacker 1");
    let mut bad = a.sealed(b"attacker 2");
    let last = bad.len() - 1;
    bad[last] ^= 0x01;
    a.tcp.write_all(&bad).unwrap();
    s.next_event(ev::DISCONNECTED);
    assert_contained(&mut s, &mut a, "sent a tampered MESSAGE");
    let st = s.pull.stats();
    assert_eq!((st.protocol_errors, st.handshake_failures), (1, 0));
}

#[test]
fn replayed_message_drops_only_its_connection() {
    let mut s = Server::start();
    let mut a = handshaken(&mut s);
    let once = a.sealed(b"exactly once");
    a.tcp.write_all(&once).unwrap();
    a.tcp.write_all(&once).unwrap();
    assert_eq!(recv_bytes(&mut s.pull), b"exactly once");
    s.next_event(ev::DISCONNECTED);
    assert_contained(&mut s, &mut a, "replayed a MESSAGE");
    assert_eq!(s.pull.stats().protocol_errors, 1);
}
