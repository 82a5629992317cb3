//! The engine's side of ZAP (RFC 27): a server session whose handshake paused for a verdict
//! sends the request to the handler bound at `inproc://zeromq.zap.01` in the same context and
//! collects the reply, without ever blocking the I/O thread.
//!
//! The session joins an inproc pipe to the handler socket (a REP or a ROUTER, as libzmq
//! accepts) as an anonymous peer, writes the request frames (the empty delimiter first, so a
//! REP handler sees an ordinary request), and is woken through the I/O thread's command queue
//! when the reply is flushed. The reply's frames go back to the sans-IO handshake, which
//! judges them (`zmtp::Handshake::handle_zap_reply`). A handler that closes before answering
//! gives no verdict: the handshake stays paused until HANDSHAKE_IVL or the peer leaves (fail
//! closed; failing at once would let the client reconnect to a server with no handler).

use super::config::HandshakeOptions;
use super::{IoCmd, IoThread};
use crate::msg::Msg;
use crate::pipe::{Owner, PipeEnd, PipeId, Read, Wake};
use bytes::Bytes;
use std::sync::Arc;
/// Reply frames kept: one more than a valid reply has, so an overlong reply is still seen
/// as one (and judged malformed) without holding whatever else a broken handler sends.
const MAX_REPLY_FRAMES: usize = 8;

/// What polling the handler found.
pub(super) enum Poll {
    /// No complete reply yet; the session is woken when one is flushed.
    Pending,
    /// The reply's frames (delimiter included).
    Reply(Vec<Bytes>),
    /// The handler went away without answering.
    Gone,
}

/// One outstanding ZAP request.
pub(super) struct ZapClient {
    pipe: PipeEnd,
    frames: Vec<Bytes>,
}

impl ZapClient {
    /// Connects to the handler and sends `request`, with `tls_subject` as NULL's credentials
    /// (see [`request_frames`]); `None` if no handler is bound (any more). Wake-ups for the
    /// reply arrive as a read activation of the session `id`.
    pub(super) fn ask(
        h: &HandshakeOptions,
        request: &zmtp::ZapRequest,
        tls_subject: Option<String>,
        io: &Arc<IoThread>,
        id: PipeId,
    ) -> Option<ZapClient> {
        let mut pipe = h.zap.as_ref()?.connect()?;
        pipe.set_owner(Arc::new(Waker { io: io.clone() }), id);
        let frames = request_frames(request, tls_subject);
        let last = frames.len() - 1;
        for (i, f) in frames.into_iter().enumerate() {
            let mut m = Msg::from_bytes(f);
            m.set_more(i < last);
            pipe.write(m);
        }
        pipe.flush();
        Some(ZapClient { pipe, frames: Vec::new() })
    }

    /// Collects the reply as far as it has arrived.
    pub(super) fn poll(&mut self) -> Poll {
        loop {
            match self.pipe.read() {
                Read::Msg(m) if m.is_routing_id() => {} // the handler's id opens the pipe
                Read::Msg(m) => {
                    let more = m.more();
                    if self.frames.len() < MAX_REPLY_FRAMES {
                        self.frames.push(m.into_bytes());
                    }
                    if !more {
                        return Poll::Reply(std::mem::take(&mut self.frames));
                    }
                }
                Read::Empty => return Poll::Pending,
                Read::Closed => return Poll::Gone,
            }
        }
    }
}

/// The frames of `request` as the handler receives them. A NULL request over a TLS connection
/// whose peer presented a verified certificate (tls://, wss:// with mutual TLS) carries one
/// credentials frame: that certificate's subject as RFC 4514 text (the `TLS-Peer-Subject`
/// property's value), so a handler can allow or deny by certificate. RFC 27 leaves
/// credentials to the mechanism and NULL has none of its own; PLAIN and CURVE requests keep
/// exactly their mechanism's frames (handlers count them), and their handlers see the subject
/// only as the property.
fn request_frames(request: &zmtp::ZapRequest, tls_subject: Option<String>) -> Vec<Bytes> {
    let mut frames = request.frames();
    if let Some(s) = tls_subject.filter(|_| request.mechanism == b"NULL" && request.credentials.is_empty()) {
        frames.push(Bytes::from(s.into_bytes()));
    }
    frames
}

/// Turns every wake-up of the ZAP pipe (a reply, or the handler closing) into a read
/// activation of the session, which then polls the pipe. Not the session's own owner: a
/// `Closed` wake-up there would mean the session's socket closed.
struct Waker {
    io: Arc<IoThread>,
}

impl Owner for Waker {
    fn wake(&self, id: PipeId, _what: Wake) {
        self.io.send(IoCmd::Pipe(id, Wake::Read));
    }
}

/// Input a paused handshake may buffer: a well-behaved peer sends nothing while it waits for
/// our verdict (NULL at most its READY), so more than this is a peer flooding us.
const MAX_PAUSED_INPUT: usize = 64 * 1024;

/// The ZAP part of the handshake in `ZapConfig` form: the handler check costs a registry look
/// only for connections that could ask (servers, and NULL with a domain).
pub(super) fn config(h: &HandshakeOptions, peer_address: &str) -> zmtp::ZapConfig {
    let mechanism = &h.mechanism;
    let may_ask = mechanism.is_server() || (mechanism.number() == 0 && !h.zap_domain.is_empty());
    zmtp::ZapConfig {
        handler: may_ask && h.zap.as_ref().is_some_and(|z| z.bound()),
        domain: h.zap_domain.clone(),
        enforce_domain: h.zap_enforce_domain,
        peer_address: Bytes::copy_from_slice(peer_address.as_bytes()),
    }
}

/// Moves a paused handshake along: sends its request once, and feeds it the reply once one
/// has arrived. Returns true when the handshake resumed (the caller feeds it input again).
pub(super) fn step(
    conn: &mut zmtp::Connection,
    client: &mut Option<ZapClient>,
    buffered: usize,
    stream: &crate::transport::stream::Stream,
    h: &HandshakeOptions,
    io: &Arc<IoThread>,
    id: PipeId,
) -> Result<bool, zmtp::Error> {
    let Some(request) = conn.zap_request() else { return Ok(false) };
    if buffered > MAX_PAUSED_INPUT {
        return Err(zmtp::HandshakeError::UnexpectedMessage.into());
    }
    if client.is_none() {
        match ZapClient::ask(h, request, stream.peer_subject(), io, id) {
            Some(c) => *client = Some(c),
            // The handler was unbound since the connection started.
            None => return Err(conn.zap_unavailable()),
        }
    }
    let Some(c) = client else { return Ok(false) };
    match c.poll() {
        Poll::Pending => Ok(false),
        Poll::Reply(frames) => {
            *client = None;
            conn.handle_zap_reply(&frames).map(|()| true)
        }
        // No verdict is a refusal that never comes: the handshake stays paused (the client
        // kept on this connection, so it cannot reconnect into a server that has no handler
        // any more) until HANDSHAKE_IVL or the peer leaves, as in libzmq. `client` stays
        // set, so the request is not sent again.
        Poll::Gone => Ok(false),
    }
}

/// The peer's address for ZAP and the Peer-Address property (libzmq: the IP, no port).
pub(super) fn peer_address(stream: &crate::transport::stream::Stream) -> String {
    stream.peer_address()
}
