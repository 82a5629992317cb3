//! `tls://` (and the TLS under `wss://`): TLS 1.3 through rustls, as a [`ByteStream`] layer over
//! a tcp stream, configured by libzmq's WSS options (`ZMQ_WSS_KEY_PEM`, `_CERT_PEM`,
//! `_TRUST_PEM`, `_HOSTNAME`, `_TRUST_SYSTEM`).
//!
//! A server presents its certificate and key; with a trust PEM it also requires a client
//! certificate signed by one of those anchors (mutual TLS). A client verifies the server's
//! certificate against the trust PEM and/or the system's anchors, for the host name given by
//! `ZMQ_WSS_HOSTNAME` or else the endpoint's host, and presents its own certificate when it has
//! one. rustls keeps what the engine writes during the handshake in its buffer and sends it only
//! once the handshake is complete, so a client never sends a byte of ZMTP before the server's
//! certificate is verified. A refused certificate is [`LayerFailure::Certificate`], any other
//! TLS failure [`LayerFailure::Tls`]; both fail the stream with EPROTO.

use super::stream::{ByteStream, LayerFailure, Stream};
use super::StreamOptions;
use crate::error::{Error, Result};
use bytes::BytesMut;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::{self, IoSlice, Read, Write};
use std::os::fd::RawFd;
use std::sync::Arc;

/// The WSS options of a socket, as set (PEM text), validated when set.
#[derive(Clone, Debug, Default)]
pub(crate) struct TlsOptions {
    pub key_pem: Option<Arc<[u8]>>,
    pub cert_pem: Option<Arc<[u8]>>,
    pub trust_pem: Option<Arc<[u8]>>,
    pub hostname: String,
    pub trust_system: bool,
}

/// Checks a PEM option's value: a private key (KEY_PEM) or one certificate or more.
pub(crate) fn check_pem(v: &[u8], key: bool) -> Result<()> {
    if key {
        return PrivateKeyDer::from_pem_slice(v).map(drop).map_err(|_| Error::Invalid);
    }
    let certs = certificates(v)?;
    // Each must at least be shaped as an X.509 certificate (rustls checks the rest when it
    // uses them).
    if certs.is_empty() || certs.iter().any(|c| subject::of(c).is_none()) {
        return Err(Error::Invalid);
    }
    Ok(())
}

fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>> {
    CertificateDer::pem_slice_iter(pem).collect::<std::result::Result<Vec<_>, _>>().map_err(|_| Error::Invalid)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn roots(o: &TlsOptions) -> Result<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(pem) = &o.trust_pem {
        for c in certificates(pem)? {
            roots.add(c).map_err(|_| Error::Invalid)?;
        }
    }
    if o.trust_system {
        for c in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(c); // the system's odd certificates are skipped, as by browsers
        }
    }
    Ok(roots)
}

fn identity(o: &TlsOptions) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>> {
    match (&o.cert_pem, &o.key_pem) {
        (Some(c), Some(k)) => {
            let key = PrivateKeyDer::from_pem_slice(k).map_err(|_| Error::Invalid)?;
            Ok(Some((certificates(c)?, key)))
        }
        (None, None) => Ok(None),
        _ => Err(Error::Invalid), // a certificate without its key, or the reverse
    }
}

/// A server's configuration (at bind): EINVAL without a certificate and key, or when they do
/// not match.
pub(crate) fn server_config(o: &TlsOptions) -> Result<Arc<rustls::ServerConfig>> {
    let (certs, key) = identity(o)?.ok_or(Error::Invalid)?;
    let b = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|_| Error::Invalid)?;
    let b = if o.trust_pem.is_some() || o.trust_system {
        let v = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots(o)?), provider())
            .build()
            .map_err(|_| Error::Invalid)?;
        b.with_client_cert_verifier(v)
    } else {
        b.with_no_client_auth()
    };
    b.with_single_cert(certs, key).map(Arc::new).map_err(|_| Error::Invalid)
}

/// A client's configuration and the name it verifies (at connect): EINVAL with no trust anchor
/// at all, or a host name that is none.
pub(crate) fn client_config(o: &TlsOptions, endpoint_host: &str) -> Result<(Arc<rustls::ClientConfig>, ServerName<'static>)> {
    let roots = roots(o)?;
    if roots.is_empty() {
        return Err(Error::Invalid);
    }
    let host = if o.hostname.is_empty() { endpoint_host } else { &o.hostname };
    let name = ServerName::try_from(host.to_string()).map_err(|_| Error::Invalid)?;
    let b = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|_| Error::Invalid)?
        .with_root_certificates(roots);
    let cfg = match identity(o)? {
        Some((certs, key)) => b.with_client_auth_cert(certs, key).map_err(|_| Error::Invalid)?,
        None => b.with_no_client_auth(),
    };
    Ok((Arc::new(cfg), name))
}

