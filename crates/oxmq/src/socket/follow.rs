//! Connects that follow DNS (`opt::OXMQ_DNS_FOLLOW`): a tcp connect to a host name becomes a
//! *group*, one endpoint with a connection to every address the name resolves to, kept in
//! step with the name.
//!
//! The group lives on the socket's side of the engine and is made of ordinary connects: each
//! address is a *member*, a connecting session to `tcp://ADDRESS:PORT` (that string is its
//! key: its sessions' monitor events and its pipes' endpoint), created and ended with the same
//! commands a `connect` and a `disconnect` send, so the I/O layer knows nothing of groups. The
//! pattern spreads over the members' pipes as over any peers.
//!
//! A resolver thread per group looks the name up ([`crate::transport::dns::lookup_all`]) at
//! once, then every `OXMQ_DNS_IVL`, and sooner when a member's connection is lost or retried
//! (a tap on the socket's monitor events, [`crate::io::monitor::Monitor::set_tap`]; at most once
//! per RECONNECT_IVL). It leaves the latest answer beside the socket and posts one command to
//! its mailbox unless one is queued already (so a socket its application does not use for a
//! while finds one answer, not a pile of them); the socket applies it when it next takes its
//! commands, as it attaches new peers (`Socket::follow_event`):
//! * an address new to the name gets a member;
//! * an address that left it starts draining: patterns that can (PUSH, DEALER, REQ and their
//!   single-part forms, [`super::Pattern::stop_sending`]) send it nothing new; its connection
//!   stays for the drain period (LINGER; one interval if LINGER is -1) so what was queued for it, and
//!   replies to what it was sent, get through. A one-way sender's member ends as soon as its
//!   queue is empty (its session then writes what it holds and closes in order); any other
//!   ends when the period is over, and what is still queued towards it or unread from it then
//!   is counted in `SocketStats::dropped_vanished`, never lost silently;
//! * an address that comes back while its member drains is taken back (sending resumes);
//! * a failed lookup (no answer: the name server is down) changes nothing; an answer that the
//!   name has no address drains every member.
//!
//! Until the first answer the endpoint has no peer (a send waits as with IMMEDIATE).

use super::{EndpointRec, Socket};
use crate::io::{IoCmd, IoThread};
use crate::mailbox::{Command, Mailbox};
use crate::transport::dns;
use crate::transport::endpoint::{Endpoint, Host, Source};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The default interval between lookups (OXMQ_DNS_IVL).
pub(crate) const DEFAULT_IVL_MS: i32 = 30_000;
/// How often a group with draining members looks at them.
const DRAIN_TICK: Duration = Duration::from_millis(100);

/// The socket's followed endpoints and the options that make them.
pub(crate) struct Follow {
    /// OXMQ_DNS_FOLLOW.
    pub(crate) enabled: bool,
    /// OXMQ_DNS_IVL.
    pub(crate) ivl_ms: i32,
    groups: Vec<Group>,
    next_group: u64,
    /// Member key → its group's resolver, for the monitor tap (read on I/O threads).
    index: Arc<Mutex<HashMap<String, Arc<Wake>>>>,
    tap_set: bool,
    /// Messages still queued to or from a member when its drain period ended.
    pub(crate) vanished: u64,
}

impl Default for Follow {
    fn default() -> Follow {
        Follow {
            enabled: false,
            ivl_ms: DEFAULT_IVL_MS,
            groups: Vec::new(),
            next_group: 1,
            index: Default::default(),
            tap_set: false,
            vanished: 0,
        }
    }
}

/// One followed endpoint.
struct Group {
    id: u64,
    given: String,
    port: u16,
    source: Option<Source>,
    /// The source as written in `given` (`tcp://SOURCE;...`), for the members' keys.
    source_text: Option<String>,
    options: Box<super::options::Options>,
    members: Vec<Member>,
    resolver: Resolver,
    /// Lookups that got no answer, and address changes applied (for the metrics).
    failures: u64,
    added: u64,
    removed: u64,
}

struct Member {
    addr: SocketAddr,
    key: String,
    io: Arc<IoThread>,
    /// The endpoint id of its connecting session.
    id: u64,
    drain: Option<Drain>,
}

struct Drain {
    until: Instant,
    /// The pattern sends it nothing new.
    stopped: bool,
    /// Its pipes were let go (a one-way sender's empty queue); the session finishes alone.
    released: bool,
}

