//! The Guide's Lazy Pirate pattern (lpclient/lpserver): reliable request-reply from the client
//! side. The REQ client waits for each reply with a timeout; when none comes it closes the
//! socket (LINGER 0, so the unanswered request is dropped), opens a new one and resends, up to
//! three times before giving up. The server here misbehaves on purpose: it drops one request
//! as if overloaded, and on another "crashes" (closes its socket and binds again). The client
//! gets every reply through both; after six requests the program exits 0.
//!
//!     cargo run --example lazy_pirate

use oxmq::{opt, Context, PollItem, SocketType};

const REQUESTS: u32 = 6;
const TIMEOUT_MS: i64 = 500;
const RETRIES: u32 = 3;

fn server(ctx: Context, endpoint: String, mut s: oxmq::Socket) -> oxmq::Result<()> {
    let mut served = 0;
    let mut cycle = 0;
    while served < REQUESTS {
        let request = s.recv(0)?;
        cycle += 1;
        if cycle == 2 {
            println!("I: simulating CPU overload (request {} dropped)", String::from_utf8_lossy(&request));
            // A REP must answer before it can read again: a new socket forgets the request.
            s = fresh(&ctx, &endpoint, s)?;
            continue;
        }
        if cycle == 5 {
            println!("I: simulating a crash");
            s = fresh(&ctx, &endpoint, s)?;
            continue;
        }
        println!("I: normal request ({})", String::from_utf8_lossy(&request));
        s.send(request, 0)?;
        served += 1;
    }
    Ok(())
}

/// Closes `old` and binds a new REP at the same endpoint. The old listener is closed by the
/// I/O thread, so the port may still be taken for a moment: the bind is retried for a while.
fn fresh(ctx: &Context, endpoint: &str, old: oxmq::Socket) -> oxmq::Result<oxmq::Socket> {
    drop(old);
    let mut s = ctx.socket(SocketType::Rep)?;
    s.set_int(opt::LINGER, 0)?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match s.bind(endpoint) {
            Err(oxmq::Error::AddrInUse) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            r => return r.map(|()| s),
        }
    }
}

fn main() -> oxmq::Result<()> {
    let ctx = Context::new();
    let mut rep = ctx.socket(SocketType::Rep)?;
    rep.set_int(opt::LINGER, 0)?;
    rep.bind("tcp://127.0.0.1:*")?;
    let endpoint = rep.last_endpoint()?;
    let (c, e) = (ctx.clone(), endpoint.clone());
    let srv = std::thread::spawn(move || server(c, e, rep));

    let connect = |ctx: &Context| -> oxmq::Result<oxmq::Socket> {
        let mut s = ctx.socket(SocketType::Req)?;
        s.set_int(opt::LINGER, 0)?;
        s.connect(&endpoint)?;
        Ok(s)
    };
    let mut client = connect(&ctx)?;
    for sequence in 1..=REQUESTS {
        let request = sequence.to_string();
        let mut retries_left = RETRIES;
        client.send(request.as_str(), 0)?;
        loop {
            let ready = {
                let mut items = [PollItem::socket(&mut client, opt::POLLIN)];
                oxmq::poll(&mut items, TIMEOUT_MS)? > 0
            };
            if ready {
                let reply = client.recv(0)?;
                assert_eq!(reply, request.as_str(), "a reply to this request");
                println!("I: server replied OK ({request})");
                break;
            }
            retries_left -= 1;
            if retries_left == 0 {
                eprintln!("E: server seems to be offline, abandoning");
                return Err(oxmq::Error::HostUnreach);
            }
            println!("W: no response from server, retrying...");
            client = connect(&ctx)?; // the old socket and its unanswered request go
            client.send(request.as_str(), 0)?;
        }
    }
    srv.join().expect("server thread")?;
    Ok(())
}
