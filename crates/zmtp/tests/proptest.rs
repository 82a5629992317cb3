//! Property tests: whatever is encoded decodes to the same thing, however the
//! byte stream is cut into reads, both through `FrameDecoder` and through a
//! pair of `Connection`s driven in memory; and handshakes succeed for every
//! compatible socket-type pair and version combination under any chunking.

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;
use zmtp::{
    encode_frame, Command, Config, Connection, Error, Event, Frame, FrameDecoder, Metadata,
    SocketType, Version,
};

#[derive(Clone, Debug)]
enum Item {
    Frame(Vec<u8>, bool),
    Command(Command),
}

fn bytes(max: usize) -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 0..=max).prop_map(Bytes::from)
}

fn command() -> impl Strategy<Value = Command> {
    let name = "[a-z]{1,12}".prop_map(|s| Bytes::from(s.into_bytes()));
    let meta =
        prop::collection::vec(("[A-Za-z0-9.+_-]{1,20}", bytes(40)), 0..4).prop_map(|props| {
            let mut m = Metadata::new();
            for (n, v) in props {
                m.insert(&n, v);
            }
            m
        });
    prop_oneof![
        meta.prop_map(Command::Ready),
        bytes(255).prop_map(|reason| Command::Error { reason }),
        bytes(300).prop_map(Command::Subscribe),
        bytes(300).prop_map(Command::Cancel),
        (any::<u16>(), bytes(16)).prop_map(|(ttl, context)| Command::Ping { ttl, context }),
        bytes(16).prop_map(|context| Command::Pong { context }),
        bytes(255).prop_map(Command::Join),
        bytes(255).prop_map(Command::Leave),
        // Lower-case names never collide with the defined commands.
        (name, bytes(300)).prop_map(|(name, data)| Command::Unknown { name, data }),
    ]
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        3 => (prop::collection::vec(any::<u8>(), 0..700), any::<bool>()).prop_map(|(b, m)| Item::Frame(b, m)),
        1 => command().prop_map(Item::Command),
    ]
}

fn chunks() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..80, 1..20)
}

/// What the receiving side should report for an item sent at `version`.
fn expected(item: &Item, version: Version) -> Event {
    match item {
        Item::Frame(b, more) => Event::Frame(Frame {
            more: *more,
            command: false,
            body: Bytes::from(b.clone()),
        }),
        Item::Command(Command::Subscribe(t)) if version == Version::V3_0 => Event::Frame(Frame {
            more: false,
            command: false,
            body: [&[1u8][..], t].concat().into(),
        }),
        Item::Command(Command::Cancel(t)) if version == Version::V3_0 => Event::Frame(Frame {
            more: false,
            command: false,
            body: [&[0u8][..], t].concat().into(),
        }),
        Item::Command(c) => Event::Command(c.clone()),
    }
}

/// Two connections wired back to back, delivering bytes in the given chunk
/// sizes (cycled).
struct Pair {
    a: Connection,
    b: Connection,
    a_to_b: Vec<u8>,
    b_to_a: Vec<u8>,
    a_in: BytesMut,
    b_in: BytesMut,
    chunks: Vec<usize>,
    next: usize,
}

impl Pair {
    fn new(a: Connection, b: Connection, chunks: Vec<usize>) -> Pair {
        Pair {
            a,
            b,
            a_to_b: Vec::new(),
            b_to_a: Vec::new(),
            a_in: BytesMut::new(),
            b_in: BytesMut::new(),
            chunks,
            next: 0,
        }
    }

    fn chunk(&mut self) -> usize {
        let n = self.chunks[self.next % self.chunks.len()];
        self.next += 1;
        n
    }

    fn drive(&mut self) -> Result<(), Error> {
        loop {
            self.a.poll_transmit(&mut self.a_to_b);
            self.b.poll_transmit(&mut self.b_to_a);
            if self.a_to_b.is_empty() && self.b_to_a.is_empty() {
                return Ok(());
            }
            let n = self.chunk().min(self.a_to_b.len());
            self.b_in.extend_from_slice(&self.a_to_b[..n]);
            self.a_to_b.drain(..n);
            self.b.handle_input(&mut self.b_in)?;
            let n = self.chunk().min(self.b_to_a.len());
            self.a_in.extend_from_slice(&self.b_to_a[..n]);
            self.b_to_a.drain(..n);
            self.a.handle_input(&mut self.a_in)?;
        }
    }
}

fn events(c: &mut Connection) -> Vec<Event> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

fn compatible_pairs() -> Vec<(SocketType, SocketType)> {
    let mut v = Vec::new();
    for a in SocketType::ALL {
        for b in SocketType::ALL {
            if a.is_compatible_with(b) {
                v.push((a, b));
            }
        }
    }
    v
}

fn version() -> impl Strategy<Value = Version> {
    prop_oneof![Just(Version::V3_0), Just(Version::V3_1)]
}

