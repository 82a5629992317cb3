//! Byte chunks shared by many message bodies, with one reference count per chunk that the
//! thread cutting bodies off it does not touch per body.
//!
//! A message body of 39 bytes to 4 KiB is a [`Piece`]: a range of a [`Carver`]'s current
//! chunk. Cutting a piece off and later dropping it used to cost a `BytesMut` split (an
//! atomic increment plus bookkeeping, ~45 instructions), a `Bytes` freeze, and on the other
//! thread a vtable call and an atomic decrement (~35 more), for every 256-byte message on
//! each end. Here the carver pays for its pieces in advance: a new chunk starts with
//! [`CREDIT`] references, all the carver's, and cutting a piece moves one of them to the
//! piece with a plain local count. Dropping a piece is one atomic decrement on a cache line
//! only the dropping thread and, once per chunk, the carver write. When the carver moves on
//! it returns the credit it did not spend in one subtraction; whoever brings the count to zero
//! frees the chunk. A chunk whose pieces are all gone when the carver runs out of room is
//! reused in place (no allocation for a steady stream whose bodies are consumed in time).
//!
//! The count's invariant: `refs == (CREDIT - spent) + live pieces` while the carver holds the
//! chunk, and `refs == live pieces` after. A piece is only ever made by the carver (`spent`
//! goes up by one) or by cloning a live piece, so `refs == CREDIT - spent` means no piece
//! exists and no thread can reach the chunk but the carver.
//!
//! A chunk too small for a body is never made: bodies over [`MAX_PIECE`] get a chunk of
//! their own ([`Piece::alloc`]), counted the same way, so a `Msg` has one kind of owned body.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// Bytes per carved chunk. A live piece keeps its whole chunk allocated, so this bounds what
/// one long-held small body pins.
pub(crate) const CHUNK: usize = 32 * 1024;
/// Largest body cut from a shared chunk; larger ones get a chunk of their own. At 4 KiB
/// rather than 2, inproc 4 KiB messages went from 3.4-4.1 M msg/s (a malloc on the sending
/// thread and a free on the receiving one per message) to 14.8-15.9 M; tcp 4 KiB did not
/// change (the receiving session copies such a body into a piece instead of splitting it).
pub(crate) const MAX_PIECE: usize = 4096;
/// References a carver holds in advance on a new chunk: far more than a chunk can have pieces
/// (every piece is at least one byte), far from overflowing the count.
const CREDIT: usize = 1 << (usize::BITS - 2);

/// The chunk header; the bytes follow it in the same allocation.
#[repr(C)]
struct Header {
    refs: AtomicUsize,
    /// Capacity of the data part, for the layout at deallocation.
    cap: usize,
}

fn layout(cap: usize) -> Layout {
    Layout::from_size_align(std::mem::size_of::<Header>() + cap, std::mem::align_of::<Header>()).expect("chunk size overflows")
}

/// A new chunk with `cap` uninitialised bytes and `refs` references.
fn new_chunk(cap: usize, refs: usize) -> NonNull<Header> {
    let layout = layout(cap);
    // SAFETY: the layout is non-zero sized (it includes the header).
    let p = unsafe { alloc(layout) } as *mut Header;
    let Some(h) = NonNull::new(p) else { handle_alloc_error(layout) };
    // SAFETY: `h` is a fresh allocation large and aligned enough for a Header.
    unsafe { h.as_ptr().write(Header { refs: AtomicUsize::new(refs), cap }) };
    h
}

/// The first data byte of chunk `h`.
///
/// # Safety
/// `h` is a live chunk.
#[inline(always)]
unsafe fn data(h: NonNull<Header>) -> *mut u8 {
    // SAFETY: the data part starts right after the header, inside the allocation.
    unsafe { (h.as_ptr() as *mut u8).add(std::mem::size_of::<Header>()) }
}

/// Gives up `n` references to chunk `h`, freeing it if they were the last.
///
/// # Safety
/// The caller owns `n` of `h`'s references and does not use `h` afterwards.
#[inline(always)]
unsafe fn release(h: NonNull<Header>, n: usize) {
    // SAFETY: the caller's references keep `h` alive until this subtraction.
    if unsafe { h.as_ref() }.refs.fetch_sub(n, Ordering::Release) == n {
        release_last(h);
    }
}

/// The last reference is gone: free the chunk (out of line, once per chunk).
#[cold]
#[inline(never)]
fn release_last(h: NonNull<Header>) {
    // Pairs with the Release subtractions of every other owner: their reads of the bytes
    // happen before the memory is freed.
    fence(Ordering::Acquire);
    // SAFETY: nobody else holds a reference; `cap` is the one it was allocated with.
    unsafe {
        let cap = h.as_ref().cap;
        dealloc(h.as_ptr() as *mut u8, layout(cap));
    }
}

