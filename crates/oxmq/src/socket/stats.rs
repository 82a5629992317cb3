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
    /// Blocking receives whose input arrived while they were still polling, before they slept
    /// (the receive spin, [`crate::opt::OXMQ_RECV_SPIN`]).
    pub spun_waits: u64,
    /// Write system calls to tcp/ipc connections that carried bytes. Against `msgs_out` (times
    /// the subscribers or peers each message went to) it tells how well writes are batched.
    pub wire_writes: u64,
    /// Of those, writes made by a sending application thread itself (the direct send path,
    /// taken for a sporadic message or a reply) rather than by an I/O thread.
    pub direct_writes: u64,
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
}

impl Socket {
    /// The socket's counters now. Cheap enough to call often: it adds up one small record
    /// per tcp/ipc connection.
    pub fn stats(&mut self) -> SocketStats {
        self.process_commands();
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
        let io = self.shared.io_stats.totals();
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
        s.wire_writes += io.wire_writes;
        s.direct_writes += io.direct_writes;
        s.peers += io.peers;
        self.level_hook();
        s
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
