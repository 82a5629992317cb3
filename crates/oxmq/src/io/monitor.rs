//! A socket's monitor slot as the I/O side raises events into it: libzmq's event numbers and
//! values, where an event happened, and the message formats (see `crate::monitor` for the
//! formats and for the monitor socket that reads them). With no monitor set, raising an event
//! costs one relaxed atomic load, and no event is raised per message.

use crate::error::Error;
use crate::msg::Msg;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Event numbers (`ZMQ_EVENT_*`), as libzmq numbers them.
pub mod event {
    /// A connection to a remote endpoint was made (value: the descriptor).
    pub const CONNECTED: u64 = 0x0001;
    /// A connect is in progress (value: the errno, EINPROGRESS).
    pub const CONNECT_DELAYED: u64 = 0x0002;
    /// A reconnect attempt was scheduled (value: the interval in ms).
    pub const CONNECT_RETRIED: u64 = 0x0004;
    /// The socket listens on an endpoint (value: the descriptor).
    pub const LISTENING: u64 = 0x0008;
    /// A bind failed (value: the errno).
    pub const BIND_FAILED: u64 = 0x0010;
    /// A connection was accepted (value: the descriptor).
    pub const ACCEPTED: u64 = 0x0020;
    /// An accept failed (value: the errno).
    pub const ACCEPT_FAILED: u64 = 0x0040;
    /// A descriptor was closed (value: the descriptor).
    pub const CLOSED: u64 = 0x0080;
    /// Closing a descriptor failed (value: the errno; never raised on Linux).
    pub const CLOSE_FAILED: u64 = 0x0100;
    /// A connection was lost (value: the descriptor).
    pub const DISCONNECTED: u64 = 0x0200;
    /// Monitoring stopped: the last event the monitor sends (value: 0).
    pub const MONITOR_STOPPED: u64 = 0x0400;
    /// Every version-1 event.
    pub const ALL: u64 = 0xFFFF;
    /// A handshake failed for a reason with no protocol code (value: the errno).
    pub const HANDSHAKE_FAILED_NO_DETAIL: u64 = 0x0800;
    /// A handshake completed (value: 0).
    pub const HANDSHAKE_SUCCEEDED: u64 = 0x1000;
    /// The peer broke the protocol (value: a [`super::protocol_error`] code).
    pub const HANDSHAKE_FAILED_PROTOCOL: u64 = 0x2000;
    /// Authentication failed (value: the ZAP status code, 300, 400 or 500).
    pub const HANDSHAKE_FAILED_AUTH: u64 = 0x4000;
    /// The queue depths of one pipe, on request ([`crate::Socket::monitor_pipes_stats`];
    /// versions 2 and 3 only): two values, the messages queued out and queued in.
    pub const PIPES_STATS: u64 = 0x10000;

    /// The event's libzmq name without the `ZMQ_EVENT_` prefix (`"CONNECTED"`), if known.
    pub fn name(ev: u64) -> Option<&'static str> {
        Some(match ev {
            CONNECTED => "CONNECTED",
            CONNECT_DELAYED => "CONNECT_DELAYED",
            CONNECT_RETRIED => "CONNECT_RETRIED",
            LISTENING => "LISTENING",
            BIND_FAILED => "BIND_FAILED",
            ACCEPTED => "ACCEPTED",
            ACCEPT_FAILED => "ACCEPT_FAILED",
            CLOSED => "CLOSED",
            CLOSE_FAILED => "CLOSE_FAILED",
            DISCONNECTED => "DISCONNECTED",
            MONITOR_STOPPED => "MONITOR_STOPPED",
            HANDSHAKE_FAILED_NO_DETAIL => "HANDSHAKE_FAILED_NO_DETAIL",
            HANDSHAKE_SUCCEEDED => "HANDSHAKE_SUCCEEDED",
            HANDSHAKE_FAILED_PROTOCOL => "HANDSHAKE_FAILED_PROTOCOL",
            HANDSHAKE_FAILED_AUTH => "HANDSHAKE_FAILED_AUTH",
            PIPES_STATS => "PIPES_STATS",
            _ => return None,
        })
    }
}

