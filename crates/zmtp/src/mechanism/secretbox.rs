//! NaCl `crypto_secretbox` (XSalsa20-Poly1305) for CURVE's data phase, written for the sizes
//! MESSAGE commands have.
//!
//! Every MESSAGE is one secretbox under the session key with a fresh nonce, so the per-message
//! fixed cost (HSalsa20 for the nonce, the Poly1305 key block) matters as much as the per-byte
//! cost. The RustCrypto crates this replaces on that path make one Salsa20 block at a time and
//! set up an AVX2 Poly1305 (powers of r) for every message, which costs more than the message
//! for small ones. Here Salsa20 runs four blocks side by side in SSE2 lanes on x86-64 (block 0,
//! which gives the Poly1305 key, in the same batch as the message's first blocks), one block
//! at a time for short messages and elsewhere; Poly1305 is the 64-bit "donna" form (three
//! 44/44/42-bit limbs, nine 64x64 products a block), whose setup is free.
//!
//! Long messages take eight blocks at a time in AVX2 lanes where the CPU has AVX2 (detected
//! at run time). The SSE2 and AVX2 paths are the one place in this crate with `unsafe`:
//! calling intrinsics, SSE2 being part of every x86-64 CPU and AVX2 used only once detected.
//!
//! The output is byte for byte the same as `crypto_secretbox`'s (tests below compare them on
//! random inputs); the handshake boxes keep using the RustCrypto crates.

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

/// The session key of one direction: `crypto_box_beforenm`'s output.
#[derive(Clone)]
pub(crate) struct SecretBox {
    key: [u32; 8],
}

impl Drop for SecretBox {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

impl SecretBox {
    /// Wraps a 32-byte secretbox key.
    pub(crate) fn new(key: &[u8; 32]) -> SecretBox {
        SecretBox { key: words8(key) }
    }

    /// Encrypts `buf` in place and returns the 16-byte tag.
    pub(crate) fn seal(&self, nonce: &[u8; 24], buf: &mut [u8]) -> [u8; 16] {
        let ks = Keystream::new(&self.key, nonce);
        let mut first = [0u8; 256];
        let made = ks.fill(0, 32 + buf.len(), &mut first);
        let mut mac_key = [0u8; 32];
        mac_key.copy_from_slice(&first[..32]);
        ks.apply(&first, buf);
        let tag = poly1305(&mac_key, buf);
        mac_key.zeroize();
        first[..made].zeroize(); // volatile, byte by byte: only what was written
        tag
    }

