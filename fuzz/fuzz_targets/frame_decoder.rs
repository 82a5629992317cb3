//! FrameDecoder over arbitrary bytes with a small body limit; every decoded
//! frame must re-encode to the bytes it came from.
#![no_main]
use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut dec = zmtp::FrameDecoder::new(Some(1024));
    let mut buf = BytesMut::from(data);
    let mut consumed = 0;
    while let Ok(Some(frame)) = dec.decode(&mut buf) {
        let mut out = Vec::new();
        frame.encode(&mut out);
        let hdr = zmtp::parse_header(&data[consumed..], None)
            .unwrap()
            .unwrap();
        let len = hdr.header_len + frame.body.len();
        assert_eq!(
            &out[out.len() - frame.body.len()..],
            &data[consumed + hdr.header_len..consumed + len]
        );
        consumed += len;
        if frame.command {
            let _ = zmtp::Command::parse(&frame.body);
        }
    }
});
