//! The wiring handle: named exchanges and queues over oxmq sockets.
//!
//! What each object is on the wire (documented in ARCHITECTURE.md, so other ZeroMQ programs
//! can join in by the address the name service returns):
//!
//! * An **exchange** is an XPUB socket (XPUB_NODROP, XPUB_VERBOSER) bound at its endpoints,
//!   for queues that bind to it from elsewhere (a libzmq SUB that connects there and
//!   subscribes to `""` is one), plus one PUSH "leg" per queue bound from this handle (one
//!   leg connected to all of them for load balancing). Sending writes to each leg and, when
//!   it has subscribers, to the XPUB: every bound queue gets every message. PUSH legs and
//!   XPUB_NODROP make a full queue stop the sender rather than lose messages, and a PUSH
//!   leg holds messages until its connection is up, so nothing sent after `bind` is lost.
//! * A **queue** is an endpoint of the handle's one PULL socket (inproc for the handle,
//!   loopback tcp for process scope, its location for global scope; a libzmq PUSH that
//!   connects to a global queue delivers into it), and, for queues bound to exchanges that
//!   live elsewhere, the handle's one SUB, connected to those exchanges. `receive` reads every
//!   queue of the handle, as the original `czmq_receive` did: from one socket's blocking
//!   receive in the usual case (only PULL, or only SUB), polling both otherwise.
//!
//! `bind(E, Q)` with E ours: a PUSH leg connects to Q's endpoint (no wait: the leg queues
//! until connected). With only Q ours: the SUB connects to E's endpoint and the call returns
//! once the ZMTP handshake is done (the subscription is then on its way; as with any SUB,
//! what E sends before it arrives is not delivered to Q). Names resolve in this handle
//! first, then in the process, then through the name service (one round trip; the result is
//! kept and watched by the heartbeat thread, and a wire is re-pointed on the next `send`,
//! `receive` or `bind` after its far end moved). oxmq's reconnection brings a wire back when
//! its far end returns at the same address.

use crate::client::{NameClient, Timing};
use crate::protocol::{self, Kind, Record, Style};
use crate::server::DEFAULT_PORT;
use crate::{Result, WiringError};
use oxmq::monitor::event;
use oxmq::{opt, Context, Msg, PollItem, Socket, SocketType};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Who can see a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// This handle only (`CZMQ_SCOPE_LOCAL`).
    Local,
    /// Every handle of this process (`CZMQ_SCOPE_PROCESS`).
    Process,
    /// Everyone who can reach the name service (`CZMQ_SCOPE_GLOBAL`).
    Global,
}

impl Scope {
    /// From the C and Python constants: 0 local, 1 global (the seed's values), 2 process.
    pub fn from_raw(v: i32) -> Option<Scope> {
        match v {
            0 => Some(Scope::Local),
            1 => Some(Scope::Global),
            2 => Some(Scope::Process),
            _ => None,
        }
    }
}

/// Settings of a handle. `Options::from_env()` reads the `OXMQ_WIRING_*` variables that the C
/// and Python front ends honour.
#[derive(Clone, Debug)]
pub struct Options {
    /// Request timeout and name ttl (heartbeats every ttl/3).
    pub timing: Timing,
    /// How long `bind` waits for the far end (subscription or handshake).
    pub bind_timeout: Duration,
    /// How long closing the handle waits to deliver what was sent (LINGER), `None` forever.
    pub linger: Option<Duration>,
    /// How long `send` waits for a full queue, `None` forever.
    pub send_timeout: Option<Duration>,
    /// I/O threads of the handle's context.
    pub io_threads: i32,
    /// Port of the embedded name service (empty host).
    pub embedded_port: u16,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timing: Timing::default(),
            bind_timeout: Duration::from_secs(5),
            linger: Some(Duration::from_secs(10)),
            send_timeout: None,
            io_threads: 1,
            embedded_port: DEFAULT_PORT,
        }
    }
}