    /// Checks the tag of `buf` (constant time) and decrypts it in place; `Err` leaves `buf`
    /// as it was.
    pub(crate) fn open(&self, nonce: &[u8; 24], buf: &mut [u8], tag: &[u8; 16]) -> Result<(), ()> {
        let ks = Keystream::new(&self.key, nonce);
        let mut first = [0u8; 256];
        let made = ks.fill(0, 32 + buf.len(), &mut first);
        let mut mac_key = [0u8; 32];
        mac_key.copy_from_slice(&first[..32]);
        let ok = bool::from(poly1305(&mac_key, buf).ct_eq(tag));
        mac_key.zeroize();
        if ok {
            ks.apply(&first, buf);
        }
        first[..made].zeroize(); // volatile, byte by byte: only what was written
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }
}

fn words8(b: &[u8; 32]) -> [u32; 8] {
    let mut w = [0u32; 8];
    for (i, c) in b.chunks_exact(4).enumerate() {
        w[i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    w
}

fn xor(buf: &mut [u8], ks: &[u8]) {
    for (b, k) in buf.iter_mut().zip(ks) {
        *b ^= k;
    }
}

// ----- Salsa20 -----

const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Salsa20's double round on any lane type: `u32` for one block, four blocks in SSE2 lanes.
macro_rules! double_round {
    ($x:ident) => {{
        macro_rules! qr {
            ($a:expr, $b:expr, $c:expr, $d:expr) => {
                $x[$b] = $x[$b] ^ ($x[$a] + $x[$d]).rotl(7);
                $x[$c] = $x[$c] ^ ($x[$b] + $x[$a]).rotl(9);
                $x[$d] = $x[$d] ^ ($x[$c] + $x[$b]).rotl(13);
                $x[$a] = $x[$a] ^ ($x[$d] + $x[$c]).rotl(18);
            };
        }
        // columns
        qr!(0, 4, 8, 12);
        qr!(5, 9, 13, 1);
        qr!(10, 14, 2, 6);
        qr!(15, 3, 7, 11);
        // rows
        qr!(0, 1, 2, 3);
        qr!(5, 6, 7, 4);
        qr!(10, 11, 8, 9);
        qr!(15, 12, 13, 14);
    }};
}

/// What the double round needs of a lane: wrapping add, xor, rotate left.
trait Lane: Copy + std::ops::Add<Output = Self> + std::ops::BitXor<Output = Self> {
    fn rotl(self, n: u32) -> Self;
}

/// `u32` with wrapping addition, for the one-block paths.
#[derive(Clone, Copy)]
struct W(u32);

impl std::ops::Add for W {
    type Output = W;
    #[inline(always)]
    fn add(self, o: W) -> W {
        W(self.0.wrapping_add(o.0))
    }
}

impl std::ops::BitXor for W {
    type Output = W;
    #[inline(always)]
    fn bitxor(self, o: W) -> W {
        W(self.0 ^ o.0)
    }
}

impl Lane for W {
    #[inline(always)]
    fn rotl(self, n: u32) -> W {
        W(self.0.rotate_left(n))
    }
}

#[inline(always)]
fn rounds<L: Lane>(x: &mut [L; 16]) {
    for _ in 0..10 {
        double_round!(x);
    }
}

/// HSalsa20: the XSalsa20 subkey for the first 16 nonce bytes.
fn hsalsa(key: &[u32; 8], nonce16: &[u8]) -> [u32; 8] {
    let n = |i: usize| u32::from_le_bytes([nonce16[i], nonce16[i + 1], nonce16[i + 2], nonce16[i + 3]]);
    #[rustfmt::skip]
    let mut x = [
        W(SIGMA[0]), W(key[0]), W(key[1]), W(key[2]),
        W(key[3]), W(SIGMA[1]), W(n(0)), W(n(4)),
        W(n(8)), W(n(12)), W(SIGMA[2]), W(key[4]),
        W(key[5]), W(key[6]), W(key[7]), W(SIGMA[3]),
    ];
    rounds(&mut x);
    let out = [x[0].0, x[5].0, x[10].0, x[15].0, x[6].0, x[7].0, x[8].0, x[9].0];
    x.iter_mut().for_each(|w| w.0 = 0);
    out
}

/// The XSalsa20 keystream of one message: block 0's first half is the Poly1305 key, the rest
/// of the stream pads the message.
struct Keystream {
    state: [u32; 16],
}

impl Drop for Keystream {
    fn drop(&mut self) {
        self.state.zeroize();
    }
}

impl Keystream {
    fn new(key: &[u32; 8], nonce: &[u8; 24]) -> Keystream {
        let mut sub = hsalsa(key, &nonce[..16]);
        let n0 = u32::from_le_bytes([nonce[16], nonce[17], nonce[18], nonce[19]]);
        let n1 = u32::from_le_bytes([nonce[20], nonce[21], nonce[22], nonce[23]]);
        #[rustfmt::skip]
        let state = [
            SIGMA[0], sub[0], sub[1], sub[2],
            sub[3], SIGMA[1], n0, n1,
            0, 0, SIGMA[2], sub[4],
            sub[5], sub[6], sub[7], SIGMA[3],
        ];
        sub.zeroize();
        Keystream { state }
    }

    /// Blocks `counter..` into `out`: one block when `need` bytes fit in it, else four;
    /// returns how many keystream bytes it made.
    fn fill(&self, counter: u64, need: usize, out: &mut [u8; 256]) -> usize {
        if need <= 64 {
            self.block1(counter, out);
            64
        } else {
            self.block4(counter, out);
            256
        }
    }

    fn block1(&self, counter: u64, out: &mut [u8; 256]) {
        let mut x = self.state.map(W);
        x[8] = W(counter as u32);
        x[9] = W((counter >> 32) as u32);
        let input = x;
        rounds(&mut x);
        for i in 0..16 {
            out[4 * i..4 * i + 4].copy_from_slice(&(x[i] + input[i]).0.to_le_bytes());
        }
        x.iter_mut().for_each(|w| w.0 = 0);
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn block4(&self, counter: u64, out: &mut [u8; 256]) {
        let mut one = [0u8; 256];
        for b in 0..4 {
            self.block1(counter + b as u64, &mut one);
            out[64 * b..64 * b + 64].copy_from_slice(&one[..64]);
        }
        one.zeroize();
    }

    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    fn block4(&self, counter: u64, out: &mut [u8; 256]) {
        // SAFETY: SSE2 is part of the x86-64 baseline: every x86-64 CPU has it, and the
        // compiler enables it for every x86-64 target. `block4_sse2` has no other
        // precondition.
        unsafe { self.block4_sse2(counter, out) }
    }

    /// Four blocks at once, one per SSE2 lane.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    fn block4_sse2(&self, counter: u64, out: &mut [u8; 256]) {
        use std::arch::x86_64::*;
        let c = |i: u64| counter.wrapping_add(i);
        let mut x = self.state.map(|w| S(_mm_set1_epi32(w as i32)));
        x[8] = S(_mm_set_epi32(c(3) as i32, c(2) as i32, c(1) as i32, c(0) as i32));
        x[9] = S(_mm_set_epi32((c(3) >> 32) as i32, (c(2) >> 32) as i32, (c(1) >> 32) as i32, (c(0) >> 32) as i32));
        let input = x;
        rounds(&mut x);
        for i in (0..16).step_by(4) {
            let [a, b, cc, d] = [x[i] + input[i], x[i + 1] + input[i + 1], x[i + 2] + input[i + 2], x[i + 3] + input[i + 3]];
            // Transpose: lane b of words i..i+4 becomes block b's 16 bytes.
            let t0 = _mm_unpacklo_epi32(a.0, b.0);
            let t1 = _mm_unpacklo_epi32(cc.0, d.0);
            let t2 = _mm_unpackhi_epi32(a.0, b.0);
            let t3 = _mm_unpackhi_epi32(cc.0, d.0);
            let rows = [
                _mm_unpacklo_epi64(t0, t1),
                _mm_unpackhi_epi64(t0, t1),
                _mm_unpacklo_epi64(t2, t3),
                _mm_unpackhi_epi64(t2, t3),
            ];
            for (blk, v) in rows.into_iter().enumerate() {
                let lo = _mm_cvtsi128_si64(v) as u64;
                let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64;
                let at = 64 * blk + 4 * i;
                out[at..at + 8].copy_from_slice(&lo.to_le_bytes());
                out[at + 8..at + 16].copy_from_slice(&hi.to_le_bytes());
            }
        }
        x.iter_mut().for_each(|v| *v = S(_mm_setzero_si128()));
    }

    /// XORs the keystream from byte 32 on into `buf`; `first` holds blocks 0.. as `fill` made
    /// them for the whole message.
    fn apply(&self, first: &[u8; 256], buf: &mut [u8]) {
        let n = buf.len().min(224);
        xor(&mut buf[..n], &first[32..32 + n]);
        if buf.len() <= 224 {
            return;
        }
        let mut ks = [0u8; 512];
        let mut counter = 4u64;
        let mut used = 0;
        let mut rest = &mut buf[224..];
        while !rest.is_empty() {
            let made = self.fill_wide(counter, rest.len(), &mut ks);
            used = used.max(made);
            let n = rest.len().min(made);
            let (now, later) = std::mem::take(&mut rest).split_at_mut(n);
            xor(now, &ks[..n]);
            rest = later;
            counter += (made / 64) as u64;
        }
        // Wiping is byte by byte (volatile): only what was written.
        ks[..used].zeroize();
    }

    /// Like `fill`, and eight blocks at once where AVX2 is available and more than four
    /// are needed; returns how many keystream bytes it made.
    fn fill_wide(&self, counter: u64, need: usize, out: &mut [u8; 512]) -> usize {
        #[cfg(target_arch = "x86_64")]
        if need > 256 && std::is_x86_feature_detected!("avx2") {
            self.block8(counter, out);
            return 512;
        }
        let head: &mut [u8; 256] = (&mut out[..256]).try_into().expect("256 bytes");
        self.fill(counter, need, head)
    }

    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    fn block8(&self, counter: u64, out: &mut [u8; 512]) {
        // SAFETY: called only after `is_x86_feature_detected!("avx2")` said yes.
        unsafe { self.block8_avx2(counter, out) }
    }

    /// Eight blocks at once, one per AVX2 lane.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn block8_avx2(&self, counter: u64, out: &mut [u8; 512]) {
        use std::arch::x86_64::*;
        let c = |i: u64| counter.wrapping_add(i);
        let lo = |i: u64| c(i) as i32;
        let hi = |i: u64| (c(i) >> 32) as i32;
        let mut x = self.state.map(|w| S8(_mm256_set1_epi32(w as i32)));
        x[8] = S8(_mm256_set_epi32(lo(7), lo(6), lo(5), lo(4), lo(3), lo(2), lo(1), lo(0)));
        x[9] = S8(_mm256_set_epi32(hi(7), hi(6), hi(5), hi(4), hi(3), hi(2), hi(1), hi(0)));
        let input = x;
        rounds(&mut x);
        for i in (0..16).step_by(4) {
            let w = [x[i] + input[i], x[i + 1] + input[i + 1], x[i + 2] + input[i + 2], x[i + 3] + input[i + 3]];
            for half in 0..2 {
                let h = |v: S8| {
                    if half == 0 {
                        _mm256_castsi256_si128(v.0)
                    } else {
                        _mm256_extracti128_si256::<1>(v.0)
                    }
                };
                let (a, b, cc, d) = (h(w[0]), h(w[1]), h(w[2]), h(w[3]));
                // Transpose: lane b of words i..i+4 becomes block b's 16 bytes.
                let t0 = _mm_unpacklo_epi32(a, b);
                let t1 = _mm_unpacklo_epi32(cc, d);
                let t2 = _mm_unpackhi_epi32(a, b);
                let t3 = _mm_unpackhi_epi32(cc, d);
                let rows = [
                    _mm_unpacklo_epi64(t0, t1),
                    _mm_unpackhi_epi64(t0, t1),
                    _mm_unpacklo_epi64(t2, t3),
                    _mm_unpackhi_epi64(t2, t3),
                ];
                for (blk, v) in rows.into_iter().enumerate() {
                    let lo = _mm_cvtsi128_si64(v) as u64;
                    let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64;
                    let at = 64 * (4 * half + blk) + 4 * i;
                    out[at..at + 8].copy_from_slice(&lo.to_le_bytes());
                    out[at + 8..at + 16].copy_from_slice(&hi.to_le_bytes());
                }
            }
        }
        x.iter_mut().for_each(|v| *v = S8(_mm256_setzero_si256()));
    }
}

/// An SSE2 vector of four Salsa20 lanes.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct S(std::arch::x86_64::__m128i);

/// An AVX2 vector of eight Salsa20 lanes. Values exist only inside `block8_avx2`, which runs
/// only where AVX2 was detected: that is what makes its operations' intrinsics sound.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct S8(std::arch::x86_64::__m256i);

#[cfg(target_arch = "x86_64")]
impl std::ops::Add for S8 {
    type Output = S8;
    #[inline(always)]
    #[allow(unsafe_code)]
    fn add(self, o: S8) -> S8 {
        // SAFETY: an S8 exists only where AVX2 was detected (see the type).
        S8(unsafe { std::arch::x86_64::_mm256_add_epi32(self.0, o.0) })
    }
}

#[cfg(target_arch = "x86_64")]
impl std::ops::BitXor for S8 {
    type Output = S8;
    #[inline(always)]
    #[allow(unsafe_code)]
    fn bitxor(self, o: S8) -> S8 {
        // SAFETY: an S8 exists only where AVX2 was detected (see the type).
        S8(unsafe { std::arch::x86_64::_mm256_xor_si256(self.0, o.0) })
    }
}

#[cfg(target_arch = "x86_64")]
impl Lane for S8 {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn rotl(self, n: u32) -> S8 {
        use std::arch::x86_64::*;
        let v = self.0;
        // SAFETY: an S8 exists only where AVX2 was detected (see the type).
        S8(unsafe {
            match n {
                7 => _mm256_or_si256(_mm256_slli_epi32::<7>(v), _mm256_srli_epi32::<25>(v)),
                9 => _mm256_or_si256(_mm256_slli_epi32::<9>(v), _mm256_srli_epi32::<23>(v)),
                13 => _mm256_or_si256(_mm256_slli_epi32::<13>(v), _mm256_srli_epi32::<19>(v)),
                _ => _mm256_or_si256(_mm256_slli_epi32::<18>(v), _mm256_srli_epi32::<14>(v)),
            }
        })
    }
}

// The operations below run only inside `block4_sse2`, after inlining; the `unsafe` blocks
// call SSE2 intrinsics, which need nothing but SSE2 (see `block4`'s SAFETY comment).

#[cfg(target_arch = "x86_64")]
impl std::ops::Add for S {
    type Output = S;
    #[inline(always)]
    #[allow(unsafe_code)]
    fn add(self, o: S) -> S {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        S(unsafe { std::arch::x86_64::_mm_add_epi32(self.0, o.0) })
    }
}

#[cfg(target_arch = "x86_64")]
impl std::ops::BitXor for S {
    type Output = S;
    #[inline(always)]
    #[allow(unsafe_code)]
    fn bitxor(self, o: S) -> S {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        S(unsafe { std::arch::x86_64::_mm_xor_si128(self.0, o.0) })
    }
}

#[cfg(target_arch = "x86_64")]
impl Lane for S {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn rotl(self, n: u32) -> S {
        use std::arch::x86_64::*;
        let v = self.0;
        // SSE2 has no rotate: two shifts and an or. Salsa20 rotates by these four only.
        // SAFETY: SSE2 is part of the x86-64 baseline.
        S(unsafe {
            match n {
                7 => _mm_or_si128(_mm_slli_epi32::<7>(v), _mm_srli_epi32::<25>(v)),
                9 => _mm_or_si128(_mm_slli_epi32::<9>(v), _mm_srli_epi32::<23>(v)),
                13 => _mm_or_si128(_mm_slli_epi32::<13>(v), _mm_srli_epi32::<19>(v)),
                _ => _mm_or_si128(_mm_slli_epi32::<18>(v), _mm_srli_epi32::<14>(v)),
            }
        })
    }
}

// ----- Poly1305 -----

const M44: u64 = 0xfff_ffff_ffff;
const M42: u64 = 0x3ff_ffff_ffff;

fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// Poly1305 of `msg` under the one-time key `key` (r, s).
fn poly1305(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
    let (t0, t1) = (le64(&key[0..8]), le64(&key[8..16]));
    let r0 = t0 & 0xffc_0fff_ffff;
    let r1 = ((t0 >> 44) | (t1 << 20)) & 0xfff_ffc0_ffff;
    let r2 = (t1 >> 24) & 0x00f_ffff_fc0f;
    let (s1, s2) = (r1 * 20, r2 * 20);
    let (mut h0, mut h1, mut h2) = (0u64, 0u64, 0u64);

    let mut block = |m: &[u8], hibit: u64| {
        let (t0, t1) = (le64(&m[0..8]), le64(&m[8..16]));
        h0 += t0 & M44;
        h1 += ((t0 >> 44) | (t1 << 20)) & M44;
        h2 += ((t1 >> 24) & M42) | hibit;
        let m = |a: u64, b: u64| u128::from(a) * u128::from(b);
        let d0 = m(h0, r0) + m(h1, s2) + m(h2, s1);
        let mut d1 = m(h0, r1) + m(h1, r0) + m(h2, s2);
        let mut d2 = m(h0, r2) + m(h1, r1) + m(h2, r0);
        let c = (d0 >> 44) as u64;
        h0 = d0 as u64 & M44;
        d1 += u128::from(c);
        let c = (d1 >> 44) as u64;
        h1 = d1 as u64 & M44;
        d2 += u128::from(c);
        let c = (d2 >> 42) as u64;
        h2 = d2 as u64 & M42;
        h0 += c * 5;
        let c = h0 >> 44;
        h0 &= M44;
        h1 += c;
    };
    let mut blocks = msg.chunks_exact(16);
    for b in &mut blocks {
        block(b, 1 << 40);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut last = [0u8; 16];
        last[..tail.len()].copy_from_slice(tail);
        last[tail.len()] = 1;
        block(&last, 0);
    }

    // Full carry, then h mod p.
    let mut c = h1 >> 44;
    h1 &= M44;
    h2 += c;
    c = h2 >> 42;
    h2 &= M42;
    h0 += c * 5;
    c = h0 >> 44;
    h0 &= M44;
    h1 += c;
    c = h1 >> 44;
    h1 &= M44;
    h2 += c;
    c = h2 >> 42;
    h2 &= M42;
    h0 += c * 5;
    c = h0 >> 44;
    h0 &= M44;
    h1 += c;

    // g = h + 5 - 2^130; take g when it does not underflow (h >= p), in constant time.
    let mut g0 = h0 + 5;
    c = g0 >> 44;
    g0 &= M44;
    let mut g1 = h1 + c;
    c = g1 >> 44;
    g1 &= M44;
    let mut g2 = (h2 + c).wrapping_sub(1 << 42);
    let mask = (g2 >> 63).wrapping_sub(1);
    g0 &= mask;
    g1 &= mask;
    g2 &= mask;
    let keep = !mask;
    h0 = (h0 & keep) | g0;
    h1 = (h1 & keep) | g1;
    h2 = (h2 & keep) | g2;

    // + s, mod 2^128.
    let (s0, s1) = (le64(&key[16..24]), le64(&key[24..32]));
    h0 += s0 & M44;
    c = h0 >> 44;
    h0 &= M44;
    h1 += (((s0 >> 44) | (s1 << 20)) & M44) + c;
    c = h1 >> 44;
    h1 &= M44;
    h2 += ((s1 >> 24) & M42) + c;
    h2 &= M42;
    let lo = h0 | (h1 << 44);
    let hi = (h1 >> 20) | (h2 << 24);
    let mut tag = [0u8; 16];
    tag[..8].copy_from_slice(&lo.to_le_bytes());
    tag[8..].copy_from_slice(&hi.to_le_bytes());
    tag
}

#[cfg(test)]
mod tests {
    use super::*;
    use crypto_secretbox::aead::{AeadInPlace, KeyInit};
    use crypto_secretbox::XSalsa20Poly1305;
    use proptest::prelude::*;

    #[test]
    fn poly1305_rfc8439_vector() {
        // RFC 8439 section 2.5.2.
        let key: [u8; 32] = [
            0x85, 0xd6, 0xbe, 0x78, 0x57, 0x55, 0x6d, 0x33, 0x7f, 0x44, 0x52, 0xfe, 0x42, 0xd5, 0x06, 0xa8, 0x01,
            0x03, 0x80, 0x8a, 0xfb, 0x0d, 0xb2, 0xfd, 0x4a, 0xbf, 0xf6, 0xaf, 0x41, 0x49, 0xf5, 0x1b,
        ];
        let tag = poly1305(&key, b"Cryptographic Forum Research Group");
        assert_eq!(
            tag,
            [0xa8, 0x06, 0x1d, 0xc1, 0x30, 0x51, 0x36, 0xc6, 0xc2, 0x2b, 0x8b, 0xaf, 0x0c, 0x01, 0x27, 0xa9]
        );
    }

    #[test]
    fn poly1305_wraps_near_p() {
        // r = 1 and a message of 0xff..: h lands at or just above p, the reduction's corner.
        let mut key = [0u8; 32];
        key[0] = 1;
        for len in [16, 32, 48] {
            let msg = vec![0xffu8; len];
            let ours = poly1305(&key, &msg);
            use poly1305::universal_hash::KeyInit as _;
            let theirs = poly1305::Poly1305::new(poly1305::Key::from_slice(&key)).compute_unpadded(&msg);
            assert_eq!(&ours[..], &theirs[..], "len {len}");
        }
    }

    fn reference(key: &[u8; 32], nonce: &[u8; 24], msg: &[u8]) -> (Vec<u8>, [u8; 16]) {
        let aead = XSalsa20Poly1305::new(key.into());
        let mut ct = msg.to_vec();
        let tag = aead.encrypt_in_place_detached(nonce.into(), b"", &mut ct).unwrap();
        (ct, tag.into())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn matches_crypto_secretbox(key in any::<[u8; 32]>(), nonce in any::<[u8; 24]>(),
                                    msg in proptest::collection::vec(any::<u8>(), 0..700)) {
            let (ct, tag) = reference(&key, &nonce, &msg);
            let sb = SecretBox::new(&key);
            let mut ours = msg.clone();
            prop_assert_eq!(sb.seal(&nonce, &mut ours), tag);
            prop_assert_eq!(&ours, &ct);
            prop_assert!(sb.open(&nonce, &mut ours, &tag).is_ok());
            prop_assert_eq!(&ours, &msg);
        }

        #[test]
        fn any_change_is_refused(key in any::<[u8; 32]>(), nonce in any::<[u8; 24]>(),
                                 msg in proptest::collection::vec(any::<u8>(), 1..300),
                                 at in any::<usize>(), mask in 1u8..) {
            let sb = SecretBox::new(&key);
            let mut ct = msg.clone();
            let tag = sb.seal(&nonce, &mut ct);
            let mut bad = ct.clone();
            let i = at % bad.len();
            bad[i] ^= mask;
            let before = bad.clone();
            prop_assert!(sb.open(&nonce, &mut bad, &tag).is_err());
            prop_assert_eq!(bad, before);
            let mut bad_tag = tag;
            bad_tag[at % 16] ^= mask;
            prop_assert!(sb.open(&nonce, &mut ct, &bad_tag).is_err());
        }
    }

    #[test]
    fn every_length_around_block_edges() {
        let key = [7u8; 32];
        let nonce = [9u8; 24];
        let sb = SecretBox::new(&key);
        for len in (0..=600).chain([1000, 1024 + 224, 4096, 65536, 65536 + 33]) {
            let msg: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let (ct, tag) = reference(&key, &nonce, &msg);
            let mut ours = msg.clone();
            assert_eq!(sb.seal(&nonce, &mut ours), tag, "len {len}");
            assert_eq!(ours, ct, "len {len}");
        }
    }
}
