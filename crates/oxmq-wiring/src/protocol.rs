//! The name-service protocol, OXWIRE/1: multi-part ZMTP messages between a client's DEALER and
//! the server's ROUTER. Pure encoding and decoding (no sockets), so it is tested alone.
//!
//! Every frame is UTF-8 text. A request is
//!
//! ```text
//! "OXWIRE/1" | request-id | verb | arguments...
//! ```
//!
//! and its reply (after the ROUTER's routing-id frame, which the DEALER never sees)
//!
//! ```text
//! "OXWIRE/1" | request-id | "OK" | results...        or
//! "OXWIRE/1" | request-id | "ERR" | code | text
//! ```
//!
//! | verb | arguments | OK results |
//! |---|---|---|
//! | `REGISTER` | session, ttl-ms, name, kind, endpoint, style, \[link\] | — |
//! | `LOOKUP` | name | kind, endpoint, style, link |
//! | `WITHDRAW` | session, name | — |
//! | `PING` | session, ttl-ms | — |
//! | `BYE` | session | — |
//!
//! Error codes: `TAKEN` (another session owns the name), `NOTFOUND`, `UNKNOWN_SESSION` (a PING
//! for a session the server does not hold: its names have expired or the server restarted; the
//! client registers its names again), `BAD_REQUEST`, `BACKEND` (the directory, e.g. etcd,
//! failed).
//!
//! A session is a random id chosen by the client. Its names live while the server hears from
//! it (any request counts) at least once per ttl; the client PINGs every ttl/3.

/// The first frame of every request and reply.
pub const TAG: &str = "OXWIRE/1";

/// What a name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An exchange: on the wire an XPUB (fan-out) bound at the endpoint; connect a SUB to it.
    Exchange,
    /// A queue: on the wire a PULL bound at the endpoint; connect a PUSH to it.
    Queue,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Exchange => "exchange",
            Kind::Queue => "queue",
        }
    }
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "exchange" => Some(Kind::Exchange),
            "queue" => Some(Kind::Queue),
            _ => None,
        }
    }
}

/// An exchange's delivery style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Style {
    /// Every bound queue gets every message (the original's behaviour).
    #[default]
    FanOut,
    /// Each message goes to one bound queue, in turn (see the crate docs for the scope).
    LoadBalance,
}

impl Style {
    pub fn as_str(self) -> &'static str {
        match self {
            Style::FanOut => "fanout",
            Style::LoadBalance => "balance",
        }
    }
    pub fn parse(s: &str) -> Option<Style> {
        match s {
            "fanout" => Some(Style::FanOut),
            "balance" => Some(Style::LoadBalance),
            _ => None,
        }
    }
}

/// One directory entry: what a global name is and where it lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: Kind,
    /// A ZMTP endpoint (`tcp://host:port`).
    pub endpoint: String,
    pub style: Style,
    /// The owning handle's link endpoint (a PEER socket; empty when it has none): other
    /// wiring handles carry both directions of their traffic with the owner over one
    /// connection there. Plain ZeroMQ programs use `endpoint`.
    pub link: String,
}

/// A decoded request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    Register { session: String, ttl_ms: u64, name: String, record: Record },
    Lookup { name: String },
    Withdraw { session: String, name: String },
    Ping { session: String, ttl_ms: u64 },
    Bye { session: String },
}

/// Error codes of an `ERR` reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrCode {
    Taken,
    NotFound,
    UnknownSession,
    BadRequest,
    Backend,
}

impl ErrCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrCode::Taken => "TAKEN",
            ErrCode::NotFound => "NOTFOUND",
            ErrCode::UnknownSession => "UNKNOWN_SESSION",
            ErrCode::BadRequest => "BAD_REQUEST",
            ErrCode::Backend => "BACKEND",
        }
    }
    pub fn parse(s: &str) -> Option<ErrCode> {
        Some(match s {
            "TAKEN" => ErrCode::Taken,
            "NOTFOUND" => ErrCode::NotFound,
            "UNKNOWN_SESSION" => ErrCode::UnknownSession,
            "BAD_REQUEST" => ErrCode::BadRequest,
            "BACKEND" => ErrCode::Backend,
            _ => return None,
        })
    }
}

/// A decoded reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Ok(Vec<String>),
    Err(ErrCode, String),
}

/// The longest name accepted (bytes); also bounds what a hostile request can make us store.
pub const MAX_NAME: usize = 255;

/// True for a name the directory accepts: 1..=255 bytes, no control characters, no '/'.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && !name.chars().any(|c| c.is_control() || c == '/')
}

