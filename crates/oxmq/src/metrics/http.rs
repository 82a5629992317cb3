//! `OXMQ_METRICS_ADDR=HOST:PORT`: the process serves `GET /metrics` for every context it has.
//!
//! Read once, when the process makes its first context (any binding: Rust, the C ABI, Python,
//! Java, C#). When it is set, contexts register here and one thread (`oxmq-metrics`) answers
//! HTTP/1.x requests one at a time, each on a connection it then closes: `/metrics` in the
//! Prometheus text format, or OpenMetrics when the request's `Accept` asks for it (as
//! Prometheus 2.x does); anything else is 404. A request waits at most
//! `OXMQ_METRICS_WAIT_MS` (default 100) for sockets to publish fresh counts (see `mod.rs`).
//! When it is unset nothing here runs. An address that cannot be bound is reported once on
//! stderr and the process goes on without the endpoint: metrics must not stop a service.

use crate::socket::env::Env as CtxInner;
use crate::socket::metrics::{Format, Registry, DEFAULT_WAIT};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// The contexts a process's endpoint reports, when `OXMQ_METRICS_ADDR` is set.
static CONTEXTS: Mutex<Vec<Weak<CtxInner>>> = Mutex::new(Vec::new());
/// Whether the endpoint runs (read from the environment once).
static ENABLED: OnceLock<bool> = OnceLock::new();

/// A new context: registers it and starts the endpoint on first use, when the environment
/// asks for it. Costs one `OnceLock` read otherwise.
pub(crate) fn on_new_context(ctx: &Arc<CtxInner>) {
    let on = *ENABLED.get_or_init(|| match std::env::var("OXMQ_METRICS_ADDR") {
        Ok(addr) if !addr.is_empty() => start(&addr),
        _ => false,
    });
    if on {
        register(ctx);
    }
}

fn start(addr: &str) -> bool {
    let listener = match TcpListener::bind(addr) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("oxmq: OXMQ_METRICS_ADDR={addr}: cannot listen: {e}; no metrics endpoint");
            return false;
        }
    };
    let wait = std::env::var("OXMQ_METRICS_WAIT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(DEFAULT_WAIT, |ms| Duration::from_millis(ms.min(10_000)));
    serve_on(listener, wait)
}

/// Runs the endpoint on `listener` in its own thread.
pub(crate) fn serve_on(listener: TcpListener, wait: Duration) -> bool {
    let spawned = std::thread::Builder::new().name("oxmq-metrics".into()).spawn(move || {
        for c in listener.incoming().flatten() {
            let _ = serve(c, wait);
        }
    });
    spawned.is_ok()
}

/// Adds a context to what the endpoint reports.
pub(crate) fn register(ctx: &Arc<CtxInner>) {
    let mut v = CONTEXTS.lock().unwrap_or_else(|p| p.into_inner());
    v.retain(|w| w.strong_count() > 0);
    v.push(Arc::downgrade(ctx));
}

/// Renders every registered context's sockets.
fn render_all(format: Format, wait: Duration) -> String {
    let ctxs: Vec<Arc<CtxInner>> = CONTEXTS.lock().unwrap_or_else(|p| p.into_inner()).iter().filter_map(Weak::upgrade).collect();
    let regs: Vec<&Registry> = ctxs.iter().map(|c| &c.metrics).collect();
    crate::socket::metrics::text(&regs, format, wait)
}

/// Answers one request on `c`.
fn serve(mut c: TcpStream, wait: Duration) -> std::io::Result<()> {
    c.set_read_timeout(Some(Duration::from_secs(2)))?;
    c.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && !buf.windows(2).any(|w| w == b"\n\n") {
        let n = c.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > 16 * 1024 {
            return respond(&mut c, "431 Request Header Fields Too Large", "text/plain", b"too large\n", false);
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let accept = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("accept"))
        .map(|(_, v)| v.to_string())
        .unwrap_or_default();
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return respond(&mut c, "405 Method Not Allowed", "text/plain", b"GET /metrics\n", false);
    }
    if path != "/metrics" {
        return respond(&mut c, "404 Not Found", "text/plain", b"oxmq: metrics are at /metrics\n", head_only);
    }
    let format = negotiate(&accept);
    let body = render_all(format, wait);
    respond(&mut c, "200 OK", format.content_type(), body.as_bytes(), head_only)
}

/// OpenMetrics when the client lists it before (or without) the plain text format.
pub(crate) fn negotiate(accept: &str) -> Format {
    let om = accept.find("application/openmetrics-text");
    let text = accept.find("text/plain");
    match (om, text) {
        (Some(o), Some(t)) if o < t => Format::OpenMetrics,
        (Some(_), None) => Format::OpenMetrics,
        _ => Format::Prometheus,
    }
}

fn respond(c: &mut TcpStream, status: &str, ctype: &str, body: &[u8], head_only: bool) -> std::io::Result<()> {
    let mut out =
        format!("HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
            .into_bytes();
    if !head_only {
        out.extend_from_slice(body);
    }
    c.write_all(&out)?;
    c.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_asks_for_openmetrics_first() {
        let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(negotiate(prom), Format::OpenMetrics);
        assert_eq!(negotiate("text/plain"), Format::Prometheus);
        assert_eq!(negotiate(""), Format::Prometheus);
        assert_eq!(negotiate("*/*"), Format::Prometheus);
    }
}
