//! The data-phase cipher's pieces with explicit keys, for the `cipher_diff` fuzz target,
//! which compares them with the RustCrypto crates. Compiled only by cargo-fuzz (`--cfg
//! fuzzing`), with the `fast-cipher` feature; not part of the API.

use super::poly1305_scalar;
use super::salsa20_lanes::{Backend, Keystream, Salsa20Lanes};
use super::secretbox::{MessageBox, SecretBox};

fn message_box(key: &[u8; 32], nonce: &[u8; 24], sse2: bool) -> MessageBox {
    let mb = SecretBox::new(key).with_prefix(nonce[..16].try_into().unwrap());
    if sse2 {
        mb.sse2()
    } else {
        mb
    }
}

/// `crypto_secretbox` of `head || body` through [`MessageBox::seal_append`], with `prefix`
/// (not sealed) then `head` already in the output and `body` appended: the whole output and
/// the tag.
pub fn seal(key: &[u8; 32], nonce: &[u8; 24], prefix: &[u8], head: &[u8], body: &[u8], sse2: bool) -> (Vec<u8>, [u8; 16]) {
    let mut out = [prefix, head].concat();
    let tag = message_box(key, nonce, sse2).seal_append(nonce[16..].try_into().unwrap(), &mut out, prefix.len(), body);
    (out, tag)
}

/// [`MessageBox::open`]: whether `buf` authenticates under `tag` (then decrypted in place).
pub fn open(key: &[u8; 32], nonce: &[u8; 24], buf: &mut [u8], tag: &[u8; 16], sse2: bool) -> bool {
    message_box(key, nonce, sse2).open(nonce[16..].try_into().unwrap(), buf, tag).is_ok()
}

/// `len` bytes of Salsa20 keystream from block `counter` on, made the way the data phase
/// makes them: whole batches XORed in place (into zeros), the rest through `fill`.
pub fn keystream(key: &[u8; 32], nonce: &[u8; 8], counter: u64, len: usize, sse2: bool) -> Vec<u8> {
    let backend = if sse2 { Backend::sse2() } else { Backend::detect() };
    let salsa = Salsa20Lanes::new(key, nonce, backend);
    let mut out = vec![0u8; len];
    let mut ks = Keystream::new();
    let (mut at, mut block) = (0, counter);
    while at < len {
        let done = salsa.xor_batches(block, &mut out[at..]);
        at += done;
        block = block.wrapping_add((done / 64) as u64);
        if at == len {
            break;
        }
        let made = salsa.fill(block, (len - at).div_ceil(64), &mut ks);
        let n = made.min(len - at);
        out[at..at + n].copy_from_slice(&ks.0[..n]);
        at += n;
        block = block.wrapping_add((made / 64) as u64);
    }
    out
}

/// The scalar Poly1305 (whatever the length; the data phase uses it below its crossover).
pub fn poly1305(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
    poly1305_scalar::tag(key, msg)
}
