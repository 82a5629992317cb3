//! The draft socket types over tcp, ipc and inproc: CLIENT/SERVER, RADIO/DISH,
//! SCATTER/GATHER, CHANNEL, PEER, and the thread-safe `SyncSocket`.
//!
//! Written from libzmq's draft man pages (zmq_socket: CLIENT, SERVER, RADIO, DISH, SCATTER,
//! GATHER, PEER, CHANNEL; zmq_join, zmq_msg_routing_id). RADIO/DISH over udp is in `udp.rs`.

mod common;

use common::*;
use oxmq::{opt, Context, Error, Msg, SocketType as T};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

per_transport!(
    client_server_routing_ids,
    client_server_errors,
    server_forgets_a_departed_peer,
    send_msg_to_addresses_without_touching_the_message,
    client_load_balances_over_servers,
    radio_dish_groups,
    radio_dish_join_before_connect_and_leave,
    radio_dish_errors,
    radio_drops_at_hwm,
    scatter_gather_round_robin,
    channel_both_ways,
    peer_connect_peer,
    sync_server_many_threads,
);

fn ctx() -> Context {
    Context::new()
}

// --- CLIENT / SERVER -------------------------------------------------------------------------

fn client_server_routing_ids(t: Transport) {
    let ctx = ctx();
    let mut server = socket(&ctx, T::Server);
    let ep = bind(&mut server, t);
    let mut clients: Vec<_> = (0..3)
        .map(|_| {
            let mut c = socket(&ctx, T::Client);
            c.connect(&ep).unwrap();
            c
        })
        .collect();
    for (i, c) in clients.iter_mut().enumerate() {
        c.send(format!("hello {i}"), 0).unwrap();
    }
    let mut ids = BTreeMap::new();
    for _ in 0..3 {
        let m = server.recv(0).unwrap();
        assert_ne!(m.routing_id(), 0, "a received message names its peer");
        assert!(!m.more());
        ids.insert(String::from_utf8(m.to_vec()).unwrap(), m.routing_id());
    }
    assert_eq!(ids.len(), 3);
    let distinct: std::collections::BTreeSet<u32> = ids.values().copied().collect();
    assert_eq!(distinct.len(), 3, "each peer has its own id");
    for (text, id) in &ids {
        let mut reply = Msg::from(format!("reply to {text}"));
        reply.set_routing_id(*id).unwrap();
        server.send_msg(&mut reply, 0).unwrap();
    }
    for (i, c) in clients.iter_mut().enumerate() {
        let m = c.recv(0).unwrap();
        assert_eq!(&m[..], format!("reply to hello {i}").as_bytes());
        assert_eq!(m.routing_id(), 0);
    }
    assert_quiet(&mut server);
}

/// A peer that left is unreachable by its id, even right after a message went to it and when
/// a newcomer takes its place; the newcomer has an id of its own.
fn server_forgets_a_departed_peer(t: Transport) {
    let ctx = ctx();
    let mut server = socket(&ctx, T::Server);
    let ep = bind(&mut server, t);
    let mut a = socket(&ctx, T::Client);
    a.connect(&ep).unwrap();
    a.send("from a", 0).unwrap();
    let id_a = server.recv(0).unwrap().routing_id();
    let mut m = Msg::from("to a");
    m.set_routing_id(id_a).unwrap();
    server.send_msg(&mut m, 0).unwrap();
    assert_eq!(recv_bytes(&mut a), b"to a");
    drop(a);
    eventually("the server sees a go", || {
        let mut m = Msg::from("to a, gone");
        m.set_routing_id(id_a).unwrap();
        match server.send_msg(&mut m, opt::DONTWAIT) {
            Err(Error::HostUnreach) => Some(()),
            Ok(()) | Err(Error::Again) => None,
            Err(e) => panic!("send: {e:?}"),
        }
    });
    let mut b = socket(&ctx, T::Client);
    b.connect(&ep).unwrap();
    b.send("from b", 0).unwrap();
    let id_b = server.recv(0).unwrap().routing_id();
    assert_ne!(id_b, id_a);
    let mut stale = Msg::from("to a again");
    stale.set_routing_id(id_a).unwrap();
    assert_eq!(server.send_msg(&mut stale, 0), Err(Error::HostUnreach));
    let mut m = Msg::from("to b");
    m.set_routing_id(id_b).unwrap();
    server.send_msg(&mut m, 0).unwrap();
    assert_eq!(recv_bytes(&mut b), b"to b");
    assert_quiet(&mut b);
}

