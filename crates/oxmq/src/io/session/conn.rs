//! One connection of a session: its byte stream, its protocol state and its buffers, and what
//! happens to it on each event. The I/O thread runs everything here with the session's mutex
//! held; `direct.rs` runs the parts an application thread may run.

use super::buffers::{RxBuf, TxBuf};
use super::{Link, Lost};
use crate::io::monitor::event as mon;
use crate::io::zap::{self, ZapClient};
use crate::io::{Ctx, IoThread, TimerKey};
use crate::msg::Msg;
use crate::pipe::Wake;
use crate::transport::stream::Stream;
use bytes::Bytes;
use mio::{Interest, Token};
use std::io::IoSlice;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// epoll events for input (what mio's READABLE registers).
const READ_EVENTS: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;
/// epoll events for room to write.
const WRITE_EVENTS: u32 = libc::EPOLLOUT as u32;

/// Connection numbers, unique in the process: a timer set for one connection of a session is
/// ignored by the next.
static CONNS: AtomicU64 = AtomicU64::new(0);

/// What the connection speaks.
pub(super) enum Proto {
    /// ZMTP: the handshake, then the data phase (`crates/zmtp`).
    Zmtp(Box<zmtp::Connection>),
    /// STREAM's raw bytes (`raw.rs`).
    Raw,
}

pub(super) struct Conn {
    pub(super) stream: Stream,
    pub(super) proto: Proto,
    pub(super) rx: RxBuf,
    pub(super) tx: TxBuf,
    /// Frames of an incoming multi-part message not yet complete.
    pub(super) partial: Vec<Msg>,
    /// A complete message the pipe had no room for.
    pub(super) held: Vec<Msg>,
    /// The stream may take more bytes (no write has met EAGAIN since the last writable event).
    pub(super) writable: bool,
    /// More input may be waiting in the kernel (we stopped before EAGAIN).
    pub(super) read_pending: bool,
    /// An application thread waits on this connection's input itself (`direct_arm`), or the
    /// input is lent to the next such wait (`lease.rs`): the I/O thread's epoll registration
    /// does not report it meanwhile.
    pub(super) armed: bool,
    /// Whether the input is lent between waits, and the I/O thread's timer for taking it back.
    pub(super) lease: super::lease::Lease,
    /// The events the I/O thread's registration reports now (`READ_EVENTS`, `WRITE_EVENTS`).
    interest: u32,
    /// The ZAP request in flight while the handshake waits for a verdict.
    pub(super) zap: Option<ZapClient>,
    /// The peer's address (tcp: its IP), for ZAP and the Peer-Address property.
    pub(super) peer_address: String,
    /// The peer's routing id once handshaken (for monitor events).
    pub(super) peer_id: Bytes,
    /// The errno that ended the connection (EPIPE for an orderly close), for monitor events.
    pub(super) io_errno: i32,
    /// The application thread's direct read met a broken stream or a hostile frame: the I/O
    /// thread ends the connection at its next turn.
    pub(super) failed: bool,
    /// Closing: everything is written to the stream; the connection waits to close without a
    /// reset (see `close.rs`), its write side shut once a layer has written what it held.
    pub(super) fin_sent: bool,
    /// The write side was shut (FIN after all the data, the layer's included).
    pub(super) write_shut: bool,
    /// Successful reads (for the direct send path's "reply": input since the last write).
    pub(super) reads: u64,
    /// The stream's keepalives read, when last looked at (`read::note_keepalives`).
    pub(super) keepalives: u64,
    /// The reactor timer set for the connection's earliest deadline (`deadline.rs`).
    pub(super) deadline: Option<(Instant, TimerKey)>,
    /// The queued check of a closing connection's send queue (see `close.rs`).
    pub(super) close_check: Option<TimerKey>,
    /// This connection's number (see [`CONNS`]).
    pub(super) id: u64,
}

