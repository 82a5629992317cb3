//! One-shot Poly1305 (RFC 8439 section 2.5) for short messages: scalar, in radix 2^64 with
//! 128-bit products.
//!
//! CURVE uses a fresh Poly1305 key for every message. The `poly1305` crate's AVX2 backend
//! spends about 2,500 instructions setting up each key (powers of r, vector layout) before it
//! saves anything per byte, so below [`CROSSOVER`] bytes this scalar form is cheaper; above,
//! the crate is used. The crate's `soft` backend (26-bit limbs, 25 products per block) would
//! be no faster here, so it is not vendored.
//!
//! The accumulator h is two 64-bit limbs and a few bits above them; r is two 64-bit limbs.
//! Clamping clears the low two bits of r's upper limb r1, so r1 * 2^128 = (r1 / 4) * 2^130,
//! and 2^130 = 5 (mod p): the products that reach 2^128 fold back multiplied by
//! s1 = r1 + r1 / 4 = 5 * r1 / 4. A block costs four full 64x64-bit products and two small
//! ones (about 42 instructions on x86-64) where poly1305-donna-64's 44-bit limbs cost nine
//! (about 88, measured). The same scheme as OpenSSL's portable 64-bit code.
//!
//! Constant time: no branch and no memory index depends on the key or the message contents
//! (only on the message length, which is public); the final reduction selects with a mask.
//! The caller compares tags with `subtle`. Intermediate values live in registers and locals
//! that are not wiped; the key is the caller's, wiped there.

