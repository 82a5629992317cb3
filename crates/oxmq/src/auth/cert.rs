//! CURVE certificates in CZMQ's `zcert` file format, as pyzmq's `zmq.auth` writes and reads it.
//!
//! A certificate is a key pair (the secret half optional) plus metadata, stored as ZPL text
//! (rfc.zeromq.org/spec:4): a comment banner, a `metadata` section of `name = "value"` lines,
//! and a `curve` section holding `public-key = "<z85>"` and, in the secret file only,
//! `secret-key = "<z85>"`. `save` writes `name.key` (public) and `name.key_secret` (both keys)
//! with pyzmq's banners, so the files differ from pyzmq's only in the date and the tool named
//! in the first line. Unlike pyzmq (which puts metadata in the secret file only), metadata goes
//! into both files, as CZMQ does: the public file is the one an authenticator reads, and its
//! metadata is what the authenticator hands back to the server as ZAP metadata.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use zmtp::{CurveKeyPair, CurveSecretKey};

/// Why a certificate, password file or directory could not be loaded.
#[derive(Debug)]
pub enum CertError {
    /// Reading or writing the file failed.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },
    /// The text is not a valid certificate; `line` is 1-based (0: the file as a whole).
    Format {
        /// The file.
        path: PathBuf,
        /// The line at fault, 1-based (0: the file as a whole).
        line: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl fmt::Display for CertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CertError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            CertError::Format { path, line, reason } => write!(f, "{}:{line}: {reason}", path.display()),
        }
    }
}

impl std::error::Error for CertError {}

/// A CURVE certificate: a public key, optionally its secret key, and metadata.
#[derive(Clone)]
pub struct Certificate {
    public: [u8; 32],
    secret: Option<CurveSecretKey>,
    metadata: Vec<(String, String)>,
}

