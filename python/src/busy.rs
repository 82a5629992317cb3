//! [`BusyCell`]: the state of a Python object that one thread at a time may use (a socket, a
//! wiring handle), behind a busy flag.
//!
//! A `Mutex` with `try_lock` only, minus what a messaging loop does not need: poisoning (a
//! panic inside oxmq leaves the value usable, as before) and the futex wake check on unlock
//! (nobody ever waits for this lock). One atomic swap to take it, one store to give it back:
//! about a third of `Mutex::try_lock` plus its guard's drop, paid on every send and receive.
//! A second thread arriving while the first is inside a call (also while that call waits with
//! the GIL released) gets None, which the caller turns into ZMQError(EFSM).

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) struct BusyCell<T> {
    busy: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through a `BusyGuard`, and `busy` admits one guard at a
// time (Acquire on taking, Release on giving back), so it is never shared between threads;
// `T: Send` lets it be used from whichever thread holds the guard.
unsafe impl<T: Send> Sync for BusyCell<T> {}

impl<T> BusyCell<T> {
    pub(crate) fn new(value: T) -> BusyCell<T> {
        BusyCell { busy: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }

    /// The value for one call, or None if another thread is inside a call on it.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<BusyGuard<'_, T>> {
        if self.busy.swap(true, Ordering::Acquire) {
            return None;
        }
        Some(BusyGuard { cell: self })
    }
}

/// Exclusive access to a [`BusyCell`]'s value until dropped.
pub(crate) struct BusyGuard<'a, T> {
    cell: &'a BusyCell<T>,
}

impl<T> Deref for BusyGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the busy flag: no other reference to the value exists.
        unsafe { &*self.cell.value.get() }
    }
}

impl<T> DerefMut for BusyGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only borrow through the guard.
        unsafe { &mut *self.cell.value.get() }
    }
}

impl<T> Drop for BusyGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.cell.busy.store(false, Ordering::Release);
    }
}
