//! Security options (PLAIN and CURVE) and the CURVE key helpers.
//!
//! The options follow libzmq's `zmq_setsockopt(3)`: setting PLAIN_USERNAME or
//! PLAIN_PASSWORD makes the socket a PLAIN client, PLAIN_SERVER=1 a PLAIN
//! server; CURVE_SERVERKEY makes it a CURVE client, CURVE_SERVER=1 a CURVE
//! server, and CURVE_PUBLICKEY/CURVE_SECRETKEY select CURVE keeping the
//! current role. Setting a PLAIN/CURVE server flag to 0, or PLAIN_USERNAME or
//! PLAIN_PASSWORD to an empty value, returns the socket to NULL. MECHANISM
//! is read-only (0 NULL, 1 PLAIN, 2 CURVE). Like every option, they apply to
//! connections made after they are set.
//!
//! CURVE keys are accepted as 32 binary bytes, 40 Z85 characters, or 41 bytes
//! of Z85 ending in NUL (what C callers pass). They read back as 32 binary
//! bytes; the C ABI turns them into Z85 when the caller's buffer is 41 bytes.
//! Passwords and secret keys are wiped when the socket is dropped.
//!
//! ZAP_DOMAIN (at most 255 bytes; reads back NUL-terminated, as libzmq's) and
//! ZAP_ENFORCE_DOMAIN are kept here too, with a weak link to the context whose
//! `inproc://zeromq.zap.01` handler a server connection asks (see `io::zap`).

use crate::error::{Error, Result};
use crate::opt;
use zmtp::mechanism::{CurveClientKeys, CurveServerKeys, SecretBytes};
use zmtp::{CurveKeyPair, CurveSecretKey, Mechanism, PlainCredentials};

/// libzmq's ZMQ_NULL, ZMQ_PLAIN, ZMQ_CURVE.
pub const NULL: i32 = 0;
/// PLAIN mechanism number.
pub const PLAIN: i32 = 1;
/// CURVE mechanism number.
pub const CURVE: i32 = 2;

/// The security part of a socket's options.
#[derive(Clone, Debug)]
pub(crate) struct Security {
    mechanism: i32,
    as_server: bool,
    plain_username: Vec<u8>,
    plain_password: SecretBytes,
    curve_public: [u8; 32],
    curve_secret: CurveSecretKey,
    curve_server: [u8; 32],
    pub(crate) zap_domain: bytes::Bytes,
    pub(crate) zap_enforce_domain: bool,
    /// Where sessions ask for a ZAP verdict: the socket's context (None for options not
    /// attached to a socket).
    pub(crate) zap: Option<std::sync::Arc<dyn crate::io::config::ZapHandler>>,
}

impl Default for Security {
    fn default() -> Self {
        Security {
            mechanism: NULL,
            as_server: false,
            plain_username: Vec::new(),
            plain_password: SecretBytes::default(),
            curve_public: [0; 32],
            curve_secret: CurveSecretKey::from_bytes([0; 32]),
            curve_server: [0; 32],
            zap_domain: bytes::Bytes::new(),
            zap_enforce_domain: false,
            zap: None,
        }
    }
}

