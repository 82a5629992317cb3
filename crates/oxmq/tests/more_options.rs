//! Socket and context options observed through their effect over real transports
//! (zmq_setsockopt(3), zmq_ctx_set(3)): CONFLATE, PROBE_ROUTER, REQ_RELAXED, REQ_CORRELATE,
//! ROUTER_NOTIFY, ROUTER_HANDOVER, CONNECT_ROUTING_ID, TOS, SNDBUF, RCVBUF, BACKLOG,
//! MULTICAST_HOPS, BLOCKY, MAX_MSGSZ, ETERM for a blocked poll, ROUTER's peer state, METADATA.

mod common;

use common::*;
use oxmq::{opt, Context, Error, PollItem, Socket, SocketType as T};
use std::os::fd::BorrowedFd;
use std::time::Duration;

// --- CONFLATE ----------------------------------------------------------------------------------

/// Sending side: a conflating PUSH that cannot deliver yet keeps only the newest message.
fn conflate_sender_keeps_only_newest(t: Transport) {
    let ctx = Context::new();
    let ep = t.fresh_endpoint();
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::CONFLATE, 1).unwrap();
    assert_eq!(push.get_int(opt::CONFLATE).unwrap(), 1);
    push.set_int(opt::SNDHWM, 5).unwrap(); // ignored: a conflating queue never fills
    push.connect(&ep).unwrap();
    for i in 0..100 {
        push.send(format!("m{i}"), opt::DONTWAIT).unwrap();
    }
    let mut pull = socket(&ctx, T::Pull);
    pull.bind(&ep).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"m99");
    assert_quiet(&mut pull);
}

/// Receiving side: a conflating PULL that reads late sees the newest of what arrived, having
/// dropped (almost all of) the rest.
fn conflate_receiver_keeps_only_newest(t: Transport) {
    let ctx = Context::new();
    let mut pull = socket(&ctx, T::Pull);
    pull.set_int(opt::CONFLATE, 1).unwrap();
    let ep = bind(&mut pull, t);
    let mut push = socket(&ctx, T::Push);
    push.connect(&ep).unwrap();
    for i in 0..1000 {
        push.send(format!("m{i}"), 0).unwrap();
    }
    push.send("end", 0).unwrap();
    let mut got = 0;
    loop {
        got += 1;
        if recv_bytes(&mut pull) == b"end" {
            break;
        }
    }
    assert!(got < 500, "{got} of 1001 messages received: not conflated");
}

/// A conflating SUB conflates data, never its subscriptions: both prefixes reach the PUB.
fn conflate_sub_keeps_every_subscription(t: Transport) {
    let ctx = Context::new();
    let mut publ = socket(&ctx, T::Pub);
    let ep = bind(&mut publ, t);
    let mut sub = socket(&ctx, T::Sub);
    sub.set_int(opt::CONFLATE, 1).unwrap();
    sub.subscribe("A").unwrap();
    sub.subscribe("B").unwrap();
    sub.connect(&ep).unwrap();
    sync_pub_sub(&mut publ, &mut sub, b"A-probe");
    sync_pub_sub(&mut publ, &mut sub, b"B-probe");
}

// --- PROBE_ROUTER ------------------------------------------------------------------------------

fn probe_router_announces_dealer_and_req(t: Transport) {
    let ctx = Context::new();
    let mut router = socket(&ctx, T::Router);
    let ep = bind(&mut router, t);
    for (kind, id) in [(T::Dealer, &b"dealer"[..]), (T::Req, b"req")] {
        let mut s = socket(&ctx, kind);
        s.set_bytes(opt::ROUTING_ID, id).unwrap();
        s.set_int(opt::PROBE_ROUTER, 1).unwrap();
        s.connect(&ep).unwrap();
        // Nothing was sent by the application: the empty message is the probe.
        assert_eq!(recv_parts(&mut router), vec![id.to_vec(), Vec::new()], "{kind:?}");
        // The ROUTER knows the peer now and can address it first.
        if kind == T::Dealer {
            send_parts(&mut router, &[id, b"hello"]);
            assert_eq!(recv_bytes(&mut s), b"hello");
        }
    }
}

// --- REQ_RELAXED, REQ_CORRELATE ----------------------------------------------------------------

