//! What a message costs oxmq on a ZMTP 1.0, 2.0 or 3.1 connection, for instruction counts under
//! callgrind (ZMTP 1.0/2.0 must not be a slow path).
//!
//! Usage: zmtp_revision_cost <1.0|2.0|3.1> <recv|send> <message-count> <message-size>
//!
//! A peer thread listens on 127.0.0.1 (an ephemeral port), and an oxmq PULL (`recv`) or PUSH
//! (`send`) connects to it. The peer speaks the chosen revision with bytes written here by hand
//! (greeting, READY or identity message), then either writes `count` frames it encoded
//! beforehand in large writes (`recv`: oxmq decodes them) or reads what oxmq sends until it has
//! `count` frames' worth of bytes (`send`: oxmq encodes them). So the peer's work per message is
//! a share of a 64 KiB read or write; the rest is oxmq's. Run it at two counts and divide the
//! difference in instructions by the difference in counts:
//!
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!         target/release/zmtp_revision_cost 2.0 recv 200000 16
//!
//! Prints `<revision> <direction> <count> <size> <seconds>`.

use oxmq::{Context, SocketType};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

const SIG: [u8; 10] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F];

#[derive(Clone, Copy, PartialEq)]
enum Rev {
    V10,
    V20,
    V31,
}

/// One message frame in `rev`'s framing (2.0 and 3.x message frames are the same bytes).
fn frame(rev: Rev, body: &[u8], out: &mut Vec<u8>) {
    let n = body.len();
    if rev == Rev::V10 {
        let len = n as u64 + 1;
        if len < 255 {
            out.push(len as u8);
        } else {
            out.push(0xFF);
            out.extend_from_slice(&len.to_be_bytes());
        }
        out.push(0);
    } else if n < 256 {
        out.extend_from_slice(&[0, n as u8]);
    } else {
        out.push(2);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
    out.extend_from_slice(body);
}

fn read_exact(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    s.read_exact(&mut b).expect("read from oxmq");
    b
}

/// The peer's side of the handshake; `peer_type` is its 2.0 number and 3.x name.
fn handshake(s: &mut TcpStream, rev: Rev, peer_type: (u8, &str)) {
    match rev {
        Rev::V10 => {
            s.write_all(&[1, 0]).unwrap(); // empty identity, no signature
            read_exact(s, 10); // oxmq's signature = its identity's header; empty body
        }
        Rev::V20 => {
            let mut g = SIG.to_vec();
            g.extend_from_slice(&[1, peer_type.0, 0, 0]); // revision, type, empty identity
            s.write_all(&g).unwrap();
            read_exact(s, 12 + 2); // signature, 3, its type, its empty identity frame
        }
        Rev::V31 => {
            let mut g = SIG.to_vec();
            g.extend_from_slice(&[3, 1]);
            let mut mech = [0u8; 20];
            mech[..4].copy_from_slice(b"NULL");
            g.extend_from_slice(&mech);
            g.extend_from_slice(&[0u8; 32]);
            let name = peer_type.1.as_bytes();
            let mut body = vec![5];
            body.extend_from_slice(b"READY");
            body.push(11);
            body.extend_from_slice(b"Socket-Type");
            body.extend_from_slice(&(name.len() as u32).to_be_bytes());
            body.extend_from_slice(name);
            g.extend_from_slice(&[4, body.len() as u8]);
            g.extend_from_slice(&body);
            s.write_all(&g).unwrap();
            read_exact(s, 64);
            let h = read_exact(s, 2); // oxmq's READY: a short command frame
            assert_eq!(h[0], 4, "READY expected");
            read_exact(s, usize::from(h[1]));
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: zmtp_revision_cost <1.0|2.0|3.1> <recv|send> <message-count> <message-size>");
        std::process::exit(1);
    }
    let rev = match args[1].as_str() {
        "1.0" => Rev::V10,
        "2.0" => Rev::V20,
        "3.1" => Rev::V31,
        other => panic!("unknown revision {other}"),
    };
    let recv = match args[2].as_str() {
        "recv" => true,
        "send" => false,
        other => panic!("direction must be recv or send, not {other}"),
    };
    let count: usize = args[3].parse().expect("message-count");
    let size: usize = args[4].parse().expect("message-size");
    let body = vec![0x61u8; size];
    let mut one = Vec::new();
    frame(rev, &body, &mut one);

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let peer_type = if recv { (8, "PUSH") } else { (7, "PULL") };
    let wire_len = one.len() * count;
    let peer = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_nodelay(true).unwrap();
        handshake(&mut s, rev, peer_type);
        if recv {
            let mut batch = Vec::with_capacity(64 * 1024 + one.len());
            let mut left = count;
            while left > 0 {
                batch.clear();
                while left > 0 && batch.len() < 64 * 1024 {
                    batch.extend_from_slice(&one);
                    left -= 1;
                }
                s.write_all(&batch).unwrap();
            }
        } else {
            let mut buf = vec![0u8; 64 * 1024];
            let mut got = 0;
            while got < wire_len {
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0, "oxmq closed early");
                got += n;
            }
        }
    });

    let ctx = Context::new();
    let mut sock = ctx.socket(if recv { SocketType::Pull } else { SocketType::Push }).unwrap();
    sock.connect(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let t0 = Instant::now();
    if recv {
        let mut msg = oxmq::Msg::new();
        for _ in 0..count {
            sock.recv_msg(&mut msg, 0).unwrap();
            assert_eq!(msg.len(), size);
        }
    } else {
        for _ in 0..count {
            sock.send(&body[..], 0).unwrap();
        }
    }
    peer.join().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    println!("{} {} {count} {size} {secs:.3}", args[1], args[2]);
}
