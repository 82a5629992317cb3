//! The client side of a SOCKS5 proxy's handshake (RFC 1928, with RFC 1929's username and
//! password), without I/O: a tcp connection made through `ZMQ_SOCKS_PROXY` first asks the proxy
//! to CONNECT to the endpoint, then speaks ZMTP over the same stream.
//!
//! The caller writes [`Socks5::to_send`] and reads exactly [`Socks5::wants`] bytes at a time
//! into [`Socks5::received`]: a reply's length is only known as it arrives, and the proxy may
//! send the peer's ZMTP greeting right after its last reply, so nothing past it may be read
//! here.
//!
//! As libzmq's: one method is offered (none, or username/password when a username is set);
//! the endpoint's host goes to the proxy as an IPv4 or IPv6 address when it is one and as a
//! name otherwise, for the proxy to resolve.

use std::net::IpAddr;

const VERSION: u8 = 5;
const NO_AUTH: u8 = 0;
const USER_PASS: u8 = 2;
const NO_ACCEPTABLE: u8 = 0xff;
const CONNECT: u8 = 1;
const ATYP_V4: u8 = 1;
const ATYP_NAME: u8 = 3;
const ATYP_V6: u8 = 4;

/// Why the proxy did not connect us.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SocksError {
    /// A host name longer than the 255 bytes SOCKS can carry.
    NameTooLong,
    /// The proxy answered something that is not SOCKS5 or not what was asked.
    Protocol,
    /// The proxy accepts none of the offered methods.
    NoAcceptableMethod,
    /// The proxy refused the username and password.
    AuthFailed,
    /// The proxy could not CONNECT: RFC 1928's reply code (5: refused, 4: host unreachable...).
    Refused(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Greeting,
    Auth,
    Connect,
    /// The CONNECT reply's fixed part was read; the rest of its bound address is due.
    ConnectRest,
    Done,
}

pub(crate) struct Socks5 {
    step: Step,
    out: Vec<u8>,
    sent: usize,
    /// Bytes of the reply being read.
    inp: Vec<u8>,
    /// The reply's length so far known.
    need: usize,
    user: Vec<u8>,
    pass: Vec<u8>,
    request: Vec<u8>,
}

impl Socks5 {
    /// A handshake asking for a connection to `host:port` (an IP address literal, bracketed or
    /// not, or a name). Username/password authentication is offered when `user` is not empty.
    pub(crate) fn new(host: &str, port: u16, user: &[u8], pass: &[u8]) -> Result<Socks5, SocksError> {
        let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        let mut request = vec![VERSION, CONNECT, 0];
        match bare.parse::<IpAddr>() {
            Ok(IpAddr::V4(ip)) => {
                request.push(ATYP_V4);
                request.extend_from_slice(&ip.octets());
            }
            Ok(IpAddr::V6(ip)) => {
                request.push(ATYP_V6);
                request.extend_from_slice(&ip.octets());
            }
            Err(_) => {
                let len = u8::try_from(host.len()).map_err(|_| SocksError::NameTooLong)?;
                request.push(ATYP_NAME);
                request.push(len);
                request.extend_from_slice(host.as_bytes());
            }
        }
        request.extend_from_slice(&port.to_be_bytes());
        let method = if user.is_empty() { NO_AUTH } else { USER_PASS };
        Ok(Socks5 {
            step: Step::Greeting,
            out: vec![VERSION, 1, method],
            sent: 0,
            inp: Vec::new(),
            need: 2,
            user: user.to_vec(),
            pass: pass.to_vec(),
            request,
        })
    }

    /// Bytes to write to the proxy now (empty when waiting for a reply, or done).
    pub(crate) fn to_send(&self) -> &[u8] {
        &self.out[self.sent..]
    }

    /// `n` bytes of [`Socks5::to_send`] were written.
    pub(crate) fn sent(&mut self, n: usize) {
        self.sent = (self.sent + n).min(self.out.len());
    }

