//! NaCl `crypto_secretbox` (XSalsa20-Poly1305) for CURVE's data phase: one box per MESSAGE
//! under the session key, sealed straight into the caller's output buffer and opened in
//! place, with a detached tag, so the data path allocates nothing of its own.
//!
//! XSalsa20(k, n) is Salsa20(HSalsa20(k, n[..16]), n[16..]), and every MESSAGE nonce of one
//! direction shares its first 16 bytes ("CurveZMQMESSAGEC" or "...S"). [`MessageBox`] therefore
//! runs HSalsa20 once per direction and connection, and each message costs only Salsa20 and
//! Poly1305. NaCl's layout: the first 32 bytes of the Salsa20 keystream are the message's
//! Poly1305 key, the body is XORed with the keystream from byte 32 on, and the tag is the
//! Poly1305 of the ciphertext.
//!
//! Two builds of the same composition, byte for byte `crypto_secretbox`'s (tested below
//! against the crate, in both):
//!
//! * with the default feature `fast-cipher`, the keystream comes from
//!   [`super::salsa20_lanes`] (four or eight blocks per call in SIMD lanes, lone blocks from
//!   the `salsa20` crate), and Poly1305 from [`super::poly1305_scalar`] below its crossover and
//!   the `poly1305` crate above;
//! * without it, only RustCrypto's `salsa20` and `poly1305` crates (the ones
//!   `crypto_secretbox` is built from) are used.

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

#[cfg(not(feature = "fast-cipher"))]
use crates_only::{tag_of, Workspace};
#[cfg(feature = "fast-cipher")]
use fast::{tag_of, Workspace};

/// The session key of one connection: `crypto_box_beforenm`'s output.
#[derive(Clone)]
pub(crate) struct SecretBox {
    key: Zeroizing<[u8; 32]>,
}

impl SecretBox {
    /// Wraps a 32-byte secretbox key.
    pub(crate) fn new(key: &[u8; 32]) -> SecretBox {
        SecretBox { key: Zeroizing::new(*key) }
    }

    /// The box for every nonce that starts with `prefix`.
    pub(crate) fn with_prefix(&self, prefix: &[u8; 16]) -> MessageBox {
        let mut sub = salsa20::hsalsa::<salsa20::cipher::consts::U10>(salsa20::Key::from_slice(&self.key[..]), prefix.into());
        let mut subkey = Zeroizing::new([0u8; 32]);
        subkey.copy_from_slice(&sub);
        zeroize::Zeroize::zeroize(sub.as_mut_slice());
        MessageBox { subkey, work: Workspace::new() }
    }
}

/// `crypto_secretbox` for the nonces `prefix || tail` of one fixed 16-byte prefix: the
/// HSalsa20 subkey is computed once, in [`SecretBox::with_prefix`], and wiped on drop.
#[derive(Clone)]
pub(crate) struct MessageBox {
    subkey: Zeroizing<[u8; 32]>,
    /// What the build keeps from one message to the next besides the key.
    work: Workspace,
}

impl MessageBox {
    /// Seals the plaintext `out[at..] || body`: encrypts the bytes already in `out` from
    /// `at` on in place (CURVE's flags byte), appends `body` encrypted, and returns the
    /// 16-byte tag of the ciphertext `out[at..]`.
    #[inline]
    pub(crate) fn seal_append(&mut self, tail: &[u8; 8], out: &mut Vec<u8>, at: usize, body: &[u8]) -> [u8; 16] {
        let mut pad = self.work.pad(&self.subkey, tail, out.len() - at + body.len());
        pad.seal_append(out, at, body);
        tag_of(pad.mac_key(), &out[at..])
    }

    /// Checks the tag of `buf` in constant time and decrypts it in place; `Err` leaves `buf`
    /// as it was.
    pub(crate) fn open(&mut self, tail: &[u8; 8], buf: &mut [u8], tag: &[u8; 16]) -> Result<(), ()> {
        let mut pad = self.work.pad(&self.subkey, tail, buf.len());
        // Compared as one 128-bit word: subtle's byte-array comparison costs about 150
        // instructions more per message (one optimization barrier per byte).
        let ours = u128::from_le_bytes(tag_of(pad.mac_key(), buf));
        if bool::from(ours.ct_eq(&u128::from_le_bytes(*tag))) {
            pad.apply(buf);
            Ok(())
        } else {
            Err(())
        }
    }

    /// This box with the SSE2 keystream even on an AVX2 CPU.
    #[cfg(all(any(test, fuzzing), feature = "fast-cipher"))]
    pub(crate) fn sse2(mut self) -> MessageBox {
        self.work = Workspace::sse2();
        self
    }
}

