//! CURVE key helpers (`zmq_curve_keypair`, `zmq_curve_public`) over `oxmq::security`: keys are
//! 40 Z85 characters plus a NUL, written into the caller's 41-byte buffers.

use crate::guard::{guard, non_null};
use oxmq::Error;
use std::ffi::{c_char, c_int, CStr};

/// Copies a 40-character key and its NUL into `dest`.
///
/// # Safety
/// `dest` points to 41 writable bytes (the C contract of both functions).
unsafe fn put_key(dest: *mut c_char, key: &str) -> Result<(), Error> {
    if key.len() != 40 {
        return Err(Error::Invalid);
    }
    // SAFETY: 41 writable bytes at `dest` (caller's contract); `key` is 40 bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(key.as_ptr(), dest.cast::<u8>(), 40);
        *dest.add(40) = 0;
    }
    Ok(())
}

/// Writes a fresh key pair into `public` and `secret` (41 bytes each).
#[no_mangle]
pub unsafe extern "C" fn zmq_curve_keypair(public: *mut c_char, secret: *mut c_char) -> c_int {
    guard(-1, || {
        non_null(public)?;
        non_null(secret)?;
        let (p, s) = oxmq::security::curve_keypair();
        // SAFETY: both buffers hold 41 bytes (C contract).
        unsafe {
            put_key(public, &p)?;
            put_key(secret, &s)?;
        }
        Ok(0)
    })
}

/// Derives the public key of a Z85 secret key (40 characters, NUL-terminated) into `public`
/// (41 bytes). EINVAL when the secret is not 40 valid Z85 characters.
#[no_mangle]
pub unsafe extern "C" fn zmq_curve_public(public: *mut c_char, secret: *const c_char) -> c_int {
    guard(-1, || {
        non_null(public)?;
        non_null(secret)?;
        // SAFETY: non-null and NUL-terminated (C contract).
        let text = unsafe { CStr::from_ptr(secret) }.to_bytes();
        if text.len() != 40 {
            return Err(Error::Invalid);
        }
        let p = oxmq::security::curve_public(text)?;
        // SAFETY: `public` holds 41 bytes (C contract).
        unsafe { put_key(public, &p)? };
        Ok(0)
    })
}

/// libzmq's read-back of the security options whose C form differs from the Rust one:
/// CURVE keys come back binary into a 32-byte buffer and as Z85 plus NUL into a 41-byte one
/// (any other size is EINVAL); PLAIN_USERNAME, PLAIN_PASSWORD and ZAP_DOMAIN are strings
/// returned with their NUL. `Ok(None)` for every other option.
pub(crate) fn getsockopt_security(sock: &mut oxmq::Socket, option: c_int, buf: &mut [u8]) -> Result<Option<usize>, Error> {
    use oxmq::opt;
    match option {
        opt::CURVE_PUBLICKEY | opt::CURVE_SECRETKEY | opt::CURVE_SERVERKEY => {
            let key = sock.get_bytes(option)?;
            match buf.len() {
                32 => {
                    buf.copy_from_slice(&key);
                    Ok(Some(32))
                }
                41 => {
                    let text = oxmq::security::z85_encode(&key)?;
                    buf[..40].copy_from_slice(text.as_bytes());
                    buf[40] = 0;
                    Ok(Some(41))
                }
                _ => Err(Error::Invalid),
            }
        }
        opt::PLAIN_USERNAME | opt::PLAIN_PASSWORD | opt::ZAP_DOMAIN => {
            let v = sock.get_bytes(option)?;
            if buf.len() < v.len() + 1 {
                return Err(Error::Invalid);
            }
            buf[..v.len()].copy_from_slice(&v);
            buf[v.len()] = 0;
            Ok(Some(v.len() + 1))
        }
        _ => Ok(None),
    }
}
