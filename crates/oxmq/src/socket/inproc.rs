//! inproc: two sockets in one context joined by a pipe, no codec and no I/O thread.
//!
//! Bind and connect work in either order: a connect to a name nobody has bound yet creates the
//! pipe at once (so the connecting socket can queue messages) and parks the other end here until
//! a socket binds the name. Each direction starts with a routing-id frame, exactly as a tcp
//! session writes one after its handshake, so ROUTER peers identify inproc peers the same way,
//! then with the sender's HELLO_MSG when its type sends one. The binder's end yields its
//! DISCONNECT_MSG, when its type takes one, once the connecting socket lets the pipe go (close
//! or `disconnect`), as libzmq's inproc pipes do (see `io/session/hello.rs` for tcp and ipc).

use super::env::Env;
use super::options::Options;
use super::policy::{conflate, link_policy};
use super::{hwm, SocketType};
use crate::error::{Error, Result};
use crate::io::config::ZapHandler;
use crate::io::SocketHandle;
use crate::mailbox::Command;
use crate::msg::{Msg, ROUTING_ID};
use crate::pipe::{pipe, PipeEnd};
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

struct Bound {
    shared: Arc<SocketHandle>,
    kind: SocketType,
    sndhwm: i32,
    rcvhwm: i32,
    routing_id: Bytes,
    /// The binder's CONFLATE directions (for its type): pipes to it conflate as the binder's do.
    conflate: (bool, bool),
    /// What the binder's type makes of its HELLO_MSG and DISCONNECT_MSG (None: nothing).
    hello: Option<Bytes>,
    disconnect_msg: Option<Bytes>,
}

