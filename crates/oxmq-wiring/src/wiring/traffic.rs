//! Sending through exchanges and receiving from queues, over the sockets and the link.

use super::*;

impl Wiring {
    /// Sends `msg` through exchange `eid` (blocks while a bound queue is full, up to the send
    /// timeout).
    #[inline]
    pub fn send(&mut self, eid: usize, msg: impl Into<Msg>) -> Result<()> {
        let mut m = msg.into();
        self.send_msg(eid, &mut m)
    }

    /// [`send`](Self::send) taking a `Msg` by reference (left empty on success).
    #[inline(always)]
    pub fn send_msg(&mut self, eid: usize, msg: &mut Msg) -> Result<()> {
        // The usual cases, inlined into the front ends.
        match self.direct(eid, msg) {
            Some(Direct::Leg(leg)) => leg.send_msg(msg, 0).map_err(send_err),
            Some(Direct::Link(link, rid)) => link.send_msg_to(msg, rid, 0).map_err(send_err),
            None => self.send_general(eid, msg),
        }
    }

    /// Sends `msg` through exchange `eid` if that needs no wait: `Ok(true)`. `Ok(false)` when
    /// it would have to wait, or when the exchange is one this call does not try (several
    /// destinations, or reachable from other handles): nothing was sent, `msg` is unchanged,
    /// and [`send_msg`](Self::send_msg) sends it. For bindings that may not block in a call.
    #[inline(always)]
    pub fn try_send_msg(&mut self, eid: usize, msg: &mut Msg) -> Result<bool> {
        let r = match self.direct(eid, msg) {
            Some(Direct::Leg(s)) => s.try_send_msg(msg, 0),
            Some(Direct::Link(s, rid)) => s.try_send_msg_to(msg, rid, 0),
            None => {
                return match self.exchanges.get(eid) {
                    Some(_) => Ok(false),
                    None => Err(WiringError::Invalid(format!("no exchange {eid}"))),
                }
            }
        };
        match r {
            Ok(()) => Ok(true),
            Err(oxmq::Error::Again) => Ok(false),
            Err(e) => Err(send_err(e)),
        }
    }

