//! Options of the link itself rather than of the messaging pattern: ZMTP heartbeats
//! (HEARTBEAT_IVL, HEARTBEAT_TTL, HEARTBEAT_TIMEOUT), the raw STREAM link (STREAM_NOTIFY,
//! CONNECT_ROUTING_ID), when a connecting link gives up (RECONNECT_STOP), and the messages a
//! link opens and closes with (HELLO_MSG, DISCONNECT_MSG; libzmq 4.3 drafts). Validated as
//! libzmq 4.3 validates them, except RECONNECT_STOP, whose unknown bits are refused;
//! snapshotted into each session with the other options at bind/connect time.

use crate::error::{Error, Result};
use crate::opt;
use crate::opt::value::{bool_val, int_min, int_val};
use bytes::Bytes;

#[derive(Clone, Debug)]
pub(crate) struct LinkOptions {
    /// Milliseconds between PINGs (0: we send none).
    pub heartbeat_ivl: i32,
    /// The TTL we announce in our PINGs, in deciseconds (libzmq stores it so: the option is
    /// given in milliseconds and truncated).
    pub heartbeat_ttl_ds: u16,
    /// Milliseconds to wait for any traffic after a PING (-1: HEARTBEAT_IVL).
    pub heartbeat_timeout: i32,
    /// STREAM: report connects and disconnects as [routing id, empty frame].
    pub stream_notify: bool,
    /// The routing id the next `connect` gives its peer (ROUTER, STREAM), then cleared.
    pub connect_routing_id: Option<Bytes>,
    /// RECONNECT_STOP (see `session/reconnect.rs`).
    pub reconnect_stop: ReconnectStop,
    /// HELLO_MSG: sent first on each new connection by the types that send one (empty: none).
    pub hello_msg: Bytes,
    /// DISCONNECT_MSG: what a departing peer's pipe yields last, for the types that take one
    /// (empty: none).
    pub disconnect_msg: Bytes,
}

/// RECONNECT_STOP's conditions (`opt::RECONNECT_STOP_*`); none by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReconnectStop(i32);

impl ReconnectStop {
    const ALL: i32 =
        opt::RECONNECT_STOP_CONN_REFUSED | opt::RECONNECT_STOP_HANDSHAKE_FAILED | opt::RECONNECT_STOP_AFTER_DISCONNECT;

    /// A mask of known flags; anything else is `Invalid` (libzmq keeps any int, but a bit it
    /// does not know would do nothing, silently).
    fn new(mask: i32) -> Result<ReconnectStop> {
        if mask & !Self::ALL != 0 {
            return Err(Error::Invalid);
        }
        Ok(ReconnectStop(mask))
    }

    /// A refused connect ends the session.
    pub(crate) fn on_refused(self) -> bool {
        self.0 & opt::RECONNECT_STOP_CONN_REFUSED != 0
    }

    /// A connection that ends during its handshake (timeout, peer gone) ends the session.
    pub(crate) fn on_handshake_failure(self) -> bool {
        self.0 & opt::RECONNECT_STOP_HANDSHAKE_FAILED != 0
    }

    /// Once the socket has disconnected or unbound, a refused connect ends the session.
    pub(crate) fn after_disconnect(self) -> bool {
        self.0 & opt::RECONNECT_STOP_AFTER_DISCONNECT != 0
    }
}

impl Default for LinkOptions {
    fn default() -> LinkOptions {
        LinkOptions {
            heartbeat_ivl: 0,
            heartbeat_ttl_ds: 0,
            heartbeat_timeout: -1,
            stream_notify: true,
            connect_routing_id: None,
            reconnect_stop: ReconnectStop::default(),
            hello_msg: Bytes::new(),
            disconnect_msg: Bytes::new(),
        }
    }
}

