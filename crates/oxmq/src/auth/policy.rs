//! What the authenticator allows: address lists, PLAIN passwords and CURVE keys per domain,
//! and the decision for one ZAP request. Pure logic: no sockets, no threads.
//!
//! The rules are pyzmq's and CZMQ's `zauth`:
//! * If the allow list is not empty, only its addresses pass the address check; otherwise an
//!   address on the deny list fails it. An address that fails is refused whatever the
//!   mechanism.
//! * NULL is accepted when the address check did not fail, and, for a request that carries a
//!   TLS peer's certificate subject (NULL over tls:// or wss:// with a client certificate; see
//!   ARCHITECTURE.md, "The transport seam"), when the subject check does not fail either: with
//!   a subject allow list only its subjects pass (a request without a subject then fails),
//!   otherwise a subject on the deny list fails. These lists are oxmq's; pyzmq has none.
//! * PLAIN and CURVE must authenticate even from an allowed address. The domain selects the
//!   configuration; an empty domain means `*` (the default domain).
//! * A reply to an accepted request carries a User-Id: the username for PLAIN, the client's
//!   public key in Z85 for CURVE, the certificate subject or else `anonymous` for NULL. A CURVE key accepted from a
//!   certificate also carries that certificate's metadata as ZAP metadata.
//!
//! Unlike pyzmq and CZMQ, a mechanism other than NULL, PLAIN and CURVE (GSSAPI, or anything
//! else) is refused: this handler has nothing to check it against.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::cert::{self, CertError, Certificate};

/// The default domain, used when a request's domain is empty.
pub const DEFAULT_DOMAIN: &str = "*";
/// pyzmq's `CURVE_ALLOW_ANY`: pass it as the certificate location to accept any CURVE key.
pub const CURVE_ALLOW_ANY: &str = "*";

/// Where a domain's PLAIN passwords come from.
#[derive(Clone, Debug)]
struct PlainSource {
    file: Option<PathBuf>,
    passwords: HashMap<Vec<u8>, Vec<u8>>,
}

/// Decides on a CURVE client key for a domain (pyzmq's credentials provider): `true` accepts.
/// Runs on the handler thread, once per request; keep it quick or requests queue behind it.
pub type CurveCheck = Arc<dyn Fn(&str, &[u8; 32]) -> bool + Send + Sync>;

/// What a domain accepts for CURVE.
#[derive(Clone)]
enum CurveSource {
    AllowAny,
    Certs { dir: Option<PathBuf>, certs: HashMap<[u8; 32], Certificate> },
    Callback(CurveCheck),
}

impl std::fmt::Debug for CurveSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CurveSource::AllowAny => f.write_str("AllowAny"),
            CurveSource::Certs { dir, certs } => f.debug_struct("Certs").field("dir", dir).field("keys", &certs.len()).finish(),
            CurveSource::Callback(_) => f.write_str("Callback"),
        }
    }
}

/// The authenticator's whole configuration. Cheap to clone; built and changed with the
/// methods below, then handed to [`Authenticator::set_policy`](super::Authenticator::set_policy)
/// or changed in place through [`Authenticator::update`](super::Authenticator::update).
#[derive(Clone, Debug, Default)]
pub struct Policy {
    allow: BTreeSet<String>,
    deny: BTreeSet<String>,
    allow_subjects: BTreeSet<String>,
    deny_subjects: BTreeSet<String>,
    plain: HashMap<String, PlainSource>,
    curve: HashMap<String, CurveSource>,
}

/// One parsed ZAP request (RFC 27), without its address envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZapRequest<'a> {
    /// The ZAP version, "1.0".
    pub version: &'a [u8],
    /// Opaque id the reply must echo.
    pub request_id: &'a [u8],
    /// The socket's ZAP_DOMAIN.
    pub domain: &'a [u8],
    /// The peer's IP address (text).
    pub address: &'a [u8],
    /// The peer's routing id, if it announced one.
    pub identity: &'a [u8],
    /// "NULL", "PLAIN" or "CURVE".
    pub mechanism: &'a [u8],
    /// The mechanism's credentials: none (NULL; over TLS, the peer certificate's subject when
    /// the peer presented one), user name and password (PLAIN), the client's 32-byte public
    /// key (CURVE).
    pub credentials: Vec<&'a [u8]>,
}

