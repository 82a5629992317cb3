//! The socket monitor (`zmq_socket_monitor`): connection events of a socket, as messages.
//!
//! [`Socket::monitor`](crate::Socket::monitor) makes an internal socket (PAIR unless asked
//! otherwise) that binds an inproc endpoint; the application connects its own socket there and
//! reads one multi-part message per event. Events are raised where they happen: the socket's
//! own thread (LISTENING, BIND_FAILED, CLOSED of a listener, MONITOR_STOPPED) and the I/O
//! thread (everything about a connection). They are sent with DONTWAIT under a short mutex that
//! is never held across a blocking call, so a slow or absent reader loses events (as in
//! libzmq) but never stalls an I/O thread. With no monitor set, raising an event costs one
//! relaxed atomic load, and no event is raised per message, so the data path pays nothing.
//!
//! Event numbers, values and the order of events follow libzmq 4.3 (`interop/tests/monitor.rs`
//! compares them with libzmq's for the same scenarios). Message formats:
//!
//! * version 1 (libzmq): frame 1 is 6 bytes, the event as `u16` and the value as `u32`, native
//!   endian; frame 2 is the endpoint: the local address for a bound socket, the remote one for
//!   a connecting socket.
//! * version 2 (libzmq 4.3 draft): the event as `u64`; the number of values as `u64`; each value
//!   as `u64` (one frame each); the local address; the remote address.
//! * version 3 (oxmq): version 2 followed by one more frame, the peer's routing id (empty when
//!   the peer sent none or the event is not about a handshaken peer). Like version 2 it carries
//!   both addresses, so a v1 reader is never given frames it does not expect.

use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::socket::Socket;

pub use crate::io::monitor::{event, protocol_error};

/// One event as a reader receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonitorEvent {
    /// The event (one of [`event`]).
    pub event: u64,
    /// Its value (descriptor, errno, interval, protocol error or ZAP status code); the first
    /// of `values`.
    pub value: u64,
    /// Every value (versions 2 and 3; PIPES_STATS carries two).
    pub values: Vec<u64>,
    /// Version 1: the one endpoint the message carries. Versions 2 and 3: the local address.
    pub local: String,
    /// The remote address (versions 2 and 3; empty in version 1).
    pub remote: String,
    /// The peer's routing id (version 3; empty otherwise).
    pub routing_id: Vec<u8>,
}

impl MonitorEvent {
    /// Decodes one event message of format `version` (1, 2 or 3).
    pub fn parse(frames: &[Msg], version: u8) -> Result<MonitorEvent> {
        let u64_of = |m: &Msg| -> Result<u64> {
            let a: [u8; 8] = m[..].try_into().map_err(|_| Error::Invalid)?;
            Ok(u64::from_ne_bytes(a))
        };
        let text = |m: &Msg| String::from_utf8_lossy(m).into_owned();
        match version {
            1 => {
                let [head, ep] = frames else { return Err(Error::Invalid) };
                if head.len() != 6 {
                    return Err(Error::Invalid);
                }
                let ev = u16::from_ne_bytes([head[0], head[1]]) as u64;
                let value = u32::from_ne_bytes([head[2], head[3], head[4], head[5]]) as u64;
                Ok(MonitorEvent {
                    event: ev,
                    value,
                    values: vec![value],
                    local: text(ep),
                    remote: String::new(),
                    routing_id: Vec::new(),
                })
            }
            2 | 3 => {
                let extra = (version == 3) as usize;
                if frames.len() < 4 + extra {
                    return Err(Error::Invalid);
                }
                let ev = u64_of(&frames[0])?;
                let n = u64_of(&frames[1])? as usize;
                if frames.len() != 4 + n + extra || n == 0 {
                    return Err(Error::Invalid);
                }
                let values = frames[2..2 + n].iter().map(u64_of).collect::<Result<Vec<u64>>>()?;
                Ok(MonitorEvent {
                    event: ev,
                    value: values[0],
                    values,
                    local: text(&frames[2 + n]),
                    remote: text(&frames[3 + n]),
                    routing_id: if extra == 1 { frames[4 + n].to_vec() } else { Vec::new() },
                })
            }
            _ => Err(Error::Invalid),
        }
    }

    /// Receives and decodes the next event from a socket connected to a monitor endpoint.
    pub fn recv(socket: &mut Socket, version: u8, flags: i32) -> Result<MonitorEvent> {
        let frames = socket.recv_multipart(flags)?;
        MonitorEvent::parse(&frames, version)
    }
}