impl Security {
    /// Sets a security option. `Ok(false)` if `option` is not one.
    pub(crate) fn set(&mut self, option: i32, v: &[u8]) -> Result<bool> {
        match option {
            opt::MECHANISM => return Err(Error::Invalid),
            opt::PLAIN_SERVER => {
                let on = flag(v)?;
                self.as_server = on;
                self.mechanism = if on { PLAIN } else { NULL };
            }
            opt::PLAIN_USERNAME | opt::PLAIN_PASSWORD => {
                if v.len() > 255 {
                    return Err(Error::Invalid);
                }
                if v.is_empty() {
                    self.mechanism = NULL;
                } else {
                    if option == opt::PLAIN_USERNAME {
                        self.plain_username = v.to_vec();
                    } else {
                        self.plain_password = SecretBytes::new(v);
                    }
                    self.as_server = false;
                    self.mechanism = PLAIN;
                }
            }
            opt::CURVE_SERVER => {
                let on = flag(v)?;
                self.as_server = on;
                self.mechanism = if on { CURVE } else { NULL };
            }
            opt::CURVE_PUBLICKEY => {
                self.curve_public = parse_curve_key(v)?;
                self.mechanism = CURVE;
            }
            opt::CURVE_SECRETKEY => {
                self.curve_secret = CurveSecretKey::from_bytes(parse_curve_key(v)?);
                self.mechanism = CURVE;
            }
            opt::CURVE_SERVERKEY => {
                self.curve_server = parse_curve_key(v)?;
                self.as_server = false;
                self.mechanism = CURVE;
            }
            opt::ZAP_DOMAIN => {
                // libzmq takes the bytes up to an optional trailing NUL.
                let v = v.strip_suffix(&[0]).unwrap_or(v);
                if v.len() > 255 {
                    return Err(Error::Invalid);
                }
                self.zap_domain = bytes::Bytes::copy_from_slice(v);
            }
            opt::ZAP_ENFORCE_DOMAIN => self.zap_enforce_domain = flag(v)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Reads a security option; `None` if `option` is not one.
    pub(crate) fn get(&self, option: i32) -> Option<Vec<u8>> {
        let i = |n: i32| Some(n.to_ne_bytes().to_vec());
        match option {
            opt::MECHANISM => i(self.mechanism),
            opt::PLAIN_SERVER => i((self.as_server && self.mechanism == PLAIN) as i32),
            opt::CURVE_SERVER => i((self.as_server && self.mechanism == CURVE) as i32),
            opt::PLAIN_USERNAME => Some(self.plain_username.clone()),
            opt::PLAIN_PASSWORD => Some(self.plain_password.expose().to_vec()),
            opt::CURVE_PUBLICKEY => Some(self.curve_public.to_vec()),
            opt::CURVE_SECRETKEY => Some(self.curve_secret.expose().to_vec()),
            opt::CURVE_SERVERKEY => Some(self.curve_server.to_vec()),
            opt::ZAP_DOMAIN => {
                let mut v = self.zap_domain.to_vec();
                v.push(0);
                Some(v)
            }
            opt::ZAP_ENFORCE_DOMAIN => i(self.zap_enforce_domain as i32),
            _ => None,
        }
    }

    /// The mechanism a new connection runs, from the current options.
    pub(crate) fn mechanism(&self) -> Mechanism {
        match (self.mechanism, self.as_server) {
            (PLAIN, true) => Mechanism::PlainServer,
            // Both lengths were checked when set, so the credentials fit.
            (PLAIN, false) => PlainCredentials::new(&self.plain_username, self.plain_password.expose())
                .map_or(Mechanism::Null, Mechanism::PlainClient),
            (CURVE, true) => Mechanism::CurveServer(CurveServerKeys { secret: self.curve_secret.clone() }),
            (CURVE, false) => Mechanism::CurveClient(CurveClientKeys {
                public: self.curve_public,
                secret: self.curve_secret.clone(),
                server: self.curve_server,
            }),
            _ => Mechanism::Null,
        }
    }
}

fn flag(v: &[u8]) -> Result<bool> {
    match crate::opt::value::int_val(v)? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::Invalid),
    }
}

/// Parses a CURVE key option value: 32 binary bytes, 40 Z85 characters, or
/// 41 bytes of Z85 ending in NUL.
pub fn parse_curve_key(v: &[u8]) -> Result<[u8; 32]> {
    match v.len() {
        32 => {
            let mut k = [0u8; 32];
            k.copy_from_slice(v);
            Ok(k)
        }
        40 => zmtp::z85::decode_key(v).map_err(|_| Error::Invalid),
        41 if v[40] == 0 => zmtp::z85::decode_key(&v[..40]).map_err(|_| Error::Invalid),
        _ => Err(Error::Invalid),
    }
}

/// A new CURVE key pair as 40-character Z85 strings `(public, secret)`, like
/// libzmq's `zmq_curve_keypair`.
pub fn curve_keypair() -> (String, String) {
    let kp = CurveKeyPair::generate();
    // 32 bytes always encode.
    let public = zmtp::z85::encode(&kp.public).unwrap_or_default();
    let secret = zmtp::z85::encode(kp.secret.expose()).unwrap_or_default();
    (public, secret)
}

/// The public key of a secret key given in any form [`parse_curve_key`]
/// accepts, as Z85 (libzmq's `zmq_curve_public`).
pub fn curve_public(secret: &[u8]) -> Result<String> {
    let secret = CurveSecretKey::from_bytes(parse_curve_key(secret)?);
    zmtp::z85::encode(&secret.public_key()).map_err(|_| Error::Invalid)
}

/// Z85-encodes `data` (length a multiple of 4).
pub fn z85_encode(data: &[u8]) -> Result<String> {
    zmtp::z85::encode(data).map_err(|_| Error::Invalid)
}

