//! The engine's own data path: bytes decoded through a session's sink into a real pipe under
//! the inbound rules of a socket type, then encoded back (`oxmq::fuzzing::engine_data`,
//! crates/oxmq/src/io/session/fuzzing.rs).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| oxmq::fuzzing::engine_data(data));