/// Unpadded Poly1305 of `data` under `key` from the `poly1305` crate: whole blocks in groups
/// (the AVX2 backend's four-block path), then the partial tail with NaCl's padding (NaCl's
/// `crypto_secretbox` feeds every block one by one through `compute_unpadded`). The instance
/// is made and consumed here, so its state (a few hundred bytes with the AVX2 backend) is not
/// moved around.
#[inline(always)]
fn crate_tag(key: &[u8; 32], data: &[u8]) -> [u8; 16] {
    use poly1305::universal_hash::{KeyInit, UniversalHash};
    let mut mac = poly1305::Poly1305::new(poly1305::Key::from_slice(key));
    let whole = data.len() & !15;
    if whole > 0 {
        mac.update_padded(&data[..whole]);
    }
    mac.compute_unpadded(&data[whole..]).into()
}

/// The `fast-cipher` build: our lanes and short-message Poly1305, the crates for the rest.
#[cfg(feature = "fast-cipher")]
mod fast {
    use super::super::poly1305_scalar;
    use super::super::salsa20_lanes::{Backend, Keystream, Salsa20Lanes, MAX_FILL};
    use super::super::wipe::wipe;
    use super::crate_tag;

    /// The keystream form this CPU runs (detected once per box) and the keystream buffer,
    /// kept with the box so that a message neither clears nor moves 512 bytes (on the heap,
    /// so that a `Cipher` stays small to move); wiped after every message by its [`Pad`].
    #[derive(Clone)]
    pub(super) struct Workspace {
        backend: Backend,
        ks: Box<Keystream>,
    }

    impl Workspace {
        pub(super) fn new() -> Workspace {
            Workspace { backend: Backend::detect(), ks: Box::new(Keystream::new()) }
        }

        #[cfg(any(test, fuzzing))]
        pub(super) fn sse2() -> Workspace {
            Workspace { backend: Backend::sse2(), ks: Box::new(Keystream::new()) }
        }

        /// The keystream of the message with nonce `prefix || tail` (the box's subkey) and a
        /// `len`-byte body. The first fill is sized for the whole message (Poly1305 key
        /// included), so a short message makes one call.
        #[inline(always)]
        pub(super) fn pad(&mut self, subkey: &[u8; 32], tail: &[u8; 8], len: usize) -> Pad<'_> {
            let salsa = Salsa20Lanes::new(subkey, tail, self.backend);
            let end = salsa.fill(0, (32 + len).div_ceil(64), &mut self.ks);
            let mut mac_key = [0u8; 32];
            mac_key.copy_from_slice(&self.ks.0[..32]);
            Pad { salsa, ks: &mut self.ks, at: 32, end, dirty: end, next_block: (end / 64) as u64, mac_key }
        }
    }

    /// The keystream of one message, positioned at byte 32 (after the Poly1305 key).
    pub(super) struct Pad<'a> {
        salsa: Salsa20Lanes,
        /// Keystream made and not yet used: `ks.0[at..end]`.
        ks: &'a mut Keystream,
        at: usize,
        end: usize,
        /// How much of `ks` holds keystream (to be wiped).
        dirty: usize,
        /// The block `ks.0[end..]` would start with.
        next_block: u64,
        /// The first 32 bytes of keystream, copied out since a refill overwrites `ks`.
        mac_key: [u8; 32],
    }

    impl Drop for Pad<'_> {
        fn drop(&mut self) {
            wipe(&mut self.mac_key);
            // A one-block message (the crate's lone block) dirties only 64 bytes.
            match self.ks.0.first_chunk_mut::<64>() {
                Some(first) if self.dirty <= 64 => wipe(first),
                _ => wipe(&mut self.ks.0),
            }
        }
    }

    impl Pad<'_> {
        pub(super) fn mac_key(&self) -> &[u8; 32] {
            &self.mac_key
        }

        /// XORs `buf` with the next bytes of keystream: what is left in the buffer, then
        /// whole batches straight into `buf`, then a refill for the rest.
        pub(super) fn apply(&mut self, mut buf: &mut [u8]) {
            loop {
                let n = (self.end - self.at).min(buf.len());
                let (now, rest) = buf.split_at_mut(n);
                for (b, k) in now.iter_mut().zip(&self.ks.0[self.at..self.at + n]) {
                    *b ^= k;
                }
                self.at += n;
                buf = rest;
                if buf.is_empty() {
                    return;
                }
                let done = self.salsa.xor_batches(self.next_block, buf);
                self.next_block += (done / 64) as u64;
                buf = &mut buf[done..];
                if buf.is_empty() {
                    return;
                }
                self.end = self.salsa.fill(self.next_block, buf.len().div_ceil(64), self.ks);
                self.dirty = self.dirty.max(self.end);
                self.next_block += (self.end / 64) as u64;
                self.at = 0;
            }
        }

        /// Encrypts `out[at..]` in place and appends `body` encrypted. A plaintext the
        /// buffered keystream covers is copied then encrypted in one go; a longer body piece
        /// by piece, each piece ending where the buffered keystream or a batch ends, so it is
        /// still in L1 when it is encrypted (and a batch takes [`Pad::apply`]'s direct path)
        /// rather than copied whole and encrypted in a second pass.
        #[inline(always)]
        pub(super) fn seal_append(&mut self, out: &mut Vec<u8>, at: usize, body: &[u8]) {
            if out.len() - at + body.len() <= self.end - self.at {
                out.extend_from_slice(body);
                self.apply(&mut out[at..]);
            } else {
                self.apply(&mut out[at..]);
                self.append_in_pieces(body, out);
            }
        }

        #[inline(never)]
        fn append_in_pieces(&mut self, mut src: &[u8], out: &mut Vec<u8>) {
            out.reserve(src.len());
            while !src.is_empty() {
                // 4 KiB: whole batches of every form (16 lanes make 1 KiB), still in L1 when
                // they are encrypted.
                let piece = if self.at < self.end { self.end - self.at } else { 8 * MAX_FILL };
                let (now, rest) = src.split_at(piece.min(src.len()));
                let at = out.len();
                out.extend_from_slice(now);
                self.apply(&mut out[at..]);
                src = rest;
            }
        }
    }

    /// [`poly1305_scalar`] for short data (no per-key setup), the crate from
    /// [`poly1305_scalar::CROSSOVER`] bytes on.
    #[inline(always)]
    pub(super) fn tag_of(key: &[u8; 32], data: &[u8]) -> [u8; 16] {
        if data.len() < poly1305_scalar::CROSSOVER {
            poly1305_scalar::tag(key, data)
        } else {
            crate_tag(key, data)
        }
    }
}

