//! The WebSocket opening handshake (RFC 6455 §4) as ZWS 2.0 uses it: the client's upgrade
//! request naming the resource path and the ZWS protocols it offers, the server's choice.
//! Sans-I/O: bytes in, a decision and bytes out.
//!
//! A request or response is read only up to its blank line and refused when it is larger than
//! [`MAX_HEAD`] or has more than [`MAX_HEADERS`] lines, so a peer cannot make us buffer
//! without bound; what follows the blank line is the peer's first frames.

use sha1::{Digest, Sha1};

/// The most bytes an upgrade request or response may take.
pub(crate) const MAX_HEAD: usize = 8 * 1024;
/// The most header lines it may have.
pub(crate) const MAX_HEADERS: usize = 64;

/// A ZWS 2.0 protocol (`Sec-WebSocket-Protocol`), each a ZMTP mechanism but `Raw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Zws {
    /// `ZWS2.0`: no mechanism; each side's first message is its routing id (RFC 45).
    Raw,
    /// `ZWS2.0/NULL`.
    Null,
    /// `ZWS2.0/PLAIN`.
    Plain,
    /// `ZWS2.0/CURVE`.
    Curve,
}

impl Zws {
    pub(crate) fn token(self) -> &'static str {
        match self {
            Zws::Raw => "ZWS2.0",
            Zws::Null => "ZWS2.0/NULL",
            Zws::Plain => "ZWS2.0/PLAIN",
            Zws::Curve => "ZWS2.0/CURVE",
        }
    }

    /// The same protocol under a name a browser can offer: RFC 6455 takes a subprotocol name to
    /// be an HTTP token, in which `/` may not appear, so browsers (and Node's `ws`) refuse to
    /// offer `ZWS2.0/NULL`. oxmq's servers take `ZWS2.0-NULL`, `ZWS2.0-PLAIN` and
    /// `ZWS2.0-CURVE` as the same protocols and answer with the name offered; its clients offer
    /// RFC 45's names, which libzmq knows.
    fn alias(self) -> Option<&'static str> {
        match self {
            Zws::Raw => None,
            Zws::Null => Some("ZWS2.0-NULL"),
            Zws::Plain => Some("ZWS2.0-PLAIN"),
            Zws::Curve => Some("ZWS2.0-CURVE"),
        }
    }

    fn from_token(t: &str) -> Option<Zws> {
        [Zws::Raw, Zws::Null, Zws::Plain, Zws::Curve].into_iter().find(|z| z.token() == t || z.alias() == Some(t))
    }

    /// The protocols a socket with this mechanism speaks, preferred first (libzmq's client
    /// offers `ZWS2.0/NULL,ZWS2.0` for NULL).
    pub(crate) fn offers(self) -> &'static [Zws] {
        match self {
            Zws::Raw | Zws::Null => &[Zws::Null, Zws::Raw],
            Zws::Plain => &[Zws::Plain],
            Zws::Curve => &[Zws::Curve],
        }
    }
}

/// Why an upgrade failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum UpgradeError {
    /// Over [`MAX_HEAD`] bytes or [`MAX_HEADERS`] lines.
    TooLarge,
    /// Not an HTTP/1.1 GET upgrade to websocket (or not a 101 answer to one).
    Malformed(&'static str),
    /// The request named another resource than the one bound.
    NotFound,
    /// No protocol offered that this socket speaks.
    NoProtocol,
    /// The server's Sec-WebSocket-Accept does not match our key.
    BadAccept,
}

impl UpgradeError {
    /// The HTTP status a server answers with.
    pub(crate) fn status(&self) -> &'static str {
        match self {
            UpgradeError::TooLarge => "431 Request Header Fields Too Large",
            UpgradeError::NotFound => "404 Not Found",
            _ => "400 Bad Request",
        }
    }
}

/// The head of a request or response: where its blank line ends, or None while incomplete.
pub(crate) fn head_len(buf: &[u8]) -> Result<Option<usize>, UpgradeError> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    match end {
        Some(n) if n <= MAX_HEAD => Ok(Some(n)),
        Some(_) => Err(UpgradeError::TooLarge),
        None if buf.len() >= MAX_HEAD => Err(UpgradeError::TooLarge),
        None => Ok(None),
    }
}

/// Header lines as (name, value), names as sent.
type Headers<'a> = Vec<(&'a str, &'a str)>;

