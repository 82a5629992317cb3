//! HELLO_MSG and DISCONNECT_MSG over tcp and ipc, end to end (`io/session/hello.rs`).

use crate::testing::{eventually, no_sessions, socket, Wire};
use crate::{opt, Context, Error, Msg, Socket, SocketType};

fn bind(s: &mut Socket, t: Wire) -> String {
    s.bind(&t.bind_endpoint("hello")).unwrap();
    s.last_endpoint().unwrap()
}

fn recv(s: &mut Socket) -> Vec<u8> {
    s.recv(0).unwrap_or_else(|e| panic!("recv: {e:?}")).to_vec()
}

/// libzmq's test_hello_msg over tcp and ipc: a bound ROUTER's hello is the DEALER's first
/// message; the DEALER's own hello is the ROUTER's first message from it, ahead of what
/// the DEALER queued before it connected.
fn hello_comes_first_both_ways(t: Wire) {
    let ctx = Context::new();
    let mut router = socket(&ctx, SocketType::Router);
    router.set_bytes(opt::HELLO_MSG, b"H").unwrap();
    let ep = bind(&mut router, t);
    let mut dealer = socket(&ctx, SocketType::Dealer);
    dealer.set_bytes(opt::ROUTING_ID, b"d").unwrap();
    dealer.set_bytes(opt::HELLO_MSG, b"hi, router").unwrap();
    dealer.connect(&ep).unwrap();
    dealer.send("queued", 0).unwrap();
    assert_eq!(recv(&mut dealer), b"H");
    assert_eq!(router.recv_multipart(0).unwrap(), [Msg::from("d"), Msg::from("hi, router")]);
    assert_eq!(router.recv_multipart(0).unwrap(), [Msg::from("d"), Msg::from("queued")]);
}

/// The hello goes out again on each new connection: after the peer restarts, the
/// reconnected DEALER greets the new ROUTER too.
fn hello_is_sent_on_each_reconnection(t: Wire) {
    let ctx = Context::new();
    let mut dealer = socket(&ctx, SocketType::Dealer);
    dealer.set_bytes(opt::HELLO_MSG, b"again").unwrap();
    dealer.set_int(opt::RECONNECT_IVL, 10).unwrap();
    let mut router = socket(&ctx, SocketType::Router);
    let ep = bind(&mut router, t);
    dealer.connect(&ep).unwrap();
    assert_eq!(router.recv_multipart(0).unwrap()[1], "again");
    drop(router);
    let mut router = socket(&ctx, SocketType::Router);
    // The old listener closes on the I/O thread, soon after.
    eventually("the endpoint is free again", || router.bind(&ep).is_ok());
    assert_eq!(router.recv_multipart(0).unwrap()[1], "again");
}

/// Types that do not send a hello keep the option and send nothing; an empty value clears
/// it. (A PUSH's first message is then what it sends itself.)
fn hello_only_from_libzmqs_types(t: Wire) {
    let ctx = Context::new();
    let mut pull = socket(&ctx, SocketType::Pull);
    let ep = bind(&mut pull, t);
    let mut push = socket(&ctx, SocketType::Push);
    push.set_bytes(opt::HELLO_MSG, b"not sent").unwrap();
    push.connect(&ep).unwrap();
    push.send("data", 0).unwrap();
    assert_eq!(recv(&mut pull), b"data");
    let mut dealer = socket(&ctx, SocketType::Dealer);
    dealer.set_bytes(opt::HELLO_MSG, b"cleared").unwrap();
    dealer.set_bytes(opt::HELLO_MSG, b"").unwrap();
    let mut router = socket(&ctx, SocketType::Router);
    let ep = bind(&mut router, t);
    dealer.connect(&ep).unwrap();
    dealer.send("first", 0).unwrap();
    assert_eq!(router.recv_multipart(0).unwrap()[1], "first");
}

/// libzmq's test_disconnect_msg over tcp and ipc: a SERVER receives its DISCONNECT_MSG,
/// with the departed CLIENT's routing id, after the CLIENT's last message.
fn server_hears_a_client_leave(t: Wire) {
    let ctx = Context::new();
    let mut server = socket(&ctx, SocketType::Server);
    server.set_bytes(opt::DISCONNECT_MSG, b"D").unwrap();
    let ep = bind(&mut server, t);
    let mut client = socket(&ctx, SocketType::Client);
    client.set_bytes(opt::HELLO_MSG, b"H").unwrap();
    client.connect(&ep).unwrap();
    client.send("last", 0).unwrap();
    let hello = server.recv(0).unwrap();
    assert_eq!(hello, "H");
    assert_eq!(recv(&mut server), b"last");
    drop(client);
    let bye = server.recv(0).unwrap();
    assert_eq!(bye, "D");
    assert_eq!(bye.routing_id(), hello.routing_id(), "from the client that left");
    assert_eq!(server.recv(opt::DONTWAIT), Err(Error::Again), "once");
}

