//! A context's shared state, as its sockets use it: the I/O threads (chosen round robin at
//! each bind and connect, started with the first), the inproc endpoint registry, the live
//! sockets (for MAX_SOCKETS and termination), and the context's options. The public
//! [`Context`](crate::Context) is a handle on it.

use super::inproc::Registry;
use crate::error::{Error, Result};
use crate::io::{IoThread, ThreadSetup};
use crate::mailbox::Mailbox;
use crate::opt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

struct Config {
    io_threads: i32,
    max_sockets: i32,
    /// MAX_MSGSZ when the application set it (`get` says INT_MAX otherwise, as libzmq).
    /// libzmq keeps it and enforces it nowhere; oxmq bounds every frame its sockets send and
    /// receive by it, once set. Unset, a message may be as large as memory allows.
    max_msgsz: Option<i32>,
    ipv6: bool,
    blocky: bool,
    thread_priority: i32,
    thread_sched_policy: i32,
    threads: ThreadSetup,
    /// `ZERO_COPY_RECV` (draft), kept and read back: whether a received body shares the
    /// receive buffer is oxmq's own choice per size (see `msg.rs`), so nothing reads it.
    zero_copy_recv: bool,
}

struct Sockets {
    live: HashMap<u64, Arc<Mailbox>>,
    next_id: u64,
}

pub(crate) struct Env {
    config: Mutex<Config>,
    io: OnceLock<Vec<Arc<IoThread>>>,
    next_io: AtomicUsize,
    sockets: Mutex<Sockets>,
    sockets_cv: Condvar,
    terminating: AtomicBool,
    pub(crate) inproc: Mutex<Registry>,
    /// The sockets' counters for the metrics (`metrics/`).
    pub(crate) metrics: super::metrics::Registry,
}

/// libzmq's ZMQ_MAX_SOCKETS_DFLT.
const MAX_SOCKETS_DEFAULT: i32 = 1023;

impl Env {
    /// A context's environment with libzmq's defaults (one I/O thread, 1023 sockets).
    pub(crate) fn new() -> Arc<Env> {
        Arc::new(Env {
            config: Mutex::new(Config {
                io_threads: 1,
                max_sockets: MAX_SOCKETS_DEFAULT,
                max_msgsz: None,
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
            metrics: Default::default(),
        })
    }

    /// Sets a context option (`opt::IO_THREADS`, `MAX_SOCKETS`, `MAX_MSGSZ`, `CTX_IPV6`,
    /// `CTX_BLOCKY`, `THREAD_PRIORITY`, `THREAD_SCHED_POLICY`, `THREAD_AFFINITY_CPU_ADD`,
    /// `THREAD_AFFINITY_CPU_REMOVE`, `THREAD_NAME_PREFIX`, `ZERO_COPY_RECV`). The thread options apply to I/O
    /// threads started afterwards (they start with the first bind or connect), as in libzmq.
    pub(crate) fn set(&self, option: i32, value: i32) -> Result<()> {
        let mut c = self.config.lock().unwrap_or_else(|p| p.into_inner());
        match option {
            opt::IO_THREADS if value >= 0 => {
                if self.io.get().is_some() {
                    // Like libzmq, the thread count is fixed once the first socket exists.
                    return Err(Error::Invalid);
                }
                c.io_threads = value;
            }
            opt::MAX_SOCKETS if value >= 1 => c.max_sockets = value,
            opt::MAX_MSGSZ if value >= 0 => c.max_msgsz = Some(value),
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
    pub(crate) fn set_bytes(&self, option: i32, value: &[u8]) -> Result<()> {
        if option == opt::THREAD_NAME_PREFIX && value.len() <= 16 {
            let text = value.strip_suffix(&[0]).unwrap_or(value);
            let text = std::str::from_utf8(text).map_err(|_| Error::Invalid)?;
            if text.contains('\0') {
                return Err(Error::Invalid);
            }
            let mut c = self.config.lock().unwrap_or_else(|p| p.into_inner());
            c.threads.name_prefix = Some(text.to_string());
            return Ok(());
        }
        let v: [u8; 4] = value.try_into().map_err(|_| Error::Invalid)?;
        self.set(option, i32::from_ne_bytes(v))
    }

    /// Reads a context option as bytes (`zmq_ctx_get_ext`): `THREAD_NAME_PREFIX` as its text
    /// with a NUL, any other as the 4 bytes of its int.
    pub(crate) fn get_bytes(&self, option: i32) -> Result<Vec<u8>> {
        if option == opt::THREAD_NAME_PREFIX {
            let c = self.config.lock().unwrap_or_else(|p| p.into_inner());
            let mut v = c.threads.name_prefix.clone().unwrap_or_default().into_bytes();
            v.push(0);
            return Ok(v);
        }
        Ok(self.get(option)?.to_ne_bytes().to_vec())
    }

    /// Reads a context option (also `SOCKET_LIMIT` and `MSG_T_SIZE`).
    pub(crate) fn get(&self, option: i32) -> Result<i32> {
        let c = self.config.lock().unwrap_or_else(|p| p.into_inner());
        Ok(match option {
            opt::IO_THREADS => c.io_threads,
            opt::MAX_SOCKETS => c.max_sockets,
            opt::SOCKET_LIMIT => 65535,
            opt::MAX_MSGSZ => c.max_msgsz.unwrap_or(i32::MAX),
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
    pub(crate) fn io_timers_pending(&self) -> usize {
        self.io.get().map_or(0, |v| v.iter().map(|t| t.timers_pending()).sum())
    }

    /// Sessions (connections, and connects waiting to reconnect) each I/O thread runs, in
    /// thread order. For tests and diagnostics: accepted connections spread over the threads.
    pub(crate) fn io_sessions(&self) -> Vec<usize> {
        self.io.get().map_or(Vec::new(), |v| v.iter().map(|t| t.sessions()).collect())
    }

    /// Makes every blocking and later call on this context's sockets fail with
    /// [`Error::Term`]. Sockets must still be closed (dropped). Idempotent.
    pub(crate) fn shutdown(&self) {
        if self.terminating.swap(true, Ordering::SeqCst) {
            return;
        }
        let s = self.sockets.lock().unwrap_or_else(|p| p.into_inner());
        for mb in s.live.values() {
            mb.poke();
        }
    }

    /// Shuts down, waits until every socket is closed, then stops the I/O threads after
    /// they have delivered lingering messages. Blocks like `zmq_ctx_term`.
    pub(crate) fn term(&self) -> Result<()> {
        self.shutdown();
        let mut s = self.sockets.lock().unwrap_or_else(|p| p.into_inner());
        while !s.live.is_empty() {
            s = self.sockets_cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        drop(s);
        if let Some(threads) = self.io.get() {
            for t in threads {
                t.stop_and_join();
            }
        }
        Ok(())
    }
}

impl Env {
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

    /// MAX_MSGSZ if the application set it.
    pub(crate) fn max_msgsz(&self) -> Option<i32> {
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

impl Drop for Env {
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
