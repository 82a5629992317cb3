//! Behaviour libzmq's own test programs rely on (issue 19): work that libzmq does when a
//! connection is made, not when the application next calls into a socket. Each test waits on
//! an event with a deadline (RCVTIMEO), never a sleep.

mod common;

use common::*;
use oxmq::{opt, Context, SocketType};

/// PUB connects over inproc before the SUB binds (libzmq's test_inproc_connect): the SUB's
/// subscription reaches the publisher at bind, so a message published after the bind, while
/// the SUB is not being called, is delivered.
#[test]
fn inproc_subscription_is_sent_at_bind() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("cbb-pubsub"));
    let mut publ = socket(&ctx, SocketType::Pub);
    publ.connect(&ep).unwrap();
    publ.send("before", 0).unwrap(); // no subscriber yet: dropped
    let mut sub = socket(&ctx, SocketType::Sub);
    sub.set_bytes(opt::SUBSCRIBE, b"").unwrap();
    sub.bind(&ep).unwrap();
    // Inproc: the subscription is in the pipe once bind returns; PUB reads it on send.
    publ.send("after", 0).unwrap();
    assert_eq!(recv_bytes(&mut sub), b"after");
}

/// A PROBE_ROUTER ROUTER connecting over tcp announces itself as soon as the connection is
/// up (libzmq's test_probe_router): the server receives the probe while the client is never
/// called again.
#[test]
fn probe_is_sent_when_the_connection_comes_up() {
    let ctx = Context::new();
    let mut server = socket(&ctx, SocketType::Router);
    let ep = bind(&mut server, Transport::Tcp);
    let mut client = socket(&ctx, SocketType::Router);
    client.set_bytes(opt::ROUTING_ID, b"X").unwrap();
    client.set_int(opt::PROBE_ROUTER, 1).unwrap();
    client.connect(&ep).unwrap();
    assert_eq!(recv_parts(&mut server), vec![b"X".to_vec(), Vec::new()]);
    drop(client);
}

/// A SUB forwards a duplicate SUBSCRIBE (libzmq 4.3): an XPUB_VERBOSE publisher sees it,
/// a plain XPUB filters it itself (libzmq's test_xpub_verbose).
#[test]
fn sub_forwards_duplicate_subscriptions() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("xpub-verbose"));
    let mut xpub = socket(&ctx, SocketType::XPub);
    xpub.bind(&ep).unwrap();
    let mut sub = socket(&ctx, SocketType::Sub);
    sub.connect(&ep).unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01A");
    sub.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
    assert_quiet(&mut xpub);
    xpub.set_int(opt::XPUB_VERBOSE, 1).unwrap();
    sub.set_bytes(opt::SUBSCRIBE, b"A").unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01A");
}

/// XSUB does not filter what arrives (libzmq filters for SUB only): an XPUB_MANUAL publisher
/// subscribes the pipe to "B" by setsockopt, and the XSUB, which asked for "A", gets "B"
/// (libzmq's test_xpub_manual test_basic).
#[test]
fn xsub_passes_what_a_manual_xpub_routes_to_it() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("xpub-manual"));
    let mut xpub = socket(&ctx, SocketType::XPub);
    xpub.set_int(opt::XPUB_MANUAL, 1).unwrap();
    xpub.bind(&ep).unwrap();
    let mut xsub = socket(&ctx, SocketType::XSub);
    xsub.connect(&ep).unwrap();
    xsub.send(&b"\x01A"[..], 0).unwrap();
    assert_eq!(recv_bytes(&mut xpub), b"\x01A");
    xpub.set_bytes(opt::SUBSCRIBE, b"B").unwrap();
    xpub.send("A", 0).unwrap();
    xpub.send("B", 0).unwrap();
    assert_eq!(recv_bytes(&mut xsub), b"B");
}