/// Values of HANDSHAKE_FAILED_PROTOCOL (`ZMQ_PROTOCOL_ERROR_*`), as libzmq numbers them.
pub mod protocol_error {
    /// A ZMTP protocol error of no other kind.
    pub const ZMTP_UNSPECIFIED: u64 = 0x1000_0000;
    /// A command the handshake did not expect.
    pub const ZMTP_UNEXPECTED_COMMAND: u64 = 0x1000_0001;
    /// A CURVE nonce out of sequence.
    pub const ZMTP_INVALID_SEQUENCE: u64 = 0x1000_0002;
    /// The CURVE key exchange failed.
    pub const ZMTP_KEY_EXCHANGE: u64 = 0x1000_0003;
    /// A malformed command of no other kind.
    pub const ZMTP_MALFORMED_COMMAND_UNSPECIFIED: u64 = 0x1000_0011;
    /// A malformed CURVE MESSAGE.
    pub const ZMTP_MALFORMED_COMMAND_MESSAGE: u64 = 0x1000_0012;
    /// A malformed HELLO.
    pub const ZMTP_MALFORMED_COMMAND_HELLO: u64 = 0x1000_0013;
    /// A malformed INITIATE.
    pub const ZMTP_MALFORMED_COMMAND_INITIATE: u64 = 0x1000_0014;
    /// A malformed ERROR.
    pub const ZMTP_MALFORMED_COMMAND_ERROR: u64 = 0x1000_0015;
    /// A malformed READY.
    pub const ZMTP_MALFORMED_COMMAND_READY: u64 = 0x1000_0016;
    /// A malformed WELCOME.
    pub const ZMTP_MALFORMED_COMMAND_WELCOME: u64 = 0x1000_0017;
    /// Metadata that does not parse.
    pub const ZMTP_INVALID_METADATA: u64 = 0x1000_0018;
    /// A CURVE box that does not open.
    pub const ZMTP_CRYPTOGRAPHIC: u64 = 0x1100_0001;
    /// The peers' security mechanisms differ.
    pub const ZMTP_MECHANISM_MISMATCH: u64 = 0x1100_0002;
    /// A ZAP error of no other kind.
    pub const ZAP_UNSPECIFIED: u64 = 0x2000_0000;
    /// The ZAP handler's reply is malformed.
    pub const ZAP_MALFORMED_REPLY: u64 = 0x2000_0001;
    /// The ZAP reply's request id does not match.
    pub const ZAP_BAD_REQUEST_ID: u64 = 0x2000_0002;
    /// The ZAP reply's version is not 1.0.
    pub const ZAP_BAD_VERSION: u64 = 0x2000_0003;
    /// The ZAP reply's status code is not 200, 300, 400 or 500.
    pub const ZAP_INVALID_STATUS_CODE: u64 = 0x2000_0004;
    /// The ZAP reply's metadata does not parse.
    pub const ZAP_INVALID_METADATA: u64 = 0x2000_0005;
    /// A WebSocket transport error: a malformed or refused upgrade, a frame breaking RFC 6455
    /// or RFC 45 (libzmq's).
    pub const WS_UNSPECIFIED: u64 = 0x3000_0000;
    /// A TLS failure other than a refused certificate (oxmq's; libzmq's wss has no code).
    pub const TLS_UNSPECIFIED: u64 = 0x4000_0000;
}

/// The event a layer's refusal of its peer raises, with its value: HANDSHAKE_FAILED_PROTOCOL
/// for broken WebSocket or TLS, HANDSHAKE_FAILED_AUTH (status 400, as a refused CURVE key) for
/// a certificate that was not accepted.
pub(crate) fn layer_failure(f: crate::transport::stream::LayerFailure) -> (u64, u64) {
    use crate::transport::stream::LayerFailure as F;
    match f {
        F::WebSocket => (event::HANDSHAKE_FAILED_PROTOCOL, protocol_error::WS_UNSPECIFIED),
        F::Tls => (event::HANDSHAKE_FAILED_PROTOCOL, protocol_error::TLS_UNSPECIFIED),
        F::Certificate => (event::HANDSHAKE_FAILED_AUTH, 400),
    }
}