/// The handler's answer to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZapReply {
    /// "200" accepted, "400" refused (RFC 27's other codes are not produced here).
    pub status_code: &'static str,
    /// The status text sent with the code.
    pub status_text: &'static str,
    /// Empty unless accepted.
    pub user_id: Vec<u8>,
    /// ZMTP-encoded properties, empty unless accepted with a certificate that has metadata.
    pub metadata: Vec<u8>,
}

impl ZapReply {
    fn ok(user_id: Vec<u8>, metadata: Vec<u8>) -> ZapReply {
        ZapReply { status_code: "200", status_text: "OK", user_id, metadata }
    }

    fn refuse(status_text: &'static str) -> ZapReply {
        ZapReply { status_code: "400", status_text, user_id: Vec::new(), metadata: Vec::new() }
    }
}

impl Policy {
    /// An empty policy: NULL accepted from anywhere, PLAIN and CURVE refused.
    pub fn new() -> Policy {
        Policy::default()
    }

    /// Adds addresses to the allow list (IPv4 dotted or IPv6 text, as the server reports
    /// them). Once the list is not empty, only its addresses are accepted.
    pub fn allow<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, addresses: I) -> &mut Policy {
        self.allow.extend(addresses.into_iter().map(Into::into));
        self
    }

    /// Adds addresses to the deny list (used only while the allow list is empty).
    pub fn deny<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, addresses: I) -> &mut Policy {
        self.deny.extend(addresses.into_iter().map(Into::into));
        self
    }

    /// Empties both address lists.
    pub fn clear_addresses(&mut self) -> &mut Policy {
        self.allow.clear();
        self.deny.clear();
        self
    }

    /// Adds certificate subjects (RFC 4514 text as the `TLS-Peer-Subject` property gives it,
    /// e.g. `O=Example,CN=client-7`) to the subject allow list. Once it is not empty, NULL is
    /// accepted only from TLS peers with one of these subjects; PLAIN and CURVE are not
    /// affected (their requests carry no subject).
    pub fn allow_subjects<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, subjects: I) -> &mut Policy {
        self.allow_subjects.extend(subjects.into_iter().map(Into::into));
        self
    }

    /// Adds certificate subjects to the subject deny list (used only while the subject allow
    /// list is empty): NULL from a TLS peer with one of them is refused.
    pub fn deny_subjects<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, subjects: I) -> &mut Policy {
        self.deny_subjects.extend(subjects.into_iter().map(Into::into));
        self
    }

    /// Empties both subject lists.
    pub fn clear_subjects(&mut self) -> &mut Policy {
        self.allow_subjects.clear();
        self.deny_subjects.clear();
        self
    }

    /// Sets `domain`'s PLAIN users from memory (replacing earlier ones for that domain).
    pub fn plain_passwords<I, U, P>(&mut self, domain: &str, users: I) -> &mut Policy
    where
        I: IntoIterator<Item = (U, P)>,
        U: Into<Vec<u8>>,
        P: Into<Vec<u8>>,
    {
        let passwords = users.into_iter().map(|(u, p)| (u.into(), p.into())).collect();
        self.plain.insert(domain.to_string(), PlainSource { file: None, passwords });
        self
    }

    /// Sets `domain`'s PLAIN users from a CZMQ password file (`name=password` lines), read
    /// now and again on every [`reload`](Self::reload).
    pub fn plain_file(&mut self, domain: &str, path: impl AsRef<Path>) -> Result<&mut Policy, CertError> {
        let path = path.as_ref().to_path_buf();
        let passwords = cert::load_passwords(&path)?;
        self.plain.insert(domain.to_string(), PlainSource { file: Some(path), passwords });
        Ok(self)
    }

    /// Accepts any CURVE client key in `domain`.
    pub fn curve_allow_any(&mut self, domain: &str) -> &mut Policy {
        self.curve.insert(domain.to_string(), CurveSource::AllowAny);
        self
    }

    /// Accepts in `domain` the CURVE keys of the `*.key` certificates in `dir`, read now and
    /// again on every [`reload`](Self::reload). `dir` equal to [`CURVE_ALLOW_ANY`] means
    /// [`curve_allow_any`](Self::curve_allow_any), as in pyzmq.
    pub fn curve_directory(&mut self, domain: &str, dir: impl AsRef<Path>) -> Result<&mut Policy, CertError> {
        let dir = dir.as_ref();
        if dir.as_os_str() == CURVE_ALLOW_ANY {
            return Ok(self.curve_allow_any(domain));
        }
        let certs = cert::load_dir(dir)?;
        self.curve.insert(domain.to_string(), CurveSource::Certs { dir: Some(dir.to_path_buf()), certs });
        Ok(self)
    }

    /// Accepts in `domain` exactly these certificates' keys (replacing earlier ones).
    pub fn curve_certificates<I: IntoIterator<Item = Certificate>>(&mut self, domain: &str, certs: I) -> &mut Policy {
        let certs = certs.into_iter().map(|c| (*c.public_key(), c)).collect();
        self.curve.insert(domain.to_string(), CurveSource::Certs { dir: None, certs });
        self
    }

    /// Asks `check(domain, key)` about each CURVE client key in `domain` (a database lookup,
    /// say). The User-Id of an accepted key is its Z85 text, as for certificates.
    pub fn curve_callback(
        &mut self,
        domain: &str,
        check: impl Fn(&str, &[u8; 32]) -> bool + Send + Sync + 'static,
    ) -> &mut Policy {
        self.curve.insert(domain.to_string(), CurveSource::Callback(Arc::new(check)));
        self
    }

    /// Stops accepting CURVE in `domain`.
    pub fn curve_none(&mut self, domain: &str) -> &mut Policy {
        self.curve.remove(domain);
        self
    }

    /// Re-reads every password file and certificate directory. All or nothing: if one fails,
    /// the policy is left as it was and the error says which file.
    pub fn reload(&mut self) -> Result<(), CertError> {
        let mut next = self.clone();
        for src in next.plain.values_mut() {
            if let Some(file) = &src.file {
                src.passwords = cert::load_passwords(file)?;
            }
        }
        for src in next.curve.values_mut() {
            if let CurveSource::Certs { dir: Some(dir), certs } = src {
                *certs = cert::load_dir(dir)?;
            }
        }
        *self = next;
        Ok(())
    }

    /// Decides one request.
    pub fn authenticate(&self, req: &ZapRequest<'_>) -> ZapReply {
        if req.version != b"1.0" {
            return ZapReply::refuse("Invalid version");
        }
        let address = String::from_utf8_lossy(req.address);
        // An address that passes (allowed, or merely not denied) still has to authenticate
        // for PLAIN and CURVE; NULL has nothing more to check.
        if !self.allow.is_empty() {
            if !self.allow.contains(address.as_ref()) {
                return ZapReply::refuse("Address not allowed");
            }
        } else if self.deny.contains(address.as_ref()) {
            return ZapReply::refuse("Address denied");
        }
        let domain = match req.domain {
            b"" => DEFAULT_DOMAIN.to_string(),
            d => String::from_utf8_lossy(d).into_owned(),
        };
        match req.mechanism {
            b"NULL" => self.null(&req.credentials),
            b"PLAIN" => self.plain(&domain, &req.credentials),
            b"CURVE" => self.curve(&domain, &req.credentials),
            _ => ZapReply::refuse("Unsupported mechanism"),
        }
    }

    /// NULL: no credentials, or a TLS peer's certificate subject.
    fn null(&self, credentials: &[&[u8]]) -> ZapReply {
        let subject = match credentials {
            [] => None,
            [s] => Some(String::from_utf8_lossy(s)),
            _ => return ZapReply::refuse("Invalid credentials"),
        };
        if !self.allow_subjects.is_empty() {
            if !subject.as_ref().is_some_and(|s| self.allow_subjects.contains(s.as_ref())) {
                return ZapReply::refuse("Subject not allowed");
            }
        } else if subject.as_ref().is_some_and(|s| self.deny_subjects.contains(s.as_ref())) {
            return ZapReply::refuse("Subject denied");
        }
        let user_id = subject.map_or(b"anonymous".to_vec(), |s| s.into_owned().into_bytes());
        ZapReply::ok(user_id, Vec::new())
    }

    fn plain(&self, domain: &str, credentials: &[&[u8]]) -> ZapReply {
        let [username, password] = credentials else {
            return ZapReply::refuse("Invalid credentials");
        };
        if self.plain.is_empty() {
            return ZapReply::refuse("No passwords defined");
        }
        let Some(src) = self.plain.get(domain) else {
            return ZapReply::refuse("Invalid domain");
        };
        match src.passwords.get(*username) {
            None => ZapReply::refuse("Invalid username"),
            Some(p) if constant_time_eq(p, password) => ZapReply::ok(username.to_vec(), Vec::new()),
            Some(_) => ZapReply::refuse("Invalid password"),
        }
    }

    fn curve(&self, domain: &str, credentials: &[&[u8]]) -> ZapReply {
        let key: [u8; 32] = match credentials {
            [k] => match <[u8; 32]>::try_from(*k) {
                Ok(k) => k,
                Err(_) => return ZapReply::refuse("Invalid credentials"),
            },
            _ => return ZapReply::refuse("Invalid credentials"),
        };
        let user_id = zmtp::z85::encode(&key).unwrap_or_default().into_bytes();
        match self.curve.get(domain) {
            None => ZapReply::refuse("Unknown domain"),
            Some(CurveSource::AllowAny) => ZapReply::ok(user_id, Vec::new()),
            Some(CurveSource::Callback(check)) => match check(domain, &key) {
                true => ZapReply::ok(user_id, Vec::new()),
                false => ZapReply::refuse("Unknown key"),
            },
            Some(CurveSource::Certs { certs, .. }) => match certs.get(&key) {
                None => ZapReply::refuse("Unknown key"),
                Some(cert) => {
                    let mut meta = zmtp::Metadata::new();
                    for (k, v) in cert.metadata() {
                        // Names were checked when the certificate was read or built.
                        meta.insert(k, v.clone().into_bytes());
                    }
                    let mut out = Vec::new();
                    meta.encode(&mut out);
                    ZapReply::ok(user_id, out)
                }
            },
        }
    }
}

/// Splits a message received on a ROUTER into its envelope (routing ids and the empty
/// delimiter) and its request. `None` when there is no delimiter, or no request id to echo:
/// such a message cannot be answered (a REP socket would drop it the same way).
pub fn split_envelope<T: AsRef<[u8]>>(frames: &[T]) -> Option<(&[T], &[T])> {
    let delim = frames.iter().position(|f| f.as_ref().is_empty())?;
    let (envelope, body) = frames.split_at(delim + 1);
    (body.len() >= 2).then_some((envelope, body))
}

/// Parses a request body (after the envelope). `Err(reply)` when it is malformed but has a
/// request id, so the server still gets an answer.
pub fn parse_request<T: AsRef<[u8]>>(body: &[T]) -> Result<ZapRequest<'_>, ZapReply> {
    if body.len() < 6 {
        return Err(ZapReply::refuse("Not enough frames"));
    }
    let f = |i: usize| body[i].as_ref();
    Ok(ZapRequest {
        version: f(0),
        request_id: f(1),
        domain: f(2),
        address: f(3),
        identity: f(4),
        mechanism: f(5),
        credentials: body[6..].iter().map(AsRef::as_ref).collect(),
    })
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