/// A group's counts for the metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupStats {
    pub(crate) endpoint: String,
    pub(crate) addresses: u64,
    pub(crate) draining: u64,
    pub(crate) lookup_failures: u64,
    pub(crate) added: u64,
    pub(crate) removed: u64,
}

impl Follow {
    pub(crate) fn groups(&self) -> Vec<GroupStats> {
        self.groups
            .iter()
            .map(|g| GroupStats {
                endpoint: g.given.clone(),
                addresses: g.members.iter().filter(|m| m.drain.is_none()).count() as u64,
                draining: g.members.iter().filter(|m| m.drain.is_some()).count() as u64,
                lookup_failures: g.failures,
                added: g.added,
                removed: g.removed,
            })
            .collect()
    }

    /// Member key → the followed endpoint it belongs to (the metrics' `via`).
    pub(crate) fn vias(&self) -> HashMap<String, String> {
        self.groups.iter().flat_map(|g| g.members.iter().map(|m| (m.key.clone(), g.given.clone()))).collect()
    }

    /// The I/O threads running members, for the socket's close.
    pub(crate) fn io_threads(&self) -> impl Iterator<Item = &Arc<IoThread>> {
        self.groups.iter().flat_map(|g| g.members.iter().map(|m| &m.io))
    }

    fn member_exists(&self, key: &str) -> bool {
        self.groups.iter().any(|g| g.members.iter().any(|m| m.key == key))
    }
}

/// Whether a pattern only sends on a member's pipes, so a drained queue means it is done
/// (nothing comes back that the application waits for).
fn one_way(kind: super::SocketType) -> bool {
    use super::SocketType as T;
    matches!(kind, T::Push | T::Scatter | T::Pub | T::XPub | T::Radio)
}

impl Socket {
    /// `connect` of a tcp endpoint naming a host while OXMQ_DNS_FOLLOW is set.
    pub(super) fn connect_followed(&mut self, given: &str, ep: Endpoint) -> crate::Result<()> {
        let Endpoint::Tcp { host: Host::Name(name), port, source } = ep else { unreachable!("a named tcp endpoint") };
        // Starts the I/O threads now, so a context that cannot have them fails the connect.
        self.env.io_thread()?;
        if !self.follow.tap_set {
            let index = self.follow.index.clone();
            self.shared.monitor.set_tap(Arc::new(move |_ev: u64, remote: &str| {
                let w = index.lock().unwrap_or_else(|p| p.into_inner()).get(remote).cloned();
                if let Some(w) = w {
                    w.nudge();
                }
            }));
            self.follow.tap_set = true;
        }
        let id = self.follow.next_group;
        self.follow.next_group += 1;
        let o = &self.options;
        let ivl = Duration::from_millis(self.follow.ivl_ms.max(100) as u64);
        let retry = Duration::from_millis(o.reconnect_ivl.max(100) as u64).min(ivl);
        let resolver = Resolver::start(self.shared.mailbox.clone(), id, name, port, o.ipv6, ivl, retry);
        let source_text = given.strip_prefix("tcp://").and_then(|a| a.split_once(';')).map(|(s, _)| s.to_string());
        self.follow.groups.push(Group {
            id,
            given: given.to_string(),
            port,
            source,
            source_text,
            options: {
                // CONNECT_ROUTING_ID names one connection; a group has several.
                let mut o = Box::new(self.options.clone());
                o.link.connect_routing_id = None;
                o
            },
            members: Vec::new(),
            resolver,
            failures: 0,
            added: 0,
            removed: 0,
        });
        self.endpoints.push(EndpointRec::Follow { given: given.to_string(), group: id });
        Ok(())
    }

    /// `disconnect` of a followed endpoint: every member ends at once, with what is queued
    /// for it (as a plain disconnect discards its queue).
    pub(super) fn disconnect_followed(&mut self, group: u64) {
        let Some(gi) = self.follow.groups.iter().position(|g| g.id == group) else { return };
        let g = self.follow.groups.remove(gi);
        let mut index = self.follow.index.lock().unwrap_or_else(|p| p.into_inner());
        for m in &g.members {
            index.remove(&m.key);
        }
        drop(index);
        for m in g.members {
            m.io.send(IoCmd::CloseEndpoint { id: m.id });
            self.detach_endpoint(&m.key);
        }
        // Dropping the group stops its resolver.
    }

