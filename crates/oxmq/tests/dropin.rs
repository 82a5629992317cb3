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
