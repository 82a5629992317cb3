//! The CURVE mechanism (RFC 25 CurveZMQ, RFC 26 ZMTP-CURVE) as libzmq 4.3
//! puts it on the wire.
//!
//! ```text
//! client                                              server
//! HELLO    1.0, 72 zero bytes of padding, C', nonce,
//!          Box[64 zeros](C'->S)                 ->
//!                                               <-    WELCOME  long nonce, Box[S' + cookie](S->C')
//! INITIATE cookie, nonce,
//!          Box[C + vouch + metadata](C'->S')    ->
//!                                               <-    READY    nonce, Box[metadata](S'->C')
//! MESSAGE  nonce, Box[flags + body]             <->   MESSAGE  (each direction its own nonces)
//! ```
//!
//! `C`/`c` and `S`/`s` are the long-term public/secret keys, primed ones the
//! per-connection (short-term) keys. The cookie is
//! `nonce16 + SecretBox[C' + s'](K)` under a per-connection random key K;
//! the vouch is `nonce16 + Box[C' + S](C->S')`. Short nonces are 64-bit
//! big-endian counters appended to libzmq's 16-byte prefixes
//! ("CurveZMQHELLO---", "CurveZMQINITIATE", "CurveZMQREADY---",
//! "CurveZMQMESSAGEC" client to server, "CurveZMQMESSAGES" server to client);
//! long nonces are 16 random bytes after "WELCOME-", "COOKIE--" or
//! "VOUCH---". The client's counter runs HELLO = 1, INITIATE = 2, then
//! MESSAGEs; the server's READY = 1, then MESSAGEs. Every received short
//! nonce must exceed the previous one from that peer, so a replayed or
//! reordered command is refused.
//!
//! Boxes are NaCl `crypto_box` (X25519, HSalsa20, XSalsa20-Poly1305), the
//! 16-byte MAC first. After the handshake [`Cipher`] wraps and unwraps every
//! frame; like libzmq, a MESSAGE goes out as a frame with no flags and the
//! frame's MORE/COMMAND bits travel inside the box.
//!
//! Every comparison of secret or authenticated material is constant time;
//! secret keys, the cookie key and session keys are wiped when dropped.

use std::ops::Range;

use bytes::{Bytes, BytesMut};
use crypto_secretbox::aead::rand_core::RngCore;
use crypto_secretbox::aead::{AeadInPlace, KeyInit, OsRng};
use crypto_secretbox::{Tag, XSalsa20Poly1305};
use subtle::ConstantTimeEq;
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::{Zeroize, Zeroizing};

use super::secretbox::{MessageBox, SecretBox};
use super::{peer_error_or_unexpected, split_command, CurveClientKeys, CurveServerKeys, Status, ZapMode};
use crate::error::{CipherError, HandshakeError};
use crate::frame::{encode_frame, encode_header, Frame};
use crate::metadata::Metadata;

/// Length of a CURVE key.
pub const KEY_LEN: usize = 32;
/// Bytes a MESSAGE adds to a frame body: name (8), nonce (8), MAC (16),
/// flags (1).
pub const MESSAGE_OVERHEAD: usize = 33;

const MAC_LEN: usize = 16;
const HELLO_LEN: usize = 200;
const WELCOME_LEN: usize = 168;
const INITIATE_MIN: usize = 257;
const READY_MIN: usize = 30;
const MESSAGE_NAME: &[u8; 8] = b"\x07MESSAGE";
const FLAG_MORE: u8 = 0x01;
const FLAG_COMMAND: u8 = 0x02;

const HELLO_PREFIX: &[u8; 16] = b"CurveZMQHELLO---";
const INITIATE_PREFIX: &[u8; 16] = b"CurveZMQINITIATE";
const READY_PREFIX: &[u8; 16] = b"CurveZMQREADY---";
const MESSAGE_C: &[u8; 16] = b"CurveZMQMESSAGEC";
const MESSAGE_S: &[u8; 16] = b"CurveZMQMESSAGES";
const WELCOME_PREFIX: &[u8; 8] = b"WELCOME-";
const COOKIE_PREFIX: &[u8; 8] = b"COOKIE--";
const VOUCH_PREFIX: &[u8; 8] = b"VOUCH---";

// ----- keys -----

/// A CURVE secret key: wiped on drop, compared in constant time, never
/// printed.
#[derive(Clone)]
pub struct CurveSecretKey(Zeroizing<[u8; KEY_LEN]>);

impl CurveSecretKey {
    /// A fresh random secret key from the operating system's generator.
    pub fn generate() -> CurveSecretKey {
        let mut k = Zeroizing::new([0u8; KEY_LEN]);
        OsRng.fill_bytes(&mut k[..]);
        CurveSecretKey(k)
    }

    /// Wraps 32 secret bytes.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> CurveSecretKey {
        let mut k = Zeroizing::new([0u8; KEY_LEN]);
        k.copy_from_slice(&bytes);
        CurveSecretKey(k)
    }

    /// The secret bytes (for option reads and key files).
    pub fn expose(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// The matching public key (libzmq's `zmq_curve_public`).
    pub fn public_key(&self) -> [u8; KEY_LEN] {
        PublicKey::from(&self.to_static()).to_bytes()
    }

    fn to_static(&self) -> StaticSecret {
        StaticSecret::from(*self.0)
    }
}

impl PartialEq for CurveSecretKey {
    fn eq(&self, other: &Self) -> bool {
        bool::from(self.0.ct_eq(&*other.0))
    }
}

impl Eq for CurveSecretKey {}

impl std::fmt::Debug for CurveSecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CurveSecretKey(<redacted>)")
    }
}

