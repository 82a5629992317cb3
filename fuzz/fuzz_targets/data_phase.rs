//! The data phase the engine runs (`zmtp::data::DataPhase`) over arbitrary bytes: the first
//! byte picks the revision (bits 0-1) and the read size (bits 2-7); see `zmtp_fuzz::data_phase`.
#![no_main]
use zmtp::Version;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let [mode, rest @ ..] = data else { return };
    let version = [Version::V3_0, Version::V3_1, Version::V2_0, Version::V1_0][usize::from(mode & 3)];
    zmtp_fuzz::data_phase(version, rest, 1 + usize::from(mode >> 2));
});
