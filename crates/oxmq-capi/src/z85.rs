//! Z85 (ZeroMQ RFC 32): binary to printable text, 4 bytes to 5 characters.
//!
//! The codec lives in the zmtp crate (shared with the CURVE key options); the two exports wrap it in libzmq's buffer
//! conventions: the caller provides `dest` (`size * 5 / 4 + 1` bytes to encode, `strlen * 4 / 5`
//! bytes to decode), input lengths must be multiples of 4 (encode) or 5 (decode), and failure is
//! `NULL` with `errno = EINVAL`.

use crate::guard::{guard, non_null};
use oxmq::Error;
use std::ffi::c_char;

/// Encodes `data` (length a multiple of 4). `None` when the length is not. The codec is the
/// one the CURVE options use (`oxmq::security`, from the zmtp crate): one Z85 in the project.
pub fn encode(data: &[u8]) -> Option<String> {
    oxmq::security::z85_encode(data).ok()
}

/// Decodes `text` (length a multiple of 5). `None` on a bad length, a character outside the
/// alphabet or a group whose value exceeds 32 bits.
pub fn decode(text: &[u8]) -> Option<Vec<u8>> {
    oxmq::security::z85_decode(text).ok()
}

#[no_mangle]
pub unsafe extern "C" fn zmq_z85_encode(dest: *mut c_char, data: *const u8, size: usize) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        // The length first, as libzmq: a bad one is EINVAL even with null buffers.
        if !size.is_multiple_of(4) {
            return Err(Error::Invalid);
        }
        non_null(dest)?;
        // SAFETY: C promises `size` readable bytes at `data` (null only with size 0).
        let input = unsafe { crate::socket::in_slice(data.cast(), size)? };
        let text = encode(input).ok_or(Error::Invalid)?;
        // SAFETY: C promises `size * 5 / 4 + 1` writable bytes at `dest`, which is exactly the
        // text plus its NUL.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), dest.cast::<u8>(), text.len());
            *dest.add(text.len()) = 0;
        }
        Ok(dest)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_z85_decode(dest: *mut u8, string: *const c_char) -> *mut u8 {
    guard(std::ptr::null_mut(), || {
        non_null(dest)?;
        non_null(string)?;
        // SAFETY: non-null NUL-terminated string (C contract).
        let text = unsafe { std::ffi::CStr::from_ptr(string) }.to_bytes();
        if text.is_empty() {
            return Err(Error::Invalid); // libzmq: fewer than 5 characters is invalid
        }
        let bytes = decode(text).ok_or(Error::Invalid)?;
        // SAFETY: C promises `strlen * 4 / 5` writable bytes at `dest`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dest, bytes.len()) };
        Ok(dest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc32_test_vector() {
        let data = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        assert_eq!(encode(&data).unwrap(), "HelloWorld");
        assert_eq!(decode(b"HelloWorld").unwrap(), data);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(encode(&[1, 2, 3]).is_none());
        assert!(decode(b"Hell").is_none());
        assert!(decode(b"Hell~").is_none());
        assert!(decode(b"#####").is_none(), "value above u32::MAX");
    }

    #[test]
    fn round_trips() {
        let data: Vec<u8> = (0..=255u8).collect();
        assert_eq!(decode(encode(&data).unwrap().as_bytes()).unwrap(), data);
    }
}