    /// Group `group`'s resolver posted: a lookup's answer is waiting, or a drain tick.
    pub(super) fn follow_event(&mut self, group: u64) {
        let Some(gi) = self.follow.groups.iter().position(|g| g.id == group) else { return };
        let answer = {
            let mut w = self.follow.groups[gi].resolver.wake.m.lock().unwrap_or_else(|p| p.into_inner());
            w.posted = false;
            w.answer.take()
        };
        if let Some(answer) = answer {
            let addrs = match answer {
                Ok(v) => Some(v),
                Err(e) if dns::is_no_such_name(e) => Some(Vec::new()),
                Err(_) => None,
            };
            match addrs {
                Some(addrs) => self.follow_apply(gi, &addrs),
                None => self.follow.groups[gi].failures += 1,
            }
        }
        self.follow_drain(gi);
    }

    /// Brings group `gi`'s members in line with `addrs`.
    fn follow_apply(&mut self, gi: usize, addrs: &[SocketAddr]) {
        let now = Instant::now();
        // Addresses that left: drain (those already draining keep their deadline).
        let linger = self.options.linger;
        let ivl = Duration::from_millis(self.follow.ivl_ms.max(100) as u64);
        let period = if linger >= 0 { Duration::from_millis(linger as u64) } else { ivl };
        let leaving: Vec<String> = self.follow.groups[gi]
            .members
            .iter()
            .filter(|m| m.drain.is_none() && !addrs.contains(&m.addr))
            .map(|m| m.key.clone())
            .collect();
        for key in leaving {
            let mut stopped = true;
            for slot in self.slots_of(&key) {
                stopped &= self.pattern.stop_sending(&mut self.pipes, slot, true);
            }
            let g = &mut self.follow.groups[gi];
            g.removed += 1;
            if let Some(m) = g.members.iter_mut().find(|m| m.key == key) {
                m.drain = Some(Drain { until: now + period, stopped, released: false });
            }
        }
        // Addresses that came (back).
        for &addr in addrs {
            let g = &mut self.follow.groups[gi];
            if let Some(m) = g.members.iter_mut().find(|m| m.addr == addr) {
                if let Some(d) = &m.drain {
                    if d.released {
                        continue; // its pipes are gone: a new member once it has ended
                    }
                    m.drain = None;
                    g.added += 1;
                    let key = m.key.clone();
                    for slot in self.slots_of(&key) {
                        self.pattern.stop_sending(&mut self.pipes, slot, false);
                    }
                }
                continue;
            }
            let key = match &g.source_text {
                Some(s) => format!("tcp://{s};{addr}"),
                None => format!("tcp://{addr}"),
            };
            if self.follow.member_exists(&key) {
                continue; // another followed name of this socket has this address already
            }
            let g = &self.follow.groups[gi];
            let ep = Endpoint::Tcp { host: Host::Ip(addr.ip()), port: g.port, source: g.source.clone() };
            let options = g.options.clone();
            let Ok((io, id)) = self.connect_session(ep, &key, options, None) else { continue };
            let g = &mut self.follow.groups[gi];
            g.added += 1;
            self.follow.index.lock().unwrap_or_else(|p| p.into_inner()).insert(key.clone(), g.resolver.wake.clone());
            g.members.push(Member { addr, key, io, id, drain: None });
        }
    }

