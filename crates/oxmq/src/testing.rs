//! Helpers for the unit tests that run over real transports: unique endpoints, socket
//! timeouts, and waiting on a condition with a deadline.
//!
//! Nothing here sleeps to let things settle: a test waits for something observable (an event,
//! a message, a count reaching a value) and fails at a deadline.

use crate::{opt, Context, Socket, SocketType};
use std::sync::atomic::{AtomicU64, Ordering};

/// How long a test waits for anything that must happen.
pub(crate) const WAIT_MS: i32 = 5_000;

/// A name unique within the machine (process id, counter).
pub(crate) fn unique(tag: &str) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    format!("oxmq-unit-{tag}-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed))
}

/// A socket whose sends and receives give up after [`WAIT_MS`], with LINGER 0.
pub(crate) fn socket(ctx: &Context, kind: SocketType) -> Socket {
    let mut s = ctx.socket(kind).expect("socket");
    s.set_int(opt::RCVTIMEO, WAIT_MS).expect("RCVTIMEO");
    s.set_int(opt::SNDTIMEO, WAIT_MS).expect("SNDTIMEO");
    s.set_int(opt::LINGER, 0).expect("LINGER");
    s
}
