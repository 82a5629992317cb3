//! oxmq STREAM against libzmq STREAM (pyzmq), over tcp and ipc, each side binding in turn:
//! notifications, raw bytes both ways, and a close by either side seen by the other.

mod common;

use common::*;
use oxmq::{Context, Socket, SocketType as T};

both_ways!(raw_bytes_both_ways_and_oxmq_closes, libzmq_closes_oxmq_is_notified);

fn noop<S>(_: &mut S) {}

/// Receives on the libzmq side until `want` bytes came from `id` (a byte stream may split).
fn py_recv_from(py: &mut Peer, id: &[u8], want: usize) -> Vec<u8> {
    let mut got = Vec::new();
    while got.len() < want {
        let m = py.recv_must();
        assert_eq!(m.len(), 2, "libzmq STREAM gives [id, data]: {m:?}");
        assert_eq!(m[0], id);
        assert!(!m[1].is_empty(), "libzmq saw a close after {} of {want} bytes", got.len());
        got.extend_from_slice(&m[1]);
    }
    got
}

fn ox_recv_from(ox: &mut Socket, id: &[u8], want: usize) -> Vec<u8> {
    let mut got = Vec::new();
    while got.len() < want {
        let m = ox_recv(ox);
        assert_eq!(m.len(), 2, "{m:?}");
        assert_eq!(m[0], id);
        assert!(!m[1].is_empty(), "oxmq saw a close after {} of {want} bytes", got.len());
        got.extend_from_slice(&m[1]);
    }
    got
}

/// Links the two STREAM sockets and returns each side's id for the other, from the connect
/// notifications both sides give.
fn linked(setup: Setup, ctx: &Context) -> (Socket, Peer, Vec<u8>, Vec<u8>) {
    let (mut ox, mut py, _) = link(setup, ctx, T::Stream, "STREAM", noop, noop);
    let n = ox_recv(&mut ox);
    assert_eq!((n.len(), n[1].len()), (2, 0), "oxmq connect notification: {n:?}");
    let m = py.recv_must();
    assert_eq!((m.len(), m[1].len()), (2, 0), "libzmq connect notification: {m:?}");
    (ox, py, n[0].clone(), m[0].clone())
}

fn raw_bytes_both_ways_and_oxmq_closes(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, py_id, ox_id) = linked(setup, &ctx);
    ox_send(&mut ox, &[&py_id, b"raw bytes from oxmq"]);
    assert_eq!(py_recv_from(&mut py, &ox_id, 19), b"raw bytes from oxmq");
    py.send(&[&ox_id, b"\x00\x01raw from libzmq\xff"]);
    assert_eq!(ox_recv_from(&mut ox, &py_id, 18), b"\x00\x01raw from libzmq\xff");
    // 100 KB from oxmq, byte-exact through libzmq's raw reads.
    let big: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
    ox_send(&mut ox, &[&py_id, &big]);
    assert!(py_recv_from(&mut py, &ox_id, big.len()) == big, "large raw send corrupted");
    // oxmq closes; libzmq reports the disconnect.
    ox_send(&mut ox, &[&py_id, b""]);
    assert_eq!(py.recv_must(), vec![ox_id, Vec::new()], "libzmq disconnect notification");
}

fn libzmq_closes_oxmq_is_notified(setup: Setup) {
    let ctx = Context::new();
    let (mut ox, mut py, py_id, ox_id) = linked(setup, &ctx);
    py.send(&[&ox_id, b"last words"]);
    py.send(&[&ox_id, b""]);
    // libzmq finishes the close (pipe termination handshake) only when its socket next
    // processes commands, which a poll does (it may already see our reconnection).
    let early = py.recv(100);
    assert_eq!(ox_recv_from(&mut ox, &py_id, 10), b"last words", "data before the close arrives");
    assert_eq!(ox_recv(&mut ox), vec![py_id.clone(), Vec::new()], "oxmq disconnect notification");
    match setup.binder {
        Binder::Oxmq => {
            assert_eq!(early, None);
            assert_eq!(ox.send_multipart([&py_id[..], b"x"], 0), Err(oxmq::Error::HostUnreach));
        }
        Binder::Libzmq => {
            // A connecting STREAM reconnects under the same routing id, as libzmq's does.
            assert_eq!(ox_recv(&mut ox), vec![py_id.clone(), Vec::new()], "reconnect notification");
            let m = early.unwrap_or_else(|| py.recv_must());
            assert_eq!(m[1], b"", "libzmq sees the new connection");
            ox_send(&mut ox, &[&py_id, b"again"]);
            assert_eq!(py_recv_from(&mut py, &m[0], 5), b"again");
        }
    }
}
