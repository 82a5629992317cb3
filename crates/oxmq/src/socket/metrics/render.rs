//! The exposition formats: Prometheus text 0.0.4 and OpenMetrics 1.0.
//!
//! Naming follows Prometheus' rules: an `oxmq_` prefix, base units in the name (`_bytes`,
//! `_seconds`; `_messages` for counts of messages), counters ending in `_total`, every family
//! with `# HELP` and `# TYPE`. In OpenMetrics a counter family is named without `_total`
//! (its samples keep it) and the text ends with `# EOF`. Sockets with equal labels are summed.

use super::{add_counters, Gathered, Labels, PipeGauge};
use crate::socket::{SocketStats, SocketType};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Which text format to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// `text/plain; version=0.0.4`: what `promtool check metrics` and every Prometheus read.
    Prometheus,
    /// `application/openmetrics-text; version=1.0.0`.
    OpenMetrics,
}

impl Format {
    /// The HTTP `Content-Type` of this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// libzmq's name of a socket type, the `type` label (the name on the wire; DGRAM has none).
pub(crate) fn type_name(k: SocketType) -> &'static str {
    k.wire().map_or("DGRAM", |w| w.name())
}

/// A label value with `\`, `"` and newlines escaped (both formats' rule).
fn esc(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

type Key = (&'static str, Labels);

/// Per label set: summed counters and gauges.
#[derive(Default)]
struct Agg {
    sockets: u64,
    stats: SocketStats,
    peers: u64,
    subscribers: Option<u64>,
    subscriptions: Option<u64>,
    age: f64,
    pipes: BTreeMap<String, PipeGauge>,
    /// via → (active, draining, lookup failures, added, removed)
    dns: BTreeMap<String, [u64; 5]>,
}

fn aggregate(g: &Gathered) -> BTreeMap<Key, Agg> {
    let mut m: BTreeMap<Key, Agg> = BTreeMap::new();
    for (kind, labels, t) in &g.retired {
        let a = m.entry((type_name(*kind), labels.clone())).or_default();
        add_counters(&mut a.stats, &t.stats);
        for d in &t.dns {
            let e = a.dns.entry(d.endpoint.clone()).or_default();
            e[2] += d.lookup_failures;
            e[3] += d.added;
            e[4] += d.removed;
        }
    }
    for v in &g.live {
        let a = m.entry((type_name(v.kind), v.labels.clone())).or_default();
        a.sockets += 1;
        add_counters(&mut a.stats, &v.stats);
        a.peers += v.stats.peers;
        if let Some(age) = v.age {
            a.age = a.age.max(age.as_secs_f64());
        }
        let Some(s) = &v.snap else { continue };
        if let Some((subs, topics)) = s.fanout {
            *a.subscribers.get_or_insert(0) += subs;
            *a.subscriptions.get_or_insert(0) += topics;
        }
        for p in &s.pipes {
            let e = a.pipes.entry(p.via.clone()).or_default();
            e.pipes += p.pipes;
            e.queued_out += p.queued_out;
            e.queued_in += p.queued_in;
            e.max_out = e.max_out.max(p.max_out);
            e.max_in = e.max_in.max(p.max_in);
            e.full += p.full;
        }
        for d in &s.dns {
            let e = a.dns.entry(d.endpoint.clone()).or_default();
            e[0] += d.addresses;
            e[1] += d.draining;
            e[2] += d.lookup_failures;
            e[3] += d.added;
            e[4] += d.removed;
        }
    }
    m
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
}

struct Out {
    s: String,
    format: Format,
}

impl Out {
    /// Starts a family: `name` is the sample name (counters with `_total`).
    fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let fam = match (kind, self.format) {
            (Kind::Counter, Format::OpenMetrics) => name.strip_suffix("_total").unwrap_or(name),
            _ => name,
        };
        let t = if kind == Kind::Counter { "counter" } else { "gauge" };
        let _ = writeln!(self.s, "# HELP {fam} {help}");
        let _ = writeln!(self.s, "# TYPE {fam} {t}");
    }

    fn sample(&mut self, name: &str, key: &Key, extra: &[(&str, &str)], value: impl std::fmt::Display) {
        let _ = write!(self.s, "{name}{{type=\"{}\",name=\"{}\",endpoint=\"{}\"", key.0, esc(&key.1.name), esc(&key.1.endpoint));
        for (k, v) in extra {
            let _ = write!(self.s, ",{k}=\"{}\"", esc(v));
        }
        let _ = writeln!(self.s, "}} {value}");
    }
}

/// Renders what [`super::gather`] collected.
pub(crate) fn render(g: &Gathered, format: Format) -> String {
    let m = aggregate(g);
    let mut o = Out { s: String::new(), format };
    let live = |a: &Agg| a.sockets > 0;

    o.family("oxmq_sockets", Kind::Gauge, "Open sockets with these labels.");
    for (k, a) in &m {
        o.sample("oxmq_sockets", k, &[], a.sockets);
    }

    type Counter = (&'static str, &'static str, fn(&SocketStats) -> u64);
    let counters: [Counter; 12] = [
        ("oxmq_socket_received_messages_total", "Messages the application received (whole messages).", |s| s.msgs_in),
        ("oxmq_socket_received_bytes_total", "Bytes of the messages the application received.", |s| s.bytes_in),
        ("oxmq_socket_sent_messages_total", "Messages the application sent (those then dropped included).", |s| s.msgs_out),
        ("oxmq_socket_sent_bytes_total", "Bytes of the messages the application sent.", |s| s.bytes_out),
        (
            "oxmq_socket_hwm_reached_total",
            "Sends that found a peer's queue at its high-water mark (PUB and ROUTER drop the message, the others wait or fail with EAGAIN).",
            |s| s.hwm_reached,
        ),
        ("oxmq_socket_connections_total", "tcp/ipc connections that completed their handshake.", |s| s.connections),
        ("oxmq_socket_reconnects_total", "Of those, connections a connecting socket re-established after losing its peer.", |s| s.reconnects),
        ("oxmq_socket_handshake_failures_total", "tcp/ipc connections that failed or timed out in the ZMTP handshake.", |s| s.handshake_failures),
        ("oxmq_socket_protocol_errors_total", "Connections dropped after the handshake for breaking the protocol.", |s| s.protocol_errors),
        ("oxmq_socket_wire_received_bytes_total", "Bytes read from tcp/ipc connections, framing included.", |s| s.wire_bytes_in),
        ("oxmq_socket_wire_sent_bytes_total", "Bytes written to tcp/ipc connections, framing included.", |s| s.wire_bytes_out),
        ("oxmq_socket_dropped_messages_total", "Messages dropped, by reason (see the README's operations guide).", |_| 0),
    ];
    for (name, help, f) in counters {
        o.family(name, Kind::Counter, help);
        for (k, a) in &m {
            if name == "oxmq_socket_dropped_messages_total" {
                let s = &a.stats;
                for (reason, v) in [
                    ("hwm", s.dropped_hwm),
                    ("no_route", s.dropped_no_route),
                    ("oversized", s.dropped_oversized),
                    ("malformed", s.dropped_malformed),
                    ("unsendable", s.dropped_unsendable),
                    ("disconnected", s.dropped_disconnected),
                    ("vanished", s.dropped_vanished),
                ] {
                    o.sample(name, k, &[("reason", reason)], v);
                }
            } else {
                o.sample(name, k, &[], f(&a.stats));
            }
        }
    }

    o.family("oxmq_socket_peers", Kind::Gauge, "Peers connected now (tcp/ipc past the handshake, and inproc).");
    for (k, a) in m.iter().filter(|(_, a)| live(a)) {
        o.sample("oxmq_socket_peers", k, &[], a.peers);
    }
    o.family("oxmq_socket_pipes", Kind::Gauge, "Pipes (one per peer) by the endpoint they came through.");
    for (k, a) in &m {
        for (via, p) in &a.pipes {
            o.sample("oxmq_socket_pipes", k, &[("via", via)], p.pipes);
        }
    }
    o.family(
        "oxmq_socket_queued_messages",
        Kind::Gauge,
        "Messages queued in the pipes of an endpoint: out, towards peers; in, received and not read yet.",
    );
    for (k, a) in &m {
        for (via, p) in &a.pipes {
            o.sample("oxmq_socket_queued_messages", k, &[("via", via), ("direction", "out")], p.queued_out);
            o.sample("oxmq_socket_queued_messages", k, &[("via", via), ("direction", "in")], p.queued_in);
        }
    }
    o.family("oxmq_socket_queued_max_messages", Kind::Gauge, "The deepest single pipe's queue of an endpoint, by direction.");
    for (k, a) in &m {
        for (via, p) in &a.pipes {
            o.sample("oxmq_socket_queued_max_messages", k, &[("via", via), ("direction", "out")], p.max_out);
            o.sample("oxmq_socket_queued_max_messages", k, &[("via", via), ("direction", "in")], p.max_in);
        }
    }
    o.family("oxmq_socket_pipes_full", Kind::Gauge, "Pipes of an endpoint whose outbound queue is at its high-water mark now.");
    for (k, a) in &m {
        for (via, p) in &a.pipes {
            o.sample("oxmq_socket_pipes_full", k, &[("via", via)], p.full);
        }
    }
    o.family("oxmq_socket_subscribers", Kind::Gauge, "PUB, XPUB, RADIO: peers subscribed to (or joined to) anything.");
    for (k, a) in &m {
        if let (Some(s), true) = (a.subscribers, matches!(k.0, "PUB" | "XPUB" | "RADIO")) {
            o.sample("oxmq_socket_subscribers", k, &[], s);
        }
    }
    o.family(
        "oxmq_socket_subscriptions",
        Kind::Gauge,
        "Distinct subscriptions (groups): a publisher's from its peers, a subscriber's own.",
    );
    for (k, a) in &m {
        if let Some(s) = a.subscriptions {
            o.sample("oxmq_socket_subscriptions", k, &[], s);
        }
    }
    o.family(
        "oxmq_socket_dns_addresses",
        Kind::Gauge,
        "A followed endpoint's addresses (OXMQ_DNS_FOLLOW): active, or draining after they left the name.",
    );
    for (k, a) in m.iter().filter(|(_, a)| live(a)) {
        for (via, d) in &a.dns {
            o.sample("oxmq_socket_dns_addresses", k, &[("via", via), ("state", "active")], d[0]);
            o.sample("oxmq_socket_dns_addresses", k, &[("via", via), ("state", "draining")], d[1]);
        }
    }
    o.family(
        "oxmq_socket_dns_lookup_failures_total",
        Kind::Counter,
        "Lookups of a followed name that got no answer (the connections were kept).",
    );
    for (k, a) in &m {
        for (via, d) in &a.dns {
            o.sample("oxmq_socket_dns_lookup_failures_total", k, &[("via", via)], d[2]);
        }
    }
    o.family(
        "oxmq_socket_dns_address_changes_total",
        Kind::Counter,
        "Addresses a followed name gained (added) or lost (removed).",
    );
    for (k, a) in &m {
        for (via, d) in &a.dns {
            o.sample("oxmq_socket_dns_address_changes_total", k, &[("via", via), ("change", "added")], d[3]);
            o.sample("oxmq_socket_dns_address_changes_total", k, &[("via", via), ("change", "removed")], d[4]);
        }
    }
    o.family(
        "oxmq_socket_snapshot_age_seconds",
        Kind::Gauge,
        "Age of the application-side counts: a socket answers at its next call, or at once while it waits in a blocking call or poll.",
    );
    for (k, a) in m.iter().filter(|(_, a)| live(a)) {
        o.sample("oxmq_socket_snapshot_age_seconds", k, &[], format!("{:.3}", a.age));
    }
    if format == Format::OpenMetrics {
        o.s.push_str("# EOF\n");
    }
    o.s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::socket::metrics::{Snapshot, Totals, View};
    use std::sync::Arc;

    fn view(kind: SocketType, name: &str, ep: &str, msgs_out: u64) -> View {
        let app = SocketStats { msgs_out, ..Default::default() };
        let snap = Snapshot {
            app: app.clone(),
            pipes: vec![PipeGauge { via: ep.to_string(), pipes: 2, queued_out: 5, queued_in: 0, max_out: 4, max_in: 0, full: 1 }],
            fanout: Some((3, 7)),
            dns: Vec::new(),
        };
        View {
            kind,
            labels: Labels { name: name.into(), endpoint: ep.into() },
            stats: app,
            snap: Some(Arc::new(snap)),
            age: Some(std::time::Duration::from_millis(1500)),
        }
    }

    #[test]
    fn equal_labels_are_summed_and_closed_sockets_stay_in_the_totals() {
        let g = Gathered {
            live: vec![view(SocketType::Pub, "feed", "tcp://*:5556", 10), view(SocketType::Pub, "feed", "tcp://*:5556", 5)],
            retired: vec![(
                SocketType::Pub,
                Labels { name: "feed".into(), endpoint: "tcp://*:5556".into() },
                Totals { stats: SocketStats { msgs_out: 100, dropped_hwm: 3, ..Default::default() }, dns: Vec::new() },
            )],
        };
        let t = render(&g, Format::Prometheus);
        let l = r#"{type="PUB",name="feed",endpoint="tcp://*:5556"}"#;
        assert!(t.contains(&format!("oxmq_sockets{l} 2\n")), "{t}");
        assert!(t.contains(&format!("oxmq_socket_sent_messages_total{l} 115\n")), "{t}");
        assert!(
            t.contains(r#"oxmq_socket_dropped_messages_total{type="PUB",name="feed",endpoint="tcp://*:5556",reason="hwm"} 3"#),
            "{t}"
        );
        assert!(t.contains(r#"oxmq_socket_queued_messages{type="PUB",name="feed",endpoint="tcp://*:5556",via="tcp://*:5556",direction="out"} 10"#), "{t}");
        assert!(t.contains(r#"oxmq_socket_queued_max_messages{type="PUB",name="feed",endpoint="tcp://*:5556",via="tcp://*:5556",direction="out"} 4"#), "{t}");
        assert!(t.contains(&format!("oxmq_socket_subscribers{l} 6\n")), "{t}");
        assert!(t.contains(&format!("oxmq_socket_snapshot_age_seconds{l} 1.500\n")), "{t}");
        assert!(t.contains("# TYPE oxmq_socket_sent_messages_total counter\n"));
        assert!(!t.contains("# EOF"));
    }

    #[test]
    fn openmetrics_names_counter_families_without_total_and_ends_with_eof() {
        let g = Gathered { live: vec![view(SocketType::Push, "", "tcp://h:1", 1)], retired: Vec::new() };
        let t = render(&g, Format::OpenMetrics);
        assert!(t.contains("# TYPE oxmq_socket_sent_messages counter\n"), "{t}");
        assert!(t.contains("oxmq_socket_sent_messages_total{"), "{t}");
        assert!(t.ends_with("# EOF\n"));
        // No subscriber gauge for a type that has none.
        assert!(!t.contains("oxmq_socket_subscribers{"), "{t}");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(esc("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    }
}
