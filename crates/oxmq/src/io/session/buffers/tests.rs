//! The buffers' rules: a thread's pool hands an emptied buffer to the next connection and
//! keeps only a few; a receive buffer grows by what has arrived, not by what a header claims;
//! a body too large for a spare gets its memory to itself; a large-message connection takes a
//! buffer back once the bodies split off it are dropped; the send buffer's stream order.

use super::pool;
use super::{RxBuf, TxBuf, LARGE_READ_CHUNK, READ_CHUNK, RX_SPARE_MAX};
use crate::msg::Msg;
use bytes::BytesMut;

/// Empties this thread's pools, so that a test sees only its own buffers there.
fn empty_pools() {
    while pool::RX.with(|p| p.borrow_mut().pop()).is_some() {}
    while pool::TX.with(|p| p.borrow_mut().pop()).is_some() {}
}

fn pooled_rx() -> usize {
    pool::RX.with(|p| p.borrow().len())
}

#[test]
fn an_emptied_receive_buffer_goes_to_the_pool_and_serves_the_next_read() {
    empty_pools();
    let mut a = RxBuf::new();
    let mem = a.buf.as_ptr();
    a.release();
    assert_eq!((a.buf.capacity(), pooled_rx()), (0, 1), "given to the thread's pool");
    let mut b = RxBuf::new();
    b.buf = BytesMut::new(); // as after its own release
    b.make_room();
    assert_eq!((b.buf.as_ptr(), pooled_rx()), (mem, 0), "another connection's next read takes it");
    assert!(b.buf.capacity() >= READ_CHUNK);
    a.make_room();
    assert!(a.buf.capacity() >= 4096, "an empty pool: a new buffer");
}

#[test]
fn a_buffer_holding_a_partial_frame_or_large_frames_is_kept() {
    empty_pools();
    let mut rx = RxBuf::new();
    rx.buf.extend_from_slice(b"\x01\xffhalf a frame");
    let mem = rx.buf.as_ptr();
    rx.release();
    assert_eq!((rx.buf.as_ptr(), pooled_rx()), (mem, 0), "its bytes stay where they are");
    rx.buf.clear();
    rx.read_chunk = LARGE_READ_CHUNK;
    rx.release();
    assert_eq!((rx.buf.as_ptr(), pooled_rx()), (mem, 0), "a large-message connection keeps its own");
}

#[test]
fn a_pool_keeps_a_few_buffers_only() {
    empty_pools();
    for _ in 0..10 {
        pool::give(&pool::TX, Vec::<u8>::with_capacity(100));
    }
    let kept = pool::TX.with(|p| p.borrow().len());
    assert_eq!(kept, 4);
    for _ in 0..kept {
        assert!(pool::take(&pool::TX).capacity() >= 100);
    }
    assert_eq!(pool::take(&pool::TX).capacity(), 0, "then an unallocated one");
}

#[test]
fn a_frame_header_claiming_a_gigabyte_grows_the_buffer_only_by_what_arrived() {
    let claim = 1u64 << 30;
    let mut rx = RxBuf::new();
    rx.buf.extend_from_slice(&[7; 100]);
    // Small-message mode: room is made first by moving the partial frame to the front.
    for _ in 0..8 {
        rx.room_for_frame(claim - rx.buf.len() as u64);
        let (len, cap) = (rx.buf.len(), rx.buf.capacity());
        assert!(cap - len >= READ_CHUNK / 2, "room for the next reads: {len}/{cap}");
        assert!(cap <= 4 * (len + 4 * READ_CHUNK), "memory follows the bytes that arrived: {len}/{cap}");
        rx.buf.resize(cap, 7); // a read fills it
    }
    // Once large frames are seen, each step adds about what is there: the buffer doubles.
    let mut rx = RxBuf::new();
    rx.read_chunk = LARGE_READ_CHUNK;
    let have = 600 * 1024;
    rx.buf.resize(have, 7);
    rx.room_for_frame(claim);
    let cap = rx.buf.capacity();
    assert!(cap >= 2 * have && cap < 3 * have, "doubled: {cap}");
    assert!(rx.buf[..have].iter().all(|&b| b == 7), "the partial frame moved over");
    rx.room_for_frame(10);
    assert_eq!(rx.buf.capacity(), cap, "room enough already");
}

#[test]
fn let_go_leaves_a_split_off_body_its_memory_alone() {
    let mut rx = RxBuf::new();
    rx.buf.resize(RX_SPARE_MAX + 10, 1);
    let body = rx.buf.split_to(RX_SPARE_MAX).freeze();
    assert!(!body.is_unique(), "shared with the buffer it came from");
    rx.let_go();
    assert!(body.is_unique(), "the buffer moved what followed the body elsewhere");
    assert_eq!(&rx.buf[..], &[1; 10]);
    assert!(rx.buf.capacity() >= rx.read_chunk);
}

#[test]
fn a_large_message_connection_takes_a_buffer_back_once_its_bodies_are_dropped() {
    let mut rx = RxBuf::new();
    rx.read_chunk = LARGE_READ_CHUNK;
    let first = rx.buf.as_ptr();
    rx.buf.resize(40 * 1024, 1);
    let body1 = rx.buf.split().freeze(); // a large body taken without a copy
    rx.grow(32 * 1024);
    let second = rx.buf.as_ptr();
    assert_ne!(second, first, "the first buffer is still the body's: a new one");
    rx.buf.resize(20 * 1024, 2);
    let body2 = rx.buf.split().freeze();
    drop(body1);
    rx.grow(32 * 1024);
    assert_eq!(rx.buf.as_ptr(), first, "the first buffer, free again, is reused: no allocation");
    drop(body2);
    rx.grow(32 * 1024);
    assert_eq!(rx.buf.as_ptr(), first, "and reclaimed in place while nothing else holds it");
}

#[test]
fn the_send_buffer_interleaves_large_bodies_at_their_offsets() {
    empty_pools();
    let mut tx = TxBuf::new();
    tx.buf.extend_from_slice(b"head1");
    let big = Msg::from(vec![9u8; 100]);
    tx.bigs.push_back((tx.buf.len(), big));
    tx.big_bytes = 100;
    tx.buf.extend_from_slice(b"tail");
    assert_eq!(tx.unwritten(), b"head1", "up to the first large body");
    tx.advance(3);
    assert_eq!(tx.unwritten(), b"d1");
    tx.advance(2 + 60); // the rest of the head and part of the body
    assert_eq!((tx.unwritten(), tx.big_off, tx.big_bytes), (&b""[..], 60, 100));
    tx.advance(40);
    assert_eq!((tx.bigs.len(), tx.big_bytes, tx.unwritten()), (0, 0, &b"tail"[..]));
    assert!(!tx.is_empty());
    tx.advance(4);
    assert!(tx.is_empty());
    assert_eq!((tx.buf.len(), tx.pos), (0, 0), "reset for the next batch");
    let mem = tx.buf.as_ptr();
    tx.recycle();
    assert_eq!(tx.buf.capacity(), 0, "back to the pool");
    let mut other = TxBuf::new();
    other.buf = Vec::new();
    other.ensure();
    assert_eq!(other.buf.as_ptr(), mem, "and out to the next connection that encodes");
}
