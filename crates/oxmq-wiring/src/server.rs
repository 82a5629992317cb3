//! The name server (the role of ØMQ 0.3's `zmq_server`): a ROUTER socket answering OXWIRE/1
//! requests (`protocol.rs`) on its own thread, over a directory kept in memory or in etcd.
//!
//! A session's names live while the server hears from it at least once per its ttl; a
//! session that falls silent is expired by a sweep that runs between requests (at least every
//! 50 ms), which withdraws its names (memory) or revokes its lease (etcd). So a name vanishes
//! within one ttl of its owner's death however the owner died, and with etcd also when this
//! server dies (the lease runs out in etcd).

use crate::etcd::{Etcd, Put};
use crate::protocol::{self, ErrCode, Record, Reply, Request};
use crate::{Result, WiringError};
use oxmq::{Context, Msg, Socket, SocketType};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The port a name server listens on when none is given (ØMQ 0.3's `zmq_server` used it too).
pub const DEFAULT_PORT: u16 = 5682;

/// Bounds on a session's ttl: a client cannot make the server keep names forever, nor expire
/// them faster than it can be heard.
const MIN_TTL: Duration = Duration::from_millis(200);
const MAX_TTL: Duration = Duration::from_secs(600);

/// Where the names are kept.
#[derive(Clone, Debug, Default)]
pub enum Backend {
    /// In this server's memory: one server is the directory.
    #[default]
    Memory,
    /// In etcd at this client URL (`http://host:port`): several servers share the directory.
    Etcd(String),
}

/// A running name server. Dropping it stops the thread.
pub struct NameServer {
    endpoint: String,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    ctx: Context,
}

impl NameServer {
    /// Binds at `endpoint` (a ZMTP endpoint, e.g. `tcp://127.0.0.1:5682`, port `*` or 0 for
    /// any) on the caller's thread, so a bad or busy address is reported here, and serves on a
    /// new thread.
    pub fn start(endpoint: &str, backend: Backend) -> Result<NameServer> {
        let dir = match backend {
            Backend::Memory => Directory::Memory(HashMap::new()),
            Backend::Etcd(url) => Directory::Etcd(Etcd::new(&url).map_err(WiringError::Backend)?),
        };
        let ctx = Context::new();
        let mut sock = ctx.socket(SocketType::Router)?;
        sock.set_int(oxmq::opt::LINGER, 0)?;
        sock.set_int(oxmq::opt::RCVTIMEO, 50)?;
        sock.set_int(oxmq::opt::SNDTIMEO, 0)?;
        sock.bind(endpoint).map_err(|e| match e {
            oxmq::Error::AddrInUse => WiringError::Socket(e),
            _ => WiringError::BadLocation(endpoint.to_string()),
        })?;
        let endpoint = sock.last_endpoint()?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut state = State { dir, sessions: HashMap::new(), last_sweep: Instant::now() };
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("oxmq-name-server".into())
            .spawn(move || state.serve(sock, &flag))
            .map_err(|_| WiringError::Socket(oxmq::Error::NoMem))?;
        Ok(NameServer { endpoint, stop, thread: Some(thread), ctx })
    }

    /// The endpoint it listens on (with the port chosen when `*` or 0 was asked).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Stops serving and waits for the thread (at most one receive timeout, 50 ms).
    pub fn stop(mut self) {
        self.halt();
    }

    /// Serves until the process ends (the standalone binary's main loop).
    pub fn join(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.ctx.shutdown();
    }
}

impl Drop for NameServer {
    fn drop(&mut self) {
        self.halt();
    }
}

enum Directory {
    Memory(HashMap<String, (String, Record)>),
    Etcd(Etcd),
}

struct Session {
    ttl: Duration,
    deadline: Instant,
    /// The etcd lease holding this session's names.
    lease: Option<String>,
}

struct State {
    dir: Directory,
    sessions: HashMap<String, Session>,
    last_sweep: Instant,
}

fn clamp_ttl(ms: u64) -> Duration {
    Duration::from_millis(ms).clamp(MIN_TTL, MAX_TTL)
}

impl State {
    fn serve(&mut self, mut sock: Socket, stop: &AtomicBool) {
        while !stop.load(Ordering::Acquire) {
            match sock.recv_multipart(0) {
                Ok(frames) => {
                    let Some((rid, body)) = frames.split_first() else { continue };
                    let body: Vec<Vec<u8>> = body.iter().map(|m| m.as_slice().to_vec()).collect();
                    let out = match protocol::decode_request(&body) {
                        Ok((id, req)) => Some(protocol::encode_reply(id, &self.handle(req))),
                        Err((Some(id), why)) => Some(protocol::encode_reply(id, &Reply::Err(ErrCode::BadRequest, why))),
                        Err((None, _)) => None, // not ours: no id to answer to
                    };
                    if let Some(out) = out {
                        let mut parts: Vec<Msg> = vec![Msg::copy_from(rid.as_slice())];
                        parts.extend(out.iter().map(|f| Msg::copy_from(f)));
                        // A client that went away meanwhile just misses its reply.
                        let _ = sock.send_multipart(parts, oxmq::opt::DONTWAIT);
                    }
                }
                Err(oxmq::Error::Again) => {}
                Err(_) => break,
            }
            if self.last_sweep.elapsed() >= Duration::from_millis(50) {
                self.sweep();
            }
        }
    }

    fn sweep(&mut self) {
        self.last_sweep = Instant::now();
        let now = Instant::now();
        let dead: Vec<String> = self.sessions.iter().filter(|(_, s)| s.deadline <= now).map(|(k, _)| k.clone()).collect();
        for s in dead {
            self.end_session(&s);
        }
    }

    fn end_session(&mut self, session: &str) {
        let Some(s) = self.sessions.remove(session) else { return };
        match &mut self.dir {
            Directory::Memory(names) => names.retain(|_, (owner, _)| owner != session),
            Directory::Etcd(etcd) => {
                if let Some(lease) = s.lease {
                    // If etcd is unreachable now, the lease runs out there by itself.
                    let _ = etcd.revoke(&lease);
                }
            }
        }
    }

    /// Refreshes (or opens) a session; for etcd makes sure it holds a live lease.
    fn touch(&mut self, session: &str, ttl: Duration) -> std::result::Result<(), String> {
        let now = Instant::now();
        let s = self.sessions.entry(session.to_string()).or_insert(Session { ttl, deadline: now + ttl, lease: None });
        s.ttl = ttl;
        s.deadline = now + ttl;
        if let Directory::Etcd(etcd) = &self.dir {
            if s.lease.is_none() {
                s.lease = Some(etcd.grant(ttl.as_millis().div_ceil(1000) as u64)?);
            }
        }
        Ok(())
    }

    fn handle(&mut self, req: Request) -> Reply {
        match req {
            Request::Register { session, ttl_ms, name, record } => {
                if let Err(e) = self.touch(&session, clamp_ttl(ttl_ms)) {
                    return Reply::Err(ErrCode::Backend, e);
                }
                match &mut self.dir {
                    Directory::Memory(names) => match names.get(&name) {
                        Some((owner, _)) if *owner != session => {
                            Reply::Err(ErrCode::Taken, format!("'{name}' is owned by another session"))
                        }
                        _ => {
                            names.insert(name, (session, record));
                            Reply::Ok(vec![])
                        }
                    },
                    Directory::Etcd(etcd) => {
                        let etcd = etcd.clone();
                        let attempt = |st: &mut State| -> std::result::Result<Put, String> {
                            let lease = st.sessions.get(&session).and_then(|s| s.lease.clone()).unwrap_or_default();
                            etcd.register(&session, &lease, &name, &record)
                        };
                        let r = match attempt(self) {
                            // The lease may have run out in etcd while we were not looking: a
                            // new one and one more try.
                            Err(_) => {
                                if let Some(s) = self.sessions.get_mut(&session) {
                                    s.lease = None;
                                }
                                match self.touch(&session, clamp_ttl(ttl_ms)) {
                                    Ok(()) => attempt(self),
                                    Err(e) => Err(e),
                                }
                            }
                            ok => ok,
                        };
                        match r {
                            Ok(Put::Done) => Reply::Ok(vec![]),
                            Ok(Put::Taken) => Reply::Err(ErrCode::Taken, format!("'{name}' is owned by another session")),
                            Err(e) => Reply::Err(ErrCode::Backend, e),
                        }
                    }
                }
            }
            Request::Lookup { name } => {
                let found = match &self.dir {
                    Directory::Memory(names) => Ok(names.get(&name).map(|(_, r)| r.clone())),
                    Directory::Etcd(etcd) => etcd.lookup(&name),
                };
                match found {
                    Ok(Some(r)) => Reply::Ok(protocol::results_from_record(&r)),
                    Ok(None) => Reply::Err(ErrCode::NotFound, format!("no name '{name}'")),
                    Err(e) => Reply::Err(ErrCode::Backend, e),
                }
            }
            Request::Withdraw { session, name } => {
                if let Some(s) = self.sessions.get_mut(&session) {
                    s.deadline = Instant::now() + s.ttl;
                }
                let r = match &mut self.dir {
                    Directory::Memory(names) => {
                        if names.get(&name).is_some_and(|(o, _)| *o == session) {
                            names.remove(&name);
                        }
                        Ok(())
                    }
                    Directory::Etcd(etcd) => etcd.withdraw(&session, &name),
                };
                match r {
                    Ok(()) => Reply::Ok(vec![]),
                    Err(e) => Reply::Err(ErrCode::Backend, e),
                }
            }
            Request::Ping { session, ttl_ms } => {
                let Some(s) = self.sessions.get_mut(&session) else {
                    return Reply::Err(ErrCode::UnknownSession, "no such session here".into());
                };
                s.ttl = clamp_ttl(ttl_ms);
                s.deadline = Instant::now() + s.ttl;
                if let (Directory::Etcd(etcd), Some(lease)) = (&self.dir, &s.lease) {
                    match etcd.keepalive(lease) {
                        Ok(true) => {}
                        Ok(false) => {
                            // Its lease expired in etcd: its names are gone there.
                            self.sessions.remove(&session);
                            return Reply::Err(ErrCode::UnknownSession, "lease expired".into());
                        }
                        Err(e) => return Reply::Err(ErrCode::Backend, e),
                    }
                }
                Reply::Ok(vec![])
            }
            Request::Bye { session } => {
                self.end_session(&session);
                Reply::Ok(vec![])
            }
        }
    }
}