impl fmt::Debug for Certificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret key.
        f.debug_struct("Certificate")
            .field("public", &self.public_z85())
            .field("has_secret", &self.secret.is_some())
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl Certificate {
    /// A new certificate with a fresh key pair.
    pub fn generate() -> Certificate {
        let kp = CurveKeyPair::generate();
        Certificate { public: kp.public, secret: Some(kp.secret), metadata: Vec::new() }
    }

    /// A certificate for a known public key (no secret).
    pub fn from_public(public: [u8; 32]) -> Certificate {
        Certificate { public, secret: None, metadata: Vec::new() }
    }

    /// A certificate from a secret key; the public key is derived.
    pub fn from_secret(secret: [u8; 32]) -> Certificate {
        let secret = CurveSecretKey::from_bytes(secret);
        Certificate { public: secret.public_key(), secret: Some(secret), metadata: Vec::new() }
    }

    /// The public key, binary.
    pub fn public_key(&self) -> &[u8; 32] {
        &self.public
    }

    /// The secret key, binary, if this certificate holds one.
    pub fn secret_key(&self) -> Option<&[u8; 32]> {
        self.secret.as_ref().map(|s| s.expose())
    }

    /// The public key as 40 Z85 characters.
    pub fn public_z85(&self) -> String {
        // 32 bytes always encode.
        zmtp::z85::encode(&self.public).unwrap_or_default()
    }

    /// The secret key as 40 Z85 characters.
    pub fn secret_z85(&self) -> Option<String> {
        self.secret.as_ref().map(|s| zmtp::z85::encode(s.expose()).unwrap_or_default())
    }

    /// Sets a metadata property (replacing one of the same name). The name must be a valid
    /// ZMTP property name (it travels as ZAP metadata) and neither may contain a line break or
    /// a double quote (ZPL has no escapes).
    pub fn set_meta(&mut self, name: &str, value: &str) -> Result<(), crate::Error> {
        if !zmtp::metadata::is_valid_name(name.as_bytes()) || !zpl_value_ok(value) {
            return Err(crate::Error::Invalid);
        }
        match self.metadata.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value.to_string(),
            None => self.metadata.push((name.to_string(), value.to_string())),
        }
        Ok(())
    }

    /// A metadata property.
    pub fn meta(&self, name: &str) -> Option<&str> {
        self.metadata.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// All metadata properties, in file order.
    pub fn metadata(&self) -> &[(String, String)] {
        &self.metadata
    }

    /// The public certificate's text (no secret key).
    pub fn public_text(&self) -> String {
        self.render(PUBLIC_BANNER, false)
    }

    /// The secret certificate's text (both keys). Empty secret part if there is no secret.
    pub fn secret_text(&self) -> String {
        self.render(SECRET_BANNER, true)
    }

    /// Writes `dir/name.key` and `dir/name.key_secret` (pyzmq's `create_certificates`
    /// layout) and returns their paths. The secret file is created readable by its owner
    /// only. Fails with `InvalidInput` if the certificate has no secret key.
    pub fn save(&self, dir: &Path, name: &str) -> Result<(PathBuf, PathBuf), CertError> {
        let public = dir.join(format!("{name}.key"));
        let secret = dir.join(format!("{name}.key_secret"));
        self.save_public(&public)?;
        self.save_secret(&secret)?;
        Ok((public, secret))
    }

    /// Writes the public certificate to `path`.
    pub fn save_public(&self, path: &Path) -> Result<(), CertError> {
        fs::write(path, self.public_text()).map_err(|error| CertError::Io { path: path.into(), error })
    }

    /// Writes the secret certificate to `path`, readable by its owner only.
    pub fn save_secret(&self, path: &Path) -> Result<(), CertError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let io_err = |error| CertError::Io { path: path.into(), error };
        if self.secret.is_none() {
            return Err(io_err(io::Error::new(io::ErrorKind::InvalidInput, "certificate has no secret key")));
        }
        let mut f = fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path).map_err(io_err)?;
        f.write_all(self.secret_text().as_bytes()).map_err(io_err)
    }

    /// Loads a certificate file (public or secret).
    pub fn load(path: &Path) -> Result<Certificate, CertError> {
        let text = fs::read(path).map_err(|error| CertError::Io { path: path.into(), error })?;
        Certificate::parse(&text).map_err(|(line, reason)| CertError::Format { path: path.into(), line, reason })
    }

    /// Parses certificate text. The error is `(line, reason)`.
    pub fn parse(text: &[u8]) -> Result<Certificate, (usize, &'static str)> {
        let text = std::str::from_utf8(text).map_err(|_| (0, "not UTF-8"))?;
        let mut public = None;
        let mut secret = None;
        let mut metadata = Vec::new();
        let mut section = "";
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.trim_end_matches('\r');
            let body = line.trim_start();
            if body.is_empty() || body.starts_with('#') {
                continue;
            }
            // ZPL indents children by four spaces per level; a certificate has two levels.
            let indent = line.len() - body.len();
            if indent == 0 {
                section = body.split(['#', ' ', '\t']).next().unwrap_or("");
                continue;
            }
            let (name, value) = parse_property(body).ok_or((line_no, "expected name = value"))?;
            match (section, name) {
                ("curve", "public-key") => public = Some(decode_key(value).ok_or((line_no, "bad public-key"))?),
                ("curve", "secret-key") => secret = Some(decode_key(value).ok_or((line_no, "bad secret-key"))?),
                ("metadata", _) => {
                    if !zmtp::metadata::is_valid_name(name.as_bytes()) {
                        return Err((line_no, "metadata name is not a valid ZMTP property name"));
                    }
                    metadata.push((name.to_string(), value.to_string()));
                }
                // Other sections and properties belong to other tools; ZPL readers skip them.
                _ => {}
            }
        }
        let public = public.ok_or((0, "no public-key"))?;
        let secret = secret.map(CurveSecretKey::from_bytes);
        if let Some(s) = &secret {
            if s.public_key() != public {
                return Err((0, "secret-key does not match public-key"));
            }
        }
        Ok(Certificate { public, secret, metadata })
    }

    fn render(&self, banner: &str, with_secret: bool) -> String {
        let mut out = String::new();
        out.push_str(&format!("#   ****  Generated on {} by oxmq  ****\n", local_timestamp()));
        out.push_str(banner);
        out.push_str("metadata\n");
        for (k, v) in &self.metadata {
            out.push_str(&format!("    {k} = \"{v}\"\n"));
        }
        out.push_str("curve\n");
        out.push_str(&format!("    public-key = \"{}\"\n", self.public_z85()));
        if with_secret {
            if let Some(s) = self.secret_z85() {
                out.push_str(&format!("    secret-key = \"{s}\"\n"));
            }
        }
        out
    }
}

/// Loads every `*.key` file of `dir` (pyzmq's `load_certificates`, CZMQ's certificate store
/// convention), keyed by public key. A file that fails to parse fails the whole load, so a
/// reload never silently drops a certificate that was meant to be trusted.
pub fn load_dir(dir: &Path) -> Result<HashMap<[u8; 32], Certificate>, CertError> {
    let io_err = |error| CertError::Io { path: dir.into(), error };
    let mut certs = HashMap::new();
    for entry in fs::read_dir(dir).map_err(io_err)? {
        let path = entry.map_err(io_err)?.path();
        if path.extension().is_some_and(|e| e == "key") && path.is_file() {
            let cert = Certificate::load(&path)?;
            certs.insert(cert.public, cert);
        }
    }
    Ok(certs)
}

/// Reads a password file in CZMQ's format (`zhash_load`): one `name=password` per line, split
/// at the first `=`; lines starting with `#`, without `=`, or starting with `=` are skipped;
/// nothing is trimmed but the line ending.
pub fn load_passwords(path: &Path) -> Result<HashMap<Vec<u8>, Vec<u8>>, CertError> {
    let text = fs::read(path).map_err(|error| CertError::Io { path: path.into(), error })?;
    Ok(parse_passwords(&text))
}