/// A CURVE key pair (libzmq's `zmq_curve_keypair`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurveKeyPair {
    /// The public key.
    pub public: [u8; KEY_LEN],
    /// The secret key.
    pub secret: CurveSecretKey,
}

impl CurveKeyPair {
    /// A fresh random key pair.
    pub fn generate() -> CurveKeyPair {
        let secret = CurveSecretKey::generate();
        CurveKeyPair { public: secret.public_key(), secret }
    }
}

// ----- NaCl box helpers -----

/// `crypto_box_beforenm`: the XSalsa20-Poly1305 key `secret` and `public`
/// share. `None` when the peer's point is of small order (the shared secret
/// would be all zeros, which libsodium refuses too).
fn precompute(secret: &StaticSecret, public: &[u8; KEY_LEN]) -> Option<XSalsa20Poly1305> {
    precompute_key(secret, public).map(|k| XSalsa20Poly1305::new(crypto_secretbox::Key::from_slice(&k[..])))
}

/// [`precompute`]'s key itself, for the session key that also drives the data phase's
/// [`SecretBox`].
fn precompute_key(secret: &StaticSecret, public: &[u8; KEY_LEN]) -> Option<Zeroizing<[u8; KEY_LEN]>> {
    let shared = secret.diffie_hellman(&PublicKey::from(*public));
    if !shared.was_contributory() {
        return None;
    }
    let mut key =
        salsa20::hsalsa::<salsa20::cipher::consts::U10>(salsa20::Key::from_slice(shared.as_bytes()), &Default::default());
    let mut out = Zeroizing::new([0u8; KEY_LEN]);
    out.copy_from_slice(&key);
    key.as_mut_slice().zeroize();
    Some(out)
}

/// The session key as both the handshake's AEAD (INITIATE, READY) and the data phase's
/// [`SecretBox`].
fn session_keys(secret: &StaticSecret, public: &[u8; KEY_LEN]) -> Option<(XSalsa20Poly1305, SecretBox)> {
    let k = precompute_key(secret, public)?;
    Some((XSalsa20Poly1305::new(crypto_secretbox::Key::from_slice(&k[..])), SecretBox::new(&k)))
}

fn nonce24(prefix: &[u8], tail: &[u8]) -> crypto_secretbox::Nonce {
    let mut n = crypto_secretbox::Nonce::default();
    n[..prefix.len()].copy_from_slice(prefix);
    n[prefix.len()..].copy_from_slice(tail);
    n
}

/// Appends `MAC + ciphertext` of `plaintext`.
fn seal(aead: &XSalsa20Poly1305, nonce: &crypto_secretbox::Nonce, plaintext: &[u8], out: &mut Vec<u8>) {
    let tag_at = out.len();
    out.extend_from_slice(&[0u8; MAC_LEN]);
    let ct_at = out.len();
    out.extend_from_slice(plaintext);
    // Only inputs beyond 2^38 bytes fail; handshake boxes are tiny.
    if let Ok(tag) = aead.encrypt_in_place_detached(nonce, b"", &mut out[ct_at..]) {
        out[tag_at..ct_at].copy_from_slice(&tag);
    }
}

/// Opens `MAC + ciphertext`; `None` if it does not authenticate.
fn open(aead: &XSalsa20Poly1305, nonce: &crypto_secretbox::Nonce, boxed: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    if boxed.len() < MAC_LEN {
        return None;
    }
    let tag = Tag::clone_from_slice(&boxed[..MAC_LEN]);
    let mut pt = Zeroizing::new(boxed[MAC_LEN..].to_vec());
    aead.decrypt_in_place_detached(nonce, b"", &mut pt, &tag).ok()?;
    Some(pt)
}

fn random16() -> [u8; 16] {
    let mut b = [0u8; 16];
    OsRng.fill_bytes(&mut b);
    b
}

fn key_at(b: &[u8], at: usize) -> [u8; KEY_LEN] {
    let mut k = [0u8; KEY_LEN];
    k.copy_from_slice(&b[at..at + KEY_LEN]);
    k
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut n = [0u8; 8];
    n.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(n)
}

fn command_frame(parts: &[&[u8]], out: &mut Vec<u8>) {
    let body: Vec<u8> = parts.concat();
    encode_frame(&body, false, true, out);
}

// ----- data phase -----

/// The data-phase half of CURVE: turns frames into MESSAGE commands and
/// back, with per-direction nonces. Sans-IO: the engine calls [`seal`]
/// for each outgoing frame and [`open`]/[`open_in_place`] for each
/// incoming one. Any error is fatal to the connection.
///
/// [`seal`]: Cipher::seal
/// [`open`]: Cipher::open
/// [`open_in_place`]: Cipher::open_in_place
pub struct Cipher {
    /// Seals our MESSAGEs (the HSalsa20 subkey of our nonce prefix).
    tx: MessageBox,
    /// Opens the peer's.
    rx: MessageBox,
    /// The nonce our next MESSAGE uses.
    send_nonce: u64,
    /// The last nonce accepted from the peer.
    recv_nonce: u64,
}

impl std::fmt::Debug for Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cipher")
            .field("send_nonce", &self.send_nonce)
            .field("recv_nonce", &self.recv_nonce)
            .finish_non_exhaustive()
    }
}

/// The flags carried inside a MESSAGE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opened {
    /// More frames of this message follow.
    pub more: bool,
    /// The frame is a command (PING, PONG, SUBSCRIBE, ...).
    pub command: bool,
}

