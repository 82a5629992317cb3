//! One end of an omq.rs ↔ oxmq interop run (scripts/test.d/42-omq.sh), on omq.rs
//! (`omq-tokio` with its `ws`, `plain` and `curve` features, blocking API). The other end is
//! `interop/omq/peer.c` on oxmq's `libzmq.so.5`; both follow the script described in
//! `interop/omq/README.md` byte for byte.
//!
//! `omq-peer bind|connect ENDPOINT null|plain|curve ROLE`
//! (ROLE: push, pull, req, rep, dealer, router, pub, sub).
//!
//! The binder prints its bound endpoint on stdout's first line. TLS (wss://) from the
//! environment: WSS_CERT, WSS_KEY (binder), WSS_TRUST, WSS_HOSTNAME (connecter), PEM file
//! paths. Exit 0 when every message of the script arrived byte-exact, 1 otherwise; every wait
//! is bounded (`RECV_TIMEOUT` per message, `PUB_DEADLINE` for the publisher).

use omq_tokio::blocking::Socket;
use omq_tokio::{Context, CurveKeypair, CurvePublicKey, CurveSecretKey, Message, Options, SocketType};
use std::time::{Duration, Instant};

/// Test keys (libzmq's test suite's, as perf/c and interop/web use); never for real use.
const SERVER_PUBLIC: &str = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
const SERVER_SECRET: &str = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
const CLIENT_PUBLIC: &str = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
const CLIENT_SECRET: &str = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";
const PLAIN_USER: &str = "alice";
const PLAIN_PASSWORD: &str = "secret";
const DEALER_ID: &[u8] = b"dealer-7";

const RECV_TIMEOUT: Duration = Duration::from_secs(10);
const PUB_DEADLINE: Duration = Duration::from_secs(20);
/// A publisher's pause between two rounds of the script, so a subscriber that joined late
/// finds whole rounds and the send queue never nears its high-water mark.
const PUB_ROUND_GAP: Duration = Duration::from_millis(20);

// ---- the script (the same in peer.c) ----

/// Messages in the script.
const COUNT: usize = 24;
/// Seed of requests and one-way messages; replies use REPLY_SEED.
const SEED: usize = 0;
const REPLY_SEED: usize = 100;

/// Part lengths of message `k`: a short one, a multipart with an empty frame, 1 MiB, long
/// frames (>255 B, the 8-byte size form) in a multipart, then short numbered ones.
fn part_lengths(k: usize) -> Vec<usize> {
    match k {
        0 => vec![5],
        1 => vec![3, 0, 200],
        2 => vec![1 << 20],
        3 => vec![300, 1, 70_000],
        _ => vec![8 + k],
    }
}

/// Message `k` of the script with `seed`: byte j of part p is
/// (7j + j/256 + 13k + 29p + seed) mod 251, except the first byte of the first part, 't'
/// (the subscription prefix).
fn script_message(k: usize, seed: usize) -> Vec<Vec<u8>> {
    part_lengths(k)
        .into_iter()
        .enumerate()
        .map(|(p, len)| {
            let mut part: Vec<u8> = (0..len).map(|j| ((7 * j + (j >> 8) + 13 * k + 29 * p + seed) % 251) as u8).collect();
            if p == 0 && len > 0 {
                part[0] = b't';
            }
            part
        })
        .collect()
}

/// Noise a publisher sends between script messages; a subscriber to "t" must never see it.
const NOISE: &[u8] = b"x-noise";

// ---- the peer ----

fn fail(what: impl std::fmt::Display) -> ! {
    eprintln!("omq-peer: {what}");
    std::process::exit(1);
}

fn to_message(parts: &[Vec<u8>]) -> Message {
    Message::multipart(parts.iter().cloned())
}

fn parts_of(m: &Message) -> Vec<Vec<u8>> {
    (0..m.len()).map(|i| m.part_slice(i).unwrap_or_default().to_vec()).collect()
}

/// Describes a mismatch briefly: part count, then the first differing part's length and offset.
fn describe(got: &[Vec<u8>], want: &[Vec<u8>]) -> String {
    if got.len() != want.len() {
        return format!("{} parts, expected {}", got.len(), want.len());
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.len() != w.len() {
            return format!("part {i}: {} bytes, expected {}", g.len(), w.len());
        }
        if let Some(at) = g.iter().zip(w).position(|(a, b)| a != b) {
            return format!("part {i}: byte {at} is {}, expected {}", g[at], w[at]);
        }
    }
    "equal".into()
}