    /// How many bytes to read next: never more than the current reply still lacks (0 while
    /// there is something to send, and once done).
    pub(crate) fn wants(&self) -> usize {
        if self.step == Step::Done || !self.to_send().is_empty() {
            return 0;
        }
        self.need - self.inp.len()
    }

    /// True once the proxy has connected us: the stream now carries the endpoint's bytes.
    pub(crate) fn done(&self) -> bool {
        self.step == Step::Done
    }

    /// Takes bytes read from the proxy (at most [`Socks5::wants`]).
    pub(crate) fn received(&mut self, bytes: &[u8]) -> Result<(), SocksError> {
        if bytes.len() > self.wants() {
            return Err(SocksError::Protocol);
        }
        self.inp.extend_from_slice(bytes);
        if self.inp.len() < self.need {
            return Ok(());
        }
        match self.step {
            Step::Greeting => {
                let method = self.inp[1];
                if self.inp[0] != VERSION {
                    return Err(SocksError::Protocol);
                }
                if method == NO_ACCEPTABLE {
                    return Err(SocksError::NoAcceptableMethod);
                }
                let offered = if self.user.is_empty() { NO_AUTH } else { USER_PASS };
                if method != offered {
                    return Err(SocksError::Protocol);
                }
                if method == USER_PASS {
                    // RFC 1929: VER 1, ULEN, UNAME, PLEN, PASSWD (each at most 255 bytes; the
                    // options refuse longer ones).
                    let mut auth = vec![1, self.user.len() as u8];
                    auth.extend_from_slice(&self.user);
                    auth.push(self.pass.len() as u8);
                    auth.extend_from_slice(&self.pass);
                    self.next(Step::Auth, auth, 2);
                } else {
                    let request = std::mem::take(&mut self.request);
                    self.next(Step::Connect, request, 5);
                }
            }
            Step::Auth => {
                if self.inp[0] != 1 {
                    return Err(SocksError::Protocol);
                }
                if self.inp[1] != 0 {
                    return Err(SocksError::AuthFailed);
                }
                let request = std::mem::take(&mut self.request);
                self.next(Step::Connect, request, 5);
            }
            Step::Connect => {
                // VER REP RSV ATYP, then the bound address (its first byte is read already)
                // and port.
                if self.inp[0] != VERSION || self.inp[2] != 0 {
                    return Err(SocksError::Protocol);
                }
                if self.inp[1] != 0 {
                    return Err(SocksError::Refused(self.inp[1]));
                }
                let rest = match self.inp[3] {
                    ATYP_V4 => 4 - 1 + 2,
                    ATYP_V6 => 16 - 1 + 2,
                    ATYP_NAME => usize::from(self.inp[4]) + 2,
                    _ => return Err(SocksError::Protocol),
                };
                self.step = Step::ConnectRest;
                self.need += rest;
            }
            Step::ConnectRest => {
                self.step = Step::Done;
                self.inp = Vec::new();
            }
            Step::Done => return Err(SocksError::Protocol),
        }
        Ok(())
    }