fn req_relaxed_and_correlated(t: Transport) {
    let ctx = Context::new();
    let mut router = socket(&ctx, T::Router);
    let ep = bind(&mut router, t);
    let mut req = socket(&ctx, T::Req);
    req.set_int(opt::REQ_RELAXED, 1).unwrap();
    req.set_int(opt::REQ_CORRELATE, 1).unwrap();
    assert_eq!(req.get_int(opt::REQ_CORRELATE).unwrap(), 1);
    req.connect(&ep).unwrap();

    req.send("q1", 0).unwrap();
    let r1 = recv_parts(&mut router);
    assert_eq!(r1.len(), 4, "[peer id, request id, delimiter, body]");
    assert_eq!(r1[1].len(), 4);
    assert_eq!((r1[2].as_slice(), r1[3].as_slice()), (&b""[..], &b"q1"[..]));
    // Relaxed: a new request without waiting for the reply.
    req.send("q2", 0).unwrap();
    let r2 = recv_parts(&mut router);
    assert_eq!(r2[3], b"q2");
    let id1 = u32::from_ne_bytes(r1[1].as_slice().try_into().unwrap());
    let id2 = u32::from_ne_bytes(r2[1].as_slice().try_into().unwrap());
    assert_eq!(id2, id1.wrapping_add(1), "request ids count up");
    // The late reply to q1 is dropped: only the reply carrying q2's id is received.
    send_parts(&mut router, &[&r1[0], &r1[1], b"", b"reply to q1"]);
    send_parts(&mut router, &[&r2[0], &r2[1], b"", b"reply to q2"]);
    assert_eq!(recv_parts(&mut req), vec![b"reply to q2".to_vec()]);

    // Strict (the default): sending twice is EFSM.
    let mut strict = socket(&ctx, T::Req);
    strict.connect(&ep).unwrap();
    strict.send("a", 0).unwrap();
    assert_eq!(strict.send("b", 0).unwrap_err(), Error::Fsm);
}

// --- ROUTER_NOTIFY, ROUTER_HANDOVER, CONNECT_ROUTING_ID ----------------------------------------

fn router_notify_connect_and_disconnect(t: Transport) {
    let ctx = Context::new();
    let mut router = socket(&ctx, T::Router);
    router.set_int(opt::ROUTER_NOTIFY, opt::NOTIFY_CONNECT | opt::NOTIFY_DISCONNECT).unwrap();
    assert_eq!(router.get_int(opt::ROUTER_NOTIFY).unwrap(), 3);
    assert_eq!(router.set_int(opt::ROUTER_NOTIFY, 4).unwrap_err(), Error::Invalid);
    let ep = bind(&mut router, t);
    let mut dealer = socket(&ctx, T::Dealer);
    dealer.set_bytes(opt::ROUTING_ID, b"D1").unwrap();
    dealer.connect(&ep).unwrap();
    assert_eq!(recv_parts(&mut router), vec![b"D1".to_vec(), Vec::new()], "connect notification");
    dealer.send("data", 0).unwrap();
    assert_eq!(recv_parts(&mut router), vec![b"D1".to_vec(), b"data".to_vec()]);
    drop(dealer);
    assert_eq!(recv_parts(&mut router), vec![b"D1".to_vec(), Vec::new()], "disconnect notification");
}

fn router_handover_takes_over_identity(t: Transport) {
    let ctx = Context::new();
    let mut router = socket(&ctx, T::Router);
    router.set_int(opt::ROUTER_HANDOVER, 1).unwrap();
    assert_eq!(router.get_int(opt::ROUTER_HANDOVER).unwrap(), 1);
    let ep = bind(&mut router, t);
    let mut a = socket(&ctx, T::Dealer);
    a.set_bytes(opt::ROUTING_ID, b"X").unwrap();
    a.connect(&ep).unwrap();
    a.send("from a", 0).unwrap();
    assert_eq!(recv_parts(&mut router), vec![b"X".to_vec(), b"from a".to_vec()]);
    // Routed to a first, so the router's memory of the last peer points at a's pipe.
    send_parts(&mut router, &[b"X", b"to a"]);
    assert_eq!(recv_bytes(&mut a), b"to a");
    let mut b = socket(&ctx, T::Dealer);
    b.set_bytes(opt::ROUTING_ID, b"X").unwrap();
    b.connect(&ep).unwrap();
    b.send("from b", 0).unwrap();
    assert_eq!(recv_parts(&mut router), vec![b"X".to_vec(), b"from b".to_vec()]);
    send_parts(&mut router, &[b"X", b"to the newcomer"]);
    assert_eq!(recv_bytes(&mut b), b"to the newcomer");
    assert_quiet(&mut a);
}

