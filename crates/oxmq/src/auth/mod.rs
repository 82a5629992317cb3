//! The ZAP handler (RFC 27): an [`Authenticator`] thread that answers the authentication
//! requests a context's PLAIN, CURVE and NULL-with-domain servers send to
//! `inproc://zeromq.zap.01`, and CURVE [`Certificate`] files.
//!
//! The handler binds a ROUTER (RFC 27 allows REP or ROUTER) so that a malformed request never
//! wedges it: a REP must answer before it can read again, and a request without a request id
//! cannot be answered. Such requests are dropped; requests with an id but bad fields are
//! answered 400. The decisions are [`Policy::authenticate`], pure logic; the thread only moves
//! frames. The policy sits behind a lock the thread takes once per request, so any thread may
//! reconfigure or reload while requests are being handled; a request sees either the old or
//! the new policy, never half of each.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = oxmq::Context::new();
//! let auth = oxmq::auth::Authenticator::start(&ctx)?;
//! auth.update(|p| p.allow(["127.0.0.1"]).plain_file("*", "/etc/app/passwords").map(drop))?;
//! // ... servers in `ctx` with PLAIN_SERVER=1 now ask `auth` ...
//! auth.reload()?; // after editing the password file
//! # Ok(()) }
//! ```

mod cert;
mod policy;

pub use cert::{load_dir, load_passwords, parse_passwords, CertError, Certificate};
pub use policy::{parse_request, split_envelope, CurveCheck, Policy, ZapReply, ZapRequest, CURVE_ALLOW_ANY, DEFAULT_DOMAIN};

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::opt;
use crate::poll::{poll, PollItem};
use crate::{Context, Msg, Socket, SocketType};

/// The endpoint every ZAP handler binds (RFC 27).
pub const ZAP_ENDPOINT: &str = "inproc://zeromq.zap.01";

/// A running ZAP handler. Stops (and joins its thread) on [`stop`](Self::stop) or drop.
///
/// `Sync`: configure it from any thread. There can be one per context (the endpoint is
/// taken); a second `start` fails with `Error::AddrInUse`. If the context is terminated first,
/// the handler thread ends by itself.
pub struct Authenticator {
    policy: Arc<RwLock<Policy>>,
    /// Writing a byte (or dropping this end) tells the thread to stop.
    stop: Mutex<Option<UnixStream>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Authenticator {
    /// Binds `inproc://zeromq.zap.01` in `ctx` and starts answering with an empty policy
    /// (NULL accepted, PLAIN and CURVE refused).
    pub fn start(ctx: &Context) -> Result<Authenticator> {
        Authenticator::with_policy(ctx, Policy::new())
    }

    /// Like [`start`](Self::start) with a policy ready from the first request.
    pub fn with_policy(ctx: &Context, policy: Policy) -> Result<Authenticator> {
        let mut zap = ctx.socket(SocketType::Router)?;
        zap.set_int(opt::LINGER, 0)?;
        // Bound here, on the caller's thread, so a taken endpoint is reported to the caller.
        zap.bind(ZAP_ENDPOINT)?;
        let (tx, rx) = UnixStream::pair().map_err(Error::from)?;
        let policy = Arc::new(RwLock::new(policy));
        let shared = policy.clone();
        let thread =
            std::thread::Builder::new().name("oxmq-zap".into()).spawn(move || serve(zap, rx, &shared)).map_err(Error::from)?;
        Ok(Authenticator { policy, stop: Mutex::new(Some(tx)), thread: Mutex::new(Some(thread)) })
    }

    /// Changes the policy in place; requests after the call see the change. Returns what `f`
    /// returns (for the fallible [`Policy`] methods, `Result<&mut Policy, _>`: map it).
    pub fn update<R>(&self, f: impl FnOnce(&mut Policy) -> R) -> R {
        let mut p = self.policy.write().unwrap_or_else(|e| e.into_inner());
        f(&mut p)
    }

    /// Replaces the whole policy.
    pub fn set_policy(&self, policy: Policy) {
        self.update(|p| *p = policy);
    }

    /// A copy of the current policy.
    pub fn policy(&self) -> Policy {
        self.policy.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Allows these addresses (pyzmq's `allow`).
    pub fn allow<I: IntoIterator<Item = S>, S: Into<String>>(&self, addresses: I) {
        self.update(|p| {
            p.allow(addresses);
        });
    }

    /// Denies these addresses (pyzmq's `deny`).
    pub fn deny<I: IntoIterator<Item = S>, S: Into<String>>(&self, addresses: I) {
        self.update(|p| {
            p.deny(addresses);
        });
    }

    /// Re-reads every password file and certificate directory the policy names; all or
    /// nothing (on error the policy is unchanged). Requests wait while the files are read.
    pub fn reload(&self) -> std::result::Result<(), CertError> {
        self.update(Policy::reload)
    }

    /// Stops the handler and waits for its thread. Idempotent.
    pub fn stop(&self) {
        let stream = self.stop.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut s) = stream {
            // The thread may already be gone (context terminated); then the write fails and
            // there is nothing to wake.
            let _ = s.write_all(&[1]);
        }
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = thread {
            let _ = t.join();
        }
    }

    /// True while the handler thread runs.
    pub fn is_running(&self) -> bool {
        self.thread.lock().unwrap_or_else(|e| e.into_inner()).as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for Authenticator {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The handler thread: wait for requests or the stop signal; answer each request.
fn serve(mut zap: Socket, mut stop: UnixStream, policy: &RwLock<Policy>) {
    let stop_fd = stop.as_raw_fd();
    loop {
        let mut items = [PollItem::socket(&mut zap, opt::POLLIN), PollItem::fd(stop_fd, opt::POLLIN)];
        match poll(&mut items, -1) {
            Ok(_) => {}
            Err(Error::Intr) => continue,
            // Term (the context is shutting down) or a broken socket: nothing left to serve.
            Err(_) => return,
        }
        if items[1].revents() != 0 {
            let _ = stop.read(&mut [0u8; 1]);
            return;
        }
        loop {
            let frames = match zap.recv_multipart(opt::DONTWAIT) {
                Ok(f) => f,
                Err(Error::Again) => break,
                Err(Error::Intr) => continue,
                Err(_) => return,
            };
            if let Some(reply) = answer(&frames, policy) {
                match zap.send_multipart(reply, 0) {
                    Ok(()) | Err(Error::Again) | Err(Error::HostUnreach) => {}
                    Err(_) => return,
                }
            }
        }
    }
}

/// The reply frames (envelope included) for one received message, or `None` to drop it.
fn answer(frames: &[Msg], policy: &RwLock<Policy>) -> Option<Vec<Msg>> {
    let (envelope, body) = split_envelope(frames)?;
    let reply = match parse_request(body) {
        Ok(req) => policy.read().unwrap_or_else(|e| e.into_inner()).authenticate(&req),
        Err(reply) => reply,
    };
    let mut out: Vec<Msg> = envelope.iter().map(|m| Msg::copy_from(m.as_slice())).collect();
    out.push(Msg::from_static(b"1.0"));
    out.push(Msg::copy_from(body[1].as_slice()));
    out.push(Msg::from_static(reply.status_code.as_bytes()));
    out.push(Msg::from_static(reply.status_text.as_bytes()));
    out.push(Msg::from(reply.user_id));
    out.push(Msg::from(reply.metadata));
    Some(out)
}
