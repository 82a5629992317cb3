//! The raw link of a STREAM socket: a session in raw mode skips ZMTP entirely.
//!
//! The link is up as soon as the stream is connected (no greeting, no handshake timer). Each
//! read becomes one single-frame message in the pipe, whatever bytes it returned; each message
//! from the pipe is written as it is. With STREAM_NOTIFY, the session marks the connection's
//! start and (for a close by the peer or an error) its end with an empty message, which the
//! STREAM pattern hands out as `[routing id, empty frame]`: a read never yields zero bytes, so
//! an empty message cannot be data. No heartbeats: there is no protocol to carry them.

use super::buffers::TxBuf;
use super::conn::Conn;
use super::read::ZERO_COPY_MIN;
use super::write::{BIG_BATCH, MAX_BIGS, WRITE_BATCH};
use super::{Link, Lost};
use crate::msg::{Msg, INLINE_CAP};
use crate::pipe::{PipeEnd, Read};

impl Conn {
    /// The stream is connected: hand the socket its pipe, named by CONNECT_ROUTING_ID on the
    /// connecting side when one was given (otherwise the socket generates a name).
    pub(super) fn raw_begin(&mut self, link: &mut Link) {
        // Peer-Address (and the descriptor, for SRCFD) on the routing-id frame, as for ZMTP.
        let mut props = crate::properties::Properties::default();
        if !self.peer_address.is_empty() {
            props.insert(crate::properties::PEER_ADDRESS, self.peer_address.as_bytes());
        }
        props.set_src_fd(self.stream.fd());
        let id = match (&link.dialer, &link.cfg.link.connect_routing_id) {
            (Some(_), Some(id)) => id.clone(),
            _ => bytes::Bytes::new(),
        };
        link.attach_peer(id, Some(std::sync::Arc::new(props)), crate::io::monitor::stream_addrs(&self.stream));
        if link.cfg.link.stream_notify {
            raw_notify(link);
        }
    }

    /// The connection ended other than by our own close: tell the application.
    pub(super) fn raw_lost(&mut self, link: &mut Link) {
        if link.cfg.policy.raw && !link.closing && link.cfg.link.stream_notify {
            raw_notify(link);
        }
    }

    /// Moves what was read into the pipe as one message (held if the pipe is full).
    #[inline(never)]
    pub(super) fn raw_decode(&mut self, link: &mut Link) -> Result<(), Lost> {
        let Some(p) = &mut link.pipe else { return Err(Lost) };
        if !self.held.is_empty() || self.rx.buf.is_empty() {
            return Ok(());
        }
        let msg = if self.rx.buf.len() <= INLINE_CAP {
            let m = Msg::copy_from(&self.rx.buf);
            self.rx.buf.clear();
            m
        } else {
            Msg::from_bytes(self.rx.buf.split().freeze())
        };
        if p.check_write() {
            p.write(msg);
        } else {
            self.held.push(msg);
        }
        Ok(())
    }
}

/// An empty message: connect or disconnect. It bypasses the HWM (losing one would leave the
/// application with a peer it never heard of, or one it thinks is still there).
fn raw_notify(link: &mut Link) {
    if let Some(p) = &mut link.pipe {
        p.write(Msg::new());
        p.flush();
    }
}

/// Takes messages from the pipe into the write batch as plain bytes (large bodies are written
/// from their own memory, as for ZMTP frames). Kept out of `write_side`, whose loop is the
/// ZMTP hot path.
#[inline(never)]
pub(super) fn fill(tx: &mut TxBuf, p: &mut PipeEnd, drained: &mut bool) {
    while tx.bigs.len() < MAX_BIGS && tx.buf.len() - tx.pos < WRITE_BATCH && tx.big_bytes < BIG_BATCH {
        match p.read() {
            Read::Msg(m) => {
                if m.is_routing_id() || m.is_empty() {
                    continue;
                }
                if m.len() >= ZERO_COPY_MIN {
                    tx.big_bytes += m.len();
                    tx.bigs.push_back((tx.buf.len(), m));
                } else {
                    tx.buf.extend_from_slice(&m);
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

#[cfg(test)]
mod tests;