impl Options {
    /// Defaults, overridden by `OXMQ_WIRING_PORT` (embedded service port),
    /// `OXMQ_WIRING_TTL_MS`, `OXMQ_WIRING_TIMEOUT_MS` (requests), `OXMQ_WIRING_BIND_TIMEOUT_MS`,
    /// `OXMQ_WIRING_LINGER_MS` (-1 forever), `OXMQ_WIRING_IO_THREADS`.
    pub fn from_env() -> Options {
        let mut o = Options::default();
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<i64>().ok());
        if let Some(p) = num("OXMQ_WIRING_PORT").and_then(|p| u16::try_from(p).ok()) {
            o.embedded_port = p;
        }
        if let Some(v) = num("OXMQ_WIRING_TTL_MS").filter(|v| *v > 0) {
            o.timing.ttl = Duration::from_millis(v as u64);
        }
        if let Some(v) = num("OXMQ_WIRING_TIMEOUT_MS").filter(|v| *v > 0) {
            o.timing.request_timeout = Duration::from_millis(v as u64);
        }
        if let Some(v) = num("OXMQ_WIRING_BIND_TIMEOUT_MS").filter(|v| *v >= 0) {
            o.bind_timeout = Duration::from_millis(v as u64);
        }
        if let Some(v) = num("OXMQ_WIRING_LINGER_MS") {
            o.linger = if v < 0 { None } else { Some(Duration::from_millis(v as u64)) };
        }
        if let Some(v) = num("OXMQ_WIRING_IO_THREADS").filter(|v| (1..=64).contains(v)) {
            o.io_threads = v as i32;
        }
        o
    }
}

/// Where a name of another handle of this process can be reached.
#[derive(Clone)]
struct ProcessEntry {
    kind: Kind,
    endpoint: String,
    handle: u64,
}

fn process_names() -> &'static Mutex<HashMap<String, ProcessEntry>> {
    static P: OnceLock<Mutex<HashMap<String, ProcessEntry>>> = OnceLock::new();
    P.get_or_init(|| Mutex::new(HashMap::new()))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

struct Exchange {
    style: Style,
    /// Bound at the exchange's endpoints: queues that bind from elsewhere (their SUB
    /// connects here) and plain libzmq SUBs.
    xpub: Socket,
    /// Subscriptions seen on `xpub` minus cancellations (XPUB_VERBOSER reports both).
    xpub_subs: i64,
    /// Whether queues of other handles can attach to `xpub` (not for local scope: its name is
    /// never published, so only this handle's own legs ever carry its messages).
    reachable: bool,
    /// PUSH legs to queues bound from this handle: one per queue (fan-out), or one leg
    /// connected to all of them (balancing).
    legs: Vec<Socket>,
    /// Sends since `xpub` was last checked for new subscribers.
    unchecked: u32,
    /// Balancing: whose turn it is (the legs' PUSH, or the XPUB's subscribers).
    turn: bool,
}

/// One wire to a global name, re-pointed when the name moves.
struct Wire {
    name: String,
    endpoint: String,
    /// The exchange and leg that connected, or None for the handle's SUB.
    from: Option<(usize, usize)>,
}

/// A queue of this handle.
struct Queue {
    /// Its inproc endpoint is bound on the PULL (always for process and global scope; for a
    /// local queue only once an exchange of this handle binds to it).
    pull_bound: bool,
}

/// A wiring handle (`czmq_create`, `ZMQ(host)`): owned by one thread at a time (`Send`).
pub struct Wiring {
    id: u64,
    ctx: Context,
    client: NameClient,
    /// The IP address other hosts reach this one at (toward the name service).
    public_ip: IpAddr,
    opts: Options,
    exchanges: Vec<Exchange>,
    /// Names owned by this handle: kind, index (eid for exchanges), scope.
    names: HashMap<String, (Kind, usize, Scope)>,
    queues: HashMap<String, Queue>,
    /// Receives what exchanges push to this handle's queues (created with the first queue
    /// that needs an endpoint).
    pull: Option<Socket>,
    /// Receives from exchanges this handle's queues bound to (created at the first such
    /// bind), with the monitor that reports its handshakes.
    sub: Option<(Socket, Socket)>,
    wires: Vec<Wire>,
    /// Pairs bound so far: binding a pair again is a no-op (not a second, duplicating wire).
    bound: std::collections::HashSet<(String, String)>,
    /// RCVTIMEO currently set on the socket(s) received from (ms).
    rcvtimeo: i32,
}

/// An exchange whose XPUB has subscribers looks for cancellations every this many sends
/// (while it has none it looks for new ones on every send).
const XPUB_CHECK_EVERY: u32 = 16;

/// Receive waits in slices of this length, so that moved wires are re-pointed during a long
/// wait.
const RECV_SLICE_MS: i64 = 250;

/// Parses a name-service host: `""` (embedded on `127.0.0.1:<port>`), `host`, `host:port`,
/// or `tcp://host:port`. Returns the endpoint and whether it is embedded.
pub fn service_endpoint(host: &str, embedded_port: u16) -> Result<(String, bool)> {
    let h = host.trim();
    if h.is_empty() {
        return Ok((format!("tcp://127.0.0.1:{embedded_port}"), true));
    }
    let h = h.strip_prefix("tcp://").unwrap_or(h);
    let (name, port) = match h.rsplit_once(':') {
        Some((n, p)) if !n.ends_with(':') => (n, p.parse::<u16>().map_err(|_| WiringError::BadLocation(host.to_string()))?),
        _ => (h, DEFAULT_PORT),
    };
    if name.is_empty() || name.contains(['/', ' ']) {
        return Err(WiringError::BadLocation(host.to_string()));
    }
    Ok((format!("tcp://{name}:{port}"), false))
}