/// The stream underneath, as rustls reads and writes it.
struct Io<'a>(&'a mut Stream);

impl Read for Io<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read_plain(buf)
    }
}

impl Write for Io<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_vectored(&[IoSlice::new(buf)])
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.0.write_vectored(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A TLS connection over a tcp stream.
pub(crate) struct TlsLayer {
    inner: Stream,
    conn: rustls::Connection,
    failed: Option<LayerFailure>,
    /// The peer closed its side (close_notify or end of stream).
    eof: bool,
    /// Plaintext rustls holds for reading, as its last processing said, less what was read
    /// since: a read initialises only that much of the caller's spare room (not all of it).
    plaintext: usize,
}

fn eproto() -> io::Error {
    io::Error::from_raw_os_error(libc::EPROTO)
}

impl TlsLayer {
    pub(crate) fn client(inner: Stream, cfg: Arc<rustls::ClientConfig>, name: ServerName<'static>) -> io::Result<TlsLayer> {
        let conn = rustls::ClientConnection::new(cfg, name).map_err(|_| eproto())?;
        Ok(TlsLayer { inner, conn: conn.into(), failed: None, eof: false, plaintext: 0 })
    }

    pub(crate) fn server(inner: Stream, cfg: Arc<rustls::ServerConfig>) -> io::Result<TlsLayer> {
        let conn = rustls::ServerConnection::new(cfg).map_err(|_| eproto())?;
        Ok(TlsLayer { inner, conn: conn.into(), failed: None, eof: false, plaintext: 0 })
    }

    /// Writes TLS records until none is left (true) or the stream is full (false).
    fn push(&mut self) -> io::Result<bool> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut Io(&mut self.inner)) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// The peer broke TLS or was refused: the alert goes out, the stream fails.
    fn fail(&mut self, e: &rustls::Error) -> io::Error {
        use rustls::AlertDescription as A;
        let cert = match e {
            rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented => true,
            rustls::Error::AlertReceived(a) => matches!(
                a,
                A::BadCertificate
                    | A::UnsupportedCertificate
                    | A::CertificateRevoked
                    | A::CertificateExpired
                    | A::CertificateUnknown
                    | A::UnknownCA
                    | A::CertificateRequired
                    | A::AccessDenied
            ),
            _ => false,
        };
        self.failed = Some(if cert { LayerFailure::Certificate } else { LayerFailure::Tls });
        let _ = self.push();
        eproto()
    }
}

impl ByteStream for TlsLayer {
    fn fd(&self) -> RawFd {
        self.inner.fd()
    }

