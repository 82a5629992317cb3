//! The raw link of a STREAM socket: a session in raw mode skips ZMTP entirely.
//!
//! The link is up as soon as the stream is connected (no greeting, no handshake timer). Each
//! read becomes one single-frame message in the pipe, whatever bytes it returned; each message
//! from the pipe is written as it is. With STREAM_NOTIFY, the session marks the connection's
//! start and (for a close by the peer or an error) its end with an empty message, which the
//! STREAM pattern hands out as `[routing id, empty frame]`: a read never yields zero bytes, so
//! an empty message cannot be data. No heartbeats: there is no protocol to carry them.

use super::{Conn, Lost, Session, State, INLINE_CAP, MAX_BIGS, WRITE_BATCH, BIG_BATCH, ZERO_COPY_MIN};
use crate::msg::Msg;
use crate::pipe::{PipeEnd, Read};
use crate::socket::SocketType;

impl Session {
    /// The stream is connected: hand the socket its pipe, named by CONNECT_ROUTING_ID on the
    /// connecting side when one was given (otherwise the socket generates a name).
    pub(super) fn raw_begin(&mut self) {
        let State::Connected(c) = &mut self.state else { return };
        c.handshake = None;
        c.tx.clear();
        // Peer-Address (and the descriptor, for SRCFD) on the routing-id frame, as for ZMTP.
        let mut props = crate::properties::Properties::default();
        if !c.peer_address.is_empty() {
            props.insert(crate::properties::PEER_ADDRESS, c.peer_address.as_bytes());
        }
        props.set_src_fd(c.stream.fd());
        let id = match (&self.target, &self.options.link.connect_routing_id) {
            (Some(_), Some(id)) => id.clone(),
            _ => bytes::Bytes::new(),
        };
        self.attach_peer(id, Some(std::sync::Arc::new(props)));
        if self.options.link.stream_notify {
            self.raw_notify();
        }
    }

    /// The connection ended other than by our own close: tell the application.
    pub(super) fn raw_lost(&mut self) {
        if self.socket.kind != SocketType::Stream || self.closing || !self.options.link.stream_notify {
            return;
        }
        if matches!(&self.state, State::Connected(c) if c.handshake.is_none()) {
            self.raw_notify();
        }
    }

    /// An empty message: connect or disconnect. It bypasses the HWM (losing one would leave the
    /// application with a peer it never heard of, or one it thinks is still there).
    fn raw_notify(&mut self) {
        if let Some(p) = &mut self.pipe {
            p.write(Msg::new());
            p.flush();
        }
    }

    /// Moves what was read into the pipe as one message (held if the pipe is full).
    #[inline(never)]
    pub(super) fn raw_decode(&mut self) -> Result<(), Lost> {
        let State::Connected(c) = &mut self.state else { return Ok(()) };
        let Some(p) = &mut self.pipe else { return Err(Lost) };
        if !c.held.is_empty() || c.rx.is_empty() {
            return Ok(());
        }
        let msg = if c.rx.len() <= INLINE_CAP {
            let m = Msg::copy_from(&c.rx);
            c.rx.clear();
            m
        } else {
            Msg::from_bytes(c.rx.split().freeze())
        };
        if p.check_write() {
            p.write(msg);
        } else {
            c.held.push(msg);
        }
        Ok(())
    }
}

/// Takes messages from the pipe into the write batch as plain bytes (large bodies are written
/// from their own memory, as for ZMTP frames). Kept out of `write_side`, whose loop is the
/// ZMTP hot path.
#[inline(never)]
pub(super) fn fill(c: &mut Conn, p: &mut PipeEnd, drained: &mut bool) {
    while c.bigs.len() < MAX_BIGS && c.tx.len() - c.tx_pos < WRITE_BATCH && c.big_bytes < BIG_BATCH {
        match p.read() {
            Read::Msg(m) => {
                if m.is_routing_id() || m.is_empty() {
                    continue;
                }
                if m.len() >= ZERO_COPY_MIN {
                    c.big_bytes += m.len();
                    c.bigs.push_back((c.tx.len(), m));
                } else {
                    c.tx.extend_from_slice(&m);
                }
            }
            Read::Empty => break,
            Read::Closed => {
                *drained = true;
                break;
            }
        }
    }
}