/// Message length (bytes) from which the `poly1305` crate (its AVX2 backend when the CPU has
/// one) is cheaper than [`tag`]. Measured with callgrind on x86-64 with AVX2, instructions per
/// tag (this / the crate): 257 bytes 830 / 5,300; 4 KiB 10,900 / 13,800; 12 KiB 32,300 /
/// 32,400; 64 KiB 172,000 / 153,000.
pub(crate) const CROSSOVER: usize = 12 * 1024;

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// Poly1305 of `msg` under the one-time `key` (r then s), unpadded: a last partial block is
/// closed with a 1 byte, as NaCl and RFC 8439 do.
pub(crate) fn tag(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
    // r, clamped (RFC 8439 2.5: top 4 bits of bytes 3, 7, 11, 15 and bottom 2 of 4, 8, 12
    // cleared): r0, r1 < 2^60, r1 a multiple of 4.
    let r0 = le64(&key[0..8]) & 0x0fff_fffc_0fff_ffff;
    let r1 = le64(&key[8..16]) & 0x0fff_fffc_0fff_fffc;
    let s1 = r1 + (r1 >> 2);

    // h = h2 * 2^128 + h1 * 2^64 + h0, kept below 5 * 2^128 (h2 <= 4) between blocks.
    let (mut h0, mut h1, mut h2) = (0u64, 0u64, 0u64);
    let mut absorb = |m0: u64, m1: u64, hibit: u64| {
        // h += m (+ 2^128 for a whole block): h2 <= 6.
        let t = u128::from(h0) + u128::from(m0);
        h0 = t as u64;
        let t = u128::from(h1) + u128::from(m1) + (t >> 64);
        h1 = t as u64;
        h2 += (t >> 64) as u64 + hibit;

        // d = h * r, folded at 2^130: d0 < 2^126, d1 < 2^125, d2 < 2^63. h2 * s1 < 6 * 2^61
        // and h2 * r0 < 6 * 2^60 fit 64 bits.
        let d0 = u128::from(h0) * u128::from(r0) + u128::from(h1) * u128::from(s1);
        let d1 = u128::from(h0) * u128::from(r1) + u128::from(h1) * u128::from(r0) + u128::from(h2 * s1) + (d0 >> 64);
        let d2 = h2 * r0 + (d1 >> 64) as u64;

        // Bits from 2^130 up come back times 5: (d2 >> 2) * 5 = (d2 & !3) + (d2 >> 2).
        let c = (d2 & !3) + (d2 >> 2);
        let t = u128::from(d0 as u64) + u128::from(c);
        h0 = t as u64;
        let t = u128::from(d1 as u64) + (t >> 64);
        h1 = t as u64;
        h2 = (d2 & 3) + (t >> 64) as u64;
    };

    let mut blocks = msg.chunks_exact(16);
    for block in &mut blocks {
        // 2^128: the 1 byte appended to every whole block.
        absorb(le64(&block[..8]), le64(&block[8..]), 1);
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 16];
        last[..rest.len()].copy_from_slice(rest);
        last[rest.len()] = 1;
        absorb(le64(&last[..8]), le64(&last[8..]), 0);
    }

    // h < 5 * 2^128 < 2p, so h mod p is h or h - p. g = h + 5 reaches 2^130 (g2 >= 4) exactly
    // when h >= p, and then its low 128 bits are those of h - p.
    let t = u128::from(h0) + 5;
    let g0 = t as u64;
    let t = u128::from(h1) + (t >> 64);
    let g1 = t as u64;
    let g2 = h2 + (t >> 64) as u64;
    let use_g = 0u64.wrapping_sub(g2 >> 2);
    let h0 = (h0 & !use_g) | (g0 & use_g);
    let h1 = (h1 & !use_g) | (g1 & use_g);

    // tag = (h + s) mod 2^128.
    let t = u128::from(h0) + u128::from(le64(&key[16..24]));
    let lo = t as u64;
    let hi = h1.wrapping_add(le64(&key[24..32])).wrapping_add((t >> 64) as u64);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&lo.to_le_bytes());
    out[8..].copy_from_slice(&hi.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use poly1305::universal_hash::KeyInit;
    use poly1305::Poly1305;
    use proptest::prelude::*;

    fn reference(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
        Poly1305::new(key.into()).compute_unpadded(msg).into()
    }

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn key(s: &str) -> [u8; 32] {
        hex(s).try_into().unwrap()
    }

    /// Checked against both this module and the crate, so a mistyped vector fails loudly.
    fn vector(key: [u8; 32], msg: &[u8], tag_hex: &str) {
        let expected: [u8; 16] = hex(tag_hex).try_into().unwrap();
        assert_eq!(reference(&key, msg), expected, "the crate disagrees with the vector");
        assert_eq!(tag(&key, msg), expected);
    }

    #[test]
    fn rfc8439_section_2_5_2() {
        vector(
            key("85d6be7857556d337f4452fe42d506a8 0103808afb0db2fd4abff6af4149f51b"),
            b"Cryptographic Forum Research Group",
            "a8061dc1305136c6c22b8baf0c0127a9",
        );
    }

    #[test]
    fn nacl_secretbox_vector() {
        // NaCl tests/onetimeauth.c: the MAC of tests/secretbox.c's ciphertext.
        vector(
            key("eea6a7251c1e72916d11c2cb214d3c25 2539121d8e234e652d651fa4c8cff880"),
            &hex("8e993b9f48681273c29650ba32fc76ce 48332ea7164d96a4476fb8c531a1186a
                  c0dfc17c98dce87b4da7f011ec48c972 71d2c20f9b928fe2270d6fb863d51738
                  b48eeee314a7cc8ab932164548e526ae 90224368517acfeabd6bb3732bc0e9da
                  99832b61ca01b6de56244a9e88d5f9b3 7973f622a43d14a6599b1f654cb45a74
                  e355a5"),
            "f3ffc7703f9400e52a7dfb4b3d3305d9",
        );
    }

    #[test]
    fn rfc8439_appendix_a3_edge_cases() {
        let r2 = "02000000000000000000000000000000";
        let r1 = "01000000000000000000000000000000";
        let s0 = "00000000000000000000000000000000";
        let ff = "ffffffffffffffffffffffffffffffff";
        // #1: all zero.
        vector([0; 32], &[0; 64], s0);
        // #5: h lands on 2^130 - 2 after one block: reduction wraps round p.
        vector(key(&format!("{r2}{s0}")), &hex(ff), "03000000000000000000000000000000");
        // #6: s = 2^128 - 1, the final addition carries out of 128 bits.
        vector(key(&format!("{r2}{ff}")), &hex("02000000000000000000000000000000"), "03000000000000000000000000000000");
        // #7, #8: accumulator exactly around p.
        vector(
            key(&format!("{r1}{s0}")),
            &hex(&format!("{ff} f0ffffffffffffffffffffffffffffff 11000000000000000000000000000000")),
            "05000000000000000000000000000000",
        );
        vector(
            key(&format!("{r1}{s0}")),
            &hex(&format!("{ff} fbfefefefefefefefefefefefefefefe 01010101010101010101010101010101")),
            "00000000000000000000000000000000",
        );
        // #9: h = p - 1 + something: g does not borrow.
        vector(key(&format!("{r2}{s0}")), &hex("fdffffffffffffffffffffffffffffff"), "faffffffffffffffffffffffffffffff");
        // #10, #11: carries through the middle limbs.
        let r10 = key("01000000000000000400000000000000 00000000000000000000000000000000");
        let m = "e33594d7505e43b90000000000000000 3394d7505e4379cd0100000000000000 00000000000000000000000000000000";
        vector(r10, &hex(&format!("{m} 01000000000000000000000000000000")), "14000000000000005500000000000000");
        vector(r10, &hex(m), "13000000000000000000000000000000");
    }

    /// Keys at the extremes of r and s: all ones (clamping clears what it must), all zero,
    /// r with exactly the bits clamping keeps, r with exactly the bits it clears.
    fn extreme_keys() -> Vec<[u8; 32]> {
        let mut clamp_keeps = [0xffu8; 16];
        for i in [3, 7, 11, 15] {
            clamp_keeps[i] = 0x0f;
        }
        for i in [4, 8, 12] {
            clamp_keeps[i] = 0xfc;
        }
        let clamp_clears: [u8; 16] = core::array::from_fn(|i| !clamp_keeps[i]);
        let mut keys = Vec::new();
        for r in [[0xff; 16], [0; 16], clamp_keeps, clamp_clears] {
            for s in [[0xff; 16], [0; 16], [0x80; 16]] {
                let mut k = [0u8; 32];
                k[..16].copy_from_slice(&r);
                k[16..].copy_from_slice(&s);
                keys.push(k);
            }
        }
        keys
    }

    #[test]
    fn extreme_keys_and_all_ones_messages() {
        // Blocks of 0xff drive the accumulator to its largest values and, with r at its
        // clamped maximum, the partial reductions to their limits.
        let ones = [0xffu8; 12 * 1024 + 1];
        let mut ramp = [0u8; 12 * 1024 + 1];
        for (i, b) in ramp.iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        for key in extreme_keys() {
            for len in
                (0..=70).chain([127, 128, 129, 255, 256, 1024, 1343, 1344, 1345, 2100, 12 * 1024 - 1, 12 * 1024, 12 * 1024 + 1])
            {
                assert_eq!(tag(&key, &ones[..len]), reference(&key, &ones[..len]), "0xff x {len}, key {key:02x?}");
                assert_eq!(tag(&key, &ramp[..len]), reference(&key, &ramp[..len]), "ramp {len}, key {key:02x?}");
            }
        }
    }

    #[test]
    fn every_length_to_1100() {
        let key: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(29).wrapping_add(3));
        let msg: Vec<u8> = (0..1100u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for len in 0..=1100 {
            assert_eq!(tag(&key, &msg[..len]), reference(&key, &msg[..len]), "len {len}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn matches_crate(key in any::<[u8; 32]>(), msg in proptest::collection::vec(any::<u8>(), 0..=5000)) {
            prop_assert_eq!(tag(&key, &msg), reference(&key, &msg));
        }

        #[test]
        fn matches_crate_near_p(key in any::<[u8; 32]>(), len in 0usize..=400, low in any::<u8>()) {
            // Mostly 0xff with one low byte per block: accumulators close to 2^130 - 5.
            let msg: Vec<u8> = (0..len).map(|i| if i % 16 == 0 { low } else { 0xff }).collect();
            prop_assert_eq!(tag(&key, &msg), reference(&key, &msg));
        }
    }
}