impl Conn {
    /// Starts a connection over `stream` (registered with the reactor already when
    /// `registered`): the handshake for ZMTP, the link at once for a raw STREAM. None when the
    /// stream cannot be registered.
    pub(super) fn start(link: &mut Link, ctx: &mut Ctx<'_>, mut stream: Stream, registered: bool) -> Option<Box<Conn>> {
        stream.configure(&link.cfg.stream);
        if !registered && ctx.registry.register(&mut stream, Token(link.token), Interest::READABLE | Interest::WRITABLE).is_err()
        {
            return None;
        }
        let peer_address = zap::peer_address(&stream);
        let proto = if link.cfg.policy.raw {
            Proto::Raw
        } else {
            let config = zmtp_config(link, &peer_address, stream.pings());
            Proto::Zmtp(Box::new(zmtp::Connection::start(config, zmtp::Version::V3_1, ctx.now())))
        };
        let mut c = Box::new(Conn {
            stream,
            proto,
            rx: RxBuf::new(),
            tx: TxBuf::new(),
            partial: Vec::new(),
            held: Vec::new(),
            writable: true,
            read_pending: true,
            armed: false,
            lease: Default::default(),
            interest: READ_EVENTS | WRITE_EVENTS,
            zap: None,
            peer_address,
            peer_id: Bytes::new(),
            io_errno: 0,
            failed: false,
            fin_sent: false,
            write_shut: false,
            reads: 0,
            keepalives: 0,
            deadline: None,
            close_check: None,
            id: CONNS.fetch_add(1, Ordering::Relaxed),
        });
        match &mut c.proto {
            Proto::Zmtp(z) => z.poll_handshake_transmit(&mut c.tx.buf),
            Proto::Raw => c.raw_begin(link), // no greeting: the link is up
        }
        c.sync_deadline(link, ctx);
        Some(c)
    }

    pub(super) fn fd(&self) -> std::os::fd::RawFd {
        self.stream.fd()
    }

    /// Past the handshake (a raw link has none).
    #[inline]
    pub(super) fn is_established(&self) -> bool {
        match &self.proto {
            Proto::Zmtp(z) => z.is_handshake_complete(),
            Proto::Raw => true,
        }
    }

    /// The stream is ready.
    pub(super) fn ready(&mut self, link: &mut Link, ctx: &mut Ctx<'_>, readable: bool, writable: bool) -> Result<(), Lost> {
        if self.in_close_wait() {
            return Ok(()); // `finished` decides
        }
        if writable {
            self.writable = true;
        }
        if readable {
            self.read_pending = true;
        }
        self.drive(link, ctx)
    }

    /// A wake-up of the session's pipe.
    pub(super) fn pipe_event(&mut self, link: &mut Link, ctx: &mut Ctx<'_>, what: Wake) -> Result<(), Lost> {
        if self.in_close_wait() {
            return Ok(());
        }
        if what == Wake::Write && !self.held.is_empty() {
            // Room in the inbound pipe: deliver the held message and resume reading.
            let Some(p) = &mut link.pipe else { return Ok(()) };
            if !self.deliver_held(p) {
                return Ok(());
            }
            p.flush();
        }
        self.drive(link, ctx)
    }

    /// Moves bytes both ways until the stream or the pipe would block.
    pub(super) fn drive(&mut self, link: &mut Link, ctx: &mut Ctx<'_>) -> Result<(), Lost> {
        self.read_side(link, ctx)?;
        self.write_side(link, false)?;
        self.sync_deadline(link, ctx);
        Ok(())
    }