    fn read_into(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        if self.failed.is_some() {
            return Err(eproto());
        }
        loop {
            let start = buf.len();
            // At least one byte, so that a close_notify (a read of 0) is seen.
            let want = (buf.capacity() - start).min(self.plaintext.max(1));
            buf.resize(start + want, 0);
            let r = self.conn.reader().read(&mut buf[start..]);
            buf.truncate(start + *r.as_ref().unwrap_or(&0));
            match r {
                Ok(n) => {
                    self.plaintext = self.plaintext.saturating_sub(n);
                    return Ok(n); // 0: close_notify
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return Ok(0), // the peer ended without close_notify
            }
            if self.eof {
                return Ok(0);
            }
            match self.conn.read_tls(&mut Io(&mut self.inner)) {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.push()?;
                    return Err(e);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            match self.conn.process_new_packets() {
                Ok(state) => self.plaintext = state.plaintext_bytes_to_read(),
                Err(e) => return Err(self.fail(&e)),
            }
            self.push()?;
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        if self.failed.is_some() {
            return Err(eproto());
        }
        let mut n = self.conn.writer().write_vectored(bufs)?;
        if n == 0 && !self.push()? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        if n == 0 {
            n = self.conn.writer().write_vectored(bufs)?;
        }
        self.push()?;
        if n == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<bool> {
        if self.failed.is_some() {
            return Err(eproto());
        }
        self.push()
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        self.conn.send_close_notify();
        let _ = self.push();
        self.inner.shutdown_write()
    }

    fn unacknowledged(&self) -> Option<i32> {
        self.inner.unacknowledged()
    }

    fn addrs(&self) -> (String, String) {
        let (l, r) = self.inner.addrs();
        let re = |a: String| a.strip_prefix("tcp://").map_or(a.clone(), |rest| format!("tls://{rest}"));
        (re(l), re(r))
    }

    fn peer_address(&self) -> String {
        self.inner.peer_address()
    }

    fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.take_error()
    }

    fn configure(&self, o: &StreamOptions) {
        self.inner.configure(o)
    }

    fn failure(&self) -> Option<LayerFailure> {
        self.failed
    }

    fn peer_subject(&self) -> Option<String> {
        if self.conn.is_handshaking() {
            return None;
        }
        let cert = self.conn.peer_certificates()?.first()?;
        subject::of(cert)
    }
}

/// The subject of an X.509 certificate as an RFC 4514 string (`CN=client,O=Example`), read
/// from its DER with a few lines of DER walking: only certificates rustls has verified get
/// here, and anything unexpected gives None.
pub(crate) mod subject {
    /// One DER element at the start of `d`: (tag, contents, rest).
    fn element(d: &[u8]) -> Option<(u8, &[u8], &[u8])> {
        let (&tag, d) = d.split_first()?;
        let (&l0, mut d) = d.split_first()?;
        let len = if l0 < 0x80 {
            l0 as usize
        } else {
            let n = (l0 & 0x7F) as usize;
            if n == 0 || n > 4 || d.len() < n {
                return None;
            }
            let mut len = 0usize;
            for &b in &d[..n] {
                len = (len << 8) | b as usize;
            }
            d = &d[n..];
            len
        };
        if d.len() < len {
            return None;
        }
        Some((tag, &d[..len], &d[len..]))
    }

    fn oid_name(oid: &[u8]) -> Option<&'static str> {
        Some(match oid {
            [0x55, 0x04, 0x03] => "CN",
            [0x55, 0x04, 0x06] => "C",
            [0x55, 0x04, 0x07] => "L",
            [0x55, 0x04, 0x08] => "ST",
            [0x55, 0x04, 0x0A] => "O",
            [0x55, 0x04, 0x0B] => "OU",
            [0x55, 0x04, 0x05] => "serialNumber",
            [0x09, 0x92, 0x26, 0x89, 0x93, 0xF2, 0x2C, 0x64, 0x01, 0x19] => "DC",
            [0x09, 0x92, 0x26, 0x89, 0x93, 0xF2, 0x2C, 0x64, 0x01, 0x01] => "UID",
            [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x01] => "emailAddress",
            _ => return None,
        })
    }

    /// RFC 4514 escaping of an attribute value.
    fn escape(v: &str, out: &mut String) {
        for (i, c) in v.chars().enumerate() {
            let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';' | '=')
                || (i == 0 && matches!(c, '#' | ' '))
                || (i + 1 == v.chars().count() && c == ' ');
            if special {
                out.push('\\');
            }
            out.push(c);
        }
    }

    /// The subject of the certificate `der`, most significant RDN last as RFC 4514 writes it.
    pub(crate) fn of(der: &[u8]) -> Option<String> {
        let (_, cert, _) = element(der)?; // Certificate
        let (_, tbs, _) = element(cert)?; // TBSCertificate
        let mut d = tbs;
        let (tag, _, rest) = element(d)?;
        if tag == 0xA0 {
            d = rest; // [0] version
        }
        // serialNumber, signature, issuer, validity, then subject.
        for _ in 0..4 {
            d = element(d)?.2;
        }
        let (tag, mut name, _) = element(d)?;
        if tag != 0x30 {
            return None;
        }
        let mut rdns = Vec::new();
        while !name.is_empty() {
            let (_, mut set, rest) = element(name)?;
            name = rest;
            let mut parts = Vec::new();
            while !set.is_empty() {
                let (_, atv, rest) = element(set)?;
                set = rest;
                let (_, oid, after) = element(atv)?;
                let (vtag, value, _) = element(after)?;
                let mut s = String::new();
                match oid_name(oid) {
                    Some(n) => s.push_str(n),
                    None => s.push_str(&oid.iter().map(|b| format!("{b:02x}")).collect::<String>()),
                }
                s.push('=');
                match vtag {
                    // UTF8String, PrintableString, IA5String, TeletexString
                    0x0C | 0x13 | 0x16 | 0x14 => escape(&String::from_utf8_lossy(value), &mut s),
                    _ => {
                        s.push('#');
                        s.extend(value.iter().map(|b| format!("{b:02x}")));
                    }
                }
                parts.push(s);
            }
            rdns.push(parts.join("+"));
        }
        rdns.reverse();
        Some(rdns.join(","))
    }
}
