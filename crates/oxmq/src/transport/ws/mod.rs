//! `ws://` and `wss://`: ZMTP over WebSocket as ZWS 2.0 (RFC 45) specifies it, as a
//! [`ByteStream`] layer over a tcp (or, for wss, a TLS) stream.
//!
//! The layer runs the HTTP upgrade (`http.rs`), then translates in both directions (`zws.rs`):
//! the engine above speaks ZMTP 3.0 and never learns it runs over a WebSocket. Frames follow
//! RFC 6455 (`frame.rs`): a server reads only masked frames and sends unmasked ones, a client
//! the reverse; pings are answered with pongs, a close frame with a close frame and the end of
//! the stream. Heartbeats (HEARTBEAT_IVL, HEARTBEAT_TIMEOUT) are ping frames, as libzmq's ws
//! engine sends them (it ignores ZMTP's PING commands over ws): the session asks for them
//! ([`ByteStream::ping`]) and counts every ping and pong read as input. A peer that breaks the protocol (a malformed or oversized upgrade, a frame on
//! the wrong side of masking, a fragmented control frame, text, a fragmented message over
//! MAXMSGSIZE) is refused with EPROTO, which
//! the session reports as a handshake failure (`HANDSHAKE_FAILED_PROTOCOL`, libzmq's
//! `ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED`) or, once past the handshake, counts as a protocol error.

pub(crate) mod frame;
pub(crate) mod http;
pub(crate) mod zws;

use super::stream::{ByteStream, LayerFailure, Stream};
use super::StreamOptions;
use bytes::BytesMut;
use http::Zws;
use std::io::{self, IoSlice};
use std::os::fd::RawFd;
use std::sync::Arc;
use zws::{Inbound, Outbound, Step};

/// Bytes kept for the wire before a write says it would block.
const OUT_HIGH: usize = 256 * 1024;
/// Bytes read from the wire at a time.
const READ_CHUNK: usize = 64 * 1024;

/// What every connection of one ws endpoint shares.
#[derive(Debug)]
pub(crate) struct WsConfig {
    /// The resource path (a client asks for it; a server serves only it, or every path for `/`).
    pub path: String,
    /// `host:port` for the client's Host header.
    pub authority: String,
    /// The ZWS protocol of the socket's mechanism (`Null` offers plain `ZWS2.0` too).
    pub zws: Zws,
    /// The ZMTP mechanism name, and whether this socket is its server (PLAIN_SERVER, CURVE_SERVER).
    pub mechanism: &'static [u8],
    pub as_server: bool,
    /// Our socket type's ZMTP name: plain ZWS2.0 answers the peer's first message with a READY
    /// naming the type ours pairs with, which may arrive before the engine's own READY.
    pub socket_type: &'static [u8],
    /// The socket's MAXMSGSIZE, which bounds a fragmented message while it is reassembled.
    pub max_message: Option<u64>,
}

impl WsConfig {
    pub(crate) fn new(
        path: &str,
        authority: &str,
        m: &zmtp::Mechanism,
        socket_type: &'static [u8],
        max_message: Option<u64>,
    ) -> WsConfig {
        use zmtp::Mechanism as M;
        let (zws, mechanism, as_server) = match m {
            M::Null => (Zws::Null, &b"NULL"[..], false),
            M::PlainClient(_) => (Zws::Plain, &b"PLAIN"[..], false),
            M::PlainServer => (Zws::Plain, &b"PLAIN"[..], true),
            M::CurveClient(_) => (Zws::Curve, &b"CURVE"[..], false),
            M::CurveServer(_) => (Zws::Curve, &b"CURVE"[..], true),
        };
        WsConfig { path: path.to_string(), authority: authority.to_string(), zws, mechanism, as_server, socket_type, max_message }
    }
}

/// A WebSocket connection carrying ZWS 2.0.
pub(crate) struct WsLayer {
    inner: Stream,
    scheme: &'static str,
    client: bool,
    cfg: Arc<WsConfig>,
    /// The upgrade is complete.
    open: bool,
    /// The client's Sec-WebSocket-Key.
    key: String,
    wire_in: BytesMut,
    wire_out: Vec<u8>,
    out_pos: usize,
    /// Bytes for the engine ahead of what is translated (the greeting, ZMTP headers).
    inject: Vec<u8>,
    inject_pos: usize,
    outb: Outbound,
    inb: Inbound,
    close_sent: bool,
    peer_closed: bool,
    /// The peer broke the protocol.
    failed: bool,
    /// The last read underneath was short (it took all there was).
    inner_short: bool,
}