    /// Runs the handshake on what is buffered (asking ZAP when the handshake pauses for it).
    /// True once it is complete.
    pub(super) fn handshake(&mut self, link: &mut Link, ctx: &mut Ctx<'_>) -> Result<bool, Lost> {
        let Proto::Zmtp(z) = &mut self.proto else { return Ok(true) };
        loop {
            let r = match z.handshake(&mut self.rx.buf, ctx.now()) {
                Ok(true) => Ok(None),
                Ok(false) => {
                    zap::step(z, &mut self.zap, self.rx.buf.len(), &self.stream, &link.cfg.handshake, ctx.io, link.id()).map(Some)
                }
                Err(e) => Err(e),
            };
            z.poll_handshake_transmit(&mut self.tx.buf);
            match r {
                Ok(None) => break,
                Ok(Some(true)) => continue, // ZAP answered: go on with what waited
                Ok(Some(false)) => return Ok(false),
                Err(_) => {
                    // Let a refused peer read why (ERROR) before the connection closes.
                    let _ = self.stream.write_vectored(&[IoSlice::new(self.tx.unwritten())]);
                    return Err(Lost);
                }
            }
        }
        let Some(peer) = z.peer().cloned() else { return Err(Lost) };
        let subject = self.stream.peer_subject();
        let mut props = crate::properties::Properties::gather(
            &self.peer_address,
            peer.version,
            z.zap_reply(),
            &peer.metadata,
            subject.as_deref(),
        );
        props.set_src_fd(self.stream.fd());
        self.zap = None;
        self.established(link, peer, Arc::new(props));
        Ok(true)
    }

    /// The handshake finished: set up the pipe and tell the socket. `props` travel on the
    /// routing-id frame, which the socket's pipe end keeps for the messages that follow. Out of
    /// line: it runs once per connection.
    #[inline(never)]
    fn established(&mut self, link: &mut Link, peer: zmtp::Peer, props: Arc<crate::properties::Properties>) {
        // CONNECT_ROUTING_ID, when given, names the peer instead of its announced identity.
        let routing_id = match (&link.dialer, &link.cfg.link.connect_routing_id) {
            (Some(_), Some(id)) => id.clone(),
            _ => peer.routing_id.clone().unwrap_or_default(),
        };
        self.peer_id = routing_id.clone();
        self.send_hello(link);
        link.attach_peer(routing_id, Some(props), crate::io::monitor::stream_addrs(&self.stream));
        if peer.implies_subscribe_all && link.cfg.policy.takes_subscriptions {
            // A ZMTP 1.0 peer without a signature (libzmq 2.x) never sends subscriptions: as
            // libzmq, a PUB or XPUB acts as if it had subscribed to everything.
            if let Some(p) = &mut link.pipe {
                p.write(Msg::copy_from(&[1]));
                p.flush();
            }
        }
        // After the socket has the pipe, as libzmq raises it after `engine_ready`: whoever
        // waits for this event and then calls into the socket finds the peer attached.
        link.event(mon::HANDSHAKE_SUCCEEDED, 0, Some(&self.stream), &self.peer_id);
    }

    /// Takes the connection's queued timers (its deadline, its close check) out of the reactor:
    /// a connection that ends, however it ends, leaves none behind.
    pub(super) fn cancel_timers(&mut self, ctx: &mut Ctx<'_>) {
        let lease = self.lease.timer.take();
        for key in [self.deadline.take().map(|(_, k)| k), self.close_check.take(), lease].into_iter().flatten() {
            ctx.cancel_timer(key);
        }
    }

    /// The connection ended (error, end of stream, deadline): events, counters, and what the
    /// next connection must know. The caller drops it.
    pub(super) fn lost(&mut self, link: &mut Link, ctx: &mut Ctx<'_>) {
        self.cancel_timers(ctx);
        self.raw_lost(link);
        // Messages decoded in the batch that ended with EOF are complete: publish them. A
        // connect-side pipe outlives the connection, so nothing else would flush them.
        if let Some(p) = &mut link.pipe {
            p.flush();
        }
        let established = self.is_established();
        let layer_failure = self.stream.layer_failure();
        if layer_failure.is_some() {
            link.counters.protocol_error();
        }
        if let (false, Proto::Zmtp(z)) = (established, &self.proto) {
            // A handshake that failed says why (reported first, as libzmq does); one cut
            // short by the peer or the handshake's timeout has no detail. A layer (ws, TLS)
            // that refused its peer says why in its own terms.
            match (z.handshake_error(), layer_failure) {
                (Some(e), _) => {
                    if let Some((ev, value)) = crate::io::monitor::handshake_failure(e) {
                        link.event(ev, value, Some(&self.stream), &self.peer_id);
                    }
                }
                (None, Some(f)) => {
                    let (ev, value) = crate::io::monitor::layer_failure(f);
                    link.event(ev, value, Some(&self.stream), &self.peer_id);
                }
                (None, None) => {
                    let errno = if self.io_errno != 0 { self.io_errno } else { libc::ETIMEDOUT };
                    link.event(mon::HANDSHAKE_FAILED_NO_DETAIL, errno as u64, Some(&self.stream), &self.peer_id);
                }
            }
        }
        link.event(mon::DISCONNECTED, self.fd() as u64, Some(&self.stream), &self.peer_id);
        if established {
            link.counters.disconnected();
        } else {
            link.counters.handshake_failed();
        }
        let _ = ctx.registry.deregister(&mut self.stream);
        if let Proto::Zmtp(z) = &mut self.proto {
            if z.data_mut().is_some_and(|d| !d.at_boundary()) {
                // The peer saw part of a message; the next peer must not see the rest.
                link.skip_to_boundary = true;
            }
        }
        // Messages that were encoded but not written are lost with the connection, as in
        // libzmq: TCP gives no acknowledgement to know what the peer received.
    }