/// Routing ids longer than a frame holds inline, interleaved peers and multi-part messages:
/// each message is announced by its own peer's id, and replies reach the right peer.
fn router_long_ids_and_interleaved_peers(t: Transport) {
    let ctx = Context::new();
    let mut router = socket(&ctx, T::Router);
    let ep = bind(&mut router, t);
    let long = [b'L'; 200];
    let mut a = socket(&ctx, T::Dealer);
    a.set_bytes(opt::ROUTING_ID, &long).unwrap();
    a.connect(&ep).unwrap();
    let mut b = socket(&ctx, T::Dealer);
    b.set_bytes(opt::ROUTING_ID, b"b").unwrap();
    b.connect(&ep).unwrap();
    for i in 0..50u8 {
        a.send_multipart([&[i][..], b"a-more"], 0).unwrap();
        b.send(&[i][..], 0).unwrap();
    }
    let (mut from_a, mut from_b) = (0u8, 0u8);
    for _ in 0..100 {
        let parts = recv_parts(&mut router);
        if parts[0] == long {
            assert_eq!(parts[1..], [vec![from_a], b"a-more".to_vec()]);
            from_a += 1;
        } else {
            assert_eq!(parts[0], b"b");
            assert_eq!(parts[1..], [vec![from_b]]);
            from_b += 1;
        }
        let to: &[u8] = if parts[0] == long { &long } else { b"b" };
        send_parts(&mut router, &[to, &parts[1]]);
    }
    assert_eq!((from_a, from_b), (50, 50));
    for i in 0..50u8 {
        assert_eq!(recv_bytes(&mut a), [i]);
        assert_eq!(recv_bytes(&mut b), [i]);
    }
}

fn connect_routing_id_names_the_peer(t: Transport) {
    let ctx = Context::new();
    let mut server = socket(&ctx, T::Router);
    server.set_bytes(opt::ROUTING_ID, b"announced").unwrap();
    let ep = bind(&mut server, t);
    let mut client = socket(&ctx, T::Router);
    client.set_bytes(opt::ROUTING_ID, b"client").unwrap();
    client.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    client.set_bytes(opt::CONNECT_ROUTING_ID, b"my-name-for-it").unwrap();
    client.connect(&ep).unwrap();
    // The peer is known by the name given at connect, not the one it announced.
    eventually("the server becomes routable by its connect routing id", || {
        match client.send_multipart([&b"my-name-for-it"[..], b"hi"], opt::DONTWAIT) {
            Ok(()) => Some(()),
            Err(Error::HostUnreach) | Err(Error::Again) => None,
            Err(e) => panic!("send: {e:?}"),
        }
    });
    assert_eq!(recv_parts(&mut server), vec![b"client".to_vec(), b"hi".to_vec()]);
    assert_eq!(client.send_multipart([&b"announced"[..], b"x"], opt::DONTWAIT).unwrap_err(), Error::HostUnreach);
    assert_eq!(client.set_bytes(opt::CONNECT_ROUTING_ID, b"").unwrap_err(), Error::Invalid);
}

/// A ROUTER's connection named by CONNECT_ROUTING_ID is routable from the connect on, before
/// the peer exists (libzmq makes its pipe at connect): what is sent waits for the handshake.
/// (Over inproc a connect before the bind has no pipe yet, in oxmq as in libzmq.)
fn connect_routing_id_routes_before_the_peer_is_up(t: Transport) {
    if t == Transport::Inproc {
        return;
    }
    let ctx = Context::new();
    let ep = t.fresh_endpoint();
    let mut client = socket(&ctx, T::Router);
    client.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    client.set_bytes(opt::ROUTING_ID, b"client").unwrap();
    client.set_bytes(opt::CONNECT_ROUTING_ID, b"later").unwrap();
    client.connect(&ep).unwrap();
    client.send_multipart([&b"later"[..], b"queued"], opt::DONTWAIT).expect("routable at connect");
    let mut server = socket(&ctx, T::Router);
    server.bind(&ep).unwrap();
    assert_eq!(recv_parts(&mut server), vec![b"client".to_vec(), b"queued".to_vec()]);
    send_parts(&mut server, &[b"client", b"answer"]);
    assert_eq!(recv_parts(&mut client), vec![b"later".to_vec(), b"answer".to_vec()]);
}

