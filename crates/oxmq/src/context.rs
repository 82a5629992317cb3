//! The context: I/O threads, the inproc endpoint registry, and the life of its sockets.
//!
//! A context owns nothing a socket needs on its hot path. Sockets hold an `Arc` to it for three
//! things: choosing an I/O thread when they bind or connect, finding inproc peers, and learning
//! that the context is shutting down. I/O threads start lazily with the first bind or connect,
//! so IO_THREADS takes effect until then.

use crate::error::{Error, Result};
use crate::io::IoThread;
use crate::mailbox::Mailbox;
use crate::opt;
use crate::socket::{Socket, SocketType};
use crate::transport::inproc::Registry;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// A ZeroMQ context. Cheap to clone; every clone is the same context.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<CtxInner>,
}

struct Config {
    io_threads: i32,
    max_sockets: i32,
    max_msgsz: i32,
    ipv6: bool,
    blocky: bool,
    thread_priority: i32,
    thread_sched_policy: i32,
    threads: ThreadSetup,
    /// `ZERO_COPY_RECV` (draft), kept and read back: whether a received body shares the
    /// receive buffer is oxmq's own choice per size (see `msg.rs`), so nothing reads it.
    zero_copy_recv: bool,
}

/// How the context's I/O threads are named and scheduled (libzmq's thread options).
#[derive(Clone, Default)]
pub(crate) struct ThreadSetup {
    /// `THREAD_NAME_PREFIX` (an int, or up to 16 bytes through `set_bytes`): threads are
    /// named `<prefix>/oxmq-io-<n>`.
    pub(crate) name_prefix: Option<String>,
    /// `THREAD_AFFINITY_CPU_ADD`/`REMOVE`: the CPUs the threads may run on (empty: any).
    pub(crate) cpus: std::collections::BTreeSet<usize>,
    /// `THREAD_SCHED_POLICY` and `THREAD_PRIORITY`, applied with `pthread_setschedparam`.
    pub(crate) policy: Option<i32>,
    pub(crate) priority: Option<i32>,
}

struct Sockets {
    live: HashMap<u64, Arc<Mailbox>>,
    next_id: u64,
}

pub(crate) struct CtxInner {
    config: Mutex<Config>,
    io: OnceLock<Vec<Arc<IoThread>>>,
    next_io: AtomicUsize,
    sockets: Mutex<Sockets>,
    sockets_cv: Condvar,
    terminating: AtomicBool,
    pub(crate) inproc: Mutex<Registry>,
}

/// libzmq's ZMQ_MAX_SOCKETS_DFLT.
const MAX_SOCKETS_DEFAULT: i32 = 1023;

impl Context {
    /// Creates a context with libzmq's defaults (one I/O thread, 1023 sockets).
    pub fn new() -> Context {
        Context {
            inner: Arc::new(CtxInner {
                config: Mutex::new(Config {
                    io_threads: 1,
                    max_sockets: MAX_SOCKETS_DEFAULT,
                    max_msgsz: i32::MAX,
                    ipv6: false,
                    blocky: true,
                    thread_priority: -1,
                    thread_sched_policy: -1,
                    threads: ThreadSetup::default(),
                    zero_copy_recv: true,
                }),
                io: OnceLock::new(),
                next_io: AtomicUsize::new(0),
                sockets: Mutex::new(Sockets { live: HashMap::new(), next_id: 1 }),
                sockets_cv: Condvar::new(),
                terminating: AtomicBool::new(false),
                inproc: Mutex::new(Registry::default()),
            }),
        }
    }

    /// Creates a socket of the given type.
    pub fn socket(&self, kind: SocketType) -> Result<Socket> {
        Socket::new(self.clone(), kind)
    }

