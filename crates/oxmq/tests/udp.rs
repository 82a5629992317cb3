//! RADIO/DISH over udp (libzmq's `zmq_udp`): unicast over IPv4 and IPv6 (skipped with a message
//! where the host has no `::1`), multicast on the loopback interface (skipped likewise where
//! the host cannot loop multicast back), and the datagram format checked byte for byte against
//! plain udp sockets: one byte of group length, group, body.

mod common;

use common::*;
use oxmq::{opt, Context, Error, SocketType as T};
use std::net::UdpSocket;
use std::time::Duration;

fn dish_on(ctx: &Context, ep: &str) -> (oxmq::Socket, String) {
    let mut dish = socket(ctx, T::Dish);
    dish.bind(ep).unwrap();
    let ep = dish.last_endpoint().unwrap();
    (dish, ep)
}

#[test]
fn unicast_radio_to_dish_filters_groups() {
    let ctx = Context::new();
    let (mut dish, ep) = dish_on(&ctx, "udp://127.0.0.1:*");
    assert!(ep.starts_with("udp://127.0.0.1:") && !ep.ends_with(":0"), "{ep}");
    dish.join("tv").unwrap();
    let mut radio = socket(&ctx, T::Radio);
    radio.connect(&ep).unwrap();
    radio.send_group("tv", "news", 0).unwrap();
    radio.send_group("radio", "jazz", 0).unwrap(); // a udp pipe takes every group
    radio.send_group("tv", "film", 0).unwrap();
    let (g, m) = dish.recv_group(0).unwrap();
    assert_eq!((&g[..], &m[..]), (&b"tv"[..], &b"news"[..]));
    let (g, m) = dish.recv_group(0).unwrap();
    assert_eq!((&g[..], &m[..]), (&b"tv"[..], &b"film"[..]));
    assert_quiet(&mut dish);
}

#[test]
fn datagram_format_is_libzmqs() {
    let ctx = Context::new();
    // RADIO → a plain udp socket: exactly [len][group][body] per message.
    let raw = UdpSocket::bind("127.0.0.1:0").unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut radio = socket(&ctx, T::Radio);
    radio.connect(&format!("udp://{}", raw.local_addr().unwrap())).unwrap();
    radio.send_group("group", "body", 0).unwrap();
    radio.send_group("", "", 0).unwrap();
    // Too large for one datagram (libzmq's 8192-byte limit): dropped, the next goes.
    radio.send_group("g", vec![0u8; 9000], 0).unwrap();
    radio.send_group("g", "after", 0).unwrap();
    let mut buf = [0u8; 65536];
    let n = raw.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"\x05groupbody");
    let n = raw.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"\x00");
    let n = raw.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"\x01gafter");

    // A plain udp socket → DISH: malformed datagrams are dropped.
    let (mut dish, ep) = dish_on(&ctx, "udp://127.0.0.1:*");
    dish.join("g").unwrap();
    let port: u16 = ep.rsplit_once(':').unwrap().1.parse().unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    tx.send_to(b"\x09g", ("127.0.0.1", port)).unwrap(); // group runs past the end
    tx.send_to(b"", ("127.0.0.1", port)).unwrap(); // empty
    tx.send_to(b"\x01hx", ("127.0.0.1", port)).unwrap(); // group "h": not joined
    tx.send_to(b"\x01gHELLO", ("127.0.0.1", port)).unwrap();
    let (g, m) = dish.recv_group(0).unwrap();
    assert_eq!((&g[..], &m[..]), (&b"g"[..], &b"HELLO"[..]));
    assert_quiet(&mut dish);
}

#[test]
fn only_radio_connects_and_dish_binds() {
    let ctx = Context::new();
    let mut radio = socket(&ctx, T::Radio);
    assert_eq!(radio.bind("udp://127.0.0.1:*"), Err(Error::NoCompatProto));
    let mut dish = socket(&ctx, T::Dish);
    assert_eq!(dish.connect("udp://127.0.0.1:5555"), Err(Error::NoCompatProto));
    let mut publ = socket(&ctx, T::Pub);
    assert_eq!(publ.bind("udp://127.0.0.1:*"), Err(Error::NoCompatProto));
    assert_eq!(radio.connect("udp://*:5555"), Err(Error::Invalid));
    assert_eq!(radio.connect("udp://127.0.0.1"), Err(Error::Invalid));
    assert_eq!(dish.bind("udp://eth-none:5555"), Err(Error::Invalid));
    assert_eq!(dish.unbind("udp://127.0.0.1:1"), Err(Error::NoEnt));
}

/// Whether this host has an IPv6 loopback to test on.
fn ipv6_loopback() -> bool {
    UdpSocket::bind("[::1]:0").is_ok()
}

