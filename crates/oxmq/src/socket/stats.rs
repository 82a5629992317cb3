//! Socket counters, readable at any time ([`Socket::stats`], [`Socket::peer_stats`]).
//!
//! Cheap by construction: nothing here writes a cache line another thread uses, per message.
//! * What the application thread sees (messages and bytes sent and received, policy drops) is
//!   counted in plain fields of the socket or its pattern: `Socket` is `&mut`, so no atomics.
//! * What the I/O thread sees (wire bytes, connections, reconnects, handshake failures,
//!   oversized frames) is counted per session in a [`SessionCounters`] that only the thread
//!   driving the session writes, once per read or write batch, with a relaxed load and store
//!   (no locked instruction). Readers load them relaxed and add them up.
//! * A session that ends folds its counts into the socket's retired totals (under the same
//!   lock a reader takes to add up the live ones), so totals never go backwards.
//! * Queue depths are read off the pipes: outbound from this end's own count and the count the
//!   peer publishes as it reads (in batches, so up to a quarter of the HWM stale); inbound
//!   from the count a session publishes after each read batch (inproc peers publish none).

use super::Socket;
use bytes::Bytes;

/// A snapshot of a socket's counters (all since the socket was created).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SocketStats {
    /// Messages received by the application (whole messages, not frames).
    pub msgs_in: u64,
    /// Bytes received by the application (every frame's body; a ROUTER's routing-id frame
    /// included, as the application receives it).
    pub bytes_in: u64,
    /// Messages the application sent (accepted by `send`, including those then dropped).
    pub msgs_out: u64,
    /// Bytes the application sent (every frame's body).
    pub bytes_out: u64,
    /// Message copies dropped because a peer's queue was at its high-water mark (PUB, XPUB,
    /// ROUTER without ROUTER_MANDATORY). PUB counts one per subscriber that misses a message.
    pub dropped_hwm: u64,
    /// Messages a ROUTER dropped because no peer has the routing id (without MANDATORY).
    pub dropped_no_route: u64,
    /// Frames refused for exceeding MAXMSGSIZE (each one drops the connection that sent it).
    pub dropped_oversized: u64,
    /// Messages from peers that the socket type cannot take and drops whole (a multi-part
    /// message to CLIENT/SERVER/SCATTER/GATHER/CHANNEL/PEER, a DISH message without a group).
    pub dropped_malformed: u64,
    /// Messages a udp engine took from the socket and could not send: a RADIO message over
    /// the datagram size (libzmq asserts), a DGRAM destination of the other IP family than
    /// the bound socket's, a datagram the system refused (an unreachable destination, and
    /// the like). Datagrams lost after they left are udp's and not counted.
    pub dropped_unsendable: u64,
    /// Peers connected now: tcp/ipc connections past their handshake, plus inproc peers.
    pub peers: u64,
    /// tcp/ipc connections completed (handshake done), ever.
    pub connections: u64,
    /// Of those, connections re-established by a connecting socket after losing its peer.
    pub reconnects: u64,
    /// tcp/ipc connections that failed or timed out in the ZMTP handshake.
    pub handshake_failures: u64,
    /// tcp/ipc connections dropped after the handshake for breaking the protocol: a frame
    /// with reserved flags or over MAXMSGSIZE (also in `dropped_oversized`), a CURVE MESSAGE
    /// that does not open (tampered, replayed or out of order), a malformed command, a
    /// message of too many frames.
    pub protocol_errors: u64,
    /// Bytes read from tcp/ipc connections (ZMTP framing included).
    pub wire_bytes_in: u64,
    /// Bytes written to tcp/ipc connections (ZMTP framing included).
    pub wire_bytes_out: u64,
    /// Reads of tcp/ipc input made by a receiving application thread itself, while it waited
    /// in `recv`, rather than by an I/O thread (the direct receive path, `socket/direct.rs`).
    pub direct_reads: u64,
    /// Times a receiving application thread resumed a tcp/ipc connection's input itself,
    /// after reading its inbound queue down from the HWM where the connection had stopped,
    /// instead of waking the I/O thread to do it (`Session::direct_resume`).
    pub direct_resumes: u64,
    /// Receive waits that found their connection's input still lent from the previous wait,
    /// a quick exchange's, and took it over without a system call (`io/session/lease.rs`).
    pub lent_waits: u64,
    /// Lent inputs the I/O thread took back because no wait came for them within the lease
    /// (about a millisecond): the receiver stopped receiving, or slowed down.
    pub lease_lapses: u64,
    /// Blocking receives whose input arrived while they were still polling, before they slept
    /// (the receive spin, [`crate::opt::OXMQ_RECV_SPIN`]).
    pub spun_waits: u64,
    /// Write system calls to tcp/ipc connections that carried bytes. Against `msgs_out` (times
    /// the subscribers or peers each message went to) it tells how well writes are batched.
    pub wire_writes: u64,
    /// Of those, writes made by a sending application thread itself (the direct send path,
    /// taken for a sporadic message or a reply) rather than by an I/O thread.
    pub direct_writes: u64,
    /// Messages queued towards a peer that went away for good before taking them (an
    /// accepted connection that ended, an inproc peer that closed, a connect that gave up
    /// under RECONNECT_STOP), dropped with its queue. A connecting socket's queue outlives
    /// its connection and is not dropped when it reconnects.
    pub dropped_disconnected: u64,
    /// Messages still queued to or from an address that left a followed name
    /// (`opt::OXMQ_DNS_FOLLOW`) when its drain period ended.
    pub dropped_vanished: u64,
    /// Times a send found a peer's queue at its high-water mark: PUB, XPUB, RADIO and ROUTER
    /// then drop the message (also in `dropped_hwm`); PUSH, DEALER and REQ pass the peer over
    /// until it has room (the send waits, or fails with EAGAIN, when every peer is full).
    pub hwm_reached: u64,
}