    fn next(&mut self, step: Step, out: Vec<u8>, need: usize) {
        self.step = step;
        self.out = out;
        self.sent = 0;
        self.inp.clear();
        self.need = need;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds the proxy's bytes one read at a time, as the session does, and checks what the
    /// client sent at each step.
    fn exchange(s: &mut Socks5, replies: &[&[u8]]) -> Result<Vec<Vec<u8>>, SocksError> {
        let mut sent = Vec::new();
        for r in replies {
            sent.push(s.to_send().to_vec());
            let n = s.to_send().len();
            s.sent(n);
            let mut r = *r;
            while !r.is_empty() {
                let k = s.wants().min(r.len());
                assert!(k > 0, "the client asked for no more bytes with {} left in the reply", r.len());
                s.received(&r[..k])?;
                r = &r[k..];
            }
        }
        Ok(sent)
    }

    #[test]
    fn connects_to_an_ipv4_address_without_auth() {
        let mut s = Socks5::new("127.0.0.1", 5555, b"", b"").unwrap();
        let sent = exchange(&mut s, &[&[5, 0], &[5, 0, 0, 1, 10, 0, 0, 1, 0x1f, 0x90]]).unwrap();
        assert_eq!(sent[0], [5, 1, 0]);
        assert_eq!(sent[1], [5, 1, 0, 1, 127, 0, 0, 1, 0x15, 0xb3]);
        assert!(s.done());
        assert_eq!(s.wants(), 0, "nothing past the reply is read: it is the peer's");
    }

    #[test]
    fn sends_names_and_ipv6_addresses_as_such() {
        let mut s = Socks5::new("example.org", 1, b"", b"").unwrap();
        exchange(&mut s, &[&[5, 0]]).unwrap();
        assert_eq!(s.to_send(), [&[5, 1, 0, 3, 11][..], b"example.org", &[0, 1]].concat());
        for host in ["::1", "[::1]"] {
            let mut s = Socks5::new(host, 2, b"", b"").unwrap();
            exchange(&mut s, &[&[5, 0]]).unwrap();
            let mut want = vec![5, 1, 0, 4];
            want.extend_from_slice(&[0; 15]);
            want.extend_from_slice(&[1, 0, 2]);
            assert_eq!(s.to_send(), want, "{host}");
        }
        assert_eq!(Socks5::new(&"x".repeat(256), 1, b"", b"").err(), Some(SocksError::NameTooLong));
    }

    #[test]
    fn a_reply_with_a_name_is_read_to_its_end() {
        let mut s = Socks5::new("h", 9, b"", b"").unwrap();
        exchange(&mut s, &[&[5, 0]]).unwrap();
        s.sent(s.to_send().len());
        assert_eq!(s.wants(), 5);
        s.received(&[5, 0, 0, 3, 9]).unwrap();
        assert_eq!(s.wants(), 11, "9 name bytes and the port");
        s.received(b"localhost").unwrap();
        s.received(&[0]).unwrap();
        assert!(!s.done());
        s.received(&[7]).unwrap();
        assert!(s.done());
    }

    #[test]
    fn authenticates_with_username_and_password() {
        let mut s = Socks5::new("127.0.0.1", 1, b"someuser", b"pw").unwrap();
        let sent = exchange(&mut s, &[&[5, 2], &[1, 0], &[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]]).unwrap();
        assert_eq!(sent[0], [5, 1, 2]);
        assert_eq!(sent[1], [&[1, 8][..], b"someuser", &[2], b"pw"].concat());
        assert_eq!(sent[2][..4], [5, 1, 0, 1]);
        assert!(s.done());
    }

    #[test]
    fn refusals_are_errors() {
        let mut s = Socks5::new("127.0.0.1", 1, b"", b"").unwrap();
        assert_eq!(exchange(&mut s, &[&[5, 0xff]]).err(), Some(SocksError::NoAcceptableMethod));
        let mut s = Socks5::new("127.0.0.1", 1, b"u", b"p").unwrap();
        assert_eq!(exchange(&mut s, &[&[5, 2], &[1, 1]]).err(), Some(SocksError::AuthFailed));
        let mut s = Socks5::new("127.0.0.1", 1, b"", b"").unwrap();
        assert_eq!(exchange(&mut s, &[&[5, 0], &[5, 5, 0, 1, 0]]).err(), Some(SocksError::Refused(5)));
        let mut s = Socks5::new("127.0.0.1", 1, b"", b"").unwrap();
        assert_eq!(exchange(&mut s, &[&[4, 0]]).err(), Some(SocksError::Protocol), "not SOCKS5");
        let mut s = Socks5::new("127.0.0.1", 1, b"", b"").unwrap();
        assert_eq!(exchange(&mut s, &[&[5, 2]]).err(), Some(SocksError::Protocol), "a method not offered");
    }
}
