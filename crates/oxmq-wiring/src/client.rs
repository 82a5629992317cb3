//! The name-service client: one DEALER connection per wiring handle, a session id, and a
//! heartbeat thread that keeps the session's names alive and notices when a watched name
//! moves, vanishes or comes back.
//!
//! Requests are synchronous round trips (send, then wait for the reply with the same id, at
//! most the request timeout): a name service that does not answer is an error, never a hang.
//! The connection sits behind a mutex shared by the application thread and the heartbeat
//! thread; a request waits at most for one heartbeat round trip in front of it.
//!
//! When a PING finds the session unknown (the server restarted, or the client moved to
//! another server sharing an etcd directory, or the session expired while this process was
//! stopped), the client registers its names again. With an embedded service (empty host) a
//! client whose server is gone starts one itself on the same port, so the directory outlives
//! the process that started it first.

use crate::protocol::{self, ErrCode, Record, Reply, Request};
use crate::server::{Backend, NameServer};
use crate::{Result, WiringError};
use oxmq::{Context, Msg, Socket, SocketType};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Timing of a client.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// How long a request waits for its reply before the service counts as unreachable.
    pub request_timeout: Duration,
    /// A name outlives its owner's last heartbeat by at most this much.
    pub ttl: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing { request_timeout: Duration::from_secs(2), ttl: Duration::from_secs(3) }
    }
}

struct Conn {
    sock: Socket,
    next_id: u64,
}

struct Inner {
    /// The service's ZMTP endpoint (`tcp://host:port`).
    endpoint: String,
    /// Start a server on `endpoint` when none answers (empty host).
    embedded: bool,
    conn: Mutex<Conn>,
    session: String,
    timing: Timing,
    /// Names this session registered, to register again after UNKNOWN_SESSION.
    owned: Mutex<HashMap<String, Record>>,
    /// Names the handle is wired to and what they resolved to last.
    watched: Mutex<HashMap<String, Option<Record>>>,
    /// Names whose record changed since the handle last looked.
    moved: Mutex<Vec<(String, Option<Record>)>>,
    moved_flag: AtomicBool,
    stop: Mutex<bool>,
    wake: Condvar,
    _ctx: Context,
}

/// A client of one name service.
pub struct NameClient {
    inner: Arc<Inner>,
    heartbeat: Option<JoinHandle<()>>,
}

/// Embedded servers of this process, by endpoint; they live as long as the process.
fn embedded_servers() -> &'static Mutex<HashMap<String, NameServer>> {
    static S: OnceLock<Mutex<HashMap<String, NameServer>>> = OnceLock::new();
    S.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Starts an in-process server at `endpoint` unless one of this process already runs there;
/// `AddrInUse` when another process serves it.
fn ensure_embedded(endpoint: &str) -> Result<()> {
    let mut map = lock(embedded_servers());
    if map.contains_key(endpoint) {
        return Ok(());
    }
    let s = NameServer::start(endpoint, Backend::Memory)?;
    map.insert(endpoint.to_string(), s);
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn new_session() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most `b.len()` bytes into `b`.
    let got = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    let r = if got == 8 { u64::from_ne_bytes(b) } else { 0 };
    format!("{:x}-{:x}-{:x}-{:x}", std::process::id(), t as u64, r, N.fetch_add(1, Ordering::Relaxed))
}