/// The local address used to reach `endpoint` (no packet is sent: a UDP `connect` only picks
/// the route), so a global object bound on "any interface" registers an address others reach.
fn route_ip(endpoint: &str) -> IpAddr {
    let hostport = endpoint.strip_prefix("tcp://").unwrap_or(endpoint);
    let Some(addr) = hostport.to_socket_addrs().ok().and_then(|mut a| a.next()) else {
        return IpAddr::V4(Ipv4Addr::LOCALHOST);
    };
    let bind = if addr.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
    UdpSocket::bind(bind)
        .and_then(|u| u.connect(addr).and_then(|_| u.local_addr()))
        .map(|a| a.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// A location (`""`, `iface`, `iface:port`, `:port`, `*:port`) as a tcp bind endpoint.
fn location_endpoint(location: &str, default_ip: IpAddr) -> Result<String> {
    let bad = || WiringError::BadLocation(location.to_string());
    let loc = location.trim();
    let (iface, port) = match loc.rsplit_once(':') {
        Some((i, p)) => (i, p),
        None => (loc, ""),
    };
    let port: u16 = match port {
        "" | "*" => 0,
        p => p.parse().map_err(|_| bad())?,
    };
    let iface = match iface {
        "" => default_ip.to_string(),
        i if i.contains(['/', ' ']) => return Err(bad()),
        i => i.to_string(),
    };
    let port = if port == 0 { "*".to_string() } else { port.to_string() };
    Ok(format!("tcp://{iface}:{port}"))
}

impl Wiring {
    /// A handle whose name service is at `host` (see [`service_endpoint`]), with options from
    /// the environment.
    pub fn new(host: &str) -> Result<Wiring> {
        Wiring::with_options(host, Options::from_env())
    }

    /// A handle with explicit options.
    pub fn with_options(host: &str, opts: Options) -> Result<Wiring> {
        let (endpoint, embedded) = service_endpoint(host, opts.embedded_port)?;
        let client = NameClient::connect(&endpoint, embedded, opts.timing)?;
        let public_ip = route_ip(&endpoint);
        static IDS: AtomicU64 = AtomicU64::new(1);
        let id = IDS.fetch_add(1, Ordering::Relaxed);
        let ctx = Context::new();
        ctx.set(opt::IO_THREADS, opts.io_threads)?;
        Ok(Wiring {
            id,
            ctx,
            client,
            public_ip,
            opts,
            exchanges: Vec::new(),
            names: HashMap::new(),
            queues: HashMap::new(),
            pull: None,
            sub: None,
            wires: Vec::new(),
            bound: Default::default(),
            rcvtimeo: -2,
        })
    }

    /// The name service's endpoint.
    pub fn service(&self) -> &str {
        self.client.endpoint()
    }

    fn inproc(&self, kind: Kind, name: &str) -> String {
        format!("inproc://oxmq-wiring/{}/{}/{}", self.id, kind.as_str(), name)
    }

    fn linger_ms(&self) -> i32 {
        self.opts.linger.map(|d| d.as_millis().min(i32::MAX as u128) as i32).unwrap_or(-1)
    }

    fn check_new_name(&self, name: &str, scope: Scope) -> Result<()> {
        if !protocol::valid_name(name) {
            return Err(WiringError::Invalid(format!("bad name '{name}'")));
        }
        if self.names.contains_key(name) {
            return Err(WiringError::NameTaken(name.to_string()));
        }
        if scope == Scope::Process && lock(process_names()).contains_key(name) {
            return Err(WiringError::NameTaken(name.to_string()));
        }
        Ok(())
    }

    /// Binds `sock` for `scope`: the tcp endpoint to publish (process: loopback; global: the
    /// location, with "any interface" replaced by the address others reach us at).
    fn bind_scope(&self, sock: &mut Socket, scope: Scope, location: &str) -> Result<Option<String>> {
        match scope {
            Scope::Local => Ok(None),
            Scope::Process => {
                sock.bind("tcp://127.0.0.1:*")?;
                Ok(Some(sock.last_endpoint()?))
            }
            Scope::Global => {
                let ep = location_endpoint(location, self.public_ip)?;
                sock.bind(&ep).map_err(|e| match e {
                    oxmq::Error::AddrInUse => WiringError::BadLocation(format!("{location} (address in use)")),
                    _ => WiringError::BadLocation(location.to_string()),
                })?;
                let got = sock.last_endpoint()?;
                let wild = ["tcp://0.0.0.0:", "tcp://*:", "tcp://[::]:"];
                Ok(Some(match wild.iter().find(|w| got.starts_with(*w)) {
                    Some(w) => {
                        let port = &got[w.len()..];
                        match self.public_ip {
                            IpAddr::V4(ip) => format!("tcp://{ip}:{port}"),
                            IpAddr::V6(ip) => format!("tcp://[{ip}]:{port}"),
                        }
                    }
                    None => got,
                }))
            }
        }
    }

    /// Publishes a new name: process registry or name service.
    fn publish(&mut self, name: &str, kind: Kind, scope: Scope, endpoint: Option<&str>, style: Style) -> Result<()> {
        match (scope, endpoint) {
            (Scope::Process, Some(ep)) => {
                let mut p = lock(process_names());
                if p.contains_key(name) {
                    return Err(WiringError::NameTaken(name.to_string()));
                }
                p.insert(name.to_string(), ProcessEntry { kind, endpoint: ep.to_string(), handle: self.id });
            }
            (Scope::Global, Some(ep)) => {
                self.client.register(name, &Record { kind, endpoint: ep.to_string(), style })?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Creates an exchange (fan-out). `location` matters for global scope only: `""` picks
    /// an address, `iface:port` binds there. Returns the exchange id for [`send`](Self::send).
    pub fn create_exchange(&mut self, name: &str, scope: Scope, location: &str) -> Result<usize> {
        self.create_exchange_with(name, scope, location, Style::FanOut)
    }

    /// [`create_exchange`](Self::create_exchange) with a delivery style.
    pub fn create_exchange_with(&mut self, name: &str, scope: Scope, location: &str, style: Style) -> Result<usize> {
        self.check_new_name(name, scope)?;
        let mut xpub = self.ctx.socket(SocketType::XPub)?;
        xpub.set_int(opt::XPUB_NODROP, 1)?;
        xpub.set_int(opt::XPUB_VERBOSER, 1)?;
        xpub.set_int(opt::LINGER, self.linger_ms())?;
        self.set_sndtimeo(&mut xpub)?;
        xpub.bind(&self.inproc(Kind::Exchange, name))?;
        let ep = self.bind_scope(&mut xpub, scope, location)?;
        self.publish(name, Kind::Exchange, scope, ep.as_deref(), style)?;
        let eid = self.exchanges.len();
        let reachable = scope != Scope::Local;
        self.exchanges.push(Exchange { style, xpub, xpub_subs: 0, reachable, legs: Vec::new(), unchecked: 0, turn: false });
        self.names.insert(name.to_string(), (Kind::Exchange, eid, scope));
        Ok(eid)
    }

    fn set_sndtimeo(&self, s: &mut Socket) -> Result<()> {
        s.set_int(opt::SNDTIMEO, self.opts.send_timeout.map(|d| d.as_millis().min(i32::MAX as u128) as i32).unwrap_or(-1))?;
        Ok(())
    }

    fn push_leg(&self) -> Result<Socket> {
        let mut s = self.ctx.socket(SocketType::Push)?;
        s.set_int(opt::LINGER, self.linger_ms())?;
        self.set_sndtimeo(&mut s)?;
        Ok(s)
    }

    fn pull(&mut self) -> Result<&mut Socket> {
        if self.pull.is_none() {
            let mut p = self.ctx.socket(SocketType::Pull)?;
            p.set_int(opt::LINGER, 0)?;
            self.pull = Some(p);
            self.rcvtimeo = -2;
        }
        Ok(self.pull.as_mut().expect("just created"))
    }

    /// Creates a queue; `receive` reads from every queue of the handle. Returns the queue's
    /// number (0, 1, ... in creation order).
    pub fn create_queue(&mut self, name: &str, scope: Scope, location: &str) -> Result<usize> {
        self.check_new_name(name, scope)?;
        let mut pull_bound = false;
        if scope != Scope::Local {
            let inproc = self.inproc(Kind::Queue, name);
            self.pull()?.bind(&inproc)?;
            let mut pull = self.pull.take().expect("created above");
            let r = self.bind_scope(&mut pull, scope, location);
            let ep = match r {
                Ok(ep) => ep,
                Err(e) => {
                    let _ = pull.unbind(&inproc);
                    self.pull = Some(pull);
                    return Err(e);
                }
            };
            let published = self.publish(name, Kind::Queue, scope, ep.as_deref(), Style::FanOut);
            if published.is_err() {
                let _ = pull.unbind(&inproc);
                if let Some(ep) = &ep {
                    let _ = pull.unbind(ep);
                }
            }
            self.pull = Some(pull);
            published?;
            pull_bound = true;
        }
        let qid = self.queues.len();
        self.queues.insert(name.to_string(), Queue { pull_bound });
        self.names.insert(name.to_string(), (Kind::Queue, qid, scope));
        Ok(qid)
    }

    /// Where `name` lives, seen from this handle: (endpoint, global record if resolved through
    /// the name service).
    fn resolve(&mut self, name: &str, want: Kind) -> Result<(String, Option<Record>)> {
        let wrong = |k: Kind| WiringError::Invalid(format!("'{name}' is an {}, not a {}", k.as_str(), want.as_str()));
        if let Some(&(k, _, _)) = self.names.get(name) {
            if k != want {
                return Err(wrong(k));
            }
            let ep = self.inproc(k, name);
            if k == Kind::Queue && !self.queues.get(name).is_some_and(|q| q.pull_bound) {
                self.pull()?.bind(&ep)?;
                if let Some(q) = self.queues.get_mut(name) {
                    q.pull_bound = true;
                }
            }
            return Ok((ep, None));
        }
        if let Some(p) = lock(process_names()).get(name) {
            if p.handle != self.id {
                return if p.kind == want { Ok((p.endpoint.clone(), None)) } else { Err(wrong(p.kind)) };
            }
        }
        let rec = self.client.lookup(name)?;
        if rec.kind != want {
            return Err(wrong(rec.kind));
        }
        Ok((rec.endpoint.clone(), Some(rec)))
    }

    /// Wires exchange `exchange` to queue `queue`, wherever each lives; one of them must
    /// belong to this handle. See the module docs for what is waited for.
    pub fn bind(&mut self, exchange: &str, queue: &str) -> Result<()> {
        if self.client.has_moves() {
            self.apply_moves();
        }
        let pair = (exchange.to_string(), queue.to_string());
        if self.bound.contains(&pair) {
            return Ok(());
        }
        let r = self.bind_once(exchange, queue);
        // After a timeout the wire stays in place and completes when the far end answers.
        if matches!(r, Ok(()) | Err(WiringError::Timeout)) {
            self.bound.insert(pair);
        }
        r
    }

    fn bind_once(&mut self, exchange: &str, queue: &str) -> Result<()> {
        let deadline = Instant::now() + self.opts.bind_timeout;
        match self.names.get(exchange) {
            Some(&(Kind::Exchange, eid, _)) => {
                let (ep, rec) = self.resolve(queue, Kind::Queue)?;
                // A PUSH leg: lossless from the first message (a send waits for the
                // connection), so nothing needs waiting for here.
                let leg = if self.exchanges[eid].style == Style::LoadBalance && !self.exchanges[eid].legs.is_empty() {
                    0
                } else {
                    let s = self.push_leg()?;
                    self.exchanges[eid].legs.push(s);
                    self.exchanges[eid].legs.len() - 1
                };
                self.exchanges[eid].legs[leg].connect(&ep)?;
                if let Some(rec) = rec {
                    self.client.watch(queue, &rec);
                    self.wires.push(Wire { name: queue.to_string(), endpoint: ep, from: Some((eid, leg)) });
                }
                Ok(())
            }
            Some(&(Kind::Queue, _, _)) => Err(WiringError::Invalid(format!("'{exchange}' is a queue, not an exchange"))),
            None => {
                match self.names.get(queue) {
                    Some(&(Kind::Queue, _, _)) => {}
                    Some(_) => return Err(WiringError::Invalid(format!("'{queue}' is an exchange, not a queue"))),
                    None => {
                        // Neither end is ours: tell apart "unknown" from "not ours".
                        self.resolve(exchange, Kind::Exchange)?;
                        self.resolve(queue, Kind::Queue)?;
                        return Err(WiringError::Invalid(format!(
                            "neither '{exchange}' nor '{queue}' belongs to this handle"
                        )));
                    }
                }
                let (ep, rec) = self.resolve(exchange, Kind::Exchange)?;
                let (sub, monitor) = self.sub()?;
                while monitor.recv(opt::DONTWAIT).is_ok() {}
                sub.connect(&ep)?;
                if let Some(rec) = rec {
                    self.client.watch(exchange, &rec);
                    self.wires.push(Wire { name: exchange.to_string(), endpoint: ep.clone(), from: None });
                }
                self.wait_handshake(&ep, deadline)
            }
        }
    }

    fn sub(&mut self) -> Result<(&mut Socket, &mut Socket)> {
        if self.sub.is_none() {
            let mut sub = self.ctx.socket(SocketType::Sub)?;
            sub.subscribe(b"")?;
            sub.set_int(opt::LINGER, 0)?;
            let mon_ep = format!("inproc://oxmq-wiring-monitor-{}", self.id);
            sub.monitor(Some(&mon_ep), event::HANDSHAKE_SUCCEEDED)?;
            let mut monitor = self.ctx.socket(SocketType::Pair)?;
            monitor.connect(&mon_ep)?;
            self.sub = Some((sub, monitor));
            self.rcvtimeo = -2;
        }
        let (s, m) = self.sub.as_mut().expect("just created");
        Ok((s, m))
    }

    /// Waits for the handle's SUB to complete a handshake with `ep` (inproc: at once).
    fn wait_handshake(&mut self, ep: &str, deadline: Instant) -> Result<()> {
        if ep.starts_with("inproc://") {
            return Ok(());
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(WiringError::Timeout);
            }
            let (sub, monitor) = self.sub()?;
            let mut items = [PollItem::socket(monitor, opt::POLLIN), PollItem::socket(sub, 0)];
            oxmq::poll(&mut items, (left.as_millis().min(50) as i64).max(1))?;
            while let Ok(frames) = monitor.recv_multipart(opt::DONTWAIT) {
                let ev = frames.first().map(|f| f.as_slice()).filter(|b| b.len() >= 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
                let at = frames.get(1).map(|f| f.as_slice());
                if ev == Some(event::HANDSHAKE_SUCCEEDED as u16) && at == Some(ep.as_bytes()) {
                    return Ok(());
                }
            }
        }
    }

    /// Re-points wires whose far end moved (called when the heartbeat thread saw a change).
    fn apply_moves(&mut self) {
        for (name, rec) in self.client.take_moves() {
            let Some(rec) = rec else { continue }; // gone for now: the old wire keeps trying
            for w in self.wires.iter_mut().filter(|w| w.name == name && w.endpoint != rec.endpoint) {
                let sock = match w.from {
                    Some((eid, leg)) => &mut self.exchanges[eid].legs[leg],
                    None => match self.sub.as_mut() {
                        Some((s, _)) => s,
                        None => continue,
                    },
                };
                let _ = sock.disconnect(&w.endpoint);
                if sock.connect(&rec.endpoint).is_ok() {
                    w.endpoint = rec.endpoint.clone();
                }
            }
        }
    }

    /// Sends `msg` through exchange `eid` (blocks while a bound queue is full, up to the send
    /// timeout).
    #[inline]
    pub fn send(&mut self, eid: usize, msg: impl Into<Msg>) -> Result<()> {
        let mut m = msg.into();
        self.send_msg(eid, &mut m)
    }

    /// [`send`](Self::send) taking a `Msg` by reference (left empty on success).
    #[inline(always)]
    pub fn send_msg(&mut self, eid: usize, msg: &mut Msg) -> Result<()> {
        // The usual case, inlined into the front ends.
        if let Some(leg) = self.direct_leg(eid) {
            return leg.send_msg(msg, 0).map_err(send_err);
        }
        self.send_general(eid, msg)
    }

    /// Sends `msg` through exchange `eid` if that needs no wait: `Ok(true)`. `Ok(false)` when
    /// it would have to wait, or when the exchange is one this call does not try (several
    /// destinations, or reachable from other handles): nothing was sent, `msg` is unchanged,
    /// and [`send_msg`](Self::send_msg) sends it. For bindings that may not block in a call.
    #[inline(always)]
    pub fn try_send_msg(&mut self, eid: usize, msg: &mut Msg) -> Result<bool> {
        let Some(leg) = self.direct_leg(eid) else {
            return match self.exchanges.get(eid) {
                Some(_) => Ok(false),
                None => Err(WiringError::Invalid(format!("no exchange {eid}"))),
            };
        };
        match leg.try_send_msg(msg, 0) {
            Ok(()) => Ok(true),
            Err(oxmq::Error::Again) => Ok(false),
            Err(e) => Err(send_err(e)),
        }
    }

    /// The one leg of exchange `eid` when a message can go straight to it: no moved names to
    /// apply, an exchange no other handle can attach to, feeding one queue. None otherwise,
    /// and for an unknown `eid`.
    #[inline(always)]
    fn direct_leg(&mut self, eid: usize) -> Option<&mut Socket> {
        if self.client.has_moves() {
            return None;
        }
        let ex = self.exchanges.get_mut(eid)?;
        (!ex.reachable && ex.style == Style::FanOut && ex.legs.len() == 1).then(|| &mut ex.legs[0])
    }

    #[inline(never)]
    fn send_general(&mut self, eid: usize, msg: &mut Msg) -> Result<()> {
        if self.client.has_moves() {
            self.apply_moves();
        }
        let ex = self.exchanges.get_mut(eid).ok_or_else(|| WiringError::Invalid(format!("no exchange {eid}")))?;
        // Queues attached from elsewhere show up as XPUB subscriptions.
        if ex.reachable {
            if ex.xpub_subs <= 0 {
                drain_subscriptions(&mut ex.xpub, &mut ex.xpub_subs);
            } else {
                // Cancellations, now and then.
                ex.unchecked += 1;
                if ex.unchecked >= XPUB_CHECK_EVERY {
                    ex.unchecked = 0;
                    drain_subscriptions(&mut ex.xpub, &mut ex.xpub_subs);
                }
            }
        }
        let to_xpub = ex.xpub_subs > 0;
        match ex.style {
            Style::FanOut => {
                let n = ex.legs.len();
                if n == 1 && !to_xpub {
                    return ex.legs[0].send_msg(msg, 0).map_err(send_err);
                }
                if n == 0 {
                    // Only the XPUB: its subscribers, or nobody (the message goes nowhere,
                    // as with a PUB nobody subscribed to).
                    return ex.xpub.send_msg(msg, 0).map_err(send_err);
                }
                for leg in &mut ex.legs[..n - 1] {
                    let mut c = msg.clone();
                    leg.send_msg(&mut c, 0).map_err(send_err)?;
                }
                if to_xpub {
                    let mut c = msg.clone();
                    ex.xpub.send_msg(&mut c, 0).map_err(send_err)?;
                }
                ex.legs[n - 1].send_msg(msg, 0).map_err(send_err)
            }
            Style::LoadBalance => {
                // The legs' PUSH balances between the queues bound from here; the queues
                // attached from elsewhere (XPUB subscribers) take one turn between them.
                ex.turn = !ex.turn;
                if ex.legs.is_empty() || (to_xpub && ex.turn) {
                    ex.xpub.send_msg(msg, 0).map_err(send_err)
                } else {
                    ex.legs[0].send_msg(msg, 0).map_err(send_err)
                }
            }
        }
    }

    /// Receives the next message from any queue of this handle, waiting as long as it takes.
    pub fn receive(&mut self) -> Result<Msg> {
        self.receive_timeout(None)
    }

    /// Receives with a timeout (`None`: forever); `Timeout` when it runs out.
    pub fn receive_timeout(&mut self, timeout: Option<Duration>) -> Result<Msg> {
        let mut m = Msg::default();
        self.receive_into(&mut m, timeout)?;
        Ok(m)
    }

    /// [`receive_timeout`](Self::receive_timeout) into a reused `Msg`.
    #[inline(always)]
    pub fn receive_into(&mut self, msg: &mut Msg, timeout: Option<Duration>) -> Result<()> {
        // The usual case, inlined into the front ends: queues fed only by PUSH legs, a
        // message already queued.
        if self.sub.is_none() && !self.client.has_moves() {
            if let Some(p) = self.pull.as_mut() {
                if p.recv_msg(msg, opt::DONTWAIT).is_ok() {
                    return Ok(());
                }
            }
        }
        self.receive_general(msg, timeout)
    }

    #[inline(never)]
    fn receive_general(&mut self, msg: &mut Msg, timeout: Option<Duration>) -> Result<()> {
        if self.queues.is_empty() {
            return Err(WiringError::Invalid("this handle has no queue".into()));
        }
        if self.client.has_moves() {
            self.apply_moves();
        }
        // Something queued: no clock, no timeout option, no wait.
        if let Some(p) = self.pull.as_mut() {
            match p.recv_msg(msg, opt::DONTWAIT) {
                Ok(()) => return Ok(()),
                Err(oxmq::Error::Again) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if let Some((s, _)) = self.sub.as_mut() {
            match s.recv_msg(msg, opt::DONTWAIT) {
                Ok(()) => return Ok(()),
                Err(oxmq::Error::Again) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if timeout == Some(Duration::ZERO) {
            return Err(WiringError::Timeout);
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if self.client.has_moves() {
                self.apply_moves();
            }
            let slice = match deadline {
                None => RECV_SLICE_MS,
                Some(d) => (d.saturating_duration_since(Instant::now()).as_millis() as i64).min(RECV_SLICE_MS),
            } as i32;
            let r = match (self.pull.as_mut(), self.sub.as_mut()) {
                // One receiving socket (the usual case): its own blocking receive, which
                // reads the connection on this thread when it can.
                (Some(s), None) | (None, Some((s, _))) => {
                    if slice != self.rcvtimeo {
                        s.set_int(opt::RCVTIMEO, slice)?;
                        self.rcvtimeo = slice;
                    }
                    s.recv_msg(msg, 0)
                }
                (Some(p), Some((s, _))) => {
                    let mut items = [PollItem::socket(p, opt::POLLIN), PollItem::socket(s, opt::POLLIN)];
                    oxmq::poll(&mut items, slice as i64)?;
                    let (pr, sr) = (items[0].is_readable(), items[1].is_readable());
                    if pr {
                        self.pull.as_mut().expect("present").recv_msg(msg, opt::DONTWAIT)
                    } else if sr {
                        self.sub.as_mut().expect("present").0.recv_msg(msg, opt::DONTWAIT)
                    } else {
                        Err(oxmq::Error::Again)
                    }
                }
                // A local queue nothing is bound to yet: wait out the slice on nothing.
                (None, None) => {
                    oxmq::poll(&mut [], slice as i64)?;
                    Err(oxmq::Error::Again)
                }
            };
            match r {
                Ok(()) => return Ok(()),
                Err(oxmq::Error::Again) => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Err(WiringError::Timeout);
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The record of a global name, from the name service (one round trip): for other ZeroMQ
    /// programs that want to connect to it.
    pub fn lookup(&self, name: &str) -> Result<Record> {
        self.client.lookup(name)
    }

    /// The endpoint a name of this handle is published at (global or process scope).
    pub fn endpoint_of(&self, name: &str) -> Option<String> {
        match self.names.get(name)? {
            (_, _, Scope::Global) => self.client.lookup(name).ok().map(|r| r.endpoint),
            (_, _, Scope::Process) => lock(process_names()).get(name).map(|p| p.endpoint.clone()),
            _ => None,
        }
    }
}

fn send_err(e: oxmq::Error) -> WiringError {
    match e {
        oxmq::Error::Again => WiringError::Timeout,
        e => e.into(),
    }
}

/// Reads pending (un)subscription messages off an exchange's XPUB, counting them.
fn drain_subscriptions(s: &mut Socket, subs: &mut i64) {
    while let Ok(m) = s.recv(opt::DONTWAIT) {
        match m.as_slice().first() {
            Some(1) => *subs += 1,
            Some(0) => *subs -= 1,
            _ => {}
        }
    }
}

impl Drop for Wiring {
    fn drop(&mut self) {
        // Global names: withdrawn when the client says goodbye (its Drop). Process names:
        // removed here.
        lock(process_names()).retain(|_, p| p.handle != self.id);
        for (name, (_, _, scope)) in &self.names {
            if *scope == Scope::Global {
                let _ = self.client.withdraw(name);
            }
        }
        if let Some((s, _)) = self.sub.as_mut() {
            let _ = s.monitor(None, 0);
        }
        // The sockets and the context go when the fields are dropped: the last reference to
        // the context waits for its I/O threads to deliver what was sent, within each
        // exchange's linger (zmq_ctx_term's wait).
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert_eq!(service_endpoint("", 7000).unwrap(), ("tcp://127.0.0.1:7000".into(), true));
        assert_eq!(service_endpoint("ns.example", 1).unwrap(), (format!("tcp://ns.example:{DEFAULT_PORT}"), false));
        assert_eq!(service_endpoint("10.0.0.1:99", 1).unwrap(), ("tcp://10.0.0.1:99".into(), false));
        assert_eq!(service_endpoint("tcp://10.0.0.1:99", 1).unwrap(), ("tcp://10.0.0.1:99".into(), false));
        assert!(service_endpoint("10.0.0.1:port", 1).is_err());
        assert!(service_endpoint(":99", 1).is_err());
    }

    #[test]
    fn locations() {
        let ip = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7));
        assert_eq!(location_endpoint("", ip).unwrap(), "tcp://10.0.0.7:*");
        assert_eq!(location_endpoint("10.0.0.1:5555", ip).unwrap(), "tcp://10.0.0.1:5555");
        assert_eq!(location_endpoint("eth0", ip).unwrap(), "tcp://eth0:*");
        assert_eq!(location_endpoint(":5555", ip).unwrap(), "tcp://10.0.0.7:5555");
        assert_eq!(location_endpoint("*:0", ip).unwrap(), "tcp://*:*");
        assert!(location_endpoint("10.0.0.1:99999", ip).is_err());
        assert!(location_endpoint("a b:1", ip).is_err());
    }

    #[test]
    fn scopes() {
        assert_eq!(Scope::from_raw(0), Some(Scope::Local));
        assert_eq!(Scope::from_raw(1), Some(Scope::Global));
        assert_eq!(Scope::from_raw(2), Some(Scope::Process));
        assert_eq!(Scope::from_raw(3), None);
    }
}
