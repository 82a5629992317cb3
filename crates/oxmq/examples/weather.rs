//! The Guide's weather update server and client (wuserver/wuclient): a PUB sends
//! "zipcode temperature humidity" updates for random zip codes; a SUB subscribed to one zip
//! code averages the temperature over the updates it gets. Runs until the client has 20
//! updates for its zip code, then exits 0.
//!
//!     cargo run --example weather [ZIPCODE]

use oxmq::{opt, Context, SocketType};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A small xorshift generator: the Guide uses `rand()`; the example needs no crate for it.
struct Rng(u64);
impl Rng {
    fn within(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn main() -> oxmq::Result<()> {
    let zip = std::env::args().nth(1).unwrap_or_else(|| "10001".into());
    let ctx = Context::new();
    let mut publisher = ctx.socket(SocketType::Pub)?;
    publisher.bind("tcp://127.0.0.1:*")?;
    let endpoint = publisher.last_endpoint()?;

    let done = Arc::new(AtomicBool::new(false));
    let stop = done.clone();
    let server = std::thread::spawn(move || -> oxmq::Result<()> {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        // Updates for other zip codes with the one the client wants among them.
        while !stop.load(Ordering::Relaxed) {
            let zipcode = if rng.within(10) == 0 { 10001 } else { rng.within(100_000) };
            let temperature = rng.within(215) as i64 - 80;
            let relhumidity = rng.within(50) + 10;
            publisher.send(format!("{zipcode:05} {temperature} {relhumidity}"), 0)?;
        }
        Ok(())
    });

    let mut subscriber = ctx.socket(SocketType::Sub)?;
    subscriber.connect(&endpoint)?;
    // A trailing space so "10001" does not match "100012".
    subscriber.subscribe(format!("{zip} "))?;
    subscriber.set_int(opt::RCVTIMEO, 10_000)?; // bounded: a wrong zip code ends the run
    println!("Collecting updates from weather server for {zip}...");
    let mut total = 0i64;
    let updates = 20;
    for _ in 0..updates {
        let update = subscriber.recv(0)?;
        let text = String::from_utf8_lossy(&update);
        let temperature: i64 = text.split(' ').nth(1).and_then(|t| t.parse().ok()).unwrap_or(0);
        total += temperature;
    }
    println!("Average temperature for zipcode '{zip}' was {}F", total / updates);
    done.store(true, Ordering::Relaxed);
    server.join().expect("server thread")?;
    Ok(())
}
