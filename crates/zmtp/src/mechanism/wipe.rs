//! Wiping fixed-size byte arrays of key material and keystream on the data path.
//!
//! `zeroize` writes a byte array one volatile byte at a time: about 2,000 instructions for a
//! 512-byte keystream buffer, 130 for a 32-byte key, per message. A volatile store of the
//! whole array compiles to a copy of a zeroed array (a few wide stores, or `memcpy` for the
//! large one) that the optimizer must keep all the same.

#![allow(unsafe_code)]

use core::sync::atomic::{compiler_fence, Ordering};

/// Overwrites `bytes` with zeros; the writes are not elided even if `bytes` is never read
/// again.
#[inline]
pub(crate) fn wipe<const N: usize>(bytes: &mut [u8; N]) {
    // SAFETY: the pointer comes from a live `&mut [u8; N]`: valid, aligned, not aliased.
    unsafe { core::ptr::write_volatile(bytes, [0; N]) };
    compiler_fence(Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wipes_every_byte() {
        let mut big = [0xa5u8; 512];
        wipe(&mut big);
        assert_eq!(big, [0; 512]);
        let mut small: [u8; 32] = core::array::from_fn(|i| i as u8 + 1);
        wipe(&mut small);
        assert_eq!(small, [0; 32]);
    }
}