impl Cipher {
    fn new(data: &SecretBox, send_prefix: &[u8; 16], recv_prefix: &[u8; 16], send_nonce: u64, recv_nonce: u64) -> Cipher {
        Cipher { tx: data.with_prefix(send_prefix), rx: data.with_prefix(recv_prefix), send_nonce, recv_nonce }
    }

    /// Appends one whole frame, a MESSAGE command wrapping `body` with the
    /// frame's MORE and COMMAND flags.
    pub fn seal(&mut self, more: bool, command: bool, body: &[u8], out: &mut Vec<u8>) -> Result<(), CipherError> {
        if self.send_nonce == u64::MAX {
            return Err(CipherError::NonceExhausted);
        }
        let n = self.send_nonce;
        self.send_nonce += 1;
        let len = MESSAGE_OVERHEAD + body.len();
        out.reserve(9 + len);
        // libzmq sends MESSAGE with no frame flags: the flags are in the box.
        encode_header(len, false, false, out);
        out.extend_from_slice(MESSAGE_NAME);
        out.extend_from_slice(&n.to_be_bytes());
        let flags = (u8::from(more) * FLAG_MORE) | (u8::from(command) * FLAG_COMMAND);
        let tag_at = out.len();
        out.extend_from_slice(&[0u8; MAC_LEN]);
        let pt_at = out.len();
        out.push(flags);
        // The box encrypts the flags in place and appends the body encrypted (copying and
        // encrypting in L1-sized pieces, not copying all then encrypting all).
        let tag = self.tx.seal_append(&n.to_be_bytes(), out, pt_at, body);
        out[tag_at..pt_at].copy_from_slice(&tag);
        Ok(())
    }

    /// Opens a MESSAGE command body in place: on success `body[range]` is
    /// the plaintext frame body.
    pub fn open_in_place(&mut self, body: &mut [u8]) -> Result<(Opened, Range<usize>), CipherError> {
        if body.len() < MESSAGE_NAME.len() || &body[..MESSAGE_NAME.len()] != MESSAGE_NAME {
            return Err(CipherError::NotMessage);
        }
        if body.len() < MESSAGE_OVERHEAD {
            return Err(CipherError::Malformed);
        }
        let n = u64_at(body, 8);
        if n <= self.recv_nonce {
            return Err(CipherError::InvalidNonce { nonce: n, last: self.recv_nonce });
        }
        let tail = n.to_be_bytes();
        let mut tag = [0u8; MAC_LEN];
        tag.copy_from_slice(&body[16..32]);
        self.rx.open(&tail, &mut body[32..], &tag).map_err(|_| CipherError::Tampered)?;
        self.recv_nonce = n;
        let flags = body[32];
        let opened = Opened { more: flags & FLAG_MORE != 0, command: flags & FLAG_COMMAND != 0 };
        if flags & !(FLAG_MORE | FLAG_COMMAND) != 0 || opened.more && opened.command {
            return Err(CipherError::BadFlags { flags });
        }
        Ok((opened, MESSAGE_OVERHEAD..body.len()))
    }

    /// Opens a MESSAGE command body; the plaintext shares `body`'s memory.
    pub fn open(&mut self, mut body: BytesMut) -> Result<Frame, CipherError> {
        let (f, range) = self.open_in_place(&mut body)?;
        Ok(Frame { more: f.more, command: f.command, body: body.freeze().slice(range) })
    }
}

// ----- client -----

/// A CURVE client handshake.
pub(crate) struct Client {
    public: [u8; KEY_LEN],
    secret: StaticSecret,
    server: [u8; KEY_LEN],
    cn_public: [u8; KEY_LEN],
    cn_secret: StaticSecret,
    metadata: Metadata,
    state: ClientState,
    cipher: Option<Cipher>,
}

enum ClientState {
    Idle,
    /// HELLO sent (nonce 1); waiting for WELCOME.
    HelloSent,
    /// INITIATE sent (nonce 2) under the session key; waiting for READY.
    InitiateSent {
        session: XSalsa20Poly1305,
        data: SecretBox,
    },
    Done,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            ClientState::Idle => "Idle",
            ClientState::HelloSent => "HelloSent",
            ClientState::InitiateSent { .. } => "InitiateSent",
            ClientState::Done => "Done",
        };
        f.debug_struct("CurveClient").field("state", &state).finish_non_exhaustive()
    }
}

impl Client {
    pub(crate) fn new(keys: &CurveClientKeys) -> Client {
        let cn_secret = StaticSecret::random_from_rng(OsRng);
        Client {
            public: keys.public,
            secret: keys.secret.to_static(),
            server: keys.server,
            cn_public: PublicKey::from(&cn_secret).to_bytes(),
            cn_secret,
            metadata: Metadata::new(),
            state: ClientState::Idle,
            cipher: None,
        }
    }

    pub(crate) fn start(&mut self, ours: &Metadata, out: &mut Vec<u8>) {
        if !matches!(self.state, ClientState::Idle) {
            return;
        }
        self.metadata = ours.clone();
        let mut boxed = Vec::with_capacity(80);
        if let Some(k) = precompute(&self.cn_secret, &self.server) {
            seal(&k, &nonce24(HELLO_PREFIX, &1u64.to_be_bytes()), &[0u8; 64], &mut boxed);
        } else {
            // A server key of small order: send a box no server can open,
            // so the handshake fails on the server as with a wrong key.
            boxed.resize(80, 0);
        }
        command_frame(&[b"\x05HELLO", b"\x01\x00", &[0u8; 72], &self.cn_public, &1u64.to_be_bytes(), &boxed], out);
        self.state = ClientState::HelloSent;
    }

    pub(crate) fn take_cipher(&mut self) -> Option<Cipher> {
        self.cipher.take()
    }