/// The named connection keeps its pipe while the peer is away: what is sent once the
/// disconnect is known waits for the reconnect, and the name routes to the new peer.
fn connect_routing_id_survives_a_reconnect(t: Transport) {
    if !t.reconnects() {
        return;
    }
    let ctx = Context::new();
    let mut server = socket(&ctx, T::Router);
    let ep = bind(&mut server, t);
    let mut client = socket(&ctx, T::Router);
    client.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    client.set_bytes(opt::ROUTING_ID, b"client").unwrap();
    client.set_bytes(opt::CONNECT_ROUTING_ID, b"srv").unwrap();
    let mon_ep = format!("inproc://{}", unique("rid-mon"));
    client.monitor(Some(&mon_ep), oxmq::monitor::event::DISCONNECTED).unwrap();
    let mut mon = socket(&ctx, T::Pair);
    mon.connect(&mon_ep).unwrap();
    client.connect(&ep).unwrap();
    send_parts(&mut client, &[b"srv", b"one"]);
    assert_eq!(recv_parts(&mut server), vec![b"client".to_vec(), b"one".to_vec()]);
    drop(server);
    let e = oxmq::MonitorEvent::recv(&mut mon, 1, 0).expect("DISCONNECTED");
    assert_eq!(e.event, oxmq::monitor::event::DISCONNECTED);
    client.send_multipart([&b"srv"[..], b"while away"], opt::DONTWAIT).expect("the name still routes");
    let mut server = socket(&ctx, T::Router);
    // The old listener's close is asynchronous: the address may be busy for a moment.
    eventually("the endpoint can be bound again", || server.bind(&ep).ok());
    assert_eq!(recv_parts(&mut server), vec![b"client".to_vec(), b"while away".to_vec()]);
}

/// zmq_socket_get_peer_state: POLLOUT while a named peer's queue has room, 0 once it is at
/// the HWM, again POLLOUT when the peer has read; EHOSTUNREACH for an unknown name, ENOTSUP
/// on other types. The queue fills only over inproc: over tcp the session keeps moving
/// messages on into the kernel's buffers.
fn router_peer_state_follows_the_queue(t: Transport) {
    let ctx = Context::new();
    let mut router = socket(&ctx, T::Router);
    router.set_int(opt::SNDHWM, 10).unwrap();
    router.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    let ep = bind(&mut router, t);
    let mut dealer = socket(&ctx, T::Dealer);
    dealer.set_int(opt::RCVHWM, 10).unwrap();
    dealer.set_bytes(opt::ROUTING_ID, b"X").unwrap();
    dealer.connect(&ep).unwrap();
    dealer.send("hello", 0).unwrap();
    assert_eq!(recv_parts(&mut router), vec![b"X".to_vec(), b"hello".to_vec()]);
    assert_eq!(router.peer_state(b"X"), Ok(opt::POLLOUT));
    assert_eq!(router.peer_state(b"nobody"), Err(Error::HostUnreach));
    assert_eq!(dealer.peer_state(b"X"), Err(Error::NotSup));
    if t != Transport::Inproc {
        return;
    }
    let mut sent = 0;
    while router.peer_state(b"X") == Ok(opt::POLLOUT) {
        router.send("X", opt::SNDMORE | opt::DONTWAIT).unwrap();
        router.send("m", opt::DONTWAIT).unwrap();
        sent += 1;
        assert!(sent <= 20, "never full");
    }
    assert_eq!(router.peer_state(b"X"), Ok(0));
    assert_eq!(router.send("X", opt::SNDMORE | opt::DONTWAIT), Err(Error::Again), "full, as it said");
    for _ in 0..sent {
        assert_eq!(recv_bytes(&mut dealer), b"m");
    }
    eventually("room again once the peer has read", || (router.peer_state(b"X") == Ok(opt::POLLOUT)).then_some(()));
}

