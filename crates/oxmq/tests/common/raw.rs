//! ZMTP written by hand from RFC 23 (ZMTP 3.0) and RFC 37 (ZMTP 3.1), for tests that play a
//! raw peer: nothing here uses the codec under test.

use std::io::Read;
use std::time::{Duration, Instant};

/// The 10-byte signature: 0xFF, 8 bytes of padding (a ZMTP 1.0 length of 1), 0x7F.
pub const SIGNATURE: [u8; 10] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x7F];

/// A 64-byte ZMTP 3.0 greeting with the given mechanism name.
pub fn greeting(mechanism: &[u8], minor: u8) -> Vec<u8> {
    let mut g = SIGNATURE.to_vec();
    g.extend_from_slice(&[3, minor]);
    let mut mech = [0u8; 20];
    mech[..mechanism.len()].copy_from_slice(mechanism);
    g.extend_from_slice(&mech);
    g.push(0); // as-server
    g.extend_from_slice(&[0u8; 31]);
    assert_eq!(g.len(), 64);
    g
}

/// One metadata property: short name, 4-byte big-endian value length, value.
pub fn property(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut p = vec![name.len() as u8];
    p.extend_from_slice(name);
    p.extend_from_slice(&(value.len() as u32).to_be_bytes());
    p.extend_from_slice(value);
    p
}

/// A short command frame (flags 0x04) with the given body.
pub fn command(body: &[u8]) -> Vec<u8> {
    assert!(body.len() < 256);
    let mut f = vec![0x04, body.len() as u8];
    f.extend_from_slice(body);
    f
}

/// READY announcing `socket_type`.
pub fn ready(socket_type: &[u8]) -> Vec<u8> {
    let mut body = vec![5];
    body.extend_from_slice(b"READY");
    body.extend(property(b"Socket-Type", socket_type));
    command(&body)
}

/// A message frame, short or long form as its size requires.
pub fn frame(flags: u8, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    if body.len() < 256 {
        f.push(flags);
        f.push(body.len() as u8);
    } else {
        f.push(flags | 0x02);
        f.extend_from_slice(&(body.len() as u64).to_be_bytes());
    }
    f.extend_from_slice(body);
    f
}

/// Greeting + READY of a valid NULL peer of the given type: what a hostile peer sends before
/// it misbehaves at the message level.
pub fn handshake(socket_type: &[u8]) -> Vec<u8> {
    let mut b = greeting(b"NULL", 0);
    b.extend(ready(socket_type));
    b
}

/// A PING command (ZMTP 3.1) with a TTL in deciseconds and a context.
pub fn ping(ttl_ds: u16, context: &[u8]) -> Vec<u8> {
    let mut body = vec![4];
    body.extend_from_slice(b"PING");
    body.extend_from_slice(&ttl_ds.to_be_bytes());
    body.extend_from_slice(context);
    command(&body)
}

/// Reads until oxmq closes the connection; returns how long that took. Data (oxmq's greeting
/// and READY) is discarded.
pub fn expect_closed(s: &mut impl Read, deadline: Duration, what: &str) -> Duration {
    let t0 = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return t0.elapsed(),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return t0.elapsed(), // reset: closed too
        }
        assert!(t0.elapsed() < deadline, "oxmq did not close the connection of a peer that {what} within {deadline:?}");
    }
}
