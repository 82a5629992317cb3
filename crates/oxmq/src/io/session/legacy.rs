//! What a session does differently for a ZMTP 1.0 or 2.0 peer (the codec, `zmtp::legacy`,
//! detects the revision and runs the identity exchange; see ARCHITECTURE.md, "Legacy peers").
//!
//! The data path is the 3.x one with the header format chosen by `Conn::version`: the frame
//! loop parses headers with `zmtp::parse_header_for` and encodes them with
//! `zmtp::encode_message_header` (or [`short_header`] for the inline fast path), one match
//! on a value fixed for the connection. Subscriptions already travel as 0x01/0x00 messages
//! below 3.1; commands (PING, PONG, JOIN, LEAVE) are never sent to these peers, and the
//! heartbeat starts only at 3.1. The one addition is libzmq's implied subscription below.

use crate::msg::Msg;
use crate::pipe::PipeEnd;

/// The two header bytes of a frame whose body fits the inline buffer (at most
/// `INLINE_CAP` < 254 bytes, so every revision has a two-byte header for it): flags then
/// length for 2.0 and 3.x, length (counting the flags octet) then flags for 1.0.
#[inline(always)]
pub(super) fn short_header(version: zmtp::Version, more: bool, len8: u8) -> (u8, u8) {
    if version == zmtp::Version::V1_0 {
        (len8 + 1, more as u8)
    } else {
        (more as u8, len8)
    }
}

/// A ZMTP 1.0 peer without a signature (libzmq 2.x) never sends subscriptions, so a PUB or
/// XPUB acts as if it had subscribed to everything, as libzmq does
/// (`zmtp_engine_t::process_routing_id_msg`): a subscribe-all message right after the
/// routing-id frame that opens the connection in the pipe.
pub(super) fn subscribe_all(pipe: Option<&mut PipeEnd>) {
    if let Some(p) = pipe {
        p.write(Msg::copy_from(&[1]));
        p.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_headers_match_the_codec() {
        for version in [zmtp::Version::V1_0, zmtp::Version::V2_0, zmtp::Version::V3_1] {
            for (len, more) in [(0u8, false), (5, true), (38, false)] {
                let mut want = Vec::new();
                zmtp::encode_message_header(version, usize::from(len), more, &mut want);
                let (a, b) = short_header(version, more, len);
                assert_eq!(vec![a, b], want, "{version:?} {len} {more}");
            }
        }
    }
}