/// `send_msg_to` routes by its argument: the message's own routing id stays 0, errors are
/// those of a routed send, and other socket types refuse it.
fn send_msg_to_addresses_without_touching_the_message(t: Transport) {
    let ctx = ctx();
    let (mut server, mut client, _) = pair(&ctx, t, T::Server, T::Client);
    client.send("hello", 0).unwrap();
    let id = server.recv(0).unwrap().routing_id();
    let mut m = Msg::from("to you");
    server.send_msg_to(&mut m, id, 0).unwrap();
    let got = client.recv(0).unwrap();
    assert_eq!(&got[..], b"to you");
    assert_eq!(got.routing_id(), 0);
    let mut m = Msg::from("try");
    server.try_send_msg_to(&mut m, id, 0).unwrap();
    assert_eq!(recv_bytes(&mut client), b"try");
    let mut m = Msg::from("nobody");
    assert_eq!(server.send_msg_to(&mut m, 0, 0), Err(Error::HostUnreach));
    assert_eq!(server.send_msg_to(&mut m, id.wrapping_add(9).max(1), 0), Err(Error::HostUnreach));
    assert_eq!(&m[..], b"nobody", "a refused message is left with the caller");
    // The next plain send is routed by the message again, not by the last argument.
    assert_eq!(server.send_msg(&mut m, 0), Err(Error::HostUnreach));
    assert_eq!(client.send_msg_to(&mut Msg::from("x"), 1, 0), Err(Error::NotSup));
    assert_quiet(&mut client);
}

fn client_server_errors(t: Transport) {
    let ctx = ctx();
    let (mut server, mut client, _) = pair(&ctx, t, T::Server, T::Client);
    // Single-part only, both ways.
    assert_eq!(client.send("a", opt::SNDMORE), Err(Error::Invalid));
    let mut m = Msg::from("x");
    m.set_routing_id(1).unwrap();
    assert_eq!(server.send_msg(&mut m, opt::SNDMORE), Err(Error::Invalid));
    assert_eq!(&m[..], b"x", "a refused message is left with the caller");
    // 0 is never a routing id.
    assert_eq!(Msg::from("x").set_routing_id(0), Err(Error::Invalid));
    // No id, or one no peer has: EHOSTUNREACH.
    assert_eq!(server.send("no id", 0), Err(Error::HostUnreach));
    client.send("ping", 0).unwrap();
    let got = server.recv(0).unwrap();
    let mut wrong = Msg::from("wrong");
    wrong.set_routing_id(got.routing_id().wrapping_add(7).max(1)).unwrap();
    assert_eq!(server.send_msg(&mut wrong, 0), Err(Error::HostUnreach));
    // The client is still there for the right id.
    let mut ok = Msg::from("pong");
    ok.set_routing_id(got.routing_id()).unwrap();
    server.send_msg(&mut ok, 0).unwrap();
    assert_eq!(recv_bytes(&mut client), b"pong");
    // Groups and joins belong to RADIO/DISH.
    assert_eq!(client.join("g"), Err(Error::NotSup));
    assert_eq!(server.send_group("g", "x", 0), Err(Error::NotSup));
    assert_eq!(client.connect_peer(&t.fresh_endpoint()), Err(Error::NotSup));
}

