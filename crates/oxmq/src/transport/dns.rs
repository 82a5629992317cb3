//! Every address a host name resolves to, for connects that follow DNS
//! (`opt::OXMQ_DNS_FOLLOW`, `socket/follow.rs`).
//!
//! `resolve.rs` picks one address per connect attempt; a followed endpoint needs the whole
//! answer, and needs to tell an answer that the name has no address (the record was removed:
//! its connections should go) from a failure to get an answer (the name server is down: keep
//! what is connected). `std`'s `ToSocketAddrs` folds both into one `io::Error`, so this calls
//! getaddrinfo itself and keeps its error code.
//!
//! Contract: [`lookup_all`] blocks on the name service; it is only called on a follower's
//! resolver thread, never on an I/O thread or in a socket call.

use std::net::{IpAddr, SocketAddr};

/// A lookup's outcome: the addresses (sorted, no duplicates; IPv4 only unless `ipv6`), or the
/// getaddrinfo error code (`EAI_*`) when there was no answer.
pub(crate) type Answer = std::result::Result<Vec<SocketAddr>, i32>;

/// True when `err` (an [`Answer`]'s error) says the name has no address, an answer as good as
/// an empty list; false for failures to get an answer (EAI_AGAIN: the server did not answer;
/// EAI_FAIL, EAI_SYSTEM, ...).
pub(crate) fn is_no_such_name(err: i32) -> bool {
    err == libc::EAI_NONAME || err == libc::EAI_NODATA || err == EAI_ADDRFAMILY
}

/// glibc's "no address in the requested family" (a GNU extension the libc crate lacks).
const EAI_ADDRFAMILY: i32 = -9;

/// Resolves `name` to every address of the families a connect may use: IPv4, and IPv6 too
/// when `ipv6` (ZMQ_IPV6), each with `port`.
pub(crate) fn lookup_all(name: &str, port: u16, ipv6: bool) -> Answer {
    #[cfg(test)]
    if let Some(a) = tests::answer_for(name) {
        return a.map(|ips| finish(ips.into_iter(), port, ipv6));
    }
    let Ok(cname) = std::ffi::CString::new(name) else { return Err(libc::EAI_NONAME) };
    // SAFETY: an all-zero addrinfo is a valid hints value (no flags, any family).
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_family = if ipv6 { libc::AF_UNSPEC } else { libc::AF_INET };
    hints.ai_socktype = libc::SOCK_STREAM;
    let mut res: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: valid C string, hints and out-pointer; the list is freed below.
    let rc = unsafe { libc::getaddrinfo(cname.as_ptr(), std::ptr::null(), &hints, &mut res) };
    if rc != 0 {
        return Err(rc);
    }
    let mut ips = Vec::new();
    let mut p = res;
    while !p.is_null() {
        // SAFETY: `p` walks the list getaddrinfo returned, which stays valid until freed.
        let ai = unsafe { &*p };
        if !ai.ai_addr.is_null() {
            match ai.ai_family {
                libc::AF_INET => {
                    // SAFETY: AF_INET entries carry a sockaddr_in.
                    let sin = unsafe { &*(ai.ai_addr as *const libc::sockaddr_in) };
                    ips.push(IpAddr::from(sin.sin_addr.s_addr.to_ne_bytes()));
                }
                libc::AF_INET6 => {
                    // SAFETY: AF_INET6 entries carry a sockaddr_in6.
                    let sin6 = unsafe { &*(ai.ai_addr as *const libc::sockaddr_in6) };
                    ips.push(IpAddr::from(sin6.sin6_addr.s6_addr));
                }
                _ => {}
            }
        }
        p = ai.ai_next;
    }
    // SAFETY: `res` came from a successful getaddrinfo and is freed once.
    unsafe { libc::freeaddrinfo(res) };
    Ok(finish(ips.into_iter(), port, ipv6))
}

fn finish(ips: impl Iterator<Item = IpAddr>, port: u16, ipv6: bool) -> Vec<SocketAddr> {
    let mut v: Vec<SocketAddr> =
        ips.map(|ip| ip.to_canonical()).filter(|ip| ipv6 || ip.is_ipv4()).map(|ip| SocketAddr::new(ip, port)).collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// Answers the unit tests give for names of their own (a name ending in `.oxmq-test`),
    /// so that follow's membership changes are tested without a name server. Real lookups
    /// are tested in the multi-host suite (`scripts/test.d/90-hosts.sh`, with dnsmasq).
    type Fake = std::result::Result<Vec<IpAddr>, i32>;
    static FAKE: Mutex<Option<HashMap<String, Fake>>> = Mutex::new(None);

    pub(crate) fn set_answer(name: &str, a: Fake) {
        FAKE.lock().unwrap().get_or_insert_with(HashMap::new).insert(name.to_string(), a);
    }

    static LOOKUPS: Mutex<Option<HashMap<String, u64>>> = Mutex::new(None);

    /// How many times `name` was looked up.
    pub(crate) fn lookups(name: &str) -> u64 {
        LOOKUPS.lock().unwrap().as_ref().and_then(|m| m.get(name).copied()).unwrap_or(0)
    }

    pub(super) fn answer_for(name: &str) -> Option<Fake> {
        if !name.ends_with(".oxmq-test") {
            return None;
        }
        *LOOKUPS.lock().unwrap().get_or_insert_with(HashMap::new).entry(name.to_string()).or_default() += 1;
        Some(FAKE.lock().unwrap().as_ref().and_then(|m| m.get(name).cloned()).unwrap_or(Err(libc::EAI_NONAME)))
    }

    #[test]
    fn localhost_resolves_to_loopback_by_family() {
        let v4 = lookup_all("localhost", 7, false).unwrap();
        assert!(v4.contains(&"127.0.0.1:7".parse().unwrap()), "{v4:?}");
        assert!(v4.iter().all(|a| a.is_ipv4()));
        let both = lookup_all("localhost", 7, true).unwrap();
        assert!(both.contains(&"127.0.0.1:7".parse().unwrap()), "{both:?}");
    }

    #[test]
    fn a_missing_name_is_told_apart_from_a_failure() {
        let e = lookup_all("no-such-host.invalid", 1, false).unwrap_err();
        assert!(is_no_such_name(e), "{e}");
        assert!(!is_no_such_name(libc::EAI_AGAIN));
        assert!(lookup_all("bad\0name", 1, false).is_err());
    }

    #[test]
    fn answers_are_sorted_without_duplicates_and_mapped_v4_is_v4() {
        let ips: Vec<IpAddr> = vec!["10.0.0.2".parse().unwrap(), "::ffff:10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap()];
        let v = finish(ips.into_iter(), 9, false);
        assert_eq!(v, vec!["10.0.0.1:9".parse().unwrap(), "10.0.0.2:9".parse().unwrap()]);
    }
}