impl LinkOptions {
    /// Sets a link option: `Ok(false)` if `option` is not one.
    pub(crate) fn set(&mut self, option: i32, v: &[u8]) -> Result<bool> {
        match option {
            opt::HEARTBEAT_IVL => self.heartbeat_ivl = int_min(v, 0)?,
            opt::HEARTBEAT_TTL => {
                // Milliseconds in, deciseconds kept (C division: -99..=99 ms give 0).
                let ds = int_val(v)? / 100;
                self.heartbeat_ttl_ds = u16::try_from(ds).map_err(|_| Error::Invalid)?;
            }
            opt::HEARTBEAT_TIMEOUT => self.heartbeat_timeout = int_min(v, 0)?,
            opt::STREAM_NOTIFY => self.stream_notify = bool_val(v)?,
            opt::CONNECT_ROUTING_ID => {
                // Same rules as ROUTING_ID: 1..=255 bytes.
                if v.is_empty() || v.len() > 255 {
                    return Err(Error::Invalid);
                }
                self.connect_routing_id = Some(Bytes::copy_from_slice(v));
            }
            opt::RECONNECT_STOP => self.reconnect_stop = ReconnectStop::new(int_val(v)?)?,
            // Any bytes; none (NULL, 0) clears, as libzmq.
            opt::HELLO_MSG => self.hello_msg = Bytes::copy_from_slice(v),
            opt::DISCONNECT_MSG => self.disconnect_msg = Bytes::copy_from_slice(v),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Reads a link option; STREAM_NOTIFY, CONNECT_ROUTING_ID, HELLO_MSG and DISCONNECT_MSG
    /// are write-only, as in libzmq.
    pub(crate) fn get(&self, option: i32) -> Option<Vec<u8>> {
        let i = |n: i32| Some(n.to_ne_bytes().to_vec());
        match option {
            opt::HEARTBEAT_IVL => i(self.heartbeat_ivl),
            opt::HEARTBEAT_TTL => i(self.heartbeat_ttl_ds as i32 * 100),
            opt::HEARTBEAT_TIMEOUT => i(self.heartbeat_timeout),
            opt::RECONNECT_STOP => i(self.reconnect_stop.0),
            _ => None,
        }
    }

    /// Milliseconds to wait for traffic after a PING (0: never give up).
    pub(crate) fn effective_timeout(&self) -> u64 {
        let t = if self.heartbeat_timeout < 0 { self.heartbeat_ivl } else { self.heartbeat_timeout };
        t.max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(o: &mut LinkOptions, opt: i32, v: i32) -> Result<bool> {
        o.set(opt, &v.to_ne_bytes())
    }

    #[test]
    fn validates_like_libzmq() {
        let mut o = LinkOptions::default();
        assert_eq!(o.get(opt::HEARTBEAT_TIMEOUT), Some((-1i32).to_ne_bytes().to_vec()));
        assert_eq!(set(&mut o, opt::HEARTBEAT_TTL, 150), Ok(true));
        assert_eq!(o.get(opt::HEARTBEAT_TTL), Some(100i32.to_ne_bytes().to_vec()));
        assert_eq!(set(&mut o, opt::HEARTBEAT_TTL, -1), Ok(true));
        assert_eq!(o.heartbeat_ttl_ds, 0);
        assert_eq!(set(&mut o, opt::HEARTBEAT_TTL, 6_553_599), Ok(true));
        assert_eq!(o.heartbeat_ttl_ds, 65535);
        assert_eq!(set(&mut o, opt::HEARTBEAT_TTL, 6_553_600), Err(Error::Invalid));
        assert_eq!(set(&mut o, opt::HEARTBEAT_IVL, -1), Err(Error::Invalid));
        assert_eq!(set(&mut o, opt::HEARTBEAT_TIMEOUT, -1), Err(Error::Invalid));
        assert_eq!(set(&mut o, opt::STREAM_NOTIFY, 2), Err(Error::Invalid));
        assert_eq!(o.set(opt::CONNECT_ROUTING_ID, b""), Err(Error::Invalid));
        assert_eq!(o.set(opt::CONNECT_ROUTING_ID, b"\0ab"), Ok(true));
        assert_eq!(o.get(opt::STREAM_NOTIFY), None);
        assert_eq!(o.get(opt::CONNECT_ROUTING_ID), None);
        set(&mut o, opt::HEARTBEAT_IVL, 250).unwrap();
        assert_eq!(o.effective_timeout(), 250, "TIMEOUT defaults to IVL");
        set(&mut o, opt::HEARTBEAT_TIMEOUT, 40).unwrap();
        assert_eq!(o.effective_timeout(), 40);
    }

    #[test]
    fn reconnect_stop_takes_known_flags_only() {
        let mut o = LinkOptions::default();
        assert_eq!(o.get(opt::RECONNECT_STOP), Some(0i32.to_ne_bytes().to_vec()));
        let all = opt::RECONNECT_STOP_CONN_REFUSED | opt::RECONNECT_STOP_HANDSHAKE_FAILED | opt::RECONNECT_STOP_AFTER_DISCONNECT;
        assert_eq!(set(&mut o, opt::RECONNECT_STOP, all), Ok(true));
        assert_eq!(o.get(opt::RECONNECT_STOP), Some(all.to_ne_bytes().to_vec()));
        let s = o.reconnect_stop;
        assert!(s.on_refused() && s.on_handshake_failure() && s.after_disconnect());
        assert_eq!(set(&mut o, opt::RECONNECT_STOP, opt::RECONNECT_STOP_HANDSHAKE_FAILED), Ok(true));
        let s = o.reconnect_stop;
        assert!(!s.on_refused() && s.on_handshake_failure() && !s.after_disconnect());
        for bad in [8, -1, all | 0x100] {
            assert_eq!(set(&mut o, opt::RECONNECT_STOP, bad), Err(Error::Invalid), "{bad:#x}");
        }
        assert_eq!(o.set(opt::RECONNECT_STOP, &[1, 0]), Err(Error::Invalid));
        assert_eq!(o.reconnect_stop, ReconnectStop(opt::RECONNECT_STOP_HANDSHAKE_FAILED), "a refused value changes nothing");
    }
}
