//! The link: one PEER socket per handle carrying both directions of its traffic with each
//! other handle it is wired to (the module comment of `wiring.rs` describes it).

use super::traffic::send_err;
use super::*;

impl Wiring {
    /// The handle's link, created on first use.
    pub(super) fn link(&mut self) -> Result<&mut Link> {
        if self.link.is_none() {
            let mut sock = self.ctx.socket(SocketType::Peer)?;
            sock.set_int(opt::LINGER, self.linger_ms())?;
            self.set_sndtimeo(&mut sock)?;
            let mon_ep = format!("inproc://oxmq-wiring-link-monitor-{}", self.id);
            sock.monitor(Some(&mon_ep), event::HANDSHAKE_SUCCEEDED)?;
            let mut monitor = self.ctx.socket(SocketType::Pair)?;
            monitor.connect(&mon_ep)?;
            monitor.set_fd_level(opt::POLLIN)?;
            // Waits on the link watch the other receiving sockets' descriptors.
            if let Some(p) = self.pull.as_mut() {
                p.set_fd_level(opt::POLLIN)?;
            }
            if let Some((s, _)) = self.sub.as_mut() {
                s.set_fd_level(opt::POLLIN)?;
            }
            self.link = Some(Link {
                sock,
                monitor,
                bound: HashMap::new(),
                peers: HashMap::new(),
                up: HashSet::new(),
                subs: Vec::new(),
                escaped: HashSet::new(),
                inbox: VecDeque::new(),
                dropped: 0,
            });
        }
        Ok(self.link.as_mut().expect("just created"))
    }

    /// The link endpoint to publish beside `published` (a name's `tcp://host:port`): the link
    /// bound on the same host, binding it there first if needed. Empty when that fails (the
    /// name's users then use its plain endpoint only).
    pub(super) fn link_endpoint_for(&mut self, published: &str) -> String {
        let Some(host) = published.strip_prefix("tcp://").and_then(|a| a.rsplit_once(':')).map(|(h, _)| h.to_string()) else {
            return String::new();
        };
        let Ok(link) = self.link() else { return String::new() };
        if let Some(ep) = link.bound.get(&host) {
            return ep.clone();
        }
        let ep = match link.sock.bind(&format!("tcp://{host}:*")).and_then(|()| link.sock.last_endpoint()) {
            Ok(ep) => ep,
            Err(_) => return String::new(),
        };
        link.bound.insert(host, ep.clone());
        ep
    }

    /// The routing id of this handle's link connection to the link at `ep`, connecting first.
    pub(super) fn link_peer(&mut self, ep: &str) -> Result<u32> {
        let link = self.link()?;
        if let Some(&rid) = link.peers.get(ep) {
            return Ok(rid);
        }
        let rid = link.sock.connect_peer(ep)?;
        link.peers.insert(ep.to_string(), rid);
        Ok(rid)
    }

    /// Asks the handle at the other end of `rid` to send exchange `exchange`'s messages to
    /// this handle (idempotent there): the escape, then the control message.
    pub(super) fn send_attach(&mut self, rid: u32, exchange: &str) -> Result<()> {
        let link = self.link()?;
        link.sock.send_msg_to(&mut Msg::new(), rid, 0).map_err(send_err)?;
        let mut ctl = Vec::with_capacity(1 + exchange.len());
        ctl.push(CONTROL_ATTACH);
        ctl.extend_from_slice(exchange.as_bytes());
        link.sock.send_msg_to(&mut Msg::from(ctl), rid, 0).map_err(send_err)
    }

    /// Applies a control message from link peer `rid`.
    pub(super) fn apply_control(&mut self, rid: u32, ctl: &[u8]) {
        let Some((&CONTROL_ATTACH, name)) = ctl.split_first() else { return };
        let Ok(name) = std::str::from_utf8(name) else { return };
        if let Some(&(Kind::Exchange, eid, _)) = self.names.get(name) {
            let ex = &mut self.exchanges[eid];
            if ex.reachable && ex.style == Style::FanOut && !ex.link_subs.contains(&rid) {
                ex.link_subs.push(rid);
            }
        }
    }

    /// Reads the link without waiting until a data message, which is left in `msg`
    /// (`Ok(true)`); control messages are applied on the way. `Ok(false)`: nothing more.
    pub(super) fn link_take(&mut self, msg: &mut Msg) -> Result<bool> {
        loop {
            let Some(link) = self.link.as_mut() else { return Ok(false) };
            match link.sock.recv_msg(msg, opt::DONTWAIT) {
                Ok(()) => {}
                Err(oxmq::Error::Again) => return Ok(false),
                Err(e) => return Err(e.into()),
            }
            if self.link_is_data(msg) {
                return Ok(true);
            }
        }
    }

    /// Classifies a message just read off the link: `true` for data (left in `msg`); an escape
    /// or a control message (applied here) is `false`.
    pub(super) fn link_is_data(&mut self, msg: &Msg) -> bool {
        let rid = msg.routing_id();
        let Some(link) = self.link.as_mut() else { return true };
        if link.escaped.remove(&rid) {
            if msg.is_empty() {
                return true; // an empty data message
            }
            let ctl = msg.to_vec();
            self.apply_control(rid, &ctl);
            return false;
        }
        if msg.is_empty() {
            link.escaped.insert(rid);
            return false;
        }
        true
    }

    /// Handles the link's handshake events: a connection that came (back) up gets this
    /// handle's attachments again (its peer may have restarted and forgotten them).
    pub(super) fn link_events(&mut self) -> Result<()> {
        let Some(link) = self.link.as_mut() else { return Ok(()) };
        let mut again = Vec::new();
        while let Some(frames) = next_handshake(&mut link.monitor) {
            let Some(at) = frames.get(1).and_then(|f| std::str::from_utf8(f.as_slice()).ok()) else { continue };
            // Only connections this handle made: a peer connecting in is not in `peers`.
            let Some(&rid) = link.peers.get(at) else { continue };
            if !link.up.insert(at.to_string()) {
                for (name, ep) in &link.subs {
                    if ep == at {
                        again.push((rid, name.clone()));
                    }
                }
            }
        }
        for (rid, name) in again {
            self.send_attach(rid, &name)?;
        }
        Ok(())
    }

    /// Waits (to `deadline`) for the link's first handshake with `ep`.
    pub(super) fn wait_link_up(&mut self, ep: &str, deadline: Instant) -> Result<()> {
        loop {
            self.link_events()?;
            let link = self.link()?;
            if link.up.contains(ep) {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(WiringError::Timeout);
            }
            let mut items = [PollItem::socket(&mut link.monitor, opt::POLLIN)];
            oxmq::poll(&mut items, (left.as_millis().min(50) as i64).max(1))?;
        }
    }
}