fn client_load_balances_over_servers(t: Transport) {
    let ctx = ctx();
    let mut s1 = socket(&ctx, T::Server);
    let e1 = bind(&mut s1, t);
    let mut s2 = socket(&ctx, T::Server);
    let e2 = bind(&mut s2, t);
    let mut c = socket(&ctx, T::Client);
    c.connect(&e1).unwrap();
    c.connect(&e2).unwrap();
    // Both pipes exist from connect, so round robin alternates at once.
    for i in 0..6 {
        c.send(format!("{i}"), 0).unwrap();
    }
    let mut got1 = Vec::new();
    let mut got2 = Vec::new();
    for _ in 0..3 {
        let m = s1.recv(0).unwrap();
        got1.push(m.to_vec());
        let m = s2.recv(0).unwrap();
        got2.push(m.to_vec());
        // Replies come back fair-queued to the one client.
        let mut r = Msg::from("r1");
        r.set_routing_id(m.routing_id()).unwrap();
        s2.send_msg(&mut r, 0).unwrap();
    }
    assert_eq!(got1.len() + got2.len(), 6);
    for _ in 0..3 {
        assert_eq!(recv_bytes(&mut c), b"r1");
    }
    assert_quiet(&mut s1);
    assert_quiet(&mut s2);
}

// --- RADIO / DISH ----------------------------------------------------------------------------

/// Sends `probe` to `group` until the dish receives it (the JOIN has reached the radio).
fn sync_radio_dish(radio: &mut oxmq::Socket, dish: &mut oxmq::Socket, group: &str) {
    let end = Instant::now() + DEADLINE;
    loop {
        radio.send_group(group, "probe", 0).unwrap();
        while let Some(m) = try_recv(dish, 5) {
            if &m[..] == b"probe" {
                // Drain what else is in flight.
                while try_recv(dish, 20).is_some() {}
                return;
            }
        }
        assert!(Instant::now() < end, "JOIN never reached the radio");
    }
}

fn radio_dish_groups(t: Transport) {
    let ctx = ctx();
    let (mut radio, mut dish, _) = pair(&ctx, t, T::Radio, T::Dish);
    dish.join("weather").unwrap();
    dish.join("").unwrap();
    sync_radio_dish(&mut radio, &mut dish, "weather");
    radio.send_group("sports", "goal", 0).unwrap();
    radio.send_group("weather", "sunny", 0).unwrap();
    radio.send("no group", 0).unwrap(); // the empty group, which the dish joined
    let (g, m) = dish.recv_group(0).unwrap();
    assert_eq!((&g[..], &m[..]), (&b"weather"[..], &b"sunny"[..]));
    let (g, m) = dish.recv_group(0).unwrap();
    assert_eq!((&g[..], &m[..]), (&b""[..], &b"no group"[..]));
    // A long group (the 255-byte limit) and a large body.
    let long = "g".repeat(255);
    dish.join(&long).unwrap();
    sync_radio_dish(&mut radio, &mut dish, &long);
    radio.send_group(&long, vec![7u8; 100_000], 0).unwrap();
    let (g, m) = dish.recv_group(0).unwrap();
    assert_eq!(g.len(), 255);
    assert_eq!(m.len(), 100_000);
    assert_eq!(dish.last_group().as_deref(), Some(long.as_bytes()));
    assert_quiet(&mut dish);
}

fn radio_dish_join_before_connect_and_leave(t: Transport) {
    let ctx = ctx();
    let mut dish = socket(&ctx, T::Dish);
    dish.join("a").unwrap();
    dish.join("b").unwrap();
    let ep = bind(&mut dish, t);
    let mut radio = socket(&ctx, T::Radio);
    radio.connect(&ep).unwrap();
    sync_radio_dish(&mut radio, &mut dish, "a");
    sync_radio_dish(&mut radio, &mut dish, "b");
    dish.leave("a").unwrap();
    // Once a later message of "b" arrives, the LEAVE (sent before it on the same pipe) has
    // reached the radio; "a" must not arrive either way.
    radio.send_group("a", "after leave", 0).unwrap();
    sync_radio_dish(&mut radio, &mut dish, "b");
    radio.send_group("a", "after leave 2", 0).unwrap();
    radio.send_group("b", "marker", 0).unwrap();
    let (g, m) = dish.recv_group(0).unwrap();
    assert_eq!((&g[..], &m[..]), (&b"b"[..], &b"marker"[..]));
    assert_quiet(&mut dish);
}