/// METADATA (draft): "X-name:value" properties travel in the handshake and come out of the
/// peer's messages (`gets`); malformed ones are EINVAL; a name keeps its first value.
fn app_metadata_reaches_the_peer(t: Transport) {
    let ctx = Context::new();
    let mut rep = socket(&ctx, T::Rep);
    rep.set_bytes(opt::METADATA, b"X-hello:world").unwrap();
    for bad in [&b":"[..], b"key:", b":value", b"keyvalue", b"", b"X-", b"X-empty:", &[b'X'; 300]] {
        assert_eq!(rep.set_bytes(opt::METADATA, bad), Err(Error::Invalid), "{:?}", String::from_utf8_lossy(bad));
    }
    let mut long = b"X-".to_vec();
    long.extend([b'k'; 254]);
    long.extend(b":v");
    assert_eq!(rep.set_bytes(opt::METADATA, &long), Err(Error::Invalid), "a 256-byte name");
    let ep = bind(&mut rep, t);
    let mut req = socket(&ctx, T::Req);
    req.set_bytes(opt::METADATA, b"X-hello:hello").unwrap();
    req.set_bytes(opt::METADATA, b"X-hello:ignored").unwrap();
    req.set_bytes(opt::METADATA, b"X-connection:primary").unwrap();
    req.connect(&ep).unwrap();
    req.send("q", 0).unwrap();
    let m = rep.recv(0).unwrap();
    if t.is_wire() {
        assert_eq!(m.gets("X-hello"), Some(&b"hello"[..]));
        assert_eq!(m.gets("X-connection"), Some(&b"primary"[..]));
        assert_eq!(m.gets("X-foobar"), None);
    }
    rep.send("a", 0).unwrap();
    let m = req.recv(0).unwrap();
    if t.is_wire() {
        assert_eq!(m.gets("X-hello"), Some(&b"world"[..]));
    }
    // ROUTER_NOTIFY reads "off" on any other socket type, as libzmq.
    assert_eq!(req.get_int(opt::ROUTER_NOTIFY).unwrap(), 0);
}

per_transport!(
    app_metadata_reaches_the_peer,
    router_peer_state_follows_the_queue,
    connect_routing_id_routes_before_the_peer_is_up,
    connect_routing_id_survives_a_reconnect,
    conflate_sender_keeps_only_newest,
    conflate_sub_keeps_every_subscription,
    conflate_receiver_keeps_only_newest,
    probe_router_announces_dealer_and_req,
    req_relaxed_and_correlated,
    router_notify_connect_and_disconnect,
    router_handover_takes_over_identity,
    router_long_ids_and_interleaved_peers,
    connect_routing_id_names_the_peer,
);

// --- TOS, SNDBUF, RCVBUF, BACKLOG: read back from the kernel -----------------------------------

/// Runs `f` on one of this process's descriptors as a socket.
fn with_sock<R>(fd: i32, f: impl FnOnce(&socket2::SockRef<'_>) -> R) -> R {
    // SAFETY: the descriptor was listed in /proc/self/fd; borrowing does not take ownership,
    // and the oxmq connection under test keeps it open while the test looks at it.
    let b = unsafe { BorrowedFd::borrow_raw(fd) };
    f(&socket2::SockRef::from(&b))
}

/// Every connected tcp socket of this process: (fd, local port, peer port).
fn tcp_sockets() -> Vec<(i32, u16, u16)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/fd").into_iter().flatten().flatten() {
        let Ok(fd) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let ports = with_sock(fd, |s| {
            let (l, p) = (s.local_addr().ok()?, s.peer_addr().ok()?);
            Some((l.as_socket()?.port(), p.as_socket()?.port()))
        });
        if let Some((l, p)) = ports {
            out.push((fd, l, p));
        }
    }
    out
}

fn port_of(ep: &str) -> u16 {
    ep.rsplit(':').next().unwrap().parse().unwrap()
}

#[test]
fn tos_and_buffer_sizes_reach_the_kernel() {
    let ctx = Context::new();
    let mut pull = socket(&ctx, T::Pull);
    pull.set_int(opt::TOS, 0x10).unwrap();
    pull.set_int(opt::RCVBUF, 96 * 1024).unwrap();
    let ep = bind(&mut pull, Transport::Tcp);
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::TOS, 0x28).unwrap();
    assert_eq!(push.get_int(opt::PRIORITY).unwrap(), 0);
    push.set_int(opt::PRIORITY, 3).unwrap();
    assert_eq!(push.get_int(opt::PRIORITY).unwrap(), 3);
    push.set_int(opt::SNDBUF, 160 * 1024).unwrap();
    push.set_int(opt::RCVBUF, 80 * 1024).unwrap();
    push.connect(&ep).unwrap();
    push.send("x", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"x");

    let server = port_of(&ep);
    // The connecting side: find our end by its peer port.
    let (fd, client_port, _) =
        tcp_sockets().into_iter().find(|&(_, l, p)| p == server && l != server).expect("the connecting socket");
    with_sock(fd, |s| {
        assert_eq!(s.tos_v4().unwrap(), 0x28, "IP_TOS on the connecting socket");
        let mut prio: libc::c_int = -1;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into `prio`.
        let rc = unsafe {
            libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_PRIORITY, (&mut prio as *mut libc::c_int).cast(), &mut len)
        };
        assert_eq!((rc, prio), (0, 3), "SO_PRIORITY (ZMQ_PRIORITY) on the connecting socket");
        // Linux doubles the requested size for bookkeeping; at least what was asked.
        assert!(s.send_buffer_size().unwrap() >= 160 * 1024, "SO_SNDBUF {}", s.send_buffer_size().unwrap());
        assert!(s.recv_buffer_size().unwrap() >= 80 * 1024);
        assert!(s.recv_buffer_size().unwrap() < 4 * 80 * 1024, "SO_RCVBUF as set, not the default");
    });
    let (fd, _, _) = tcp_sockets().into_iter().find(|&(_, l, p)| l == server && p == client_port).expect("the accepted socket");
    with_sock(fd, |s| {
        assert_eq!(s.tos_v4().unwrap(), 0x10, "IP_TOS on the accepted socket");
        assert!(s.recv_buffer_size().unwrap() >= 96 * 1024);
    });
}

