//! STREAM sockets against plain byte-stream peers (std sockets, an HTTP client), over tcp and
//! ipc: routing ids, connect/disconnect notifications, raw bytes both ways, closing a peer.

mod common;

use common::*;
use oxmq::{opt, Context, Error, Socket, SocketType};
use std::io::{Read, Write};
use std::time::Duration;

trait Raw: Read + Write + Send {
    fn shutdown_write(&self);
}
impl Raw for std::net::TcpStream {
    fn shutdown_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}
impl Raw for std::os::unix::net::UnixStream {
    fn shutdown_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

/// A plain client of `ep` (tcp or ipc), with a read timeout.
fn raw_connect(ep: &str) -> Box<dyn Raw> {
    let t = Some(Duration::from_millis(RCV_MS as u64));
    if let Some(a) = ep.strip_prefix("tcp://") {
        let s = std::net::TcpStream::connect(a).expect("tcp connect");
        s.set_read_timeout(t).unwrap();
        Box::new(s)
    } else {
        let s = std::os::unix::net::UnixStream::connect(ep.strip_prefix("ipc://").unwrap()).expect("ipc connect");
        s.set_read_timeout(t).unwrap();
        Box::new(s)
    }
}

fn stream_socket(ctx: &Context) -> Socket {
    socket(ctx, SocketType::Stream)
}

/// Receives `[id, data]` frames from `id` until `want` bytes came (a byte stream may split).
fn recv_from(s: &mut Socket, id: &[u8], want: usize) -> Vec<u8> {
    let mut got = Vec::new();
    while got.len() < want {
        let parts = recv_parts(s);
        assert_eq!(parts.len(), 2, "STREAM messages are [routing id, data]");
        assert_eq!(parts[0], id, "data from an unexpected peer");
        assert!(!parts[1].is_empty(), "peer closed after {} of {want} bytes", got.len());
        got.extend_from_slice(&parts[1]);
    }
    got
}

/// The connect notification: `[id, ""]`; returns the id.
fn recv_notify(s: &mut Socket) -> Vec<u8> {
    let parts = recv_parts(s);
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert!(parts[1].is_empty(), "expected a notification, got {:?}", parts[1]);
    parts[0].clone()
}

fn read_exact_from(c: &mut dyn Raw, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    c.read_exact(&mut buf).expect("read from oxmq STREAM");
    buf
}

fn server_talks_to_plain_clients(t: Transport) {
    let ctx = Context::new();
    let mut s = stream_socket(&ctx);
    let ep = bind(&mut s, t);
    let mut c1 = raw_connect(&ep);
    let id1 = recv_notify(&mut s);
    assert_eq!(id1.len(), 5, "generated ids are libzmq's 5 bytes");
    assert_eq!(id1[0], 0);
    let mut c2 = raw_connect(&ep);
    let id2 = recv_notify(&mut s);
    assert_ne!(id1, id2);

    c1.write_all(b"hello from one").unwrap();
    assert_eq!(recv_from(&mut s, &id1, 14), b"hello from one");
    c2.write_all(b"two").unwrap();
    assert_eq!(recv_from(&mut s, &id2, 3), b"two");

    send_parts(&mut s, &[&id2, b"reply two"]);
    send_parts(&mut s, &[&id1, b"reply one"]);
    assert_eq!(read_exact_from(&mut *c1, 9), b"reply one");
    assert_eq!(read_exact_from(&mut *c2, 9), b"reply two");

    // Large data both ways, byte-exact.
    let big: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    send_parts(&mut s, &[&id1, &big]);
    assert!(read_exact_from(&mut *c1, big.len()) == big, "large send corrupted");
    let big2 = big.clone();
    let writer = std::thread::spawn(move || {
        c1.write_all(&big2).unwrap();
        c1
    });
    assert!(recv_from(&mut s, &id1, big.len()) == big, "large receive corrupted");
    let mut c1 = writer.join().unwrap();

    // An unknown routing id is EHOSTUNREACH (libzmq's STREAM is always "mandatory").
    assert_eq!(s.send_multipart([&b"\0nope"[..], b"x"], 0), Err(Error::HostUnreach));

    // The peer closes: a disconnect notification.
    drop(c2);
    assert_eq!(recv_parts(&mut s), vec![id2.clone(), Vec::new()]);
    assert_eq!(s.send_multipart([&id2[..], b"x"], 0), Err(Error::HostUnreach), "the peer is forgotten");

    // We close: queued data is written first, then the client sees EOF; no notification.
    send_parts(&mut s, &[&id1, b"bye"]);
    send_parts(&mut s, &[&id1, b""]);
    let mut rest = Vec::new();
    c1.read_to_end(&mut rest).expect("EOF after our close");
    assert_eq!(rest, b"bye");
    assert_quiet(&mut s);
}

fn notify_off_gives_data_only(t: Transport) {
    let ctx = Context::new();
    let mut s = stream_socket(&ctx);
    s.set_int(opt::STREAM_NOTIFY, 0).unwrap();
    let ep = bind(&mut s, t);
    let mut c = raw_connect(&ep);
    c.write_all(b"data").unwrap();
    let parts = recv_parts(&mut s);
    assert_eq!(parts[1], b"data", "no connect notification with STREAM_NOTIFY=0");
    let id = parts[0].clone();
    c.shutdown_write();
    drop(c);
    assert_quiet(&mut s);
    // The peer is gone all the same.
    eventually("the closed peer to be forgotten", || match s.send_multipart([&id[..], b"x"], opt::DONTWAIT) {
        Err(Error::HostUnreach) => Some(()),
        _ => None,
    });
}

fn connects_out_to_a_plain_server(t: Transport) {
    let ctx = Context::new();
    let mut s = stream_socket(&ctx);
    s.set_int(opt::RECONNECT_IVL, 20).unwrap();
    let (ep, listener) = match t {
        Transport::Tcp => {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            (format!("tcp://{}", l.local_addr().unwrap()), Listener::Tcp(l))
        }
        _ => {
            let path = ipc_path();
            (format!("ipc://{path}"), Listener::Ipc(std::os::unix::net::UnixListener::bind(&path).unwrap()))
        }
    };
    let listener = std::sync::Arc::new(listener);
    let accept = |l: &std::sync::Arc<Listener>| {
        let l = l.clone();
        within(DEADLINE, "accept", move || l.accept())
    };
    s.set_bytes(opt::CONNECT_ROUTING_ID, b"server").unwrap();
    s.connect(&ep).unwrap();
    let mut srv = accept(&listener);
    assert_eq!(recv_notify(&mut s), b"server", "CONNECT_ROUTING_ID names the connection");
    send_parts(&mut s, &[b"server", b"GET / HTTP/1.0\r\n\r\n"]);
    assert_eq!(read_exact_from(&mut *srv, 18), b"GET / HTTP/1.0\r\n\r\n");
    srv.write_all(b"HTTP/1.0 204 No Content\r\n\r\n").unwrap();
    assert_eq!(recv_from(&mut s, b"server", 27), b"HTTP/1.0 204 No Content\r\n\r\n");
    drop(srv);
    assert_eq!(recv_parts(&mut s), vec![b"server".to_vec(), Vec::new()], "disconnect notification");
    // As libzmq's: the connection is made again under the same id, and what was sent while it
    // was down goes to the new one.
    send_parts(&mut s, &[b"server", b"queued"]);
    let mut srv = accept(&listener);
    assert_eq!(recv_notify(&mut s), b"server", "reconnected under the same id");
    assert_eq!(read_exact_from(&mut *srv, 6), b"queued");
}

enum Listener {
    Tcp(std::net::TcpListener),
    Ipc(std::os::unix::net::UnixListener),
}

impl Listener {
    fn accept(&self) -> Box<dyn Raw> {
        let t = Some(Duration::from_millis(RCV_MS as u64));
        match self {
            Listener::Tcp(l) => {
                let s = l.accept().unwrap().0;
                s.set_read_timeout(t).unwrap();
                Box::new(s)
            }
            Listener::Ipc(l) => {
                let s = l.accept().unwrap().0;
                s.set_read_timeout(t).unwrap();
                Box::new(s)
            }
        }
    }
}

fn connect_routing_id_is_for_one_connect(t: Transport) {
    let ctx = Context::new();
    let mut srv = stream_socket(&ctx);
    let ep = bind(&mut srv, t);
    let mut s = stream_socket(&ctx);
    s.set_bytes(opt::CONNECT_ROUTING_ID, b"first").unwrap();
    s.connect(&ep).unwrap();
    assert_eq!(recv_notify(&mut s), b"first");
    let mut srv2 = stream_socket(&ctx);
    let ep2 = bind(&mut srv2, t);
    s.connect(&ep2).unwrap();
    let id = recv_notify(&mut s);
    assert_eq!((id.len(), id[0]), (5, 0), "a second connect gets a generated id");
    // STREAM to STREAM: raw bytes through both.
    let sid = recv_notify(&mut srv);
    send_parts(&mut s, &[b"first", b"ping"]);
    assert_eq!(recv_from(&mut srv, &sid, 4), b"ping");
    send_parts(&mut srv, &[&sid, b"pong"]);
    assert_eq!(recv_from(&mut s, b"first", 4), b"pong");
}

/// What programs written for libzmq read from a STREAM: the routing-id frame carries the
/// connection's Peer-Address, and the socket's ZMQ_ROUTING_ID reports the id it generated last.
fn peer_address_and_generated_id_as_libzmq(t: Transport) {
    let ctx = Context::new();
    let mut s = stream_socket(&ctx);
    let ep = bind(&mut s, t);
    let _c = raw_connect(&ep);
    let mut parts = Vec::new();
    loop {
        let m = s.recv(0).expect("connect notification");
        let more = m.more();
        parts.push(m);
        if !more {
            break;
        }
    }
    assert_eq!(parts.len(), 2);
    assert!(parts[1].is_empty(), "a connect notification");
    if t == Transport::Tcp {
        assert_eq!(parts[0].gets("Peer-Address"), Some(&b"127.0.0.1"[..]), "Peer-Address on the id frame");
    }
    assert_eq!(s.get_bytes(opt::ROUTING_ID).unwrap(), &parts[0][..], "ZMQ_ROUTING_ID is the generated id");
}

macro_rules! per_stream_transport {
    ($($name:ident),* $(,)?) => {
        mod tcp {
            $( #[test] fn $name() { super::$name($crate::common::Transport::Tcp) } )*
        }
        mod ipc {
            $( #[test] fn $name() { super::$name($crate::common::Transport::Ipc) } )*
        }
    };
}

per_stream_transport!(
    peer_address_and_generated_id_as_libzmq,
    server_talks_to_plain_clients,
    notify_off_gives_data_only,
    connects_out_to_a_plain_server,
    connect_routing_id_is_for_one_connect,
);

/// An HTTP client (curl if installed, else Python's http.client) gets a response from an oxmq
/// STREAM HTTP responder: the classic libzmq STREAM example.
#[test]
fn http_client_gets_a_response() {
    let ctx = Context::new();
    let mut s = stream_socket(&ctx);
    let ep = bind(&mut s, Transport::Tcp);
    let url = format!("http://{}/hello", ep.strip_prefix("tcp://").unwrap());
    let client = std::thread::spawn(move || {
        let curl = std::process::Command::new("curl").args(["-s", "-S", "--noproxy", "*", "--max-time", "10", &url]).output();
        match curl {
            Ok(out) => (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), "curl"),
            Err(_) => {
                let script = format!(
                    "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('{url}', timeout=10).read().decode())"
                );
                let out = std::process::Command::new("python3").args(["-c", &script]).output().expect("python3");
                (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), "python")
            }
        }
    });
    let id = recv_notify(&mut s);
    // Read the request head.
    let mut req = Vec::new();
    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
        let parts = recv_parts(&mut s);
        assert_eq!(parts[0], id);
        assert!(!parts[1].is_empty(), "client closed mid-request");
        req.extend_from_slice(&parts[1]);
    }
    assert!(req.starts_with(b"GET /hello HTTP/1."), "{}", String::from_utf8_lossy(&req));
    let body = "Hello, World!\n";
    let resp = format!("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    send_parts(&mut s, &[&id, resp.as_bytes()]);
    send_parts(&mut s, &[&id, b""]); // close, as an HTTP/1.0 server does
    let (ok, out, who) = within(DEADLINE, "HTTP client", move || client.join().unwrap());
    assert!(ok, "{who} failed");
    assert_eq!(out, body, "{who} got the body");
}

#[test]
fn stream_options_validate_like_libzmq() {
    let ctx = Context::new();
    let mut s = stream_socket(&ctx);
    assert_eq!(s.set_int(opt::STREAM_NOTIFY, 2), Err(Error::Invalid));
    assert_eq!(s.set_bytes(opt::CONNECT_ROUTING_ID, b""), Err(Error::Invalid));
    assert_eq!(s.get_int(opt::STREAM_NOTIFY), Err(Error::Invalid), "write-only in libzmq");
    assert_eq!(s.get_int(opt::TYPE), Ok(11));
    // A lone routing-id frame is ignored, as in libzmq.
    s.send(&b"\0abcd"[..], 0).unwrap();
}

/// CONNECT_ROUTING_ID on a ROUTER names the peer of its next connect (instead of the identity
/// the peer announces), as libzmq's.
#[test]
fn router_connect_routing_id_names_the_peer() {
    let ctx = Context::new();
    let mut server = socket(&ctx, SocketType::Router);
    let ep = bind(&mut server, Transport::Tcp);
    let mut client = socket(&ctx, SocketType::Router);
    client.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    client.set_bytes(opt::CONNECT_ROUTING_ID, b"srv").unwrap();
    client.connect(&ep).unwrap();
    eventually("the connection named by CONNECT_ROUTING_ID", || {
        match client.send_multipart([&b"srv"[..], b"hi"], opt::DONTWAIT) {
            Ok(()) => Some(()),
            Err(Error::HostUnreach) => None,
            Err(e) => panic!("{e:?}"),
        }
    });
    let parts = recv_parts(&mut server);
    assert_eq!(parts[1], b"hi");
}
