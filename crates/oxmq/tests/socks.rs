//! How a tcp connect leaves: through a SOCKS5 proxy (ZMQ_SOCKS_PROXY, ZMQ_SOCKS_USERNAME/
//! PASSWORD), against a small RFC 1928/1929 proxy run here on loopback (what it was asked for,
//! and that messages cross it), and from the source address of "tcp://src;dst".

mod common;

use common::*;
use oxmq::monitor::{event as ev, MonitorEvent};
use oxmq::{opt, Context, Error, SocketType};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// What a client asked the proxy for.
#[derive(Clone, Debug, PartialEq)]
enum Asked {
    V4(Ipv4Addr, u16),
    V6(Ipv6Addr, u16),
    Name(String, u16),
}

struct Proxy {
    addr: String,
    asked: Arc<Mutex<Vec<Asked>>>,
    /// Credentials sent to the proxy, when asked for.
    creds: Arc<Mutex<Vec<(String, String)>>>,
    /// Where each client connected from.
    peers: Arc<Mutex<Vec<String>>>,
}

/// A SOCKS5 proxy on a loopback port: no authentication, or username/password `auth`. Every
/// host it is asked for is 127.0.0.1 (names and ::1 included), so the tests need no DNS.
fn proxy(auth: Option<(&'static str, &'static str)>) -> Proxy {
    proxy_on(TcpListener::bind("127.0.0.1:0").unwrap(), auth)
}

fn proxy_on(l: TcpListener, auth: Option<(&'static str, &'static str)>) -> Proxy {
    let addr = l.local_addr().unwrap().to_string();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let creds = Arc::new(Mutex::new(Vec::new()));
    let peers = Arc::new(Mutex::new(Vec::new()));
    let (a, c, pe) = (asked.clone(), creds.clone(), peers.clone());
    std::thread::spawn(move || {
        for client in l.incoming() {
            let Ok(client) = client else { return };
            pe.lock().unwrap().push(client.peer_addr().map(|a| a.to_string()).unwrap_or_default());
            let (a, c) = (a.clone(), c.clone());
            std::thread::spawn(move || {
                let _ = serve(client, auth, &a, &c);
            });
        }
    });
    Proxy { addr, asked, creds, peers }
}

fn read_n(s: &mut TcpStream, n: usize) -> std::io::Result<Vec<u8>> {
    let mut b = vec![0; n];
    s.read_exact(&mut b)?;
    Ok(b)
}

fn serve(
    mut c: TcpStream,
    auth: Option<(&str, &str)>,
    asked: &Mutex<Vec<Asked>>,
    creds: &Mutex<Vec<(String, String)>>,
) -> std::io::Result<()> {
    let head = read_n(&mut c, 2)?;
    assert_eq!(head[0], 5, "SOCKS version");
    let methods = read_n(&mut c, head[1] as usize)?;
    let want = if auth.is_some() { 2 } else { 0 };
    if !methods.contains(&want) {
        return c.write_all(&[5, 0xff]);
    }
    c.write_all(&[5, want])?;
    if let Some((user, pass)) = auth {
        let v = read_n(&mut c, 2)?;
        assert_eq!(v[0], 1, "RFC 1929 version");
        let u = String::from_utf8(read_n(&mut c, v[1] as usize)?).unwrap();
        let plen = read_n(&mut c, 1)?[0] as usize;
        let p = String::from_utf8(read_n(&mut c, plen)?).unwrap();
        creds.lock().unwrap().push((u.clone(), p.clone()));
        let ok = u == user && p == pass;
        c.write_all(&[1, if ok { 0 } else { 1 }])?;
        if !ok {
            return Ok(());
        }
    }
    let req = read_n(&mut c, 4)?;
    assert_eq!(&req[..3], [5, 1, 0], "CONNECT");
    let port_of = |b: &[u8]| u16::from_be_bytes([b[0], b[1]]);
    let what = match req[3] {
        1 => {
            let b = read_n(&mut c, 6)?;
            Asked::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3]), port_of(&b[4..]))
        }
        4 => {
            let b = read_n(&mut c, 18)?;
            Asked::V6(Ipv6Addr::from(<[u8; 16]>::try_from(&b[..16]).unwrap()), port_of(&b[16..]))
        }
        3 => {
            let n = read_n(&mut c, 1)?[0] as usize;
            let b = read_n(&mut c, n + 2)?;
            Asked::Name(String::from_utf8(b[..n].to_vec()).unwrap(), port_of(&b[n..]))
        }
        t => panic!("address type {t}"),
    };
    asked.lock().unwrap().push(what.clone());
    let port = match what {
        Asked::V4(_, p) | Asked::V6(_, p) | Asked::Name(_, p) => p,
    };
    let Ok(remote) = TcpStream::connect(("127.0.0.1", port)) else {
        return c.write_all(&[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]);
    };
    // The reply names the bound address as a host name, the longest form a client must read.
    let mut reply = vec![5, 0, 0, 3, 9];
    reply.extend_from_slice(b"localhost");
    reply.extend_from_slice(&remote.local_addr()?.port().to_be_bytes());
    c.write_all(&reply)?;
    let (mut c2, mut r2) = (c.try_clone()?, remote.try_clone()?);
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut c2, &mut r2);
        let _ = r2.shutdown(Shutdown::Write);
    });
    let (mut c3, mut r3) = (c, remote);
    let _ = std::io::copy(&mut r3, &mut c3);
    let _ = c3.shutdown(Shutdown::Write);
    let _ = up.join();
    Ok(())
}

