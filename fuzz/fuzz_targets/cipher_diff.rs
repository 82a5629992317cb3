//! The CURVE data-phase cipher's own code (feature `fast-cipher`: Salsa20 in SIMD lanes,
//! scalar Poly1305) against the RustCrypto crates it must equal, on fuzzed keys, nonces,
//! counters and bodies, with the AVX2 lanes (when the CPU has them) and the SSE2 ones.
//!
//! Input: key (32 bytes), nonce (24), block counter (8, little-endian), one byte of options
//! (bits 0-3: repeat the body up to 16 times, reaching past the 12 KiB Poly1305 crossover and
//! many keystream batches; bits 4-7: how much of the plaintext is already in the output,
//! sealed in place, the rest being appended), then the body. Checked for each backend:
//!
//! * `seal_append` = `crypto_secretbox` (tag and ciphertext), and the bytes before the
//!   plaintext in the output are left alone;
//! * `open` of that ciphertext gives the body back; with one bit flipped (position and bit
//!   from the input) it is refused and the buffer left as it was;
//! * the keystream from the fuzzed counter (batches and single blocks, as the data phase
//!   makes them) = `salsa20::Salsa20` seeked there;
//! * the scalar Poly1305 of the body under the key = the `poly1305` crate's.
#![no_main]
use crypto_secretbox::aead::{AeadInPlace, KeyInit};
use crypto_secretbox::XSalsa20Poly1305;
use libfuzzer_sys::fuzz_target;
use salsa20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use zmtp::mechanism::fuzzing;

fuzz_target!(|data: &[u8]| {
    if data.len() < 65 {
        return;
    }
    let key: [u8; 32] = data[..32].try_into().unwrap();
    let nonce: [u8; 24] = data[32..56].try_into().unwrap();
    let counter = u64::from_le_bytes(data[56..64].try_into().unwrap());
    let options = data[64];
    let body = data[65..].repeat(1 + usize::from(options & 15));
    let split = (usize::from(options >> 4) * 97).min(body.len());

    let aead = XSalsa20Poly1305::new(&key.into());
    let mut expected = body.clone();
    let expected_tag: [u8; 16] = aead.encrypt_in_place_detached(&nonce.into(), b"", &mut expected).unwrap().into();

    // Keystream reference: a counter near the end of the 64-bit range would make the crate
    // refuse; keep 2^16 blocks of room (the body is at most about 64 KiB).
    let counter = counter.min(u64::MAX - (1 << 16));
    let len = body.len().min(4096);
    let mut stream = vec![0u8; len];
    let mut c = salsa20::Salsa20::new(&key.into(), nonce[..8].try_into().unwrap());
    c.seek(u128::from(counter) * 64);
    c.apply_keystream(&mut stream);

    let poly_key: [u8; 32] = key;
    let poly_expected: [u8; 16] = poly1305::Poly1305::new(&poly_key.into()).compute_unpadded(&body).into();
    assert_eq!(fuzzing::poly1305(&poly_key, &body), poly_expected, "poly1305, len {}", body.len());

    for sse2 in [false, true] {
        let (out, tag) = fuzzing::seal(&key, &nonce, b"prefix", &body[..split], &body[split..], sse2);
        assert_eq!(&out[..6], b"prefix");
        assert_eq!(tag, expected_tag, "tag, len {} sse2 {sse2}", body.len());
        assert!(out[6..] == expected[..], "ciphertext, len {} sse2 {sse2}", body.len());

        let mut opened = expected.clone();
        assert!(fuzzing::open(&key, &nonce, &mut opened, &expected_tag, sse2));
        assert!(opened == body, "plaintext, len {} sse2 {sse2}", body.len());

        let flip = counter as usize % (8 * (expected.len() + 16));
        let (mut bad, mut bad_tag) = (expected.clone(), expected_tag);
        if flip / 8 < bad.len() {
            bad[flip / 8] ^= 1 << (flip % 8);
        } else {
            bad_tag[flip / 8 - bad.len()] ^= 1 << (flip % 8);
        }
        let before = bad.clone();
        assert!(!fuzzing::open(&key, &nonce, &mut bad, &bad_tag, sse2), "forgery opened, sse2 {sse2}");
        assert!(bad == before, "a refused box was changed");

        let ours = fuzzing::keystream(&key, nonce[..8].try_into().unwrap(), counter, len, sse2);
        assert!(ours == stream, "keystream at {counter:#x}, len {len} sse2 {sse2}");
    }
});