/// Sends `body` to `group` from `radio` until `dish` receives a message (udp may drop one),
/// within [`DEADLINE`]; returns it with its group.
fn relay(radio: &mut oxmq::Socket, group: &str, body: &str, dish: &mut oxmq::Socket) -> (Vec<u8>, Vec<u8>) {
    let end = std::time::Instant::now() + DEADLINE;
    dish.set_int(opt::RCVTIMEO, 200).unwrap();
    loop {
        radio.send_group(group, body, 0).unwrap();
        match dish.recv_group(0) {
            Ok((g, m)) => return (g.to_vec(), m.to_vec()),
            Err(Error::Again) => assert!(std::time::Instant::now() < end, "nothing arrived"),
            Err(e) => panic!("recv_group: {e:?}"),
        }
    }
}

#[test]
fn dish_on_wildcard_with_ipv6_hears_ipv6_and_ipv4_radios() {
    // libzmq's test_radio_dish_udp_ipv6: with ZMQ_IPV6, `*` is `[::]`, which takes IPv4 too.
    if !ipv6_loopback() {
        eprintln!("skip: no IPv6 loopback (::1) on this host");
        return;
    }
    let ctx = Context::new();
    let mut dish = socket(&ctx, T::Dish);
    dish.set_int(opt::IPV6, 1).unwrap();
    dish.bind("udp://*:*").unwrap();
    let ep = dish.last_endpoint().unwrap();
    let port = ep.rsplit_once(':').unwrap().1;
    assert_ne!(port, "0", "{ep}");
    dish.join("TV").unwrap();
    let mut r6 = socket(&ctx, T::Radio);
    r6.set_int(opt::IPV6, 1).unwrap();
    r6.connect(&format!("udp://[::1]:{port}")).unwrap();
    assert_eq!(relay(&mut r6, "TV", "Friends", &mut dish), (b"TV".to_vec(), b"Friends".to_vec()));
    let mut r4 = socket(&ctx, T::Radio);
    r4.connect(&format!("udp://127.0.0.1:{port}")).unwrap();
    assert_eq!(relay(&mut r4, "TV", "Seinfeld", &mut dish), (b"TV".to_vec(), b"Seinfeld".to_vec()));
}

#[test]
fn ipv6_addresses_need_the_option() {
    // libzmq's resolver: ENODEV to bind, EINVAL to connect.
    let ctx = Context::new();
    let mut dish = socket(&ctx, T::Dish);
    assert_eq!(dish.bind("udp://[::1]:*"), Err(Error::NoDev));
    let mut radio = socket(&ctx, T::Radio);
    assert_eq!(radio.connect("udp://[::1]:5556"), Err(Error::Invalid));
    if !ipv6_loopback() {
        eprintln!("skip: no IPv6 loopback (::1) on this host");
        return;
    }
    dish.set_int(opt::IPV6, 1).unwrap();
    dish.bind("udp://[::1]:*").unwrap();
    radio.set_int(opt::IPV6, 1).unwrap();
    radio.connect(&dish.last_endpoint().unwrap()).unwrap();
    dish.join("g").unwrap();
    assert_eq!(relay(&mut radio, "g", "six", &mut dish), (b"g".to_vec(), b"six".to_vec()));
}

#[test]
fn unbind_stops_receiving_and_disconnect_stops_sending() {
    let ctx = Context::new();
    let (mut dish, ep) = dish_on(&ctx, "udp://127.0.0.1:*");
    dish.join("g").unwrap();
    let mut radio = socket(&ctx, T::Radio);
    radio.connect(&ep).unwrap();
    radio.send_group("g", "one", 0).unwrap();
    assert_eq!(dish.recv_group(0).unwrap().1, "one");
    radio.disconnect(&ep).unwrap();
    radio.send_group("g", "two", 0).unwrap(); // no udp pipe any more: goes nowhere
    assert_quiet(&mut dish);
    dish.unbind(&ep).unwrap();
    let mut radio2 = socket(&ctx, T::Radio);
    radio2.connect(&ep).unwrap();
    radio2.send_group("g", "three", 0).unwrap();
    assert_quiet(&mut dish);
}

/// Whether a multicast datagram sent from 127.0.0.1 loops back to a member on this host.
fn loopback_multicast_works(group: &str) -> Result<(), String> {
    multicast_loops_back(group, Some("127.0.0.1".parse().unwrap()))
}