fn radio_dish_errors(t: Transport) {
    let ctx = ctx();
    let (mut radio, mut dish, _) = pair(&ctx, t, T::Radio, T::Dish);
    dish.join("x").unwrap();
    assert_eq!(dish.join("x"), Err(Error::Invalid), "joining twice");
    assert_eq!(dish.leave("y"), Err(Error::Invalid), "leaving a group not joined");
    assert_eq!(dish.join("g".repeat(256)), Err(Error::Invalid), "group over 255 bytes");
    assert_eq!(radio.send_group("g".repeat(256), "x", 0), Err(Error::Invalid));
    assert_eq!(radio.send_group("x", "x", opt::SNDMORE), Err(Error::Invalid));
    assert_eq!(radio.send("x", opt::SNDMORE), Err(Error::Invalid));
    assert_eq!(dish.send("x", 0), Err(Error::NotSup));
    assert_eq!(radio.recv(opt::DONTWAIT).err(), Some(Error::NotSup));
    assert_eq!(radio.join("x"), Err(Error::NotSup));
    assert_eq!(radio.recv_group(opt::DONTWAIT).err(), Some(Error::NotSup));
}

fn radio_drops_at_hwm(t: Transport) {
    let ctx = ctx();
    let mut radio = socket(&ctx, T::Radio);
    radio.set_int(opt::SNDHWM, 10).unwrap();
    let ep = bind(&mut radio, t);
    let mut dish = socket(&ctx, T::Dish);
    dish.set_int(opt::RCVHWM, 10).unwrap();
    dish.connect(&ep).unwrap();
    dish.join("g").unwrap();
    sync_radio_dish(&mut radio, &mut dish, "g");
    let before = radio.dropped_messages();
    // The dish does not read: the radio must never block, and must count what it drops.
    let start = Instant::now();
    for i in 0..20_000 {
        radio.send_group("g", format!("{i}"), 0).unwrap();
    }
    assert!(start.elapsed() < DEADLINE);
    let dropped = radio.dropped_messages() - before;
    assert!(dropped > 0, "20000 messages into HWM 10 must drop some");
    // What was not dropped arrives, in order.
    let mut last = -1i64;
    let mut got = 0u64;
    while let Some(m) = try_recv(&mut dish, 200) {
        let n: i64 = std::str::from_utf8(&m).unwrap().parse().unwrap();
        assert!(n > last);
        last = n;
        got += 1;
    }
    assert!(got > 0);
    assert!(got + dropped <= 20_000);
}

// --- SCATTER / GATHER, CHANNEL, PEER ---------------------------------------------------------

fn scatter_gather_round_robin(t: Transport) {
    let ctx = ctx();
    let mut scatter = socket(&ctx, T::Scatter);
    let ep = bind(&mut scatter, t);
    let mut g1 = socket(&ctx, T::Gather);
    let mut g2 = socket(&ctx, T::Gather);
    g1.connect(&ep).unwrap();
    g2.connect(&ep).unwrap();
    assert_eq!(scatter.send("x", opt::SNDMORE), Err(Error::Invalid));
    assert_eq!(g1.send("x", 0), Err(Error::NotSup));
    // Wait until both gatherers are attached: one message each comes back.
    let end = Instant::now() + DEADLINE;
    let (mut n1, mut n2) = (0, 0);
    while n1 == 0 || n2 == 0 {
        scatter.send("m", 0).unwrap();
        if try_recv(&mut g1, 5).is_some() {
            n1 += 1;
        }
        if try_recv(&mut g2, 5).is_some() {
            n2 += 1;
        }
        assert!(Instant::now() < end, "both gatherers attach");
    }
    while try_recv(&mut g1, 20).is_some() {}
    while try_recv(&mut g2, 20).is_some() {}
    for i in 0..10 {
        scatter.send(format!("{i}"), 0).unwrap();
    }
    let mut a = 0;
    let mut b = 0;
    while let Some(_) = try_recv(&mut g1, 100) {
        a += 1;
    }
    while let Some(_) = try_recv(&mut g2, 100) {
        b += 1;
    }
    assert_eq!((a, b), (5, 5), "round robin over two gatherers");
}