/// The event a failed handshake raises, with its value, as libzmq raises it (None: libzmq
/// raises none, only DISCONNECTED: an incompatible socket type, a peer's non-ZAP ERROR).
pub(crate) fn handshake_failure(e: &zmtp::HandshakeError) -> Option<(u64, u64)> {
    use protocol_error as p;
    use zmtp::HandshakeError as H;
    if let Some(code) = e.zap_status_code() {
        return Some((event::HANDSHAKE_FAILED_AUTH, code as u64));
    }
    let code = match e {
        // libzmq's PLAIN server with no ZAP handler reports "no detail" with EFAULT.
        H::NoZapHandler => return Some((event::HANDSHAKE_FAILED_NO_DETAIL, libc::EFAULT as u64)),
        _ if e.is_auth_failure() => return Some((event::HANDSHAKE_FAILED_AUTH, 400)),
        H::IncompatibleSocketType { .. } | H::PeerError { .. } => return None,
        H::MechanismMismatch | H::UnknownMechanism => p::ZMTP_MECHANISM_MISMATCH,
        H::UnexpectedCommand(_) | H::UnexpectedMessage => p::ZMTP_UNEXPECTED_COMMAND,
        H::Metadata(_) | H::MissingSocketType | H::UnknownSocketType | H::IdentityTooLong { .. } => p::ZMTP_INVALID_METADATA,
        H::Command(_) => p::ZMTP_MALFORMED_COMMAND_UNSPECIFIED,
        H::MalformedCommand { command } => match *command {
            "MESSAGE" => p::ZMTP_MALFORMED_COMMAND_MESSAGE,
            "HELLO" => p::ZMTP_MALFORMED_COMMAND_HELLO,
            "INITIATE" => p::ZMTP_MALFORMED_COMMAND_INITIATE,
            "ERROR" => p::ZMTP_MALFORMED_COMMAND_ERROR,
            "READY" => p::ZMTP_MALFORMED_COMMAND_READY,
            "WELCOME" => p::ZMTP_MALFORMED_COMMAND_WELCOME,
            _ => p::ZMTP_MALFORMED_COMMAND_UNSPECIFIED,
        },
        // libzmq's CURVE server reports a HELLO of another version as a malformed HELLO.
        H::UnsupportedCurveVersion { .. } => p::ZMTP_MALFORMED_COMMAND_HELLO,
        H::Cryptographic { .. } | H::BadCookie | H::BadVouch | H::InvalidNonce => p::ZMTP_CRYPTOGRAPHIC,
        // A handler's reply that breaks RFC 27: libzmq's ZAP protocol-error codes.
        H::ZapReply(z) => match z {
            zmtp::ZapError::FrameCount(_) | zmtp::ZapError::Delimiter => p::ZAP_MALFORMED_REPLY,
            zmtp::ZapError::Version => p::ZAP_BAD_VERSION,
            zmtp::ZapError::RequestId => p::ZAP_BAD_REQUEST_ID,
            zmtp::ZapError::StatusCode => p::ZAP_INVALID_STATUS_CODE,
            zmtp::ZapError::Metadata(_) => p::ZAP_INVALID_METADATA,
        },
        // Bad signature, ZMTP 1.0/2.0 (libzmq would speak those), bad frames, role conflicts.
        _ => p::ZMTP_UNSPECIFIED,
    };
    Some((event::HANDSHAKE_FAILED_PROTOCOL, code))
}

/// Where an event happened.
pub(crate) struct Addrs<'a> {
    pub local: String,
    pub remote: String,
    /// True for a bound socket's endpoints (version 1 shows the local address then).
    pub bind_side: bool,
    pub routing_id: &'a [u8],
}

impl Addrs<'static> {
    /// An event about a bound endpoint, before or without any connection.
    pub(crate) fn bound(local: impl Into<String>) -> Addrs<'static> {
        Addrs { local: local.into(), remote: String::new(), bind_side: true, routing_id: &[] }
    }
}

/// Formats a connected stream's two addresses as libzmq does (`tcp://127.0.0.1:5555`,
/// `ipc:///path`, `ipc://@name`; the unnamed end of an ipc connection is `ipc://`); a tcp
/// address the kernel will not tell is empty.
pub(crate) fn stream_addrs(stream: &crate::transport::stream::Stream) -> (String, String) {
    stream.addrs()
}

/// A descriptor value for an event whose descriptor is already gone (libzmq's `retired_fd`).
pub(crate) const NO_FD: u64 = u32::MAX as u64;

