//! Load balancer: sends each message to the next pipe that has room (round robin).
//!
//! Pipes are kept in one array split in two: `[0, active)` may accept a message, the rest hit
//! their high-water mark and wait for a write activation. A multi-part message stays on the pipe
//! its first frame went to. Used by PUSH, DEALER and REQ.

use super::slots::Slots;
use super::Pipes;
use crate::error::{Error, Result};
use crate::msg::Msg;

#[derive(Default)]
pub(crate) struct Lb {
    pipes: Slots,
    active: usize,
    current: usize,
    /// In the middle of a multi-part message on `pipes[current]`.
    more: bool,
    /// The pipe died mid-message: drop the remaining frames.
    dropping: bool,
    /// Times a send found a pipe full (or its peer gone) and set it aside.
    pub(crate) hwm_hits: u64,
}

impl Lb {
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

    /// Whether `slot` is one of the pipes messages are spread over.
    pub(crate) fn has(&self, slot: usize) -> bool {
        self.pipes.position(slot).is_some()
    }

    /// Takes `slot` out of the rotation (`stop`) or puts it back, leaving its pipe alone
    /// (OXMQ_DNS_FOLLOW's draining pipes, `Pattern::stop_sending`).
    pub(crate) fn stop_sending(&mut self, slot: usize, stop: bool) {
        if stop {
            self.detach(slot);
        } else if !self.has(slot) {
            self.attach(slot);
        }
    }

    pub(crate) fn detach(&mut self, slot: usize) {
        let Some(mut i) = self.pipes.position(slot) else { return };
        if self.more && i == self.current {
            self.dropping = true;
            self.more = false;
        }
        if i < self.active {
            self.active -= 1;
            self.pipes.swap(i, self.active);
            i = self.active;
            if self.current == self.active {
                self.current = 0;
            }
        }
        self.pipes.swap_remove(i);
    }

    fn deactivate_current(&mut self) {
        self.hwm_hits += 1;
        self.active -= 1;
        self.pipes.swap(self.current, self.active);
        if self.current == self.active {
            self.current = 0;
        }
    }

    /// Sends a frame; returns the slot it went to (`None` if dropped mid-message). Always
    /// inlined into the pattern's `send`, which the socket calls through its pattern object.
    #[inline(always)]
    pub(crate) fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<Option<usize>> {
        if self.dropping {
            self.dropping = msg.more();
            *msg = Msg::new();
            return Ok(None);
        }
        let lazy = pipes.nonblocking();
        while self.active > 0 {
            let slot = self.pipes[self.current];
            let end = pipes.end(slot);
            // A full pipe is an EAGAIN (never a drop): see `Pipes::check_write_or_again`.
            if end.check_write_as(lazy) {
                let more = msg.more();
                end.write_take(msg);
                self.more = more;
                if !more {
                    end.flush();
                    self.current += 1;
                    if self.current >= self.active {
                        self.current = 0;
                    }
                }
                return Ok(Some(slot));
            }
            // Full (or its peer is gone): wait for a write activation.
            debug_assert!(!self.more);
            self.deactivate_current();
        }
        Err(Error::Again)
    }

    pub(crate) fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        if self.more {
            return true;
        }
        while self.active > 0 {
            if pipes.check_write(self.pipes[self.current]) {
                return true;
            }
            self.deactivate_current();
        }
        false
    }
}
