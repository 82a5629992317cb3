//! The draft types' own calls on [`Socket`]: RADIO/DISH groups, PEER's `connect_peer`, and the
//! udp endpoints of RADIO, DISH and DGRAM.
//!
//! Routing ids of SERVER and PEER ride on the message itself ([`Msg::routing_id`]), so those
//! types need nothing here beyond `send`/`recv`.

use super::{hwm, EndpointRec, Socket, SocketType};
use crate::error::{Error, Result};
use crate::io::udp::{self, UdpEndpoint};
use crate::msg::Msg;
use crate::opt;
use bytes::Bytes;

impl Socket {
    /// RADIO: sends a single-part message to the DISHes that joined `group` (at most
    /// `zmtp::command::MAX_GROUP_LEN` bytes). Never blocks: a DISH at its high-water mark misses
    /// the message, which [`Socket::dropped_messages`] counts. `SNDMORE` or a long group is
    /// `Invalid`; other socket types say `NotSup`. On error `msg` is untouched.
    pub fn send_group_msg(&mut self, group: &[u8], msg: &mut Msg, flags: i32) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        if flags & opt::SNDMORE != 0 {
            return Err(Error::Invalid);
        }
        self.catch_up_before_send();
        msg.set_more(false);
        let r = self.pattern.send_group(&mut self.pipes, group, msg);
        self.reap();
        r
    }

    /// RADIO: [`Socket::send_group_msg`] for anything that converts into a [`Msg`].
    pub fn send_group(&mut self, group: impl AsRef<[u8]>, data: impl Into<Msg>, flags: i32) -> Result<()> {
        let mut m = data.into();
        self.send_group_msg(group.as_ref(), &mut m, flags)
    }

    /// DISH: receives the next message of a joined group, with its group.
    pub fn recv_group(&mut self, flags: i32) -> Result<(Bytes, Msg)> {
        if self.shared.kind != SocketType::Dish {
            return Err(Error::NotSup);
        }
        let m = self.recv(flags)?;
        let g = self.pattern.last_group().unwrap_or_default();
        Ok((g, m))
    }

    /// DISH: the group of the message received last (None before the first).
    pub fn last_group(&self) -> Option<Bytes> {
        self.pattern.last_group()
    }

    /// DISH: joins a group. Joining a group twice, or a group longer than 255 bytes, is
    /// `Invalid` (as libzmq); other socket types say `NotSup`.
    pub fn join(&mut self, group: impl AsRef<[u8]>) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        let r = self.pattern.join(&mut self.pipes, group.as_ref(), true);
        self.reap();
        r
    }

    /// DISH: leaves a group; leaving a group not joined is `Invalid`.
    pub fn leave(&mut self, group: impl AsRef<[u8]>) -> Result<()> {
        self.check_term()?;
        self.process_commands();
        let r = self.pattern.join(&mut self.pipes, group.as_ref(), false);
        self.reap();
        r
    }

    /// PEER: connects to `endpoint` and returns the routing id that addresses this peer, usable
    /// at once (messages queue until the connection is up). Other types say `NotSup`; with
    /// IMMEDIATE set there is no pipe before the connection, so no id: `Fault`, as libzmq.
    pub fn connect_peer(&mut self, endpoint: &str) -> Result<u32> {
        if self.shared.kind != SocketType::Peer {
            return Err(Error::NotSup);
        }
        if self.options.immediate {
            return Err(Error::Fault);
        }
        let before = self.pattern.last_peer_id();
        self.connect(endpoint)?;
        let id = self.pattern.last_peer_id();
        if id == 0 || id == before {
            return Err(Error::Fault);
        }
        Ok(id)
    }

    /// `bind("udp://...")`: DISH and DGRAM only (`NoCompatProto` otherwise, as libzmq). A DGRAM
    /// sends and receives through one udp socket: a second bind is `NotSup` until the first is
    /// unbound (libzmq accepts it and leaves it unused).
    pub(super) fn bind_udp(&mut self, endpoint: &str, addr: &str) -> Result<()> {
        let role = match self.shared.kind {
            SocketType::Dish => udp::Bound::Dish,
            SocketType::Dgram => udp::Bound::Dgram,
            _ => return Err(Error::NoCompatProto),
        };
        let ep = UdpEndpoint::parse(addr, true, self.options.ipv6)?;
        if role == udp::Bound::Dgram && self.endpoints.iter().any(|e| matches!(e, EndpointRec::Datagram { .. })) {
            return Err(Error::NotSup);
        }
        let (mine, theirs) = crate::pipe::pipe([hwm(self.options.sndhwm), hwm(self.options.rcvhwm)]);
        let local = udp::start_bound(&ep, theirs, role, self.shared.io_stats.register())?;
        let prefix = endpoint.rsplit_once(':').map_or(endpoint, |(p, _)| p);
        let resolved = format!("{prefix}:{}", local.port());
        self.attach(mine, Some(endpoint.to_string()), true);
        self.endpoints.push(EndpointRec::Datagram { given: endpoint.to_string(), resolved: resolved.clone() });
        self.last_endpoint = resolved;
        Ok(())
    }

    /// `connect("udp://...")`: RADIO only (`NoCompatProto` otherwise, as libzmq).
    pub(super) fn connect_udp(&mut self, endpoint: &str, addr: &str) -> Result<()> {
        if self.shared.kind != SocketType::Radio {
            return Err(Error::NoCompatProto);
        }
        let ep = UdpEndpoint::parse(addr, false, self.options.ipv6)?;
        let (mine, theirs) = crate::pipe::pipe([hwm(self.options.sndhwm), hwm(self.options.rcvhwm)]);
        let counters = self.shared.io_stats.register();
        udp::start_radio(&ep, theirs, self.options.multicast_hops, self.options.multicast_loop, counters)?;
        self.attach(mine, Some(endpoint.to_string()), true);
        self.endpoints.push(EndpointRec::Datagram { given: endpoint.to_string(), resolved: endpoint.to_string() });
        self.last_endpoint = endpoint.to_string();
        Ok(())
    }
}
