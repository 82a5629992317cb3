//! Salsa20/20 keystream several blocks at a time, for CURVE's data phase.
//!
//! RustCrypto's `salsa20` crate has only a portable backend that makes one 64-byte block at a
//! time (about 18 instructions per byte). Here the state is lane-sliced: each of the 16 state
//! words is an array of `L` lanes, one lane per block, and every step of the quarter-round is a
//! loop over the lanes, which LLVM turns into one SIMD instruction per step. The same generic
//! code is compiled twice on x86-64: plain, with SSE2 (baseline there), four blocks per call;
//! and inside a `#[target_feature(enable = "avx2")]` function, eight blocks per call, picked at
//! run time once per [`Backend`]. On CPUs with AVX-512F, bulk XOR (whole 1 KiB batches) runs
//! sixteen blocks at once, written with the intrinsics: one 64-byte vector per state word, the
//! native rotate, and a 16x16 transpose so the keystream goes from registers into the data
//! (LLVM vectorizes the generic loops to 256-bit vectors at most, which measured slower than
//! eight lanes).
//!
//! Lone blocks (a 1-byte message needs one) come from the crate itself: one lane-sliced batch
//! costs more than one scalar block, and the crate stays the reference the batches are tested
//! against. Other architectures use the crate for every block.
//!
//! Its `unsafe` operations: calling the AVX2 and AVX-512 functions, after run-time detection,
//! and the AVX-512 form's unaligned loads and stores (of arrays and of 64-byte data blocks).

#![allow(unsafe_code)]
// Elsewhere than x86-64 the lanes are compiled and tested but not called.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

use salsa20::cipher::consts::U10;
use salsa20::cipher::{StreamCipherCore, StreamCipherSeekCore};
use salsa20::SalsaCore;
use zeroize::Zeroize;

use super::wipe::wipe;

/// Salsa20's "expand 32-byte k".
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Bytes of keystream one [`Salsa20Lanes::fill`] can produce: eight blocks.
pub(crate) const MAX_FILL: usize = 512;

/// Which compiled form of the lanes this CPU runs. A value with `avx2` set exists only after
/// the CPU said it has AVX2 ([`Backend::detect`]), which is what makes calling the AVX2
/// functions sound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Backend {
    avx2: bool,
    /// AVX-512F too: bulk XOR runs sixteen lanes (one 64-byte vector per state word, native
    /// rotates). Only ever set together with `avx2`.
    avx512: bool,
}

impl Backend {
    /// The best form for this CPU (the detection is cached by std; callers keep the result).
    pub(crate) fn detect() -> Backend {
        #[cfg(target_arch = "x86_64")]
        let (avx2, avx512) = (std::is_x86_feature_detected!("avx2"), std::is_x86_feature_detected!("avx512f"));
        #[cfg(not(target_arch = "x86_64"))]
        let (avx2, avx512) = (false, false);
        Backend { avx2, avx512: avx2 && avx512 }
    }

    /// The AVX2 form even on an AVX-512 CPU (tests cover every form).
    #[cfg(test)]
    pub(crate) fn avx2_only() -> Backend {
        let b = Backend::detect();
        Backend { avx2: b.avx2, avx512: false }
    }

    /// The SSE2 form even on an AVX2 CPU, so tests and the `cipher_diff` fuzz target cover
    /// both.
    #[cfg(any(test, fuzzing))]
    pub(crate) fn sse2() -> Backend {
        Backend { avx2: false, avx512: false }
    }
}

/// The keystream buffer [`Salsa20Lanes::fill`] writes into, wiped on drop.
#[derive(Clone)]
pub(crate) struct Keystream(pub(crate) [u8; MAX_FILL]);

impl Keystream {
    pub(crate) fn new() -> Keystream {
        Keystream([0; MAX_FILL])
    }
}

impl Drop for Keystream {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

/// Salsa20/20 under one key and 8-byte nonce: the 16-word input block, counter words (8, 9)
/// left zero, wiped on drop.
pub(crate) struct Salsa20Lanes {
    input: [u32; 16],
    backend: Backend,
}

impl Drop for Salsa20Lanes {
    fn drop(&mut self) {
        self.input.zeroize();
    }
}

impl Salsa20Lanes {
    pub(crate) fn new(key: &[u8; 32], nonce: &[u8; 8], backend: Backend) -> Salsa20Lanes {
        let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let mut input = [0u32; 16];
        input[0] = SIGMA[0];
        input[5] = SIGMA[1];
        input[10] = SIGMA[2];
        input[15] = SIGMA[3];
        for i in 0..4 {
            input[1 + i] = word(&key[4 * i..]);
            input[11 + i] = word(&key[16 + 4 * i..]);
        }
        input[6] = word(&nonce[..4]);
        input[7] = word(&nonce[4..]);
        Salsa20Lanes { input, backend }
    }

