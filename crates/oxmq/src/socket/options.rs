//! The options every socket type shares, with libzmq's defaults and validation.
//!
//! Options specific to one socket type (SUBSCRIBE, ROUTER_MANDATORY, ...) live with that type;
//! the socket asks the type first and falls back to these. Values cross the API as raw bytes so
//! the C ABI can pass `zmq_setsockopt` arguments through unchanged; a value of the wrong length
//! or out of range is `EINVAL`, never silently clamped.

use crate::error::{Error, Result};
use crate::opt;
use bytes::Bytes;

/// Shared options. Cloned into each I/O session as a snapshot at bind/connect time, as libzmq
/// does: changing an option later affects later connections only.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub sndhwm: i32,
    pub rcvhwm: i32,
    pub linger: i32,
    pub reconnect_ivl: i32,
    pub reconnect_ivl_max: i32,
    pub routing_id: Bytes,
    pub rcvtimeo: i32,
    pub sndtimeo: i32,
    pub maxmsgsize: i64,
    pub immediate: bool,
    pub tcp_keepalive: i32,
    pub tcp_keepalive_cnt: i32,
    pub tcp_keepalive_idle: i32,
    pub tcp_keepalive_intvl: i32,
    pub ipv6: bool,
    pub handshake_ivl: i32,
    pub backlog: i32,
    pub sndbuf: i32,
    pub rcvbuf: i32,
    pub tos: i32,
    pub affinity: u64,
    pub connect_timeout: i32,
    pub tcp_maxrt: i32,
    pub multicast_hops: i32,
    pub rate: i32,
    pub recovery_ivl: i32,
    /// MULTICAST_MAXTPDU, MULTICAST_LOOP, LOOPBACK_FASTPATH: kept and read back as libzmq
    /// does; they tune transports oxmq lacks (PGM, NORM) or Windows loopback, so nothing here
    /// reads them.
    pub multicast_maxtpdu: i32,
    pub multicast_loop: bool,
    pub loopback_fastpath: bool,
    /// The context's MAX_MSGSZ when the socket was created, if the application set one: a
    /// bound on every frame sent and received, beside MAXMSGSIZE. Unset (the default), frames
    /// are as large as memory allows, as in libzmq (whose MAX_MSGSZ bounds nothing); a header
    /// claiming a huge frame costs memory only as its bytes arrive (`io/session.rs`).
    pub ctx_max_msgsz: Option<u64>,
    /// MECHANISM, PLAIN_* and CURVE_* (see `crate::security`).
    pub security: crate::security::Security,
    /// INVERT_MATCHING (PUB/SUB types also keep their own copy).
    pub invert_matching: bool,
    /// CONFLATE: the socket's queues keep only the newest message (see `socket::conflate`).
    pub conflate: bool,
    /// PROBE_ROUTER: an empty message to each new peer (ROUTER, DEALER, REQ).
    pub probe_router: bool,
    /// HEARTBEAT_*, STREAM_NOTIFY, CONNECT_ROUTING_ID (see `io/link.rs`; the last is used by
    /// one `connect`).
    pub link: crate::io::LinkOptions,
    /// TCP_ACCEPT_FILTER and IPC_FILTER_* (see `transport::filter`); write-only, as in libzmq.
    pub accept_filters: crate::transport::filter::AcceptFilters,
    /// USE_FD: a descriptor, already bound (and possibly listening), that the next tcp or ipc
    /// bind adopts instead of creating a socket (-1: none). The listener owns it from then on.
    pub use_fd: i32,
    /// BINDTODEVICE: the network interface tcp sockets are bound to (SO_BINDTODEVICE; needs
    /// CAP_NET_RAW); empty for none. At most 16 bytes, as libzmq (BINDDEVSIZ; the kernel takes 15).
    pub bound_device: Vec<u8>,
    /// SOCKS_PROXY: "host:port" of a SOCKS5 proxy that tcp connects go through; empty: none.
    pub socks_proxy: String,
    /// SOCKS_USERNAME, SOCKS_PASSWORD: at most 255 bytes each; an empty username offers no
    /// authentication.
    pub socks_username: Vec<u8>,
    pub socks_password: Vec<u8>,
    /// PRIORITY (draft): SO_PRIORITY for tcp connections; 0 leaves the kernel's default.
    pub priority: i32,
    /// WSS_KEY_PEM, WSS_CERT_PEM, WSS_TRUST_PEM, WSS_HOSTNAME, WSS_TRUST_SYSTEM: the TLS of
    /// wss:// and tls:// endpoints (see `transport::tls`).
    pub tls: crate::transport::tls::TlsOptions,
    /// METADATA (draft): application properties ("X-" names) sent in each handshake, which
    /// the peer's messages then carry (`zmq_msg_gets`).
    pub app_metadata: Vec<(String, bytes::Bytes)>,
}