fn expect(got: &[Vec<u8>], want: &[Vec<u8>], what: &str) {
    if got != want {
        fail(format!("{what}: {}", describe(got, want)));
    }
}

fn recv(s: &Socket, what: &str) -> Vec<Vec<u8>> {
    match s.recv_timeout(RECV_TIMEOUT) {
        Ok(m) => parts_of(&m),
        Err(e) => fail(format!("recv {what}: {e}")),
    }
}

fn send(s: &Socket, parts: &[Vec<u8>], what: &str) {
    if let Err(e) = s.send_timeout(to_message(parts), RECV_TIMEOUT) {
        fail(format!("send {what}: {e}"));
    }
}

fn read_env_pem(name: &str) -> Option<Vec<u8>> {
    let path = std::env::var_os(name).filter(|p| !p.is_empty())?;
    Some(std::fs::read(&path).unwrap_or_else(|e| fail(format!("{name}={}: {e}", path.to_string_lossy()))))
}

fn options(mech: &str, server: bool, role: &str) -> Options {
    // Lingering: a sender's last messages must leave before the process does.
    let mut o = Options::default().linger(RECV_TIMEOUT);
    if role == "dealer" {
        o = o.identity(DEALER_ID);
    }
    let key = |r: omq_tokio::Result<CurveSecretKey>| r.unwrap_or_else(|e| fail(format!("curve key: {e}")));
    let public = |z: &str| CurvePublicKey::from_z85(z).unwrap_or_else(|e| fail(format!("curve key: {e}")));
    o = match (mech, server) {
        ("null", _) => o,
        ("plain", true) => o.plain_server_credentials([(PLAIN_USER, PLAIN_PASSWORD)]),
        ("plain", false) => o.plain_client(PLAIN_USER, PLAIN_PASSWORD),
        ("curve", true) => {
            o.curve_server(CurveKeypair { public: public(SERVER_PUBLIC), secret: key(CurveSecretKey::from_z85(SERVER_SECRET)) })
        }
        ("curve", false) => o.curve_client(
            CurveKeypair { public: public(CLIENT_PUBLIC), secret: key(CurveSecretKey::from_z85(CLIENT_SECRET)) },
            public(SERVER_PUBLIC),
        ),
        _ => fail(format!("unknown mechanism {mech}")),
    };
    if let Some(cert) = read_env_pem("WSS_CERT") {
        o.wss_tls.server_cert_pem = Some(cert);
    }
    if let Some(key) = read_env_pem("WSS_KEY") {
        o.wss_tls.server_key_pem = Some(key);
    }
    if let Some(trust) = read_env_pem("WSS_TRUST") {
        o.wss_tls.trust_pem = Some(trust);
        o.wss_tls.trust_system = false;
    }
    if let Ok(name) = std::env::var("WSS_HOSTNAME") {
        if !name.is_empty() {
            o.wss_tls.hostname = Some(name);
        }
    }
    o
}

fn ready_peers(s: &Socket) -> usize {
    match s.connections() {
        Ok(c) => c.iter().filter(|c| c.peer_info.is_some()).count(),
        Err(e) => fail(format!("connections: {e}")),
    }
}

/// The publisher: rounds of the script (each message after a noise message) until its
/// subscriber has come and gone (it leaves after one whole clean round).
fn publish(s: &Socket) {
    let start = Instant::now();
    if let Err(e) = s.wait_connected(1, PUB_DEADLINE) {
        fail(format!("no subscriber connected: {e}"));
    }
    let script: Vec<_> = (0..COUNT).map(|k| script_message(k, SEED)).collect();
    while ready_peers(s) > 0 {
        if start.elapsed() > PUB_DEADLINE {
            fail("the subscriber did not leave before the deadline");
        }
        for m in &script {
            send(s, &[NOISE.to_vec()], "noise");
            send(s, m, "script message");
        }
        std::thread::sleep(PUB_ROUND_GAP);
    }
}

