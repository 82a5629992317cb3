//! The etcd directory: names kept in etcd (v3) through its JSON gateway, so several name
//! servers share one replicated directory and etcd's leases expire the names of dead owners
//! even when the name server that held them dies too.
//!
//! Layout: key `/oxmq/wiring/names/<name>`, value `session \n kind \n endpoint \n style`,
//! attached to the owning session's lease. A name server grants one lease per client session
//! (TTL = the session's ttl rounded up to seconds; etcd enforces its own minimum), keeps it
//! alive on each PING, and revokes it when the session falls silent, which deletes the
//! session's names at once. Registration is a transaction: put if the key does not exist, or
//! if it exists with the same session (a client that moved to another name server, or came
//! back after a restart, takes its names over under the new lease).
//!
//! The HTTP client is a few lines over `std::net::TcpStream` (one request per connection,
//! bounded by timeouts); the responses are small, flat JSON from which we pick fields.

use crate::protocol::{Kind, Record, Style};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

const PREFIX: &str = "/oxmq/wiring/names/";
const IO_TIMEOUT: Duration = Duration::from_secs(3);

/// A client of one etcd endpoint (`http://host:port`).
#[derive(Clone, Debug)]
pub struct Etcd {
    host: String,
}

/// Result of a registration attempt.
#[derive(Debug, PartialEq, Eq)]
pub enum Put {
    Done,
    /// Owned by another session.
    Taken,
}

impl Etcd {
    /// `url` is `http://host:port` (the client URL etcd listens on).
    pub fn new(url: &str) -> Result<Etcd, String> {
        let host = url.strip_prefix("http://").ok_or_else(|| format!("etcd url must start with http://: {url}"))?;
        let host = host.trim_end_matches('/');
        if host.is_empty() {
            return Err(format!("bad etcd url {url}"));
        }
        Ok(Etcd { host: host.to_string() })
    }

    fn post(&self, path: &str, body: &str) -> Result<String, String> {
        let addr = self
            .host
            .to_socket_addrs()
            .map_err(|e| format!("etcd {}: {e}", self.host))?
            .next()
            .ok_or_else(|| format!("etcd {}: no address", self.host))?;
        let mut s = TcpStream::connect_timeout(&addr, IO_TIMEOUT).map_err(|e| format!("etcd {}: {e}", self.host))?;
        s.set_read_timeout(Some(IO_TIMEOUT)).map_err(|e| e.to_string())?;
        s.set_write_timeout(Some(IO_TIMEOUT)).map_err(|e| e.to_string())?;
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.host,
            body.len()
        );
        s.write_all(req.as_bytes()).map_err(|e| format!("etcd write: {e}"))?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        // Read until the first JSON object of the body is complete: streaming endpoints
        // (lease keepalive) keep the connection open after it.
        loop {
            let n = s.read(&mut chunk).map_err(|e| format!("etcd read: {e}"))?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            if buf.len() > 1 << 20 {
                return Err("etcd response too large".into());
            }
            if let Some(b) = body_of(&buf) {
                if complete_json(&b) {
                    break;
                }
            }
        }
        let text = String::from_utf8_lossy(&buf).into_owned();
        let status = text.split_whitespace().nth(1).unwrap_or("");
        let body = body_of(&buf).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
        if status != "200" {
            return Err(format!("etcd {path}: HTTP {status}: {body}"));
        }
        Ok(body)
    }

    /// Grants a lease of `ttl_s` seconds; its id.
    pub fn grant(&self, ttl_s: u64) -> Result<String, String> {
        let r = self.post("/v3/lease/grant", &format!("{{\"TTL\":\"{ttl_s}\"}}"))?;
        field(&r, "ID").ok_or_else(|| format!("etcd grant: no ID in {r}"))
    }

    /// Renews a lease; false when it has expired.
    pub fn keepalive(&self, lease: &str) -> Result<bool, String> {
        let r = self.post("/v3/lease/keepalive", &format!("{{\"ID\":\"{lease}\"}}"))?;
        Ok(field(&r, "TTL").map(|t| t != "0").unwrap_or(false))
    }

    /// Revokes a lease, deleting every key attached to it.
    pub fn revoke(&self, lease: &str) -> Result<(), String> {
        self.post("/v3/lease/revoke", &format!("{{\"ID\":\"{lease}\"}}")).map(|_| ())
    }

    /// Puts `name` for `session` under `lease` unless another session owns it.
    pub fn register(&self, session: &str, lease: &str, name: &str, rec: &Record) -> Result<Put, String> {
        let key = b64(format!("{PREFIX}{name}").as_bytes());
        let value = b64(encode_value(session, rec).as_bytes());
        let put = format!("{{\"request_put\":{{\"key\":\"{key}\",\"value\":\"{value}\",\"lease\":\"{lease}\"}}}}");
        let create = format!(
            "{{\"compare\":[{{\"key\":\"{key}\",\"result\":\"EQUAL\",\"target\":\"CREATE\",\"create_revision\":\"0\"}}],\"success\":[{put}],\"failure\":[{{\"request_range\":{{\"key\":\"{key}\"}}}}]}}"
        );
        let r = self.post("/v3/kv/txn", &create)?;
        if r.contains("\"succeeded\":true") {
            return Ok(Put::Done);
        }
        // Exists: ours (take it over under this lease) or someone else's. The take-over is a
        // compare-and-put on the value we read, so a concurrent owner cannot be overwritten.
        let Some(old) = field(&r, "value") else {
            return Err(format!("etcd txn: unexpected answer {r}"));
        };
        let owner = unb64(&old).and_then(|v| decode_value(&v)).map(|(s, _)| s);
        if owner.as_deref() != Some(session) {
            return Ok(Put::Taken);
        }
        let takeover = format!(
            "{{\"compare\":[{{\"key\":\"{key}\",\"result\":\"EQUAL\",\"target\":\"VALUE\",\"value\":\"{old}\"}}],\"success\":[{put}]}}"
        );
        let r = self.post("/v3/kv/txn", &takeover)?;
        Ok(if r.contains("\"succeeded\":true") { Put::Done } else { Put::Taken })
    }

    /// The record for `name`, if any.
    pub fn lookup(&self, name: &str) -> Result<Option<Record>, String> {
        let key = b64(format!("{PREFIX}{name}").as_bytes());
        let r = self.post("/v3/kv/range", &format!("{{\"key\":\"{key}\"}}"))?;
        Ok(field(&r, "value").and_then(|v| unb64(&v)).and_then(|v| decode_value(&v)).map(|(_, rec)| rec))
    }

    /// Deletes `name` if `session` owns it.
    pub fn withdraw(&self, session: &str, name: &str) -> Result<(), String> {
        let key = b64(format!("{PREFIX}{name}").as_bytes());
        let r = self.post("/v3/kv/range", &format!("{{\"key\":\"{key}\"}}"))?;
        let Some(old) = field(&r, "value") else { return Ok(()) };
        if unb64(&old).and_then(|v| decode_value(&v)).map(|(s, _)| s).as_deref() != Some(session) {
            return Ok(());
        }
        let del = format!(
            "{{\"compare\":[{{\"key\":\"{key}\",\"result\":\"EQUAL\",\"target\":\"VALUE\",\"value\":\"{old}\"}}],\"success\":[{{\"request_delete_range\":{{\"key\":\"{key}\"}}}}]}}"
        );
        self.post("/v3/kv/txn", &del).map(|_| ())
    }
}