fn eproto() -> io::Error {
    io::Error::from_raw_os_error(libc::EPROTO)
}

impl WsLayer {
    /// A layer over `inner`, connected (`client`) or accepted; `scheme` names its addresses.
    pub(crate) fn new(inner: Stream, client: bool, cfg: Arc<WsConfig>, scheme: &'static str) -> WsLayer {
        let mut l = WsLayer {
            inner,
            scheme,
            client,
            open: false,
            key: String::new(),
            wire_in: BytesMut::new(),
            wire_out: Vec::new(),
            out_pos: 0,
            inject: Vec::new(),
            inject_pos: 0,
            outb: Outbound::new(client, false),
            inb: Inbound::new(!client, false, cfg.max_message),
            close_sent: false,
            peer_closed: false,
            failed: false,
            inner_short: false,
            cfg,
        };
        if client {
            let mut nonce = [0u8; 16];
            let mut m = frame::MaskSource::new();
            for c in nonce.chunks_mut(4) {
                c.copy_from_slice(&m.next());
            }
            let (req, key) = http::request(&l.cfg.path, &l.cfg.authority, l.cfg.zws, &nonce);
            l.wire_out = req;
            l.key = key;
        }
        l
    }

    /// Moves the upgrade on with what `wire_in` holds: true once it is complete.
    fn upgrade(&mut self) -> io::Result<bool> {
        let n = match http::head_len(&self.wire_in) {
            Ok(Some(n)) => n,
            Ok(None) => return Ok(false),
            Err(e) => return self.refuse(e),
        };
        let head = self.wire_in.split_to(n);
        let chosen = if self.client {
            http::confirm(&head, &self.key, self.cfg.zws)
        } else {
            http::accept(&head, &self.cfg.path, self.cfg.zws).map(|a| {
                self.wire_out.extend_from_slice(&a.response);
                a.protocol
            })
        };
        let protocol = match chosen {
            Ok(p) => p,
            Err(e) => return self.refuse(e),
        };
        let raw = protocol == Zws::Raw;
        self.outb.set_raw(raw);
        // Known now, so the peer's first message never waits on the engine's READY (which
        // would leave its READY undelivered until the descriptor next became readable).
        self.outb.our_type = Some(self.cfg.socket_type.to_vec());
        self.inb = Inbound::new(!self.client, raw, self.cfg.max_message);
        self.inject.extend_from_slice(&zws::greeting(self.cfg.mechanism, self.cfg.as_server));
        self.open = true;
        Ok(true)
    }

    /// Refuses the upgrade (a server answers with an HTTP error first).
    fn refuse(&mut self, e: http::UpgradeError) -> io::Result<bool> {
        if !self.client {
            self.wire_out.extend_from_slice(&http::refusal(&e));
            let _ = self.push();
        }
        self.failed = true;
        Err(eproto())
    }

    /// Gives the engine what is translated, as far as `buf`'s spare capacity allows.
    fn give(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let start = buf.len();
        loop {
            let room = buf.capacity() - buf.len();
            if room == 0 {
                break;
            }
            if self.inject_pos < self.inject.len() {
                let n = room.min(self.inject.len() - self.inject_pos);
                buf.extend_from_slice(&self.inject[self.inject_pos..self.inject_pos + n]);
                self.inject_pos += n;
                continue;
            }
            self.inject.clear();
            self.inject_pos = 0;
            if self.peer_closed {
                break;
            }
            match self.inb.step(&mut self.wire_in, buf, &mut self.inject, &mut self.wire_out, &mut self.outb) {
                Ok(Step::More) => {}
                Ok(Step::Wait) => break,
                Ok(Step::Closed) => {
                    self.peer_closed = true;
                    if !self.close_sent {
                        let m = self.outb.control_mask();
                        frame::control(&mut self.wire_out, frame::OP_CLOSE, &1000u16.to_be_bytes(), m);
                        self.close_sent = true;
                    }
                }
                Err(_) => {
                    self.failed = true;
                    return Err(eproto());
                }
            }
        }
        Ok(buf.len() - start)
    }

