//! The context: a handle on the state its sockets share (`socket::env`): I/O threads, the
//! inproc endpoint registry, the live sockets and the context's options. I/O threads start
//! lazily with the first bind or connect, so IO_THREADS takes effect until then (later it is
//! kept and read back, as in libzmq).

use crate::error::Result;
use crate::socket::env::Env;
use crate::socket::{Socket, SocketType, SyncSocket};
use std::sync::Arc;

/// A ZeroMQ context. Cheap to clone; every clone is the same context.
#[derive(Clone)]
pub struct Context {
    pub(crate) env: Arc<Env>,
}

impl Context {
    /// Creates a context with libzmq's defaults (one I/O thread, 1023 sockets).
    pub fn new() -> Context {
        let env = Env::new();
        crate::metrics::http::on_new_context(&env);
        Context { env }
    }

    /// Every socket's counters in the Prometheus text format, as the process's `/metrics`
    /// endpoint serves them (`OXMQ_METRICS_ADDR`): for an application that serves them
    /// itself. Waits up to 100 ms for the sockets to publish fresh counts (see
    /// [`Context::metrics_with`]).
    pub fn metrics(&self) -> String {
        self.metrics_with(crate::metrics::Format::Prometheus, crate::socket::metrics::DEFAULT_WAIT)
    }

    /// [`Context::metrics`] in `format`, waiting up to `wait` for the sockets' fresh counts.
    /// A socket publishes them when its thread next calls into it, or at once while that
    /// thread waits in a blocking call or a poll; one that has not by then is reported from
    /// its last publication (`oxmq_socket_snapshot_age_seconds`). `wait` zero returns at once
    /// and asks for fresh counts for the next call: for a caller on the sockets' own thread.
    pub fn metrics_with(&self, format: crate::metrics::Format, wait: std::time::Duration) -> String {
        crate::socket::metrics::text(&[&self.env.metrics], format, wait)
    }

    /// Creates a socket of the given type.
    pub fn socket(&self, kind: SocketType) -> Result<Socket> {
        Socket::new(self.env.clone(), kind)
    }

    /// A thread-safe socket of a draft type (`Invalid` for the classic types, which libzmq
    /// does not make thread-safe either).
    pub fn sync_socket(&self, kind: SocketType) -> Result<SyncSocket> {
        SyncSocket::new(&self.env, kind)
    }

    /// Sets a context option (`opt::IO_THREADS`, `MAX_SOCKETS`, `MAX_MSGSZ`, `CTX_IPV6`,
    /// `CTX_BLOCKY`, `THREAD_PRIORITY`, `THREAD_SCHED_POLICY`, `THREAD_AFFINITY_CPU_ADD`,
    /// `THREAD_AFFINITY_CPU_REMOVE`, `THREAD_NAME_PREFIX`, `ZERO_COPY_RECV`). The thread options apply to I/O
    /// threads started afterwards (they start with the first bind or connect), as in libzmq.
    pub fn set(&self, option: i32, value: i32) -> Result<()> {
        self.env.set(option, value)
    }

    /// Sets a context option given as bytes (`zmq_ctx_set_ext`): `THREAD_NAME_PREFIX` as text
    /// of at most 16 bytes (a trailing NUL is dropped), or any int option as its 4 bytes.
    pub fn set_bytes(&self, option: i32, value: &[u8]) -> Result<()> {
        self.env.set_bytes(option, value)
    }

    /// Reads a context option as bytes (`zmq_ctx_get_ext`): `THREAD_NAME_PREFIX` as its text
    /// with a NUL, any other as the 4 bytes of its int.
    pub fn get_bytes(&self, option: i32) -> Result<Vec<u8>> {
        self.env.get_bytes(option)
    }

    /// Reads a context option (also `SOCKET_LIMIT` and `MSG_T_SIZE`).
    pub fn get(&self, option: i32) -> Result<i32> {
        self.env.get(option)
    }

    /// Timers pending in the context's I/O threads, as of each one's last turn (handshake,
    /// reconnect, heartbeat and linger deadlines). For tests and diagnostics: a connection
    /// churn must leave none behind.
    #[doc(hidden)]
    pub fn io_timers_pending(&self) -> usize {
        self.env.io_timers_pending()
    }

    /// Sessions (connections, and connects waiting to reconnect) each I/O thread runs, in
    /// thread order. For tests and diagnostics: accepted connections spread over the threads.
    #[doc(hidden)]
    pub fn io_sessions(&self) -> Vec<usize> {
        self.env.io_sessions()
    }

    /// Makes every blocking and later call on this context's sockets fail with
    /// [`Error::Term`](crate::Error::Term). Sockets must still be closed (dropped). Idempotent.
    pub fn shutdown(&self) {
        self.env.shutdown()
    }

    /// Shuts down, waits until every socket is closed, then stops the I/O threads after
    /// they have delivered lingering messages. Blocks like `zmq_ctx_term`.
    pub fn term(&self) -> Result<()> {
        self.env.term()
    }
}

impl Default for Context {
    fn default() -> Context {
        Context::new()
    }
}
