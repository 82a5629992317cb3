//! PUB and SUB (RFC 29): publish-subscribe with prefix matching.
//!
//! Subscriptions travel upstream as messages whose first byte is 1 (subscribe) or 0 (cancel)
//! followed by the prefix — the ZMTP 3.0 form; the engine turns them into SUBSCRIBE/CANCEL
//! commands for 3.1 peers and back. PUB filters on its side ([`MTrie`]), so unsubscribed data
//! never crosses the wire, and SUB filters again ([`Trie`]) because a ZMTP 3.0 publisher or a
//! subscription in flight may still deliver non-matching messages.
//!
//! PUB never blocks: a subscriber at its high-water mark misses the message, and the drop is
//! counted ([`crate::Socket::dropped_messages`]) — unless XPUB_NODROP is set, when `send`
//! returns `EAGAIN` (or blocks) until every matching subscriber has room. With INVERT_MATCHING
//! both sides invert the test: PUB delivers to the subscribers whose prefixes do *not* match,
//! and SUB keeps the messages no subscription matches.
//!
//! XPUB is PUB that also hands subscriptions to the application (`recv` returns `0x01topic`
//! / `0x00topic`): by default only the first subscription to a topic and the last
//! unsubscription, every subscription with XPUB_VERBOSE, and every unsubscription too with
//! XPUB_VERBOSER; a subscriber that goes away unsubscribes from what only it wanted. XSUB is
//! SUB whose subscriptions are messages the application sends (`0x01topic`), and which
//! forwards any other message it is given upstream — the two halves of a forwarding proxy.
//!
//! XPUB_MANUAL leaves the subscription table to the application: every (un)subscription is
//! passed up and applied to nothing; `setsockopt(SUBSCRIBE/UNSUBSCRIBE)` on the XPUB then
//! applies a prefix to the pipe the last received subscription came from.
//! XPUB_MANUAL_LAST_VALUE also sends the next message after such a subscription to that pipe
//! only — the last-value cache: replay the cached value to the newcomer alone.
//! XPUB_WELCOME_MSG is written to every new subscriber when it attaches.

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
    /// Messages for the application, each with the pipe a subscription came from (XPUB).
    up: VecDeque<(Msg, Option<usize>)>,
    /// XPUB: in the middle of passing up a multi-part upstream message.
    up_more: bool,
    /// XPUB_NODROP: `send` waits for room instead of dropping.
    nodrop: bool,
    /// INVERT_MATCHING: deliver to the pipes that do not match.
    invert: bool,
    /// XPUB_MANUAL (and XPUB_MANUAL_LAST_VALUE, which also sets `send_last_pipe`).
    manual: bool,
    send_last_pipe: bool,
    /// XPUB_MANUAL: what each pipe asked for, so its departure can be reported upstream.
    manual_subs: MTrie,
    /// XPUB_MANUAL: the pipe of the subscription `recv` returned last.
    last_pipe: Option<usize>,
    /// XPUB_WELCOME_MSG (empty: none).
    welcome: Option<Msg>,
    /// ONLY_FIRST_SUBSCRIBE, and whether the frames of the message being read are parsed
    /// as subscriptions (see [`is_subscription`]).
    only_first: bool,
    subs_in_message: bool,
}

