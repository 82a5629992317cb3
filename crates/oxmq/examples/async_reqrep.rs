//! REQ/REP over tcp with the async API on tokio: a REP task echoes, the REQ in `main` makes a
//! thousand round trips and checks each reply, then the program exits 0.
//!
//!     cargo run --example async_reqrep

use oxmq::asynch::AsyncSocket;
use oxmq::{Context, SocketType};

const ROUND_TRIPS: u32 = 1000;

#[tokio::main(flavor = "current_thread")]
async fn main() -> oxmq::Result<()> {
    let ctx = Context::new();
    let mut rep = AsyncSocket::new(&ctx, SocketType::Rep)?;
    rep.bind("tcp://127.0.0.1:*")?;
    let endpoint = rep.last_endpoint()?;
    let server = tokio::spawn(async move {
        for _ in 0..ROUND_TRIPS {
            let request = rep.recv().await?;
            rep.send(request).await?;
        }
        Ok::<_, oxmq::Error>(())
    });

    let mut req = AsyncSocket::new(&ctx, SocketType::Req)?;
    req.connect(&endpoint)?;
    let start = std::time::Instant::now();
    for i in 0..ROUND_TRIPS {
        req.send(i.to_be_bytes().to_vec()).await?;
        let reply = req.recv().await?;
        assert_eq!(reply[0], &i.to_be_bytes());
    }
    let elapsed = start.elapsed();
    server.await.expect("server task")?;
    println!("{ROUND_TRIPS} round trips in {elapsed:?} ({:.1} µs each)", elapsed.as_secs_f64() * 1e6 / ROUND_TRIPS as f64);
    Ok(())
}