/// A bind failed: as libzmq, CLOSED (no endpoint yet) when the listening socket had been
/// opened, then BIND_FAILED with the address as given, without its `tcp://` prefix.
pub(crate) fn bind_failed(m: &Monitor, endpoint: &str, e: &Error) {
    if !matches!(e, Error::NoDev | Error::Invalid) {
        m.emit(event::CLOSED, NO_FD, || Addrs::bound(""));
    }
    let addr = endpoint.split_once("://").map_or(endpoint, |(_, a)| a);
    m.emit(event::BIND_FAILED, e.errno() as u64, || Addrs::bound(addr));
}

/// A listener closed (unbind or socket close), raised on the socket's thread so it comes
/// before MONITOR_STOPPED as in libzmq.
pub(crate) fn listener_closed(m: &Monitor, fd: std::os::fd::RawFd, resolved: &str) {
    m.emit(event::CLOSED, fd as u64, || Addrs::bound(resolved));
}

/// An event about one connection of a session. `target` is the connect side's endpoint (as
/// given, and the address it resolved to); None on the accept side.
pub(crate) fn session_event(
    m: &Monitor,
    ev: u64,
    value: u64,
    stream: Option<&crate::transport::stream::Stream>,
    target: Option<(&str, Option<std::net::SocketAddr>)>,
    routing_id: &[u8],
) {
    let (local, mut remote) = stream.map(stream_addrs).unwrap_or_default();
    if let Some((given, addr)) = target {
        // libzmq names a connection by the endpoint it connects to, tcp addresses resolved.
        remote = match addr {
            Some(a) if given.starts_with("tcp://") => format!("tcp://{a}"),
            _ => given.to_string(),
        };
    }
    m.emit_with(ev, value, &Addrs { local, remote, bind_side: target.is_none(), routing_id });
}

/// An accept failed (EMFILE and the like): ACCEPT_FAILED with the errno, named by the listener.
pub(crate) fn accept_failed(m: &Monitor, listener: &crate::transport::listen::Listener, e: &std::io::Error) {
    use crate::transport::listen::Listener;
    m.emit(event::ACCEPT_FAILED, e.raw_os_error().unwrap_or(0) as u64, || {
        Addrs::bound(match listener {
            Listener::Tcp(l) => l.local_addr().map(|a| format!("tcp://{a}")).unwrap_or_default(),
            Listener::Ipc(l, _) => {
                l.local_addr().ok().and_then(|a| a.as_pathname().map(|p| format!("ipc://{}", p.display()))).unwrap_or_default()
            }
        })
    });
}

/// Where a monitor's events go: the monitor socket (`socket::monitor`), which sends each
/// event without waiting (a reader that is absent or a whole HWM behind loses it, one with room
/// never does).
pub(crate) trait EventSink: Send {
    /// Sends one event's frames, all or none.
    fn post(&mut self, frames: Vec<Msg>);
}

struct Sink {
    out: Box<dyn EventSink>,
    version: u8,
}

/// A listener inside oxmq for some of a socket's events (`set_tap`): called on the thread
/// that raises the event, with the event and the remote address; it must not block.
pub(crate) type Tap = std::sync::Arc<dyn Fn(u64, &str) + Send + Sync>;

/// The events a tap hears: a connection lost, a connect retried (OXMQ_DNS_FOLLOW looks its
/// name up again then, `socket/follow.rs`).
pub(crate) const TAP_EVENTS: u64 = event::DISCONNECTED | event::CONNECT_RETRIED;

/// A socket's monitor slot, shared with its I/O sessions.
pub(crate) struct Monitor {
    /// The events wanted by the monitor or the tap (0: neither). Read without the lock on
    /// every event site.
    mask: AtomicU64,
    /// The events the application's monitor wants (0: no monitor).
    user: AtomicU64,
    sink: Mutex<Option<Sink>>,
    tap: Mutex<Option<Tap>>,
}

impl Monitor {
    pub(crate) fn new() -> Monitor {
        Monitor { mask: AtomicU64::new(0), user: AtomicU64::new(0), sink: Mutex::new(None), tap: Mutex::new(None) }
    }

    /// Installs the socket's internal listener for [`TAP_EVENTS`] (replacing any).
    pub(crate) fn set_tap(&self, tap: Tap) {
        *self.tap.lock().unwrap_or_else(|p| p.into_inner()) = Some(tap);
        self.mask.fetch_or(TAP_EVENTS, Ordering::Relaxed);
    }