    pub(crate) fn on_command(&mut self, body: &Bytes, out: &mut Vec<u8>) -> Result<Status, HandshakeError> {
        let (name, _) = split_command(body)?;
        match (std::mem::replace(&mut self.state, ClientState::Done), name) {
            (ClientState::HelloSent, b"WELCOME") => {
                let (session, data) = self.on_welcome(body, out)?;
                self.state = ClientState::InitiateSent { session, data };
                Ok(Status::InProgress)
            }
            (ClientState::InitiateSent { session, data }, b"READY") => {
                if body.len() < READY_MIN {
                    return Err(HandshakeError::MalformedCommand { command: "READY" });
                }
                let n = u64_at(body, 6);
                let pt = open(&session, &nonce24(READY_PREFIX, &body[6..14]), &body[14..])
                    .ok_or(HandshakeError::Cryptographic { command: "READY" })?;
                let meta = Metadata::parse_bytes(&Bytes::copy_from_slice(&pt))?;
                self.cipher = Some(Cipher::new(&data, MESSAGE_C, MESSAGE_S, 3, n));
                Ok(Status::Complete(meta))
            }
            (ClientState::HelloSent | ClientState::InitiateSent { .. }, _) => Err(peer_error_or_unexpected(body)),
            _ => Err(HandshakeError::UnexpectedCommand(Bytes::copy_from_slice(name))),
        }
    }

    /// Opens WELCOME, queues INITIATE, returns the session key.
    fn on_welcome(&mut self, body: &[u8], out: &mut Vec<u8>) -> Result<(XSalsa20Poly1305, SecretBox), HandshakeError> {
        if body.len() != WELCOME_LEN {
            return Err(HandshakeError::MalformedCommand { command: "WELCOME" });
        }
        let bad = HandshakeError::Cryptographic { command: "WELCOME" };
        let long_term = precompute(&self.cn_secret, &self.server).ok_or(bad.clone())?;
        let pt = open(&long_term, &nonce24(WELCOME_PREFIX, &body[8..24]), &body[24..]).ok_or(bad.clone())?;
        let cn_server = key_at(&pt, 0);
        let cookie = &pt[32..128];
        let (session, data) = session_keys(&self.cn_secret, &cn_server).ok_or(bad)?;

        // vouch = nonce16 + Box[C' + S](C->S')
        let vouch_nonce = random16();
        let vouch_key = precompute(&self.secret, &cn_server).ok_or(HandshakeError::BadVouch)?;
        let mut vouch_pt = Zeroizing::new([0u8; 64]);
        vouch_pt[..32].copy_from_slice(&self.cn_public);
        vouch_pt[32..].copy_from_slice(&self.server);
        let mut vouch = Vec::with_capacity(80);
        seal(&vouch_key, &nonce24(VOUCH_PREFIX, &vouch_nonce), &vouch_pt[..], &mut vouch);

        let mut pt = Zeroizing::new(Vec::with_capacity(128 + 64));
        pt.extend_from_slice(&self.public);
        pt.extend_from_slice(&vouch_nonce);
        pt.extend_from_slice(&vouch);
        self.metadata.encode(&mut pt);
        let mut boxed = Vec::with_capacity(pt.len() + MAC_LEN);
        seal(&session, &nonce24(INITIATE_PREFIX, &2u64.to_be_bytes()), &pt, &mut boxed);
        command_frame(&[b"\x08INITIATE", cookie, &2u64.to_be_bytes(), &boxed], out);
        Ok((session, data))
    }
}

// ----- server -----

/// A CURVE server handshake.
pub(crate) struct Server {
    public: [u8; KEY_LEN],
    secret: StaticSecret,
    cn_public: [u8; KEY_LEN],
    cn_secret: StaticSecret,
    metadata: Metadata,
    state: ServerState,
    cipher: Option<Cipher>,
    /// The client's long-term public key, once INITIATE is verified (for ZAP).
    client_key: Option<[u8; KEY_LEN]>,
    /// What to do once INITIATE is verified: ask ZAP, proceed, or refuse.
    zap: ZapMode,
}

enum ServerState {
    /// Waiting for HELLO.
    Idle,
    /// WELCOME sent; waiting for INITIATE.
    WelcomeSent {
        cn_client: [u8; KEY_LEN],
        cookie_key: Zeroizing<[u8; KEY_LEN]>,
        hello_nonce: u64,
    },
    /// INITIATE verified; waiting for the ZAP verdict before READY.
    AwaitingZap {
        meta: Metadata,
        session: XSalsa20Poly1305,
        data: SecretBox,
        initiate_nonce: u64,
    },
    Done,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            ServerState::Idle => "Idle",
            ServerState::WelcomeSent { .. } => "WelcomeSent",
            ServerState::AwaitingZap { .. } => "AwaitingZap",
            ServerState::Done => "Done",
        };
        f.debug_struct("CurveServer").field("state", &state).finish_non_exhaustive()
    }
}

impl Server {
    pub(crate) fn new(keys: &CurveServerKeys, zap: ZapMode) -> Server {
        let cn_secret = StaticSecret::random_from_rng(OsRng);
        Server {
            public: keys.secret.public_key(),
            secret: keys.secret.to_static(),
            cn_public: PublicKey::from(&cn_secret).to_bytes(),
            cn_secret,
            metadata: Metadata::new(),
            state: ServerState::Idle,
            cipher: None,
            client_key: None,
            zap,
        }
    }

    /// The server speaks second: nothing to send yet.
    pub(crate) fn start(&mut self, ours: &Metadata) {
        self.metadata = ours.clone();
    }