impl Options {
    pub(crate) fn new(ipv6_default: bool) -> Options {
        Options {
            sndhwm: 1000,
            rcvhwm: 1000,
            linger: -1,
            reconnect_ivl: 100,
            reconnect_ivl_max: 0,
            routing_id: Bytes::new(),
            rcvtimeo: -1,
            sndtimeo: -1,
            maxmsgsize: -1,
            immediate: false,
            tcp_keepalive: -1,
            tcp_keepalive_cnt: -1,
            tcp_keepalive_idle: -1,
            tcp_keepalive_intvl: -1,
            ipv6: ipv6_default,
            handshake_ivl: 30_000,
            backlog: 100,
            sndbuf: -1,
            rcvbuf: -1,
            tos: 0,
            affinity: 0,
            connect_timeout: 0,
            tcp_maxrt: 0,
            multicast_hops: 1,
            rate: 100,
            recovery_ivl: 10_000,
            multicast_maxtpdu: 1500,
            multicast_loop: true,
            loopback_fastpath: false,
            ctx_max_msgsz: None,
            security: Default::default(),
            invert_matching: false,
            conflate: false,
            probe_router: false,
            link: Default::default(),
            accept_filters: Default::default(),
            use_fd: -1,
            bound_device: Vec::new(),
            socks_proxy: String::new(),
            socks_username: Vec::new(),
            socks_password: Vec::new(),
            priority: 0,
            tls: Default::default(),
            app_metadata: Vec::new(),
        }
    }