/// The first line and the headers of a complete head.
fn split(head: &[u8]) -> Result<(&str, Headers<'_>), UpgradeError> {
    let text = std::str::from_utf8(head).map_err(|_| UpgradeError::Malformed("not UTF-8"))?;
    let mut lines = text.strip_suffix("\r\n\r\n").ok_or(UpgradeError::Malformed("no blank line"))?.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut headers = Vec::new();
    for line in lines {
        if headers.len() == MAX_HEADERS {
            return Err(UpgradeError::TooLarge);
        }
        let (name, value) = line.split_once(':').ok_or(UpgradeError::Malformed("a header without a colon"))?;
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c.is_control()) {
            return Err(UpgradeError::Malformed("a bad header name"));
        }
        headers.push((name, value.trim_matches(|c| c == ' ' || c == '\t')));
    }
    Ok((first, headers))
}

fn header<'a>(headers: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
}

/// Every comma-separated element of every header `name` (they may repeat).
fn elements<'a>(headers: &'a [(&str, &'a str)], name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    headers.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).flat_map(|(_, v)| v.split(',').map(str::trim))
}

fn is_upgrade(headers: &[(&str, &str)]) -> bool {
    header(headers, "Upgrade").is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
        && elements(headers, "Connection").any(|e| e.eq_ignore_ascii_case("upgrade"))
}

/// Sec-WebSocket-Accept for `key`.
pub(crate) fn accept_key(key: &str) -> String {
    let mut h = Sha1::new();
    h.update(key.as_bytes());
    h.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    base64(&h.finalize())
}

/// What the server decided about a request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Accepted {
    pub protocol: Zws,
    /// The 101 response.
    pub response: Vec<u8>,
}

/// Reads a client's request (`head`, complete): the protocol chosen among what `mechanism`
/// speaks, and the response. `path`: the resource served (`/` serves every path, as libzmq's
/// ws listener, which never looks at it).
pub(crate) fn accept(head: &[u8], path: &str, mechanism: Zws) -> Result<Accepted, UpgradeError> {
    let (first, headers) = split(head)?;
    let mut parts = first.split(' ');
    let (Some("GET"), Some(target), Some("HTTP/1.1"), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(UpgradeError::Malformed("not a GET request line"));
    };
    // An absolute-form target names the path after its authority.
    let target = match target.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    let resource = target.split('?').next().unwrap_or(target);
    if path != "/" && resource != path {
        return Err(UpgradeError::NotFound);
    }
    if !is_upgrade(&headers) {
        return Err(UpgradeError::Malformed("not a websocket upgrade"));
    }
    if header(&headers, "Sec-WebSocket-Version").is_some_and(|v| v != "13") {
        return Err(UpgradeError::Malformed("Sec-WebSocket-Version is not 13"));
    }
    let key = header(&headers, "Sec-WebSocket-Key").filter(|k| !k.is_empty()).ok_or(UpgradeError::Malformed("no key"))?;
    // The first protocol offered that this socket speaks (libzmq's choice), named as offered.
    let offers = mechanism.offers();
    let (name, protocol) = elements(&headers, "Sec-WebSocket-Protocol")
        .find_map(|t| Zws::from_token(t).filter(|z| offers.contains(z)).map(|z| (t, z)))
        .ok_or(UpgradeError::NoProtocol)?;
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: {name}\r\n\r\n",
        accept_key(key),
    );
    Ok(Accepted { protocol, response: response.into_bytes() })
}

/// A refusal the server writes before it closes.
pub(crate) fn refusal(e: &UpgradeError) -> Vec<u8> {
    format!("HTTP/1.1 {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", e.status()).into_bytes()
}

/// The client's request for `path` at `authority`, offering what `mechanism` speaks; `key` is
/// 16 random bytes.
pub(crate) fn request(path: &str, authority: &str, mechanism: Zws, key: &[u8; 16]) -> (Vec<u8>, String) {
    let key = base64(key);
    let offers: Vec<&str> = mechanism.offers().iter().map(|z| z.token()).collect();
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Protocol: {}\r\nSec-WebSocket-Version: 13\r\n\r\n",
        offers.join(",")
    );
    (req.into_bytes(), key)
}

