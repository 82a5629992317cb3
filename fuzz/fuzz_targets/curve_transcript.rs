//! A live CURVE client and server talking through an editor: the fuzz input
//! is a list of byte edits (flip, insert, delete at a stream offset, either
//! direction), so mutations land in every phase of a valid transcript,
//! HELLO through INITIATE, READY and the MESSAGE data phase, with real
//! keys. The first byte picks the chunk size bytes are moved in.
//!
//! Checked: nothing panics; each side receives the other's frames in order
//! with at most some left out (an altered MESSAGE never opens); with no
//! edit that changed a byte, the handshake completes and every frame and
//! command arrives.
#![no_main]
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use zmtp::{Command, Connection, SocketType};
use zmtp_fuzz::{client_config, decode_edits, is_subsequence, pump, server_config, End, Stream};

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, data)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(ctl % 128) + 1;
    let [c2s, s2c] = decode_edits(data);
    let mut client = End::new(Connection::new(client_config(SocketType::Dealer)));
    let mut server = End::new(Connection::new(server_config(SocketType::Router)));
    let from_client: Vec<(Vec<u8>, bool)> = vec![(b"one".to_vec(), true), (Vec::new(), false), (vec![7u8; 300], false)];
    let from_server: Vec<(Vec<u8>, bool)> = vec![(b"reply".to_vec(), false)];
    for (body, more) in &from_client {
        client.conn.send_frame(body, *more);
    }
    let ping = Command::Ping { ttl: 10, context: Bytes::from_static(b"ctx") };
    client.conn.send_command(&ping);
    for (body, more) in &from_server {
        server.conn.send_frame(body, *more);
    }
    let mut streams = [Stream::new(c2s), Stream::new(s2c)];
    pump(&mut client, &mut server, &mut streams, chunk);

    assert!(is_subsequence(&server.got.frames, &from_client));
    assert!(is_subsequence(&client.got.frames, &from_server));
    assert!(server.got.commands.iter().all(|c| *c == ping));
    if !streams[0].tampered && !streams[1].tampered {
        assert!(client.got.handshake && server.got.handshake);
        assert!(!client.got.failed && !server.got.failed);
        assert_eq!(server.got.frames, from_client);
        assert_eq!(client.got.frames, from_server);
        assert_eq!(server.got.commands, vec![ping]);
    }
});
