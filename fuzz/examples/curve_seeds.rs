//! Writes the CURVE targets' seed inputs into `corpus-seed/` from a real
//! handshake with the fixed keys: `cargo run --example curve_seeds`.
use std::fs;
use std::path::Path;

use bytes::{Bytes, BytesMut};
use zmtp::{Command, Connection, SocketType};
use zmtp_fuzz::{client_config, server_config};

/// Runs a client and a server to the end of a short exchange, keeping
/// every byte each side sends: (client to server, server to client).
fn record() -> (Vec<u8>, Vec<u8>) {
    let mut client = Connection::new(client_config(SocketType::Dealer));
    let mut server = Connection::new(server_config(SocketType::Router));
    client.send_frame(b"hello", true);
    client.send_frame(&[7u8; 300], false);
    client.send_command(&Command::Ping { ttl: 10, context: Bytes::from_static(b"ctx") });
    server.send_frame(b"reply", false);
    let (mut c2s, mut s2c) = (Vec::new(), Vec::new());
    for _ in 0..16 {
        let mut out = Vec::new();
        client.poll_transmit(&mut out);
        c2s.extend_from_slice(&out);
        server.handle_input(&mut BytesMut::from(&out[..])).unwrap();
        let mut out = Vec::new();
        server.poll_transmit(&mut out);
        s2c.extend_from_slice(&out);
        client.handle_input(&mut BytesMut::from(&out[..])).unwrap();
    }
    assert!(client.is_handshake_complete() && server.is_handshake_complete());
    (c2s, s2c)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus-seed");
    let (c2s, s2c) = record();
    let dir = root.join("curve_handshake");
    fs::create_dir_all(&dir).unwrap();
    // Server role (bit 0 = 0), chunk 64; client role, chunk 64 and bytewise.
    let mut server_seed = vec![63 << 1];
    server_seed.extend_from_slice(&c2s[64..]);
    fs::write(dir.join("server_hello_initiate_message.bin"), &server_seed).unwrap();
    let mut server_bytewise = vec![0u8];
    server_bytewise.extend_from_slice(&c2s[64..64 + 202]);
    fs::write(dir.join("server_hello_bytewise.bin"), &server_bytewise).unwrap();
    let mut client_seed = vec![(63 << 1) | 1];
    client_seed.extend_from_slice(&s2c[64..]);
    fs::write(dir.join("client_welcome_ready_message.bin"), &client_seed).unwrap();

    let dir = root.join("curve_transcript");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("clean_chunk_64.bin"), [63u8]).unwrap();
    fs::write(dir.join("clean_bytewise.bin"), [0u8]).unwrap();
    // One flip in HELLO's box, in INITIATE, in the first MESSAGE; one in WELCOME.
    fs::write(dir.join("flip_hello.bin"), [63u8, 0, 0, 200, 1]).unwrap();
    fs::write(dir.join("flip_initiate.bin"), [63u8, 0, 1, 44, 0x80]).unwrap();
    fs::write(dir.join("flip_welcome.bin"), [63u8, 1, 0, 150, 4]).unwrap();
    fs::write(dir.join("delete_in_data.bin"), [63u8, 4, 2, 0, 0]).unwrap();

    let dir = root.join("curve_message");
    fs::create_dir_all(&dir).unwrap();
    // Mode 0: a MESSAGE-shaped body (nonce 3, zero MAC and ciphertext).
    let mut m0 = vec![0u8, 40];
    m0.extend_from_slice(b"\x07MESSAGE\x00\x00\x00\x00\x00\x00\x00\x03");
    m0.extend_from_slice(&[0u8; 24]);
    fs::write(dir.join("open_shaped.bin"), &m0).unwrap();
    // Mode 1: two bodies and one flip in the second's ciphertext.
    fs::write(dir.join("seal_edit.bin"), [1u8, 2, 3, b'a', b'b', b'c', 1, b'x', 4, 0, 0, 40, 1]).unwrap();
    // Mode 2: round trips with every flag combination.
    fs::write(dir.join("roundtrip.bin"), [2u8, 2, 0, b'a', 2, 1, b'b', 2, 2, b'c', 0]).unwrap();
    println!("seeds written under {}", root.display());
}
