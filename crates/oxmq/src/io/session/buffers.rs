//! A connection's receive and send buffers, and the per-thread pool of empty ones.
//!
//! Receive: bytes are read into spare capacity and decoded in place; small bodies are copied
//! out, large ones split off without copying (then the buffer is shared with them until the
//! application drops them). Send: frames are encoded into one batch; large bodies are not
//! copied into it but written from their own memory with `writev` (`write.rs`).

use crate::msg::Msg;
use bytes::BytesMut;
use std::collections::VecDeque;

/// Read buffer allocation unit.
pub(super) const READ_CHUNK: usize = 64 * 1024;
/// Read buffer allocation unit once large frames arrive.
pub(super) const LARGE_READ_CHUNK: usize = 256 * 1024;
/// Receive buffers a connection keeps for reuse, and the largest it keeps: a buffer grown to
/// hold one huge frame is let go, so a connection retains at most 4 MiB this way.
const RX_SPARES: usize = 4;
pub(super) const RX_SPARE_MAX: usize = 1024 * 1024;

pub(super) struct RxBuf {
    pub(super) buf: BytesMut,
    /// Mid-size bodies (over `INLINE_CAP`, up to `chunk::MAX_PIECE`) are copied out of `buf`
    /// into pieces of this connection's chunk: a copy and a local count instead of splitting
    /// each body off `buf` (an advance, a split with its atomic increment and a freeze, then a
    /// vtable call and an atomic decrement to drop it), which cost more than the copy.
    pub(super) carver: crate::chunk::Carver,
    /// Growth step: larger once large frames are seen, so one read carries several of them
    /// (small-message connections keep the small footprint).
    pub(super) read_chunk: usize,
    /// Receive buffers given up while large bodies split off them were still held, reused
    /// once the application has dropped those bodies (see [`RxBuf::grow`]), each with the
    /// size of its allocation.
    spares: Vec<(BytesMut, usize)>,
    /// The size of `buf`'s allocation when `grow` made or reclaimed it (None: grown by
    /// `reserve`, size unknown, never kept as a spare).
    alloc: Option<usize>,
}

impl RxBuf {
    pub(super) fn new() -> RxBuf {
        RxBuf {
            buf: BytesMut::with_capacity(READ_CHUNK),
            carver: crate::chunk::Carver::new(),
            read_chunk: READ_CHUNK,
            spares: Vec::new(),
            alloc: Some(READ_CHUNK),
        }
    }

    /// Room for the next read: at least a page's worth, else a read chunk more.
    #[inline]
    pub(super) fn make_room(&mut self) {
        if self.buf.capacity() - self.buf.len() < 4096 {
            self.grow(self.read_chunk);
        }
    }

    /// Room for a frame that lacks `missing` bytes: only by what has arrived, so memory
    /// follows the bytes that actually arrive, never the length a header claims. A step adds at
    /// most what the buffer holds of the frame already (or 256 KiB), so the buffer doubles as a
    /// large frame comes in and its bytes move O(1) times each, not once per step. At least a
    /// whole read chunk: growing copies the partial frame into the new buffer, and a buffer
    /// sized to this frame alone would make the next frame straddle its end too (a copy of half
    /// a frame per large frame). Past what a spare may be, the buffer grows in place where the
    /// allocator can (a large allocation is remapped, not copied) and is not kept as a spare.
    pub(super) fn room_for_frame(&mut self, missing: u64) {
        let have = self.buf.len() as u64;
        let want = missing.min((READ_CHUNK as u64 * 4).max(have)) as usize;
        if self.buf.capacity() - self.buf.len() >= want {
            return;
        }
        if want > RX_SPARE_MAX {
            self.alloc = None;
            self.buf.reserve(want);
        } else {
            self.grow(want.max(self.read_chunk));
        }
    }

    /// After a body larger than a spare buffer was split off: the buffer moves what it holds
    /// (what followed the body in the last read) to an allocation of its own, so the body is
    /// the only owner of its memory. Written through `zmq_msg_data`, it is then used in place,
    /// not copied first (copy on write of a shared body: 2 GiB more for a 2 GiB message).
    #[cold]
    #[inline(never)]
    pub(super) fn let_go(&mut self) {
        let mut next = BytesMut::with_capacity(self.buf.len().max(self.read_chunk));
        next.extend_from_slice(&self.buf);
        self.buf = next;
        self.alloc = None;
    }

    /// Makes room for `want` more bytes.
    ///
    /// Once large bodies are split off the buffer without copying, it is shared with them and
    /// growing it means a new allocation; the old one is freed when the application drops the
    /// last of those bodies, on its own thread. At 64 KiB messages that churn of 256 KiB
    /// blocks between two threads made glibc trim and refault its heap: up to 80 k page faults
    /// per 2 GB received and half the throughput, depending on which thread read. So a
    /// large-message connection keeps the buffers it gives up (a handle on each) and takes
    /// one back when nothing else holds it any more: no allocation, no free, no fault.
    fn grow(&mut self, want: usize) {
        if self.read_chunk < LARGE_READ_CHUNK {
            if self.buf.capacity() == 0 {
                // Given back to the pool after the last read (`release`): take one there.
                self.buf = pool::take(&pool::RX);
            }
            // A stream of small frames leaves a partial frame at the end of the buffer: moved
            // to the front, the same allocation takes the next reads. `reserve` reclaims only
            // room for all of `want`, so it would allocate anew at every refill, twice the size
            // (past glibc's mmap threshold: fresh pages, one fault per page read into).
            if self.buf.try_reclaim(want.min(READ_CHUNK / 2)) {
                return;
            }
            self.alloc = None; // `reserve` may reallocate
            return self.buf.reserve(want);
        }
        if self.buf.try_reclaim(want) {
            return; // nothing else holds it: reused in place
        }
        let need = want + self.buf.len();
        let free = self.spares.iter_mut().position(|(b, _)| {
            b.clear();
            b.try_reclaim(need)
        });
        let (mut next, alloc) = match free {
            Some(i) => self.spares.swap_remove(i),
            None => (BytesMut::with_capacity(need), need),
        };
        // The unread part (a partial frame) moves over, as `reserve` would copy it.
        next.extend_from_slice(&self.buf);
        let mut old = std::mem::replace(&mut self.buf, next);
        old.clear();
        match self.alloc.replace(alloc) {
            Some(size) if size <= RX_SPARE_MAX && self.spares.len() < RX_SPARES => self.spares.push((old, size)),
            _ => {}
        }
    }