/// A PUSH bound on loopback, a PULL connecting to `host` (with the PUSH's port) through
/// `proxy`: both ways of a PAIR would do, PUSH/PULL is what libzmq's own test uses.
fn through(ctx: &Context, proxy: &str, host: &str, user: &[u8], pass: &[u8]) -> (oxmq::Socket, oxmq::Socket) {
    let mut push = socket(ctx, SocketType::Push);
    let ep = bind(&mut push, Transport::Tcp);
    let port = ep.rsplit(':').next().unwrap();
    let mut pull = socket(ctx, SocketType::Pull);
    pull.set_bytes(opt::SOCKS_PROXY, proxy.as_bytes()).unwrap();
    pull.set_bytes(opt::SOCKS_USERNAME, user).unwrap();
    pull.set_bytes(opt::SOCKS_PASSWORD, pass).unwrap();
    pull.connect(&format!("tcp://{host}:{port}")).unwrap();
    (push, pull)
}

fn crosses(push: &mut oxmq::Socket, pull: &mut oxmq::Socket) {
    push.send("ABC", 0).unwrap();
    push.send("DEF", 0).unwrap();
    assert_eq!(recv_bytes(pull), b"ABC");
    assert_eq!(recv_bytes(pull), b"DEF");
}

#[test]
fn ipv4_names_and_ipv6_go_to_the_proxy_as_written() {
    let ctx = Context::new();
    let p = proxy(None);
    for host in ["127.0.0.1", "somedomainname.org", "::1", "[::1]"] {
        let (mut push, mut pull) = through(&ctx, &p.addr, host, b"", b"");
        crosses(&mut push, &mut pull);
        let port: u16 = push.last_endpoint().unwrap().rsplit(':').next().unwrap().parse().unwrap();
        let asked = p.asked.lock().unwrap().last().cloned().unwrap();
        let want = match host {
            "127.0.0.1" => Asked::V4(Ipv4Addr::LOCALHOST, port),
            "somedomainname.org" => Asked::Name(host.into(), port),
            _ => Asked::V6(Ipv6Addr::LOCALHOST, port),
        };
        assert_eq!(asked, want, "{host}: resolved by the proxy, never here");
    }
}

#[test]
fn username_and_password_reach_the_proxy() {
    let ctx = Context::new();
    let p = proxy(Some(("someuser", "somepass")));
    let (mut push, mut pull) = through(&ctx, &p.addr, "127.0.0.1", b"someuser", b"somepass");
    crosses(&mut push, &mut pull);
    assert_eq!(p.creds.lock().unwrap()[0], ("someuser".into(), "somepass".into()));
}

