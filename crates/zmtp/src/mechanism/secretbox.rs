//! NaCl `crypto_secretbox` (XSalsa20-Poly1305) for CURVE's data phase: one box per MESSAGE
//! under the session key, sealed and opened in place with a detached tag, so the data path
//! never allocates.
//!
//! XSalsa20(k, n) is Salsa20(HSalsa20(k, n[..16]), n[16..]), and every MESSAGE nonce of one
//! direction shares its first 16 bytes ("CurveZMQMESSAGEC" or "...S"). [`MessageBox`] therefore
//! runs HSalsa20 once per direction and connection, and each message costs only Salsa20 and
//! Poly1305, from RustCrypto's maintained `salsa20` and `poly1305` crates (the ones
//! `crypto_secretbox` is built from): no cipher code of our own, only the composition, and the
//! output is byte for byte `crypto_secretbox`'s (tested below against the crate itself).
//!
//! Poly1305 is fed the whole 16-byte blocks through `UniversalHash::update_padded` (an exact
//! multiple of 16, so nothing is padded), which hands the AVX2 backend four blocks at a time,
//! and only the last partial block through `compute_unpadded`; `crypto_secretbox` feeds every
//! block one by one through `compute_unpadded`. With the default feature `fast-cipher`,
//! bodies below [`poly1305_scalar::CROSSOVER`] go to our scalar Poly1305 instead, which has no
//! per-key setup (tested against the crate in `poly1305_scalar.rs`, and below against
//! `crypto_secretbox`).

use poly1305::universal_hash::UniversalHash;
use poly1305::universal_hash::KeyInit;
use poly1305::Poly1305;
use salsa20::cipher::{KeyIvInit, StreamCipher};
use salsa20::Salsa20;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

#[cfg(feature = "fast-cipher")]
use super::poly1305_scalar;

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
        let mut sub = salsa20::hsalsa::<salsa20::cipher::consts::U10>(
            salsa20::Key::from_slice(&self.key[..]),
            prefix.into(),
        );
        let mut subkey = Zeroizing::new([0u8; 32]);
        subkey.copy_from_slice(&sub);
        zeroize::Zeroize::zeroize(sub.as_mut_slice());
        MessageBox { subkey }
    }
}

/// `crypto_secretbox` for the nonces `prefix || tail` of one fixed 16-byte prefix: the
/// HSalsa20 subkey is computed once, in [`SecretBox::with_prefix`], and wiped on drop.
#[derive(Clone)]
pub(crate) struct MessageBox {
    subkey: Zeroizing<[u8; 32]>,
}

impl MessageBox {
    /// Salsa20 positioned after the first 32 bytes of keystream, and the Poly1305 key made of
    /// those 32 bytes (NaCl's layout).
    #[inline(always)]
    fn start(&self, tail: &[u8; 8]) -> (Salsa20, Zeroizing<[u8; 32]>) {
        let mut cipher = Salsa20::new(salsa20::Key::from_slice(&self.subkey[..]), tail.into());
        let mut mac_key = Zeroizing::new([0u8; 32]);
        cipher.apply_keystream(&mut mac_key[..]);
        (cipher, mac_key)
    }

    /// Encrypts `buf` in place and returns the 16-byte tag.
    pub(crate) fn seal(&self, tail: &[u8; 8], buf: &mut [u8]) -> [u8; 16] {
        let (mut cipher, mac_key) = self.start(tail);
        cipher.apply_keystream(buf);
        tag_of(&mac_key, buf)
    }

    /// Checks the tag of `buf` in constant time and decrypts it in place; `Err` leaves `buf`
    /// as it was.
    pub(crate) fn open(&self, tail: &[u8; 8], buf: &mut [u8], tag: &[u8; 16]) -> Result<(), ()> {
        let (mut cipher, mac_key) = self.start(tail);
        if bool::from(tag_of(&mac_key, buf).ct_eq(tag)) {
            cipher.apply_keystream(buf);
            Ok(())
        } else {
            Err(())
        }
    }
}

/// Unpadded Poly1305 of `data` under `key`: [`poly1305_scalar`] for short data (`fast-cipher`),
/// else the crate, whole blocks in groups (the backend's parallel path), then the partial tail
/// with NaCl's padding. The crate's instance is made and consumed here, so its state (a few
/// hundred bytes with the AVX2 backend) is not moved around.
#[inline(always)]
fn tag_of(key: &[u8; 32], data: &[u8]) -> [u8; 16] {
    #[cfg(feature = "fast-cipher")]
    if data.len() < poly1305_scalar::CROSSOVER {
        return poly1305_scalar::tag(key, data);
    }
    let mut mac = Poly1305::new(poly1305::Key::from_slice(key));
    let whole = data.len() & !15;
    if whole > 0 {
        mac.update_padded(&data[..whole]);
    }
    mac.compute_unpadded(&data[whole..]).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crypto_secretbox::aead::{AeadInPlace, KeyInit};
    use crypto_secretbox::XSalsa20Poly1305;
    use proptest::prelude::*;

    fn split(key: &[u8; 32], nonce: &[u8; 24]) -> MessageBox {
        SecretBox::new(key).with_prefix(nonce[..16].try_into().unwrap())
    }

    fn tail(nonce: &[u8; 24]) -> &[u8; 8] {
        nonce[16..].try_into().unwrap()
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
            let mb = split(&key, &nonce);
            let mut ours = msg.clone();
            prop_assert_eq!(mb.seal(tail(&nonce), &mut ours), tag);
            prop_assert_eq!(&ours, &ct);
            prop_assert!(mb.open(tail(&nonce), &mut ours, &tag).is_ok());
            prop_assert_eq!(&ours, &msg);
        }

        #[test]
        fn any_change_is_refused(key in any::<[u8; 32]>(), nonce in any::<[u8; 24]>(),
                                 msg in proptest::collection::vec(any::<u8>(), 1..300),
                                 at in any::<usize>(), mask in 1u8..) {
            let mb = split(&key, &nonce);
            let mut ct = msg.clone();
            let tag = mb.seal(tail(&nonce), &mut ct);
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

    #[test]
    fn every_length_around_block_edges() {
        let key = [7u8; 32];
        let nonce = [9u8; 24];
        let mb = split(&key, &nonce);
        // Around the Poly1305 crossover too (12 KiB).
        for len in (0..=600).chain([1000, 1024 + 224, 4096, 12 * 1024 - 1, 12 * 1024, 12 * 1024 + 1, 65536, 65536 + 33]) {
            let msg: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let (ct, tag) = reference(&key, &nonce, &msg);
            let mut ours = msg.clone();
            assert_eq!(mb.seal(tail(&nonce), &mut ours), tag, "len {len}");
            assert_eq!(ours, ct, "len {len}");
            assert!(mb.open(tail(&nonce), &mut ours, &tag).is_ok(), "len {len}");
            assert_eq!(ours, msg, "len {len}");
        }
    }
}