    /// Writes what is kept for the wire: true when nothing is left (the inner layer's own
    /// flush included).
    fn push(&mut self) -> io::Result<bool> {
        while self.out_pos < self.wire_out.len() {
            match self.inner.write_vectored(&[IoSlice::new(&self.wire_out[self.out_pos..])]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.out_pos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.out_pos == self.wire_out.len() {
            self.wire_out.clear();
            self.out_pos = 0;
        } else if self.out_pos > OUT_HIGH {
            self.wire_out.drain(..self.out_pos);
            self.out_pos = 0;
        }
        let inner_done = self.inner.flush()?;
        Ok(self.wire_out.is_empty() && inner_done)
    }
}

impl ByteStream for WsLayer {
    fn fd(&self) -> RawFd {
        self.inner.fd()
    }

    fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        if self.failed {
            return Err(eproto());
        }
        loop {
            if self.open || self.upgrade()? {
                let n = self.give(buf)?;
                if !self.wire_out.is_empty() {
                    self.push()?; // pongs, a close, the 101 response
                }
                if n > 0 {
                    return Ok(n);
                }
                if self.inject_pos < self.inject.len() {
                    continue;
                }
                if self.peer_closed {
                    return Ok(0);
                }
            }
            self.wire_in.reserve(READ_CHUNK);
            let room = self.wire_in.capacity() - self.wire_in.len();
            match self.inner.read_into(&mut self.wire_in) {
                Ok(0) => return Ok(0),
                Ok(n) => self.inner_short = n < room && self.inner.exact_reads(),
                Err(e) => {
                    if e.kind() == io::ErrorKind::WouldBlock && !self.wire_out.is_empty() {
                        self.push()?;
                    }
                    return Err(e);
                }
            }
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        if self.failed {
            return Err(eproto());
        }
        if self.close_sent {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        // Nothing goes out before the upgrade but a client's request.
        let may_send = self.open || self.client;
        let mut taken = 0;
        for b in bufs {
            // Room is made by writing what is kept before taking more: WouldBlock is said
            // only when the descriptor itself refused bytes, or no writable edge would come.
            if self.wire_out.len() - self.out_pos >= OUT_HIGH && may_send {
                self.push()?;
            }
            if self.wire_out.len() - self.out_pos >= OUT_HIGH {
                break;
            }
            self.outb.take(b, &mut self.wire_out);
            taken += b.len();
        }
        if may_send {
            self.push()?;
        }
        if taken == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<bool> {
        if !self.open && !self.client {
            return Ok(true);
        }
        self.push()
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        if self.open && !self.close_sent {
            let m = self.outb.control_mask();
            frame::control(&mut self.wire_out, frame::OP_CLOSE, &1000u16.to_be_bytes(), m);
            self.close_sent = true;
        }
        let _ = self.push();
        self.inner.shutdown_write()
    }

    fn unacknowledged(&self) -> Option<i32> {
        self.inner.unacknowledged()
    }

    fn addrs(&self) -> (String, String) {
        let (l, r) = self.inner.addrs();
        let re = |a: String| match a.split_once("://") {
            Some((_, rest)) => format!("{}://{rest}", self.scheme),
            None => a,
        };
        (re(l), re(r))
    }

    fn peer_address(&self) -> String {
        self.inner.peer_address()
    }

    fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.take_error()
    }

    fn configure(&self, o: &StreamOptions) {
        self.inner.configure(o)
    }

    fn failure(&self) -> Option<LayerFailure> {
        self.inner.layer_failure().or(self.failed.then_some(LayerFailure::WebSocket))
    }

    fn peer_subject(&self) -> Option<String> {
        self.inner.peer_subject()
    }

    fn pings(&self) -> bool {
        true
    }

    fn drained(&self) -> bool {
        // What was read is all translated (a frame may be half-read: its rest is the
        // descriptor's next input).
        self.inner_short && self.wire_in.is_empty() && self.inject_pos == self.inject.len()
    }

    fn ping(&mut self) {
        if self.open && !self.close_sent && !self.failed {
            self.outb.ping(&mut self.wire_out);
            let _ = self.push(); // an error shows in the next read or write
        }
    }

    fn keepalives_read(&self) -> u64 {
        // A new Inbound at the upgrade starts again from 0: before any heartbeat starts.
        self.inb.keepalives
    }
}