/// The frames of a request with id `id`.
pub fn encode_request(id: u64, req: &Request) -> Vec<Vec<u8>> {
    let mut f: Vec<String> = vec![TAG.into(), id.to_string()];
    match req {
        Request::Register { session, ttl_ms, name, record } => f.extend([
            "REGISTER".into(),
            session.clone(),
            ttl_ms.to_string(),
            name.clone(),
            record.kind.as_str().into(),
            record.endpoint.clone(),
            record.style.as_str().into(),
            record.link.clone(),
        ]),
        Request::Lookup { name } => f.extend(["LOOKUP".into(), name.clone()]),
        Request::Withdraw { session, name } => f.extend(["WITHDRAW".into(), session.clone(), name.clone()]),
        Request::Ping { session, ttl_ms } => f.extend(["PING".into(), session.clone(), ttl_ms.to_string()]),
        Request::Bye { session } => f.extend(["BYE".into(), session.clone()]),
    }
    f.into_iter().map(String::into_bytes).collect()
}

fn text(frames: &[Vec<u8>]) -> Option<Vec<&str>> {
    frames.iter().map(|f| std::str::from_utf8(f).ok()).collect()
}

/// Decodes a request: `(id, request)`, or the id (when it could be read) and why it failed.
pub fn decode_request(frames: &[Vec<u8>]) -> Result<(u64, Request), (Option<u64>, String)> {
    let t = text(frames).ok_or((None, "frames are not UTF-8".to_string()))?;
    if t.len() < 3 || t[0] != TAG {
        return Err((None, "not an OXWIRE/1 request".into()));
    }
    let id: u64 = t[1].parse().map_err(|_| (None, "bad request id".to_string()))?;
    let bad = |why: &str| (Some(id), why.to_string());
    let args = &t[3..];
    let ttl = |s: &str| s.parse::<u64>().map_err(|_| bad("bad ttl"));
    let name = |s: &str| if valid_name(s) { Ok(s.to_string()) } else { Err(bad("bad name")) };
    let req = match (t[2], args) {
        // The link is optional: clients before it registered six arguments.
        ("REGISTER", [session, ttl_ms, n, kind, endpoint, style, link @ ..]) if link.len() <= 1 => Request::Register {
            session: session.to_string(),
            ttl_ms: ttl(ttl_ms)?,
            name: name(n)?,
            record: Record {
                kind: Kind::parse(kind).ok_or_else(|| bad("bad kind"))?,
                endpoint: endpoint.to_string(),
                style: Style::parse(style).ok_or_else(|| bad("bad style"))?,
                link: link.first().map_or(String::new(), |l| l.to_string()),
            },
        },
        ("LOOKUP", [n]) => Request::Lookup { name: name(n)? },
        ("WITHDRAW", [session, n]) => Request::Withdraw { session: session.to_string(), name: name(n)? },
        ("PING", [session, ttl_ms]) => Request::Ping { session: session.to_string(), ttl_ms: ttl(ttl_ms)? },
        ("BYE", [session]) => Request::Bye { session: session.to_string() },
        _ => return Err(bad("unknown verb or wrong number of arguments")),
    };
    if let Request::Register { session, .. }
    | Request::Ping { session, .. }
    | Request::Withdraw { session, .. }
    | Request::Bye { session } = &req
    {
        if session.is_empty() || session.len() > 64 {
            return Err(bad("bad session id"));
        }
    }
    Ok((id, req))
}

/// The frames of a reply to request `id`.
pub fn encode_reply(id: u64, reply: &Reply) -> Vec<Vec<u8>> {
    let mut f: Vec<String> = vec![TAG.into(), id.to_string()];
    match reply {
        Reply::Ok(results) => {
            f.push("OK".into());
            f.extend(results.iter().cloned());
        }
        Reply::Err(code, why) => f.extend(["ERR".into(), code.as_str().into(), why.clone()]),
    }
    f.into_iter().map(String::into_bytes).collect()
}

/// Decodes a reply: `(id, reply)`; `None` for anything malformed.
pub fn decode_reply(frames: &[Vec<u8>]) -> Option<(u64, Reply)> {
    let t = text(frames)?;
    if t.len() < 3 || t[0] != TAG {
        return None;
    }
    let id = t[1].parse().ok()?;
    let reply = match (t[2], &t[3..]) {
        ("OK", rest) => Reply::Ok(rest.iter().map(|s| s.to_string()).collect()),
        ("ERR", [code, why]) => Reply::Err(ErrCode::parse(code)?, why.to_string()),
        _ => return None,
    };
    Some((id, reply))
}

/// The record in a LOOKUP's OK results.
pub fn record_from_results(results: &[String]) -> Option<Record> {
    match results {
        [kind, endpoint, style, link @ ..] if link.len() <= 1 => Some(Record {
            kind: Kind::parse(kind)?,
            endpoint: endpoint.clone(),
            style: Style::parse(style)?,
            link: link.first().cloned().unwrap_or_default(),
        }),
        _ => None,
    }
}

