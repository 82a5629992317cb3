//! The messages a connection opens and closes with (libzmq 4.3's drafts HELLO_MSG and
//! DISCONNECT_MSG), on tcp and ipc; `transport/inproc.rs` does the same for inproc pipes.
//!
//! * HELLO_MSG: a socket of a type that sends one (`LinkPolicy::hello`) sends it to the peer
//!   as the first message of every connection, made or accepted, each reconnection included:
//!   it is encoded when the handshake completes, after the handshake's last bytes and before
//!   anything the pipe holds (libzmq's `hello_msg_session_t` pulls it first the same way).
//! * DISCONNECT_MSG: a socket of a type that takes one (`LinkPolicy::farewell`)
//!   receives it from the pipe of an accepted connection that ends after its handshake (the
//!   peer hung up, a heartbeat timed out, a protocol error), after everything the peer sent.
//!   The pipe yields it once its session end is gone (`PipeEnd::set_farewell`), so the
//!   session has nothing to write when the connection ends, and the socket sees it exactly
//!   when it sees the pipe close. A connection the socket drops itself (`unbind`, close, a
//!   ROUTER refusing a duplicate routing id) reads nothing more, so it yields none; neither
//!   does a connection the socket made (libzmq: only accepted ones).

use super::conn::{Conn, Proto};
use super::Link;
use crate::msg::Msg;

impl Conn {
    /// HELLO_MSG, queued first on a connection whose handshake has just completed.
    pub(super) fn send_hello(&mut self, link: &Link) {
        let Some(hello) = &link.cfg.policy.hello else { return };
        if let Proto::Zmtp(z) = &mut self.proto {
            if let Some(d) = z.data_mut() {
                d.encode_frame(&mut self.tx.buf, false, hello);
            }
        }
    }
}

impl Link {
    /// DISCONNECT_MSG as the farewell of the socket's end of an accepted connection's pipe;
    /// None on the connect side or when the socket takes none.
    pub(super) fn farewell(&self) -> Option<Msg> {
        if self.dialer.is_some() {
            return None;
        }
        self.cfg.policy.farewell.as_ref().map(|m| Msg::from(m.clone()))
    }
}

#[cfg(test)]
mod tests;
