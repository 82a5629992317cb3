//! The Guide's load-balancing broker (lbbroker): REQ clients talk to a ROUTER frontend, REQ
//! workers to a ROUTER backend; a worker announces itself with "READY", and the broker hands
//! each client request to the least recently used ready worker and the reply back to its
//! client. Ten clients make one request each; the broker stops after ten replies, then tells
//! the workers to end (an empty-body request they recognise). Exits 0.
//!
//!     cargo run --example lbbroker

use oxmq::{opt::POLLIN, Context, Msg, PollItem, SocketType};
use std::collections::VecDeque;

const CLIENTS: usize = 10;
const WORKERS: usize = 3;

fn client(ctx: Context, frontend: String, n: usize) -> oxmq::Result<()> {
    let mut s = ctx.socket(SocketType::Req)?;
    s.set_bytes(oxmq::opt::ROUTING_ID, format!("client-{n}").as_bytes())?;
    s.connect(&frontend)?;
    s.send("HELLO", 0)?;
    let reply = s.recv(0)?;
    println!("client-{n}: {}", String::from_utf8_lossy(&reply));
    assert_eq!(reply, "OK");
    Ok(())
}

fn worker(ctx: Context, backend: String, n: usize) -> oxmq::Result<usize> {
    let mut s = ctx.socket(SocketType::Req)?;
    s.set_bytes(oxmq::opt::ROUTING_ID, format!("worker-{n}").as_bytes())?;
    s.connect(&backend)?;
    s.send("READY", 0)?;
    let mut served = 0;
    loop {
        // [client id][empty][request]
        let request = s.recv_multipart(0)?;
        if request.last().is_some_and(|m| m.is_empty()) {
            return Ok(served); // the broker's "stop"
        }
        served += 1;
        s.send_multipart([request[0].clone(), Msg::new(), Msg::from("OK")], 0)?;
    }
}

fn main() -> oxmq::Result<()> {
    let ctx = Context::new();
    let mut frontend = ctx.socket(SocketType::Router)?;
    frontend.bind("tcp://127.0.0.1:*")?;
    let mut backend = ctx.socket(SocketType::Router)?;
    backend.bind("tcp://127.0.0.1:*")?;
    let (fe, be) = (frontend.last_endpoint()?, backend.last_endpoint()?);

    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let (c, e) = (ctx.clone(), fe.clone());
            std::thread::spawn(move || client(c, e, n))
        })
        .collect();
    let workers: Vec<_> = (0..WORKERS)
        .map(|n| {
            let (c, e) = (ctx.clone(), be.clone());
            std::thread::spawn(move || worker(c, e, n))
        })
        .collect();

    // Ready workers, least recently used first.
    let mut ready: VecDeque<Msg> = VecDeque::new();
    let mut replies = 0;
    while replies < CLIENTS {
        // The frontend is polled only while a worker is ready: requests wait in its queue.
        let (from_backend, from_frontend) = {
            let mut items = [PollItem::socket(&mut backend, POLLIN), PollItem::socket(&mut frontend, POLLIN)];
            let n = if ready.is_empty() { 1 } else { 2 };
            if oxmq::poll(&mut items[..n], 10_000)? == 0 {
                return Err(oxmq::Error::Again); // bounded: nothing for ten seconds
            }
            (items[0].is_readable(), n == 2 && items[1].is_readable())
        };
        if from_backend {
            // [worker id][empty]["READY"] or [worker id][empty][client id][empty][reply]
            let mut m = backend.recv_multipart(0)?;
            ready.push_back(m.remove(0));
            if m.len() == 4 {
                frontend.send_multipart([m[1].clone(), Msg::new(), m[3].clone()], 0)?;
                replies += 1;
            }
        }
        if from_frontend {
            // [client id][empty][request] to the worker used least recently.
            let m = frontend.recv_multipart(0)?;
            let w = ready.pop_front().expect("polled only with a worker ready");
            backend.send_multipart([w, Msg::new(), m[0].clone(), Msg::new(), m[2].clone()], 0)?;
        }
    }
    for c in clients {
        c.join().expect("client thread")?;
    }
    // Every worker is ready again once its last reply came back: tell each to stop.
    while ready.len() < WORKERS {
        let mut m = backend.recv_multipart(0)?;
        ready.push_back(m.remove(0));
    }
    for w in ready {
        backend.send_multipart([w, Msg::new(), Msg::new(), Msg::new(), Msg::new()], 0)?;
    }
    let served: usize = workers.into_iter().map(|w| w.join().expect("worker thread")).sum::<oxmq::Result<usize>>()?;
    println!("{served} requests served by {WORKERS} workers");
    assert_eq!(served, CLIENTS);
    Ok(())
}
