//! PUB and SUB (RFC 29): publish-subscribe with prefix matching.
//!
//! Subscriptions travel upstream as messages whose first byte is 1 (subscribe) or 0 (cancel)
//! followed by the prefix — the ZMTP 3.0 form; the engine turns them into SUBSCRIBE/CANCEL
//! commands for 3.1 peers and back. PUB filters on its side ([`MTrie`]), so unsubscribed data
//! never crosses the wire, and SUB filters again ([`Trie`]) because a ZMTP 3.0 publisher or a
//! subscription in flight may still deliver non-matching messages.
//!
//! PUB never blocks: a subscriber at its high-water mark misses the message, and the drop is
//! counted ([`crate::Socket::dropped_messages`]).
//!
//! XPUB is PUB that also hands subscriptions to the application (`recv` returns `0x01topic`
//! / `0x00topic`): by default only the first subscription to a topic and the last
//! unsubscription, every subscription with XPUB_VERBOSE, and every unsubscription too with
//! XPUB_VERBOSER; a subscriber that goes away unsubscribes from what only it wanted. XSUB is
//! SUB whose subscriptions are messages the application sends (`0x01topic`), and which
//! forwards any other message it is given upstream — the two halves of a forwarding proxy.

use super::dist::Dist;
use super::fq::Fq;
use super::trie::{MTrie, Trie};
use super::{Pattern, Pipes};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::opt;
use crate::pipe::Read;
use crate::socket::options::bool_val;
use std::collections::VecDeque;

pub(crate) struct Pub {
    subs: MTrie,
    dist: Dist,
    pipes: Vec<usize>,
    scratch: Vec<usize>,
    /// XPUB: subscriptions (and other upstream messages) for the application.
    xpub: bool,
    verbose: bool,
    verboser: bool,
    up: VecDeque<Msg>,
    /// XPUB: in the middle of passing up a multi-part upstream message.
    up_more: bool,
}

impl Pub {
    pub(crate) fn new() -> Pub {
        Pub::with(false)
    }

    pub(crate) fn xpub() -> Pub {
        Pub::with(true)
    }

    fn with(xpub: bool) -> Pub {
        Pub {
            subs: MTrie::default(),
            dist: Dist::default(),
            pipes: Vec::new(),
            scratch: Vec::new(),
            xpub,
            verbose: false,
            verboser: false,
            up: VecDeque::new(),
            up_more: false,
        }
    }

    /// Applies every subscription message waiting in a pipe (and, for XPUB, queues what the
    /// application should see).
    fn read_subscriptions(&mut self, pipes: &mut Pipes, slot: usize) {
        while let Read::Msg(m) = pipes.read(slot) {
            if self.up_more || m.more() || !matches!(m.first(), Some(0) | Some(1)) {
                // Not a subscription: XPUB passes it up whole (XSUB peers may send data);
                // PUB ignores it, as libzmq's does.
                self.up_more = m.more();
                if self.xpub {
                    self.up.push_back(m);
                }
                continue;
            }
            let show = if m[0] == 1 {
                let first = self.subs.add(&m[1..], slot);
                first || self.verbose || self.verboser
            } else {
                let last = self.subs.remove(&m[1..], slot);
                last || self.verboser
            };
            if self.xpub && show {
                self.up.push_back(m);
            }
        }
    }
}

impl Pattern for Pub {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        self.pipes.push(slot);
        self.read_subscriptions(pipes, slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.pipes.retain(|&s| s != slot);
        let (xpub, up) = (self.xpub, &mut self.up);
        self.subs.remove_pipe(slot, |prefix| {
            if xpub {
                let mut v = Vec::with_capacity(prefix.len() + 1);
                v.push(0);
                v.extend_from_slice(prefix);
                up.push_back(Msg::from(v));
            }
        });
        self.dist.detach(slot);
    }
    fn read_activated(&mut self, pipes: &mut Pipes, slot: usize) {
        self.read_subscriptions(pipes, slot);
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {
        // Nothing to do: the next message checks each pipe's room again.
    }
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        if !self.dist.in_message() {
            let mut c = std::mem::take(&mut self.scratch);
            c.clear();
            self.subs.matches(msg, |s| c.push(s));
            self.dist.begin(pipes, &mut c);
            self.scratch = c;
        }
        self.dist.send(pipes, std::mem::take(msg));
        Ok(())
    }
    fn recv(&mut self, _pipes: &mut Pipes) -> Result<Msg> {
        if !self.xpub {
            return Err(Error::NotSup);
        }
        self.up.pop_front().ok_or(Error::Again)
    }
    fn has_in(&mut self, _pipes: &mut Pipes) -> bool {
        !self.up.is_empty()
    }
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        true // PUB never blocks
    }
    fn setsockopt(&mut self, _pipes: &mut Pipes, option: i32, value: &[u8]) -> Option<Result<()>> {
        if !self.xpub {
            return None;
        }
        match option {
            opt::XPUB_VERBOSE => Some(bool_val(value).map(|v| self.verbose = v)),
            opt::XPUB_VERBOSER => Some(bool_val(value).map(|v| self.verboser = v)),
            _ => None,
        }
    }
    fn drops(&self) -> super::stats::Drops {
        super::stats::Drops { hwm: self.dist.dropped, no_route: 0 }
    }
}