struct Pending {
    /// The binder's end, not yet owned by anyone.
    end: PipeEnd,
    endpoint: String,
    conn_sndhwm: i32,
    conn_rcvhwm: i32,
    /// The connecting socket's CONNECT_ROUTING_ID: how it will know the binder.
    connect_routing_id: Bytes,
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

/// Opens the direction `end` writes: the routing-id frame, then the hello if there is one.
fn open(end: &mut PipeEnd, id: &Bytes, hello: Option<&Bytes>) {
    end.write(routing_id_frame(id));
    if let Some(h) = hello {
        end.write(Msg::from(h.clone()));
    }
    end.flush();
}

/// How a connecting socket knows the binder: by CONNECT_ROUTING_ID if it set one.
fn peer_id<'a>(options: &'a Options, announced: &'a Bytes) -> &'a Bytes {
    options.link.connect_routing_id.as_ref().unwrap_or(announced)
}

pub(crate) fn bind(env: &Env, shared: &Arc<SocketHandle>, kind: SocketType, options: &Options, name: &str) -> Result<()> {
    let mut reg = env.inproc.lock().unwrap_or_else(|p| p.into_inner());
    if reg.bound.contains_key(name) {
        return Err(Error::AddrInUse);
    }
    reg.bound.insert(
        name.to_string(),
        Bound {
            shared: shared.clone(),
            kind,
            sndhwm: options.sndhwm,
            rcvhwm: options.rcvhwm,
            routing_id: options.routing_id.clone(),
            conflate: conflate(kind, options),
            hello: link_policy(kind, options).hello,
            disconnect_msg: link_policy(kind, options).farewell,
        },
    );
    for mut p in reg.pending.remove(name).unwrap_or_default() {
        // Both directions get the two sides' sum, as when the binder was there first; the
        // connector's writer may already be queueing (and be at its own HWM).
        p.end.set_hwm(sum(options.sndhwm, p.conn_rcvhwm));
        p.end.set_peer_hwm(sum(p.conn_sndhwm, options.rcvhwm));
        if conflate(kind, options).0 {
            // The connecting end is already its socket's; our inbound direction conflates.
            p.end.set_conflate_reads();
        }
        let id = if p.connect_routing_id.is_empty() { &options.routing_id } else { &p.connect_routing_id };
        let binder = link_policy(kind, options);
        open(&mut p.end, id, binder.hello.as_ref());
        if let Some(d) = binder.farewell {
            p.end.set_farewell(Msg::from(d));
        }
        // The endpoint marks the pipe as an inproc peer (for the peer count in `stats`).
        shared.mailbox.send(Command::Attach { pipe: p.end, endpoint: Some(p.endpoint), listener: None });
    }
    Ok(())
}

pub(crate) fn unbind(env: &Env, socket_id: u64, name: &str) {
    let mut reg = env.inproc.lock().unwrap_or_else(|p| p.into_inner());
    if reg.bound.get(name).map(|b| b.shared.id) == Some(socket_id) {
        reg.bound.remove(name);
    }
}

/// Connects; returns the connecting socket's end.
pub(crate) fn connect(env: &Env, kind: SocketType, options: &Options, name: &str) -> Result<PipeEnd> {
    let mut reg = env.inproc.lock().unwrap_or_else(|p| p.into_inner());
    let endpoint = format!("inproc://{name}");
    match reg.bound.get(name) {
        Some(b) => {
            let (mut mine, mut theirs) = pipe([sum(options.sndhwm, b.rcvhwm), sum(b.sndhwm, options.rcvhwm)]);
            let conflate = conflate(kind, options);
            if conflate != (false, false) {
                PipeEnd::conflate(conflate, &mut mine, &mut theirs);
            }
            if b.conflate != (false, false) {
                PipeEnd::conflate(b.conflate, &mut theirs, &mut mine);
            }
            open(&mut mine, &options.routing_id, link_policy(kind, options).hello.as_ref());
            open(&mut theirs, peer_id(options, &b.routing_id), b.hello.as_ref());
            if let Some(d) = &b.disconnect_msg {
                theirs.set_farewell(Msg::from(d.clone()));
            }
            b.shared.mailbox.send(Command::Attach { pipe: theirs, endpoint: Some(endpoint), listener: None });
            Ok(mine)
        }
        None => {
            let (mut mine, mut theirs) = pipe([hwm(options.sndhwm), hwm(options.rcvhwm)]);
            let conflate = conflate(kind, options);
            if conflate != (false, false) {
                PipeEnd::conflate(conflate, &mut mine, &mut theirs);
            }
            open(&mut mine, &options.routing_id, link_policy(kind, options).hello.as_ref());
            reg.pending.entry(name.to_string()).or_default().push(Pending {
                end: theirs,
                endpoint: endpoint.clone(),
                conn_sndhwm: options.sndhwm,
                conn_rcvhwm: options.rcvhwm,
                connect_routing_id: options.link.connect_routing_id.clone().unwrap_or_default(),
            });
            let _ = endpoint;
            Ok(mine)
        }
    }
}

/// True when a socket of one of `kinds` is bound at `name` (the ZAP handler check).
fn bound_as(reg: &std::sync::Mutex<Registry>, name: &str, kinds: &[SocketType]) -> bool {
    let reg = reg.lock().unwrap_or_else(|p| p.into_inner());
    reg.bound.get(name).is_some_and(|b| kinds.contains(&b.kind))
}

/// Joins an engine-internal pipe to the socket bound at `name`, if it is one of `kinds`, as
/// an anonymous inproc peer (empty routing id) with no high-water mark (libzmq's ZAP pipe).
/// Returns the caller's end; its first frame is the bound socket's routing id.
fn attach_internal(reg: &std::sync::Mutex<Registry>, name: &str, kinds: &[SocketType]) -> Option<PipeEnd> {
    let reg = reg.lock().unwrap_or_else(|p| p.into_inner());
    let b = reg.bound.get(name).filter(|b| kinds.contains(&b.kind))?;
    let (mut mine, mut theirs) = pipe([0, 0]);
    mine.write(routing_id_frame(&Bytes::new()));
    mine.flush();
    theirs.write(routing_id_frame(&b.routing_id));
    theirs.flush();
    b.shared.mailbox.send(Command::Attach { pipe: theirs, endpoint: None, listener: None });
    Some(mine)
}

/// ZAP through a socket's context: the handler is the socket bound at
/// `inproc://zeromq.zap.01`, if it is one of the types libzmq's `zap_connect` accepts (SERVER
/// is a draft type it lacks). Weak: sessions live in I/O threads the context owns.
pub(crate) struct ZapThroughContext(Weak<Env>);

impl std::fmt::Debug for ZapThroughContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ZapThroughContext")
    }
}

/// Handler socket types libzmq's `zap_connect` accepts.
const ZAP_HANDLERS: [SocketType; 2] = [SocketType::Rep, SocketType::Router];

impl ZapThroughContext {
    pub(crate) fn new(env: &Arc<Env>) -> Arc<dyn ZapHandler> {
        Arc::new(ZapThroughContext(Arc::downgrade(env)))
    }
}

impl ZapHandler for ZapThroughContext {
    fn bound(&self) -> bool {
        self.0.upgrade().is_some_and(|env| bound_as(&env.inproc, zmtp::zap::ENDPOINT, &ZAP_HANDLERS))
    }

