//! Metrics: every socket's counters in the Prometheus text format or OpenMetrics
//! ([`Context::metrics`](crate::Context::metrics), `oxmq_ctx_metrics` in C), and the process's
//! `/metrics` endpoint when `OXMQ_METRICS_ADDR` is set (`http`). What is counted and how it is
//! gathered without touching the message path: `socket/metrics/`.

pub use crate::socket::metrics::Format;

pub(crate) mod http;
