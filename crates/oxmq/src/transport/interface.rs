//! Network interfaces by name (`lo`, `eth0`), for an address written as an interface: a tcp
//! connect's source, or a tcp bind.
//!
//! One `getifaddrs` per lookup: the kernel's current list, so an interface that came up since
//! the last connect attempt is found. It asks the kernel only (netlink), never a name service,
//! so it does not wait on the network.

use std::ffi::CStr;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// The first address of the wanted family (IPv6 when `v6`, else IPv4) on the interface named
/// `name`, with port 0 (an IPv6 address keeps its scope, which a link-local one needs to be
/// bound). None when there is no such interface, it has no address of that family, or the
/// list cannot be read: libzmq then tries the name as an address, and so do the callers.
pub(crate) fn address(name: &str, v6: bool) -> Option<SocketAddr> {
    let want = if v6 { libc::AF_INET6 } else { libc::AF_INET };
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs writes a list it allocated into `list` on success; on failure we
    // return without touching it.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut found = None;
    let mut cur = list;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, alive until freeifaddrs
        // below; its fields are read, not kept.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
            continue;
        }
        // SAFETY: a non-null ifa_addr points to a sockaddr at least as long as its family's.
        let family = i32::from(unsafe { (*ifa.ifa_addr).sa_family });
        // SAFETY: a non-null ifa_name is a NUL-terminated interface name.
        if family != want || unsafe { CStr::from_ptr(ifa.ifa_name) }.to_bytes() != name.as_bytes() {
            continue;
        }
        found = Some(if v6 {
            // SAFETY: the family is AF_INET6, so the address is a sockaddr_in6.
            let a = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
            SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from(a.sin6_addr.s6_addr), 0, 0, a.sin6_scope_id))
        } else {
            // SAFETY: the family is AF_INET, so the address is a sockaddr_in.
            let a = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
            SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)), 0))
        });
        break;
    }
    // SAFETY: `list` came from getifaddrs and nothing read from it is used past this point.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// Whether an interface of this name exists now (whatever its addresses).
#[cfg(test)]
pub(crate) fn exists(name: &str) -> bool {
    std::ffi::CString::new(name)
        // SAFETY: a NUL-terminated string that outlives the call.
        .map(|c| unsafe { libc::if_nametoindex(c.as_ptr()) } != 0)
        .unwrap_or(false)
}

/// Whether the loopback interface `lo` has `::1` (tests over IPv6 skip without it).
#[cfg(test)]
pub(crate) fn loopback_has_v6() -> bool {
    matches!(address("lo", true), Some(a) if a.ip() == Ipv6Addr::LOCALHOST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    #[test]
    fn the_loopback_interface_has_its_addresses() {
        assert!(exists("lo"));
        assert_eq!(address("lo", false).map(|a| a.ip()), Some(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        if loopback_has_v6() {
            assert_eq!(address("lo", true).map(|a| a.ip()), Some(IpAddr::V6(Ipv6Addr::LOCALHOST)));
        }
    }

    #[test]
    fn an_unknown_interface_has_none() {
        assert!(!exists("oxmq-no-such0"));
        assert_eq!(address("oxmq-no-such0", false), None);
        assert_eq!(address("", false), None);
    }
}