/// Parses password-file text (see [`load_passwords`]).
pub fn parse_passwords(text: &[u8]) -> HashMap<Vec<u8>, Vec<u8>> {
    let mut map = HashMap::new();
    for line in text.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.first() == Some(&b'#') {
            continue;
        }
        match line.iter().position(|&b| b == b'=') {
            Some(eq) if eq > 0 => {
                map.insert(line[..eq].to_vec(), line[eq + 1..].to_vec());
            }
            _ => {}
        }
    }
    map
}

const SECRET_BANNER: &str = "#   ZeroMQ CURVE **Secret** Certificate
#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.

";

const PUBLIC_BANNER: &str = "#   ZeroMQ CURVE Public Certificate
#   Exchange securely, or use a secure mechanism to verify the contents
#   of this file after exchange. Store public certificates in your home
#   directory, in the .curve subdirectory.

";

fn zpl_value_ok(v: &str) -> bool {
    !v.contains(['"', '\n', '\r'])
}

/// `name = value` with the value quoted (`"..."` or `'...'`) or bare.
fn parse_property(body: &str) -> Option<(&str, &str)> {
    let (name, rest) = body.split_once('=')?;
    let name = name.trim();
    let rest = rest.trim_start();
    let value = match rest.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let inner = &rest[1..];
            &inner[..inner.find(q)?]
        }
        // Bare values end at white space (Z85 text contains '#', so a comment needs a space).
        _ => rest.split_whitespace().next().unwrap_or(""),
    };
    (!name.is_empty()).then_some((name, value))
}

fn decode_key(v: &str) -> Option<[u8; 32]> {
    zmtp::z85::decode_key(v.as_bytes()).ok()
}

/// The time now in Python's `str(datetime.now())` form, `YYYY-MM-DD HH:MM:SS.ffffff`.
/// It is the UTC time: the C library's time zone is not consulted (the banner is a comment).
fn local_timestamp() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:06}", rem / 3600, rem % 3600 / 60, rem % 60, now.subsec_micros())
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_layout() {
        let mut c = Certificate::generate();
        c.set_meta("name", "alice").unwrap();
        c.set_meta("Hostname", "a b#c").unwrap();
        assert_eq!(c.set_meta("bad name", "x"), Err(crate::Error::Invalid));
        assert_eq!(c.set_meta("ok", "x\"y"), Err(crate::Error::Invalid));
        let public = Certificate::parse(c.public_text().as_bytes()).unwrap();
        assert_eq!(public.public_key(), c.public_key());
        assert!(public.secret_key().is_none());
        assert_eq!(public.meta("Hostname"), Some("a b#c"));
        let secret = Certificate::parse(c.secret_text().as_bytes()).unwrap();
        assert_eq!(secret.secret_key(), c.secret_key());
        let text = c.secret_text();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("#   ****  Generated on ") && lines[0].ends_with(" by oxmq  ****"));
        assert_eq!(lines[4], "metadata");
        assert_eq!(lines[7], "curve");
        assert_eq!(lines[8], format!("    public-key = \"{}\"", c.public_z85()));
        assert_eq!(lines[9], format!("    secret-key = \"{}\"", c.secret_z85().unwrap()));
    }

    #[test]
    fn rejects_bad_files() {
        assert_eq!(Certificate::parse(b"metadata\ncurve\n").unwrap_err().1, "no public-key");
        assert_eq!(Certificate::parse(b"curve\n    public-key = \"short\"\n").unwrap_err(), (2, "bad public-key"));
        assert_eq!(Certificate::parse(b"curve\n    public-key\n").unwrap_err(), (2, "expected name = value"));
        let a = Certificate::generate();
        let b = Certificate::generate();
        let mixed = format!("curve\n    public-key = \"{}\"\n    secret-key = \"{}\"\n", a.public_z85(), b.secret_z85().unwrap());
        assert_eq!(Certificate::parse(mixed.as_bytes()).unwrap_err().1, "secret-key does not match public-key");
        // Bare (unquoted) values as CZMQ and pyzmq's metadata lines may have.
        let bare = format!("metadata\n    name = bob   # comment\ncurve\n    public-key = {}\n", a.public_z85());
        let c = Certificate::parse(bare.as_bytes()).unwrap();
        assert_eq!((c.public_key(), c.meta("name")), (a.public_key(), Some("bob")));
    }

    #[test]
    fn password_file_follows_czmq() {
        let m = parse_passwords(b"# comment\nadmin=secret\r\n=nobody\nnoequals\nuser=a=b\n  sp = x\n");
        assert_eq!(m.len(), 3);
        assert_eq!(m[&b"admin"[..]], b"secret");
        assert_eq!(m[&b"user"[..]], b"a=b");
        assert_eq!(m[&b"  sp "[..]], b" x");
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_779), (2026, 11, 22));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