/// A ROUTER receives [routing id, DISCONNECT_MSG] for each accepted peer that goes, so
/// it can tell which; with ROUTER_NOTIFY the notification follows it, reported by poll
/// and received at once. A peer the ROUTER connected to itself brings none (libzmq:
/// accepted connections only).
fn router_hears_accepted_peers_leave(t: Wire) {
    let ctx = Context::new();
    let mut router = socket(&ctx, SocketType::Router);
    router.set_bytes(opt::DISCONNECT_MSG, b"gone").unwrap();
    router.set_int(opt::ROUTER_NOTIFY, opt::NOTIFY_DISCONNECT).unwrap();
    let ep = bind(&mut router, t);
    let mut a = socket(&ctx, SocketType::Dealer);
    a.set_bytes(opt::ROUTING_ID, b"a").unwrap();
    a.connect(&ep).unwrap();
    a.send("hello", 0).unwrap();
    assert_eq!(router.recv_multipart(0).unwrap(), [Msg::from("a"), Msg::from("hello")]);
    drop(a);
    assert_eq!(router.recv_multipart(0).unwrap(), [Msg::from("a"), Msg::from("gone")]);
    assert_eq!(router.events().unwrap() & opt::POLLIN, opt::POLLIN, "the notification is ready");
    let notice = router.recv_multipart(opt::DONTWAIT).unwrap();
    assert_eq!(notice, [Msg::from("a"), Msg::new()], "then ROUTER_NOTIFY's");

    let mut peer = socket(&ctx, SocketType::Dealer);
    peer.set_bytes(opt::ROUTING_ID, b"p").unwrap();
    let peer_ep = bind(&mut peer, t);
    router.connect(&peer_ep).unwrap();
    peer.send("ping", 0).unwrap();
    assert_eq!(router.recv_multipart(0).unwrap(), [Msg::from("p"), Msg::from("ping")]);
    drop(peer);
    // The connection drops and is retried: the ROUTER gets the notification alone.
    assert_eq!(router.recv_multipart(0).unwrap(), [Msg::from("p"), Msg::new()]);
}

/// `unbind` drops the accepted connections with their queues: no disconnect message.
fn unbind_brings_no_disconnect_msg(t: Wire) {
    let ctx = Context::new();
    let mut router = socket(&ctx, SocketType::Router);
    router.set_bytes(opt::DISCONNECT_MSG, b"gone").unwrap();
    let ep = bind(&mut router, t);
    let mut a = socket(&ctx, SocketType::Dealer);
    a.connect(&ep).unwrap();
    a.send("hello", 0).unwrap();
    assert_eq!(router.recv_multipart(0).unwrap()[1], "hello");
    router.unbind(&ep).unwrap();
    drop(a);
    no_sessions(&ctx); // both ends of the connection are gone
    assert_eq!(router.recv(opt::DONTWAIT), Err(Error::Again));
}

#[test]
fn hello_comes_first_both_ways_tcp() {
    hello_comes_first_both_ways(Wire::Tcp);
}

#[test]
fn hello_comes_first_both_ways_ipc() {
    hello_comes_first_both_ways(Wire::Ipc);
}

#[test]
fn hello_is_sent_on_each_reconnection_tcp() {
    hello_is_sent_on_each_reconnection(Wire::Tcp);
}

#[test]
fn hello_is_sent_on_each_reconnection_ipc() {
    hello_is_sent_on_each_reconnection(Wire::Ipc);
}

#[test]
fn hello_only_from_libzmqs_types_tcp() {
    hello_only_from_libzmqs_types(Wire::Tcp);
}

#[test]
fn server_hears_a_client_leave_tcp() {
    server_hears_a_client_leave(Wire::Tcp);
}

#[test]
fn server_hears_a_client_leave_ipc() {
    server_hears_a_client_leave(Wire::Ipc);
}

#[test]
fn router_hears_accepted_peers_leave_tcp() {
    router_hears_accepted_peers_leave(Wire::Tcp);
}

#[test]
fn router_hears_accepted_peers_leave_ipc() {
    router_hears_accepted_peers_leave(Wire::Ipc);
}

#[test]
fn unbind_brings_no_disconnect_msg_tcp() {
    unbind_brings_no_disconnect_msg(Wire::Tcp);
}
