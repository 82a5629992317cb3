//! Helpers shared by the CURVE fuzz targets: fixed long-term keys, the two
//! ends of a CURVE connection, and a pump that moves bytes between them
//! through an optional editor.
//!
//! The long-term keys are the example pairs of zmq_curve(7); the short-term
//! keys and cookie keys stay random, as in production, so a recorded
//! transcript replays exactly up to the first box that depends on the
//! other side's short-term key. The live pump gets past that: both ends run
//! for real and the fuzzer's edits are applied to the bytes in flight.

#![deny(unsafe_op_in_unsafe_fn)]
use bytes::BytesMut;
use std::time::Instant;
use zmtp::data::{Body, DataPhase, Flow, Sink};
use zmtp::{
    Command, Config, Connection, CurveClientKeys, CurveSecretKey, CurveServerKeys, Event, Greeting, Mechanism, SocketType,
    Version,
};

/// zmq_curve(7)'s example server secret key (Z85).
pub const SERVER_SECRET: &[u8; 40] = b"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
/// zmq_curve(7)'s example client secret key (Z85).
pub const CLIENT_SECRET: &[u8; 40] = b"D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

fn secret(z85: &[u8; 40]) -> CurveSecretKey {
    CurveSecretKey::from_bytes(zmtp::z85::decode_key(z85).expect("valid Z85 key"))
}

/// A CURVE server configuration (ROUTER unless told otherwise).
pub fn server_config(socket_type: SocketType) -> Config {
    let mut c = Config::new(socket_type);
    c.mechanism = Mechanism::CurveServer(CurveServerKeys { secret: secret(SERVER_SECRET) });
    c.max_msg_size = Some(64 * 1024);
    c
}

/// A CURVE client configuration that trusts [`SERVER_SECRET`]'s public key.
pub fn client_config(socket_type: SocketType) -> Config {
    let mut c = Config::new(socket_type);
    let s = secret(CLIENT_SECRET);
    c.mechanism =
        Mechanism::CurveClient(CurveClientKeys { public: s.public_key(), secret: s, server: secret(SERVER_SECRET).public_key() });
    c.max_msg_size = Some(64 * 1024);
    c
}

/// The 64-byte greeting a CURVE peer sends (libzmq sends as-server 0).
pub fn curve_greeting() -> [u8; 64] {
    Greeting::new(Version::V3_1, b"CURVE", false, 0).to_bytes()
}

/// One edit to a byte stream, at an offset counted in that stream.
#[derive(Clone, Copy, Debug)]
pub enum Edit {
    /// XOR the byte with a non-zero mask (always changes it).
    Flip { at: usize, mask: u8 },
    /// Insert a byte before `at`.
    Insert { at: usize, byte: u8 },
    /// Delete the byte at `at`.
    Delete { at: usize },
}

/// Decodes edits from fuzz input: 4 bytes each (direction + kind, offset
/// u16 big-endian, operand). Direction 0 is client to server.
pub fn decode_edits(data: &[u8]) -> [Vec<Edit>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for e in data.chunks_exact(4) {
        let at = usize::from(u16::from_be_bytes([e[1], e[2]]));
        let edit = match (e[0] >> 1) % 3 {
            0 => Edit::Flip { at, mask: e[3].max(1) },
            1 => Edit::Insert { at, byte: e[3] },
            _ => Edit::Delete { at },
        };
        out[usize::from(e[0] & 1)].push(edit);
    }
    for v in &mut out {
        v.sort_by_key(|e| match *e {
            Edit::Flip { at, .. } | Edit::Insert { at, .. } | Edit::Delete { at } => at,
        });
    }
    out
}

/// A byte stream in one direction with its pending edits. `offset` counts
/// the bytes the sender has produced so far.
pub struct Stream {
    edits: std::collections::VecDeque<Edit>,
    offset: usize,
    /// True once an edit has changed the stream.
    pub tampered: bool,
}

impl Stream {
    /// A stream with `edits` (sorted by offset) still to apply.
    pub fn new(edits: Vec<Edit>) -> Stream {
        Stream { edits: edits.into(), offset: 0, tampered: false }
    }