    /// After a read batch: a small-frame connection with nothing left in its receive buffer
    /// (no partial frame) gives the buffer to its thread's pool until its next read.
    pub(super) fn release(&mut self) {
        if self.buf.is_empty() && self.read_chunk < LARGE_READ_CHUNK && self.buf.capacity() > 0 {
            self.alloc = None;
            pool::give(&pool::RX, std::mem::take(&mut self.buf));
        }
    }
}

/// The outgoing byte stream: `buf[pos..at0]`, `bigs[0]` from `big_off`, `buf[at0..at1]`,
/// `bigs[1]`, ... where each large body is written after the part of `buf` before its offset
/// (its header is the last thing there).
pub(super) struct TxBuf {
    pub(super) buf: Vec<u8>,
    pub(super) pos: usize,
    /// Large bodies written straight from their messages, each with the `buf` offset it goes
    /// after.
    pub(super) bigs: VecDeque<(usize, Msg)>,
    /// Bytes of the first large body already written.
    pub(super) big_off: usize,
    /// Bytes queued in `bigs`, not yet written.
    pub(super) big_bytes: usize,
}

impl TxBuf {
    pub(super) fn new() -> TxBuf {
        TxBuf { buf: Vec::with_capacity(256), pos: 0, bigs: VecDeque::new(), big_off: 0, big_bytes: 0 }
    }

    /// Nothing left to write.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len() && self.bigs.is_empty()
    }

    /// Encoded bytes not yet written, up to the first large body.
    pub(super) fn unwritten(&self) -> &[u8] {
        let end = self.bigs.front().map_or(self.buf.len(), |(at, _)| *at);
        &self.buf[self.pos.min(end)..end]
    }

    /// A buffer to encode into: this thread's pooled one if ours went back to the pool.
    #[inline]
    pub(super) fn ensure(&mut self) {
        if self.buf.capacity() == 0 {
            self.buf = pool::take(&pool::TX);
        }
    }

    /// Everything is written: the buffer goes back to this thread's pool.
    pub(super) fn recycle(&mut self) {
        self.buf.clear();
        self.pos = 0;
        if self.buf.capacity() > 0 {
            pool::give(&pool::TX, std::mem::take(&mut self.buf));
        }
    }

    /// Consumes `n` written bytes from the front of the outgoing stream.
    pub(super) fn advance(&mut self, mut n: usize) {
        while n > 0 {
            let seg_end = self.bigs.front().map_or(self.buf.len(), |(at, _)| *at);
            if self.pos < seg_end {
                let k = n.min(seg_end - self.pos);
                self.pos += k;
                n -= k;
                continue;
            }
            let Some((_, m)) = self.bigs.front() else { break };
            let k = n.min(m.len() - self.big_off);
            self.big_off += k;
            n -= k;
            if self.big_off == m.len() {
                self.big_bytes -= m.len();
                self.big_off = 0;
                self.bigs.pop_front();
            }
        }
        if self.is_empty() {
            self.buf.clear();
            self.pos = 0;
        }
    }
}

/// Empty send and receive buffers of connections that have nothing in them, kept by the
/// thread that emptied them for the next connection it serves. A thread serving many
/// connections (a fan-out to 1,000 subscribers) then works in a few buffers, warm in its
/// cache, instead of one of each per connection: up to a batch each, every page faulted in on
/// first use and kept for the connection's life. Only a connection with bytes the kernel has
/// not taken, or a partial frame, holds a buffer of its own.
mod pool {
    use std::cell::RefCell;
    use std::thread::LocalKey;

    /// Buffers kept per thread and kind.
    const KEEP: usize = 4;

    pub(super) type Pool<T> = RefCell<Vec<T>>;

    thread_local! {
        pub(super) static TX: Pool<Vec<u8>> = const { RefCell::new(Vec::new()) };
        pub(super) static RX: Pool<bytes::BytesMut> = const { RefCell::new(Vec::new()) };
    }

    /// An empty buffer: a kept one if any (its capacity with it), else a new, unallocated one.
    pub(super) fn take<T: Default>(pool: &'static LocalKey<Pool<T>>) -> T {
        pool.try_with(|p| p.borrow_mut().pop()).ok().flatten().unwrap_or_default()
    }

    /// Keeps the empty buffer `buf` for the next `take` on this thread, unless enough are kept.
    pub(super) fn give<T>(pool: &'static LocalKey<Pool<T>>, buf: T) {
        let _ = pool.try_with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < KEEP {
                p.push(buf);
            }
        });
    }
}

#[cfg(test)]
mod tests;
