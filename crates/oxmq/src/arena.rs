//! Message bodies carved from per-thread chunks instead of allocated one by one.
//!
//! A body too large to live inline in a [`Msg`](crate::Msg) (over 38 bytes) used to be its own
//! heap allocation, made on the application thread and freed on the I/O thread after the write:
//! at 256 B that malloc/free pair across threads cost more instructions than the rest of the
//! send path together. Instead, each thread keeps one chunk and cuts bodies off its front, so
//! a body costs a copy and a reference-count increment; the chunk is freed (or, if every body
//! cut from it is already gone when it runs out, reused in place) as a whole.
//!
//! The price is that a body keeps its whole chunk alive: an application that holds on to one
//! small message for a long time pins up to [`CHUNK`] bytes. Bodies above [`MAX_CARVED`] get their own
//! allocation, so the pinning is bounded by the chunk size, not by message sizes.

use bytes::BytesMut;
use std::cell::RefCell;

/// Size of one chunk.
pub(crate) const CHUNK: usize = 32 * 1024;
/// Largest body carved from a chunk; larger ones are allocated on their own.
pub(crate) const MAX_CARVED: usize = 2048;

thread_local! {
    static ARENA: RefCell<Option<BytesMut>> = const { RefCell::new(None) };
}

/// Runs `fill` on an empty buffer with room for `len` bytes from this thread's chunk; `fill`
/// must append exactly `len` bytes. Returns those bytes as a unique, writable body.
#[inline]
fn carve(len: usize, fill: impl FnOnce(&mut BytesMut)) -> BytesMut {
    debug_assert!(len <= MAX_CARVED);
    let mut fill = Some(fill);
    let carved = ARENA.try_with(|a| {
        let mut a = a.borrow_mut();
        let buf = a.get_or_insert_with(|| BytesMut::with_capacity(CHUNK));
        if buf.capacity() < len {
            // Reuses the chunk in place if every body cut from it has been dropped; otherwise
            // leaves it to its bodies and starts a new one.
            buf.reserve(CHUNK);
        }
        (fill.take().expect("called once"))(buf);
        debug_assert_eq!(buf.len(), len);
        buf.split()
    });
    // Only during thread teardown (the thread-local is gone): allocate on its own.
    carved.unwrap_or_else(|_| {
        let mut b = BytesMut::with_capacity(len);
        (fill.take().expect("not called by the arena"))(&mut b);
        b
    })
}

/// A body holding a copy of `data`.
#[inline]
pub(crate) fn copy(data: &[u8]) -> BytesMut {
    if data.len() > MAX_CARVED {
        return BytesMut::from(data);
    }
    carve(data.len(), |b| b.extend_from_slice(data))
}

/// A zero-filled body of `len` bytes.
pub(crate) fn zeroed(len: usize) -> BytesMut {
    if len > MAX_CARVED {
        return BytesMut::zeroed(len);
    }
    carve(len, |b| b.resize(len, 0))
}

/// A body of `len` bytes left as the chunk (or a fresh allocation) had them: no clearing.
/// For `zmq_msg_init_size`, which libzmq documents as not clearing the data.
///
/// # Safety
/// The caller must write all `len` bytes before anything reads them.
#[inline]
pub(crate) unsafe fn uninit(len: usize) -> BytesMut {
    if len > MAX_CARVED {
        let mut b = BytesMut::with_capacity(len);
        // SAFETY: within the capacity just allocated; the caller writes the bytes before
        // they are read (its contract).
        unsafe { b.set_len(len) };
        return b;
    }
    // SAFETY: `carve` hands an empty buffer with room for `len` bytes (it reserves a chunk
    // when the current one is short); the caller writes them before they are read.
    carve(len, |b| unsafe { b.set_len(len) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_cut_from_one_chunk_and_independent() {
        let a = copy(&[1u8; 100]);
        let mut b = zeroed(200);
        assert_eq!(&a[..], &[1u8; 100][..]);
        assert!(b.iter().all(|&x| x == 0));
        b[0] = 7; // writable in place, and does not touch `a`
        assert_eq!(a[0], 1);
        // Adjacent in memory: the second body was cut right after the first.
        assert_eq!(unsafe { a.as_ptr().add(100) }, b.as_ptr());
    }

    #[test]
    fn exhausted_chunk_is_reused_when_its_bodies_are_gone_and_kept_when_not() {
        // Fill this thread's chunk with bodies that are dropped at once...
        let first = copy(&[1u8; 64]).as_ptr();
        for _ in 0..(CHUNK / 64) * 3 {
            drop(copy(&[2u8; 64]));
        }
        // ...then a held body keeps its chunk alive while new bodies come from elsewhere.
        let held = copy(&[3u8; 1000]);
        for _ in 0..(CHUNK / 1000) * 2 {
            drop(copy(&[4u8; 1000]));
        }
        assert_eq!(&held[..], &[3u8; 1000][..], "a held body is never overwritten");
        let _ = first;
    }

    #[test]
    fn large_bodies_are_allocated_on_their_own() {
        let big = copy(&vec![5u8; MAX_CARVED + 1]);
        assert_eq!(big.len(), MAX_CARVED + 1);
        assert!(zeroed(MAX_CARVED + 1).iter().all(|&x| x == 0));
    }
}
