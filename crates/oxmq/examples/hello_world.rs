//! The Guide's "Hello World" (hwserver/hwclient): a REP server answers "World" to each
//! "Hello" from a REQ client, over tcp. Both run here, the server on a thread of its own; the
//! client makes ten requests and the program exits 0.
//!
//!     cargo run --example hello_world

use oxmq::{Context, SocketType};

fn main() -> oxmq::Result<()> {
    let ctx = Context::new();
    let mut server = ctx.socket(SocketType::Rep)?;
    server.bind("tcp://127.0.0.1:*")?;
    let endpoint = server.last_endpoint()?;
    let t = std::thread::spawn(move || -> oxmq::Result<()> {
        for _ in 0..10 {
            let request = server.recv(0)?;
            println!("Received {}", String::from_utf8_lossy(&request));
            server.send("World", 0)?;
        }
        Ok(())
    });

    let mut client = ctx.socket(SocketType::Req)?;
    client.connect(&endpoint)?;
    for n in 0..10 {
        println!("Sending Hello {n}...");
        client.send("Hello", 0)?;
        let reply = client.recv(0)?;
        assert_eq!(reply, "World");
        println!("Received World {n}");
    }
    t.join().expect("server thread")?;
    Ok(())
}
