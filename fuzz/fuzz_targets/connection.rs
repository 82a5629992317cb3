//! A Connection fed arbitrary bytes in arbitrary chunks, with a small
//! message size limit, draining events as it goes.
#![no_main]
use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use zmtp::{Config, Connection, SocketType};

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, data)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(chunk % 64) + 1;
    let mut config = Config::new(SocketType::Router);
    config.max_msg_size = Some(4096);
    let mut conn = Connection::new(config);
    conn.send_frame(b"queued", false);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in data.chunks(chunk) {
        buf.extend_from_slice(piece);
        let failed = conn.handle_input(&mut buf).is_err();
        while conn.poll_event().is_some() {}
        conn.poll_transmit(&mut out);
        if failed {
            break;
        }
    }
});