    /// Sets a shared option. `Err(Invalid)` for a bad value; `Ok(false)` if the option is not
    /// a shared one (the caller then reports it as unknown).
    pub(crate) fn set(&mut self, option: i32, v: &[u8]) -> Result<bool> {
        match option {
            opt::SNDHWM => self.sndhwm = int_min(v, 0)?,
            opt::RCVHWM => self.rcvhwm = int_min(v, 0)?,
            opt::LINGER => self.linger = int_min(v, -1)?,
            opt::RECONNECT_IVL => self.reconnect_ivl = int_min(v, -1)?,
            opt::RECONNECT_IVL_MAX => self.reconnect_ivl_max = int_min(v, 0)?,
            opt::ROUTING_ID => {
                // libzmq: 1..=255 bytes, and the first byte may not be zero (reserved for
                // generated ids).
                if v.is_empty() || v.len() > 255 || v[0] == 0 {
                    return Err(Error::Invalid);
                }
                self.routing_id = Bytes::copy_from_slice(v);
            }
            opt::RCVTIMEO => self.rcvtimeo = int_min(v, -1)?,
            opt::SNDTIMEO => self.sndtimeo = int_min(v, -1)?,
            opt::MAXMSGSIZE => {
                let n = i64_val(v)?;
                if n < -1 {
                    return Err(Error::Invalid);
                }
                self.maxmsgsize = n;
            }
            opt::IMMEDIATE => self.immediate = bool_val(v)?,
            opt::TCP_KEEPALIVE => {
                let n = int_val(v)?;
                if !(-1..=1).contains(&n) {
                    return Err(Error::Invalid);
                }
                self.tcp_keepalive = n;
            }
            opt::TCP_KEEPALIVE_CNT => self.tcp_keepalive_cnt = int_min(v, -1)?,
            opt::TCP_KEEPALIVE_IDLE => self.tcp_keepalive_idle = int_min(v, -1)?,
            opt::TCP_KEEPALIVE_INTVL => self.tcp_keepalive_intvl = int_min(v, -1)?,
            opt::IPV6 => self.ipv6 = bool_val(v)?,
            opt::IPV4ONLY => self.ipv6 = !bool_val(v)?,
            opt::HANDSHAKE_IVL => self.handshake_ivl = int_min(v, 0)?,
            opt::BACKLOG => self.backlog = int_min(v, 0)?,
            opt::SNDBUF => self.sndbuf = int_min(v, -1)?,
            opt::RCVBUF => self.rcvbuf = int_min(v, -1)?,
            opt::TOS => self.tos = int_min(v, 0)?,
            opt::AFFINITY => self.affinity = u64_val(v)?,
            opt::CONNECT_TIMEOUT => self.connect_timeout = int_min(v, 0)?,
            opt::TCP_MAXRT => self.tcp_maxrt = int_min(v, 0)?,
            opt::MULTICAST_HOPS => {
                let n = int_val(v)?;
                if n <= 0 {
                    return Err(Error::Invalid);
                }
                self.multicast_hops = n;
            }
            opt::RATE => {
                let n = int_val(v)?;
                if n <= 0 {
                    return Err(Error::Invalid);
                }
                self.rate = n;
            }
            opt::RECOVERY_IVL => self.recovery_ivl = int_min(v, 0)?,
            opt::MULTICAST_MAXTPDU => {
                let n = int_val(v)?;
                if n <= 0 {
                    return Err(Error::Invalid);
                }
                self.multicast_maxtpdu = n;
            }
            opt::MULTICAST_LOOP => self.multicast_loop = bool_val(v)?,
            opt::LOOPBACK_FASTPATH => self.loopback_fastpath = bool_val(v)?,
            opt::MECHANISM..=opt::CURVE_SERVERKEY | opt::ZAP_DOMAIN | opt::ZAP_ENFORCE_DOMAIN => {
                return self.security.set(option, v)
            }
            opt::INVERT_MATCHING => self.invert_matching = bool_val(v)?,
            opt::CONFLATE => self.conflate = bool_val(v)?,
            opt::PROBE_ROUTER => self.probe_router = bool_val(v)?,
            opt::USE_FD => self.use_fd = int_min(v, -1)?,
            opt::PRIORITY => self.priority = int_min(v, 0)?,
            opt::METADATA => {
                // "X-name:value", as libzmq: a name of at most 255 bytes starting with "X-",
                // a value that is not empty; a name set already keeps its first value.
                let s = std::str::from_utf8(v).map_err(|_| Error::Invalid)?;
                let (name, value) = s.split_once(':').ok_or(Error::Invalid)?;
                if !name.starts_with("X-") || name.len() > 255 || value.is_empty() {
                    return Err(Error::Invalid);
                }
                if !self.app_metadata.iter().any(|(n, _)| n == name) {
                    self.app_metadata.push((name.to_string(), bytes::Bytes::copy_from_slice(value.as_bytes())));
                }
            }
            opt::BINDTODEVICE => {
                // libzmq takes the bytes up to an optional trailing NUL; NULL/0 clears.
                let v = v.strip_suffix(&[0]).unwrap_or(v);
                if v.len() > 16 || v.contains(&0) {
                    return Err(Error::Invalid);
                }
                self.bound_device = v.to_vec();
            }
            // Empty clears the proxy (the C ABI refuses a non-NULL empty string, as libzmq).
            opt::SOCKS_PROXY => self.socks_proxy = String::from_utf8(v.to_vec()).map_err(|_| Error::Invalid)?,
            opt::SOCKS_USERNAME | opt::SOCKS_PASSWORD => {
                if v.len() > 255 {
                    return Err(Error::Invalid);
                }
                *if option == opt::SOCKS_USERNAME { &mut self.socks_username } else { &mut self.socks_password } = v.to_vec();
            }
            opt::WSS_KEY_PEM | opt::WSS_CERT_PEM | opt::WSS_TRUST_PEM => {
                // libzmq takes the bytes as given; a trailing NUL (a C string with its
                // terminator) is not part of the PEM. Empty clears.
                let v = v.strip_suffix(&[0]).unwrap_or(v);
                let value = if v.is_empty() {
                    None
                } else {
                    crate::transport::tls::check_pem(v, option == opt::WSS_KEY_PEM)?;
                    Some(std::sync::Arc::from(v))
                };
                *match option {
                    opt::WSS_KEY_PEM => &mut self.tls.key_pem,
                    opt::WSS_CERT_PEM => &mut self.tls.cert_pem,
                    _ => &mut self.tls.trust_pem,
                } = value;
            }
            opt::WSS_HOSTNAME => {
                let v = v.strip_suffix(&[0]).unwrap_or(v);
                self.tls.hostname = String::from_utf8(v.to_vec()).map_err(|_| Error::Invalid)?;
            }
            opt::WSS_TRUST_SYSTEM => self.tls.trust_system = bool_val(v)?,
            opt::TCP_ACCEPT_FILTER => self.accept_filters.set_tcp(v, self.ipv6)?,
            opt::IPC_FILTER_PID | opt::IPC_FILTER_UID | opt::IPC_FILTER_GID => self.accept_filters.set_ipc(option, v)?,
            _ => return self.link.set(option, v),
        }
        Ok(true)
    }