    /// Writes the keystream from block `counter` on into `out` and returns how many bytes it
    /// wrote (a multiple of 64, at most [`MAX_FILL`]): as many of the `want` blocks the caller
    /// still needs as the cheapest way of making them gives (a batch may give more than
    /// `want`).
    pub(crate) fn fill(&self, counter: u64, want: usize, out: &mut Keystream) -> usize {
        // Instructions per call, measured with callgrind: the crate's block about 1,250; four
        // SSE2 lanes about 2,830; eight AVX2 lanes about 2,020 (four lanes in an AVX2
        // function cost more, 2,180, so there is no such form).
        #[cfg(target_arch = "x86_64")]
        {
            if self.backend.avx2 && want >= 2 {
                // SAFETY: `avx2` is set only by `Backend::detect`, on a CPU with AVX2.
                unsafe { avx2_blocks8(&self.input, counter, &mut out.0) };
                return 512;
            }
            if !self.backend.avx2 && want >= 3 {
                blocks::<4>(&self.input, counter, &mut out.0);
                return 256;
            }
            self.crate_blocks(counter, 1, out)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.crate_blocks(counter, want.clamp(1, MAX_FILL / 64), out)
        }
    }

    /// XORs the keystream from block `counter` on into the front of `data`, in whole
    /// batches (eight blocks with AVX2, four with SSE2), and returns how many bytes it covered:
    /// `data.len()` rounded down to a batch, 0 where there are no lanes (other architectures).
    pub(crate) fn xor_batches(&self, counter: u64, data: &mut [u8]) -> usize {
        #[cfg(target_arch = "x86_64")]
        {
            if self.backend.avx512 {
                // SAFETY: `avx512` is set only by `Backend::detect`, on a CPU with AVX-512F
                // (and AVX2, for the batch of eight that may follow).
                let done = unsafe { avx512_xor16(&self.input, counter, data) };
                // A remaining half batch (512 bytes) in the eight-lane form.
                // SAFETY: as above.
                return done + unsafe { avx2_xor8(&self.input, counter + (done / 64) as u64, &mut data[done..]) };
            }
            if self.backend.avx2 {
                // SAFETY: `avx2` is set only by `Backend::detect`, on a CPU with AVX2.
                return unsafe { avx2_xor8(&self.input, counter, data) };
            }
            xor_batches::<4>(&self.input, counter, data)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (counter, data);
            0
        }
    }

