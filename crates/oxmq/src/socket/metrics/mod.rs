//! Metrics: every socket's counters in the Prometheus text format (0.0.4) or OpenMetrics 1.0,
//! for [`Context::metrics`](crate::Context::metrics) and the process's `/metrics` endpoint
//! (`OXMQ_METRICS_ADDR`, `crate::metrics::http`).
//!
//! Nothing here runs on the message path. A socket's application-side counts (messages and
//! bytes, drops by policy, queue depths, subscriptions) are plain fields of its own thread, so
//! an exporter does not read them: it posts a snapshot request (`Command::Snapshot`) and the
//! socket publishes a [`Snapshot`] when it next takes its commands, at its next call, or at
//! once when its thread is waiting in a blocking call or a poll. The exporter waits a bounded
//! time for the answers; a socket that has not answered by then is reported from its last
//! snapshot (`oxmq_socket_snapshot_age_seconds` says how old), which is exact when its
//! application has not used it since, as only its own calls change those counts. The I/O
//! threads' counts (connections, wire bytes, handshake failures, peers) are read live.
//!
//! Labels are the socket's type, its `OXMQ_NAME` and the first endpoint it was bound or
//! connected to as given (wildcards and host names as written), and for pipe gauges `via`, the
//! endpoint the pipes came through (a followed name, not its addresses). So the label sets
//! follow the application's configuration, never the traffic: sockets with the same labels
//! are summed, a peer's address is never a label, and a closed socket's counts stay in its
//! labels' totals so counters never go down (at most [`RETIRED_MAX`] label sets are kept).

mod render;

pub use render::Format;

use super::{SocketShared, SocketStats, SocketType};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// How long an exporter waits for sockets to answer a snapshot request by default.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_millis(100);
/// Label sets of closed sockets kept in the totals (oldest forgotten first).
pub(crate) const RETIRED_MAX: usize = 256;

/// A socket's labels (besides its type).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Labels {
    pub(crate) name: String,
    pub(crate) endpoint: String,
}

/// One `via` of a socket's pipes: how many, and their queues.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PipeGauge {
    pub(crate) via: String,
    pub(crate) pipes: u64,
    pub(crate) queued_out: u64,
    pub(crate) queued_in: u64,
    pub(crate) max_out: u64,
    pub(crate) max_in: u64,
    /// Pipes whose outbound queue is at its HWM now.
    pub(crate) full: u64,
}

/// One followed endpoint (`OXMQ_DNS_FOLLOW`).
pub(crate) type DnsGauge = super::follow::GroupStats;

/// What a socket's own thread publishes for the exporter.
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshot {
    /// The application-side counts; the I/O-side fields are zero (read live instead).
    pub(crate) app: SocketStats,
    pub(crate) pipes: Vec<PipeGauge>,
    pub(crate) fanout: Option<(u64, u64)>,
    pub(crate) dns: Vec<DnsGauge>,
}

/// A socket's metrics state, in `SocketShared`.
#[derive(Default)]
pub(crate) struct SocketCell {
    labels: Mutex<Labels>,
    requested: AtomicBool,
    snap: Mutex<Option<(Instant, Arc<Snapshot>)>>,
}

impl SocketCell {
    pub(crate) fn set_name(&self, name: &str) {
        self.labels.lock().unwrap_or_else(|p| p.into_inner()).name = name.to_string();
    }

    pub(crate) fn name(&self) -> String {
        self.labels.lock().unwrap_or_else(|p| p.into_inner()).name.clone()
    }

    /// The socket was bound or connected to `endpoint` (as given): the first one is its label.
    pub(crate) fn note_endpoint(&self, endpoint: &str) {
        let mut l = self.labels.lock().unwrap_or_else(|p| p.into_inner());
        if l.endpoint.is_empty() {
            l.endpoint = endpoint.to_string();
        }
    }

    /// The socket's thread publishes its counts (answering a request, or at close).
    pub(crate) fn publish(&self, s: Snapshot) {
        *self.snap.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), Arc::new(s)));
        self.requested.store(false, Ordering::Release);
        let (m, cv) = &*ANSWERS;
        *m.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        cv.notify_all();
    }

    /// Asks for a snapshot unless one was asked for and not answered yet.
    fn request(&self, shared: &SocketShared) {
        if !self.requested.swap(true, Ordering::AcqRel) {
            shared.mailbox.send(crate::mailbox::Command::Snapshot);
        }
    }

    fn answered(&self) -> bool {
        !self.requested.load(Ordering::Acquire)
    }
}