/// Reads the server's response (`head`, complete) to our request with `key`: the protocol it
/// chose, which must be one we offered.
pub(crate) fn confirm(head: &[u8], key: &str, mechanism: Zws) -> Result<Zws, UpgradeError> {
    let (first, headers) = split(head)?;
    let mut parts = first.splitn(3, ' ');
    let (Some("HTTP/1.1"), Some(status)) = (parts.next(), parts.next()) else {
        return Err(UpgradeError::Malformed("not an HTTP/1.1 status line"));
    };
    match status {
        "101" => {}
        "404" => return Err(UpgradeError::NotFound),
        _ => return Err(UpgradeError::Malformed("not 101 Switching Protocols")),
    }
    if !is_upgrade(&headers) {
        return Err(UpgradeError::Malformed("not a websocket upgrade"));
    }
    if header(&headers, "Sec-WebSocket-Accept") != Some(accept_key(key).as_str()) {
        return Err(UpgradeError::BadAccept);
    }
    let chosen = header(&headers, "Sec-WebSocket-Protocol").and_then(Zws::from_token).ok_or(UpgradeError::NoProtocol)?;
    if !mechanism.offers().contains(&chosen) {
        return Err(UpgradeError::NoProtocol);
    }
    Ok(chosen)
}

/// Standard base64 with padding.
fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(T[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_key_of_rfc_6455s_example() {
        assert_eq!(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    #[test]
    fn a_request_is_accepted_and_its_answer_confirmed() {
        let (req, key) = request("/zmq", "127.0.0.1:5555", Zws::Null, &[7; 16]);
        let n = head_len(&req).unwrap().unwrap();
        let a = accept(&req[..n], "/zmq", Zws::Null).unwrap();
        assert_eq!(a.protocol, Zws::Null);
        assert_eq!(confirm(&a.response, &key, Zws::Null), Ok(Zws::Null));
        assert_eq!(confirm(&a.response, "other", Zws::Null), Err(UpgradeError::BadAccept));
        assert_eq!(accept(&req[..n], "/other", Zws::Null), Err(UpgradeError::NotFound));
        assert_eq!(accept(&req[..n], "/", Zws::Null).map(|a| a.protocol), Ok(Zws::Null), "/ serves every path");
        assert_eq!(accept(&req[..n], "/zmq", Zws::Plain), Err(UpgradeError::NoProtocol));
    }

    #[test]
    fn a_plain_zws_offer_is_taken_by_a_null_socket() {
        let req = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n\
                    Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: ZWS2.0\r\n\r\n";
        assert_eq!(accept(req, "/", Zws::Null).map(|a| a.protocol), Ok(Zws::Raw));
    }

    #[test]
    fn a_browser_safe_name_is_taken_and_answered_as_offered() {
        for (offer, mechanism, chosen) in [
            ("ZWS2.0-PLAIN", Zws::Plain, Zws::Plain),
            ("ZWS2.0-CURVE", Zws::Curve, Zws::Curve),
            ("ZWS2.0-NULL, ZWS2.0", Zws::Null, Zws::Null),
            ("ZWS2.0, ZWS2.0-NULL", Zws::Null, Zws::Raw),
        ] {
            let req = format!(
                "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                 Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: {offer}\r\n\r\n"
            );
            let a = accept(req.as_bytes(), "/", mechanism).unwrap();
            assert_eq!(a.protocol, chosen, "{offer}");
            let first = offer.split(',').next().unwrap();
            let echoed = format!("Sec-WebSocket-Protocol: {first}\r\n");
            assert!(String::from_utf8_lossy(&a.response).contains(&echoed), "{offer}");
        }
    }

    #[test]
    fn malformed_and_oversized_heads_are_refused() {
        assert_eq!(head_len(&vec![b'a'; MAX_HEAD]), Err(UpgradeError::TooLarge));
        assert_eq!(head_len(b"GET / HTTP/1.1\r\n"), Ok(None));
        for bad in [
            &b"POST / HTTP/1.1\r\n\r\n"[..],
            b"GET / HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            b"GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
            b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: ZWS2.0\r\n\r\n",
        ] {
            assert!(matches!(accept(bad, "/", Zws::Null), Err(UpgradeError::Malformed(_))), "{:?}", String::from_utf8_lossy(bad));
        }
        let mut many = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..=MAX_HEADERS {
            many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(accept(&many, "/", Zws::Null), Err(UpgradeError::TooLarge));
    }
}
