//! `oxmq-name-server`: the name service of the wiring API (the role of ØMQ 0.3's
//! `zmq_server`).
//!
//! ```text
//! oxmq-name-server [--bind ENDPOINT] [--etcd http://HOST:PORT] [--print-endpoint]
//! ```
//!
//! Listens at `tcp://*:5682` by default. With `--etcd`, names are kept in etcd, so several
//! servers share one directory. `--print-endpoint` prints the bound endpoint on its first
//! line of output (for scripts that bind port 0). Runs until killed.
use oxmq_wiring::{Backend, NameServer, DEFAULT_PORT};
use std::io::Write;

fn main() {
    let mut bind = format!("tcp://*:{DEFAULT_PORT}");
    let mut backend = Backend::Memory;
    let mut print = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bind" => bind = args.next().unwrap_or_else(|| usage()),
            "--etcd" => backend = Backend::Etcd(args.next().unwrap_or_else(|| usage())),
            "--print-endpoint" => print = true,
            "-h" | "--help" => usage(),
            _ => usage(),
        }
    }
    let server = match NameServer::start(&bind, backend) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("oxmq-name-server: {bind}: {e}");
            std::process::exit(1);
        }
    };
    if print {
        println!("{}", server.endpoint());
        let _ = std::io::stdout().flush();
    }
    eprintln!("oxmq-name-server: serving at {}", server.endpoint());
    server.join();
}

fn usage() -> ! {
    eprintln!("usage: oxmq-name-server [--bind ENDPOINT] [--etcd http://HOST:PORT] [--print-endpoint]");
    std::process::exit(2);
}