fn handshake_ok(a_ty: SocketType, b_ty: SocketType, va: Version, vb: Version, chunks: Vec<usize>) {
    let mut ca = Config::new(a_ty);
    ca.routing_id = Bytes::from_static(b"A-id");
    ca.properties = vec![("X-Side".into(), Bytes::from_static(b"a"))];
    let cb = Config::new(b_ty);
    let mut pair = Pair::new(
        Connection::with_version(ca, va),
        Connection::with_version(cb, vb),
        chunks,
    );
    pair.drive().unwrap();
    let negotiated = va.min(vb);
    let ea = events(&mut pair.a);
    let eb = events(&mut pair.b);
    match (&ea[..], &eb[..]) {
        ([Event::HandshakeComplete(pa)], [Event::HandshakeComplete(pb)]) => {
            assert_eq!(pa.socket_type, b_ty);
            assert_eq!(pb.socket_type, a_ty);
            assert_eq!(pa.version, negotiated);
            assert_eq!(pb.version, negotiated);
            assert_eq!(pb.metadata.get("x-side"), Some(&b"a"[..]));
            let expected_id = a_ty.sends_identity().then(|| Bytes::from_static(b"A-id"));
            assert_eq!(pb.routing_id, expected_id);
        }
        other => panic!("{a_ty}/{b_ty}: {other:?}"),
    }
}

#[test]
fn every_compatible_pair_and_version_handshakes() {
    let versions = [Version::V3_0, Version::V3_1];
    for (a, b) in compatible_pairs() {
        for va in versions {
            for vb in versions {
                handshake_ok(a, b, va, vb, vec![1]);
                handshake_ok(a, b, va, vb, vec![4096]);
            }
        }
    }
}

#[test]
fn every_incompatible_pair_fails() {
    for a in SocketType::ALL {
        for b in SocketType::ALL {
            if a.is_compatible_with(b) {
                continue;
            }
            let mut pair = Pair::new(
                Connection::new(Config::new(a)),
                Connection::new(Config::new(b)),
                vec![7],
            );
            assert!(pair.drive().is_err(), "{a}/{b}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn frame_decoder_round_trips(items in prop::collection::vec(item(), 0..30), cuts in chunks()) {
        let mut wire = Vec::new();
        for it in &items {
            match it {
                Item::Frame(b, more) => encode_frame(b, *more, false, &mut wire),
                Item::Command(c) => c.encode(&mut wire),
            }
        }
        let mut dec = FrameDecoder::new(Some(1 << 20));
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        let mut pos = 0;
        let mut i = 0;
        while pos < wire.len() {
            let n = cuts[i % cuts.len()].min(wire.len() - pos);
            i += 1;
            buf.extend_from_slice(&wire[pos..pos + n]);
            pos += n;
            while let Some(f) = dec.decode(&mut buf).unwrap() {
                got.push(f);
            }
        }
        prop_assert!(buf.is_empty());
        prop_assert_eq!(got.len(), items.len());
        for (f, it) in got.iter().zip(&items) {
            match it {
                Item::Frame(b, more) => {
                    prop_assert!(!f.command);
                    prop_assert_eq!(&f.body[..], &b[..]);
                    prop_assert_eq!(f.more, *more);
                }
                Item::Command(c) => {
                    prop_assert!(f.command && !f.more);
                    prop_assert_eq!(&Command::parse(&f.body).unwrap(), c);
                }
            }
        }
    }

    #[test]
    fn connections_round_trip(
        pair_idx in any::<prop::sample::Index>(),
        va in version(),
        vb in version(),
        before in prop::collection::vec(item(), 0..10),
        after in prop::collection::vec(item(), 0..20),
        cuts in chunks(),
    ) {
        let pairs = compatible_pairs();
        let (ta, tb) = pairs[pair_idx.index(pairs.len())];
        let mut pair = Pair::new(
            Connection::with_version(Config::new(ta), va),
            Connection::with_version(Config::new(tb), vb),
            cuts,
        );
        let send = |c: &mut Connection, it: &Item| match it {
            Item::Frame(b, more) => c.send_frame(b, *more),
            Item::Command(cmd) => c.send_command(cmd),
        };
        // Some items are queued before the handshake, some after.
        for it in &before {
            send(&mut pair.a, it);
        }
        pair.drive().unwrap();
        for it in &after {
            send(&mut pair.a, it);
        }
        pair.drive().unwrap();
        let v = va.min(vb);
        let got = events(&mut pair.b);
        prop_assert!(matches!(&got[0], Event::HandshakeComplete(p) if p.version == v && p.socket_type == ta));
        let want: Vec<Event> = before.iter().chain(&after).map(|it| expected(it, v)).collect();
        prop_assert_eq!(&got[1..], &want[..]);
        let got_a = events(&mut pair.a);
        prop_assert_eq!(got_a.len(), 1);
    }

    #[test]
    fn handshake_any_chunking(
        pair_idx in any::<prop::sample::Index>(),
        va in version(),
        vb in version(),
        cuts in chunks(),
    ) {
        let pairs = compatible_pairs();
        let (ta, tb) = pairs[pair_idx.index(pairs.len())];
        handshake_ok(ta, tb, va, vb, cuts);
    }

    #[test]
    fn garbage_never_panics(data in prop::collection::vec(any::<u8>(), 0..400), cuts in chunks()) {
        let mut c = Connection::new(Config::new(SocketType::Dealer));
        let mut buf = BytesMut::new();
        let mut pos = 0;
        let mut i = 0;
        while pos < data.len() {
            let n = cuts[i % cuts.len()].min(data.len() - pos);
            i += 1;
            buf.extend_from_slice(&data[pos..pos + n]);
            pos += n;
            if c.handle_input(&mut buf).is_err() {
                break;
            }
        }
        while c.poll_event().is_some() {}
    }
}