    pub(crate) fn take_cipher(&mut self) -> Option<Cipher> {
        self.cipher.take()
    }

    /// The client's long-term public key, once its INITIATE was verified.
    #[cfg(test)]
    pub(crate) fn client_key(&self) -> Option<&[u8; KEY_LEN]> {
        self.client_key.as_ref()
    }

    pub(crate) fn on_command(&mut self, body: &Bytes, out: &mut Vec<u8>) -> Result<Status, HandshakeError> {
        let (name, _) = split_command(body)?;
        match (std::mem::replace(&mut self.state, ServerState::Done), name) {
            (ServerState::Idle, b"HELLO") => {
                self.state = self.on_hello(body, out)?;
                Ok(Status::InProgress)
            }
            (ServerState::WelcomeSent { cn_client, cookie_key, hello_nonce }, b"INITIATE") => {
                self.on_initiate(body, out, &cn_client, &cookie_key, hello_nonce)
            }
            (ServerState::Idle | ServerState::WelcomeSent { .. }, _) => Err(peer_error_or_unexpected(body)),
            _ => Err(HandshakeError::UnexpectedCommand(Bytes::copy_from_slice(name))),
        }
    }

    fn on_hello(&mut self, body: &[u8], out: &mut Vec<u8>) -> Result<ServerState, HandshakeError> {
        if body.len() != HELLO_LEN {
            // Includes a HELLO without its padding: answering it with a
            // bigger WELCOME would make us an amplifier.
            return Err(HandshakeError::MalformedCommand { command: "HELLO" });
        }
        if body[6..8] != [1, 0] {
            return Err(HandshakeError::UnsupportedCurveVersion { major: body[6], minor: body[7] });
        }
        let bad = HandshakeError::Cryptographic { command: "HELLO" };
        let cn_client = key_at(body, 80);
        let hello_nonce = u64_at(body, 112);
        let k = precompute(&self.secret, &cn_client).ok_or(bad.clone())?;
        let pt = open(&k, &nonce24(HELLO_PREFIX, &body[112..120]), &body[120..200]).ok_or(bad.clone())?;
        if !bool::from(pt.ct_eq(&[0u8; 64][..])) {
            return Err(bad);
        }

        // cookie = nonce16 + SecretBox[C' + s'](K), K fresh per connection.
        let cookie_key = {
            let mut k = Zeroizing::new([0u8; KEY_LEN]);
            OsRng.fill_bytes(&mut k[..]);
            k
        };
        let cookie_nonce = random16();
        let mut cookie_pt = Zeroizing::new([0u8; 64]);
        cookie_pt[..32].copy_from_slice(&cn_client);
        cookie_pt[32..].copy_from_slice(self.cn_secret.as_bytes());
        let mut welcome_pt = Zeroizing::new(Vec::with_capacity(128));
        welcome_pt.extend_from_slice(&self.cn_public);
        welcome_pt.extend_from_slice(&cookie_nonce);
        let cookie_box = XSalsa20Poly1305::new(crypto_secretbox::Key::from_slice(&cookie_key[..]));
        seal(&cookie_box, &nonce24(COOKIE_PREFIX, &cookie_nonce), &cookie_pt[..], &mut welcome_pt);

        let welcome_nonce = random16();
        let mut boxed = Vec::with_capacity(144);
        seal(&k, &nonce24(WELCOME_PREFIX, &welcome_nonce), &welcome_pt, &mut boxed);
        command_frame(&[b"\x07WELCOME", &welcome_nonce, &boxed], out);
        Ok(ServerState::WelcomeSent { cn_client, cookie_key, hello_nonce })
    }

    fn on_initiate(
        &mut self,
        body: &[u8],
        out: &mut Vec<u8>,
        cn_client: &[u8; KEY_LEN],
        cookie_key: &[u8; KEY_LEN],
        hello_nonce: u64,
    ) -> Result<Status, HandshakeError> {
        if body.len() < INITIATE_MIN {
            return Err(HandshakeError::MalformedCommand { command: "INITIATE" });
        }
        // The cookie must decrypt under this connection's key and hold this
        // connection's C' and s'.
        let cookie_box = XSalsa20Poly1305::new(crypto_secretbox::Key::from_slice(cookie_key));
        let cookie = open(&cookie_box, &nonce24(COOKIE_PREFIX, &body[9..25]), &body[25..105]).ok_or(HandshakeError::BadCookie)?;
        let client_ok = cookie[..32].ct_eq(cn_client);
        let secret_ok = cookie[32..64].ct_eq(self.cn_secret.as_bytes());
        if !bool::from(client_ok & secret_ok) {
            return Err(HandshakeError::BadCookie);
        }
        let n = u64_at(body, 105);
        if n <= hello_nonce {
            return Err(HandshakeError::InvalidNonce);
        }
        let bad = HandshakeError::Cryptographic { command: "INITIATE" };
        let (session, data) = session_keys(&self.cn_secret, cn_client).ok_or(bad.clone())?;
        let pt = open(&session, &nonce24(INITIATE_PREFIX, &body[105..113]), &body[113..]).ok_or(bad)?;
        if pt.len() < 128 {
            return Err(HandshakeError::MalformedCommand { command: "INITIATE" });
        }
        let client_key = key_at(&pt, 0);
        // vouch: Box[C' + S](C->S') proves the holder of C speaks for C'.
        let vouch_key = precompute(&self.cn_secret, &client_key).ok_or(HandshakeError::BadVouch)?;
        let vouch = open(&vouch_key, &nonce24(VOUCH_PREFIX, &pt[32..48]), &pt[48..128]).ok_or(HandshakeError::BadVouch)?;
        let short_ok = vouch[..32].ct_eq(cn_client);
        let server_ok = vouch[32..64].ct_eq(&self.public);
        if !bool::from(short_ok & server_ok) {
            return Err(HandshakeError::BadVouch);
        }
        let meta = Metadata::parse_bytes(&Bytes::copy_from_slice(&pt[128..]))?;
        self.client_key = Some(client_key);
        match self.zap {
            ZapMode::Skip => self.send_ready(meta, session, data, n, out),
            ZapMode::Refuse => Err(HandshakeError::NoZapHandler),
            ZapMode::Ask => {
                self.state = ServerState::AwaitingZap { meta, session, data, initiate_nonce: n };
                Ok(Status::Zap(vec![Bytes::copy_from_slice(&client_key)]))
            }
        }
    }