    /// Sets a context option (`opt::IO_THREADS`, `MAX_SOCKETS`, `MAX_MSGSZ`, `CTX_IPV6`,
    /// `CTX_BLOCKY`, `THREAD_PRIORITY`, `THREAD_SCHED_POLICY`, `THREAD_AFFINITY_CPU_ADD`,
    /// `THREAD_AFFINITY_CPU_REMOVE`, `THREAD_NAME_PREFIX`, `ZERO_COPY_RECV`). The thread options apply to I/O
    /// threads started afterwards (they start with the first bind or connect), as in libzmq.
    pub fn set(&self, option: i32, value: i32) -> Result<()> {
        let mut c = self.inner.config.lock().unwrap_or_else(|p| p.into_inner());
        match option {
            // Read when the I/O threads start (the first bind or connect). Later it is kept and
            // read back but changes nothing, as in libzmq, whose zmq_ctx_set accepts it at any
            // time (zeromq.js sets it on its shared context whenever asked).
            opt::IO_THREADS if value >= 0 => c.io_threads = value,
            opt::MAX_SOCKETS if value >= 1 => c.max_sockets = value,
            opt::MAX_MSGSZ if value >= 0 => c.max_msgsz = value,
            opt::CTX_IPV6 if value == 0 || value == 1 => c.ipv6 = value == 1,
            opt::CTX_BLOCKY if value == 0 || value == 1 => c.blocky = value == 1,
            // libzmq refuses the defaults (-1) and any negative value (test_ctx_options).
            opt::THREAD_PRIORITY if value >= 0 => {
                c.thread_priority = value;
                c.threads.priority = Some(value);
            }
            opt::THREAD_SCHED_POLICY if value >= 0 => {
                c.thread_sched_policy = value;
                c.threads.policy = Some(value);
            }
            opt::THREAD_AFFINITY_CPU_ADD if value >= 0 => {
                c.threads.cpus.insert(value as usize);
            }
            opt::THREAD_AFFINITY_CPU_REMOVE if value >= 0 => {
                c.threads.cpus.remove(&(value as usize));
            }
            opt::THREAD_NAME_PREFIX if value >= 0 => c.threads.name_prefix = Some(value.to_string()),
            opt::ZERO_COPY_RECV if value == 0 || value == 1 => c.zero_copy_recv = value == 1,
            _ => return Err(Error::Invalid),
        }
        Ok(())
    }

    /// Sets a context option given as bytes (`zmq_ctx_set_ext`): `THREAD_NAME_PREFIX` as text
    /// of at most 16 bytes (a trailing NUL is dropped), or any int option as its 4 bytes.
    pub fn set_bytes(&self, option: i32, value: &[u8]) -> Result<()> {
        if option == opt::THREAD_NAME_PREFIX && value.len() <= 16 {
            let text = value.strip_suffix(&[0]).unwrap_or(value);
            let text = std::str::from_utf8(text).map_err(|_| Error::Invalid)?;
            if text.contains('\0') {
                return Err(Error::Invalid);
            }
            let mut c = self.inner.config.lock().unwrap_or_else(|p| p.into_inner());
            c.threads.name_prefix = Some(text.to_string());
            return Ok(());
        }
        let v: [u8; 4] = value.try_into().map_err(|_| Error::Invalid)?;
        self.set(option, i32::from_ne_bytes(v))
    }

    /// Reads a context option as bytes (`zmq_ctx_get_ext`): `THREAD_NAME_PREFIX` as its text
    /// with a NUL, any other as the 4 bytes of its int.
    pub fn get_bytes(&self, option: i32) -> Result<Vec<u8>> {
        if option == opt::THREAD_NAME_PREFIX {
            let c = self.inner.config.lock().unwrap_or_else(|p| p.into_inner());
            let mut v = c.threads.name_prefix.clone().unwrap_or_default().into_bytes();
            v.push(0);
            return Ok(v);
        }
        Ok(self.get(option)?.to_ne_bytes().to_vec())
    }

    /// Reads a context option (also `SOCKET_LIMIT` and `MSG_T_SIZE`).
    pub fn get(&self, option: i32) -> Result<i32> {
        let c = self.inner.config.lock().unwrap_or_else(|p| p.into_inner());
        Ok(match option {
            opt::IO_THREADS => c.io_threads,
            opt::MAX_SOCKETS => c.max_sockets,
            opt::SOCKET_LIMIT => 65535,
            opt::MAX_MSGSZ => c.max_msgsz,
            opt::MSG_T_SIZE => 64,
            opt::CTX_IPV6 => c.ipv6 as i32,
            opt::CTX_BLOCKY => c.blocky as i32,
            opt::THREAD_SCHED_POLICY => c.thread_sched_policy,
            // The int a prefix set as text reads back as (libzmq: atoi).
            opt::THREAD_NAME_PREFIX => c.threads.name_prefix.as_deref().and_then(|p| p.parse().ok()).unwrap_or(0),
            opt::ZERO_COPY_RECV => c.zero_copy_recv as i32,
            _ => return Err(Error::Invalid),
        })
    }