fn encode_value(session: &str, r: &Record) -> String {
    format!("{session}\n{}\n{}\n{}\n{}", r.kind.as_str(), r.endpoint, r.style.as_str(), r.link)
}

fn decode_value(v: &str) -> Option<(String, Record)> {
    let mut it = v.split('\n');
    let session = it.next()?.to_string();
    let kind = Kind::parse(it.next()?)?;
    let endpoint = it.next()?.to_string();
    let style = Style::parse(it.next()?)?;
    // Values written before links existed end here.
    let link = it.next().unwrap_or_default().to_string();
    Some((session, Record { kind, endpoint, style, link }))
}

/// The body of an HTTP response (de-chunked), once the headers are complete.
fn body_of(buf: &[u8]) -> Option<Vec<u8>> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let raw = &buf[end + 4..];
    if !head.contains("transfer-encoding: chunked") {
        return Some(raw.to_vec());
    }
    let mut out = Vec::new();
    let mut rest = raw;
    loop {
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else { return Some(out) };
        let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..eol]).trim(), 16).ok()?;
        if size == 0 || rest.len() < eol + 2 + size {
            out.extend_from_slice(&rest[eol + 2..(eol + 2 + size).min(rest.len())]);
            return Some(out);
        }
        out.extend_from_slice(&rest[eol + 2..eol + 2 + size]);
        rest = &rest[(eol + 4 + size).min(rest.len())..];
    }
}

/// True when `b` holds one whole JSON object (braces balanced outside strings).
fn complete_json(b: &[u8]) -> bool {
    let (mut depth, mut in_str, mut esc, mut seen) = (0i32, false, false, false);
    for &c in b {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' => {
                depth += 1;
                seen = true
            }
            b'}' => {
                depth -= 1;
                if seen && depth == 0 {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The first string (or bare number/bool) value of `"name":` in a flat JSON text. etcd's
/// answers carry keys and values base64-encoded, so no value holds an escaped quote.
fn field(json: &str, name: &str) -> Option<String> {
    let pat = format!("\"{name}\":");
    let at = json.find(&pat)? + pat.len();
    let rest = json[at..].trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        Some(s[..s.find('"')?].to_string())
    } else {
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        Some(rest[..end].trim().to_string())
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn b64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn unb64(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = B64.iter().position(|&b| b == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_and_matches_the_rfc() {
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(b64(plain.as_bytes()), enc);
            assert_eq!(unb64(enc).as_deref(), Some(plain));
        }
        assert_eq!(unb64("Zm9v!"), None);
    }

    #[test]
    fn values_round_trip() {
        let r = Record {
            kind: Kind::Exchange,
            endpoint: "tcp://10.0.0.1:5555".into(),
            style: Style::LoadBalance,
            link: "tcp://10.0.0.1:5556".into(),
        };
        assert_eq!(decode_value(&encode_value("abc", &r)), Some(("abc".into(), r)));
        assert_eq!(decode_value("abc\nthing\nx\nfanout"), None);
    }

    #[test]
    fn fields_and_bodies() {
        let j = r#"{"header":{"cluster_id":"1","revision":"5"},"ID":"7587","TTL":"3"}"#;
        assert_eq!(field(j, "ID").as_deref(), Some("7587"));
        assert_eq!(field(r#"{"succeeded":true,"x":1}"#, "succeeded").as_deref(), Some("true"));
        assert_eq!(field(j, "nope"), None);
        assert!(complete_json(br#"{"a":"}{","b":{"c":1}}"#));
        assert!(!complete_json(br#"{"a":{"#));
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n3\r\n1}\n\r\n0\r\n\r\n";
        assert_eq!(body_of(chunked).as_deref(), Some(&b"{\"a\":1}\n"[..]));
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(body_of(plain).as_deref(), Some(&b"{}"[..]));
        assert!(Etcd::new("127.0.0.1:2379").is_err());
    }
}
