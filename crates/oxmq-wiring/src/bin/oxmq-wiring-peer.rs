//! `oxmq-wiring-peer`: a small program on the wiring API, one role per command, used by the
//! multi-process tests and handy for trying a name service by hand. Every line it prints is
//! flushed; `READY` means its names are registered and its wires are up.
//!
//! ```text
//! oxmq-wiring-peer HOST queue NAME COUNT             global queue; print COUNT messages
//! oxmq-wiring-peer HOST sink EXCHANGE COUNT          local queue bound to EXCHANGE; print COUNT
//! oxmq-wiring-peer HOST source EXCHANGE QUEUE COUNT  global exchange bound to QUEUE; send COUNT
//! oxmq-wiring-peer HOST relay QIN EOUT QOUT COUNT    queue QIN -> exchange EOUT -> QOUT, COUNT messages
//! oxmq-wiring-peer HOST exchange NAME                global exchange; send each stdin line
//! oxmq-wiring-peer HOST lookup NAME                  print the name's kind and endpoint
//! ```
//! Receiving roles give up after `OXMQ_WIRING_PEER_TIMEOUT_MS` (default 20000) per message.
use oxmq_wiring::{Scope, Wiring, WiringError};
use std::io::{BufRead, Write};
use std::time::Duration;

fn say(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{s}");
    let _ = o.flush();
}

fn count(s: &str) -> usize {
    s.parse().unwrap_or_else(|_| fail(WiringError::Invalid(format!("bad count {s}"))))
}

fn fail(e: WiringError) -> ! {
    eprintln!("oxmq-wiring-peer: {e} (errno {})", e.errno());
    std::process::exit(1)
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    if a.len() < 3 {
        eprintln!("usage: see the comment at the top of oxmq-wiring-peer.rs");
        std::process::exit(2);
    }
    let t = std::env::var("OXMQ_WIRING_PEER_TIMEOUT_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(20000u64);
    let t = Some(Duration::from_millis(t));
    let r = (|| -> Result<(), WiringError> {
        let mut w = Wiring::new(a[0])?;
        let recv_print = |w: &mut Wiring, n: usize| -> Result<(), WiringError> {
            for _ in 0..n {
                let m = w.receive_timeout(t)?;
                say(&format!("GOT {}", String::from_utf8_lossy(m.as_slice())));
            }
            Ok(())
        };
        match &a[1..] {
            ["queue", name, n] => {
                w.create_queue(name, Scope::Global, "")?;
                say(&format!("READY {}", w.endpoint_of(name).unwrap_or_default()));
                recv_print(&mut w, count(n))
            }
            ["sink", ex, n] => {
                w.create_queue("sink", Scope::Local, "")?;
                w.bind(ex, "sink")?;
                say("READY");
                recv_print(&mut w, count(n))
            }
            ["source", ex, q, n] => {
                let eid = w.create_exchange(ex, Scope::Global, "")?;
                w.bind(ex, q)?;
                say("READY");
                for i in 0..count(n) {
                    w.send(eid, format!("msg-{i}").into_bytes())?;
                }
                say("SENT");
                Ok(())
            }
            ["relay", qin, eout, qout, n] => {
                w.create_queue(qin, Scope::Global, "")?;
                let eid = w.create_exchange(eout, Scope::Global, "")?;
                w.bind(eout, qout)?;
                say("READY");
                for _ in 0..count(n) {
                    let m = w.receive_timeout(t)?;
                    let mut fwd = b"relayed ".to_vec();
                    fwd.extend_from_slice(m.as_slice());
                    w.send(eid, fwd)?;
                }
                say("SENT");
                Ok(())
            }
            ["exchange", name] => {
                let eid = w.create_exchange(name, Scope::Global, "")?;
                say(&format!("READY {}", w.endpoint_of(name).unwrap_or_default()));
                for line in std::io::stdin().lock().lines() {
                    let line = line.map_err(|e| WiringError::Invalid(e.to_string()))?;
                    w.send(eid, line.into_bytes())?;
                    say("SENT");
                }
                Ok(())
            }
            ["lookup", name] => {
                let r = w.lookup(name)?;
                say(&format!("{} {} {}", r.kind.as_str(), r.endpoint, r.style.as_str()));
                Ok(())
            }
            _ => Err(WiringError::Invalid("unknown command".into())),
        }
    })();
    if let Err(e) = r {
        fail(e)
    }
}