impl NameClient {
    /// Connects to the service at `endpoint` and checks that it answers. With `embedded`, a
    /// server is started in this process when none answers there.
    pub fn connect(endpoint: &str, embedded: bool, timing: Timing) -> Result<NameClient> {
        if embedded {
            match ensure_embedded(endpoint) {
                Ok(()) | Err(WiringError::Socket(oxmq::Error::AddrInUse)) => {}
                Err(e) => return Err(e),
            }
        }
        let ctx = Context::new();
        let mut sock = ctx.socket(SocketType::Dealer)?;
        sock.set_int(oxmq::opt::LINGER, 0)?;
        sock.set_int(oxmq::opt::IMMEDIATE, 1)?;
        sock.set_int(oxmq::opt::RECONNECT_IVL, 50)?;
        sock.set_int(oxmq::opt::RECONNECT_IVL_MAX, 500)?;
        sock.connect(endpoint).map_err(|_| WiringError::BadLocation(endpoint.to_string()))?;
        let inner = Arc::new(Inner {
            endpoint: endpoint.to_string(),
            embedded,
            conn: Mutex::new(Conn { sock, next_id: 1 }),
            session: new_session(),
            timing,
            owned: Mutex::new(HashMap::new()),
            watched: Mutex::new(HashMap::new()),
            moved: Mutex::new(Vec::new()),
            moved_flag: AtomicBool::new(false),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            _ctx: ctx,
        });
        // One round trip proves the service is there (an unknown session is a fine answer).
        inner.request(&Request::Ping { session: inner.session.clone(), ttl_ms: inner.ttl_ms() })?;
        let hb = inner.clone();
        let heartbeat = std::thread::Builder::new()
            .name("oxmq-wiring-heartbeat".into())
            .spawn(move || hb.heartbeat_loop())
            .map_err(|_| WiringError::Socket(oxmq::Error::NoMem))?;
        Ok(NameClient { inner, heartbeat: Some(heartbeat) })
    }

    /// The service's endpoint.
    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint
    }

    /// Registers `name` for this session. `NameTaken` when another session owns it.
    pub fn register(&self, name: &str, record: &Record) -> Result<()> {
        let req = Request::Register {
            session: self.inner.session.clone(),
            ttl_ms: self.inner.ttl_ms(),
            name: name.to_string(),
            record: record.clone(),
        };
        match self.inner.request(&req)? {
            Reply::Ok(_) => {
                lock(&self.inner.owned).insert(name.to_string(), record.clone());
                Ok(())
            }
            Reply::Err(ErrCode::Taken, _) => Err(WiringError::NameTaken(name.to_string())),
            Reply::Err(code, why) => Err(reply_error(code, why)),
        }
    }

    /// What `name` is and where it lives: one round trip. `UnknownName` when nobody owns it.
    pub fn lookup(&self, name: &str) -> Result<Record> {
        match self.inner.request(&Request::Lookup { name: name.to_string() })? {
            Reply::Ok(res) => {
                protocol::record_from_results(&res).ok_or_else(|| WiringError::Protocol("bad LOOKUP answer".into()))
            }
            Reply::Err(ErrCode::NotFound, _) => Err(WiringError::UnknownName(name.to_string())),
            Reply::Err(code, why) => Err(reply_error(code, why)),
        }
    }

    /// Withdraws a name this session registered.
    pub fn withdraw(&self, name: &str) -> Result<()> {
        lock(&self.inner.owned).remove(name);
        match self.inner.request(&Request::Withdraw { session: self.inner.session.clone(), name: name.to_string() })? {
            Reply::Ok(_) => Ok(()),
            Reply::Err(code, why) => Err(reply_error(code, why)),
        }
    }

    /// Has the heartbeat thread look `name` up once per heartbeat and report changes.
    pub fn watch(&self, name: &str, current: &Record) {
        lock(&self.inner.watched).insert(name.to_string(), Some(current.clone()));
    }

    /// True when a watched name changed since the last [`take_moves`](Self::take_moves): one
    /// relaxed load, cheap enough for every send.
    #[inline(always)]
    pub fn has_moves(&self) -> bool {
        self.inner.moved_flag.load(Ordering::Relaxed)
    }

    /// Watched names whose records changed (None: the name is gone for now).
    pub fn take_moves(&self) -> Vec<(String, Option<Record>)> {
        self.inner.moved_flag.store(false, Ordering::Relaxed);
        std::mem::take(&mut *lock(&self.inner.moved))
    }

    /// The session id (diagnostics).
    pub fn session(&self) -> &str {
        &self.inner.session
    }
}

impl Drop for NameClient {
    fn drop(&mut self) {
        *lock(&self.inner.stop) = true;
        self.inner.wake.notify_all();
        if let Some(t) = self.heartbeat.take() {
            let _ = t.join();
        }
        // Say goodbye so the names go at once rather than after the ttl; if the service does
        // not answer, the ttl does it.
        let _ = self.inner.request_with(&Request::Bye { session: self.inner.session.clone() }, Duration::from_millis(500));
    }
}