    /// The tap's share of the mask.
    fn tap_mask(&self) -> u64 {
        if self.tap.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
            TAP_EVENTS
        } else {
            0
        }
    }

    /// True when a monitor wants `ev`: the only cost of an event site when none is set.
    #[inline]
    pub(crate) fn wants(&self, ev: u64) -> bool {
        self.mask.load(Ordering::Relaxed) & ev != 0
    }

    /// Raises an event (dropped when nobody reads, or the reader is behind its HWM).
    #[inline]
    pub(crate) fn emit(&self, ev: u64, value: u64, at: impl FnOnce() -> Addrs<'static>) {
        if self.wants(ev) {
            self.emit_with(ev, value, &at());
        }
    }

    /// Raises an event with several values (ZMQ_EVENT_PIPES_STATS: two), versions 2 and 3
    /// only: false when no monitor wants it.
    pub(crate) fn emit_values(&self, ev: u64, values: &[u64], at: &Addrs<'_>) -> bool {
        let mut g = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        if self.user.load(Ordering::Relaxed) & ev == 0 {
            return false;
        }
        let Some(sink) = g.as_mut() else { return false };
        if sink.version < 2 {
            return false;
        }
        let frames = encode(sink.version, ev, values, at);
        sink.out.post(frames);
        true
    }

    #[cold]
    pub(crate) fn emit_with(&self, ev: u64, value: u64, at: &Addrs<'_>) {
        if ev & TAP_EVENTS != 0 {
            let tap = self.tap.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(tap) = tap {
                tap(ev, &at.remote);
            }
        }
        let mut g = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        // The mask is re-checked under the lock: monitoring may have stopped meanwhile.
        if self.user.load(Ordering::Relaxed) & ev == 0 {
            return;
        }
        if let Some(sink) = g.as_mut() {
            let frames = encode(sink.version, ev, &[value], at);
            // DONTWAIT: a reader that is absent or behind loses events; the caller (often an
            // I/O thread) never waits. A multi-part message is all or nothing: the first
            // frame is only accepted when the pipe has room for a whole message.
            sink.out.post(frames);
        }
    }

    /// Sends the events in `events` to `out`, in message format `version`, replacing any sink
    /// set before (which the caller stopped).
    pub(crate) fn install(&self, out: Box<dyn EventSink>, version: u8, events: u64) {
        let mut g = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        *g = Some(Sink { out, version });
        self.user.store(events, Ordering::Relaxed);
        self.mask.store(events | self.tap_mask(), Ordering::Relaxed);
    }

    /// Stops monitoring: sends MONITOR_STOPPED if it was asked for, drops the sink.
    pub(crate) fn stop(&self) {
        let sink = {
            let mut g = self.sink.lock().unwrap_or_else(|p| p.into_inner());
            let Some(mut sink) = g.take() else { return };
            let mask = self.user.swap(0, Ordering::Relaxed);
            self.mask.store(self.tap_mask(), Ordering::Relaxed);
            if mask & event::MONITOR_STOPPED != 0 {
                let frames = encode(sink.version, event::MONITOR_STOPPED, &[0], &Addrs::bound(""));
                sink.out.post(frames);
            }
            sink
        };
        // Closed outside the lock: a socket's close takes other locks (the context's).
        drop(sink);
    }
}

/// The frames of one event message in format `version`, with its `values` (one for every
/// event but PIPES_STATS; version 1 carries the first only).
pub(crate) fn encode(version: u8, ev: u64, values: &[u64], at: &Addrs<'_>) -> Vec<Msg> {
    if version == 1 {
        let mut head = [0u8; 6];
        head[..2].copy_from_slice(&(ev as u16).to_ne_bytes());
        head[2..].copy_from_slice(&(values.first().copied().unwrap_or(0) as u32).to_ne_bytes());
        let ep = if at.bind_side { &at.local } else { &at.remote };
        return vec![Msg::copy_from(&head), Msg::copy_from(ep.as_bytes())];
    }
    let mut v = vec![Msg::copy_from(&ev.to_ne_bytes()), Msg::copy_from(&(values.len() as u64).to_ne_bytes())];
    v.extend(values.iter().map(|x| Msg::copy_from(&x.to_ne_bytes())));
    v.push(Msg::copy_from(at.local.as_bytes()));
    v.push(Msg::copy_from(at.remote.as_bytes()));
    if version >= 3 {
        v.push(Msg::copy_from(at.routing_id));
    }
    v
}
