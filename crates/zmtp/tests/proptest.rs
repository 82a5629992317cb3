//! Property tests: whatever is encoded decodes to the same thing, however the
//! byte stream is cut into reads, both through `FrameDecoder` and through a
//! pair of `Connection`s driven in memory; and handshakes succeed for every
//! compatible socket-type pair and version combination under any chunking.
//! The downgrade paths get the same treatment against a modelled ZMTP 1.0 or
//! 2.0 peer: its greeting and identity and frames, cut anywhere, come out as
//! the same events, and what we send decodes in the peer's framing.

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;
use zmtp::{
    encode_frame, encode_frame_for, Command, Config, Connection, Error, Event, Frame, FrameDecoder, Metadata, SocketType, Version,
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
    let meta = prop::collection::vec(("[A-Za-z0-9.+_-]{1,20}", bytes(40)), 0..4).prop_map(|props| {
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

/// An item of the data phase: READY belongs to the handshake and ERROR ends the connection,
/// so neither is traffic.
fn traffic_item() -> impl Strategy<Value = Item> {
    item().prop_filter("READY and ERROR are no traffic", |it| {
        !matches!(it, Item::Command(Command::Ready(_) | Command::Error { .. }))
    })
}

fn chunks() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..80, 1..20)
}

/// What the receiving side should report for an item sent at `version`.
fn expected(item: &Item, version: Version) -> Event {
    match item {
        Item::Frame(b, more) => Event::Frame(Frame { more: *more, command: false, body: Bytes::from(b.clone()) }),
        Item::Command(Command::Subscribe(t)) if version == Version::V3_0 => {
            Event::Frame(Frame { more: false, command: false, body: [&[1u8][..], t].concat().into() })
        }
        Item::Command(Command::Cancel(t)) if version == Version::V3_0 => {
            Event::Frame(Frame { more: false, command: false, body: [&[0u8][..], t].concat().into() })
        }
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
        Pair { a, b, a_to_b: Vec::new(), b_to_a: Vec::new(), a_in: BytesMut::new(), b_in: BytesMut::new(), chunks, next: 0 }
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
    let mut pair = Pair::new(Connection::with_version(ca, va), Connection::with_version(cb, vb), chunks);
    pair.drive().unwrap();
    let negotiated = va.min(vb);
    let ea = events(&mut pair.a);
    let eb = events(&mut pair.b);
    match (&ea[..], &eb[..]) {
        ([Event::HandshakeComplete(pa)], [Event::HandshakeComplete(pb)]) => {
            assert_eq!(pa.socket_type, Some(b_ty));
            assert_eq!(pb.socket_type, Some(a_ty));
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
            let mut pair = Pair::new(Connection::new(Config::new(a)), Connection::new(Config::new(b)), vec![7]);
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
        before in prop::collection::vec(traffic_item(), 0..10),
        after in prop::collection::vec(traffic_item(), 0..20),
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
        prop_assert!(matches!(&got[0], Event::HandshakeComplete(p) if p.version == v && p.socket_type == Some(ta)));
        let want: Vec<Event> = before.iter().chain(&after).map(|it| expected(it, v)).collect();
        prop_assert_eq!(&got[1..], &want[..]);
        // The sender hears only the PONGs that answer its PINGs, one each, in order.
        let got_a = events(&mut pair.a);
        let pongs: Vec<Event> = before.iter().chain(&after).filter_map(|it| match it {
            Item::Command(Command::Ping { context, .. }) => Some(Event::Command(Command::Pong { context: context.clone() })),
            _ => None,
        }).collect();
        prop_assert_eq!(&got_a[1..], &pongs[..]);
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

    /// Frames of any revision round-trip through the decoder of that revision,
    /// however the bytes are cut.
    #[test]
    fn legacy_frames_round_trip(
        frames in prop::collection::vec((prop::collection::vec(any::<u8>(), 0..600), any::<bool>()), 0..20),
        v1 in any::<bool>(),
        cuts in chunks(),
    ) {
        let version = if v1 { Version::V1_0 } else { Version::V2_0 };
        let mut wire = Vec::new();
        for (body, more) in &frames {
            encode_frame_for(version, body, *more, &mut wire);
        }
        let mut dec = FrameDecoder::for_version(version, None);
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        let (mut pos, mut i) = (0, 0);
        while pos < wire.len() {
            let n = cuts[i % cuts.len()].min(wire.len() - pos);
            i += 1;
            buf.extend_from_slice(&wire[pos..pos + n]);
            pos += n;
            while let Some(f) = dec.decode(&mut buf).unwrap() {
                prop_assert!(!f.command);
                got.push((f.body.to_vec(), f.more));
            }
            prop_assert!(dec.bytes_needed(&buf) > 0 || buf.is_empty());
        }
        prop_assert!(buf.is_empty());
        prop_assert_eq!(got, frames);
    }

    /// A connection meeting a modelled 1.0/2.0 peer: the peer's identity and frames
    /// come out as events under any chunking, and our frames and subscriptions reach
    /// it in its framing.
    #[test]
    fn legacy_peer_conversation(
        kind in 0u8..3,
        identity in prop::collection::vec(any::<u8>(), 0..=255),
        ours in prop::collection::vec(any::<u8>(), 0..=255),
        frames in prop::collection::vec((prop::collection::vec(any::<u8>(), 0..400), any::<bool>()), 0..10),
        out in prop::collection::vec((prop::collection::vec(any::<u8>(), 0..400), any::<bool>()), 0..10),
        cuts in chunks(),
    ) {
        // kind 0: 1.0 without signature; 1: 1.0 with signature (revision 0); 2: 2.0.
        let version = if kind == 2 { Version::V2_0 } else { Version::V1_0 };
        let mut peer = Vec::new();
        if kind > 0 {
            peer.extend([0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, kind - 1, 5]); // a DEALER
        }
        encode_frame_for(version, &identity, false, &mut peer);
        for (body, more) in &frames {
            encode_frame_for(version, body, *more, &mut peer);
        }
        let mut config = Config::new(SocketType::Router);
        config.routing_id = Bytes::from(ours.clone());
        let mut c = Connection::new(config);
        // Queued before the handshake: held back, then sent in the peer's framing.
        for (body, more) in &out {
            c.send_frame(body, *more);
        }
        c.send_command(&Command::Subscribe(Bytes::from_static(b"t")));
        c.send_command(&Command::Ping { ttl: 1, context: Bytes::new() });
        let mut buf = BytesMut::new();
        let (mut pos, mut i) = (0, 0);
        while pos < peer.len() {
            let n = cuts[i % cuts.len()].min(peer.len() - pos);
            i += 1;
            buf.extend_from_slice(&peer[pos..pos + n]);
            pos += n;
            c.handle_input(&mut buf).unwrap();
        }
        prop_assert!(buf.is_empty());
        let ev = events(&mut c);
        match &ev[0] {
            Event::HandshakeComplete(p) => {
                prop_assert_eq!(p.version, version);
                prop_assert_eq!(p.routing_id.as_deref(), Some(&identity[..]));
                prop_assert_eq!(p.socket_type, (kind == 2).then_some(SocketType::Dealer));
            }
            other => prop_assert!(false, "{:?}", other),
        }
        let got: Vec<_> = ev[1..].iter().map(|e| match e {
            Event::Frame(f) => (f.body.to_vec(), f.more),
            other => panic!("{other:?}"),
        }).collect();
        prop_assert_eq!(&got, &frames);
        // What the peer reads: our signature (padding: identity length + 1), then for a
        // versioned peer major 3 and our socket type, then our identity and frames.
        let mut sent = Vec::new();
        c.poll_transmit(&mut sent);
        prop_assert_eq!(&sent[..9], &[&[0xFFu8][..], &(ours.len() as u64 + 1).to_be_bytes()].concat()[..]);
        prop_assert_eq!(sent[9], 0x7F);
        let mut rest = BytesMut::from(&sent[10..]);
        let mut expect = Vec::new();
        if kind == 0 {
            prop_assert_eq!(&rest[..ours.len()], &ours[..]);
            let _ = rest.split_to(ours.len());
        } else {
            prop_assert_eq!(&rest[..2], &[3u8, 6][..]);
            let _ = rest.split_to(2);
            expect.push((ours.clone(), false));
        }
        expect.extend(out.iter().cloned());
        expect.push((b"\x01t".to_vec(), false)); // the subscription as a message; no PING
        let mut dec = FrameDecoder::for_version(version, None);
        let mut peer_got = Vec::new();
        while let Some(f) = dec.decode(&mut rest).unwrap() {
            peer_got.push((f.body.to_vec(), f.more));
        }
        prop_assert!(rest.is_empty());
        prop_assert_eq!(peer_got, expect);
    }

    /// Arbitrary bytes after a legacy prefix never panic and never take more than was
    /// given.
    #[test]
    fn legacy_garbage_never_panics(
        prefix in 0u8..4,
        data in prop::collection::vec(any::<u8>(), 0..400),
        cuts in chunks(),
        ty in 0usize..21,
    ) {
        let mut input = match prefix {
            0 => vec![],
            1 => vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1],
            2 => vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 0],
            _ => vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x00],
        };
        input.extend(data);
        let mut c = Connection::new(Config::new(SocketType::ALL[ty]));
        let mut buf = BytesMut::new();
        let (mut pos, mut i) = (0, 0);
        while pos < input.len() {
            let n = cuts[i % cuts.len()].min(input.len() - pos);
            i += 1;
            buf.extend_from_slice(&input[pos..pos + n]);
            pos += n;
            if c.handle_input(&mut buf).is_err() {
                break;
            }
        }
        while c.poll_event().is_some() {}
        let mut out = Vec::new();
        c.poll_transmit(&mut out);
    }
}