    /// The connection is being lost during its handshake in a way that ends a connecting
    /// session for good (see `reconnect.rs`): a protocol error, or any end with
    /// RECONNECT_STOP_HANDSHAKE_FAILED. False once the handshake is over.
    pub(super) fn stops_after_lost_handshake(&self, link: &Link) -> bool {
        match &self.proto {
            Proto::Zmtp(z) if !z.is_handshake_complete() => {
                z.handshake_error().is_some()
                    || self.stream.layer_failure().is_some()
                    || link.cfg.link.reconnect_stop.on_handshake_failure()
            }
            _ => false,
        }
    }

    /// True when the session is finished: closing, everything queued written, and (tcp) the
    /// connection may close without losing any of it.
    pub(super) fn finished(&mut self, link: &mut Link, ctx: &mut Ctx<'_>) -> bool {
        link.closing && link.drained && self.tx.is_empty() && self.may_close(link, ctx)
    }

    /// Brings the I/O thread's registration in line with what it needs: input unless an
    /// application thread waits on it, room to write only while a write is blocked. A change
    /// that adds an event already ready queues it, so nothing is missed; and since room to
    /// write is asked for only after EAGAIN, giving input back never queues a spurious
    /// writable event (which would wake the I/O thread for nothing).
    pub(super) fn update_interest(&mut self, io: &IoThread, token: usize) -> bool {
        let want = if self.armed { 0 } else { READ_EVENTS } | if self.writable { 0 } else { WRITE_EVENTS };
        if want == self.interest {
            return true;
        }
        let ok = io.set_interest(self.stream.fd(), token, want).is_ok();
        if ok {
            self.interest = want;
        }
        ok
    }

    /// The stream failed with `errno` (kept for the monitor's events). Out of line: the read
    /// and write loops stay as they were.
    #[cold]
    #[inline(never)]
    pub(super) fn fail(&mut self, errno: i32) -> Result<(), Lost> {
        self.io_errno = errno;
        Err(Lost)
    }
}

/// The handshake's configuration for one connection; `transport_pings`: the stream has
/// keepalives of its own, which carry the heartbeats' PINGs.
fn zmtp_config(link: &Link, peer_address: &str, transport_pings: bool) -> zmtp::Config {
    let h = &link.cfg.handshake;
    let hb = &link.cfg.link;
    let ms = |n: i32| (n > 0).then(|| Duration::from_millis(n as u64));
    zmtp::Config {
        socket_type: link.cfg.policy.wire_type,
        routing_id: h.routing_id.clone(),
        zap: zap::config(h, peer_address),
        mechanism: h.mechanism.clone(),
        max_msg_size: h.max_msg_size,
        properties: h.properties.clone(),
        send_subscriptions: link.cfg.policy.sends_subscriptions,
        heartbeat: zmtp::HeartbeatConfig {
            interval: ms(hb.heartbeat_ivl),
            timeout: ms(hb.effective_timeout() as i32),
            ttl_ds: hb.heartbeat_ttl_ds,
            by_transport: transport_pings,
        },
        handshake_timeout: ms(h.handshake_ivl),
    }
}
