//! Accept filters of a listening socket: `ZMQ_TCP_ACCEPT_FILTER` (peer address in one of a
//! list of CIDR ranges) and `ZMQ_IPC_FILTER_UID/GID/PID` (peer credentials from
//! `SO_PEERCRED`). As in libzmq, an empty list accepts everyone; a connection no filter admits
//! is closed right after `accept`, before any handshake. Filters are part of the option
//! snapshot taken at bind time, so they apply to later binds only.

use crate::error::{Error, Result};
use std::net::IpAddr;

/// One `ZMQ_TCP_ACCEPT_FILTER` entry: an address and a prefix length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AddrMask {
    addr: IpAddr,
    bits: u8,
}

impl AddrMask {
    /// Parses libzmq's syntax: a numeric IPv4 or IPv6 address (IPv6 optionally in brackets),
    /// optionally followed by `/bits` (0..=32 or 0..=128; absent means the whole address).
    /// Anything else (a host name, an empty or out-of-range mask) is `EINVAL`.
    pub(crate) fn parse(s: &str) -> Result<AddrMask> {
        let (a, m) = match s.rsplit_once('/') {
            Some((a, m)) => (a, Some(m)),
            None => (s, None),
        };
        let a = a.strip_prefix('[').and_then(|x| x.strip_suffix(']')).unwrap_or(a);
        let addr: IpAddr = a.parse().map_err(|_| Error::Invalid)?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let bits = match m {
            None => max,
            Some(m) => {
                if m.is_empty() || !m.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(Error::Invalid);
                }
                let n: u32 = m.parse().map_err(|_| Error::Invalid)?;
                if n > max as u32 {
                    return Err(Error::Invalid);
                }
                n as u8
            }
        };
        Ok(AddrMask { addr, bits })
    }

    /// Whether `peer` lies in the range. An IPv4-mapped IPv6 peer (a dual-stack listener's
    /// view of an IPv4 client) is compared as the IPv4 address it carries; otherwise the
    /// families must agree, as in libzmq.
    pub(crate) fn matches(&self, peer: IpAddr) -> bool {
        let peer = match peer {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(peer),
            p => p,
        };
        let (a, p): (Vec<u8>, Vec<u8>) = match (self.addr, peer) {
            (IpAddr::V4(a), IpAddr::V4(p)) => (a.octets().to_vec(), p.octets().to_vec()),
            (IpAddr::V6(a), IpAddr::V6(p)) => (a.octets().to_vec(), p.octets().to_vec()),
            _ => return false,
        };
        let full = (self.bits / 8) as usize;
        if a[..full] != p[..full] {
            return false;
        }
        let rest = self.bits % 8;
        if rest == 0 {
            return true;
        }
        let mask = 0xffu8 << (8 - rest);
        a[full] & mask == p[full] & mask
    }
}

/// All accept filters of a socket.
#[derive(Clone, Debug, Default)]
pub(crate) struct AcceptFilters {
    pub tcp: Vec<AddrMask>,
    pub uid: Vec<u32>,
    pub gid: Vec<u32>,
    pub pid: Vec<i32>,
}

impl AcceptFilters {
    /// `ZMQ_TCP_ACCEPT_FILTER`: an empty value (libzmq: NULL, 0) clears the list, anything else
    /// adds one range. At most 255 bytes, as libzmq; an IPv6 range needs `ZMQ_IPV6` set first
    /// (libzmq resolves the filter with the socket's IPv6 setting).
    pub(crate) fn set_tcp(&mut self, v: &[u8], ipv6: bool) -> Result<()> {
        if v.is_empty() {
            self.tcp.clear();
            return Ok(());
        }
        if v.len() > 255 {
            return Err(Error::Invalid);
        }
        let s = std::str::from_utf8(v).map_err(|_| Error::Invalid)?;
        let m = AddrMask::parse(s)?;
        if m.addr.is_ipv6() && !ipv6 {
            return Err(Error::Invalid);
        }
        self.tcp.push(m);
        Ok(())
    }