    /// `n` blocks from RustCrypto's `salsa20`.
    fn crate_blocks(&self, counter: u64, n: usize, out: &mut Keystream) -> usize {
        let mut core = SalsaCore::<U10>::from_raw_state(self.input);
        core.set_block_pos(counter);
        for block in out.0.chunks_exact_mut(64).take(n) {
            core.write_keystream_block(block.into());
        }
        n * 64
    }
}

/// The keystream words of blocks `counter..counter + L`: word `w` of block `counter + i` is
/// `[w][i]`.
///
/// Everything is written as loops over the lanes so that LLVM vectorizes across lanes: the
/// double round is one loop whose body is the 32 quarter-round steps on lane `i` (written with
/// `[[u32; L]; 16]` indexing, the loop vectorizer makes each step one vector instruction;
/// written as whole-array helpers, LLVM kept them scalar with `rol`).
#[inline(always)]
fn keystream_words<const L: usize>(input: &[u32; 16], counter: u64) -> [[u32; L]; 16] {
    let mut x = [[0u32; L]; 16];
    for (lanes, &word) in x.iter_mut().zip(input) {
        *lanes = [word; L];
    }
    // Each lane's 64-bit block counter, carried from word 8 into word 9.
    let counters: [u64; L] = core::array::from_fn(|i| counter.wrapping_add(i as u64));
    x[8] = counters.map(|c| c as u32);
    x[9] = counters.map(|c| (c >> 32) as u32);
    let start = x;
    for _ in 0..10 {
        double_round(&mut x);
    }
    for w in 0..16 {
        for i in 0..L {
            x[w][i] = x[w][i].wrapping_add(start[w][i]);
        }
    }
    x
}

/// `L` keystream blocks from `counter` on, written in order into `out[..64 * L]`.
#[inline(always)]
fn blocks<const L: usize>(input: &[u32; 16], counter: u64, out: &mut [u8; MAX_FILL]) {
    let x = keystream_words::<L>(input, counter);
    for i in 0..L {
        let block = &mut out[64 * i..64 * i + 64];
        for w in 0..16 {
            block[4 * w..4 * w + 4].copy_from_slice(&x[w][i].to_le_bytes());
        }
    }
}

/// XORs the keystream from block `counter` on into `data`, `L` blocks at a time, for the
/// whole batches `data` holds; returns how many bytes that was. The keystream goes from
/// registers straight into the data, never through memory.
#[inline(always)]
fn xor_batches<const L: usize>(input: &[u32; 16], counter: u64, data: &mut [u8]) -> usize {
    let mut counter = counter;
    let mut done = 0;
    for batch in data.chunks_exact_mut(64 * L) {
        let x = keystream_words::<L>(input, counter);
        for i in 0..L {
            let block = &mut batch[64 * i..64 * i + 64];
            for w in 0..16 {
                let d = &mut block[4 * w..4 * w + 4];
                let v = u32::from_le_bytes([d[0], d[1], d[2], d[3]]) ^ x[w][i];
                d.copy_from_slice(&v.to_le_bytes());
            }
        }
        counter = counter.wrapping_add(L as u64);
        done += 64 * L;
    }
    done
}

/// Ten of these make Salsa20/20. The lane index is the loop variable on purpose: see
/// [`keystream_words`].
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn double_round<const L: usize>(x: &mut [[u32; L]; 16]) {
    for i in 0..L {
        macro_rules! quarter {
            ($a:expr, $b:expr, $c:expr, $d:expr) => {
                x[$b][i] ^= x[$a][i].wrapping_add(x[$d][i]).rotate_left(7);
                x[$c][i] ^= x[$b][i].wrapping_add(x[$a][i]).rotate_left(9);
                x[$d][i] ^= x[$c][i].wrapping_add(x[$b][i]).rotate_left(13);
                x[$a][i] ^= x[$d][i].wrapping_add(x[$c][i]).rotate_left(18);
            };
        }
        // Columns, then rows (the Salsa20 spec's columnround and rowround).
        quarter!(0, 4, 8, 12);
        quarter!(5, 9, 13, 1);
        quarter!(10, 14, 2, 6);
        quarter!(15, 3, 7, 11);
        quarter!(0, 1, 2, 3);
        quarter!(5, 6, 7, 4);
        quarter!(10, 11, 8, 9);
        quarter!(15, 12, 13, 14);
    }
}

/// [`blocks`] compiled for AVX2: a 32-byte vector holds eight lanes.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2_blocks8(input: &[u32; 16], counter: u64, out: &mut [u8; MAX_FILL]) {
    blocks::<8>(input, counter, out)
}

/// [`xor_batches`] compiled for AVX2, eight lanes.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2_xor8(input: &[u32; 16], counter: u64, data: &mut [u8]) -> usize {
    xor_batches::<8>(input, counter, data)
}