/// One attached peer (pipe) and its queues, as [`Socket::peer_stats`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PeerStats {
    /// The endpoint the peer came through when known (`connect`ed endpoints, inproc).
    pub endpoint: Option<String>,
    /// The peer's routing id, once known (empty: the peer announced none).
    pub routing_id: Option<Bytes>,
    /// Messages queued towards the peer that it has not taken yet.
    pub queued_out: u64,
    /// Messages from the peer waiting to be received (None: inproc, which does not publish).
    pub queued_in: Option<u64>,
}

/// The application thread's counters: plain fields, `Socket` is `&mut`.
#[derive(Default)]
pub(crate) struct AppCounters {
    msgs_in: u64,
    bytes_in: u64,
    msgs_out: u64,
    bytes_out: u64,
    pub(crate) spun_waits: u64,
    /// See `SocketStats::dropped_disconnected`.
    pub(crate) dropped_disconnected: u64,
}

impl AppCounters {
    #[inline(always)]
    pub(crate) fn sent(&mut self, len: usize, more: bool) {
        self.bytes_out += len as u64;
        self.msgs_out += u64::from(!more);
    }

    #[inline(always)]
    pub(crate) fn unsent(&mut self, len: usize, more: bool) {
        // `send_msg` leaves a refused frame untouched, so this undoes exactly what `sent` did.
        self.bytes_out = self.bytes_out.saturating_sub(len as u64);
        self.msgs_out = self.msgs_out.saturating_sub(u64::from(!more));
    }

    #[inline(always)]
    pub(crate) fn received(&mut self, len: usize, more: bool) {
        self.bytes_in += len as u64;
        self.msgs_in += u64::from(!more);
    }
}

/// Drops a pattern counted, by reason.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Drops {
    pub hwm: u64,
    pub no_route: u64,
    /// Messages a peer sent that the socket type cannot take (multi-part to a single-part
    /// type, a DISH message without a group).
    pub malformed: u64,
    /// Times a send found a peer's queue at its HWM (dropped or set aside until it has room).
    pub hwm_reached: u64,
}

/// Adds the I/O side's counts of a socket's sessions, live and ended, to `s`.
pub(crate) fn add_io(s: &mut SocketStats, io: &crate::io::counters::IoStats) {
    let io = io.totals();
    s.wire_bytes_in += io.wire_in;
    s.wire_bytes_out += io.wire_out;
    s.connections += io.connections;
    s.reconnects += io.reconnects;
    s.handshake_failures += io.handshake_failures;
    s.protocol_errors += io.protocol_errors;
    s.dropped_oversized += io.oversized;
    s.dropped_unsendable += io.unsendable;
    s.direct_reads += io.direct_reads;
    s.direct_resumes += io.direct_resumes;
    s.lent_waits += io.lent_waits;
    s.lease_lapses += io.lease_lapses;
    s.wire_writes += io.wire_writes;
    s.direct_writes += io.direct_writes;
    s.peers += io.peers;
}