fn channel_both_ways(t: Transport) {
    let ctx = ctx();
    let (mut a, mut b, _) = pair(&ctx, t, T::Channel, T::Channel);
    for i in 0..20 {
        b.send(format!("b{i}"), 0).unwrap();
        assert_eq!(recv_bytes(&mut a), format!("b{i}").into_bytes());
        a.send(format!("a{i}"), 0).unwrap();
        assert_eq!(recv_bytes(&mut b), format!("a{i}").into_bytes());
    }
    assert_eq!(a.send("x", opt::SNDMORE), Err(Error::Invalid));
}

fn peer_connect_peer(t: Transport) {
    let ctx = ctx();
    let mut a = socket(&ctx, T::Peer);
    let ep = bind(&mut a, t);
    let mut b = socket(&ctx, T::Peer);
    let id_of_a = b.connect_peer(&ep).unwrap();
    assert_ne!(id_of_a, 0);
    // B can address A at once: the message queues until the connection is up.
    let mut m = Msg::from("hello a");
    m.set_routing_id(id_of_a).unwrap();
    b.send_msg(&mut m, 0).unwrap();
    let got = a.recv(0).unwrap();
    assert_eq!(&got[..], b"hello a");
    let id_of_b = got.routing_id();
    assert_ne!(id_of_b, 0);
    let mut r = Msg::from("hello b");
    r.set_routing_id(id_of_b).unwrap();
    a.send_msg(&mut r, 0).unwrap();
    let back = b.recv(0).unwrap();
    assert_eq!(&back[..], b"hello b");
    assert_eq!(back.routing_id(), id_of_a, "replies carry the id connect_peer returned");
    // A second peer gets its own id.
    let mut c = socket(&ctx, T::Peer);
    let ep_c = bind(&mut c, t);
    let id_of_c = b.connect_peer(&ep_c).unwrap();
    assert_ne!(id_of_c, id_of_a);
    let mut m = Msg::from("hello c");
    m.set_routing_id(id_of_c).unwrap();
    b.send_msg(&mut m, 0).unwrap();
    assert_eq!(recv_bytes(&mut c), b"hello c");
    assert_quiet(&mut a);
    // IMMEDIATE leaves no pipe to name before the connection: EFAULT, as libzmq.
    let mut d = socket(&ctx, T::Peer);
    d.set_int(opt::IMMEDIATE, 1).unwrap();
    assert_eq!(d.connect_peer(&ep), Err(Error::Fault));
}

// --- thread-safe sockets ---------------------------------------------------------------------

