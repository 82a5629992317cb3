//! A CURVE Connection in either role fed a valid CURVE greeting and then
//! arbitrary bytes, in chunks. The first input byte picks the role (bit 0:
//! 0 server, 1 client) and the chunk size (bits 1-6). The seeds are the
//! rest of recorded valid transcripts: a real client's HELLO, INITIATE and
//! MESSAGE for the server (HELLO authenticates, since the server's long-term
//! key is fixed) and a real server's WELCOME, READY and MESSAGE for the
//! client.
#![no_main]
use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use zmtp::{Connection, SocketType};
use zmtp_fuzz::{client_config, curve_greeting, server_config};

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, data)) = data.split_first() else {
        return;
    };
    let chunk = usize::from((ctl >> 1) % 64) + 1;
    let config = if ctl & 1 == 0 { server_config(SocketType::Router) } else { client_config(SocketType::Dealer) };
    let mut conn = Connection::new(config);
    conn.send_frame(b"queued", false);
    let mut input = curve_greeting().to_vec();
    input.extend_from_slice(data);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in input.chunks(chunk) {
        buf.extend_from_slice(piece);
        let failed = conn.handle_input(&mut buf).is_err();
        while conn.poll_event().is_some() {}
        conn.poll_transmit(&mut out);
        if failed {
            // A failed connection keeps failing the same way.
            assert!(conn.handle_input(&mut buf).is_err());
            break;
        }
    }
});
