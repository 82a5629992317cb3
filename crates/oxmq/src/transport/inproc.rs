//! inproc: two sockets in one context joined by a pipe, no codec and no I/O thread.
//!
//! Bind and connect work in either order: a connect to a name nobody has bound yet creates the
//! pipe at once (so the connecting socket can queue messages) and parks the other end here until
//! a socket binds the name. Each direction starts with a routing-id frame, exactly as a tcp
//! session writes one after its handshake, so ROUTER peers identify inproc peers the same way.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::mailbox::Command;
use crate::msg::{Msg, ROUTING_ID};
use crate::pipe::{pipe, PipeEnd};
use crate::socket::options::Options;
use crate::socket::{hwm, SocketShared};
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::Arc;

struct Bound {
    shared: Arc<SocketShared>,
    sndhwm: i32,
    rcvhwm: i32,
    routing_id: Bytes,
}

struct Pending {
    /// The binder's end, not yet owned by anyone.
    end: PipeEnd,
    endpoint: String,
    conn_rcvhwm: i32,
}

#[derive(Default)]
pub(crate) struct Registry {
    bound: HashMap<String, Bound>,
    pending: HashMap<String, Vec<Pending>>,
}

/// libzmq adds the two sides' HWMs for an inproc pipe; 0 on either side means unlimited.
fn sum(a: i32, b: i32) -> u64 {
    if a == 0 || b == 0 {
        0
    } else {
        hwm(a) + hwm(b)
    }
}

fn routing_id_frame(id: &Bytes) -> Msg {
    let mut m = Msg::from(id.clone());
    m.set_flags(ROUTING_ID);
    m
}

pub(crate) fn bind(ctx: &Context, shared: &Arc<SocketShared>, options: &Options, name: &str) -> Result<()> {
    let mut reg = ctx.inner.inproc.lock().unwrap_or_else(|p| p.into_inner());
    if reg.bound.contains_key(name) {
        return Err(Error::AddrInUse);
    }
    reg.bound.insert(
        name.to_string(),
        Bound { shared: shared.clone(), sndhwm: options.sndhwm, rcvhwm: options.rcvhwm, routing_id: options.routing_id.clone() },
    );
    for mut p in reg.pending.remove(name).unwrap_or_default() {
        p.end.set_hwm(sum(options.sndhwm, p.conn_rcvhwm));
        p.end.write(routing_id_frame(&options.routing_id));
        p.end.flush();
        // The endpoint marks the pipe as an inproc peer (for the peer count in `stats`).
        shared.mailbox.send(Command::Attach { pipe: p.end, endpoint: Some(p.endpoint) });
    }
    Ok(())
}

pub(crate) fn unbind(ctx: &Context, socket_id: u64, name: &str) {
    let mut reg = ctx.inner.inproc.lock().unwrap_or_else(|p| p.into_inner());
    if reg.bound.get(name).map(|b| b.shared.id) == Some(socket_id) {
        reg.bound.remove(name);
    }
}

/// Connects; returns the connecting socket's end.
pub(crate) fn connect(ctx: &Context, _shared: &Arc<SocketShared>, options: &Options, name: &str) -> Result<PipeEnd> {
    let mut reg = ctx.inner.inproc.lock().unwrap_or_else(|p| p.into_inner());
    let endpoint = format!("inproc://{name}");
    match reg.bound.get(name) {
        Some(b) => {
            let (mut mine, mut theirs) =
                pipe([sum(options.sndhwm, b.rcvhwm), sum(b.sndhwm, options.rcvhwm)]);
            mine.write(routing_id_frame(&options.routing_id));
            mine.flush();
            theirs.write(routing_id_frame(&b.routing_id));
            theirs.flush();
            b.shared.mailbox.send(Command::Attach { pipe: theirs, endpoint: Some(endpoint) });
            Ok(mine)
        }
        None => {
            let (mut mine, theirs) = pipe([hwm(options.sndhwm), hwm(options.rcvhwm)]);
            mine.write(routing_id_frame(&options.routing_id));
            mine.flush();
            reg.pending.entry(name.to_string()).or_default().push(Pending {
                end: theirs,
                endpoint: endpoint.clone(),
                conn_rcvhwm: options.rcvhwm,
            });
            let _ = endpoint;
            Ok(mine)
        }
    }
}