/// One counted reference to `len` bytes of a chunk: a message body.
pub(crate) struct Piece {
    chunk: NonNull<Header>,
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a Piece is a counted, read-only view of bytes no one else writes (a writer needs
// `&mut` and the frame's own promise that it is the only piece over those bytes, see
// `as_mut_slice`); the count is atomic, and the chunk is freed by whichever thread drops the
// last reference, after an Acquire fence.
unsafe impl Send for Piece {}
// SAFETY: as above: `&Piece` only reads.
unsafe impl Sync for Piece {}

impl Piece {
    /// A body of `len` bytes in a chunk of its own, uninitialised.
    ///
    /// # Safety
    /// The caller writes all `len` bytes before anything reads them.
    pub(crate) unsafe fn alloc(len: usize) -> Piece {
        let chunk = new_chunk(len, 1);
        // SAFETY: the chunk is live; its data part is `len` bytes long.
        let ptr = unsafe { NonNull::new_unchecked(data(chunk)) };
        Piece { chunk, ptr, len }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: the piece holds a reference, so its bytes stay allocated; they were written
        // when the piece was made (the carving functions' contracts).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, writable.
    ///
    /// # Safety
    /// No other piece covers these bytes (the piece was carved and never cloned): the frame
    /// that holds it tracks that (`Msg`'s unique bodies).
    #[inline(always)]
    pub(crate) unsafe fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: allocated as in `as_slice`; nobody else reads or writes them (the caller's
        // contract) and `&mut self` keeps this piece from being read meanwhile.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The body as `Bytes`, sharing the chunk (no copy).
    pub(crate) fn into_bytes(self) -> bytes::Bytes {
        bytes::Bytes::from_owner(self)
    }
}

impl AsRef<[u8]> for Piece {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Clone for Piece {
    /// Another reference to the same bytes (the caller decides whether that is a share or
    /// must be a copy: `Msg` copies a unique body).
    fn clone(&self) -> Piece {
        // SAFETY: our reference keeps the chunk alive.
        let old = unsafe { self.chunk.as_ref() }.refs.fetch_add(1, Ordering::Relaxed);
        // As `Arc`: a count this high means references are being leaked; stop before it wraps.
        if old > usize::MAX / 2 {
            std::process::abort();
        }
        Piece { chunk: self.chunk, ptr: self.ptr, len: self.len }
    }
}

impl Piece {
    /// `n` more references to the same bytes, paid for with one atomic add (fan-out: one add
    /// per message rather than one per subscriber, on a count the I/O thread also writes).
    #[cfg(test)]
    pub(crate) fn shares(&self, n: usize) -> impl Iterator<Item = Piece> + '_ {
        self.take_refs(n);
        // Each yielded Piece owns one of the `n` references just added; any the caller does
        // not take are never released (a leak, never a double free).
        (0..n).map(move |_| Piece { chunk: self.chunk, ptr: self.ptr, len: self.len })
    }

    /// Adds `n` references to this piece's chunk with one atomic add, for `n` bitwise copies
    /// of the piece (`Msg::write_share_into`) that each own one.
    #[inline]
    pub(crate) fn take_refs(&self, n: usize) {
        // SAFETY: our reference keeps the chunk alive.
        let old = unsafe { self.chunk.as_ref() }.refs.fetch_add(n, Ordering::Relaxed);
        if old > usize::MAX / 2 {
            std::process::abort();
        }
    }
}

impl Drop for Piece {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: we own one reference and never use the chunk again.
        unsafe { release(self.chunk, 1) };
    }
}

/// References given up by one thread in a row, paid back with one atomic subtraction per run
/// of pieces from the same chunk rather than one per piece. The I/O thread writing a fan-out
/// drops each subscriber's share of a body just after encoding it, and consecutive messages
/// mostly come from one chunk: one subtraction per chunk per write batch instead of one per
/// delivery, on a count the publishing thread adds to for every message. Until it flushes
/// (a run ends, or it is dropped), the references it holds keep their chunk allocated.
pub(crate) struct Releases {
    chunk: Option<NonNull<Header>>,
    n: usize,
}

impl Releases {
    pub(crate) const fn new() -> Releases {
        Releases { chunk: None, n: 0 }
    }

    /// Gives up `piece`'s reference, with the rest of its run.
    #[inline]
    pub(crate) fn give(&mut self, piece: Piece) {
        let piece = std::mem::ManuallyDrop::new(piece);
        if self.chunk == Some(piece.chunk) {
            self.n += 1;
            return;
        }
        self.flush();
        self.chunk = Some(piece.chunk);
        self.n = 1;
    }

    /// Gives up the references held now.
    #[inline]
    pub(crate) fn flush(&mut self) {
        if let Some(h) = self.chunk.take() {
            // SAFETY: `give` moved `n` references to `h` here, none given up since.
            unsafe { release(h, self.n) };
            self.n = 0;
        }
    }
}

impl Drop for Releases {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Cuts pieces off one chunk at a time (see the module documentation). One per thread for
/// bodies built by the application, one per connection for bodies decoded off the wire.
pub(crate) struct Carver {
    chunk: Option<NonNull<Header>>,
    /// Bytes of the chunk handed out.
    used: usize,
    /// References handed out of the credit.
    spent: usize,
}

// SAFETY: the carver owns its unspent references; moving it to another thread (a session
// decoded by an application thread under the session's lock) moves that ownership. The
// chunk's bytes beyond `used` are written only through the carver (`&mut self`).
unsafe impl Send for Carver {}

impl Carver {
    pub(crate) const fn new() -> Carver {
        Carver { chunk: None, used: 0, spent: 0 }
    }

    /// Cuts `len` (1..=MAX_PIECE) bytes off and fills them with `fill`, which must write all
    /// of them.
    #[inline(always)]
    fn carve(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> Piece {
        debug_assert!(len > 0 && len <= MAX_PIECE);
        let chunk = match self.chunk {
            Some(c) if CHUNK - self.used >= len => c,
            _ => self.refill(),
        };
        // SAFETY: `chunk` is live (we hold unspent credit on it) and `used + len <= CHUNK`;
        // bytes past `used` belong to no piece yet, so nobody else reads or writes them.
        let bytes = unsafe { std::slice::from_raw_parts_mut(data(chunk).add(self.used), len) };
        fill(bytes);
        self.used += len;
        self.spent += 1;
        // SAFETY: inside a live allocation, so not null.
        Piece { chunk, ptr: unsafe { NonNull::new_unchecked(bytes.as_mut_ptr()) }, len }
    }

    /// The current chunk is full (or there is none): start over in it if all its pieces are
    /// gone, else return its unspent credit and take a new one.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) -> NonNull<Header> {
        if let Some(c) = self.chunk.take() {
            let unspent = CREDIT - self.spent;
            // SAFETY: our unspent credit keeps `c` alive.
            let refs = unsafe { c.as_ref() }.refs.load(Ordering::Acquire);
            if refs == unspent {
                // No piece exists (see the invariant): nobody else can reach the chunk, and
                // the Acquire load orders their reads before our rewrites.
                // SAFETY: as above.
                unsafe { c.as_ref() }.refs.store(CREDIT, Ordering::Relaxed);
                self.chunk = Some(c);
                self.used = 0;
                self.spent = 0;
                return c;
            }
            // SAFETY: the unspent credit is ours; `c` is not used again.
            unsafe { release(c, unspent) };
        }
        let c = new_chunk(CHUNK, CREDIT);
        self.chunk = Some(c);
        self.used = 0;
        self.spent = 0;
        c
    }

    /// A piece holding a copy of `src` (1..=MAX_PIECE bytes).
    #[inline(always)]
    pub(crate) fn copy(&mut self, src: &[u8]) -> Piece {
        self.carve(src.len(), |b| b.copy_from_slice(src))
    }

    /// A zero-filled piece of `len` (1..=MAX_PIECE) bytes.
    pub(crate) fn zeroed(&mut self, len: usize) -> Piece {
        self.carve(len, |b| b.fill(0))
    }

    /// A piece of `len` (1..=MAX_PIECE) bytes left as the chunk had them.
    ///
    /// # Safety
    /// The caller writes all `len` bytes before anything reads them.
    #[inline(always)]
    pub(crate) unsafe fn uninit(&mut self, len: usize) -> Piece {
        self.carve(len, |_| {})
    }
}

impl Drop for Carver {
    fn drop(&mut self) {
        if let Some(c) = self.chunk.take() {
            // SAFETY: the unspent credit is ours; the chunk lives on while pieces hold it.
            unsafe { release(c, CREDIT - self.spent) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(p: &Piece) -> usize {
        // SAFETY: the piece keeps the chunk alive.
        unsafe { p.chunk.as_ref() }.refs.load(Ordering::Relaxed)
    }

    #[test]
    fn pieces_are_cut_in_order_and_hold_their_bytes() {
        let mut c = Carver::new();
        let a = c.copy(&[1u8; 100]);
        let b = c.zeroed(200);
        assert_eq!(a.as_slice(), &[1u8; 100][..]);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        // SAFETY: test pointer arithmetic inside one chunk.
        assert_eq!(unsafe { a.as_slice().as_ptr().add(100) }, b.as_slice().as_ptr());
        assert_eq!(refs(&a), CREDIT, "carving moves credit, it does not count");
        drop(a);
        assert_eq!(refs(&b), CREDIT - 1);
    }

    #[test]
    fn shares_are_counted_with_one_add_and_released_one_by_one() {
        let mut c = Carver::new();
        let a = c.copy(&[7u8; 300]);
        let before = refs(&a);
        let shares: Vec<Piece> = a.shares(5).collect();
        assert_eq!(refs(&a), before + 5);
        assert!(shares.iter().all(|p| p.as_slice() == a.as_slice()));
        drop(shares);
        assert_eq!(refs(&a), before);
    }

    #[test]
    fn releases_give_a_run_back_with_one_subtraction() {
        let mut c = Carver::new();
        let a = c.copy(&[3u8; 100]);
        let before = refs(&a);
        let shares: Vec<Piece> = a.shares(4).collect();
        // SAFETY: its bytes are never read.
        let other = unsafe { Piece::alloc(10) };
        let keep = other.clone();
        let mut rel = Releases::new();
        for p in shares {
            rel.give(p);
        }
        assert_eq!(refs(&a), before + 4, "a run is held until it ends");
        rel.give(other); // another chunk: the run ends
        assert_eq!(refs(&a), before);
        assert_eq!(refs(&keep), 2);
        drop(rel);
        assert_eq!(refs(&keep), 1, "what is held is given back on drop");
    }

    #[test]
    fn a_full_chunk_is_reused_when_its_pieces_are_gone_and_kept_when_not() {
        let mut c = Carver::new();
        let first = c.copy(&[1u8; 1000]);
        let start = first.as_slice().as_ptr();
        drop(first);
        // Every piece goes before the chunk runs out: the same memory comes round again.
        let mut seen_start = 0;
        for _ in 0..CHUNK / 1000 * 3 {
            let p = c.copy(&[2u8; 1000]);
            seen_start += usize::from(p.as_slice().as_ptr() == start);
        }
        assert!(seen_start >= 2, "an idle chunk is reused in place");
        // A held piece keeps its chunk: later pieces come from elsewhere and never overwrite it.
        let held = c.copy(&[4u8; 1000]);
        for _ in 0..CHUNK / 1000 * 3 {
            drop(c.copy(&[5u8; 1000]));
        }
        assert_eq!(held.as_slice(), &[4u8; 1000][..]);
    }

    #[test]
    fn a_piece_outlives_its_carver_and_clones_share() {
        let mut c = Carver::new();
        let p = c.copy(b"0123456789abcdef0123456789abcdef0123456789");
        drop(c);
        assert_eq!(refs(&p), 1, "the carver returned its unspent credit");
        let q = p.clone();
        assert_eq!(refs(&p), 2);
        assert_eq!(q.as_slice().as_ptr(), p.as_slice().as_ptr());
        drop(p);
        assert_eq!(&q.as_slice()[..10], b"0123456789");
        let bytes = q.into_bytes();
        assert_eq!(&bytes[..4], b"0123");
    }

    #[test]
    fn large_pieces_have_their_own_chunk() {
        // SAFETY: written at once.
        let mut p = unsafe { Piece::alloc(100_000) };
        // SAFETY: the only piece over these bytes.
        unsafe { p.as_mut_slice() }.fill(9);
        assert_eq!(refs(&p), 1);
        assert!(p.as_slice().iter().all(|&x| x == 9));
    }

    #[test]
    fn pieces_dropped_on_other_threads_free_every_chunk_once() {
        // Pieces cut on one thread and dropped on another while the carver keeps cutting,
        // reusing and replacing chunks; valgrind/Miri-style checkers see a leak or a double
        // free as an error, and the bytes each piece carries must survive until it is dropped.
        let (tx, rx) = std::sync::mpsc::sync_channel::<(u8, Piece)>(64);
        let t = std::thread::spawn(move || {
            for (tag, p) in rx {
                assert!(p.as_slice().iter().all(|&x| x == tag), "a piece was overwritten");
            }
        });
        let mut c = Carver::new();
        // Miri runs it too (a few thousand pieces are enough to cycle chunks there).
        let n = if cfg!(miri) { 2_000 } else { 20_000u32 };
        for i in 0..n {
            let tag = (i % 251) as u8;
            let len = 39 + (i as usize * 97) % (MAX_PIECE - 39);
            tx.send((tag, c.copy(&vec![tag; len]))).unwrap();
        }
        drop(tx);
        drop(c);
        t.join().unwrap();
    }
}
