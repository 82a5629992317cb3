//! The CURVE data-phase decoder, `zmtp::Cipher`, after a real handshake.
//! The first input byte picks the mode:
//!
//! * 0: the rest is length-prefixed pieces, each opened as a MESSAGE
//!   command body by the server's cipher (arbitrary bytes: the name, length
//!   and nonce checks before the MAC);
//! * 1: the first byte after the mode counts the pieces that are frame
//!   bodies; each is sealed by the client, then edits from the remaining
//!   bytes are applied to the sealed bodies before the server opens them.
//!   A body with no edit must open to exactly what was sealed; an edited
//!   one must be refused, and a refusal must not stop the next genuine
//!   message from opening;
//! * 2: pieces sealed in both directions with flags from their first byte
//!   (bits 4-7: repeat the piece up to 16 times, for bodies of a few KiB),
//!   each opened by the other side through `open_in_place`, must round-trip.
#![no_main]
use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use zmtp::{parse_header, Cipher};
use zmtp_fuzz::{cipher_pair, decode_edits, split_pieces, Stream};

fn sealed_body(c: &mut Cipher, more: bool, command: bool, body: &[u8]) -> Vec<u8> {
    let mut wire = Vec::new();
    c.seal(more, command, body, &mut wire).unwrap();
    let h = parse_header(&wire, None).unwrap().unwrap();
    assert!(!h.more && !h.command);
    assert_eq!(h.header_len + h.body_len as usize, wire.len());
    wire.split_off(h.header_len)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, data)) = data.split_first() else {
        return;
    };
    let (mut client, mut server) = cipher_pair();
    match mode % 3 {
        0 => {
            for piece in split_pieces(data) {
                let _ = server.open(BytesMut::from(piece));
            }
        }
        1 => {
            let Some((&n, data)) = data.split_first() else {
                return;
            };
            let pieces = split_pieces(data);
            let n = usize::from(n).min(pieces.len()).min(8);
            let edits: Vec<u8> = pieces[n..].concat();
            let [edits, _] = decode_edits(&edits);
            let mut stream = Stream::new(edits);
            for body in &pieces[..n] {
                let sealed = sealed_body(&mut client, false, false, body);
                let mut edited = BytesMut::new();
                // Edits may cancel out (two flips with the same mask): judged by the bytes.
                let changed = stream.carry(&sealed, &mut edited) && edited[..] != sealed[..];
                match server.open(edited) {
                    Ok(f) => {
                        assert!(!changed, "an edited MESSAGE opened");
                        assert_eq!((&f.body[..], f.more, f.command), (*body, false, false));
                    }
                    Err(_) => assert!(changed, "a genuine MESSAGE was refused"),
                }
            }
        }
        _ => {
            for (i, piece) in split_pieces(data).into_iter().enumerate() {
                let flags = piece.first().copied().unwrap_or(0);
                let (more, command) = (flags & 1 != 0, flags & 2 != 0 && flags & 1 == 0);
                // Bits 4-7 repeat the piece up to 16 times, so bodies reach past the keystream
                // batches (4 and 8 blocks) of the cipher.
                let body = piece.repeat(1 + usize::from(flags >> 4));
                let (tx, rx) = if i % 2 == 0 { (&mut client, &mut server) } else { (&mut server, &mut client) };
                let mut sealed = sealed_body(tx, more, command, &body);
                let (opened, range) = rx.open_in_place(&mut sealed).unwrap();
                assert_eq!((opened.more, opened.command), (more, command));
                assert_eq!(&sealed[range], &body[..]);
            }
        }
    }
});
