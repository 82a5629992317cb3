//! Fair queue: receives from pipes in turn, so no peer can starve another.
//!
//! `[0, active)` of the pipe array may have messages; a pipe found empty moves past `active`
//! and returns on its next read activation (the pipe's reader is asleep by then, so the
//! activation is guaranteed). A multi-part message is read whole from one pipe. Used by PULL,
//! DEALER, ROUTER, REP, REQ and SUB.

use super::slots::Slots;
use super::Pipes;
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::pipe::Read;

#[derive(Default)]
pub(crate) struct Fq {
    pipes: Slots,
    active: usize,
    current: usize,
    more: bool,
}

impl Fq {
    pub(crate) fn attach(&mut self, slot: usize) {
        self.pipes.push(slot);
        let last = self.pipes.len() - 1;
        self.pipes.swap(last, self.active);
        self.active += 1;
    }

    pub(crate) fn activated(&mut self, slot: usize) {
        if let Some(i) = self.pipes.position(slot) {
            if i >= self.active {
                self.pipes.swap(i, self.active);
                self.active += 1;
            }
        }
    }

    pub(crate) fn detach(&mut self, slot: usize) {
        let Some(mut i) = self.pipes.position(slot) else { return };
        if i < self.active {
            if self.more && i == self.current {
                self.more = false;
            }
            self.active -= 1;
            self.pipes.swap(i, self.active);
            i = self.active;
            if self.current == self.active {
                self.current = 0;
            }
        }
        self.pipes.swap_remove(i);
    }

    /// Receives the next frame and the slot it came from.
    #[inline(always)]
    pub(crate) fn recv(&mut self, pipes: &mut Pipes) -> Result<(Msg, usize)> {
        while self.active > 0 {
            let slot = self.pipes[self.current];
            match pipes.read(slot) {
                Read::Msg(m) => {
                    self.took(m.more());
                    return Ok((m, slot));
                }
                Read::Empty | Read::Closed => self.ran_dry(),
            }
        }
        Err(Error::Again)
    }

    /// A frame came from the current pipe: stay on it until the message's last frame, then
    /// move on.
    #[inline(always)]
    fn took(&mut self, more: bool) {
        self.more = more;
        if !more {
            self.current += 1;
            if self.current >= self.active {
                self.current = 0;
            }
        }
    }

    /// The current pipe has nothing: it leaves the active set. Whole messages are published at
    /// once, so a pipe is never empty mid-message unless its peer vanished; then the rest
    /// never comes.
    #[inline(always)]
    fn ran_dry(&mut self) {
        self.more = false;
        self.active -= 1;
        self.pipes.swap(self.current, self.active);
        if self.current == self.active {
            self.current = 0;
        }
    }

    /// [`Fq::recv`] into `out` (see `Pattern::recv_into`); returns the slot read from.
    #[inline(always)]
    pub(crate) fn recv_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<usize> {
        while self.active > 0 {
            let slot = self.pipes[self.current];
            if pipes.read_into(slot, out) {
                self.took(out.more());
                return Ok(slot);
            }
            self.ran_dry();
        }
        Err(Error::Again)
    }

    pub(crate) fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        if self.more {
            return true;
        }
        (0..self.active).any(|i| pipes.has_data(self.pipes[i]))
    }
}
