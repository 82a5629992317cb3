//! A NULL Handshake fed arbitrary bytes in arbitrary chunks (the first byte
//! picks the chunk size).
#![no_main]
use libfuzzer_sys::fuzz_target;
use zmtp::{Config, Handshake, SocketType};

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, data)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(chunk % 32) + 1;
    let mut hs = Handshake::new(Config::new(SocketType::Dealer));
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let end = (pos + chunk).min(data.len());
        match hs.handle_input(&data[pos..end]) {
            Ok(0) => break,
            Ok(n) => pos += n,
            Err(_) => break,
        }
        hs.poll_transmit(&mut out);
    }
    hs.poll_transmit(&mut out);
    let _ = hs.peer();
});
