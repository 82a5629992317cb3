use super::*;

#[test]
fn hosts() {
    assert_eq!(service_endpoint("", 7000).unwrap(), ("tcp://127.0.0.1:7000".into(), true));
    assert_eq!(service_endpoint("ns.example", 1).unwrap(), (format!("tcp://ns.example:{DEFAULT_PORT}"), false));
    assert_eq!(service_endpoint("10.0.0.1:99", 1).unwrap(), ("tcp://10.0.0.1:99".into(), false));
    assert_eq!(service_endpoint("tcp://10.0.0.1:99", 1).unwrap(), ("tcp://10.0.0.1:99".into(), false));
    assert!(service_endpoint("10.0.0.1:port", 1).is_err());
    assert!(service_endpoint(":99", 1).is_err());
}

#[test]
fn locations() {
    let ip = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7));
    assert_eq!(location_endpoint("", ip).unwrap(), "tcp://10.0.0.7:*");
    assert_eq!(location_endpoint("10.0.0.1:5555", ip).unwrap(), "tcp://10.0.0.1:5555");
    assert_eq!(location_endpoint("eth0", ip).unwrap(), "tcp://eth0:*");
    assert_eq!(location_endpoint(":5555", ip).unwrap(), "tcp://10.0.0.7:5555");
    assert_eq!(location_endpoint("*:0", ip).unwrap(), "tcp://*:*");
    assert!(location_endpoint("10.0.0.1:99999", ip).is_err());
    assert!(location_endpoint("a b:1", ip).is_err());
}

fn linked_pair() -> (crate::NameServer, Wiring, usize, Wiring, usize) {
    let ns = crate::NameServer::start("tcp://127.0.0.1:*", crate::Backend::Memory).expect("name server");
    let opts = Options {
        timing: Timing { request_timeout: Duration::from_secs(2), ttl: Duration::from_millis(600) },
        ..Options::default()
    };
    let mut owner = Wiring::with_options(ns.endpoint(), opts.clone()).unwrap();
    owner.create_queue("QG", Scope::Global, "").unwrap();
    let eg = owner.create_exchange("EG", Scope::Global, "").unwrap();
    let mut user = Wiring::with_options(ns.endpoint(), opts).unwrap();
    let el = user.create_exchange("EL", Scope::Local, "").unwrap();
    user.create_queue("QL", Scope::Local, "").unwrap();
    user.bind("EG", "QL").unwrap();
    user.bind("EL", "QG").unwrap();
    (ns, owner, eg, user, el)
}

const T: Option<Duration> = Some(Duration::from_secs(10));

/// The wiring of a request/reply exchange between two handles (as remote_lat/local_lat
/// do it) rides one link connection, both ways, with every size and the empty message.
#[test]
fn a_round_trip_between_two_handles_takes_one_link_connection() {
    let (_ns, mut owner, eg, mut user, el) = linked_pair();
    assert!(user.sub.is_none(), "no SUB: the exchange comes over the link");
    assert!(user.exchanges[el].legs.is_empty(), "no PUSH leg: the queue is reached over the link");
    assert_eq!(user.link.as_ref().unwrap().peers.len(), 1, "one connection to the owner");
    let big = vec![7u8; 100_000];
    let bodies: Vec<&[u8]> = vec![b"ping", b"", b"AEG", &big, b"\0", b""];
    for body in &bodies {
        user.send(el, body.to_vec()).unwrap();
        let got = owner.receive_timeout(T).unwrap();
        assert_eq!(got.as_slice(), *body);
        owner.send(eg, got.to_vec()).unwrap();
        assert_eq!(user.receive_timeout(T).unwrap().as_slice(), *body);
    }
    assert_eq!(owner.exchanges[eg].link_subs.len(), 1, "a data message that looks like a request is data");
    assert!(matches!(owner.receive_timeout(Some(Duration::from_millis(20))), Err(WiringError::Timeout)));
    assert!(matches!(user.receive_timeout(Some(Duration::from_millis(20))), Err(WiringError::Timeout)));
}

/// An owner that only sends learns of a queue attached over the link on a send, and what
/// it reads off the link meanwhile waits for its `receive`.
#[test]
fn a_sending_owner_reads_attachments_and_keeps_data_for_receive() {
    let (_ns, mut owner, eg, mut user, el) = linked_pair();
    user.send(el, b"early".to_vec()).unwrap();
    // The attachment and "early" are on their way in that order; sends look for the
    // attachment until it has come, and keep "early" aside.
    let deadline = Instant::now() + Duration::from_secs(10);
    while owner.exchanges[eg].link_subs.is_empty() {
        assert!(Instant::now() < deadline, "the attachment never arrived");
        owner.send(eg, b"lost before the attachment".to_vec()).unwrap();
        owner.link.as_mut().unwrap().sock.wait_recv(Some(Duration::from_millis(10))).ok();
    }
    owner.send(eg, b"after".to_vec()).unwrap();
    // The send that found the attachment delivered its own message too.
    loop {
        let m = user.receive_timeout(T).unwrap();
        if m.as_slice() == b"after" {
            break;
        }
        assert_eq!(m.as_slice(), b"lost before the attachment");
    }
    assert_eq!(owner.receive_timeout(T).unwrap().as_slice(), b"early");
}