/// [`xor_batches`] for AVX-512F, sixteen lanes: the rounds written with the intrinsics, since
/// LLVM vectorizes the generic loops to 256-bit vectors at most (two per state word, with
/// spills) and leaves out the native rotate `vprold`.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn avx512_xor16(input: &[u32; 16], counter: u64, data: &mut [u8]) -> usize {
    use core::arch::x86_64::*;
    let mut counter = counter;
    let mut done = 0;
    for batch in data.chunks_exact_mut(64 * 16) {
        let mut x: [__m512i; 16] = core::array::from_fn(|w| _mm512_set1_epi32(input[w] as i32));
        let ctr: [u64; 16] = core::array::from_fn(|i| counter.wrapping_add(i as u64));
        let lo: [i32; 16] = core::array::from_fn(|i| ctr[i] as u32 as i32);
        let hi: [i32; 16] = core::array::from_fn(|i| (ctr[i] >> 32) as u32 as i32);
        // SAFETY: `lo` and `hi` are 64 readable bytes each (unaligned loads).
        x[8] = unsafe { _mm512_loadu_si512(lo.as_ptr().cast()) };
        x[9] = unsafe { _mm512_loadu_si512(hi.as_ptr().cast()) };
        let start = x;
        // The schedule of `double_round`, spelt out again: a loop over a table of indices
        // (in either form) measured 2.3x slower at 64 KiB and 6x at 256 B.
        macro_rules! quarter {
            ($a:expr, $b:expr, $c:expr, $d:expr) => {
                x[$b] = _mm512_xor_si512(x[$b], _mm512_rol_epi32::<7>(_mm512_add_epi32(x[$a], x[$d])));
                x[$c] = _mm512_xor_si512(x[$c], _mm512_rol_epi32::<9>(_mm512_add_epi32(x[$b], x[$a])));
                x[$d] = _mm512_xor_si512(x[$d], _mm512_rol_epi32::<13>(_mm512_add_epi32(x[$c], x[$b])));
                x[$a] = _mm512_xor_si512(x[$a], _mm512_rol_epi32::<18>(_mm512_add_epi32(x[$d], x[$c])));
            };
        }
        for _ in 0..10 {
            quarter!(0, 4, 8, 12);
            quarter!(5, 9, 13, 1);
            quarter!(10, 14, 2, 6);
            quarter!(15, 3, 7, 11);
            quarter!(0, 1, 2, 3);
            quarter!(5, 6, 7, 4);
            quarter!(10, 11, 8, 9);
            quarter!(15, 12, 13, 14);
        }
        for w in 0..16 {
            x[w] = _mm512_add_epi32(x[w], start[w]);
        }
        // Transpose: x[w] holds word w of the sixteen blocks; the block-ordered keystream is
        // XORed into the data a 64-byte block per vector, never going through memory.
        let mut t = [_mm512_setzero_si512(); 16];
        for p in 0..8 {
            t[2 * p] = _mm512_unpacklo_epi32(x[2 * p], x[2 * p + 1]);
            t[2 * p + 1] = _mm512_unpackhi_epi32(x[2 * p], x[2 * p + 1]);
        }
        // u[4g + j], 128-bit lane k: words 4g..4g+4 of block 4k + j.
        let mut u = [_mm512_setzero_si512(); 16];
        for g in 0..4 {
            u[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
            u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
            u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
            u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
        }
        for j in 0..4 {
            let a0 = _mm512_shuffle_i32x4::<0x88>(u[j], u[4 + j]);
            let a1 = _mm512_shuffle_i32x4::<0xdd>(u[j], u[4 + j]);
            let b0 = _mm512_shuffle_i32x4::<0x88>(u[8 + j], u[12 + j]);
            let b1 = _mm512_shuffle_i32x4::<0xdd>(u[8 + j], u[12 + j]);
            let blocks = [
                (j, _mm512_shuffle_i32x4::<0x88>(a0, b0)),
                (4 + j, _mm512_shuffle_i32x4::<0x88>(a1, b1)),
                (8 + j, _mm512_shuffle_i32x4::<0xdd>(a0, b0)),
                (12 + j, _mm512_shuffle_i32x4::<0xdd>(a1, b1)),
            ];
            for (i, ks) in blocks {
                let block = &mut batch[64 * i..64 * i + 64];
                // SAFETY: `block` is 64 readable and writable bytes (unaligned load, store).
                unsafe {
                    let d = _mm512_loadu_si512(block.as_ptr().cast());
                    _mm512_storeu_si512(block.as_mut_ptr().cast(), _mm512_xor_si512(d, ks));
                }
            }
        }
        counter = counter.wrapping_add(16);
        done += 64 * 16;
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use salsa20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};

    /// The crate's keystream for blocks `counter..counter + n`.
    fn reference(key: &[u8; 32], nonce: &[u8; 8], counter: u64, n: usize) -> Vec<u8> {
        let mut c = salsa20::Salsa20::new(key.into(), nonce.into());
        c.seek(u128::from(counter) * 64);
        let mut out = vec![0u8; n * 64];
        c.apply_keystream(&mut out);
        out
    }

    fn backends() -> Vec<Backend> {
        let mut v = vec![Backend::sse2()];
        if Backend::detect().avx2 {
            v.push(Backend::avx2_only());
        } else {
            eprintln!("no AVX2 on this CPU: only the SSE2 lanes are tested");
        }
        if Backend::detect().avx512 {
            v.push(Backend::detect());
        } else {
            eprintln!("no AVX-512F on this CPU: the sixteen-lane form is not tested");
        }
        v
    }

    /// `xor_batches` of each backend over zeros is the crate's keystream, for lengths around
    /// every batch size (the sixteen-lane form leaves a half batch to the eight-lane one).
    fn check_xor(key: &[u8; 32], nonce: &[u8; 8], counter: u64) {
        let want = reference(key, nonce, counter, 40);
        for backend in backends() {
            let lanes = Salsa20Lanes::new(key, nonce, backend);
            for len in [0, 63, 64, 255, 256, 511, 512, 513, 1023, 1024, 1536, 1600, 2048, 2560] {
                let mut data = vec![0u8; len];
                let done = lanes.xor_batches(counter, &mut data);
                assert!(done <= len && done % 64 == 0, "{backend:?} len {len}: {done}");
                assert_eq!(data[..done], want[..done], "{backend:?} len {len} at {counter:#x}");
                assert!(data[done..].iter().all(|&b| b == 0), "{backend:?} wrote past its batches");
            }
        }
    }

    /// Every batch form, called directly, against the crate.
    fn check_forms(key: &[u8; 32], nonce: &[u8; 8], counter: u64) {
        let lanes = Salsa20Lanes::new(key, nonce, Backend::sse2());
        let want = reference(key, nonce, counter, 8);
        let mut ks = Keystream::new();
        blocks::<4>(&lanes.input, counter, &mut ks.0);
        assert_eq!(ks.0[..256], want[..256], "sse2 x4 at {counter:#x}");
        blocks::<1>(&lanes.input, counter, &mut ks.0);
        assert_eq!(ks.0[..64], want[..64], "x1 at {counter:#x}");
        #[cfg(target_arch = "x86_64")]
        if Backend::detect().avx2 {
            ks.0 = [0; MAX_FILL];
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { avx2_blocks8(&lanes.input, counter, &mut ks.0) };
            assert_eq!(ks.0[..], want[..], "avx2 x8 at {counter:#x}");
        }
    }

    /// What `fill` returns for each `want`, for each backend, against the crate.
    fn check_fill(key: &[u8; 32], nonce: &[u8; 8], counter: u64) {
        let want_all = reference(key, nonce, counter, 8);
        for backend in backends() {
            let lanes = Salsa20Lanes::new(key, nonce, backend);
            for want in 0..=10 {
                let mut ks = Keystream::new();
                let n = lanes.fill(counter, want, &mut ks);
                assert!(n >= 64 && n % 64 == 0 && n <= MAX_FILL, "{backend:?} want {want}: {n}");
                assert_eq!(ks.0[..n], want_all[..n], "{backend:?} want {want} at {counter:#x}");
            }
        }
    }

    #[test]
    fn spec_expansion_vector() {
        // Salsa20 specification, section 10: k0 = 1..=16, k1 = 201..=216, n = 101..=116. The
        // last 8 bytes of n are the block counter, little-endian.
        let mut key = [0u8; 32];
        for i in 0..16 {
            key[i] = 1 + i as u8;
            key[16 + i] = 201 + i as u8;
        }
        let nonce: [u8; 8] = core::array::from_fn(|i| 101 + i as u8);
        let counter = u64::from_le_bytes(core::array::from_fn(|i| 109 + i as u8));
        let expected: [u8; 64] = [
            69, 37, 68, 39, 41, 15, 107, 193, 255, 139, 122, 6, 170, 233, 217, 98, 89, 144, 182, 106, 21, 51, 200, 65, 239, 49,
            222, 34, 215, 114, 40, 126, 104, 197, 7, 225, 197, 153, 31, 2, 102, 78, 76, 176, 84, 245, 246, 184, 177, 160, 133,
            130, 6, 72, 149, 119, 192, 195, 132, 236, 234, 103, 246, 74,
        ];
        assert_eq!(reference(&key, &nonce, counter, 1)[..], expected[..]);
        for backend in backends() {
            let lanes = Salsa20Lanes::new(&key, &nonce, backend);
            for want in [1, 2, 4, 8] {
                let mut ks = Keystream::new();
                lanes.fill(counter, want, &mut ks);
                assert_eq!(ks.0[..64], expected[..], "{backend:?} want {want}");
            }
        }
        check_forms(&key, &nonce, counter);
    }

    #[test]
    fn counters_across_word_boundaries() {
        let key: [u8; 32] = core::array::from_fn(|i| (i * 37 + 5) as u8);
        let nonce = [0xa5; 8];
        // Lanes that cross 2^32 must carry into word 9; the 2^64 wrap is never reached by a
        // message (the crate refuses it), so it is not tested.
        for counter in [0, 1, 7, 0xffff_fff8, 0xffff_fffc, 0xffff_ffff, 0x1_0000_0000, 0x1_ffff_fffd, u64::MAX - 64] {
            check_forms(&key, &nonce, counter);
            check_fill(&key, &nonce, counter);
            check_xor(&key, &nonce, counter);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn matches_crate_at_any_counter(key in any::<[u8; 32]>(), nonce in any::<[u8; 8]>(),
                                        counter in 0u64..u64::MAX - 16) {
            check_forms(&key, &nonce, counter);
            check_fill(&key, &nonce, counter);
        }
    }
}