    /// Applies the edits that fall inside `chunk` and appends the result; true if an edit was
    /// applied to this chunk.
    pub fn carry(&mut self, chunk: &[u8], to: &mut BytesMut) -> bool {
        let mut edited = false;
        let end = self.offset + chunk.len();
        let mut i = 0;
        while i < chunk.len() {
            let pos = self.offset + i;
            let mut emit = true;
            let mut byte = chunk[i];
            while let Some(&e) = self.edits.front() {
                match e {
                    Edit::Flip { at, mask } if at == pos => {
                        byte ^= mask;
                        edited = true;
                    }
                    Edit::Insert { at, byte: b } if at == pos => {
                        to.extend_from_slice(&[b]);
                        edited = true;
                    }
                    Edit::Delete { at } if at == pos => {
                        emit = false;
                        edited = true;
                    }
                    Edit::Flip { at, .. } | Edit::Insert { at, .. } | Edit::Delete { at } if at < pos => {}
                    _ => break,
                }
                self.edits.pop_front();
            }
            if emit {
                to.extend_from_slice(&[byte]);
            }
            i += 1;
        }
        self.offset = end;
        self.tampered |= edited;
        edited
    }
}

/// What one side received in the data phase.
#[derive(Default, Debug)]
pub struct Received {
    /// Data frames: (body, more).
    pub frames: Vec<(Vec<u8>, bool)>,
    /// Commands.
    pub commands: Vec<Command>,
    /// The handshake completed.
    pub handshake: bool,
    /// The connection failed.
    pub failed: bool,
}

/// One end and its inbound buffer.
pub struct End {
    /// The connection.
    pub conn: Connection,
    inbuf: BytesMut,
    /// What it received.
    pub got: Received,
}

impl End {
    /// Wraps a connection.
    pub fn new(conn: Connection) -> End {
        End { conn, inbuf: BytesMut::new(), got: Received::default() }
    }

    fn drain(&mut self) {
        while let Some(ev) = self.conn.poll_event() {
            match ev {
                Event::HandshakeComplete(_) => self.got.handshake = true,
                Event::Frame(f) => self.got.frames.push((f.body.to_vec(), f.more)),
                Event::Command(c) => self.got.commands.push(c),
            }
        }
    }

    /// Feeds whatever has arrived.
    pub fn feed(&mut self) {
        if self.got.failed {
            return;
        }
        if self.conn.handle_input(&mut self.inbuf).is_err() {
            self.got.failed = true;
        }
        self.drain();
    }
}

/// Runs client and server against each other until neither has anything
/// left to say, carrying each direction through its [`Stream`]
/// (`streams[0]` client to server). `chunk` bounds the bytes moved per step.
pub fn pump(client: &mut End, server: &mut End, streams: &mut [Stream; 2], chunk: usize) {
    let mut out = Vec::new();
    for _ in 0..10_000 {
        let mut moved = false;
        for dir in 0..2 {
            let (from, to) = if dir == 0 { (&mut *client, &mut *server) } else { (&mut *server, &mut *client) };
            out.clear();
            from.conn.poll_transmit(&mut out);
            if !out.is_empty() {
                moved = true;
                for piece in out.chunks(chunk.max(1)) {
                    let _ = streams[dir].carry(piece, &mut to.inbuf);
                    to.feed();
                }
            }
        }
        if !moved {
            break;
        }
    }
}

/// True if `got` is `sent` with some frames left out, in order: CURVE
/// authenticates each MESSAGE and its nonce order, but (as in libzmq) a
/// whole dropped MESSAGE is not detected.
pub fn is_subsequence(got: &[(Vec<u8>, bool)], sent: &[(Vec<u8>, bool)]) -> bool {
    let mut it = sent.iter();
    got.iter().all(|g| it.any(|s| s == g))
}

/// The two data-phase ciphers of a real CURVE handshake between a client
/// and a server with the fixed long-term keys: (client's, server's).
pub fn cipher_pair() -> (zmtp::Cipher, zmtp::Cipher) {
    let mut c = zmtp::Handshake::new(client_config(SocketType::Dealer));
    let mut s = zmtp::Handshake::new(server_config(SocketType::Router));
    let (mut to_s, mut to_c) = (Vec::new(), Vec::new());
    for _ in 0..16 {
        c.poll_transmit(&mut to_s);
        s.poll_transmit(&mut to_c);
        let n = s.handle_input(&to_s).expect("server handshake");
        to_s.drain(..n);
        let n = c.handle_input(&to_c).expect("client handshake");
        to_c.drain(..n);
        if c.is_complete() && s.is_complete() {
            break;
        }
    }
    (c.take_cipher().expect("client cipher"), s.take_cipher().expect("server cipher"))
}

/// Splits fuzz input into pieces, each prefixed by a length byte.
pub fn split_pieces(mut data: &[u8]) -> Vec<&[u8]> {
    let mut v = Vec::new();
    while let Some((&n, rest)) = data.split_first() {
        let n = usize::from(n).min(rest.len());
        v.push(&rest[..n]);
        data = &rest[n..];
    }
    v
}