/// Small kernel buffers on both ends of a connect (SNDBUF and RCVBUF 4 KiB, 8 KiB messages):
/// the connecting side's buffers are set before its connect, so the queues on both sides fill
/// within moments (2 × 50 messages, 800 KiB through the 4 KiB buffers). Shrunk after the
/// handshake instead, the stream crawled at one retransmission timeout per window, a few
/// messages a second, and these sends timed out.
#[test]
fn small_kernel_buffers_still_carry_the_stream() {
    let ctx = Context::new();
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::SNDHWM, 50).unwrap();
    push.set_int(opt::SNDBUF, 4096).unwrap();
    let ep = bind(&mut push, Transport::Tcp);
    let mut pull = socket(&ctx, T::Pull);
    pull.set_int(opt::RCVHWM, 50).unwrap();
    pull.set_int(opt::RCVBUF, 4096).unwrap();
    pull.connect(&ep).unwrap();
    // All of them within 5 s, whatever each send waits (they take milliseconds; crawling,
    // about 15 s).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    for i in 0..100 {
        let left = deadline.saturating_duration_since(std::time::Instant::now()).as_millis().max(1);
        push.set_int(opt::SNDTIMEO, left as i32).unwrap();
        push.send_msg(&mut oxmq::Msg::with_size(8192), 0).unwrap_or_else(|e| panic!("message {i}: {e:?}"));
    }
    for _ in 0..100 {
        assert_eq!(pull.recv(0).unwrap().len(), 8192);
    }
}

#[test]
fn backlog_is_the_listen_queue_length() {
    let ctx = Context::new();
    let mut pull = socket(&ctx, T::Pull);
    pull.set_int(opt::BACKLOG, 7).unwrap();
    let ep = bind(&mut pull, Transport::Tcp);
    let port = port_of(&ep);
    // `ss` reports a listener's backlog as its Send-Q.
    let out = match std::process::Command::new("ss").args(["-ltnH", &format!("sport = :{port}")]).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => {
            eprintln!("skip: `ss` is not available to read the listen backlog");
            return;
        }
    };
    let cols: Vec<&str> = out.split_whitespace().collect();
    assert!(cols.len() >= 3, "ss said {out:?}");
    assert_eq!(cols[2], "7", "Send-Q of the listener is its backlog: {out:?}");
}

#[test]
fn multicast_hops_is_stored() {
    let ctx = Context::new();
    let mut s = socket(&ctx, T::Pub);
    assert_eq!(s.get_int(opt::MULTICAST_HOPS).unwrap(), 1, "libzmq default");
    s.set_int(opt::MULTICAST_HOPS, 16).unwrap();
    assert_eq!(s.get_int(opt::MULTICAST_HOPS).unwrap(), 16);
    assert_eq!(s.set_int(opt::MULTICAST_HOPS, 0).unwrap_err(), Error::Invalid);
}

// --- Context options and termination ----------------------------------------------------------