    /// Reads a shared option into its wire form; `None` if not a shared option.
    pub(crate) fn get(&self, option: i32) -> Option<Vec<u8>> {
        let i = |n: i32| Some(n.to_ne_bytes().to_vec());
        match option {
            opt::SNDHWM => i(self.sndhwm),
            opt::RCVHWM => i(self.rcvhwm),
            opt::LINGER => i(self.linger),
            opt::RECONNECT_IVL => i(self.reconnect_ivl),
            opt::RECONNECT_IVL_MAX => i(self.reconnect_ivl_max),
            opt::ROUTING_ID => Some(self.routing_id.to_vec()),
            opt::RCVTIMEO => i(self.rcvtimeo),
            opt::SNDTIMEO => i(self.sndtimeo),
            opt::MAXMSGSIZE => Some(self.maxmsgsize.to_ne_bytes().to_vec()),
            opt::IMMEDIATE => i(self.immediate as i32),
            opt::TCP_KEEPALIVE => i(self.tcp_keepalive),
            opt::TCP_KEEPALIVE_CNT => i(self.tcp_keepalive_cnt),
            opt::TCP_KEEPALIVE_IDLE => i(self.tcp_keepalive_idle),
            opt::TCP_KEEPALIVE_INTVL => i(self.tcp_keepalive_intvl),
            opt::IPV6 => i(self.ipv6 as i32),
            opt::IPV4ONLY => i(!self.ipv6 as i32),
            opt::HANDSHAKE_IVL => i(self.handshake_ivl),
            opt::BACKLOG => i(self.backlog),
            opt::SNDBUF => i(self.sndbuf),
            opt::RCVBUF => i(self.rcvbuf),
            opt::TOS => i(self.tos),
            opt::AFFINITY => Some(self.affinity.to_ne_bytes().to_vec()),
            opt::CONNECT_TIMEOUT => i(self.connect_timeout),
            opt::TCP_MAXRT => i(self.tcp_maxrt),
            opt::MULTICAST_HOPS => i(self.multicast_hops),
            opt::RATE => i(self.rate),
            opt::RECOVERY_IVL => i(self.recovery_ivl),
            opt::MULTICAST_MAXTPDU => i(self.multicast_maxtpdu),
            opt::MULTICAST_LOOP => i(self.multicast_loop as i32),
            opt::LOOPBACK_FASTPATH => i(self.loopback_fastpath as i32),
            opt::MECHANISM..=opt::CURVE_SERVERKEY | opt::ZAP_DOMAIN | opt::ZAP_ENFORCE_DOMAIN => self.security.get(option),
            opt::INVERT_MATCHING => i(self.invert_matching as i32),
            opt::CONFLATE => i(self.conflate as i32),
            opt::PROBE_ROUTER => i(self.probe_router as i32),
            opt::USE_FD => i(self.use_fd),
            opt::PRIORITY => i(self.priority),
            // A ROUTER answers with its flags (`router.rs`); any other type reads "off", as
            // libzmq.
            opt::ROUTER_NOTIFY => i(0),
            opt::BINDTODEVICE => {
                let mut v = self.bound_device.clone();
                v.push(0);
                Some(v)
            }
            opt::SOCKS_PROXY | opt::SOCKS_USERNAME | opt::SOCKS_PASSWORD => {
                let mut v = match option {
                    opt::SOCKS_PROXY => self.socks_proxy.as_bytes().to_vec(),
                    opt::SOCKS_USERNAME => self.socks_username.clone(),
                    _ => self.socks_password.clone(),
                };
                v.push(0);
                Some(v)
            }
            _ => self.link.get(option),
        }
    }

