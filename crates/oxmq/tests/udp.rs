//! RADIO/DISH over udp (libzmq's `zmq_udp`): unicast, multicast on the loopback interface
//! (skipped with a message where the host cannot loop multicast back), and the datagram format
//! checked byte for byte against plain udp sockets: one byte of group length, group, body.

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
    let g: std::net::Ipv4Addr = group.parse().unwrap();
    let rx = UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    rx.join_multicast_v4(&g, &"127.0.0.1".parse().unwrap()).map_err(|e| format!("join: {e}"))?;
    rx.set_read_timeout(Some(Duration::from_millis(500))).map_err(|e| e.to_string())?;
    let port = rx.local_addr().map_err(|e| e.to_string())?.port();
    let s2 = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).map_err(|e| e.to_string())?;
    s2.set_multicast_if_v4(&"127.0.0.1".parse().unwrap()).map_err(|e| format!("IP_MULTICAST_IF: {e}"))?;
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