    /// Timers pending in the context's I/O threads, as of each one's last turn (handshake,
    /// reconnect, heartbeat and linger deadlines). For tests and diagnostics: a connection
    /// churn must leave none behind.
    #[doc(hidden)]
    pub fn io_timers_pending(&self) -> usize {
        self.inner.io.get().map_or(0, |v| v.iter().map(|t| t.timers_pending()).sum())
    }

    /// Sessions (connections, and connects waiting to reconnect) each I/O thread runs, in
    /// thread order. For tests and diagnostics: accepted connections spread over the threads.
    #[doc(hidden)]
    pub fn io_sessions(&self) -> Vec<usize> {
        self.inner.io.get().map_or(Vec::new(), |v| v.iter().map(|t| t.sessions()).collect())
    }

    /// Makes every blocking and later call on this context's sockets fail with
    /// [`Error::Term`]. Sockets must still be closed (dropped). Idempotent.
    pub fn shutdown(&self) {
        if self.inner.terminating.swap(true, Ordering::SeqCst) {
            return;
        }
        let s = self.inner.sockets.lock().unwrap_or_else(|p| p.into_inner());
        for mb in s.live.values() {
            mb.poke();
        }
    }

    /// Shuts down, waits until every socket is closed, then stops the I/O threads after
    /// they have delivered lingering messages. Blocks like `zmq_ctx_term`.
    pub fn term(&self) -> Result<()> {
        self.shutdown();
        let mut s = self.inner.sockets.lock().unwrap_or_else(|p| p.into_inner());
        while !s.live.is_empty() {
            s = self.inner.sockets_cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        drop(s);
        if let Some(threads) = self.inner.io.get() {
            for t in threads {
                t.stop_and_join();
            }
        }
        Ok(())
    }
}

impl Default for Context {
    fn default() -> Context {
        Context::new()
    }
}

impl CtxInner {
    pub(crate) fn is_terminating(&self) -> bool {
        self.terminating.load(Ordering::Acquire)
    }

    pub(crate) fn ipv6_default(&self) -> bool {
        self.config.lock().unwrap_or_else(|p| p.into_inner()).ipv6
    }

    /// BLOCKY: when false, sockets start with LINGER 0 so `term` does not wait (libzmq).
    pub(crate) fn blocky(&self) -> bool {
        self.config.lock().unwrap_or_else(|p| p.into_inner()).blocky
    }

    pub(crate) fn max_msgsz(&self) -> i32 {
        self.config.lock().unwrap_or_else(|p| p.into_inner()).max_msgsz
    }

    /// Registers a new socket's mailbox; enforces MAX_SOCKETS and refuses after shutdown.
    pub(crate) fn register_socket(&self, mailbox: Arc<Mailbox>) -> Result<u64> {
        if self.is_terminating() {
            return Err(Error::Term);
        }
        let max = self.config.lock().unwrap_or_else(|p| p.into_inner()).max_sockets;
        let mut s = self.sockets.lock().unwrap_or_else(|p| p.into_inner());
        if s.live.len() >= max as usize {
            return Err(Error::MFile);
        }
        let id = s.next_id;
        s.next_id += 1;
        s.live.insert(id, mailbox);
        Ok(id)
    }

    pub(crate) fn unregister_socket(&self, id: u64) {
        let mut s = self.sockets.lock().unwrap_or_else(|p| p.into_inner());
        s.live.remove(&id);
        if s.live.is_empty() {
            self.sockets_cv.notify_all();
        }
    }

    /// An I/O thread for a new bind or connect, round robin; starts the threads on first use.
    pub(crate) fn io_thread(&self) -> Result<Arc<IoThread>> {
        let threads = self.io.get_or_init(|| {
            let (n, setup) = {
                let c = self.config.lock().unwrap_or_else(|p| p.into_inner());
                (c.io_threads.max(1), c.threads.clone())
            };
            let threads: Vec<_> = (0..n).filter_map(|i| IoThread::start(i as usize, &setup).ok()).collect();
            IoThread::set_siblings(&threads);
            threads
        });
        if threads.is_empty() {
            return Err(Error::MThread);
        }
        let i = self.next_io.fetch_add(1, Ordering::Relaxed) % threads.len();
        Ok(threads[i].clone())
    }
}

impl Drop for CtxInner {
    fn drop(&mut self) {
        // The last handle is gone, so every socket is closed: let the I/O threads finish
        // lingering deliveries and exit (the same wait zmq_ctx_term does).
        if let Some(threads) = self.io.get() {
            for t in threads {
                t.stop_and_join();
            }
        }
    }
}