    /// ZAP approved the client's key: send READY and start the data phase.
    pub(crate) fn zap_approved(&mut self, out: &mut Vec<u8>) -> Result<Status, HandshakeError> {
        match std::mem::replace(&mut self.state, ServerState::Done) {
            ServerState::AwaitingZap { meta, session, data, initiate_nonce } => {
                self.send_ready(meta, session, data, initiate_nonce, out)
            }
            _ => Err(HandshakeError::UnexpectedCommand(Bytes::from_static(b"ZAP"))),
        }
    }

    fn send_ready(
        &mut self,
        meta: Metadata,
        session: XSalsa20Poly1305,
        data: SecretBox,
        n: u64,
        out: &mut Vec<u8>,
    ) -> Result<Status, HandshakeError> {
        let mut ours = Zeroizing::new(Vec::new());
        self.metadata.encode(&mut ours);
        let mut boxed = Vec::with_capacity(ours.len() + MAC_LEN);
        seal(&session, &nonce24(READY_PREFIX, &1u64.to_be_bytes()), &ours, &mut boxed);
        command_frame(&[b"\x05READY", &1u64.to_be_bytes(), &boxed], out);
        self.cipher = Some(Cipher::new(&data, MESSAGE_S, MESSAGE_C, 2, n));
        Ok(Status::Complete(meta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::parse_header;

    fn bodies(mut wire: &[u8]) -> Vec<Bytes> {
        let mut v = Vec::new();
        while let Some(h) = parse_header(wire, None).unwrap() {
            let end = h.header_len + h.body_len as usize;
            v.push(Bytes::copy_from_slice(&wire[h.header_len..end]));
            wire = &wire[end..];
        }
        v
    }

    fn meta(t: &str) -> Metadata {
        let mut m = Metadata::new();
        m.insert("Socket-Type", Bytes::copy_from_slice(t.as_bytes()));
        m
    }

    struct Pair {
        client: Client,
        server: Server,
        hello: Bytes,
    }

    /// Runs HELLO and WELCOME through the pair and returns the client's INITIATE body.
    fn initiate_of(p: &mut Pair) -> Bytes {
        let mut out = Vec::new();
        p.server.on_command(&p.hello, &mut out).unwrap();
        let welcome = bodies(&out).remove(0);
        out.clear();
        p.client.on_command(&welcome, &mut out).unwrap();
        bodies(&out).remove(0)
    }

    fn pair(server_key_seen_by_client: Option<[u8; 32]>) -> (Pair, CurveKeyPair, CurveKeyPair) {
        let s = CurveKeyPair::generate();
        let c = CurveKeyPair::generate();
        let client = Client::new(&CurveClientKeys {
            public: c.public,
            secret: c.secret.clone(),
            server: server_key_seen_by_client.unwrap_or(s.public),
        });
        let server = Server::new(&CurveServerKeys { secret: s.secret.clone() }, ZapMode::Skip);
        let mut p = Pair { client, server, hello: Bytes::new() };
        let mut out = Vec::new();
        p.client.start(&meta("DEALER"), &mut out);
        p.server.start(&meta("ROUTER"));
        p.hello = bodies(&out).remove(0);
        (p, s, c)
    }

    /// Runs the handshake to the end; returns (INITIATE body, READY body).
    fn complete(p: &mut Pair) -> (Bytes, Bytes) {
        let mut out = Vec::new();
        assert!(matches!(p.server.on_command(&p.hello, &mut out), Ok(Status::InProgress)));
        let welcome = bodies(&out).remove(0);
        out.clear();
        assert!(matches!(p.client.on_command(&welcome, &mut out), Ok(Status::InProgress)));
        let initiate = bodies(&out).remove(0);
        out.clear();
        match p.server.on_command(&initiate, &mut out) {
            Ok(Status::Complete(m)) => assert_eq!(m.get("Socket-Type"), Some(&b"DEALER"[..])),
            other => panic!("{other:?}"),
        }
        let ready = bodies(&out).remove(0);
        match p.client.on_command(&ready, &mut Vec::new()) {
            Ok(Status::Complete(m)) => assert_eq!(m.get("Socket-Type"), Some(&b"ROUTER"[..])),
            other => panic!("{other:?}"),
        }
        (initiate, ready)
    }

    #[test]
    fn hello_layout_matches_libzmq() {
        let (p, _, _) = pair(None);
        let h = &p.hello;
        assert_eq!(h.len(), 200);
        assert_eq!(&h[..8], b"\x05HELLO\x01\x00");
        assert!(h[8..80].iter().all(|&b| b == 0));
        assert_eq!(&h[80..112], &p.client.cn_public);
        assert_eq!(u64_at(h, 112), 1);
    }

    #[test]
    fn handshake_and_messages_both_ways() {
        let (mut p, _, c) = pair(None);
        let (initiate, ready) = complete(&mut p);
        assert_eq!(&initiate[..9], b"\x08INITIATE");
        assert_eq!(u64_at(&initiate, 105), 2);
        assert_eq!(u64_at(&ready, 6), 1);
        assert_eq!(p.server.client_key(), Some(&c.public));
        let mut cc = p.client.take_cipher().unwrap();
        let mut sc = p.server.take_cipher().unwrap();
        assert!(p.client.take_cipher().is_none());
        for (i, body) in [&b""[..], b"hello", &[7u8; 300]].iter().enumerate() {
            let mut wire = Vec::new();
            cc.seal(i == 0, false, body, &mut wire).unwrap();
            // A MESSAGE is sent as a frame without flags, as libzmq does.
            let h = parse_header(&wire, None).unwrap().unwrap();
            assert!(!h.more && !h.command);
            assert_eq!(h.body_len as usize, MESSAGE_OVERHEAD + body.len());
            let f = sc.open(BytesMut::from(&wire[h.header_len..])).unwrap();
            assert_eq!((&f.body[..], f.more, f.command), (*body, i == 0, false));
        }
        let mut wire = Vec::new();
        sc.seal(false, true, b"\x04PING\x00\x00", &mut wire).unwrap();
        let h = parse_header(&wire, None).unwrap().unwrap();
        let f = cc.open(BytesMut::from(&wire[h.header_len..])).unwrap();
        assert!(f.command && &f.body[..] == b"\x04PING\x00\x00");
    }

    #[test]
    fn replayed_reordered_and_tampered_messages_are_refused() {
        let (mut p, _, _) = pair(None);
        complete(&mut p);
        let mut cc = p.client.take_cipher().unwrap();
        let mut sc = p.server.take_cipher().unwrap();
        let (mut m1, mut m2) = (Vec::new(), Vec::new());
        cc.seal(false, false, b"one", &mut m1).unwrap();
        cc.seal(false, false, b"two", &mut m2).unwrap();
        let body = |w: &Vec<u8>| BytesMut::from(&w[2..]);
        // Reordered: two arrives first, then one is stale.
        sc.open(body(&m2)).unwrap();
        assert_eq!(sc.open(body(&m1)), Err(CipherError::InvalidNonce { nonce: 3, last: 4 }));
        // Replayed.
        assert!(matches!(sc.open(body(&m2)), Err(CipherError::InvalidNonce { .. })));
        // Tampered: flip one ciphertext bit of a fresh message.
        let mut m3 = Vec::new();
        cc.seal(false, false, b"three", &mut m3).unwrap();
        let last = m3.len() - 1;
        m3[last] ^= 1;
        assert_eq!(sc.open(body(&m3)), Err(CipherError::Tampered));
        // A forged nonce does not advance the window: the genuine next one is fine.
        let mut m4 = Vec::new();
        cc.seal(false, false, b"four", &mut m4).unwrap();
        assert_eq!(&sc.open(body(&m4)).unwrap().body[..], b"four");
        // The client cannot open its own direction's messages (prefix differs).
        let mut m5 = Vec::new();
        cc.seal(false, false, b"five", &mut m5).unwrap();
        let mut cc2_view = cc;
        assert_eq!(cc2_view.open(body(&m5)), Err(CipherError::Tampered));
        assert_eq!(sc.open(BytesMut::from(&b"\x05READY"[..])), Err(CipherError::NotMessage));
        assert_eq!(sc.open(BytesMut::from(&b"\x07MESSAGE\x00\x00"[..])), Err(CipherError::Malformed));
    }

    #[test]
    fn wrong_server_key_fails_at_hello() {
        let other = CurveKeyPair::generate();
        let (mut p, _, _) = pair(Some(other.public));
        assert_eq!(
            p.server.on_command(&p.hello, &mut Vec::new()).unwrap_err(),
            HandshakeError::Cryptographic { command: "HELLO" }
        );
    }

    #[test]
    fn hello_without_padding_or_with_wrong_version() {
        let (mut p, _, _) = pair(None);
        let mut short = p.hello.to_vec();
        short.drain(8..80);
        assert_eq!(
            p.server.on_command(&Bytes::from(short), &mut Vec::new()).unwrap_err(),
            HandshakeError::MalformedCommand { command: "HELLO" }
        );
        let (mut p, _, _) = pair(None);
        let mut v2 = p.hello.to_vec();
        v2[6] = 2;
        assert_eq!(
            p.server.on_command(&Bytes::from(v2), &mut Vec::new()).unwrap_err(),
            HandshakeError::UnsupportedCurveVersion { major: 2, minor: 0 }
        );
    }

    #[test]
    fn tampered_cookie_and_forged_vouch_are_refused() {
        // Cookie bit flipped.
        let (mut p, _, _) = pair(None);
        let mut initiate = initiate_of(&mut p).to_vec();
        initiate[40] ^= 1;
        assert_eq!(p.server.on_command(&Bytes::from(initiate), &mut Vec::new()).unwrap_err(), HandshakeError::BadCookie);

        // A client whose INITIATE claims a long-term key it does not hold:
        // the vouch was sealed with another secret.
        let (mut p, _, _) = pair(None);
        let mut out = Vec::new();
        p.server.on_command(&p.hello, &mut out).unwrap();
        let welcome = bodies(&out).remove(0);
        p.client.public = CurveKeyPair::generate().public;
        out.clear();
        p.client.on_command(&welcome, &mut out).unwrap();
        let initiate = bodies(&out).remove(0);
        assert_eq!(p.server.on_command(&initiate, &mut Vec::new()).unwrap_err(), HandshakeError::BadVouch);

        // INITIATE box tampered.
        let (mut p, _, _) = pair(None);
        let mut initiate = initiate_of(&mut p).to_vec();
        let last = initiate.len() - 1;
        initiate[last] ^= 0x80;
        assert_eq!(
            p.server.on_command(&Bytes::from(initiate), &mut Vec::new()).unwrap_err(),
            HandshakeError::Cryptographic { command: "INITIATE" }
        );
    }

    #[test]
    fn replayed_initiate_nonce_and_tampered_ready_and_welcome() {
        // An INITIATE whose nonce does not exceed HELLO's.
        let (mut p, _, _) = pair(None);
        let mut initiate = initiate_of(&mut p).to_vec();
        initiate[105..113].copy_from_slice(&1u64.to_be_bytes());
        assert_eq!(p.server.on_command(&Bytes::from(initiate), &mut Vec::new()).unwrap_err(), HandshakeError::InvalidNonce);

        // WELCOME from a server that does not hold the key the client expects.
        let (mut p, _, _) = pair(None);
        let mut out = Vec::new();
        p.server.on_command(&p.hello, &mut out).unwrap();
        let mut welcome = bodies(&out).remove(0).to_vec();
        welcome[100] ^= 1;
        assert_eq!(
            p.client.on_command(&Bytes::from(welcome), &mut Vec::new()).unwrap_err(),
            HandshakeError::Cryptographic { command: "WELCOME" }
        );

        // READY tampered.
        let (mut p, _, _) = pair(None);
        let initiate = initiate_of(&mut p);
        out.clear();
        p.server.on_command(&initiate, &mut out).unwrap();
        let mut ready = bodies(&out).remove(0).to_vec();
        ready[20] ^= 1;
        assert_eq!(
            p.client.on_command(&Bytes::from(ready), &mut Vec::new()).unwrap_err(),
            HandshakeError::Cryptographic { command: "READY" }
        );
    }

    #[test]
    fn error_during_handshake_and_unexpected_commands() {
        let (mut p, _, _) = pair(None);
        let err = p.client.on_command(&Bytes::from_static(b"\x05ERROR\x03400"), &mut Vec::new());
        assert_eq!(err.unwrap_err().zap_status_code(), Some(400));
        let (mut p, _, _) = pair(None);
        assert_eq!(
            p.server.on_command(&Bytes::from_static(b"\x08INITIATE"), &mut Vec::new()).unwrap_err(),
            HandshakeError::UnexpectedCommand(Bytes::from_static(b"INITIATE"))
        );
        // A second HELLO after WELCOME.
        let (mut p, _, _) = pair(None);
        p.server.on_command(&p.hello, &mut Vec::new()).unwrap();
        assert!(p.server.on_command(&p.hello, &mut Vec::new()).is_err());
    }

    #[test]
    fn keys() {
        // RFC 26 / zmq_curve(7) example key pair (Z85).
        let secret = crate::z85::decode_key(b"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6").unwrap();
        let public = crate::z85::decode_key(b"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7").unwrap();
        assert_eq!(CurveSecretKey::from_bytes(secret).public_key(), public);
        let kp = CurveKeyPair::generate();
        assert_eq!(kp.secret.public_key(), kp.public);
        assert!(!format!("{:?}", kp.secret).contains(&format!("{:?}", kp.secret.expose())[1..10]));
        assert_ne!(kp.secret, CurveKeyPair::generate().secret);
        assert_eq!(kp.secret, kp.secret.clone());
    }

    #[test]
    fn matches_nacl_crypto_box() {
        // crypto_box test vector from NaCl's tests/box.c (Alice to Bob), first
        // 16 ciphertext bytes after the MAC.
        let alice_sk = [
            0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d, 0x3c, 0x16, 0xc1, 0x72, 0x51, 0xb2, 0x66, 0x45, 0xdf, 0x4c, 0x2f,
            0x87, 0xeb, 0xc0, 0x99, 0x2a, 0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a,
        ];
        let bob_pk = [
            0xde, 0x9e, 0xdb, 0x7d, 0x7b, 0x7d, 0xc1, 0xb4, 0xd3, 0x5b, 0x61, 0xc2, 0xec, 0xe4, 0x35, 0x37, 0x3f, 0x83, 0x43,
            0xc8, 0x5b, 0x78, 0x67, 0x4d, 0xad, 0xfc, 0x7e, 0x14, 0x6f, 0x88, 0x2b, 0x4f,
        ];
        let nonce: [u8; 24] = [
            0x69, 0x69, 0x6e, 0xe9, 0x55, 0xb6, 0x2b, 0x73, 0xcd, 0x62, 0xbd, 0xa8, 0x75, 0xfc, 0x73, 0xd6, 0x82, 0x19, 0xe0,
            0x03, 0x6b, 0x7a, 0x0b, 0x37,
        ];
        let m: [u8; 16] = [0xbe, 0x07, 0x5f, 0xc5, 0x3c, 0x81, 0xf2, 0xd5, 0xcf, 0x14, 0x13, 0x16, 0xeb, 0xeb, 0x0c, 0x7b];
        let k = precompute(&StaticSecret::from(alice_sk), &bob_pk).unwrap();
        let mut out = Vec::new();
        seal(&k, crypto_secretbox::Nonce::from_slice(&nonce), &m, &mut out);
        // Expected ciphertext bytes 0..16 (after the 16-byte MAC) from box.out.
        assert_eq!(
            &out[16..32],
            &[0x8e, 0x99, 0x3b, 0x9f, 0x48, 0x68, 0x12, 0x73, 0xc2, 0x96, 0x50, 0xba, 0x32, 0xfc, 0x76, 0xce]
        );
    }
}
