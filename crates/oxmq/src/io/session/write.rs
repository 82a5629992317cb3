//! The write path: messages from the socket's pipe, through the ZMTP data phase
//! (`zmtp::data`), to the stream.
//!
//! Frames are encoded where they lie in the pipe (`PipeEnd::front`) into one batch, until the
//! batch holds `WRITE_BATCH` bytes or enough large bodies; a large body is not copied into it
//! but written from its own memory in the same `writev`. So one system call carries many
//! messages under load, and none waits for a batch to fill: the batch is written as soon as
//! the pipe has nothing more.

use super::buffers::TxBuf;
use super::conn::{Conn, Proto};
use super::read::ZERO_COPY_MIN;
use super::{Link, Lost};
use crate::msg::Msg;
use crate::pipe::{Absent, PipeEnd, Read};
use std::io::{self, IoSlice};
use std::time::Instant;
use zmtp::data::DataPhase;

/// Stop encoding once this much is batched (the kernel takes it in one write).
pub(super) const WRITE_BATCH: usize = 64 * 1024;
/// Large bodies gathered into one `writev` at most (bounded by the iovec array).
pub(super) const MAX_BIGS: usize = 16;
/// Bytes of large bodies gathered into one `writev` at most.
pub(super) const BIG_BATCH: usize = 1024 * 1024;

impl Conn {
    /// Writes what the pipe holds until the stream or the pipe would block. `direct`: the
    /// caller is a sending application thread (for the counters).
    pub(super) fn write_side(&mut self, link: &mut Link, direct: bool) -> Result<(), Lost> {
        loop {
            if !link.drained {
                if let Some(p) = &mut link.pipe {
                    self.tx.ensure();
                    match &mut self.proto {
                        Proto::Zmtp(z) => {
                            if let Some(d) = z.data_mut() {
                                fill(d, &mut self.tx, p, &mut link.skip_to_boundary, &mut link.drained);
                            }
                        }
                        Proto::Raw => super::raw::fill(&mut self.tx, p, &mut link.drained),
                    }
                }
            }
            if self.tx.is_empty() {
                self.tx.recycle();
                // A layered stream may have kept some of its own output back.
                return match self.stream.flush() {
                    Ok(true) => Ok(()),
                    Ok(false) => {
                        self.writable = false;
                        self.update_interest(&link.owner.io, link.token);
                        Ok(())
                    }
                    Err(e) => self.fail(e.raw_os_error().unwrap_or(libc::EIO)),
                };
            }
            if !self.writable {
                return Ok(());
            }
            let n = match write_batch(&mut self.stream, &self.tx) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.writable = false;
                    self.update_interest(&link.owner.io, link.token);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.fail(e.raw_os_error().unwrap_or(libc::EIO)),
            };
            self.tx.advance(n);
            link.counters.wire_out(n, direct);
            link.last_write = Instant::now();
            link.reads_at_write = self.reads;
        }
    }
}

/// Encodes from the pipe into the batch, the protocol's own commands first (when no message
/// is half-encoded).
#[inline(always)]
pub(super) fn fill(d: &mut DataPhase, tx: &mut TxBuf, p: &mut PipeEnd, skip: &mut bool, drained: &mut bool) {
    d.flush_control(&mut tx.buf);
    if p.conflating() {
        return fill_conflated(d, tx, p, skip, drained);
    }
    // The encoded frames' shares of their bodies, given back when the batch is encoded
    // (dropped at the end of this function).
    let mut rel = crate::chunk::Releases::new();
    // The limits on large bodies change only when one is taken: tested then, not per frame.
    'batch: while tx.bigs.len() < MAX_BIGS && tx.big_bytes < BIG_BATCH {
        while tx.buf.len() - tx.pos < WRITE_BATCH {
            // The frame is encoded where it lies in the pipe. What the socket has published is
            // looked up once per batch, when nothing is encoded yet (see `PipeEnd::front`);
            // the loop comes back after the write.
            match p.take_front(tx.is_empty(), &mut rel, |m| take(d, tx, skip, m)) {
                Ok(false) => {}
                Ok(true) => continue 'batch,
                Err(Absent::Closed) => {
                    *drained = true;
                    break 'batch;
                }
                Err(Absent::Empty) => break 'batch,
            }
        }
        break;
    }
}

