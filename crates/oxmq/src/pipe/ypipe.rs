//! A lock-free single-producer, single-consumer queue with a sleeping-reader handshake.
//!
//! This is the one data structure every message crosses, so it is built for that path alone:
//! items live in fixed-size chunks linked in a list (no per-item allocation; a drained chunk is
//! kept as a spare so a steady stream allocates nothing), the writer batches items and publishes
//! them with one store in [`Writer::flush`], and the reader touches shared memory only when its
//! cached view of the queue runs dry.
//!
//! The contract that lets both ends avoid locks and spurious wake-ups (libzmq's `ypipe`):
//! when [`Reader::pop`] finds the queue empty it marks the reader *asleep*; the next
//! [`Writer::flush`] that publishes items sees the mark, clears it and returns `true`, and the
//! writer must then wake the reader by some other channel. A reader that was not asleep is never
//! signalled, so a busy pipe costs no system calls at all.
//!
//! The two halves are distinct types ([`Writer`], [`Reader`]) that are `Send` but not `Clone`,
//! so the single-producer single-consumer rule is enforced by the type system.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;

/// Items per chunk. 256 × 48-byte messages ≈ 12 KiB per allocation.
const CHUNK: usize = 256;

/// A hint that the cache line at `p` is about to be written (x86's PREFETCHW; processors
/// without it execute it as a no-op). Never faults, whatever `p` is.
#[inline(always)]
fn prefetch_write(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect: it reads, writes and faults on nothing.
    unsafe {
        std::arch::asm!("prefetchw byte ptr [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

struct Chunk<T> {
    slots: [UnsafeCell<MaybeUninit<T>>; CHUNK],
    next: AtomicPtr<Chunk<T>>,
}

impl<T> Chunk<T> {
    fn alloc() -> *mut Chunk<T> {
        // Build on the heap directly: a 12 KiB array on the stack is avoidable.
        let layout = std::alloc::Layout::new::<Chunk<T>>();
        // SAFETY: the layout is non-zero sized (it holds an AtomicPtr). MaybeUninit slots need no
        // initialisation; `next` is written before the pointer escapes.
        unsafe {
            let p = std::alloc::alloc(layout) as *mut Chunk<T>;
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            ptr::addr_of_mut!((*p).next).write(AtomicPtr::new(ptr::null_mut()));
            p
        }
    }

    /// # Safety
    /// `p` came from [`Chunk::alloc`], holds no live items, and is not used afterwards.
    unsafe fn free(p: *mut Chunk<T>) {
        std::alloc::dealloc(p as *mut u8, std::alloc::Layout::new::<Chunk<T>>());
    }
}

struct Shared<T> {
    /// Number of items the writer has published (monotonic).
    published: AtomicUsize,
    /// Set by the reader when it found nothing; cleared by the flush that must wake it.
    asleep: AtomicBool,
    /// A drained chunk handed back by the reader for the writer to reuse.
    spare: AtomicPtr<Chunk<T>>,
    /// Positions needed to drop unread items when both halves are gone; written by each half
    /// in its own Drop (at which point it is the only user of its field).
    head: UnsafeCell<(*mut Chunk<T>, usize, usize)>, // (chunk, index in chunk, items read)
    tail: UnsafeCell<(*mut Chunk<T>, usize)>, // (chunk, items written incl. unflushed)
}

// SAFETY: the UnsafeCells are each written by one half only (head by the reader, tail by the
// writer, in their Drop impls) and read only in Shared::drop, when both halves are gone. Items
// of type T move from the writer's thread to the reader's, hence `T: Send`.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above; every concurrently accessed field is atomic.
unsafe impl<T: Send> Sync for Shared<T> {}

/// The producing half.
pub struct Writer<T> {
    shared: Arc<Shared<T>>,
    chunk: *mut Chunk<T>,
    pos: usize,     // next slot in `chunk`
    written: usize, // items written, flushed or not
    flushed: usize, // items published
}

/// The consuming half.
pub struct Reader<T> {
    shared: Arc<Shared<T>>,
    chunk: *mut Chunk<T>,
    pos: usize,
    read: usize,
    available: usize, // cached `published`
}

// SAFETY: each half is used by one thread at a time (`&mut self` on every operation); the raw
// chunk pointers are owned by the half that holds them, per the protocol documented above.
unsafe impl<T: Send> Send for Writer<T> {}
// SAFETY: as for Writer.
unsafe impl<T: Send> Send for Reader<T> {}

/// Creates a queue. The reader starts asleep, so the first flush reports that it must be woken.
pub fn ypipe<T: Send>() -> (Writer<T>, Reader<T>) {
    let first = Chunk::<T>::alloc();
    let shared = Arc::new(Shared {
        published: AtomicUsize::new(0),
        asleep: AtomicBool::new(true),
        spare: AtomicPtr::new(ptr::null_mut()),
        head: UnsafeCell::new((ptr::null_mut(), 0, 0)),
        tail: UnsafeCell::new((ptr::null_mut(), 0)),
    });
    let w = Writer { shared: shared.clone(), chunk: first, pos: 0, written: 0, flushed: 0 };
    let r = Reader { shared, chunk: first, pos: 0, read: 0, available: 0 };
    (w, r)
}

impl<T> Writer<T> {
    /// Appends an item; the reader sees it only after the next [`Writer::flush`].
    #[inline]
    pub fn push(&mut self, item: T) {
        if self.pos == CHUNK {
            self.grow();
        }
        // SAFETY: slot `pos` of the writer's current chunk is beyond everything published, so
        // the reader does not read it until a later flush publishes it (Release below).
        unsafe { (*(*self.chunk).slots[self.pos].get()).write(item) };
        self.pos += 1;
        self.written += 1;
        self.prefetch_next();
    }

    /// Asks for the next slot's cache lines, writable, ahead of the next push. The chunk is
    /// most likely the reader's spare, its lines last held by the reader's core; a writer
    /// feeding many pipes (fan-out, a round robin over many peers) comes back to this one
    /// only after a round over all the others, so the lines arrive meanwhile instead of
    /// stalling that push (the one store that took most of a fan-out's sending time).
    #[inline(always)]
    fn prefetch_next(&self) {
        if self.pos < CHUNK {
            // SAFETY: `pos < CHUNK`: a slot of the writer's current chunk (only its address
            // is taken; a prefetch reads and writes nothing).
            let p = unsafe { (*self.chunk).slots[self.pos].get() } as *const u8;
            prefetch_write(p);
            prefetch_write(p.wrapping_add(std::mem::size_of::<T>().saturating_sub(1)));
        }
    }

    /// The slot the next push fills, for an item built in place ([`Writer::commit`] pushes
    /// it): an item written on the stack and then copied whole would wait for its narrower
    /// stores to reach the cache (a failed store-to-load forward) before the copy could read
    /// it. Asking again before a commit gives the same slot (what it held is not dropped).
    #[inline(always)]
    pub fn slot(&mut self) -> &mut MaybeUninit<T> {
        if self.pos == CHUNK {
            self.grow();
        }
        // SAFETY: as in `push`: the slot is beyond everything published, so the reader does
        // not touch it, and `&mut self` makes this the only reference to it.
        unsafe { &mut *(*self.chunk).slots[self.pos].get() }
    }

    /// Pushes the item built in the slot [`Writer::slot`] gave.
    ///
    /// # Safety
    /// That slot has been initialised since the call that returned it.
    #[inline(always)]
    pub unsafe fn commit(&mut self) {
        self.pos += 1;
        self.written += 1;
        self.prefetch_next();
    }

    /// [`Writer::push`] of `*item`, leaving `T::default()` in its place: the item is copied
    /// once, straight into its slot (a `push(mem::take(item))` goes through a temporary).
    #[inline(always)]
    pub fn push_take(&mut self, item: &mut T)
    where
        T: Default,
    {
        if self.pos == CHUNK {
            self.grow();
        }
        // SAFETY: as in `push`: the slot is beyond everything published. The item's bits move
        // into the slot and the source is overwritten without being dropped, so the item is
        // owned once (what `write(mem::take(item))` does, without its copy through the stack).
        unsafe {
            let slot = (*self.chunk).slots[self.pos].get() as *mut T;
            std::ptr::copy_nonoverlapping(item as *const T, slot, 1);
            std::ptr::write(item, T::default());
        }
        self.pos += 1;
        self.written += 1;
        self.prefetch_next();
    }

    #[cold]
    fn grow(&mut self) {
        let mut next = self.shared.spare.swap(ptr::null_mut(), Ordering::Acquire);
        if next.is_null() {
            next = Chunk::alloc();
        } else {
            // SAFETY: the reader gave this chunk up entirely; only we hold it now.
            unsafe { (*next).next.store(ptr::null_mut(), Ordering::Relaxed) };
        }
        // SAFETY: `self.chunk` is live (the reader frees a chunk only after moving past it,
        // which needs this `next` pointer, published with Release by the flush that follows).
        unsafe { (*self.chunk).next.store(next, Ordering::Release) };
        self.chunk = next;
        self.pos = 0;
    }

    /// Publishes everything pushed so far. Returns `true` when the reader was asleep and must
    /// be woken by the caller; `false` when nothing was published or the reader is awake.
    #[cfg(test)]
    pub fn flush(&mut self) -> bool {
        self.flush_to(self.written)
    }

    /// Items pushed so far (flushed or not); a position for [`Writer::flush_to`].
    #[inline]
    pub fn written(&self) -> usize {
        self.written
    }

    /// Publishes the items pushed before position `upto` (see [`Writer::written`]), keeping
    /// later ones private; used to hold back the frames of an incomplete message.
    #[inline]
    pub fn flush_to(&mut self, upto: usize) -> bool {
        if !self.advance_flushed(upto) {
            return false;
        }
        // SeqCst store + SeqCst load pair with the reader's store to `asleep` and load of
        // `published` (a Dekker handshake): at least one side sees the other's write, so either
        // the reader finds these items or we see that it sleeps.
        self.shared.published.store(upto, Ordering::SeqCst);
        if self.shared.asleep.load(Ordering::SeqCst) {
            return self.shared.asleep.swap(false, Ordering::SeqCst);
        }
        false
    }

    /// The first half of [`Writer::flush_to`], for a writer that flushes many queues at once
    /// (a distributor): publishes the items before `upto` with no fence. True if it published
    /// anything; the caller must then issue one `fence(SeqCst)` after all its publishes and
    /// call [`Writer::woken_after_fence`] on this queue. A fence per queue would make each
    /// flush wait for the stores before it, the item's included, one queue at a time.
    #[inline]
    pub fn publish_to(&mut self, upto: usize) -> bool {
        if !self.advance_flushed(upto) {
            return false;
        }
        self.shared.published.store(upto, Ordering::Release);
        true
    }

    /// Moves the flushed position to `upto`; false when that publishes nothing new.
    #[inline(always)]
    fn advance_flushed(&mut self, upto: usize) -> bool {
        debug_assert!(upto <= self.written);
        if upto <= self.flushed {
            return false;
        }
        self.flushed = upto;
        true
    }

    /// The second half of a split flush: true when the reader is asleep and must be woken.
    /// Only after a `fence(SeqCst)` that follows [`Writer::publish_to`]: the fence orders the
    /// publish before this load as [`Writer::flush_to`]'s SeqCst pair does, so either the
    /// reader's SeqCst load of `published` sees the items or this load sees it asleep.
    #[inline]
    pub fn woken_after_fence(&self) -> bool {
        if self.shared.asleep.load(Ordering::Relaxed) {
            return self.shared.asleep.swap(false, Ordering::SeqCst);
        }
        false
    }
}

impl<T> Reader<T> {
    /// Takes the next published item. On `None` the reader is marked asleep, and the writer's
    /// next flush will report that it must be woken.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if !self.has_data() {
            return None;
        }
        if self.pos == CHUNK {
            // `read < available`: the writer moved past this chunk.
            self.next_chunk();
        }
        // SAFETY: the slot was written and published by the writer (read < available) and is
        // read exactly once, here.
        let item = unsafe { (*(*self.chunk).slots[self.pos].get()).assume_init_read() };
        self.pos += 1;
        self.read += 1;
        Some(item)
    }

    /// The next published item where it lies in the queue, writable, without taking it: an
    /// encoder reads it in place instead of moving it out (for a 56-byte message, a move is
    /// several copies through the stack) and then calls [`Reader::advance_forgotten`].
    /// `None`, with the reader marked asleep, as [`Reader::pop`].
    #[cfg(test)]
    pub fn front_mut(&mut self) -> Option<&mut T> {
        if !self.has_data() {
            return None;
        }
        // SAFETY: `has_data` just said an item is published and not read.
        Some(unsafe { self.front_unchecked() })
    }

    /// [`Reader::front_mut`] without the check.
    ///
    /// # Safety
    /// [`Reader::has_data`] (or `front_mut`) returned true, with no pop or advance since.
    #[inline(always)]
    pub unsafe fn front_unchecked(&mut self) -> &mut T {
        debug_assert!(self.read < self.available);
        if self.pos == CHUNK {
            self.next_chunk();
        }
        // SAFETY: the slot holds a published, initialised item not read yet (the caller's
        // contract); the borrow of `self` keeps it from being popped meanwhile.
        unsafe { (*(*self.chunk).slots[self.pos].get()).assume_init_mut() }
    }

    /// Moves past the front item without dropping it.
    ///
    /// # Safety
    /// [`Reader::front_mut`] returned `Some` since the last move, and the caller has dropped
    /// that item in place or moved it out (it is never dropped here).
    #[inline(always)]
    pub unsafe fn advance_forgotten(&mut self) {
        debug_assert!(self.read < self.available && self.pos < CHUNK);
        self.pos += 1;
        self.read += 1;
    }

    /// Moves to the next chunk, handing the drained one back to the writer as its spare.
    #[inline]
    fn next_chunk(&mut self) {
        // SAFETY: an item is published beyond this chunk (callers checked), so the writer
        // linked `next` before publishing it (Acquire pairs with its SeqCst store).
        let next = unsafe { (*self.chunk).next.load(Ordering::Acquire) };
        debug_assert!(!next.is_null());
        let done = std::mem::replace(&mut self.chunk, next);
        let old = self.shared.spare.swap(done, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: a spare chunk holds no items and is referenced by nobody else.
            unsafe { Chunk::free(old) };
        }
        self.pos = 0;
    }

    /// True when an item this reader already knows to be published is waiting: no shared
    /// memory is read (see `PipeEnd::front`'s `refresh`).
    #[inline(always)]
    pub fn has_cached(&self) -> bool {
        self.read != self.available
    }

    /// True when at least one published item is waiting. When none is, the reader is marked
    /// asleep exactly as by an empty [`Reader::pop`] (libzmq's `check_read`), so a caller that
    /// peeks, finds nothing and then blocks is guaranteed a wake-up for the next flush.
    #[inline]
    pub fn has_data(&mut self) -> bool {
        if self.read == self.available {
            self.available = self.shared.published.load(Ordering::Acquire);
            if self.read == self.available {
                self.shared.asleep.store(true, Ordering::SeqCst);
                self.available = self.shared.published.load(Ordering::SeqCst);
                if self.read == self.available {
                    return false;
                }
                self.shared.asleep.store(false, Ordering::Relaxed);
            }
        }
        true
    }
}

impl<T> Reader<T> {
    /// The next published item, without taking it (marks the reader asleep when there is
    /// none, like [`Reader::has_data`]).
    #[inline]
    pub fn peek(&mut self) -> Option<&T> {
        if !self.has_data() {
            return None;
        }
        if self.pos == CHUNK {
            // As in `pop`: an item is published beyond this chunk.
            self.next_chunk();
        }
        // SAFETY: the slot holds a published, initialised item not yet read; the shared
        // borrow ends before any `pop` can move it out (`&mut self` on both).
        Some(unsafe { (*(*self.chunk).slots[self.pos].get()).assume_init_ref() })
    }
}

impl<T> Drop for Writer<T> {
    fn drop(&mut self) {
        // SAFETY: only the writer writes `tail`, and only here.
        unsafe { *self.shared.tail.get() = (self.chunk, self.written) };
    }
}

impl<T> Drop for Reader<T> {
    fn drop(&mut self) {
        // SAFETY: only the reader writes `head`, and only here.
        unsafe { *self.shared.head.get() = (self.chunk, self.pos, self.read) };
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        let (mut chunk, mut pos, read) = *self.head.get_mut();
        let (_, written) = *self.tail.get_mut();
        // Drop every item written (flushed or not) but never read, then free the chunks.
        let mut left = written - read;
        while left > 0 {
            if pos == CHUNK {
                // SAFETY: more items follow, so the writer linked a next chunk.
                let next = unsafe { (*chunk).next.load(Ordering::Acquire) };
                // SAFETY: this chunk's items are all consumed or dropped.
                unsafe { Chunk::free(chunk) };
                chunk = next;
                pos = 0;
            }
            // SAFETY: slots between the read and write positions hold initialised items.
            unsafe { (*(*chunk).slots[pos].get()).assume_init_drop() };
            pos += 1;
            left -= 1;
        }
        // Free the last chunk and any chunks linked after it (the writer may have grown into a
        // fresh chunk without filling it).
        while !chunk.is_null() {
            // SAFETY: no live items remain; each chunk is freed once.
            let next = unsafe { (*chunk).next.load(Ordering::Acquire) };
            unsafe { Chunk::free(chunk) };
            chunk = next;
        }
        let spare = *self.spare.get_mut();
        if !spare.is_null() {
            // SAFETY: the spare holds no items and is not linked in the list.
            unsafe { Chunk::free(spare) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn split_flush_wakes_as_flush_does() {
        let (mut w, mut r) = ypipe::<u32>();
        w.push(1);
        assert!(w.publish_to(w.written()));
        std::sync::atomic::fence(Ordering::SeqCst);
        assert!(w.woken_after_fence(), "reader starts asleep");
        w.push(2);
        assert!(w.publish_to(w.written()));
        std::sync::atomic::fence(Ordering::SeqCst);
        assert!(!w.woken_after_fence(), "reader was not asleep");
        assert!(!w.publish_to(w.written()), "nothing to publish");
        assert_eq!(r.pop(), Some(1));
        assert_eq!(r.pop(), Some(2));
        assert_eq!(r.pop(), None);
        w.push(3);
        assert!(w.publish_to(w.written()));
        std::sync::atomic::fence(Ordering::SeqCst);
        assert!(w.woken_after_fence(), "reader went to sleep on the empty pop");
        assert_eq!(r.pop(), Some(3));
    }

    #[test]
    fn first_flush_wakes_then_busy_reader_is_not_woken() {
        let (mut w, mut r) = ypipe::<u32>();
        w.push(1);
        assert!(w.flush(), "reader starts asleep");
        w.push(2);
        assert!(!w.flush(), "reader was not asleep");
        assert_eq!(r.pop(), Some(1));
        assert_eq!(r.pop(), Some(2));
        assert_eq!(r.pop(), None);
        assert!(!w.flush(), "nothing to publish");
        w.push(3);
        assert!(w.flush(), "reader went to sleep on the empty pop");
        assert_eq!(r.pop(), Some(3));
    }

    #[test]
    fn items_built_in_their_slot_keep_their_order_across_chunks() {
        let (mut w, mut r) = ypipe::<String>();
        for i in 0..2 * CHUNK + 3 {
            if i % 3 == 0 {
                w.push(i.to_string());
            } else {
                w.slot().write(i.to_string());
                // SAFETY: the slot was just written.
                unsafe { w.commit() };
            }
        }
        w.flush();
        for i in 0..2 * CHUNK + 3 {
            assert_eq!(r.pop().as_deref(), Some(&*i.to_string()));
        }
        assert_eq!(r.pop(), None);
    }

    #[test]
    fn peek_does_not_consume_and_crosses_chunks() {
        let (mut w, mut r) = ypipe::<usize>();
        for i in 0..CHUNK + 2 {
            w.push(i);
        }
        w.flush();
        for i in 0..CHUNK + 2 {
            assert_eq!(r.peek(), Some(&i));
            assert_eq!(r.pop(), Some(i));
        }
        assert_eq!(r.peek(), None);
        w.push(9);
        assert!(w.flush(), "an empty peek leaves the reader asleep");
    }

    #[test]
    fn empty_peek_puts_the_reader_to_sleep() {
        let (mut w, mut r) = ypipe::<u32>();
        w.push(1);
        w.flush();
        assert_eq!(r.pop(), Some(1));
        assert!(!r.has_data());
        w.push(2);
        assert!(w.flush(), "a reader that peeked at an empty queue must be woken");
    }

    #[test]
    fn unflushed_items_are_invisible() {
        let (mut w, mut r) = ypipe::<u32>();
        w.push(1);
        assert_eq!(r.pop(), None);
        assert!(!r.has_data());
        w.flush();
        assert!(r.has_data());
        assert_eq!(r.pop(), Some(1));
    }

    #[test]
    fn crosses_chunks_and_recycles() {
        let (mut w, mut r) = ypipe::<usize>();
        for round in 0..10 {
            for i in 0..CHUNK * 3 + 7 {
                w.push(round * 10_000 + i);
            }
            w.flush();
            for i in 0..CHUNK * 3 + 7 {
                assert_eq!(r.pop(), Some(round * 10_000 + i));
            }
            assert_eq!(r.pop(), None);
        }
    }

    #[test]
    fn front_reads_in_place_across_chunks() {
        let drops = Arc::new(AtomicUsize::new(0));
        let (mut w, mut r) = ypipe::<(usize, Counted)>();
        assert!(r.front_mut().is_none());
        for i in 0..CHUNK * 2 + 3 {
            w.push((i, Counted(drops.clone())));
        }
        assert!(w.flush(), "the empty front_mut left the reader asleep");
        for i in 0..CHUNK * 2 + 3 {
            let item = r.front_mut().unwrap();
            assert_eq!(item.0, i);
            // SAFETY: dropped in place right here, then skipped.
            unsafe {
                std::ptr::drop_in_place(item);
                r.advance_forgotten();
            }
        }
        assert_eq!(drops.load(Ordering::Relaxed), CHUNK * 2 + 3);
        assert!(r.front_mut().is_none());
        w.push((7, Counted(drops.clone())));
        assert!(w.flush());
        assert_eq!(r.pop().map(|x| x.0), Some(7), "pop and front_mut share the position");
    }

    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn unread_items_are_dropped_exactly_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        {
            let (mut w, mut r) = ypipe::<Counted>();
            for _ in 0..CHUNK * 2 + 5 {
                w.push(Counted(drops.clone()));
            }
            w.flush();
            for _ in 0..CHUNK + 1 {
                drop(r.pop());
            }
            w.push(Counted(drops.clone())); // unflushed
        }
        assert_eq!(drops.load(Ordering::Relaxed), CHUNK * 2 + 6);
    }

    #[test]
    fn threads_transfer_in_order_without_lost_wakeups() {
        use std::sync::{Condvar, Mutex};
        const N: usize = 200_000;
        let (mut w, mut r) = ypipe::<usize>();
        let signal = Arc::new((Mutex::new(false), Condvar::new()));
        let s2 = signal.clone();
        let t = std::thread::spawn(move || {
            for i in 0..N {
                w.push(i);
                if i % 7 == 0 && w.flush() {
                    let (m, c) = &*s2;
                    *m.lock().unwrap() = true;
                    c.notify_one();
                }
            }
            if w.flush() {
                let (m, c) = &*s2;
                *m.lock().unwrap() = true;
                c.notify_one();
            }
        });
        let mut expect = 0;
        while expect < N {
            match r.pop() {
                Some(v) => {
                    assert_eq!(v, expect);
                    expect += 1;
                }
                None => {
                    // Asleep: wait for the writer's wake-up (bounded, so a lost wake-up fails
                    // the test instead of hanging it).
                    let (m, c) = &*signal;
                    let g = m.lock().unwrap();
                    let (mut g, to) = c.wait_timeout_while(g, std::time::Duration::from_secs(10), |w| !*w).unwrap();
                    assert!(!to.timed_out(), "lost wake-up at {expect}");
                    *g = false;
                }
            }
        }
        t.join().unwrap();
    }
}