    /// Ends the draining members of group `gi` that are done, and tells its resolver whether
    /// to keep ticking.
    fn follow_drain(&mut self, gi: usize) {
        let now = Instant::now();
        let one_way = one_way(self.shared.kind);
        let mut i = 0;
        while i < self.follow.groups[gi].members.len() {
            let m = &self.follow.groups[gi].members[i];
            let Some(d) = &m.drain else {
                i += 1;
                continue;
            };
            let key = m.key.clone();
            let (until, stopped, released) = (d.until, d.stopped, d.released);
            let slots = self.slots_of(&key);
            if now >= until {
                // The period is over: what is still queued either way is dropped, counted.
                for &slot in &slots {
                    let end = &self.pipes.get(slot).end;
                    self.follow.vanished += end.queued_out() + end.queued_in();
                    self.pattern.detach(&mut self.pipes, slot);
                    self.pipes.remove(slot);
                }
                let m = self.follow.groups[gi].members.remove(i);
                m.io.send(IoCmd::CloseEndpoint { id: m.id });
                self.follow.index.lock().unwrap_or_else(|p| p.into_inner()).remove(&m.key);
                continue;
            }
            if stopped && one_way && !released && slots.iter().all(|&s| self.pipes.get(s).end.queued_out() == 0) {
                // Delivered: let the pipes go; the session writes what it took and closes in
                // order (it is still ended at `until`, should that take longer).
                for slot in slots {
                    self.pattern.detach(&mut self.pipes, slot);
                    self.pipes.remove(slot);
                }
                if let Some(d) = &mut self.follow.groups[gi].members[i].drain {
                    d.released = true;
                }
            }
            i += 1;
        }
        let g = &self.follow.groups[gi];
        g.resolver.set_draining(g.members.iter().any(|m| m.drain.is_some()));
    }

    /// The slots whose pipes came from the connection keyed `key`.
    fn slots_of(&self, key: &str) -> Vec<usize> {
        (0..self.pipes.slots.len())
            .filter(|&i| matches!(&self.pipes.slots[i], Some(s) if s.endpoint.as_deref() == Some(key)))
            .collect()
    }
}

/// What a group's resolver thread waits on.
struct Wake {
    m: Mutex<WakeState>,
    cv: Condvar,
}

#[derive(Default)]
struct WakeState {
    stop: bool,
    /// A member's connection was lost or retried: look again soon.
    nudged: bool,
    /// Members are draining: post a tick every [`DRAIN_TICK`].
    draining: bool,
    /// The latest answer, for the socket to take.
    answer: Option<dns::Answer>,
    /// A `Command::Follow` is queued in the socket's mailbox.
    posted: bool,
}

impl WakeState {
    /// Posts a `Command::Follow` unless one is queued.
    fn post(&mut self, mailbox: &Mailbox, group: u64) {
        if !self.posted {
            self.posted = true;
            mailbox.send(Command::Follow { group });
        }
    }
}

impl Wake {
    fn nudge(&self) {
        let mut g = self.m.lock().unwrap_or_else(|p| p.into_inner());
        if !g.nudged {
            g.nudged = true;
            self.cv.notify_one();
        }
    }
}

/// A group's resolver thread; dropping it stops the thread (which may finish a lookup first:
/// it is never joined, and its answer goes to a mailbox that no longer takes commands).
struct Resolver {
    wake: Arc<Wake>,
}

impl Resolver {
    fn start(mailbox: Arc<Mailbox>, group: u64, name: String, port: u16, ipv6: bool, ivl: Duration, retry: Duration) -> Resolver {
        let wake = Arc::new(Wake { m: Mutex::new(WakeState::default()), cv: Condvar::new() });
        let w = wake.clone();
        let spawned = std::thread::Builder::new()
            .name("oxmq-dns".into())
            .spawn(move || resolve_loop(&w, &mailbox, group, &name, port, ipv6, ivl, retry));
        if spawned.is_err() {
            // No thread: the group stays without members (as an unresolvable name); the
            // application sees it as a peer that never comes, and the metrics say so.
            wake.m.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        }
        Resolver { wake }
    }

    fn set_draining(&self, on: bool) {
        let mut g = self.wake.m.lock().unwrap_or_else(|p| p.into_inner());
        if g.draining != on {
            g.draining = on;
            self.wake.cv.notify_one();
        }
    }
}

impl Drop for Resolver {
    fn drop(&mut self) {
        self.wake.m.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        self.wake.cv.notify_one();
    }
}

