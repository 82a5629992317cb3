//! NaCl `crypto_secretbox` (XSalsa20-Poly1305) for CURVE's data phase: one box per MESSAGE
//! under the session key, sealed and opened in place with a detached tag, so the data path
//! never allocates. The cipher itself is RustCrypto's maintained `crypto_secretbox`
//! (`salsa20` + `poly1305`), as for the handshake boxes; this type only fixes the shape the
//! data phase needs and wipes the key on drop (the crate's key type zeroizes itself).

use crypto_secretbox::aead::{AeadInPlace, KeyInit};
use crypto_secretbox::{Key, Nonce, Tag, XSalsa20Poly1305};

/// The session key of one direction: `crypto_box_beforenm`'s output.
#[derive(Clone)]
pub(crate) struct SecretBox {
    aead: XSalsa20Poly1305,
}

impl SecretBox {
    /// Wraps a 32-byte secretbox key.
    pub(crate) fn new(key: &[u8; 32]) -> SecretBox {
        SecretBox { aead: XSalsa20Poly1305::new(Key::from_slice(key)) }
    }

    /// Encrypts `buf` in place and returns the 16-byte tag.
    pub(crate) fn seal(&self, nonce: &[u8; 24], buf: &mut [u8]) -> [u8; 16] {
        // Fails only beyond 2^38 bytes, which no frame reaches (MAXMSGSIZE is an i64 but a
        // MESSAGE body is bounded by memory long before).
        let tag = self
            .aead
            .encrypt_in_place_detached(Nonce::from_slice(nonce), b"", buf)
            .expect("secretbox input below 2^38 bytes");
        tag.into()
    }

    /// Checks the tag of `buf` (constant time, inside the crate) and decrypts it in place;
    /// `Err` leaves `buf` as it was.
    pub(crate) fn open(&self, nonce: &[u8; 24], buf: &mut [u8], tag: &[u8; 16]) -> Result<(), ()> {
        self.aead
            .decrypt_in_place_detached(Nonce::from_slice(nonce), b"", buf, Tag::from_slice(tag))
            .map_err(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crypto_secretbox::aead::{AeadInPlace, KeyInit};
    use crypto_secretbox::XSalsa20Poly1305;
    use proptest::prelude::*;

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