/// Whether frame `m` of an upstream message is a subscription (first byte 1) or a cancel (0),
/// updating `in_message` on a message's first frame. By default (RFC 29) a subscription is a
/// message of one frame, so the frames of a multi-part message are data. With
/// ONLY_FIRST_SUBSCRIBE (libzmq's draft option) the first frame may be one whatever follows,
/// and the frames after it are parsed too only when it was.
fn is_subscription(m: &Msg, first: bool, only_first: bool, in_message: &mut bool) -> bool {
    let sub_like = matches!(m.first(), Some(0) | Some(1));
    if !only_first {
        return first && !m.more() && sub_like;
    }
    let s = sub_like && (first || *in_message);
    if first {
        *in_message = s;
    }
    s
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
            nodrop: false,
            invert: false,
            manual: false,
            send_last_pipe: false,
            manual_subs: MTrie::default(),
            last_pipe: None,
            welcome: None,
            only_first: false,
            subs_in_message: false,
        }
    }

    /// The pipes a message goes to: the subscribers of a prefix of it (all the others with
    /// INVERT_MATCHING), or, right after a manual last-value subscription, that one pipe if it
    /// matches. Duplicates are allowed; `Dist::begin` removes them.
    /// Collects the pipes `msg` goes to; returns false when `out` may hold a pipe twice.
    fn targets(&mut self, msg: &[u8], out: &mut Vec<usize>) -> bool {
        if let Some(last) = self.last_pipe.filter(|_| self.send_last_pipe) {
            self.last_pipe = None; // one message only, as libzmq
            let mut hit = false;
            self.subs.matches(msg, |s| hit |= s == last);
            if hit != self.invert {
                out.push(last);
            }
            return true;
        }
        let nodes = self.subs.matches(msg, |s| out.push(s));
        if self.invert {
            out.sort_unstable();
            out.dedup();
            let matched = std::mem::take(out);
            out.extend(self.pipes.iter().copied().filter(|p| matched.binary_search(p).is_err()));
            return true;
        }
        nodes <= 1
    }

    /// Applies every subscription message waiting in a pipe (and, for XPUB, queues what the
    /// application should see).
    fn read_subscriptions(&mut self, pipes: &mut Pipes, slot: usize) {
        while let Read::Msg(m) = pipes.read(slot) {
            let first = !self.up_more;
            self.up_more = m.more();
            if !is_subscription(&m, first, self.only_first, &mut self.subs_in_message) {
                // Not a subscription: XPUB passes it up whole (XSUB peers may send data);
                // PUB ignores it, as libzmq's does.
                if self.xpub {
                    self.up.push_back((m, None));
                }
                continue;
            }
            if self.manual {
                // Applied by the application (setsockopt on this XPUB); remembered per pipe
                // so the pipe's departure can be reported.
                if m[0] == 1 {
                    self.manual_subs.add(&m[1..], slot);
                } else {
                    self.manual_subs.remove(&m[1..], slot);
                }
                self.up.push_back((m, Some(slot)));
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
                self.up.push_back((m, None));
            }
        }
    }

    /// XPUB_MANUAL's SUBSCRIBE/UNSUBSCRIBE: applies to the pipe of the last subscription
    /// received (none yet, or that pipe gone: ignored, as libzmq).
    fn manual_subscription(&mut self, subscribe: bool, prefix: &[u8]) {
        if let Some(slot) = self.last_pipe {
            if subscribe {
                self.subs.add(prefix, slot);
            } else {
                self.subs.remove(prefix, slot);
            }
        }
    }
}

fn unsubscription(prefix: &[u8]) -> Msg {
    let mut v = Vec::with_capacity(prefix.len() + 1);
    v.push(0);
    v.extend_from_slice(prefix);
    Msg::from(v)
}