    /// MAXMSGSIZE as the codec wants it: the least of MAXMSGSIZE and the context's MAX_MSGSZ
    /// where set, else what this machine could hold at all.
    pub(crate) fn max_msg_size(&self) -> Option<u64> {
        let own = (self.maxmsgsize >= 0).then_some(self.maxmsgsize as u64);
        match (own, self.ctx_max_msgsz) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (None, None) => Some(memory_bound()),
            (a, b) => a.or(b),
        }
    }
}

/// The largest frame this machine could hold: its memory and swap. Unbounded (MAXMSGSIZE -1),
/// libzmq allocates a frame's size when its header arrives, and a size beyond that fails
/// (ENOMEM) and drops the connection. oxmq allocates only as the bytes arrive, so it refuses
/// such a header itself, before any of them (a peer announcing 2^62 bytes).
fn memory_bound() -> u64 {
    static BOUND: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BOUND.get_or_init(|| {
        let mut si = std::mem::MaybeUninit::<libc::sysinfo>::zeroed();
        // SAFETY: `si` is writable storage for one `sysinfo` struct.
        if unsafe { libc::sysinfo(si.as_mut_ptr()) } != 0 {
            return isize::MAX as u64;
        }
        // SAFETY: sysinfo succeeded and filled it.
        let si = unsafe { si.assume_init() };
        let unit = u64::from(si.mem_unit.max(1));
        // `c_ulong`: 64 bits here, 32 on other targets.
        #[allow(clippy::unnecessary_cast)]
        let (ram, swap) = (si.totalram as u64, si.totalswap as u64);
        ram.saturating_add(swap).saturating_mul(unit).min(isize::MAX as u64)
    })
}

pub(crate) use crate::opt::value::{bool_val, int_min, int_val};
use crate::opt::value::{i64_val, u64_val};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_like_libzmq() {
        let mut o = Options::new(false);
        assert!(o.set(opt::SNDHWM, &5i32.to_ne_bytes()).unwrap());
        assert_eq!(o.sndhwm, 5);
        assert_eq!(o.set(opt::SNDHWM, &(-1i32).to_ne_bytes()), Err(Error::Invalid));
        assert_eq!(o.set(opt::SNDHWM, &[1, 2]), Err(Error::Invalid));
        assert_eq!(o.set(opt::ROUTING_ID, &[0, 1]), Err(Error::Invalid));
        assert_eq!(o.set(opt::ROUTING_ID, b""), Err(Error::Invalid));
        assert_eq!(o.set(opt::IMMEDIATE, &2i32.to_ne_bytes()), Err(Error::Invalid));
        assert!(o.set(opt::MAXMSGSIZE, &100i64.to_ne_bytes()).unwrap());
        assert_eq!(o.max_msg_size(), Some(100));
        o.set(opt::MAXMSGSIZE, &(-1i64).to_ne_bytes()).unwrap();
        let all = o.max_msg_size().expect("what the machine holds");
        assert!(all > 1 << 31 && all < 1 << 62, "as large as memory allows: {all}");
        o.ctx_max_msgsz = Some(50);
        assert_eq!(o.max_msg_size(), Some(50), "bounded by the context's MAX_MSGSZ once set");
        o.set(opt::MAXMSGSIZE, &20i64.to_ne_bytes()).unwrap();
        assert_eq!(o.max_msg_size(), Some(20));
        assert_eq!(o.set(opt::MAXMSGSIZE, &100i32.to_ne_bytes()), Err(Error::Invalid));
        assert_eq!(o.set(9999, &[0; 4]), Ok(false));
        assert_eq!(o.get(opt::LINGER), Some((-1i32).to_ne_bytes().to_vec()));
    }
}
