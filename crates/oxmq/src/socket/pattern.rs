//! The [`Pattern`] trait each socket type implements, and the pattern of each type.

use super::*;

/// What a socket type decides: where messages go and where they come from.
pub(crate) trait Pattern: Send {
    /// A new pipe. The pattern may reject it with [`Pipes::reject`].
    fn attach(&mut self, pipes: &mut Pipes, slot: usize);
    /// The pipe is going away: forget it.
    fn detach(&mut self, pipes: &mut Pipes, slot: usize);
    /// The pipe has messages again.
    fn read_activated(&mut self, pipes: &mut Pipes, slot: usize);
    /// The pipe has room again.
    fn write_activated(&mut self, pipes: &mut Pipes, slot: usize);
    /// The pipe was reconnected to a new peer (connect side); resend state.
    fn hiccuped(&mut self, _pipes: &mut Pipes, _slot: usize) {}
    /// Sends a frame; on `Ok` the frame is taken out of `msg`. `Err(Again)` means "would block".
    fn send(&mut self, pipes: &mut Pipes, msg: &mut Msg) -> Result<()>;
    /// Receives a frame; `Err(Again)` means "nothing now".
    fn recv(&mut self, pipes: &mut Pipes) -> Result<Msg>;
    /// `recv` into `out` (whose old frame is dropped; on `Err` it is left untouched): saves
    /// moving the frame through return values, several 56-byte copies per message. Patterns
    /// on the throughput path override it.
    #[inline]
    fn recv_into(&mut self, pipes: &mut Pipes, out: &mut Msg) -> Result<()> {
        out.replace_with(self.recv(pipes)?);
        Ok(())
    }
    fn has_in(&mut self, pipes: &mut Pipes) -> bool;
    fn has_out(&mut self, pipes: &mut Pipes) -> bool;
    /// A type-specific option: `None` if the type does not know it.
    fn setsockopt(&mut self, _pipes: &mut Pipes, _option: i32, _value: &[u8]) -> Option<Result<()>> {
        None
    }
    fn getsockopt(&self, _option: i32) -> Option<Vec<u8>> {
        None
    }
    /// Messages dropped by policy (PUB at HWM, ROUTER with no route), for the counters.
    fn drops(&self) -> stats::Drops {
        stats::Drops::default()
    }
    /// OXMQ_DNS_FOLLOW: send nothing new to the pipe in `slot` (`stop`), or send to it again
    /// (its address came back), leaving the pipe attached for what it still has to deliver
    /// or to receive. True when the pattern did (load balancers); false when it cannot, and
    /// keeps using the pipe until the socket lets it go.
    fn stop_sending(&mut self, _pipes: &mut Pipes, _slot: usize, _stop: bool) -> bool {
        false
    }
    /// Fan-out types (PUB, XPUB, RADIO): the pipes subscribed to anything and the distinct
    /// subscriptions (groups); receiving ones (SUB, XSUB, DISH): 0 and their own. For the
    /// metrics; None for the other types.
    fn fanout(&self) -> Option<(u64, u64)> {
        None
    }
    /// RADIO: sends a single-part message to a group's members. Others: `NotSup`.
    fn send_group(&mut self, _pipes: &mut Pipes, _group: &[u8], _msg: &mut Msg) -> Result<()> {
        Err(Error::NotSup)
    }
    /// DISH: the group of the message `recv` returned last.
    fn last_group(&self) -> Option<Bytes> {
        None
    }
    /// DISH: joins (`true`) or leaves a group. Others: `NotSup`.
    fn join(&mut self, _pipes: &mut Pipes, _group: &[u8], _join: bool) -> Result<()> {
        Err(Error::NotSup)
    }
    /// PEER: the routing id given to the pipe attached last (0: none).
    fn last_peer_id(&self) -> u32 {
        0
    }
    /// ROUTER: `POLLOUT` when the peer with routing id `id` can take a message now (see
    /// [`Socket::peer_state`]). Others: `NotSup`.
    fn peer_state(&mut self, _pipes: &mut Pipes, _id: &[u8]) -> Result<i16> {
        Err(Error::NotSup)
    }
}

pub(super) fn pattern_for(kind: SocketType) -> Result<Box<dyn Pattern>> {
    Ok(match kind {
        SocketType::Pair => Box::new(pair::Pair::new()),
        SocketType::Pub => Box::new(pubsub::Pub::new()),
        SocketType::Sub => Box::new(pubsub::Sub::new()),
        SocketType::Req => Box::new(reqrep::Req::new()),
        SocketType::Rep => Box::new(reqrep::Rep::new()),
        SocketType::Dealer => Box::new(dealer::Dealer::new()),
        SocketType::Router => Box::new(router::Router::new()),
        SocketType::Push => Box::new(pipeline::Push::new()),
        SocketType::Pull => Box::new(pipeline::Pull::new()),
        SocketType::XPub => Box::new(pubsub::Pub::xpub()),
        SocketType::XSub => Box::new(pubsub::Sub::xsub()),
        SocketType::Stream => Box::new(stream::Stream::new()),
        SocketType::Server => Box::new(clientserver::Server::new(false)),
        SocketType::Peer => Box::new(clientserver::Server::new(true)),
        SocketType::Client => Box::new(singlepart::SinglePart::new(dealer::Dealer::new())),
        SocketType::Scatter => Box::new(singlepart::SinglePart::new(pipeline::Push::new())),
        SocketType::Gather => Box::new(singlepart::SinglePart::new(pipeline::Pull::new())),
        SocketType::Channel => Box::new(singlepart::SinglePart::new(pair::Pair::new())),
        SocketType::Radio => Box::new(radiodish::Radio::new()),
        SocketType::Dish => Box::new(radiodish::Dish::new()),
        SocketType::Dgram => Box::new(dgram::Dgram::new()),
    })
}