/// The resolver thread: a lookup at once, then every `ivl` after an answer with addresses,
/// or after `retry` (doubling up to `ivl`) after none; sooner when nudged, but never twice
/// within `retry`.
#[allow(clippy::too_many_arguments)]
fn resolve_loop(w: &Wake, mailbox: &Mailbox, group: u64, name: &str, port: u16, ipv6: bool, ivl: Duration, retry_min: Duration) {
    let mut retry = retry_min;
    let mut next = Instant::now();
    // The last lookup's start. Its first value is never read: the first pass finds `now >=
    // next` and looks up at once. A plain Instant rather than an Option: valgrind flagged the
    // optimised code's branch on a None's uninitialised seconds.
    let mut last = next;
    let mut tick = Instant::now();
    loop {
        {
            let mut g = w.m.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if g.stop {
                    return;
                }
                let now = Instant::now();
                let spaced = now >= last + retry_min;
                if now >= next || (g.nudged && spaced) {
                    g.nudged = false;
                    break;
                }
                let mut until = next;
                if g.nudged {
                    until = until.min(last + retry_min);
                }
                if g.draining {
                    if now >= tick {
                        g.post(mailbox, group);
                        tick = now + DRAIN_TICK;
                    }
                    until = until.min(tick);
                }
                g = w.cv.wait_timeout(g, until.saturating_duration_since(now)).unwrap_or_else(|p| p.into_inner()).0;
            }
        }
        let now = Instant::now();
        last = now;
        let answer = dns::lookup_all(name, port, ipv6);
        if matches!(&answer, Ok(v) if !v.is_empty()) {
            retry = retry_min;
            next = now + ivl;
        } else {
            next = now + retry;
            retry = (retry * 2).min(ivl);
        }
        let mut g = w.m.lock().unwrap_or_else(|p| p.into_inner());
        g.answer = Some(answer);
        g.post(mailbox, group);
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{eventually, socket};
    use crate::transport::dns::tests::set_answer;
    use crate::{opt, Context, Error, Socket, SocketType};
    use std::net::IpAddr;

    fn ips(v: &[&str]) -> Vec<IpAddr> {
        v.iter().map(|s| s.parse().unwrap()).collect()
    }

    /// Two PULLs on one port at 127.0.0.1 and 127.0.0.2 (both loopback on Linux), as two
    /// replicas of a service would be on two hosts.
    fn replicas(ctx: &Context) -> (Socket, Socket, u16) {
        replicas_of(ctx, SocketType::Pull)
    }

    fn replicas_of(ctx: &Context, kind: SocketType) -> (Socket, Socket, u16) {
        let mut a = socket(ctx, kind);
        a.bind("tcp://127.0.0.1:*").unwrap();
        let port: u16 = a.last_endpoint().unwrap().rsplit(':').next().unwrap().parse().unwrap();
        let mut b = socket(ctx, kind);
        b.bind(&format!("tcp://127.0.0.2:{port}")).unwrap();
        (a, b, port)
    }

    fn follower(ctx: &Context, kind: SocketType, ivl: i32) -> Socket {
        let mut s = socket(ctx, kind);
        s.set_int(opt::OXMQ_DNS_FOLLOW, 1).unwrap();
        s.set_int(opt::OXMQ_DNS_IVL, ivl).unwrap();
        s.set_int(opt::RECONNECT_IVL, 50).unwrap();
        s
    }

    fn peers(s: &mut Socket) -> u64 {
        s.stats().peers
    }

    /// Receives everything queued now or within a moment; returns how many.
    fn drain(s: &mut Socket) -> u64 {
        let mut n = 0;
        while s.recv(opt::DONTWAIT).is_ok() {
            n += 1;
        }
        n
    }

    #[test]
    fn options_are_checked_and_read_back() {
        let ctx = Context::new();
        let mut s = socket(&ctx, SocketType::Push);
        assert_eq!(s.get_int(opt::OXMQ_DNS_FOLLOW).unwrap(), 0);
        assert_eq!(s.get_int(opt::OXMQ_DNS_IVL).unwrap(), super::DEFAULT_IVL_MS);
        assert_eq!(s.set_int(opt::OXMQ_DNS_FOLLOW, 2), Err(Error::Invalid));
        assert_eq!(s.set_int(opt::OXMQ_DNS_IVL, 99), Err(Error::Invalid));
        s.set_int(opt::OXMQ_DNS_FOLLOW, 1).unwrap();
        s.set_int(opt::OXMQ_DNS_IVL, 1000).unwrap();
        assert_eq!(s.get_int(opt::OXMQ_DNS_FOLLOW).unwrap(), 1);
        assert_eq!(s.get_int(opt::OXMQ_DNS_IVL).unwrap(), 1000);
    }

    #[test]
    fn a_followed_name_connects_every_address_and_the_pattern_spreads_over_them() {
        let ctx = Context::new();
        let (mut a, mut b, port) = replicas(&ctx);
        set_answer("spread.oxmq-test", Ok(ips(&["127.0.0.1", "127.0.0.2"])));
        let mut push = follower(&ctx, SocketType::Push, 60_000);
        let ep = format!("tcp://spread.oxmq-test:{port}");
        push.connect(&ep).unwrap();
        assert_eq!(push.last_endpoint().unwrap(), ep);
        eventually("both replicas connected", || peers(&mut push) == 2);
        for i in 0..100u32 {
            push.send(i.to_string(), 0).unwrap();
        }
        let (mut na, mut nb) = (0, 0);
        eventually("every message received", || {
            na += drain(&mut a);
            nb += drain(&mut b);
            na + nb == 100
        });
        assert_eq!((na, nb), (50, 50), "round robin over the two addresses");
        // Without the option, libzmq's behaviour: one connection, to the first address.
        let mut plain = socket(&ctx, SocketType::Push);
        plain.connect(&format!("tcp://localhost:{port}")).unwrap();
        eventually("plain connect", || peers(&mut plain) == 1);
        assert_eq!(peers(&mut plain), 1);
    }

    #[test]
    fn a_removed_address_is_drained_and_disconnected_and_an_added_one_connected() {
        let ctx = Context::new();
        let (mut a, mut b, port) = replicas(&ctx);
        let name = "churn.oxmq-test";
        set_answer(name, Ok(ips(&["127.0.0.1", "127.0.0.2"])));
        let mut push = follower(&ctx, SocketType::Push, 100);
        push.connect(&format!("tcp://{name}:{port}")).unwrap();
        eventually("both connected", || peers(&mut push) == 2 && peers(&mut b) == 1);
        // The replica at 127.0.0.2 leaves the name: its connection ends, nothing is lost.
        set_answer(name, Ok(ips(&["127.0.0.1"])));
        eventually("127.0.0.2 disconnected", || peers(&mut push) == 1 && peers(&mut b) == 0);
        for i in 0..20u32 {
            push.send(i.to_string(), 0).unwrap();
        }
        let mut na = 0;
        eventually("all to the remaining replica", || {
            na += drain(&mut a);
            na == 20
        });
        assert_eq!(drain(&mut b), 0);
        // It comes back.
        set_answer(name, Ok(ips(&["127.0.0.1", "127.0.0.2"])));
        eventually("127.0.0.2 connected again", || peers(&mut push) == 2 && peers(&mut b) == 1);
        for i in 0..20u32 {
            push.send(i.to_string(), 0).unwrap();
        }
        let (mut na, mut nb) = (0, 0);
        eventually("spread again", || {
            na += drain(&mut a);
            nb += drain(&mut b);
            na + nb == 20
        });
        assert!(nb > 0 && na > 0, "{na} {nb}");
        let s = push.stats();
        assert_eq!(s.dropped_vanished, 0);
        let dns = push.follow.groups();
        assert_eq!((dns[0].addresses, dns[0].added, dns[0].removed), (2, 3, 1));
    }

    #[test]
    fn what_is_queued_for_a_vanished_address_that_never_takes_it_is_counted() {
        let ctx = Context::new();
        let (mut a, _b, port) = replicas(&ctx);
        let name = "backlog.oxmq-test";
        // 127.0.0.3: nothing listens there, so its member queues and never delivers.
        set_answer(name, Ok(ips(&["127.0.0.1", "127.0.0.3"])));
        let mut push = follower(&ctx, SocketType::Push, 60_000);
        push.set_int(opt::LINGER, 300).unwrap();
        push.connect(&format!("tcp://{name}:{port}")).unwrap();
        eventually("one connected", || peers(&mut push) == 1);
        eventually("two pipes", || push.peer_stats().len() == 2);
        for i in 0..10u32 {
            push.send(i.to_string(), 0).unwrap();
        }
        let mut na = 0;
        eventually("the live replica's share", || {
            na += drain(&mut a);
            na == 5
        });
        // The dead address leaves the name: after LINGER its 5 queued messages are counted.
        set_answer(name, Ok(ips(&["127.0.0.1"])));
        eventually("counted as vanished", || push.stats().dropped_vanished == 5);
        assert_eq!(push.peer_stats().len(), 1);
        for i in 0..10u32 {
            push.send(i.to_string(), 0).unwrap();
        }
        eventually("everything else delivered", || {
            na += drain(&mut a);
            na == 15
        });
    }

    #[test]
    fn a_lost_connection_looks_the_name_up_again_and_follows_a_moved_service() {
        let ctx = Context::new();
        let (a, mut b, port) = replicas(&ctx);
        let name = "moved.oxmq-test";
        set_answer(name, Ok(ips(&["127.0.0.1"])));
        // An interval far beyond the test: only the lost connection can trigger the lookup.
        let mut push = follower(&ctx, SocketType::Push, 3_600_000);
        push.connect(&format!("tcp://{name}:{port}")).unwrap();
        eventually("connected", || peers(&mut push) == 1);
        set_answer(name, Ok(ips(&["127.0.0.2"])));
        drop(a); // the service stops on its old host
                 // (The socket applies answers when it is used, as it attaches peers.)
        eventually("connected to the new address", || {
            push.process_commands();
            peers(&mut b) == 1
        });
        push.send("after the move", 0).unwrap();
        assert_eq!(b.recv(0).unwrap(), "after the move");
    }

    #[test]
    fn a_failed_lookup_keeps_the_connections_and_is_counted() {
        let ctx = Context::new();
        let (_a, mut b, port) = replicas(&ctx);
        let name = "flaky.oxmq-test";
        set_answer(name, Ok(ips(&["127.0.0.1", "127.0.0.2"])));
        let mut push = follower(&ctx, SocketType::Push, 100);
        push.connect(&format!("tcp://{name}:{port}")).unwrap();
        eventually("both connected", || peers(&mut push) == 2);
        set_answer(name, Err(libc::EAI_AGAIN));
        eventually("failures counted", || {
            push.process_commands();
            push.follow.groups()[0].lookup_failures >= 3
        });
        assert_eq!(peers(&mut push), 2);
        assert_eq!(peers(&mut b), 1);
        // A name that no longer exists is an answer: its addresses go.
        set_answer(name, Err(libc::EAI_NONAME));
        eventually("all gone", || peers(&mut push) == 0 && push.peer_stats().is_empty());
    }

    #[test]
    fn disconnect_by_the_name_ends_every_connection_and_close_stops_everything() {
        let ctx = Context::new();
        let (_a, mut b, port) = replicas_of(&ctx, SocketType::Router);
        let name = "bye.oxmq-test";
        set_answer(name, Ok(ips(&["127.0.0.1", "127.0.0.2"])));
        let mut dealer = follower(&ctx, SocketType::Dealer, 100);
        let ep = format!("tcp://{name}:{port}");
        dealer.connect(&ep).unwrap();
        eventually("both connected", || peers(&mut dealer) == 2);
        dealer.disconnect(&ep).unwrap();
        eventually("both gone", || peers(&mut dealer) == 0 && peers(&mut b) == 0);
        assert_eq!(dealer.disconnect(&ep), Err(Error::NoEnt));
        dealer.connect(&ep).unwrap();
        eventually("again", || peers(&mut dealer) == 2 && peers(&mut b) == 1);
        drop(dealer);
        eventually("closed", || peers(&mut b) == 0);
    }

    #[test]
    fn a_socket_left_alone_gets_one_command_however_many_lookups() {
        let ctx = Context::new();
        let name = "idle.oxmq-test";
        set_answer(name, Ok(ips(&["127.0.0.1"])));
        let mut push = follower(&ctx, SocketType::Push, 100);
        push.connect(&format!("tcp://{name}:1")).unwrap();
        eventually("several lookups", || crate::transport::dns::tests::lookups(name) >= 4);
        let mut cmds = Vec::new();
        push.shared.mailbox.drain_into(&mut cmds);
        let follows = cmds.iter().filter(|c| matches!(c, crate::mailbox::Command::Follow { .. })).count();
        assert_eq!(follows, 1);
    }

    #[test]
    fn ip_endpoints_and_socks_connect_as_usual() {
        let ctx = Context::new();
        let (_a, _b, port) = replicas(&ctx);
        let mut push = follower(&ctx, SocketType::Push, 100);
        push.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
        assert!(push.follow.groups().is_empty());
        push.set_bytes(opt::SOCKS_PROXY, b"127.0.0.1:1").unwrap();
        push.connect(&format!("tcp://localhost:{port}")).unwrap();
        assert!(push.follow.groups().is_empty());
    }
}