/// Decodes Z85 `text` (length a multiple of 5).
pub fn z85_decode(text: &[u8]) -> Result<Vec<u8>> {
    zmtp::z85::decode(text).map_err(|_| Error::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVER_PUBLIC: &str = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
    const SERVER_SECRET: &str = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";

    fn int(n: i32) -> [u8; 4] {
        n.to_ne_bytes()
    }

    #[test]
    fn roles_follow_libzmq() {
        let mut s = Security::default();
        assert_eq!(s.get(opt::MECHANISM), Some(int(NULL).to_vec()));
        assert_eq!(s.set(opt::MECHANISM, &int(1)), Err(Error::Invalid));
        s.set(opt::PLAIN_USERNAME, b"admin").unwrap();
        s.set(opt::PLAIN_PASSWORD, b"secret").unwrap();
        assert_eq!(s.get(opt::MECHANISM), Some(int(PLAIN).to_vec()));
        assert_eq!(s.get(opt::PLAIN_SERVER), Some(int(0).to_vec()));
        assert!(matches!(s.mechanism(), Mechanism::PlainClient(c) if c.username() == b"admin" && c.password() == b"secret"));
        s.set(opt::PLAIN_SERVER, &int(1)).unwrap();
        assert_eq!(s.mechanism(), Mechanism::PlainServer);
        s.set(opt::PLAIN_SERVER, &int(0)).unwrap();
        assert_eq!(s.mechanism(), Mechanism::Null);
        s.set(opt::PLAIN_USERNAME, b"x").unwrap();
        s.set(opt::PLAIN_USERNAME, b"").unwrap();
        assert_eq!(s.get(opt::MECHANISM), Some(int(NULL).to_vec()));
        assert_eq!(s.set(opt::PLAIN_PASSWORD, &[b'a'; 256]), Err(Error::Invalid));
        assert_eq!(s.set(opt::PLAIN_SERVER, &int(2)), Err(Error::Invalid));

        let mut s = Security::default();
        s.set(opt::CURVE_SERVER, &int(1)).unwrap();
        s.set(opt::CURVE_SECRETKEY, SERVER_SECRET.as_bytes()).unwrap();
        assert_eq!(s.get(opt::CURVE_SERVER), Some(int(1).to_vec()));
        assert_eq!(s.get(opt::MECHANISM), Some(int(CURVE).to_vec()));
        assert!(matches!(s.mechanism(), Mechanism::CurveServer(_)));
        // SERVERKEY makes a client.
        s.set(opt::CURVE_SERVERKEY, SERVER_PUBLIC.as_bytes()).unwrap();
        assert_eq!(s.get(opt::CURVE_SERVER), Some(int(0).to_vec()));
        match s.mechanism() {
            Mechanism::CurveClient(k) => assert_eq!(zmtp::z85::encode(&k.server).unwrap(), SERVER_PUBLIC),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn zap_options() {
        let mut s = Security::default();
        assert_eq!(s.get(opt::ZAP_DOMAIN), Some(vec![0]));
        s.set(opt::ZAP_DOMAIN, b"global").unwrap();
        assert_eq!(s.get(opt::ZAP_DOMAIN), Some(b"global\0".to_vec()));
        s.set(opt::ZAP_DOMAIN, b"nul\0").unwrap();
        assert_eq!(&s.zap_domain[..], b"nul");
        assert_eq!(s.set(opt::ZAP_DOMAIN, &[b'a'; 256]), Err(Error::Invalid));
        s.set(opt::ZAP_ENFORCE_DOMAIN, &int(1)).unwrap();
        assert_eq!(s.get(opt::ZAP_ENFORCE_DOMAIN), Some(int(1).to_vec()));
        assert_eq!(s.set(opt::ZAP_ENFORCE_DOMAIN, &int(2)), Err(Error::Invalid));
        assert!(s.zap.is_none());
    }

    #[test]
    fn curve_key_forms() {
        let bin = parse_curve_key(SERVER_PUBLIC.as_bytes()).unwrap();
        assert_eq!(parse_curve_key(&bin).unwrap(), bin);
        let mut with_nul = SERVER_PUBLIC.as_bytes().to_vec();
        with_nul.push(0);
        assert_eq!(parse_curve_key(&with_nul).unwrap(), bin);
        with_nul[40] = b'x';
        assert_eq!(parse_curve_key(&with_nul), Err(Error::Invalid));
        assert_eq!(parse_curve_key(&[0; 31]), Err(Error::Invalid));
        assert_eq!(parse_curve_key(&[b' '; 40]), Err(Error::Invalid));
        assert_eq!(curve_public(SERVER_SECRET.as_bytes()).unwrap(), SERVER_PUBLIC);
        let (public, secret) = curve_keypair();
        assert_eq!((public.len(), secret.len()), (40, 40));
        assert_eq!(curve_public(secret.as_bytes()).unwrap(), public);
        assert_eq!(z85_encode(&z85_decode(b"HelloWorld").unwrap()).unwrap(), "HelloWorld");
        assert_eq!(z85_encode(b"abc"), Err(Error::Invalid));
    }
}
