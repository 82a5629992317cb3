//! Distributor: sends a message to every selected pipe that has room, dropping it (and
//! counting the drop) for pipes at their high-water mark — PUB's documented behaviour.
//!
//! A multi-part message goes whole or not at all to each pipe: the pipes that took the first
//! frame take the rest, regardless of HWM.

use super::Pipes;
use crate::msg::Msg;

#[derive(Default)]
pub(crate) struct Dist {
    /// Pipes receiving the message in progress.
    targets: Vec<usize>,
    more: bool,
    pub dropped: u64,
}

impl Dist {
    pub(crate) fn in_message(&self) -> bool {
        self.more
    }

    /// Starts a message for `candidates`, each pipe at most once.
    pub(crate) fn begin(&mut self, pipes: &mut Pipes, candidates: &[usize]) {
        self.targets.clear();
        for &s in candidates.iter() {
            if pipes.check_write(s) {
                self.targets.push(s);
            } else {
                self.dropped += 1;
            }
        }
    }

    /// True when every candidate can take a new message now (XPUB_NODROP's test before a
    /// message is sent).
    pub(crate) fn all_writable(pipes: &mut Pipes, candidates: &[usize]) -> bool {
        candidates.iter().all(|&s| pipes.check_write_or_again(s))
    }

    /// Writes a frame to the current targets, leaving `msg` empty (the last target takes it
    /// straight from the caller's `Msg`, as the load balancer writes).
    pub(crate) fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) {
        let more = msg.more();
        if let Some((&last, rest)) = self.targets.split_last() {
            if !rest.is_empty() {
                // Shared, so each target's frame is a reference, not a copy.
                msg.prepare_shares(rest.len());
                let id = msg.is_routing_id();
                for &s in rest {
                    let end = pipes.end(s);
                    match end.new_slot() {
                        Some(slot) => {
                            // SAFETY: one share prepared per target; the slot gets one frame
                            // with `msg`'s flags.
                            unsafe {
                                msg.write_share_into(slot);
                                end.commit_frame(more, id);
                            }
                        }
                        // SAFETY: as above.
                        None => end.write(unsafe { msg.share() }),
                    }
                }
            }
            pipes.end(last).write_take(msg);
        } else {
            *msg = Msg::new(); // nobody takes it
        }
        if !more {
            // One fence for all targets instead of one per target (see `Writer::publish_to`).
            let mut published = false;
            for &s in &self.targets {
                published |= pipes.publish(s);
            }
            if published {
                std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
                // One round: only its first connection may be written on this thread.
                let _round = crate::io::pace::Round::begin();
                for &s in &self.targets {
                    pipes.wake_after_fence(s);
                }
            }
            self.targets.clear();
        }
        self.more = more;
    }

    pub(crate) fn detach(&mut self, slot: usize) {
        self.targets.retain(|&s| s != slot);
    }
}