/// Four threads receive on one SERVER and reply through it while four CLIENTs (one shared by
/// two threads) send: every request is answered exactly once.
fn sync_server_many_threads(t: Transport) {
    const PER: usize = 200;
    let ctx = ctx();
    assert_eq!(ctx.sync_socket(T::Dealer).err(), Some(Error::Invalid));
    let server = Arc::new(ctx.sync_socket(T::Server).unwrap());
    server.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    server.set_int(opt::LINGER, 0).unwrap();
    let ep = t.bind_endpoint();
    server.bind(&ep).unwrap();
    let ep = if ep.starts_with("tcp://") { server.last_endpoint().unwrap() } else { ep };
    let client = Arc::new(ctx.sync_socket(T::Client).unwrap());
    client.set_int(opt::RCVTIMEO, RCV_MS).unwrap();
    client.set_int(opt::LINGER, 0).unwrap();
    client.connect(&ep).unwrap();

    let workers: Vec<_> = (0..4)
        .map(|_| {
            let server = server.clone();
            std::thread::spawn(move || {
                let mut served = 0;
                loop {
                    let mut m = match server.recv(0) {
                        Ok(m) => m,
                        Err(Error::Again) => return served,
                        Err(e) => panic!("server recv: {e:?}"),
                    };
                    if &m[..] == b"stop" {
                        return served;
                    }
                    let id = m.routing_id();
                    let mut reply = Msg::copy_from(&m);
                    reply.set_routing_id(id).unwrap();
                    m = reply;
                    server.send_msg(&mut m, 0).unwrap();
                    served += 1;
                }
            })
        })
        .collect();
    // Two threads send on the one client while two others receive on it.
    let senders: Vec<_> = (0..2)
        .map(|k| {
            let client = client.clone();
            std::thread::spawn(move || {
                for i in 0..PER {
                    client.send(format!("{k}-{i}"), 0).unwrap();
                }
            })
        })
        .collect();
    let receivers: Vec<_> = (0..2)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                while got.len() < PER {
                    match client.recv(0) {
                        Ok(m) => got.push(String::from_utf8(m.to_vec()).unwrap()),
                        Err(e) => panic!("client recv after {}: {e:?}", got.len()),
                    }
                }
                got
            })
        })
        .collect();
    for s in senders {
        s.join().unwrap();
    }
    let mut all: Vec<String> = receivers.into_iter().flat_map(|r| r.join().unwrap()).collect();
    all.sort();
    let mut want: Vec<String> = (0..2).flat_map(|k| (0..PER).map(move |i| format!("{k}-{i}"))).collect();
    want.sort();
    assert_eq!(all, want, "every request answered exactly once");
    for _ in 0..4 {
        client.send("stop", 0).unwrap();
    }
    let served: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(served, 2 * PER);
}

/// `SyncSocket::watch`: a thread waiting on the socket's descriptor itself (a binding's poll or
/// event loop) is not left asleep when another thread's call takes the change it waits for
/// (here `events`, which drains the edge-triggered descriptor): that call signals it again.
/// Without a watch, the descriptor stays drained. And `wait_until` gives up at its instant.
#[test]
fn sync_socket_watch_and_wait_until() {
    let ctx = ctx();
    let server = ctx.sync_socket(T::Server).unwrap();
    server.set_int(opt::LINGER, 0).unwrap();
    server.bind("tcp://127.0.0.1:*").unwrap();
    let mut client = socket(&ctx, T::Client);
    client.connect(&server.last_endpoint().unwrap()).unwrap();
    let readable = |fd| {
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd; a zero timeout never blocks.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    };
    // `wait_until` in the past: one attempt, then Again.
    let t0 = Instant::now();
    assert_eq!(server.wait_until(false, t0, |s| s.recv(opt::DONTWAIT)).err(), Some(Error::Again));
    for watched in [false, true] {
        assert_eq!(server.events().unwrap() & opt::POLLIN, 0);
        assert!(!readable(server.fd()));
        if watched {
            assert!(server.watch());
            assert!(!server.watch(), "one watcher at a time");
        }
        client.send("ping", 0).unwrap();
        // The message arrives: the descriptor fires; another thread then takes the change.
        let deadline = Instant::now() + DEADLINE;
        while !readable(server.fd()) {
            assert!(Instant::now() < deadline, "the message never signalled the socket");
            std::thread::yield_now();
        }
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(server.events().unwrap() & opt::POLLIN, opt::POLLIN));
        });
        assert_eq!(readable(server.fd()), watched, "watched: {watched}");
        if watched {
            server.unwatch();
        }
        let m = server.wait_until(false, Instant::now() + DEADLINE, |s| s.recv(opt::DONTWAIT)).unwrap();
        assert_eq!(&m[..], b"ping");
    }
}
