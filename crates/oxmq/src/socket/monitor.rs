//! A socket's monitor socket: the internal socket (PAIR unless asked otherwise) that binds the
//! inproc endpoint the application gave to `zmq_socket_monitor` and sends the events
//! `io/monitor.rs` encodes.

use super::env::Env;
use super::{Socket, SocketType};
use crate::error::{Error, Result};
use crate::io::monitor::{EventSink, Monitor};
use crate::msg::Msg;
use crate::opt;
use crate::transport::endpoint::Endpoint;
use std::sync::Arc;

/// Starts monitoring into a new socket bound at `endpoint`, replacing (and stopping) any
/// monitor already set; `None` (or an empty endpoint) only stops.
pub(super) fn start(
    monitor: &Monitor,
    env: &Arc<Env>,
    endpoint: Option<&str>,
    events: u64,
    version: u8,
    kind: SocketType,
) -> Result<()> {
    let endpoint = endpoint.filter(|e| !e.is_empty());
    match version {
        1 if events >> 16 != 0 => return Err(Error::Invalid),
        1..=3 => {}
        _ => return Err(Error::Invalid),
    }
    let Some(ep) = endpoint else {
        monitor.stop();
        return Ok(());
    };
    // Validate before stopping the old monitor, as libzmq does.
    if !matches!(Endpoint::parse(ep, true)?, Endpoint::Inproc(_)) {
        return Err(Error::ProtoNoSupport);
    }
    if !matches!(kind, SocketType::Pair | SocketType::Pub | SocketType::Push) {
        return Err(Error::Invalid);
    }
    monitor.stop();
    let mut s = Socket::new(env.clone(), kind)?;
    // Never hold up context termination for unread events.
    s.set_int(opt::LINGER, 0)?;
    s.bind(ep)?;
    monitor.install(Box::new(s), version, events);
    Ok(())
}

impl EventSink for Socket {
    /// Sends one event without waiting: a reader that is absent or a whole HWM behind loses
    /// it, one with room never does (`try_send_msg` reads its progress afresh).
    fn post(&mut self, frames: Vec<Msg>) {
        let n = frames.len();
        for (i, mut f) in frames.into_iter().enumerate() {
            let flags = if i + 1 < n { opt::SNDMORE } else { 0 };
            if self.try_send_msg(&mut f, flags).is_err() {
                return;
            }
        }
    }
}