impl Pattern for Pub {
    fn attach(&mut self, pipes: &mut Pipes, slot: usize) {
        self.pipes.push(slot);
        if let Some(w) = &self.welcome {
            // Before anything else the new subscriber gets (libzmq writes it on attach).
            pipes.write(slot, w.clone());
            pipes.flush(slot);
        }
        self.read_subscriptions(pipes, slot);
    }
    fn detach(&mut self, _pipes: &mut Pipes, slot: usize) {
        self.pipes.retain(|&s| s != slot);
        let (xpub, manual, up) = (self.xpub, self.manual, &mut self.up);
        // In manual mode the application hears of what the pipe itself had asked for, once per
        // pipe and prefix (it applied them per pipe); with XPUB_VERBOSER of every departure,
        // otherwise only of prefixes left with no subscriber (libzmq's xpipe_terminated).
        self.subs.remove_pipe(slot, !self.verboser, |prefix| {
            if xpub && !manual {
                up.push_back((unsubscription(prefix), None));
            }
        });
        self.manual_subs.remove_pipe(slot, false, |prefix| {
            if manual {
                up.push_back((unsubscription(prefix), None));
            }
        });
        for (_, p) in self.up.iter_mut() {
            if *p == Some(slot) {
                *p = None; // the slot may be reused by a new pipe
            }
        }
        if self.last_pipe == Some(slot) {
            self.last_pipe = None;
        }
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
            let last = self.last_pipe;
            let unique = self.targets(msg, &mut c);
            if !unique {
                c.sort_unstable();
                c.dedup();
            }
            if self.nodrop && !Dist::all_writable(pipes, &c) {
                self.last_pipe = last; // not sent: the last-value target still pending
                self.scratch = c;
                return Err(Error::Again);
            }
            self.dist.begin(pipes, &c);
            self.scratch = c;
        }
        self.dist.send(pipes, msg);
        Ok(())
    }
    fn recv(&mut self, _pipes: &mut Pipes) -> Result<Msg> {
        if !self.xpub {
            return Err(Error::NotSup);
        }
        let (m, slot) = self.up.pop_front().ok_or(Error::Again)?;
        if self.manual && slot.is_some() {
            self.last_pipe = slot;
        }
        Ok(m)
    }
    fn has_in(&mut self, _pipes: &mut Pipes) -> bool {
        !self.up.is_empty()
    }
    fn has_out(&mut self, pipes: &mut Pipes) -> bool {
        if !self.nodrop || self.dist.in_message() {
            return true; // PUB never blocks
        }
        // NODROP: writable when every subscriber has room (any message may go to all).
        let mut all = std::mem::take(&mut self.scratch);
        all.clear();
        all.extend_from_slice(&self.pipes);
        let ok = Dist::all_writable(pipes, &all);
        self.scratch = all;
        ok
    }
    fn setsockopt(&mut self, _pipes: &mut Pipes, option: i32, value: &[u8]) -> Option<Result<()>> {
        if option == opt::INVERT_MATCHING {
            // Also stored with the shared options (libzmq keeps it there and reads it back).
            if let Ok(v) = bool_val(value) {
                self.invert = v;
            }
            return None;
        }
        if !self.xpub {
            return None;
        }
        match option {
            opt::XPUB_VERBOSE => Some(bool_val(value).map(|v| self.verbose = v)),
            opt::ONLY_FIRST_SUBSCRIBE => Some(bool_val(value).map(|v| self.only_first = v)),
            opt::XPUB_VERBOSER => Some(bool_val(value).map(|v| self.verboser = v)),
            opt::XPUB_NODROP => Some(bool_val(value).map(|v| self.nodrop = v)),
            opt::XPUB_MANUAL => Some(bool_val(value).map(|v| self.manual = v)),
            opt::XPUB_MANUAL_LAST_VALUE => Some(bool_val(value).map(|v| {
                self.manual = v;
                self.send_last_pipe = v;
            })),
            opt::XPUB_WELCOME_MSG => {
                self.welcome = if value.is_empty() { None } else { Some(Msg::from(value.to_vec())) };
                Some(Ok(()))
            }
            opt::SUBSCRIBE | opt::UNSUBSCRIBE if self.manual => {
                self.manual_subscription(option == opt::SUBSCRIBE, value);
                Some(Ok(()))
            }
            _ => None,
        }
    }
    fn drops(&self) -> super::stats::Drops {
        super::stats::Drops { hwm: self.dist.dropped, hwm_reached: self.dist.dropped, ..Default::default() }
    }
    fn fanout(&self) -> Option<(u64, u64)> {
        let (pipes, prefixes) = self.subs.counts();
        Some((pipes, prefixes))
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
    /// INVERT_MATCHING: keep what no subscription matches.
    invert: bool,
    /// XSUB: ONLY_FIRST_SUBSCRIBE, and the state of the message being sent (as `Pub`'s).
    only_first: bool,
    subs_in_message: bool,
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
            invert: false,
            only_first: false,
            subs_in_message: false,
        }
    }

    /// Sends a message to every publisher (XSUB's upstream direction), regardless of HWM as
    /// for subscriptions, which are on the wire when this returns (`Pipes::flush_through`).
    fn send_upstream(&mut self, pipes: &mut Pipes, mut msg: Msg, subscription: bool) {
        let more = msg.more();
        msg.freeze(); // shared by every publisher's clone
        for &slot in &self.pipes {
            pipes.write(slot, msg.clone());
            match (more, subscription) {
                (true, _) => {}
                (false, true) => pipes.flush_through(slot),
                (false, false) => pipes.flush(slot),
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
    }

    /// The next frame that passes the filter (a prefetched one first), by value.
    fn next_matching(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        let mut m = Msg::new();
        self.recv_matching_into(pipes, &mut m)?;
        Ok(m)
    }

    /// The next frame that passes the filter (a prefetched one first), read straight into
    /// `out`: the whole of a message whose first frame matches, nothing of one whose first
    /// frame does not. When only frames that do not match were there, `out` is left empty
    /// (as libzmq's `fq_t::recvpipe` leaves it), never holding a skipped frame.
    fn recv_matching_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        if let Some(m) = self.prefetched.take() {
            out.replace_with(m);
            return Ok(());
        }
        let mut skipped = false;
        loop {
            if let Err(e) = self.fq.recv_into(pipes, out) {
                if skipped {
                    out.replace_with(Msg::new());
                }
                return Err(e);
            }
            if self.more {
                self.more = out.more();
                return Ok(());
            }
            if self.skipping {
                self.skipping = out.more();
                skipped = true;
                continue;
            }
            // XSUB passes everything up (libzmq filters only for SUB: `options.filter`); its
            // publisher may send what it was told to by other means (XPUB_MANUAL).
            if self.xsub || self.subs.matches(out) != self.invert {
                self.more = out.more();
                return Ok(());
            }
            self.skipping = out.more();
            skipped = true;
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
        pipes.flush_through(slot);
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
        pipes.flush_through(slot);
    }
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()> {
        if !self.xsub {
            return Err(Error::NotSup);
        }
        let m = std::mem::take(msg);
        let first = !self.up_more;
        let subscription = is_subscription(&m, first, self.only_first, &mut self.subs_in_message);
        if subscription {
            if m[0] == 1 {
                // Always forwarded (XPUB_VERBOSE upstream must see duplicates), as libzmq.
                self.subs.add(&m[1..]);
            } else if !self.subs.remove(&m[1..]) && first && !m.more() {
                return Ok(()); // nothing left to cancel upstream (a whole message only)
            }
        }
        self.send_upstream(pipes, m, subscription);
        Ok(())
    }
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg> {
        self.next_matching(pipes)
    }
    fn recv_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        self.recv_matching_into(pipes, out)
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
    fn fanout(&self) -> Option<(u64, u64)> {
        Some((0, self.subs.len() as u64))
    }
    fn setsockopt(&mut self, pipes: &mut Pipes, option: i32, value: &[u8]) -> Option<Result<()>> {
        if option == opt::INVERT_MATCHING {
            // Also stored with the shared options, which validate it and read it back.
            if let Ok(v) = bool_val(value) {
                self.invert = v;
            }
            return None;
        }
        if self.xsub {
            if option == opt::ONLY_FIRST_SUBSCRIBE {
                return Some(bool_val(value).map(|v| self.only_first = v));
            }
            return None; // XSUB subscribes by message, as libzmq's
        }
        let subscribe = match option {
            opt::SUBSCRIBE => true,
            opt::UNSUBSCRIBE => false,
            _ => return None,
        };
        // Every SUBSCRIBE goes upstream, duplicates too (an XPUB_VERBOSE publisher must see
        // them; a plain XPUB filters them itself), as libzmq 4.3's; an UNSUBSCRIBE only when
        // the last reference to the prefix goes.
        let changed = if subscribe {
            self.subs.add(value);
            true
        } else {
            self.subs.remove(value)
        };
        if changed {
            for &slot in &self.pipes {
                Sub::send_subscription(pipes, slot, subscribe, value);
                pipes.flush_through(slot);
            }
        }
        Some(Ok(()))
    }
}

#[cfg(test)]
mod tests;