/// The RustCrypto-only build (`--no-default-features`).
#[cfg(not(feature = "fast-cipher"))]
mod crates_only {
    use salsa20::cipher::{KeyIvInit, StreamCipher};
    use zeroize::Zeroizing;

    pub(super) use super::crate_tag as tag_of;

    /// Nothing is kept between messages.
    #[derive(Clone)]
    pub(super) struct Workspace;

    impl Workspace {
        pub(super) fn new() -> Workspace {
            Workspace
        }

        /// The `salsa20` crate's stream for nonce `prefix || tail`, positioned after the
        /// Poly1305 key.
        #[inline(always)]
        pub(super) fn pad(&mut self, subkey: &[u8; 32], tail: &[u8; 8], _len: usize) -> Pad {
            let mut cipher = salsa20::Salsa20::new(subkey.into(), tail.into());
            let mut mac_key = Zeroizing::new([0u8; 32]);
            cipher.apply_keystream(&mut mac_key[..]);
            Pad { cipher, mac_key }
        }
    }

    pub(super) struct Pad {
        cipher: salsa20::Salsa20,
        mac_key: Zeroizing<[u8; 32]>,
    }

    impl Pad {
        pub(super) fn mac_key(&self) -> &[u8; 32] {
            &self.mac_key
        }

        pub(super) fn apply(&mut self, buf: &mut [u8]) {
            self.cipher.apply_keystream(buf);
        }