#[test]
fn blocky_false_makes_linger_zero_and_term_prompt() {
    let ctx = Context::new();
    assert_eq!(ctx.get(opt::CTX_BLOCKY).unwrap(), 1);
    ctx.set(opt::CTX_BLOCKY, 0).unwrap();
    let mut push = ctx.socket(T::Push).unwrap();
    assert_eq!(push.get_int(opt::LINGER).unwrap(), 0, "BLOCKY=0: new sockets linger 0");
    push.connect(&format!("tcp://127.0.0.1:{}", free_port())).unwrap();
    push.send("never delivered", 0).unwrap();
    drop(push);
    within(Duration::from_secs(2), "term with BLOCKY=0", move || ctx.term().unwrap());

    // Blocky (the default): LINGER -1, and a close still delivers what was sent. The endpoint is
    // a fresh ipc path: a tcp port found free could be taken by a parallel test's peer meanwhile.
    let ctx = Context::new();
    let ep = format!("ipc://{}", ipc_path());
    let mut push = ctx.socket(T::Push).unwrap();
    assert_eq!(push.get_int(opt::LINGER).unwrap(), -1);
    push.connect(&ep).unwrap();
    for i in 0..10 {
        push.send(format!("m{i}"), 0).unwrap();
    }
    drop(push);
    let term = std::thread::spawn(move || ctx.term());
    let ctx2 = Context::new();
    let mut pull = socket(&ctx2, T::Pull);
    pull.bind(&ep).unwrap();
    for i in 0..10 {
        assert_eq!(recv_bytes(&mut pull), format!("m{i}").as_bytes());
    }
    within(DEADLINE, "term after lingering delivery", move || term.join().unwrap().unwrap());
}

#[test]
fn max_msgsz_drops_larger_messages() {
    let ctx = Context::new();
    ctx.set(opt::MAX_MSGSZ, 100).unwrap();
    assert_eq!(ctx.get(opt::MAX_MSGSZ).unwrap(), 100);
    let mut pull = socket(&ctx, T::Pull);
    let ep = bind(&mut pull, Transport::Tcp);
    let other = Context::new();
    let mut push = socket(&other, T::Push);
    push.connect(&ep).unwrap();
    push.send(vec![1u8; 100], 0).unwrap();
    assert_eq!(recv_bytes(&mut pull).len(), 100, "at the limit: delivered");
    push.send(vec![2u8; 101], 0).unwrap();
    assert_quiet(&mut pull);
    // The receiving socket is fine; a new peer within the limit gets through.
    let mut push2 = socket(&other, T::Push);
    push2.connect(&ep).unwrap();
    push2.send("small", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"small");
}

#[test]
fn shutdown_wakes_blocked_poll_with_term() {
    let ctx = Context::new();
    let mut s: Socket = ctx.socket(T::Pull).unwrap();
    s.bind(&format!("inproc://{}", unique("poll-term"))).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut items = [PollItem::socket(&mut s, opt::POLLIN)];
        tx.send(oxmq::poll(&mut items, -1)).unwrap();
    });
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "poll returned with nothing ready");
    ctx.shutdown();
    let r = rx.recv_timeout(DEADLINE).expect("poll still blocked after ctx.shutdown()");
    assert_eq!(r.unwrap_err(), Error::Term);
}

/// The I/O thread of `ctx` named `name`: its /proc status lines.
fn io_thread_status(name: &str) -> Option<String> {
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let dir = task.ok()?.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            return std::fs::read_to_string(dir.join("status")).ok();
        }
    }
    None
}