/// An owner that comes back at the same link address (a restart) has forgotten the
/// attachments: the other handle sees its link connection's new handshake and attaches
/// again, and what it sends meanwhile waits in its link's pipe.
#[test]
fn an_owner_back_at_the_same_link_gets_its_attachments_again() {
    let (ns, mut owner, eg, mut user, el) = linked_pair();
    user.send(el, b"one".to_vec()).unwrap();
    assert_eq!(owner.receive_timeout(T).unwrap().as_slice(), b"one");
    owner.send(eg, b"two".to_vec()).unwrap();
    assert_eq!(user.receive_timeout(T).unwrap().as_slice(), b"two");
    let (host, link_ep) = owner.link.as_ref().unwrap().bound.iter().next().map(|(h, e)| (h.clone(), e.clone())).unwrap();
    drop(owner);

    let opts = Options {
        timing: Timing { request_timeout: Duration::from_secs(2), ttl: Duration::from_millis(600) },
        ..Options::default()
    };
    let mut owner = Wiring::with_options(ns.endpoint(), opts).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while owner.link().unwrap().sock.bind(&link_ep).is_err() {
        assert!(Instant::now() < deadline, "the old link address never came free");
        std::thread::yield_now();
    }
    owner.link.as_mut().unwrap().bound.insert(host, link_ep.clone());
    owner.create_queue("QG", Scope::Global, "").unwrap();
    let eg = owner.create_exchange("EG", Scope::Global, "").unwrap();
    assert_eq!(owner.endpoint_of("EG").map(|_| owner.client.lookup("EG").unwrap().link), Some(link_ep));

    user.send(el, b"three".to_vec()).unwrap();
    assert_eq!(owner.receive_timeout(T).unwrap().as_slice(), b"three", "the user's link pipe reconnected");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        owner.send(eg, b"four".to_vec()).unwrap();
        if let Ok(m) = user.receive_timeout(Some(Duration::from_millis(50))) {
            assert_eq!(m.as_slice(), b"four");
            break;
        }
        assert!(Instant::now() < deadline, "the user never attached again");
    }
}

/// What a foreign peer sends over the link to a handle that only sends is dropped (it
/// has no queue); a handle with queues keeps at most INBOX_MAX aside and leaves the rest
/// in the link socket; control messages still arrive once `receive` has made room.
#[test]
fn a_sending_handle_keeps_a_bounded_inbox() {
    let ns = crate::NameServer::start("tcp://127.0.0.1:*", crate::Backend::Memory).expect("name server");
    let opts = Options {
        timing: Timing { request_timeout: Duration::from_secs(2), ttl: Duration::from_millis(600) },
        ..Options::default()
    };
    for with_queue in [false, true] {
        let mut h = Wiring::with_options(ns.endpoint(), opts.clone()).unwrap();
        let name = if with_queue { "EQ" } else { "E" };
        let eid = h.create_exchange(name, Scope::Global, "").unwrap();
        if with_queue {
            h.create_queue("Q", Scope::Local, "").unwrap();
        }
        let link_ep = h.client.lookup(name).unwrap().link;
        let ctx = Context::new();
        let mut foreign = ctx.socket(SocketType::Peer).unwrap();
        let rid = foreign.connect_peer(&link_ep).unwrap();
        let total = 3 * INBOX_MAX as u64;
        for i in 0..total {
            foreign.send_msg_to(&mut Msg::from(i.to_be_bytes().to_vec()), rid, 0).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        let link = |h: &Wiring| h.link.as_ref().map(|l| (l.inbox.len(), l.dropped)).unwrap();
        loop {
            h.send(eid, b"x".to_vec()).unwrap();
            let (kept, dropped) = link(&h);
            assert!(kept <= INBOX_MAX, "{kept} messages kept aside");
            if with_queue && kept == INBOX_MAX || !with_queue && dropped == total {
                break;
            }
            assert!(Instant::now() < deadline, "kept {kept}, dropped {dropped}");
            h.link.as_mut().unwrap().sock.wait_recv(Some(Duration::from_millis(10))).ok();
        }
        if with_queue {
            // In order, none lost: the first INBOX_MAX from the inbox, the rest from the link.
            for i in 0..total {
                assert_eq!(h.receive_timeout(T).unwrap().as_slice(), i.to_be_bytes(), "message {i}");
            }
            assert_eq!(link(&h).1, 0);
        } else {
            assert_eq!(link(&h).0, 0);
        }
    }
}

#[test]
fn scopes() {
    assert_eq!(Scope::from_raw(0), Some(Scope::Local));
    assert_eq!(Scope::from_raw(1), Some(Scope::Global));
    assert_eq!(Scope::from_raw(2), Some(Scope::Process));
    assert_eq!(Scope::from_raw(3), None);
}
