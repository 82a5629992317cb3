//! Accepted connections spread over the context's I/O threads (IO_THREADS), as libzmq places
//! each on its least loaded thread: the traffic of a socket bound once for many peers is not
//! held to one thread, and unbind and close still reach every connection wherever it runs.

mod common;

use common::*;
use oxmq::{opt, Context, SocketType as T};

const PEERS: usize = 6;
const EACH: usize = 1000;

/// `PEERS` PUSH sockets of another context connected to `ep`, each sending `EACH` messages
/// tagged with its number.
fn pushers(client: &Context, ep: &str) -> Vec<oxmq::Socket> {
    (0..PEERS)
        .map(|p| {
            let mut s = client.socket(T::Push).unwrap();
            s.connect(ep).unwrap();
            for i in 0..EACH {
                s.send(&[p as u8, (i >> 8) as u8, i as u8][..], 0).unwrap();
            }
            s
        })
        .collect()
}

/// Receives `PEERS * EACH` messages and checks each peer's came whole and in order.
fn receive_all(pull: &mut oxmq::Socket) {
    let mut next = [0usize; PEERS];
    for _ in 0..PEERS * EACH {
        let m = recv_bytes(pull);
        let (p, i) = (m[0] as usize, (m[1] as usize) << 8 | m[2] as usize);
        assert_eq!(i, next[p], "peer {p}: out of order");
        next[p] += 1;
    }
}

/// A context of `threads` I/O threads with a PULL bound on tcp.
fn server(threads: i32) -> (Context, oxmq::Socket, String) {
    let server = Context::new();
    server.set(opt::IO_THREADS, threads).unwrap();
    let mut pull = server.socket(T::Pull).unwrap();
    pull.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    let ep = bind(&mut pull, Transport::Tcp);
    (server, pull, ep)
}

#[test]
fn accepted_connections_spread_over_the_io_threads() {
    let (server, mut pull, ep) = server(3);
    let client = Context::new();
    let pushes = pushers(&client, &ep);
    receive_all(&mut pull);
    assert_eq!(server.io_sessions(), vec![2, 2, 2], "six connections over three threads");

    // unbind ends them all, on every thread; the peers' reconnects find no listener.
    pull.unbind(&ep).unwrap();
    eventually("every accepted connection closed", || (server.io_sessions() == vec![0, 0, 0]).then_some(()));
    drop(pushes);

    // Closing the socket reaches the connections on the other threads too.
    let ep = bind(&mut pull, Transport::Tcp);
    let pushes = pushers(&client, &ep);
    receive_all(&mut pull);
    assert_eq!(server.io_sessions().iter().sum::<usize>(), PEERS);
    drop(pull);
    eventually("every accepted connection closed after close", || (server.io_sessions() == vec![0, 0, 0]).then_some(()));
    drop(pushes);
}

/// One I/O thread (the default) keeps every connection on it.
#[test]
fn one_io_thread_takes_every_connection() {
    let (server, mut pull, ep) = server(1);
    let client = Context::new();
    let _pushes = pushers(&client, &ep);
    receive_all(&mut pull);
    assert_eq!(server.io_sessions(), vec![PEERS]);
}

/// Connections still in their handshake have no pipe for the socket to drop: unbind and
/// close reach them on whichever thread adopted them, and they close at once (not at the
/// handshake timeout).
#[test]
fn unbind_and_close_reach_handshaking_connections_on_every_thread() {
    use std::io::Read;
    for close in [false, true] {
        let (server, mut pull, ep) = server(3);
        let addr = ep.trim_start_matches("tcp://").to_string();
        // Silent peers: connected, never a byte of greeting.
        let mut peers: Vec<_> = (0..3).map(|_| std::net::TcpStream::connect(&addr).unwrap()).collect();
        eventually("three accepted connections", || (server.io_sessions() == vec![1, 1, 1]).then_some(()));
        if close {
            drop(pull);
        } else {
            pull.unbind(&ep).unwrap();
        }
        for p in &mut peers {
            p.set_read_timeout(Some(DEADLINE)).unwrap();
            let mut buf = [0u8; 256];
            // oxmq's greeting, then the end of the stream.
            loop {
                match p.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                    Err(e) => panic!("a silent peer was not disconnected ({}): {e}", if close { "close" } else { "unbind" }),
                }
            }
        }
        eventually("no session left", || (server.io_sessions() == vec![0, 0, 0]).then_some(()));
    }
}