/// The downgrade paths (`legacy` target). The first byte picks what the input is:
///
/// * bits 0-1: the prefix put before the rest: none (a ZMTP 1.0 peer without a
///   signature, or whatever the bytes say), a 2.0 signature (revision 1), a 1.0 one
///   (revision 0), or a signature whose byte 9 marks a 1.0 long identity header;
/// * bits 2-6: our socket type (libzmq numbering, modulo 21), bit 7: a ZAP domain;
/// * the next byte: the read size (1-64).
///
/// The rest goes to a `Connection` (4 KiB message limit) in those reads; then the
/// same bytes go through the 1.0 and 2.0 data phases the engine runs ([`data_phase`]).
pub fn legacy(data: &[u8]) {
    let [mode, chunk, rest @ ..] = data else { return };
    let mut input = match mode & 3 {
        0 => Vec::new(),
        1 => vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1],
        2 => vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 0],
        _ => vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x00],
    };
    input.extend_from_slice(rest);
    let mut config = Config::new(SocketType::ALL[usize::from(mode >> 2 & 0x1F) % SocketType::ALL.len()]);
    config.max_msg_size = Some(4096);
    if mode & 0x80 != 0 {
        config.zap.domain = "d".into();
    }
    let mut conn = Connection::new(config);
    conn.send_frame(b"queued", true);
    conn.send_frame(b"", false);
    conn.send_command(&Command::Subscribe(bytes::Bytes::from_static(b"t")));
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for piece in input.chunks(usize::from(chunk % 64) + 1) {
        buf.extend_from_slice(piece);
        let failed = conn.handle_input(&mut buf).is_err();
        while let Some(ev) = conn.poll_event() {
            if let Event::HandshakeComplete(peer) = ev {
                assert!(peer.version.is_legacy() || peer.socket_type.is_some());
                assert!(peer.routing_id.as_ref().is_none_or(|id| id.len() <= 255));
            }
        }
        conn.poll_transmit(&mut out);
        if failed {
            break;
        }
    }
    for version in [Version::V1_0, Version::V2_0] {
        data_phase(version, rest, 1 + usize::from(*chunk));
    }
}

/// Records what a data phase decodes: message frames and the commands a socket acts on.
#[derive(Default)]
struct Recorder {
    frames: Vec<(bool, Vec<u8>)>,
    commands: Vec<Vec<u8>>,
}

impl Sink for Recorder {
    fn frame(&mut self, more: bool, body: &mut Body<'_>) -> Flow {
        // Small bodies are copied, large ones split off the buffer: both ways the engine takes.
        let bytes = if body.len() > 64 { body.take().to_vec() } else { body.as_slice().to_vec() };
        self.frames.push((more, bytes));
        Flow::Go
    }
    fn command(&mut self, _cmd: &Command, body: &[u8]) -> Flow {
        self.commands.push(body.to_vec());
        Flow::Go
    }
}

/// The data phase the engine runs (`zmtp::data::DataPhase`, 4 KiB frame limit) over `input`
/// arriving in reads of `chunk` bytes: the frames and commands decoded must be the same when
/// fed whole, and the frames, encoded again by the data phase, must decode to themselves.
pub fn data_phase(version: Version, input: &[u8], chunk: usize) {
    let decode_all = |pieces: &mut dyn Iterator<Item = &[u8]>| {
        let mut dp = DataPhase::new(version, Some(4096), None, false, Default::default(), Instant::now());
        let (mut rx, mut rec) = (BytesMut::new(), Recorder::default());
        for piece in pieces {
            rx.extend_from_slice(piece);
            if dp.decode(&mut rx, &mut rec).is_err() {
                return (rec, false);
            }
        }
        (rec, true)
    };
    let (chunked, ok_chunked) = decode_all(&mut input.chunks(chunk.max(1)));
    let (whole, ok_whole) = decode_all(&mut std::iter::once(input));
    assert_eq!(ok_chunked, ok_whole, "the read size changed the outcome");
    assert_eq!(chunked.frames, whole.frames);
    assert_eq!(chunked.commands, whole.commands);
    let mut enc = DataPhase::new(version, None, None, false, Default::default(), Instant::now());
    let mut wire = Vec::new();
    for (more, body) in &whole.frames {
        enc.encode_frame(&mut wire, *more, body);
    }
    let (again, ok) = decode_all(&mut std::iter::once(&wire[..]));
    assert!(ok);
    // A frame over the limit on the way in never decoded; every decoded one fits.
    assert_eq!(again.frames, whole.frames);
}