/// LOOKUP's OK results for a record.
pub fn results_from_record(r: &Record) -> Vec<String> {
    vec![r.kind.as_str().into(), r.endpoint.clone(), r.style.as_str().into(), r.link.clone()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec() -> Record {
        Record {
            kind: Kind::Queue,
            endpoint: "tcp://127.0.0.1:5555".into(),
            style: Style::FanOut,
            link: "tcp://127.0.0.1:5556".into(),
        }
    }

    #[test]
    fn records_without_a_link_still_decode() {
        let f = |v: &[&str]| v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
        let (_, req) = decode_request(&f(&[TAG, "4", "REGISTER", "s", "1", "Q", "queue", "tcp://x:1", "fanout"])).unwrap();
        let Request::Register { record, .. } = req else { panic!("not a REGISTER") };
        assert_eq!(record.link, "");
        let res: Vec<String> = ["queue", "tcp://x:1", "fanout"].iter().map(|s| s.to_string()).collect();
        assert_eq!(record_from_results(&res).unwrap().link, "");
        let mut too_many = res.clone();
        too_many.extend(["tcp://x:2".to_string(), "extra".to_string()]);
        assert_eq!(record_from_results(&too_many), None);
    }

    #[test]
    fn requests_round_trip() {
        let reqs = [
            Request::Register { session: "s1".into(), ttl_ms: 3000, name: "Q".into(), record: rec() },
            Request::Lookup { name: "Q".into() },
            Request::Withdraw { session: "s1".into(), name: "Q".into() },
            Request::Ping { session: "s1".into(), ttl_ms: 900 },
            Request::Bye { session: "s1".into() },
        ];
        for (i, r) in reqs.iter().enumerate() {
            let frames = encode_request(i as u64, r);
            assert_eq!(decode_request(&frames), Ok((i as u64, r.clone())));
        }
    }

    #[test]
    fn replies_round_trip() {
        for r in [Reply::Ok(results_from_record(&rec())), Reply::Ok(vec![]), Reply::Err(ErrCode::Taken, "owned".into())] {
            assert_eq!(decode_reply(&encode_reply(7, &r)), Some((7, r.clone())));
        }
        let Some((_, Reply::Ok(res))) = decode_reply(&encode_reply(1, &Reply::Ok(results_from_record(&rec())))) else {
            panic!("not OK")
        };
        assert_eq!(record_from_results(&res), Some(rec()));
    }

    #[test]
    fn malformed_requests_are_refused_with_a_reason() {
        let f = |v: &[&str]| v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
        assert!(matches!(decode_request(&f(&["HTTP/1.1", "1", "LOOKUP", "Q"])), Err((None, _))));
        assert!(matches!(decode_request(&f(&[TAG, "x", "LOOKUP", "Q"])), Err((None, _))));
        assert_eq!(decode_request(&f(&[TAG, "4", "LOOKUP"])).unwrap_err().0, Some(4));
        assert_eq!(decode_request(&f(&[TAG, "4", "LOOKUP", ""])).unwrap_err().0, Some(4));
        assert_eq!(decode_request(&f(&[TAG, "4", "LOOKUP", "a/b"])).unwrap_err().0, Some(4));
        assert_eq!(decode_request(&f(&[TAG, "4", "PING", "s", "soon"])).unwrap_err().0, Some(4));
        assert_eq!(
            decode_request(&f(&[TAG, "4", "REGISTER", "s", "1", "Q", "thing", "tcp://x:1", "fanout"])).unwrap_err().0,
            Some(4)
        );
        assert_eq!(
            decode_request(&f(&[TAG, "4", "REGISTER", "s", "1", "Q", "queue", "tcp://x:1", "fanout", "l", "x"])).unwrap_err().0,
            Some(4)
        );
        assert_eq!(decode_request(&f(&[TAG, "4", "BYE", ""])).unwrap_err().0, Some(4));
        assert!(decode_request(&[vec![0xff, 0xfe]]).is_err());
        assert!(decode_reply(&f(&[TAG, "1", "ERR", "WHAT", "x"])).is_none());
        assert!(decode_reply(&f(&[TAG, "1", "MAYBE"])).is_none());
    }

    #[test]
    fn names() {
        assert!(valid_name("E"));
        assert!(valid_name("orders.eu-west"));
        assert!(!valid_name(""));
        assert!(!valid_name("a/b"));
        assert!(!valid_name("a\nb"));
        assert!(!valid_name(&"x".repeat(256)));
    }
}