/// Answers published anywhere in the process: an exporter waits on it.
static ANSWERS: std::sync::LazyLock<(Mutex<u64>, Condvar)> = std::sync::LazyLock::new(|| (Mutex::new(0), Condvar::new()));

/// The counters a closed socket leaves in its labels' totals.
#[derive(Clone, Debug, Default)]
pub(crate) struct Totals {
    pub(crate) stats: SocketStats,
    pub(crate) dns: Vec<DnsGauge>,
}

/// One context's sockets, for its metrics.
#[derive(Default)]
pub(crate) struct Registry {
    live: Mutex<HashMap<u64, Weak<SocketShared>>>,
    retired: Mutex<Retired>,
}

#[derive(Default)]
struct Retired {
    totals: HashMap<(SocketType, Labels), Totals>,
    order: VecDeque<(SocketType, Labels)>,
}

impl Registry {
    pub(crate) fn add(&self, s: &Arc<SocketShared>) {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).insert(s.id, Arc::downgrade(s));
    }

    /// A socket closed with these final counts: keep them in its labels' totals.
    pub(crate) fn retire(&self, s: &SocketShared, t: Totals) {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).remove(&s.id);
        let key = (s.kind, s.metrics.labels.lock().unwrap_or_else(|p| p.into_inner()).clone());
        let mut r = self.retired.lock().unwrap_or_else(|p| p.into_inner());
        if !r.totals.contains_key(&key) {
            if r.order.len() >= RETIRED_MAX {
                if let Some(old) = r.order.pop_front() {
                    r.totals.remove(&old);
                }
            }
            r.order.push_back(key.clone());
        }
        let e = r.totals.entry(key).or_default();
        add_counters(&mut e.stats, &t.stats);
        for d in t.dns {
            match e.dns.iter_mut().find(|x| x.endpoint == d.endpoint) {
                Some(x) => {
                    x.lookup_failures += d.lookup_failures;
                    x.added += d.added;
                    x.removed += d.removed;
                }
                None => e.dns.push(DnsGauge { addresses: 0, draining: 0, ..d }),
            }
        }
    }

    fn sockets(&self) -> Vec<Arc<SocketShared>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).values().filter_map(Weak::upgrade).collect()
    }
}

/// Adds every counter (not the gauges) of `b` to `a`.
pub(crate) fn add_counters(a: &mut SocketStats, b: &SocketStats) {
    a.msgs_in += b.msgs_in;
    a.bytes_in += b.bytes_in;
    a.msgs_out += b.msgs_out;
    a.bytes_out += b.bytes_out;
    a.dropped_hwm += b.dropped_hwm;
    a.dropped_no_route += b.dropped_no_route;
    a.dropped_oversized += b.dropped_oversized;
    a.dropped_malformed += b.dropped_malformed;
    a.dropped_unsendable += b.dropped_unsendable;
    a.dropped_vanished += b.dropped_vanished;
    a.dropped_disconnected += b.dropped_disconnected;
    a.hwm_reached += b.hwm_reached;
    a.connections += b.connections;
    a.reconnects += b.reconnects;
    a.handshake_failures += b.handshake_failures;
    a.protocol_errors += b.protocol_errors;
    a.wire_bytes_in += b.wire_bytes_in;
    a.wire_bytes_out += b.wire_bytes_out;
}

/// One live socket as the renderer sees it.
pub(crate) struct View {
    pub(crate) kind: SocketType,
    pub(crate) labels: Labels,
    /// Application side from the snapshot plus the live I/O side.
    pub(crate) stats: SocketStats,
    pub(crate) snap: Option<Arc<Snapshot>>,
    pub(crate) age: Option<Duration>,
}

/// Everything the renderer needs from a set of contexts.
#[derive(Default)]
pub(crate) struct Gathered {
    pub(crate) live: Vec<View>,
    pub(crate) retired: Vec<(SocketType, Labels, Totals)>,
}

