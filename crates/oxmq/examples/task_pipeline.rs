//! The Guide's divide-and-conquer pipeline (taskvent, taskwork, tasksink): a ventilator PUSHes
//! 100 tasks (a workload in milliseconds each) to three workers, which "do" them and PUSH a
//! result to the sink; the sink PULLs the 100 results and reports the elapsed time, then tells
//! the workers to stop over PUB/SUB (the Guide's taskwork2 kill signal). Exits 0.
//!
//!     cargo run --example task_pipeline

use oxmq::opt::POLLIN;
use oxmq::{Context, PollItem, SocketType};
use std::time::{Duration, Instant};

const TASKS: usize = 100;

fn worker(ctx: Context, tasks: String, results: String, control: String) -> oxmq::Result<usize> {
    let mut receiver = ctx.socket(SocketType::Pull)?;
    receiver.connect(&tasks)?;
    let mut sender = ctx.socket(SocketType::Push)?;
    sender.connect(&results)?;
    let mut controller = ctx.socket(SocketType::Sub)?;
    controller.connect(&control)?;
    controller.subscribe("")?;
    let mut done = 0;
    loop {
        let (task, kill) = {
            let mut items = [PollItem::socket(&mut receiver, POLLIN), PollItem::socket(&mut controller, POLLIN)];
            // Bounded: a worker that hears nothing for ten seconds gives up with EAGAIN.
            if oxmq::poll(&mut items, 10_000)? == 0 {
                return Err(oxmq::Error::Again);
            }
            (items[0].is_readable(), items[1].is_readable())
        };
        if task {
            let workload = receiver.recv(0)?;
            let ms: u64 = String::from_utf8_lossy(&workload).parse().unwrap_or(0);
            std::thread::sleep(Duration::from_millis(ms)); // the "work"
            sender.send("", 0)?;
            done += 1;
        }
        if kill {
            controller.recv(0)?; // KILL
            return Ok(done);
        }
    }
}

fn main() -> oxmq::Result<()> {
    let ctx = Context::new();
    // The sink and the ventilator bind; workers come and go.
    let mut sink = ctx.socket(SocketType::Pull)?;
    sink.bind("tcp://127.0.0.1:*")?;
    let results = sink.last_endpoint()?;
    let mut control = ctx.socket(SocketType::Pub)?;
    control.bind("tcp://127.0.0.1:*")?;
    let control_ep = control.last_endpoint()?;
    let mut ventilator = ctx.socket(SocketType::Push)?;
    ventilator.bind("tcp://127.0.0.1:*")?;
    let tasks = ventilator.last_endpoint()?;

    // Watch the ventilator's accepts before any worker exists, so none is missed.
    let mut mon = ctx.socket(SocketType::Pair)?;
    ventilator.monitor(Some("inproc://ventilator-monitor"), oxmq::monitor::event::ACCEPTED)?;
    mon.connect("inproc://ventilator-monitor")?;

    let workers: Vec<_> = (0..3)
        .map(|_| {
            let (c, t, r, k) = (ctx.clone(), tasks.clone(), results.clone(), control_ep.clone());
            std::thread::spawn(move || worker(c, t, r, k))
        })
        .collect();

    // The Guide waits for the user to start the workers; here the ventilator sends once all
    // three are connected (its HWM would queue the tasks anyway, but PUSH spreads over the
    // peers it has, so with one connected early it would get every task).
    for _ in 0..3 {
        mon.recv_multipart(0)?;
    }

    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut total_ms = 0;
    for _ in 0..TASKS {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let workload = rng % 10 + 1;
        total_ms += workload;
        ventilator.send(workload.to_string(), 0)?;
    }
    println!("Total expected cost: {total_ms} msec");

    let start = Instant::now();
    for task in 0..TASKS {
        sink.recv(0)?;
        print!("{}", if task % 10 == 0 { ':' } else { '.' });
    }
    println!("\nTotal elapsed time: {} msec", start.elapsed().as_millis());
    control.send("KILL", 0)?;
    let mut done = 0;
    for w in workers {
        done += w.join().expect("worker thread")?;
    }
    assert_eq!(done, TASKS);
    Ok(())
}