    fn connect(&self) -> Option<PipeEnd> {
        let env = self.0.upgrade()?;
        attach_internal(&env.inproc, zmtp::zap::ENDPOINT, &ZAP_HANDLERS)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{socket, unique};
    use crate::{opt, Context, Error, Msg, SocketType};

    /// libzmq's test_hello_msg (test_inproc): a bound ROUTER's hello is a DEALER's first message.
    #[test]
    fn hello_from_the_binder() {
        let ctx = Context::new();
        let ep = format!("inproc://{}", unique("hello"));
        let mut router = socket(&ctx, SocketType::Router);
        router.set_bytes(opt::HELLO_MSG, b"H").unwrap();
        router.bind(&ep).unwrap();
        let mut dealer = socket(&ctx, SocketType::Dealer);
        dealer.connect(&ep).unwrap();
        assert_eq!(dealer.recv(0).unwrap(), "H");
    }

    /// libzmq's test_hello_msg (test_inproc_late_bind): both hellos arrive when the SERVER
    /// binds after the CLIENT connected.
    #[test]
    fn hellos_both_ways_with_a_late_bind() {
        let ctx = Context::new();
        let ep = format!("inproc://{}", unique("late-hello"));
        let mut server = socket(&ctx, SocketType::Server);
        server.set_bytes(opt::HELLO_MSG, b"W").unwrap();
        let mut client = socket(&ctx, SocketType::Client);
        client.set_bytes(opt::HELLO_MSG, b"H").unwrap();
        client.connect(&ep).unwrap();
        server.bind(&ep).unwrap();
        assert_eq!(client.recv(0).unwrap(), "W");
        assert_eq!(server.recv(0).unwrap(), "H");
    }

    /// libzmq's test_disconnect_msg (test_inproc, test_inproc_disconnect): the SERVER receives
    /// its DISCONNECT_MSG, with the client's routing id, when the CLIENT closes or
    /// disconnects; and one each time.
    #[test]
    fn disconnect_msg_when_the_connecting_peer_goes() {
        let ctx = Context::new();
        let ep = format!("inproc://{}", unique("bye"));
        let mut server = socket(&ctx, SocketType::Server);
        server.set_bytes(opt::DISCONNECT_MSG, b"D").unwrap();
        server.bind(&ep).unwrap();
        for close in [true, false] {
            let mut client = socket(&ctx, SocketType::Client);
            client.set_bytes(opt::HELLO_MSG, b"H").unwrap();
            client.connect(&ep).unwrap();
            let hello = server.recv(0).unwrap();
            assert_eq!(hello, "H");
            if close {
                drop(client);
            } else {
                client.disconnect(&ep).unwrap();
            }
            let bye = server.recv(0).unwrap();
            assert_eq!(bye, "D");
            assert_eq!(bye.routing_id(), hello.routing_id());
            assert_eq!(server.recv(opt::DONTWAIT), Err(Error::Again));
        }
    }

    /// A late bind gives the waiting pipe the binder's DISCONNECT_MSG too; a ROUTER gets it
    /// after the peer's routing-id frame. The connecting side never gets one.
    #[test]
    fn disconnect_msg_with_a_late_bind_and_only_for_the_binder() {
        let ctx = Context::new();
        let ep = format!("inproc://{}", unique("late-bye"));
        let mut dealer = socket(&ctx, SocketType::Dealer);
        dealer.set_bytes(opt::ROUTING_ID, b"d").unwrap();
        dealer.connect(&ep).unwrap();
        dealer.send("hi", 0).unwrap();
        let mut router = socket(&ctx, SocketType::Router);
        router.set_bytes(opt::DISCONNECT_MSG, b"gone").unwrap();
        router.bind(&ep).unwrap();
        assert_eq!(router.recv_multipart(0).unwrap(), [Msg::from("d"), Msg::from("hi")]);
        drop(dealer);
        assert_eq!(router.recv_multipart(0).unwrap(), [Msg::from("d"), Msg::from("gone")]);

        let ep = format!("inproc://{}", unique("connector-bye"));
        let mut pair = socket(&ctx, SocketType::Pair);
        pair.bind(&ep).unwrap();
        let mut router = socket(&ctx, SocketType::Router);
        router.set_bytes(opt::DISCONNECT_MSG, b"gone").unwrap();
        router.set_int(opt::ROUTER_NOTIFY, opt::NOTIFY_DISCONNECT).unwrap();
        router.connect(&ep).unwrap();
        drop(pair);
        assert_eq!(router.recv_multipart(0).unwrap()[1], Msg::new(), "the notification, no disconnect message");
    }
}