fn reply_error(code: ErrCode, why: String) -> WiringError {
    match code {
        ErrCode::Backend => WiringError::Backend(why),
        _ => WiringError::Protocol(format!("{}: {why}", code.as_str())),
    }
}

impl Inner {
    fn ttl_ms(&self) -> u64 {
        self.timing.ttl.as_millis() as u64
    }

    fn request(&self, req: &Request) -> Result<Reply> {
        self.request_with(req, self.timing.request_timeout)
    }

    fn request_with(&self, req: &Request, timeout: Duration) -> Result<Reply> {
        let deadline = Instant::now() + timeout;
        let mut c = lock(&self.conn);
        let id = c.next_id;
        c.next_id += 1;
        let frames = protocol::encode_request(id, req);
        let ms = |d: Duration| d.as_millis().clamp(1, i32::MAX as u128) as i32;
        c.sock.set_int(oxmq::opt::SNDTIMEO, ms(timeout))?;
        let unreachable = || WiringError::Unreachable(self.endpoint.clone());
        match c.sock.send_multipart(frames.iter().map(|f| Msg::copy_from(f)), 0) {
            Ok(()) => {}
            Err(oxmq::Error::Again) => return Err(unreachable()),
            Err(e) => return Err(e.into()),
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(unreachable());
            }
            c.sock.set_int(oxmq::opt::RCVTIMEO, ms(left))?;
            let parts = match c.sock.recv_multipart(0) {
                Ok(p) => p,
                Err(oxmq::Error::Again) => return Err(unreachable()),
                Err(e) => return Err(e.into()),
            };
            let parts: Vec<Vec<u8>> = parts.iter().map(|m| m.as_slice().to_vec()).collect();
            match protocol::decode_reply(&parts) {
                Some((rid, reply)) if rid == id => return Ok(reply),
                // A late answer to an earlier request that timed out.
                Some(_) => continue,
                None => return Err(WiringError::Protocol("malformed reply".into())),
            }
        }
    }

    fn heartbeat_loop(&self) {
        let ivl = (self.timing.ttl / 3).max(Duration::from_millis(20));
        loop {
            {
                let stop = lock(&self.stop);
                let (stop, _) = self.wake.wait_timeout_while(stop, ivl, |s| !*s).unwrap_or_else(|p| p.into_inner());
                if *stop {
                    return;
                }
            }
            self.beat();
        }
    }

    fn beat(&self) {
        match self.request(&Request::Ping { session: self.session.clone(), ttl_ms: self.ttl_ms() }) {
            Ok(Reply::Err(ErrCode::UnknownSession, _)) => self.reregister(),
            Ok(_) => {}
            Err(WiringError::Unreachable(_)) if self.embedded => {
                // The process that served the embedded directory is gone: serve it here.
                // Names come back as their owners' next PINGs find their sessions unknown.
                if ensure_embedded(&self.endpoint).is_ok() {
                    self.reregister();
                }
            }
            Err(_) => {}
        }
        let names: Vec<String> = lock(&self.watched).keys().cloned().collect();
        for name in names {
            let now = match self.request(&Request::Lookup { name: name.clone() }) {
                Ok(Reply::Ok(res)) => protocol::record_from_results(&res),
                Ok(Reply::Err(ErrCode::NotFound, _)) => None,
                _ => continue, // unreachable or failing: keep what we know
            };
            let mut w = lock(&self.watched);
            let Some(old) = w.get_mut(&name) else { continue };
            if *old != now {
                *old = now.clone();
                lock(&self.moved).push((name, now));
                self.moved_flag.store(true, Ordering::Relaxed);
            }
        }
    }

    fn reregister(&self) {
        let owned: Vec<(String, Record)> = lock(&self.owned).iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        for (name, record) in owned {
            let req = Request::Register { session: self.session.clone(), ttl_ms: self.ttl_ms(), name: name.clone(), record };
            if let Ok(Reply::Err(ErrCode::Taken, _)) = self.request(&req) {
                eprintln!("oxmq-wiring: '{name}' was taken by another owner while this one was away");
            }
        }
    }
}