/// A refusal (wrong password) is a failed connection: nothing arrives, and the client keeps
/// retrying as for any tcp connect; with the right password set on a new socket, it works.
#[test]
fn a_refused_handshake_delivers_nothing_and_is_retried() {
    let ctx = Context::new();
    let p = proxy(Some(("someuser", "somepass")));
    let (mut push, mut pull) = through(&ctx, &p.addr, "127.0.0.1", b"someuser", b"wrong");
    let t0 = std::time::Instant::now();
    while p.creds.lock().unwrap().len() < 2 {
        assert!(t0.elapsed() < std::time::Duration::from_secs(10), "no retry after the refusal");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    push.set_int(opt::SNDTIMEO, 0).unwrap();
    assert_eq!(push.send("x", 0), Err(Error::Again), "no connection: a PUSH has no peer");
    pull.set_int(opt::RCVTIMEO, 0).unwrap();
    assert_eq!(pull.recv(0).err(), Some(Error::Again));
    let (mut push, mut pull) = through(&ctx, &p.addr, "127.0.0.1", b"someuser", b"somepass");
    crosses(&mut push, &mut pull);
}

/// The proxy's port is bound but not yet listening when the client connects: refused, then
/// retried until the proxy listens.
#[test]
fn a_proxy_that_starts_late_is_reached_by_reconnecting() {
    let ctx = Context::new();
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(&"127.0.0.1:0".parse::<std::net::SocketAddr>().unwrap().into()).unwrap();
    let addr = sock.local_addr().unwrap().as_socket().unwrap().to_string();
    let mut push = socket(&ctx, SocketType::Push);
    let ep = bind(&mut push, Transport::Tcp);
    let mut pull = socket(&ctx, SocketType::Pull);
    let mon_ep = format!("inproc://{}", unique("socks-monitor"));
    pull.monitor(Some(&mon_ep), ev::CONNECT_RETRIED).unwrap();
    let mut mon = socket(&ctx, SocketType::Pair);
    mon.connect(&mon_ep).unwrap();
    pull.set_bytes(opt::SOCKS_PROXY, addr.as_bytes()).unwrap();
    pull.connect(&ep).unwrap();
    let e = MonitorEvent::recv(&mut mon, 1, 0).expect("a retry after the refused connect");
    assert_eq!(e.event, ev::CONNECT_RETRIED);
    sock.listen(16).unwrap();
    let _p = proxy_on(sock.into(), None);
    crosses(&mut push, &mut pull);
}

#[test]
fn options_read_back_and_refuse_long_credentials() {
    let ctx = Context::new();
    let mut s = socket(&ctx, SocketType::Sub);
    assert_eq!(s.get_bytes(opt::SOCKS_PROXY).unwrap(), b"\0");
    s.set_bytes(opt::SOCKS_PROXY, b"somehost:1080").unwrap();
    assert_eq!(s.get_bytes(opt::SOCKS_PROXY).unwrap(), b"somehost:1080\0");
    s.set_bytes(opt::SOCKS_USERNAME, &[b'a'; 255]).unwrap();
    assert_eq!(s.set_bytes(opt::SOCKS_USERNAME, &[b'a'; 256]), Err(Error::Invalid));
    assert_eq!(s.set_bytes(opt::SOCKS_PASSWORD, &[b'a'; 256]), Err(Error::Invalid));
    assert_eq!(s.get_bytes(opt::SOCKS_USERNAME).unwrap().len(), 256, "255 bytes and the NUL");
}

/// "tcp://src;dst" binds the connection to `src` first (127.0.0.2 is loopback too), for the
/// endpoint and for a SOCKS proxy's address alike.
#[test]
fn a_source_address_is_bound_before_connecting() {
    let ctx = Context::new();
    let mut pull = socket(&ctx, SocketType::Pull);
    let ep = bind(&mut pull, Transport::Tcp);
    let mut push = socket(&ctx, SocketType::Push);
    push.connect(&ep.replace("tcp://", "tcp://127.0.0.2:0;")).unwrap();
    push.send("from .2", 0).unwrap();
    let m = pull.recv(0).unwrap();
    assert_eq!(m.gets("Peer-Address"), Some(&b"127.0.0.2"[..]));

    let p = proxy(None);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let mut push = socket(&ctx, SocketType::Push);
    push.set_bytes(opt::SOCKS_PROXY, format!("127.0.0.3:{port};{}", p.addr).as_bytes()).unwrap();
    push.connect(&ep).unwrap();
    push.send("via the proxy", 0).unwrap();
    assert_eq!(recv_bytes(&mut pull), b"via the proxy");
    assert_eq!(p.peers.lock().unwrap()[0], format!("127.0.0.3:{port}"), "the proxy saw the source");
}