#[test]
fn thread_options_name_and_pin_the_io_threads() {
    let ctx = Context::new();
    assert_eq!(ctx.get(opt::THREAD_NAME_PREFIX).unwrap(), 0);
    assert_eq!(ctx.set(opt::THREAD_AFFINITY_CPU_ADD, -1), Err(Error::Invalid));
    assert_eq!(ctx.set(opt::THREAD_NAME_PREFIX, -5), Err(Error::Invalid));
    ctx.set(opt::THREAD_AFFINITY_CPU_ADD, 0).unwrap();
    ctx.set(opt::THREAD_AFFINITY_CPU_ADD, 1).unwrap();
    ctx.set(opt::THREAD_AFFINITY_CPU_REMOVE, 1).unwrap();
    ctx.set(opt::THREAD_NAME_PREFIX, 4321).unwrap();
    assert_eq!(ctx.get(opt::THREAD_NAME_PREFIX).unwrap(), 4321);
    let mut s = socket(&ctx, T::Pull);
    s.bind("tcp://127.0.0.1:*").unwrap(); // starts the I/O thread
                                          // A message over tcp has passed through the I/O thread, which names and pins itself
                                          // before it runs anything.
    let mut push = socket(&ctx, T::Push);
    push.connect(&s.last_endpoint().unwrap()).unwrap();
    push.send("through the I/O thread", 0).unwrap();
    assert_eq!(recv_bytes(&mut s), b"through the I/O thread");
    // As text through the extended interface (at most 16 bytes), read back with its NUL.
    assert_eq!(ctx.set_bytes(opt::THREAD_NAME_PREFIX, &[b'x'; 17]), Err(Error::Invalid));
    ctx.set_bytes(opt::THREAD_NAME_PREFIX, b"MyPrefix\0").unwrap();
    assert_eq!(ctx.get_bytes(opt::THREAD_NAME_PREFIX).unwrap(), b"MyPrefix\0");
    ctx.set(opt::THREAD_NAME_PREFIX, 4321).unwrap();
    assert_eq!(ctx.get_bytes(opt::THREAD_NAME_PREFIX).unwrap(), b"4321\0");
    // ZERO_COPY_RECV (draft) is kept and read back: 1 by default, 0 or 1.
    assert_eq!(ctx.get(opt::ZERO_COPY_RECV).unwrap(), 1);
    ctx.set(opt::ZERO_COPY_RECV, 0).unwrap();
    assert_eq!(ctx.get(opt::ZERO_COPY_RECV).unwrap(), 0);
    assert_eq!(ctx.set(opt::ZERO_COPY_RECV, 2), Err(Error::Invalid));
    let status = io_thread_status("4321/oxmq-io-0").unwrap_or_else(|| {
        let names: Vec<String> = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .collect();
        panic!("no I/O thread named with the prefix among {names:?}")
    });
    let cpus = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")).expect("Cpus_allowed_list");
    assert_eq!(cpus.split(':').nth(1).unwrap().trim(), "0", "pinned to CPU 0 only");
}

// --- SNDHWM/RCVHWM over inproc: the two sides' sum, whoever came first; later changes ------

/// Waits for POLLOUT, as a non-blocking sender does before it tries again (a DONTWAIT send
/// learns of the reader's progress at most once per millisecond, poll at once), then sends
/// empty messages with DONTWAIT until the queue refuses one; how many went.
fn fill(s: &mut Socket) -> usize {
    let mut items = [oxmq::PollItem::socket(s, opt::POLLOUT)];
    assert_eq!(oxmq::poll(&mut items, RCV_MS as i64).unwrap(), 1, "no room");
    let mut n = 0;
    while n < 10_000 && s.send("", opt::DONTWAIT).is_ok() {
        n += 1;
    }
    n
}

#[test]
fn inproc_queue_is_the_sum_of_both_hwms_whoever_came_first() {
    for (snd, rcv, want) in [(1, 1, 2), (1, 0, 10_000), (3, 2, 5)] {
        let ctx = Context::new();
        let ep = format!("inproc://{}", unique("hwm"));
        let mut push = socket(&ctx, T::Push);
        push.set_int(opt::SNDHWM, snd).unwrap();
        push.connect(&ep).unwrap();
        let mut pull = socket(&ctx, T::Pull);
        pull.set_int(opt::RCVHWM, rcv).unwrap();
        pull.bind(&ep).unwrap();
        assert_eq!(fill(&mut push), want, "connect first, SNDHWM {snd} RCVHWM {rcv}");
        for _ in 0..want {
            pull.recv(opt::DONTWAIT).expect("everything sent is queued");
        }
        assert_quiet(&mut pull);
    }
}

#[test]
fn sndhwm_applies_to_existing_queues() {
    let ctx = Context::new();
    let ep = format!("inproc://{}", unique("hwm"));
    let mut push = socket(&ctx, T::Push);
    push.set_int(opt::SNDHWM, 100).unwrap();
    push.bind(&ep).unwrap();
    let mut pull = socket(&ctx, T::Pull);
    pull.set_int(opt::RCVHWM, 1).unwrap();
    pull.connect(&ep).unwrap();
    assert_eq!(fill(&mut push), 101);
    push.set_int(opt::SNDHWM, 70).unwrap();
    for _ in 0..101 {
        pull.recv(opt::DONTWAIT).expect("lowering the HWM loses nothing queued");
    }
    // The reader publishes what it read in batches, so the writer may see one slot less.
    let n = fill(&mut push);
    assert!((70..=71).contains(&n), "the lower limit, plus the peer's RCVHWM: {n}");
    push.set_int(opt::SNDHWM, 0).unwrap();
    assert_eq!(fill(&mut push), 10_000, "0: unlimited (fill stops at 10,000)");
}