    /// Where `msg` can go straight to when exchange `eid` feeds one queue, no other handle can
    /// attach to it and no moved name is to be applied: its one leg, or the link and the
    /// routing id to send to (not for an empty message, which the link escapes). None
    /// otherwise, and for an unknown `eid`.
    #[inline(always)]
    fn direct(&mut self, eid: usize, msg: &mut Msg) -> Option<Direct<'_>> {
        if self.client.has_moves() {
            return None;
        }
        let ex = self.exchanges.get_mut(eid)?;
        if ex.reachable || ex.style != Style::FanOut {
            return None;
        }
        match (ex.legs.len(), ex.link_legs.len()) {
            (1, 0) => Some(Direct::Leg(&mut ex.legs[0])),
            (0, 1) if !msg.is_empty() => Some(Direct::Link(&mut self.link.as_mut()?.sock, ex.link_legs[0])),
            _ => None,
        }
    }

    #[inline(never)]
    pub(super) fn send_general(&mut self, eid: usize, msg: &mut Msg) -> Result<()> {
        if self.client.has_moves() {
            self.apply_moves();
        }
        let ex = self.exchanges.get(eid).ok_or_else(|| WiringError::Invalid(format!("no exchange {eid}")))?;
        // Queues attached from elsewhere show up as XPUB subscriptions and link requests:
        // looked for on every send while there are none, now and then after.
        if ex.reachable {
            let none = ex.xpub_subs <= 0 && ex.link_subs.is_empty();
            let ex = &mut self.exchanges[eid];
            ex.unchecked += 1;
            if none || ex.unchecked >= XPUB_CHECK_EVERY {
                ex.unchecked = 0;
                drain_subscriptions(&mut ex.xpub, &mut ex.xpub_subs);
                self.pump_link()?;
                self.link_events()?;
            }
        }
        let Wiring { exchanges, link, .. } = self;
        let ex = &mut exchanges[eid];
        let to_xpub = ex.xpub_subs > 0;
        match ex.style {
            Style::FanOut => {
                // Every target gets a clone but the last, which gets `msg`.
                let n = ex.legs.len() + ex.link_legs.len() + ex.link_subs.len() + usize::from(to_xpub);
                if n == 0 {
                    // Nobody: the message goes nowhere, as with a PUB nobody subscribed to.
                    return ex.xpub.send_msg(msg, 0).map_err(send_err);
                }
                let mut left = n;
                let mut next = |m: &mut Msg| {
                    left -= 1;
                    if left == 0 {
                        std::mem::take(m)
                    } else {
                        m.clone()
                    }
                };
                for leg in &mut ex.legs {
                    leg.send_msg(&mut next(msg), 0).map_err(send_err)?;
                }
                if let Some(link) = link.as_mut() {
                    for &rid in &ex.link_legs {
                        link_send(&mut link.sock, rid, &mut next(msg)).map_err(send_err)?;
                    }
                    let mut gone = Vec::new();
                    for &rid in &ex.link_subs {
                        match link_send(&mut link.sock, rid, &mut next(msg)) {
                            Ok(()) => {}
                            // That handle's connection is gone: it attaches again over its
                            // new connection when it comes back.
                            Err(oxmq::Error::HostUnreach) => gone.push(rid),
                            Err(e) => return Err(send_err(e)),
                        }
                    }
                    ex.link_subs.retain(|r| !gone.contains(r));
                }
                if to_xpub {
                    ex.xpub.send_msg(&mut next(msg), 0).map_err(send_err)?;
                }
                Ok(())
            }
            Style::LoadBalance => {
                // The legs' PUSH balances between the queues bound from here; the queues
                // attached from elsewhere (XPUB subscribers) take one turn between them.
                ex.turn = !ex.turn;
                if ex.legs.is_empty() || (to_xpub && ex.turn) {
                    ex.xpub.send_msg(msg, 0).map_err(send_err)
                } else {
                    ex.legs[0].send_msg(msg, 0).map_err(send_err)
                }
            }
        }
    }

    /// Reads what the link has without waiting: control messages are applied, data messages
    /// kept for `receive`.
    pub(super) fn pump_link(&mut self) -> Result<()> {
        let mut m = Msg::new();
        while self.link.as_ref().is_some_and(|l| l.inbox.len() < INBOX_MAX) && self.link_take(&mut m)? {
            let keep = !self.queues.is_empty();
            if let Some(link) = self.link.as_mut() {
                if keep {
                    link.inbox.push_back(std::mem::take(&mut m));
                } else {
                    link.dropped += 1;
                }
            }
        }
        Ok(())
    }

    /// Receives the next message from any queue of this handle, waiting as long as it takes.
    pub fn receive(&mut self) -> Result<Msg> {
        self.receive_timeout(None)
    }

    /// Receives with a timeout (`None`: forever); `Timeout` when it runs out.
    pub fn receive_timeout(&mut self, timeout: Option<Duration>) -> Result<Msg> {
        let mut m = Msg::default();
        self.receive_into(&mut m, timeout)?;
        Ok(m)
    }

    /// [`receive_timeout`](Self::receive_timeout) into a reused `Msg`.
    #[inline(always)]
    pub fn receive_into(&mut self, msg: &mut Msg, timeout: Option<Duration>) -> Result<()> {
        // The usual cases, inlined into the front ends: a message already queued on the link
        // (every 32nd receive looks at the other sockets first), or on the PULL when the
        // handle has no other receiving socket.
        if !self.client.has_moves() {
            if let Some(link) = self.link.as_mut() {
                self.link_run = self.link_run.wrapping_add(1);
                if !self.link_run.is_multiple_of(32) && link.inbox.is_empty() && link.sock.recv_msg(msg, opt::DONTWAIT).is_ok() {
                    if !msg.is_empty() && (link.escaped.is_empty() || !link.escaped.contains(&msg.routing_id())) {
                        return Ok(());
                    }
                    return self.receive_linked_slow(msg, timeout);
                }
            } else if self.sub.is_none() {
                if let Some(p) = self.pull.as_mut() {
                    if p.recv_msg(msg, opt::DONTWAIT).is_ok() {
                        return Ok(());
                    }
                }
            }
        }
        self.receive_general(msg, timeout)
    }

    /// The inline path read an escape, or a message after one: handled as `link_take` does.
    #[inline(never)]
    pub(super) fn receive_linked_slow(&mut self, msg: &mut Msg, timeout: Option<Duration>) -> Result<()> {
        if self.link_is_data(msg) {
            return Ok(());
        }
        self.receive_general(msg, timeout)
    }

    /// Receives for a handle with a link: whatever is queued on any of its receiving sockets,
    /// else a wait on the link (its direct path) that also watches the others' descriptors.
    pub(super) fn receive_with_link(&mut self, msg: &mut Msg, timeout: Option<Duration>) -> Result<()> {
        // The clock is read only when the call has to wait.
        let mut deadline: Option<Option<Instant>> = None;
        loop {
            if self.client.has_moves() {
                self.apply_moves();
            }
            if let Some(m) = self.link.as_mut().and_then(|l| l.inbox.pop_front()) {
                msg.replace_with(m);
                return Ok(());
            }
            for s in [self.pull.as_mut(), self.sub.as_mut().map(|(s, _)| s)].into_iter().flatten() {
                match s.recv_msg(msg, opt::DONTWAIT) {
                    Ok(()) => return Ok(()),
                    Err(oxmq::Error::Again) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            if self.link_take(msg)? {
                return Ok(());
            }
            self.link_events()?;
            if timeout == Some(Duration::ZERO) {
                return Err(WiringError::Timeout);
            }
            let deadline = *deadline.get_or_insert_with(|| timeout.map(|t| Instant::now() + t));
            let left = match deadline {
                None => Duration::from_millis(RECV_SLICE_MS as u64),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(WiringError::Timeout);
                    }
                    left.min(Duration::from_millis(RECV_SLICE_MS as u64))
                }
            };
            let mut fds: [RawFd; 3] = [-1; 3];
            let mut k = 0;
            for fd in [self.pull.as_ref().map(|p| p.fd()), self.sub.as_ref().map(|(s, _)| s.fd())].into_iter().flatten() {
                fds[k] = fd;
                k += 1;
            }
            let link = self.link.as_mut().expect("a handle with a link");
            fds[k] = link.monitor.fd();
            k += 1;
            match link.sock.wait_recv_also(Some(left), &fds[..k]) {
                Ok(()) | Err(oxmq::Error::Again) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    #[inline(never)]
    pub(super) fn receive_general(&mut self, msg: &mut Msg, timeout: Option<Duration>) -> Result<()> {
        if self.queues.is_empty() {
            return Err(WiringError::Invalid("this handle has no queue".into()));
        }
        if self.link.is_some() {
            return self.receive_with_link(msg, timeout);
        }
        if self.client.has_moves() {
            self.apply_moves();
        }
        // Something queued: no clock, no timeout option, no wait.
        if let Some(p) = self.pull.as_mut() {
            match p.recv_msg(msg, opt::DONTWAIT) {
                Ok(()) => return Ok(()),
                Err(oxmq::Error::Again) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if let Some((s, _)) = self.sub.as_mut() {
            match s.recv_msg(msg, opt::DONTWAIT) {
                Ok(()) => return Ok(()),
                Err(oxmq::Error::Again) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if timeout == Some(Duration::ZERO) {
            return Err(WiringError::Timeout);
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if self.client.has_moves() {
                self.apply_moves();
            }
            let slice = match deadline {
                None => RECV_SLICE_MS,
                Some(d) => (d.saturating_duration_since(Instant::now()).as_millis() as i64).min(RECV_SLICE_MS),
            } as i32;
            let r = match (self.pull.as_mut(), self.sub.as_mut()) {
                // One receiving socket (the usual case): its own blocking receive, which
                // reads the connection on this thread when it can.
                (Some(s), None) | (None, Some((s, _))) => {
                    if slice != self.rcvtimeo {
                        s.set_int(opt::RCVTIMEO, slice)?;
                        self.rcvtimeo = slice;
                    }
                    s.recv_msg(msg, 0)
                }
                (Some(p), Some((s, _))) => {
                    let mut items = [PollItem::socket(p, opt::POLLIN), PollItem::socket(s, opt::POLLIN)];
                    oxmq::poll(&mut items, slice as i64)?;
                    let (pr, sr) = (items[0].is_readable(), items[1].is_readable());
                    if pr {
                        self.pull.as_mut().expect("present").recv_msg(msg, opt::DONTWAIT)
                    } else if sr {
                        self.sub.as_mut().expect("present").0.recv_msg(msg, opt::DONTWAIT)
                    } else {
                        Err(oxmq::Error::Again)
                    }
                }
                // A local queue nothing is bound to yet: wait out the slice on nothing.
                (None, None) => {
                    oxmq::poll(&mut [], slice as i64)?;
                    Err(oxmq::Error::Again)
                }
            };
            match r {
                Ok(()) => return Ok(()),
                Err(oxmq::Error::Again) => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Err(WiringError::Timeout);
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The record of a global name, from the name service (one round trip): for other ZeroMQ
    /// programs that want to connect to it.
    pub fn lookup(&self, name: &str) -> Result<Record> {
        self.client.lookup(name)
    }

    /// The endpoint a name of this handle is published at (global or process scope).
    pub fn endpoint_of(&self, name: &str) -> Option<String> {
        match self.names.get(name)? {
            (_, _, Scope::Global) => self.client.lookup(name).ok().map(|r| r.endpoint),
            (_, _, Scope::Process) => lock(process_names()).get(name).map(|p| p.endpoint.clone()),
            _ => None,
        }
    }
}

pub(super) fn send_err(e: oxmq::Error) -> WiringError {
    match e {
        oxmq::Error::Again => WiringError::Timeout,
        e => e.into(),
    }
}

/// Where [`Wiring::direct`] sends.
enum Direct<'a> {
    Leg(&'a mut Socket),
    /// The link, and the routing id to send to.
    Link(&'a mut Socket, u32),
}

/// Sends `msg` over the link to `rid`; an empty message goes as two (the escape, then the
/// empty message) so it is not taken for the escape.
pub(super) fn link_send(sock: &mut Socket, rid: u32, msg: &mut Msg) -> oxmq::Result<()> {
    if msg.is_empty() {
        sock.send_msg_to(&mut Msg::new(), rid, 0)?;
    }
    sock.send_msg_to(msg, rid, 0)
}

/// Reads pending (un)subscription messages off an exchange's XPUB, counting them.
pub(super) fn drain_subscriptions(s: &mut Socket, subs: &mut i64) {
    while let Ok(m) = s.recv(opt::DONTWAIT) {
        match m.as_slice().first() {
            Some(1) => *subs += 1,
            Some(0) => *subs -= 1,
            _ => {}
        }
    }
}
