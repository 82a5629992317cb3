//! Connection properties on received messages: what libzmq's `zmq_msg_gets` reads.
//!
//! When a connection's handshake completes, the session gathers one [`Properties`] for it, in
//! libzmq's order of precedence (the first value of a name wins): Peer-Address, then oxmq's
//! ZMTP-Version (the negotiated revision, "1.0", "2.0", "3.0" or "3.1"; libzmq has no such
//! property or event), then oxmq's TLS-Peer-Subject (tls and wss with a verified peer
//! certificate), then what the ZAP handler returned (User-Id and its metadata), then the
//! peer's READY properties (Socket-Type, Identity, application properties; a ZMTP 2.0 peer's
//! Socket-Type comes from its greeting). The session hands it to the socket side
//! in-band, on the routing-id frame that opens each connection in the pipe; the socket's pipe
//! end keeps it and attaches it (one shared `Arc`) to every message it reads from that
//! connection, on the application thread, so the I/O thread never touches it per message.

/// The properties of the connection a message arrived on. Names compare case-insensitively
/// (ZMTP property names are case-insensitive); values are bytes, kept NUL-terminated so the
/// C ABI can hand out pointers into them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Properties {
    entries: Vec<(Box<str>, Box<[u8]>)>,
    /// The connection's file descriptor (libzmq's deprecated `ZMQ_SRCFD`); `None` for
    /// connections without one (inproc). Valid only while the connection lives.
    src_fd: Option<i32>,
}

/// libzmq's names for the properties the engine adds.
pub const PEER_ADDRESS: &str = "Peer-Address";
/// The user id a ZAP handler returned.
pub const USER_ID: &str = "User-Id";
/// The negotiated ZMTP revision (oxmq's; set before the peer's properties, so a peer cannot
/// override it).
pub const ZMTP_VERSION: &str = "ZMTP-Version";
/// The subject of the peer's verified TLS certificate (tls:// and wss://), as an RFC 4514
/// string such as `CN=client,O=Example` (oxmq's; set before the peer's properties, so a peer
/// cannot override it).
pub const TLS_PEER_SUBJECT: &str = "TLS-Peer-Subject";

impl Properties {
    /// Gathers a connection's properties (see the module docs for the order).
    pub(crate) fn gather(
        peer_address: &str,
        version: zmtp::Version,
        zap: Option<&zmtp::ZapReply>,
        peer: &zmtp::Metadata,
        tls_subject: Option<&str>,
    ) -> Properties {
        let mut p = Properties::default();
        if !peer_address.is_empty() {
            p.insert(PEER_ADDRESS, peer_address.as_bytes());
        }
        p.insert(ZMTP_VERSION, version.as_str().as_bytes());
        if let Some(s) = tls_subject {
            p.insert(TLS_PEER_SUBJECT, s.as_bytes());
        }
        if let Some(z) = zap {
            p.insert(USER_ID, &z.user_id);
            for (name, value) in z.metadata.iter() {
                p.insert(name, value);
            }
        }
        for (name, value) in peer.iter() {
            p.insert(name, value);
        }
        p
    }

    pub(crate) fn set_src_fd(&mut self, fd: i32) {
        self.src_fd = Some(fd);
    }

    /// The file descriptor of the connection (see `ZMQ_SRCFD` in zmq_msg_get(3)).
    pub fn src_fd(&self) -> Option<i32> {
        self.src_fd
    }

    pub(crate) fn insert(&mut self, name: &str, value: &[u8]) {
        if self.get(name).is_some() {
            return;
        }
        let mut v = Vec::with_capacity(value.len() + 1);
        v.extend_from_slice(value);
        v.push(0);
        self.entries.push((name.into(), v.into_boxed_slice()));
    }

    /// The value of property `name`, if the connection has it.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.get_with_nul(name).map(|v| &v[..v.len() - 1])
    }

    /// The value followed by a NUL byte (for C callers). "Routing-Id" (libzmq's newer name,
    /// `ZMQ_MSG_PROPERTY_ROUTING_ID`) and "Identity" (what ZMTP's READY carries) find each
    /// other, as libzmq's lookup does.
    pub fn get_with_nul(&self, name: &str) -> Option<&[u8]> {
        let find = |name: &str| self.entries.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| &v[..]);
        find(name).or_else(|| {
            if name.eq_ignore_ascii_case("Identity") {
                find("Routing-Id")
            } else if name.eq_ignore_ascii_case("Routing-Id") {
                find("Identity")
            } else {
                None
            }
        })
    }

    /// Every property, in order of precedence.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.entries.iter().map(|(n, v)| (&n[..], &v[..v.len() - 1]))
    }

    /// The number of properties.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The address libzmq reports for a peer: the IP without the port (tcp), nothing otherwise.
pub(crate) fn peer_address(addr: Option<std::net::SocketAddr>) -> String {
    addr.map(|a| a.ip().to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn precedence_and_lookup() {
        let mut peer = zmtp::Metadata::new();
        peer.insert("Socket-Type", &b"DEALER"[..]);
        peer.insert("User-Id", &b"spoofed"[..]);
        let mut zmeta = zmtp::Metadata::new();
        zmeta.insert("X-Tier", &b"gold"[..]);
        let zap = zmtp::ZapReply {
            status_code: 200,
            status_text: Bytes::new(),
            user_id: Bytes::from_static(b"alice"),
            metadata: zmeta,
        };
        let p = Properties::gather("10.0.0.1", zmtp::Version::V3_1, Some(&zap), &peer, None);
        assert_eq!(p.get("Peer-Address"), Some(&b"10.0.0.1"[..]));
        assert_eq!(p.get("user-id"), Some(&b"alice"[..]), "ZAP wins over the peer's READY");
        assert_eq!(p.get("X-Tier"), Some(&b"gold"[..]));
        assert_eq!(p.get_with_nul("Socket-Type"), Some(&b"DEALER\0"[..]));
        assert_eq!(p.get("Nope"), None);
        assert_eq!(p.get("Routing-Id"), None);
        assert_eq!(p.get("ZMTP-Version"), Some(&b"3.1"[..]));
        assert_eq!(p.len(), 5);
        let names: Vec<_> = p.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["Peer-Address", "ZMTP-Version", "User-Id", "X-Tier", "Socket-Type"]);
        let mut with_id = zmtp::Metadata::new();
        with_id.insert("Identity", &b"peer-1"[..]);
        let p = Properties::gather("", zmtp::Version::V2_0, None, &with_id, None);
        assert_eq!(p.get("Routing-Id"), Some(&b"peer-1"[..]));
        assert_eq!(p.get("zmtp-version"), Some(&b"2.0"[..]));
        let mut spoof = zmtp::Metadata::new();
        spoof.insert("ZMTP-Version", &b"9.9"[..]);
        let bare = Properties::gather("", zmtp::Version::V3_0, None, &spoof, None);
        assert_eq!(bare.len(), 1, "the peer cannot override the negotiated version");
        assert_eq!(bare.get("ZMTP-Version"), Some(&b"3.0"[..]));
        assert!(bare.get("User-Id").is_none());
        assert_eq!(peer_address(None), "");
    }
}
