//! The application thread's bodies: message bodies built by `Msg::with_size`,
//! `zmq_msg_init_size` and `Msg::copy_from` are cut from this thread's [`Carver`]
//! (`chunk.rs`), so a body costs a copy and a local count here and one atomic decrement on
//! the thread that drops it (usually an I/O thread, after the write), instead of a malloc
//! here and a free there. Bodies over [`MAX_PIECE`] get a chunk of their own.
//!
//! The price is that a body keeps its whole chunk alive: an application that holds on to one
//! small message for a long time pins up to [`crate::chunk::CHUNK`] bytes.

use crate::chunk::{Carver, Piece, MAX_PIECE};
use std::cell::RefCell;

thread_local! {
    static ARENA: RefCell<Carver> = const { RefCell::new(Carver::new()) };
}

/// Runs `carve` on this thread's carver; during thread teardown (the thread-local is gone),
/// on a carver of its own instead.
#[inline(always)]
fn with_carver(carve: impl Fn(&mut Carver) -> Piece) -> Piece {
    ARENA.try_with(|a| carve(&mut a.borrow_mut())).unwrap_or_else(|_| carve(&mut Carver::new()))
}

/// A body holding a copy of `data` (not empty). Always inlined: returned through memory, the
/// piece was read back with wider loads than the stores that wrote it, and each such load
/// waited for those stores to reach the cache.
#[inline(always)]
pub(crate) fn copy(data: &[u8]) -> Piece {
    if data.len() > MAX_PIECE {
        // SAFETY: every byte is written right away.
        let mut p = unsafe { Piece::alloc(data.len()) };
        // SAFETY: the only piece over these bytes.
        unsafe { p.as_mut_slice() }.copy_from_slice(data);
        return p;
    }
    with_carver(|c| c.copy(data))
}

/// A zero-filled body of `len` (non-zero) bytes.
pub(crate) fn zeroed(len: usize) -> Piece {
    if len > MAX_PIECE {
        // SAFETY: every byte is written right away.
        let mut p = unsafe { Piece::alloc(len) };
        // SAFETY: the only piece over these bytes.
        unsafe { p.as_mut_slice() }.fill(0);
        return p;
    }
    with_carver(|c| c.zeroed(len))
}

/// A body of `len` (non-zero) bytes left as the chunk (or a fresh allocation) had them: no
/// clearing. For `zmq_msg_init_size`, which libzmq documents as not clearing the data.
/// Always inlined, as [`copy`].
///
/// # Safety
/// The caller must write all `len` bytes before anything reads them.
#[inline(always)]
pub(crate) unsafe fn uninit(len: usize) -> Piece {
    if len > MAX_PIECE {
        // SAFETY: the caller's contract.
        return unsafe { Piece::alloc(len) };
    }
    // SAFETY: the caller's contract.
    with_carver(|c| unsafe { c.uninit(len) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_cut_from_one_chunk_and_independent() {
        let a = copy(&[1u8; 100]);
        let b = zeroed(200);
        assert_eq!(a.as_slice(), &[1u8; 100][..]);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        // Adjacent in memory: the second body was cut right after the first (unless the first
        // ended this thread's chunk).
        let next = a.as_slice().as_ptr_range().end;
        assert!(b.as_slice().as_ptr() == next || a.as_slice().len() + 200 > crate::chunk::CHUNK);
    }

    #[test]
    fn large_bodies_are_allocated_on_their_own() {
        let big = copy(&vec![5u8; MAX_PIECE + 1]);
        assert_eq!(big.len(), MAX_PIECE + 1);
        assert!(zeroed(MAX_PIECE + 1).as_slice().iter().all(|&x| x == 0));
    }
}
