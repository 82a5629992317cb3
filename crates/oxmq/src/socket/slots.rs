//! An array of pipe slots that knows where each slot is, so the fair queue and the load
//! balancer find a pipe in O(1) when it is activated or detached (libzmq's `array_t`). With
//! thousands of peers a scan per activation would cost microseconds per message.
//!
//! Indexing, `len`, `push`, `swap` and `swap_remove` behave as on a `Vec<usize>`; `position`
//! replaces `iter().position(|&p| p == slot)`.

use std::ops::Index;

/// Marks a slot that is not in the array.
const NONE: u32 = u32::MAX;

#[derive(Default)]
pub(crate) struct Slots {
    items: Vec<usize>,
    /// By slot number: its index in `items`, or `NONE`.
    at: Vec<u32>,
}

impl Slots {
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Adds `slot` at the end. A slot must not be in the array twice.
    pub(crate) fn push(&mut self, slot: usize) {
        if slot >= self.at.len() {
            self.at.resize(slot + 1, NONE);
        }
        debug_assert_eq!(self.at[slot], NONE, "slot {slot} pushed twice");
        self.at[slot] = self.items.len() as u32;
        self.items.push(slot);
    }

    /// Where `slot` is, if it is here.
    #[inline]
    pub(crate) fn position(&self, slot: usize) -> Option<usize> {
        match self.at.get(slot) {
            Some(&i) if i != NONE => Some(i as usize),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn swap(&mut self, i: usize, j: usize) {
        self.items.swap(i, j);
        self.at[self.items[i]] = i as u32;
        self.at[self.items[j]] = j as u32;
    }

    /// Removes the item at `i`, moving the last one into its place; returns the removed slot.
    pub(crate) fn swap_remove(&mut self, i: usize) -> usize {
        let slot = self.items.swap_remove(i);
        self.at[slot] = NONE;
        if let Some(&moved) = self.items.get(i) {
            self.at[moved] = i as u32;
        }
        slot
    }
}

impl Index<usize> for Slots {
    type Output = usize;
    #[inline(always)]
    fn index(&self, i: usize) -> &usize {
        &self.items[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks every position against a plain scan.
    fn check(s: &Slots) {
        for i in 0..s.len() {
            assert_eq!(s.position(s[i]), Some(i));
        }
        for slot in 0..s.at.len() {
            assert_eq!(s.position(slot), s.items.iter().position(|&p| p == slot));
        }
    }

    #[test]
    fn positions_follow_every_change() {
        let mut s = Slots::default();
        for slot in [5, 0, 9, 3, 7] {
            s.push(slot);
            check(&s);
        }
        s.swap(0, 3);
        check(&s);
        s.swap(2, 2);
        check(&s);
        assert_eq!(s.swap_remove(1), 0);
        check(&s);
        assert_eq!(s.position(0), None);
        let last = s.len() - 1;
        s.swap_remove(last);
        check(&s);
        s.push(0);
        check(&s);
        assert_eq!(s.position(1000), None);
    }
}
