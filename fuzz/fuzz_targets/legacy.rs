//! ZMTP 1.0/2.0 downgrade paths: see `zmtp_fuzz::legacy`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| zmtp_fuzz::legacy(data));
