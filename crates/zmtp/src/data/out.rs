//! Appending frames to the send buffer with fixed-size copies: the one place the data phase
//! writes into a buffer's spare capacity itself. A short body (at most `INLINE_CAP` bytes in
//! oxmq's messages) is copied whole from its fixed-size inline buffer and a header from its
//! fixed-size array, and only the bytes that belong to the frame are kept: no copy of a
//! length known only at run time, which costs a call into `memcpy` per frame. Measured with
//! callgrind, the safe form (`extend_from_slice` then `truncate`) cost 15 instructions more
//! per frame on oxmq's 1-byte throughput test.

#![allow(unsafe_code)]

/// Appends `head` then `window`, keeping the first `keep` bytes of the two (at most
/// `H + N`): two fixed-size copies.
#[inline(always)]
pub(super) fn append_fixed<const H: usize, const N: usize>(out: &mut Vec<u8>, head: &[u8; H], window: &[u8; N], keep: usize) {
    let keep = keep.min(H + N);
    out.reserve(H + N);
    let at = out.len();
    // SAFETY: `reserve` made room for H + N bytes past `at`, all written here before
    // `set_len` keeps the first `keep` (at most H + N) of them; the sources are the
    // caller's arrays, not `out`.
    unsafe {
        let p = out.as_mut_ptr().add(at);
        std::ptr::copy_nonoverlapping(head.as_ptr(), p, H);
        std::ptr::copy_nonoverlapping(window.as_ptr(), p.add(H), N);
        out.set_len(at + keep);
    }
}

/// Appends the first `n` bytes of `head` (a fixed-size copy of all of it, the rest then
/// overwritten) and then `body`.
#[inline(always)]
pub(super) fn append_header_body<const H: usize>(out: &mut Vec<u8>, head: &[u8; H], n: usize, body: &[u8]) {
    let n = n.min(H);
    out.reserve(H + body.len());
    let at = out.len();
    // SAFETY: `reserve` made room for H + body.len() bytes past `at`: the whole header array
    // is written from `at`, then the body from `at + n` (n <= H), all before `set_len` keeps
    // the first n + body.len(); the sources are the caller's, not `out`.
    unsafe {
        let p = out.as_mut_ptr().add(at);
        std::ptr::copy_nonoverlapping(head.as_ptr(), p, H);
        std::ptr::copy_nonoverlapping(body.as_ptr(), p.add(n), body.len());
        out.set_len(at + n + body.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_kept_bytes_are_appended() {
        let mut out = vec![9u8];
        append_fixed(&mut out, &[1, 2], &[3, 4, 5, 6], 3);
        assert_eq!(out, [9, 1, 2, 3]);
        append_fixed(&mut out, &[7], &[8], 99);
        assert_eq!(out, [9, 1, 2, 3, 7, 8], "never more than the two arrays");
        append_header_body(&mut out, &[0xA, 0xB, 0xC], 2, b"xy");
        assert_eq!(out, [9, 1, 2, 3, 7, 8, 0xA, 0xB, b'x', b'y']);
    }
}