/// Whether a multicast datagram sent from interface `iface` (None: the one the routing table
/// picks) is delivered to a member on this host with IP_MULTICAST_LOOP on.
fn multicast_loops_back(group: &str, iface: Option<std::net::Ipv4Addr>) -> Result<(), String> {
    let g: std::net::Ipv4Addr = group.parse().unwrap();
    let rx = UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    let member = iface.unwrap_or(std::net::Ipv4Addr::UNSPECIFIED);
    rx.join_multicast_v4(&g, &member).map_err(|e| format!("join: {e}"))?;
    rx.set_read_timeout(Some(Duration::from_millis(500))).map_err(|e| e.to_string())?;
    let port = rx.local_addr().map_err(|e| e.to_string())?.port();
    let s2 = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).map_err(|e| e.to_string())?;
    if let Some(i) = iface {
        s2.set_multicast_if_v4(&i).map_err(|e| format!("IP_MULTICAST_IF: {e}"))?;
    }
    s2.set_multicast_loop_v4(true).map_err(|e| e.to_string())?;
    let tx: UdpSocket = s2.into();
    for _ in 0..3 {
        tx.send_to(b"probe", (g, port)).map_err(|e| format!("send: {e}"))?;
        let mut b = [0u8; 16];
        if let Ok(n) = rx.recv(&mut b) {
            if &b[..n] == b"probe" {
                return Ok(());
            }
        }
    }
    Err("multicast sent from 127.0.0.1 does not loop back on this host".into())
}

#[test]
fn multicast_on_loopback() {
    let group = format!("239.255.{}.{}", std::process::id() % 250, (std::process::id() / 250) % 250 + 1);
    if let Err(why) = loopback_multicast_works(&group) {
        eprintln!("skip: {why}");
        return;
    }
    let ctx = Context::new();
    let (mut dish, ep) = dish_on(&ctx, &format!("udp://127.0.0.1;{group}:*"));
    let port = ep.rsplit_once(':').unwrap().1;
    dish.join("m").unwrap();
    let mut radio = socket(&ctx, T::Radio);
    radio.set_int(opt::MULTICAST_HOPS, 1).unwrap();
    radio.connect(&format!("udp://127.0.0.1;{group}:{port}")).unwrap();
    radio.send_group("m", "multicast", 0).unwrap();
    let (g, m) = dish.recv_group(0).unwrap();
    assert_eq!((&g[..], &m[..]), (&b"m"[..], &b"multicast"[..]));
}

#[test]
fn multicast_loop_off_is_not_heard_here() {
    // libzmq's test_radio_dish_no_loop, on the interface the routing table picks (on the
    // loopback interface itself every datagram comes back, whatever IP_MULTICAST_LOOP says).
    let group = format!("239.254.{}.{}", std::process::id() % 250, (std::process::id() / 250) % 250 + 1);
    if let Err(why) = multicast_loops_back(&group, None) {
        eprintln!("skip: {why}");
        return;
    }
    let ctx = Context::new();
    let (mut dish, ep) = dish_on(&ctx, &format!("udp://{group}:*"));
    let port = ep.rsplit_once(':').unwrap().1;
    dish.join("m").unwrap();
    let mut mute = socket(&ctx, T::Radio);
    mute.set_int(opt::MULTICAST_LOOP, 0).unwrap();
    mute.connect(&format!("udp://{group}:{port}")).unwrap();
    let mut loud = socket(&ctx, T::Radio);
    loud.connect(&format!("udp://{group}:{port}")).unwrap();
    // Each muted datagram goes out before the heard one: had one looped back, it would be
    // received first.
    let end = std::time::Instant::now() + DEADLINE;
    dish.set_int(opt::RCVTIMEO, 200).unwrap();
    loop {
        mute.send_group("m", "unheard", 0).unwrap();
        loud.send_group("m", "heard", 0).unwrap();
        match dish.recv_group(0) {
            Ok((_, m)) => {
                assert_eq!(&m[..], b"heard");
                break;
            }
            Err(Error::Again) => assert!(std::time::Instant::now() < end, "nothing arrived"),
            Err(e) => panic!("recv_group: {e:?}"),
        }
    }
}

/// A RADIO message that cannot be one datagram is dropped, as it must be (libzmq asserts), and
/// counted; the messages around it go.
#[test]
fn a_radio_message_over_the_datagram_size_is_counted() {
    let ctx = Context::new();
    let (mut dish, ep) = dish_on(&ctx, "udp://127.0.0.1:*");
    dish.join("g").unwrap();
    let mut radio = socket(&ctx, T::Radio);
    radio.connect(&ep).unwrap();
    assert_eq!(radio.stats().dropped_unsendable, 0);
    radio.send_group("g", "before", 0).unwrap();
    radio.send_group("g", vec![0u8; 9000], 0).unwrap();
    radio.send_group("g", "after", 0).unwrap();
    assert_eq!(&dish.recv_group(0).unwrap().1[..], b"before");
    assert_eq!(&dish.recv_group(0).unwrap().1[..], b"after");
    eventually("the oversized message is counted", || (radio.stats().dropped_unsendable == 1).then_some(()));
}