    /// `ZMQ_IPC_FILTER_UID/GID/PID`: an empty value clears that list, a 4-byte id adds one.
    pub(crate) fn set_ipc(&mut self, option: i32, v: &[u8]) -> Result<()> {
        if v.is_empty() {
            match option {
                crate::opt::IPC_FILTER_UID => self.uid.clear(),
                crate::opt::IPC_FILTER_GID => self.gid.clear(),
                _ => self.pid.clear(),
            }
            return Ok(());
        }
        let a: [u8; 4] = v.try_into().map_err(|_| Error::Invalid)?;
        match option {
            crate::opt::IPC_FILTER_UID => self.uid.push(u32::from_ne_bytes(a)),
            crate::opt::IPC_FILTER_GID => self.gid.push(u32::from_ne_bytes(a)),
            _ => self.pid.push(i32::from_ne_bytes(a)),
        }
        Ok(())
    }

    /// Whether a TCP peer may stay.
    pub(crate) fn admit_tcp(&self, peer: Option<IpAddr>) -> bool {
        if self.tcp.is_empty() {
            return true;
        }
        peer.is_some_and(|p| self.tcp.iter().any(|m| m.matches(p)))
    }

    /// Whether an IPC peer may stay: its uid, its pid, its primary gid, or a group that lists
    /// the peer's user as a member is in the filters (libzmq's rule). Unreadable credentials
    /// refuse the peer when any filter is set.
    pub(crate) fn admit_ipc(&self, fd: std::os::fd::RawFd) -> bool {
        if self.uid.is_empty() && self.gid.is_empty() && self.pid.is_empty() {
            return true;
        }
        // SAFETY: ucred is plain old data; all zeroes is a valid value, overwritten by getsockopt.
        let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` is a writable ucred of `len` bytes; fd is the accepted socket.
        let rc = unsafe {
            libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_PEERCRED, &mut cred as *mut _ as *mut libc::c_void, &mut len)
        };
        if rc != 0 {
            return false;
        }
        if self.uid.contains(&cred.uid) || self.gid.contains(&cred.gid) || self.pid.contains(&cred.pid) {
            return true;
        }
        if self.gid.is_empty() {
            return false;
        }
        let Some(user) = user_name(cred.uid) else { return false };
        self.gid.iter().any(|&g| group_has_member(g, &user))
    }
}

fn user_name(uid: u32) -> Option<Vec<u8>> {
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: passwd is plain old data (null pointers and zeroes), filled by getpwuid_r.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the call; the strings point into `buf`.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: pw_name is a NUL-terminated string inside `buf`.
    Some(unsafe { std::ffi::CStr::from_ptr(pw.pw_name) }.to_bytes().to_vec())
}

fn group_has_member(gid: u32, user: &[u8]) -> bool {
    let mut buf = vec![0 as libc::c_char; 65536];
    // SAFETY: group is plain old data (null pointers and zeroes), filled by getgrgid_r.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::group = std::ptr::null_mut();
    // SAFETY: as in `user_name`; gr_mem is a NULL-terminated array of strings inside `buf`.
    let rc = unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || gr.gr_mem.is_null() {
        return false;
    }
    let mut p = gr.gr_mem;
    // SAFETY: getgrgid_r succeeded: gr_mem is a null-terminated array of C strings in `buf`.
    unsafe {
        while !(*p).is_null() {
            if std::ffi::CStr::from_ptr(*p).to_bytes() == user {
                return true;
            }
            p = p.add(1);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_matches_like_libzmq() {
        for bad in ["foo", "0.0.0.0foo", "0.0.0.0/foo", "0.0.0.0/", "0.0.0.0/-1", "0.0.0.0/33", "::1/129", "localhost"] {
            assert_eq!(AddrMask::parse(bad), Err(Error::Invalid), "{bad}");
        }
        let lo = "127.0.0.1".parse().unwrap();
        assert!(AddrMask::parse("127.0.0.1/32").unwrap().matches(lo));
        assert!(AddrMask::parse("127.0.0.1").unwrap().matches(lo));
        assert!(AddrMask::parse("0.0.0.0/0").unwrap().matches(lo));
        assert!(AddrMask::parse("127.0.0.0/9").unwrap().matches(lo));
        assert!(!AddrMask::parse("127.0.0.255/32").unwrap().matches(lo));
        assert!(!AddrMask::parse("126.0.0.0/7").unwrap().matches("128.0.0.1".parse().unwrap()));
        assert!(AddrMask::parse("[::1]/128").unwrap().matches("::1".parse().unwrap()));
        assert!(!AddrMask::parse("::1").unwrap().matches(lo), "families must agree");
        assert!(AddrMask::parse("127.0.0.1/32").unwrap().matches("::ffff:127.0.0.1".parse().unwrap()));
    }
}