pub(crate) struct Sub {
    fq: Fq,
    subs: Trie,
    pipes: Vec<usize>,
    /// Dropping the rest of a message whose first frame did not match.
    skipping: bool,
    /// Delivering the rest of a matched multi-part message.
    more: bool,
    /// A matching message read by `has_in`, handed out by the next `recv`.
    prefetched: Option<Msg>,
    /// XSUB: subscriptions arrive as messages from the application.
    xsub: bool,
    /// XSUB: in the middle of sending a multi-part upstream message.
    up_more: bool,
}

impl Sub {
    pub(crate) fn new() -> Sub {
        Sub::with(false)
    }

    pub(crate) fn xsub() -> Sub {
        Sub::with(true)
    }

    fn with(xsub: bool) -> Sub {
        Sub {
            fq: Fq::default(),
            subs: Trie::default(),
            pipes: Vec::new(),
            skipping: false,
            more: false,
            prefetched: None,
            xsub,
            up_more: false,
        }
    }

    /// Sends a message to every publisher (XSUB's upstream direction), regardless of HWM as
    /// for subscriptions.
    fn send_upstream(&mut self, pipes: &mut Pipes, msg: Msg) {
        let more = msg.more();
        for &slot in &self.pipes {
            pipes.write(slot, msg.clone());
            if !more {
                pipes.flush(slot);
            }
        }
        self.up_more = more;
    }

    fn send_subscription(pipes: &mut Pipes, slot: usize, subscribe: bool, prefix: &[u8]) {
        let mut body = Vec::with_capacity(prefix.len() + 1);
        body.push(subscribe as u8);
        body.extend_from_slice(prefix);
        // Subscriptions bypass the high-water mark: they are small and rare, and dropping one
        // would silently stop a stream (a known libzmq pitfall).
        pipes.write(slot, Msg::from(body));
        pipes.flush(slot);
    }

    fn next_matching(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        if let Some(m) = self.prefetched.take() {
            return Ok(m);
        }
        loop {
            let (m, _) = self.fq.recv(pipes)?;
            if self.more {
                self.more = m.more();
                return Ok(m);
            }
            if self.skipping {
                self.skipping = m.more();
                continue;
            }
            if self.subs.matches(&m) {
                self.more = m.more();
                return Ok(m);
            }
            self.skipping = m.more();
        }
    }
}

impl Pattern for Sub {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        self.fq.attach(slot);
        self.pipes.push(slot);
        for p in self.subs.prefixes() {
            Sub::send_subscription(pipes, slot, true, p);
        }
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.detach(slot);
        self.pipes.retain(|&s| s != slot);
    }
    fn read_activated(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.fq.activated(slot);
    }
    fn write_activated(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    fn hiccuped(&mut self, pipes: &mut Pipes, slot: usize) {
        for p in self.subs.prefixes() {
            Sub::send_subscription(pipes, slot, true, p);
        }
    }
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        if !self.xsub {
            return Err(Error::NotSup);
        }
        let m = std::mem::take(msg);
        if !self.up_more && !m.more() {
            match m.first() {
                Some(1) => {
                    // Always forwarded (XPUB_VERBOSE upstream must see duplicates), as libzmq.
                    self.subs.add(&m[1..]);
                }
                Some(0) => {
                    if !self.subs.remove(&m[1..]) {
                        return Ok(()); // nothing left to cancel upstream
                    }
                }
                _ => {}
            }
        }
        self.send_upstream(pipes, m);
        Ok(())
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        self.next_matching(pipes)
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool {
        if self.prefetched.is_some() || self.more {
            return true;
        }
        match self.next_matching(pipes) {
            Ok(m) => {
                self.prefetched = Some(m);
                true
            }
            Err(_) => false,
        }
    }
    fn has_out(&mut self, _pipes: &mut Pipes) -> bool {
        self.xsub
    }
    fn setsockopt(&mut self, pipes: &mut Pipes, option: i32, value: &[u8]) -> Option<Result<()>> {
        if self.xsub {
            return None; // XSUB subscribes by message, as libzmq's
        }
        let subscribe = match option {
            opt::SUBSCRIBE => true,
            opt::UNSUBSCRIBE => false,
            _ => return None,
        };
        let changed = if subscribe { self.subs.add(value) } else { self.subs.remove(value) };
        if changed {
            for &slot in &self.pipes {
                Sub::send_subscription(pipes, slot, subscribe, value);
            }
        }
        Some(Ok(()))
    }
}