/// [`fill`] from a CONFLATE pipe, whose frames are read out (rare here).
#[cold]
#[inline(never)]
fn fill_conflated(d: &mut DataPhase, tx: &mut TxBuf, p: &mut PipeEnd, skip: &mut bool, drained: &mut bool) {
    while tx.bigs.len() < MAX_BIGS && tx.buf.len() - tx.pos < WRITE_BATCH && tx.big_bytes < BIG_BATCH {
        match p.read() {
            Read::Msg(mut m) => {
                take(d, tx, skip, &mut m);
            }
            Read::Closed => {
                *drained = true;
                break;
            }
            Read::Empty => break,
        }
    }
}

/// One frame read for the wire: encoded, or skipped while `skip` says a message cut short by
/// a reconnect is still being passed over.
#[inline(always)]
fn take(d: &mut DataPhase, tx: &mut TxBuf, skip: &mut bool, m: &mut Msg) -> bool {
    if *skip {
        *skip = m.more();
        false
    } else {
        encode(d, tx, m)
    }
}

/// Appends one frame to the batch, or takes a large body to be written from its own memory
/// (what stays in the pipe keeps the frame's MORE flag: the pipe counts a message at the frame
/// without it, so an emptied middle frame would count as one message more than the writer
/// wrote, and the writer, at its HWM, would wait forever); true when it took a large body.
/// Always inlined into the encoder's loop: a call costs a fifth of a small frame's encoding.
#[inline(always)]
fn encode(d: &mut DataPhase, tx: &mut TxBuf, m: &mut Msg) -> bool {
    if m.is_internal() {
        encode_internal(d, tx, m);
        return false;
    }
    let more = m.more();
    if let Some((len, window)) = m.inline_body() {
        d.encode_short(&mut tx.buf, more, len as usize, window);
    } else if m.len() >= ZERO_COPY_MIN && d.encode_header_only(&mut tx.buf, more, m.len(), m.first().copied()) {
        tx.big_bytes += m.len();
        let mut rest = Msg::new();
        rest.set_more(more);
        tx.bigs.push_back((tx.buf.len(), std::mem::replace(m, rest)));
        return true;
    } else {
        d.encode_frame(&mut tx.buf, more, m.as_slice());
    }
    false
}

/// An internal frame from the socket: a routing-id frame is for the socket only (dropped); a
/// command body (DISH's JOIN/LEAVE) becomes one command frame. Out of line so the encoder's
/// loop stays small.
#[cold]
#[inline(never)]
fn encode_internal(d: &mut DataPhase, tx: &mut TxBuf, m: &Msg) {
    if m.is_command() {
        d.encode_command_body(&mut tx.buf, m);
    }
}

/// One `writev` of the outgoing stream (`TxBuf`'s layout).
fn write_batch(stream: &mut crate::transport::stream::Stream, tx: &TxBuf) -> io::Result<usize> {
    let mut iov: [IoSlice<'_>; 2 * MAX_BIGS + 1] = [IoSlice::new(&[]); 2 * MAX_BIGS + 1];
    let mut k = 0;
    let mut start = tx.pos;
    for (i, (at, m)) in tx.bigs.iter().enumerate() {
        if *at > start {
            iov[k] = IoSlice::new(&tx.buf[start..*at]);
            k += 1;
        }
        iov[k] = IoSlice::new(&m[if i == 0 { tx.big_off } else { 0 }..]);
        k += 1;
        start = start.max(*at);
    }
    if start < tx.buf.len() {
        iov[k] = IoSlice::new(&tx.buf[start..]);
        k += 1;
    }
    stream.write_vectored(&iov[..k])
}

#[cfg(test)]
mod tests;