/// Asks every socket of `regs` for a snapshot, waits up to `wait` for the answers, and
/// collects what the renderer needs.
pub(crate) fn gather(regs: &[&Registry], wait: Duration) -> Gathered {
    let sockets: Vec<Arc<SocketShared>> = regs.iter().flat_map(|r| r.sockets()).collect();
    if !wait.is_zero() {
        for s in &sockets {
            s.metrics.request(s);
        }
        let deadline = Instant::now() + wait;
        let (m, cv) = &*ANSWERS;
        let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
        while !sockets.iter().all(|s| s.metrics.answered()) {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            g = cv.wait_timeout(g, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
    } else {
        // Ask anyway: the answers serve the next call.
        for s in &sockets {
            s.metrics.request(s);
        }
    }
    let mut out = Gathered::default();
    let now = Instant::now();
    for s in sockets {
        let snap = s.metrics.snap.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut stats = snap.as_ref().map(|(_, x)| x.app.clone()).unwrap_or_default();
        super::stats::add_io(&mut stats, &s.io_stats);
        out.live.push(View {
            kind: s.kind,
            labels: s.metrics.labels.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            stats,
            age: snap.as_ref().map(|(t, _)| now.duration_since(*t)),
            snap: snap.map(|(_, x)| x),
        });
    }
    for r in regs {
        let g = r.retired.lock().unwrap_or_else(|p| p.into_inner());
        for k in &g.order {
            if let Some(t) = g.totals.get(k) {
                out.retired.push((k.0, k.1.clone(), t.clone()));
            }
        }
    }
    out
}

/// The text for the sockets of `regs`.
pub(crate) fn text(regs: &[&Registry], format: Format, wait: Duration) -> String {
    render::render(&gather(regs, wait), format)
}

/// Checks an `OXMQ_NAME` value: at most 64 bytes of letters, digits and `_ - . : /`, so it is
/// a label value an operator chose and needs no escaping.
pub(crate) fn valid_name(v: &[u8]) -> bool {
    v.len() <= 64 && v.iter().all(|&b| b.is_ascii_alphanumeric() || b"_-.:/".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::Format;
    use crate::testing::{eventually, socket};
    use crate::{opt, Context, Error, SocketType};
    use std::io::{Read, Write};
    use std::time::Duration;

    /// The value of the sample whose line starts with `prefix` (name and labels).
    fn value(text: &str, prefix: &str) -> Option<f64> {
        text.lines().find(|l| l.starts_with(prefix)).and_then(|l| l.rsplit(' ').next()).and_then(|v| v.parse().ok())
    }

    #[test]
    fn a_socket_waiting_in_recv_publishes_fresh_counts_at_once() {
        let ctx = Context::new();
        let mut pull = socket(&ctx, SocketType::Pull);
        pull.set_bytes(opt::OXMQ_NAME, b"jobs").unwrap();
        pull.bind("inproc://metrics-fresh").unwrap();
        let mut push = socket(&ctx, SocketType::Push);
        push.connect("inproc://metrics-fresh").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            for _ in 0..3 {
                pull.recv(0).unwrap();
            }
            tx.send(()).unwrap();
            // Waits here (RCVTIMEO): only its mailbox can wake it.
            let _ = pull.recv(0);
            pull
        });
        for i in 0..3u8 {
            push.send(vec![i; 10], 0).unwrap();
        }
        rx.recv().unwrap();
        let l = r#"{type="PULL",name="jobs",endpoint="inproc://metrics-fresh"}"#;
        let mut text = String::new();
        eventually("fresh counts", || {
            // The PUSH, on this very thread, cannot answer: the wait ends at its bound.
            text = ctx.metrics_with(Format::Prometheus, Duration::from_millis(200));
            value(&text, &format!("oxmq_socket_received_messages_total{l}")) == Some(3.0)
        });
        assert_eq!(value(&text, &format!("oxmq_socket_received_bytes_total{l}")), Some(30.0));
        assert!(value(&text, &format!("oxmq_socket_snapshot_age_seconds{l}")).unwrap() < 1.0, "{text}");
        push.send("last", 0).unwrap();
        let _pull = t.join().unwrap();
    }

    #[test]
    fn a_closed_sockets_counts_stay_and_a_gone_peers_queue_is_counted() {
        let ctx = Context::new();
        let mut push = socket(&ctx, SocketType::Push);
        push.bind("inproc://metrics-gone").unwrap();
        let mut pull = socket(&ctx, SocketType::Pull);
        pull.connect("inproc://metrics-gone").unwrap();
        for _ in 0..5 {
            push.send("x", 0).unwrap();
        }
        drop(pull); // never read them
        eventually("the peer's queue counted", || push.stats().dropped_disconnected == 5);
        drop(push);
        let text = ctx.metrics();
        let l = r#"{type="PUSH",name="",endpoint="inproc://metrics-gone""#;
        assert_eq!(value(&text, &format!("oxmq_socket_sent_messages_total{l}}}")), Some(5.0), "{text}");
        assert_eq!(value(&text, &format!("oxmq_socket_dropped_messages_total{l},reason=\"disconnected\"}}")), Some(5.0));
        assert_eq!(value(&text, &format!("oxmq_sockets{l}}}")), Some(0.0));
    }

    #[test]
    fn names_are_checked() {
        let ctx = Context::new();
        let mut s = socket(&ctx, SocketType::Pub);
        assert_eq!(s.get_bytes(opt::OXMQ_NAME).unwrap(), b"\0");
        s.set_bytes(opt::OXMQ_NAME, b"md-feed.eu:1/a_b").unwrap();
        assert_eq!(s.get_bytes(opt::OXMQ_NAME).unwrap(), b"md-feed.eu:1/a_b\0");
        s.set_bytes(opt::OXMQ_NAME, b"c-string\0").unwrap();
        assert_eq!(s.get_bytes(opt::OXMQ_NAME).unwrap(), b"c-string\0");
        for bad in [&b"a b"[..], b"quote\"", b"new\nline", &[b'x'; 65][..]] {
            assert_eq!(s.set_bytes(opt::OXMQ_NAME, bad), Err(Error::Invalid));
        }
    }

    #[test]
    fn fanout_and_queue_gauges() {
        let ctx = Context::new();
        let mut publ = socket(&ctx, SocketType::Pub);
        // An inproc queue's limit is the sender's SNDHWM plus the receiver's RCVHWM: 3.
        publ.set_int(opt::SNDHWM, 2).unwrap();
        publ.bind("inproc://metrics-fan").unwrap();
        let mut subs: Vec<_> = (0..3)
            .map(|i| {
                let mut s = socket(&ctx, SocketType::Sub);
                s.set_int(opt::RCVHWM, 1).unwrap();
                s.connect("inproc://metrics-fan").unwrap();
                s.subscribe(if i == 0 { "a" } else { "b" }).unwrap();
                s
            })
            .collect();
        // PUB takes subscriptions when it is used; HWM drops are counted per subscriber.
        eventually("subscriptions", || {
            let _ = publ.send("zz", 0);
            publ.metrics_snapshot().fanout == Some((3, 2))
        });
        for _ in 0..5 {
            publ.send("b-news", 0).unwrap();
        }
        let snap = publ.metrics_snapshot();
        let p = &snap.pipes[0];
        assert_eq!((p.via.as_str(), p.pipes, p.queued_out, p.max_out, p.full), ("inproc://metrics-fan", 3, 6, 3, 2), "{snap:?}");
        assert_eq!(snap.app.dropped_hwm, 4);
        assert_eq!(snap.app.hwm_reached, 4);
        // A caller on the socket's own thread asks without waiting, and gets the counts the
        // socket publishes at its next call.
        let _ = ctx.metrics_with(Format::Prometheus, Duration::ZERO);
        publ.stats();
        let text = ctx.metrics_with(Format::Prometheus, Duration::ZERO);
        let l = r#"{type="PUB",name="",endpoint="inproc://metrics-fan""#;
        assert_eq!(value(&text, &format!("oxmq_socket_subscribers{l}}}")), Some(3.0), "{text}");
        assert_eq!(value(&text, &format!("oxmq_socket_subscriptions{l}}}")), Some(2.0));
        assert_eq!(value(&text, &format!("oxmq_socket_pipes_full{l},via=\"inproc://metrics-fan\"}}")), Some(2.0));
        assert_eq!(value(&text, &format!("oxmq_socket_dropped_messages_total{l},reason=\"hwm\"}}")), Some(4.0));
        assert_eq!(subs[1].recv(0).unwrap(), "b-news");
        subs.clear();
    }

    #[test]
    fn the_endpoint_serves_both_formats_and_nothing_else() {
        let ctx = Context::new();
        let mut s = socket(&ctx, SocketType::Rep);
        s.bind("tcp://127.0.0.1:*").unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        crate::metrics::http::register(&ctx.env);
        assert!(crate::metrics::http::serve_on(l, Duration::from_millis(10)));
        let get = |req: &str| {
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            c.write_all(req.as_bytes()).unwrap();
            let mut out = String::new();
            c.read_to_string(&mut out).unwrap();
            out
        };
        let r = get("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
        assert!(r.contains("Content-Type: text/plain; version=0.0.4"), "{r}");
        assert!(r.contains(r#"oxmq_sockets{type="REP",name="",endpoint="tcp://127.0.0.1:*"} 1"#), "{r}");
        let r = get("GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n\r\n");
        assert!(r.contains("application/openmetrics-text") && r.ends_with("# EOF\n"), "{r}");
        assert!(get("GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get("POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        let r = get("HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200") && r.ends_with("\r\n\r\n"), "{r}");
    }
}