        pub(super) fn seal_append(&mut self, out: &mut Vec<u8>, at: usize, body: &[u8]) {
            out.extend_from_slice(body);
            self.apply(&mut out[at..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crypto_secretbox::aead::{AeadInPlace, KeyInit};
    use crypto_secretbox::XSalsa20Poly1305;
    use proptest::prelude::*;

    /// The boxes under test for `key` and the nonce's prefix: the one this CPU gets and, in
    /// the `fast-cipher` build, the SSE2 one too.
    fn boxes(key: &[u8; 32], nonce: &[u8; 24]) -> Vec<MessageBox> {
        let mb = SecretBox::new(key).with_prefix(nonce[..16].try_into().unwrap());
        #[cfg(feature = "fast-cipher")]
        return vec![mb.clone(), mb.sse2()];
        #[cfg(not(feature = "fast-cipher"))]
        return vec![mb];
    }

    fn tail(nonce: &[u8; 24]) -> &[u8; 8] {
        nonce[16..].try_into().unwrap()
    }

    /// `seal_append` of `msg` split at `split` into the part already in the output (after
    /// bytes that are not to be sealed) and the part appended: the ciphertext and tag.
    fn seal(mb: &mut MessageBox, nonce: &[u8; 24], msg: &[u8], split: usize) -> (Vec<u8>, [u8; 16]) {
        let mut out = b"before".to_vec();
        let (head, body) = msg.split_at(split.min(msg.len()));
        out.extend_from_slice(head);
        let tag = mb.seal_append(tail(nonce), &mut out, 6, body);
        assert_eq!(&out[..6], b"before");
        (out.split_off(6), tag)
    }

    fn reference(key: &[u8; 32], nonce: &[u8; 24], msg: &[u8]) -> (Vec<u8>, [u8; 16]) {
        let aead = XSalsa20Poly1305::new(key.into());
        let mut ct = msg.to_vec();
        let tag = aead.encrypt_in_place_detached(nonce.into(), b"", &mut ct).unwrap();
        (ct, tag.into())
    }

    /// Seals and opens `msg` with every box, against `crypto_secretbox`.
    fn round_trip(key: &[u8; 32], nonce: &[u8; 24], msg: &[u8]) {
        let (ct, tag) = reference(key, nonce, msg);
        for mut mb in boxes(key, nonce) {
            // A part in place as CURVE has (the flags byte), none, and one that ends after the
            // first keystream batch.
            for split in [1, 0, 600] {
                let (mut ours, our_tag) = seal(&mut mb, nonce, msg, split);
                assert_eq!(our_tag, tag, "len {} split {split}", msg.len());
                assert!(ours == ct, "ciphertext differs, len {} split {split}", msg.len());
                assert!(mb.open(tail(nonce), &mut ours, &tag).is_ok(), "len {}", msg.len());
                assert!(ours == msg, "plaintext differs, len {}", msg.len());
            }
        }
    }

    #[test]
    fn nacl_secretbox_vector() {
        // NaCl tests/secretbox.c and secretbox.out (the 32 leading zero bytes of NaCl's
        // padded API left out): tag, then ciphertext.
        let hex = |s: &str| -> Vec<u8> {
            let s: String = s.split_whitespace().collect();
            (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
        };
        let key: [u8; 32] = hex("1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389").try_into().unwrap();
        let nonce: [u8; 24] = hex("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37").try_into().unwrap();
        let msg = hex("be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a
             1ac728d45e6c61296cdc3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057
             e2f6556ad6b1318a024a838f21af1fde048977eb48f59ffd4924ca1c60902e52f0a089bc76897040
             e082f937763848645e0705");
        let boxed = hex("f3ffc7703f9400e52a7dfb4b3d3305d98e993b9f48681273c29650ba32fc76ce48332ea7164d96a4
             476fb8c531a1186ac0dfc17c98dce87b4da7f011ec48c97271d2c20f9b928fe2270d6fb863d51738
             b48eeee314a7cc8ab932164548e526ae90224368517acfeabd6bb3732bc0e9da99832b61ca01b6de
             56244a9e88d5f9b37973f622a43d14a6599b1f654cb45a74e355a5");
        for mut mb in boxes(&key, &nonce) {
            let (ours, tag) = seal(&mut mb, &nonce, &msg, 1);
            assert_eq!(tag[..], boxed[..16]);
            assert_eq!(ours[..], boxed[16..]);
        }
        round_trip(&key, &nonce, &msg);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn matches_crypto_secretbox(key in any::<[u8; 32]>(), nonce in any::<[u8; 24]>(),
                                    msg in proptest::collection::vec(any::<u8>(), 0..=5000)) {
            round_trip(&key, &nonce, &msg);
        }

        #[test]
        fn any_change_is_refused(key in any::<[u8; 32]>(), nonce in any::<[u8; 24]>(),
                                 msg in proptest::collection::vec(any::<u8>(), 1..2000),
                                 at in any::<usize>(), mask in 1u8..) {
            for mut mb in boxes(&key, &nonce) {
                let (mut ct, tag) = seal(&mut mb, &nonce, &msg, 1);
                let mut bad = ct.clone();
                let i = at % bad.len();
                bad[i] ^= mask;
                let before = bad.clone();
                prop_assert!(mb.open(tail(&nonce), &mut bad, &tag).is_err());
                prop_assert_eq!(bad, before);
                let mut bad_tag = tag;
                bad_tag[at % 16] ^= mask;
                prop_assert!(mb.open(tail(&nonce), &mut ct, &bad_tag).is_err());
            }
        }
    }

    /// Every length to 1100, then lengths around every block and batch edge (the body starts
    /// 32 bytes into block 0; batches are 1, 4 and 8 blocks), around the Poly1305 crossover
    /// (12 KiB), and 64 KiB + 33 (a CURVE
    /// MESSAGE of a 64 KiB frame).
    #[test]
    fn every_length_around_edges() {
        let key = [7u8; 32];
        let nonce = [9u8; 24];
        let mut lens: Vec<usize> = (0..=1100).collect();
        for edge in (1..=80usize).map(|blocks| 64 * blocks - 32).chain([1344, 4096, 12 * 1024, 65536]) {
            lens.extend(edge.saturating_sub(2)..=edge + 2);
        }
        lens.push(65536 + 33);
        let big: Vec<u8> = (0..=65536 + 33).map(|i: usize| (i * 131 + i / 256) as u8).collect();
        for len in lens {
            round_trip(&key, &nonce, &big[..len]);
        }
    }
}