impl Socket {
    /// The socket's counters now. Cheap enough to call often: it adds up one small record
    /// per tcp/ipc connection.
    pub fn stats(&mut self) -> SocketStats {
        self.process_commands();
        let mut s = self.app_stats();
        add_io(&mut s, &self.shared.io_stats);
        self.level_hook();
        s
    }

    /// The counts the application thread keeps (the I/O side's fields left zero).
    fn app_stats(&self) -> SocketStats {
        let c = &self.counters;
        let drops = self.pattern.drops();
        let mut s = SocketStats {
            msgs_in: c.msgs_in,
            bytes_in: c.bytes_in,
            msgs_out: c.msgs_out,
            bytes_out: c.bytes_out,
            dropped_hwm: drops.hwm,
            dropped_no_route: drops.no_route,
            dropped_malformed: drops.malformed,
            dropped_disconnected: c.dropped_disconnected,
            dropped_vanished: self.follow.vanished,
            hwm_reached: drops.hwm_reached,
            spun_waits: c.spun_waits,
            ..Default::default()
        };
        s.peers = self
            .pipes
            .slots
            .iter()
            .flatten()
            .filter(|sl| sl.endpoint.as_deref().is_some_and(|e| e.starts_with("inproc://")) && !sl.end.peer_closed())
            .count() as u64;
        s
    }

    /// What the metrics exporter asked for (`Command::Snapshot`): the application side's
    /// counts and the pipes' queues, by the endpoint each pipe came through.
    pub(crate) fn metrics_snapshot(&mut self) -> super::metrics::Snapshot {
        use super::metrics::PipeGauge;
        let mut pipes: Vec<PipeGauge> = Vec::new();
        let vias = self.follow.vias();
        for sl in self.pipes.slots.iter_mut().flatten() {
            let via = match (sl.listener, &sl.endpoint) {
                (Some(l), _) => self.endpoints.iter().find_map(|e| match e {
                    super::EndpointRec::Listener { given, id, .. } if *id == l => Some(given.clone()),
                    _ => None,
                }),
                (None, Some(ep)) => Some(vias.get(ep).cloned().unwrap_or_else(|| ep.clone())),
                (None, None) => None,
            }
            .unwrap_or_default();
            let out = sl.end.queued_out();
            let inn = sl.end.queued_in();
            let hwm = sl.end.hwm();
            let g = match pipes.iter_mut().position(|p| p.via == via) {
                Some(i) => &mut pipes[i],
                None => {
                    pipes.push(PipeGauge { via, ..Default::default() });
                    pipes.last_mut().expect("just pushed")
                }
            };
            g.pipes += 1;
            g.queued_out += out;
            g.queued_in += inn;
            g.max_out = g.max_out.max(out);
            g.max_in = g.max_in.max(inn);
            g.full += u64::from(hwm != 0 && out >= hwm);
        }
        super::metrics::Snapshot { app: self.app_stats(), pipes, fanout: self.pattern.fanout(), dns: self.follow.groups() }
    }

    /// The counters a closing socket leaves to its labels' totals.
    pub(crate) fn metrics_totals(&mut self) -> super::metrics::Totals {
        let mut stats = self.app_stats();
        add_io(&mut stats, &self.shared.io_stats);
        super::metrics::Totals { stats, dns: self.follow.groups() }
    }

    /// Every attached peer with its queue depths.
    pub fn peer_stats(&mut self) -> Vec<PeerStats> {
        self.process_commands();
        self.level_hook();
        self.pipes
            .slots
            .iter()
            .flatten()
            .map(|sl| {
                let inproc = sl.endpoint.as_deref().is_some_and(|e| e.starts_with("inproc://"));
                PeerStats {
                    endpoint: sl.endpoint.clone(),
                    routing_id: sl.peer_id.clone(),
                    queued_out: sl.end.queued_out(),
                    queued_in: if inproc { None } else { Some(sl.end.queued_in()) },
                }
            })
            .collect()
    }
}
