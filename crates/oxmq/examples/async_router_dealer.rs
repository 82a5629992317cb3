//! The Guide's asynchronous client/server pattern (asyncsrv) on the async API and tokio: the
//! server's ROUTER frontend takes requests from DEALER clients over tcp and passes them over
//! inproc to a DEALER backend shared by worker tasks, which may send any number of replies
//! per request; the server relays both ways with `tokio::select!`. Three clients send five
//! requests each and wait for the replies (each worker answers twice); the program then exits 0.
//!
//!     cargo run --example async_router_dealer

use oxmq::asynch::{AsyncSocket, Message};
use oxmq::{opt, Context, SocketType};

const CLIENTS: usize = 3;
const REQUESTS: usize = 5;
const WORKERS: usize = 4;
const REPLIES_PER_REQUEST: usize = 2;

async fn client(ctx: Context, endpoint: String, n: usize) -> oxmq::Result<usize> {
    let mut s = AsyncSocket::new(&ctx, SocketType::Dealer)?;
    s.set_bytes(opt::ROUTING_ID, format!("client-{n}").as_bytes())?;
    s.connect(&endpoint)?;
    for r in 0..REQUESTS {
        s.send(format!("request #{r}")).await?;
    }
    let mut replies = 0;
    while replies < REQUESTS * REPLIES_PER_REQUEST {
        let reply = s.recv().await?;
        println!("client-{n}: {}", String::from_utf8_lossy(&reply[0]));
        replies += 1;
    }
    Ok(replies)
}

/// A worker: [client id][request] in, [client id][reply] out, several replies per request.
async fn worker(ctx: Context) -> oxmq::Result<()> {
    let mut s = AsyncSocket::new(&ctx, SocketType::Dealer)?;
    s.connect("inproc://backend")?;
    loop {
        let mut m = s.recv().await?;
        let id = m.pop_front().expect("client id");
        if m[0].is_empty() {
            return Ok(()); // the server's stop
        }
        for k in 0..REPLIES_PER_REQUEST {
            let text = format!("{} answered ({}/{})", String::from_utf8_lossy(&m[0]), k + 1, REPLIES_PER_REQUEST);
            s.send(Message::from(&id).with(text)).await?;
        }
    }
}

#[tokio::main]
async fn main() -> oxmq::Result<()> {
    let ctx = Context::new();
    let mut frontend = AsyncSocket::new(&ctx, SocketType::Router)?;
    frontend.bind("tcp://127.0.0.1:*")?;
    let endpoint = frontend.last_endpoint()?;
    let mut backend = AsyncSocket::new(&ctx, SocketType::Dealer)?;
    backend.bind("inproc://backend")?;
    let workers: Vec<_> = (0..WORKERS).map(|_| tokio::spawn(worker(ctx.clone()))).collect();
    let clients: Vec<_> = (0..CLIENTS).map(|n| tokio::spawn(client(ctx.clone(), endpoint.clone(), n))).collect();

    // The relay: requests to the workers (round robin), replies back to the client they name.
    let total = CLIENTS * REQUESTS * REPLIES_PER_REQUEST;
    let mut relayed = 0;
    while relayed < total {
        tokio::select! {
            request = frontend.recv() => backend.send(request?).await?,
            reply = backend.recv() => {
                frontend.send(reply?).await?;
                relayed += 1;
            }
        }
    }
    for c in clients {
        assert_eq!(c.await.expect("client task")?, REQUESTS * REPLIES_PER_REQUEST);
    }
    for _ in 0..WORKERS {
        backend.send(["", ""]).await?; // [no client][empty]: stop, one per worker (round robin)
    }
    for w in workers {
        w.await.expect("worker task")?;
    }
    println!("{total} replies relayed");
    Ok(())
}