/// The subscriber (to "t"): waits for a round's first message, then must get the whole round
/// byte-exact. A gap (the publisher dropped at its high-water mark, as PUB may) restarts the
/// wait; a message that is not in the script at all, or any noise, fails.
fn subscribe(s: &Socket) {
    let script: Vec<_> = (0..COUNT).map(|k| script_message(k, SEED)).collect();
    let mut next = 0usize; // index expected next; 0 = waiting for a round's start
    while next < COUNT {
        let got = recv(s, "published message");
        if got.first().is_some_and(|p| p.first() != Some(&b't')) {
            fail(format!("received a message outside the subscription ({} parts)", got.len()));
        }
        if got == script[next] {
            next += 1;
        } else if let Some(k) = script.iter().position(|m| *m == got) {
            if next > 0 {
                eprintln!("omq-peer: gap before message {k} (expected {next}); waiting for the next round");
            }
            next = usize::from(k == 0);
        } else {
            fail(format!("message not in the script: {}", describe(&got, &script[next])));
        }
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.len() != 5 || !matches!(argv[1].as_str(), "bind" | "connect") {
        eprintln!("usage: omq-peer bind|connect ENDPOINT null|plain|curve push|pull|req|rep|dealer|router|pub|sub");
        std::process::exit(2);
    }
    let (bind, endpoint, mech, role) = (argv[1] == "bind", argv[2].as_str(), argv[3].as_str(), argv[4].as_str());
    let kind = match role {
        "push" => SocketType::Push,
        "pull" => SocketType::Pull,
        "req" => SocketType::Req,
        "rep" => SocketType::Rep,
        "dealer" => SocketType::Dealer,
        "router" => SocketType::Router,
        "pub" => SocketType::Pub,
        "sub" => SocketType::Sub,
        _ => fail(format!("unknown role {role}")),
    };
    let ctx = Context::new();
    // The binder is the mechanism's server, as in interop/web.
    let s = ctx.blocking_socket(kind, options(mech, bind, role));
    if kind == SocketType::Sub {
        s.subscribe(&b"t"[..]).unwrap_or_else(|e| fail(format!("subscribe: {e}")));
    }
    if bind {
        let ep = s.bind(endpoint).unwrap_or_else(|e| fail(format!("bind {endpoint}: {e}")));
        println!("{ep}");
    } else {
        s.connect(endpoint).unwrap_or_else(|e| fail(format!("connect {endpoint}: {e}")));
    }
    match kind {
        SocketType::Push => {
            for k in 0..COUNT {
                send(&s, &script_message(k, SEED), "message");
            }
        }
        SocketType::Pull => {
            for k in 0..COUNT {
                expect(&recv(&s, "message"), &script_message(k, SEED), &format!("message {k}"));
            }
        }
        SocketType::Req | SocketType::Dealer => {
            for k in 0..COUNT {
                send(&s, &script_message(k, SEED), "request");
                expect(&recv(&s, "reply"), &script_message(k, REPLY_SEED), &format!("reply {k}"));
            }
        }
        SocketType::Rep => {
            for k in 0..COUNT {
                expect(&recv(&s, "request"), &script_message(k, SEED), &format!("request {k}"));
                send(&s, &script_message(k, REPLY_SEED), "reply");
            }
        }
        SocketType::Router => {
            for k in 0..COUNT {
                let mut got = recv(&s, "request");
                if got.first().map(Vec::as_slice) != Some(DEALER_ID) {
                    fail(format!("request {k}: routing id {:?}, expected {:?}", got.first(), DEALER_ID));
                }
                let id = got.remove(0);
                expect(&got, &script_message(k, SEED), &format!("request {k}"));
                let mut reply = vec![id];
                reply.extend(script_message(k, REPLY_SEED));
                send(&s, &reply, "reply");
            }
        }
        SocketType::Pub => publish(&s),
        SocketType::Sub => subscribe(&s),
        _ => unreachable!(),
    }
    // Close with the linger set above: every sent message leaves before the process does. A
    // publisher's leftovers (a connecter keeps its queue for a reconnect) have no one to go to.
    let linger = if kind == SocketType::Pub { Duration::ZERO } else { RECV_TIMEOUT };
    s.close_with_linger(Some(linger)).unwrap_or_else(|e| fail(format!("close: {e}")));
    ctx.term();
}
