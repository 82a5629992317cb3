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
//! * Between two wiring handles the traffic takes the **link** instead, when the handle
//!   that owns the far name has one (its record says where): one PEER socket per handle,
//!   bound beside its reachable names and connected (`connect_peer`) to the links of the
//!   handles it is wired to, so both directions between two handles share one connection. A
//!   request/reply exchange over two one-way connections paid for a bare TCP
//!   acknowledgement in each direction, read by the receiving thread before it could answer.
//!   On the link a message is a data message, except that an empty message is an escape:
//!   the next one from that peer is a control message, or an empty data message if empty
//!   too. The one control message, `A<exchange>`, attaches the sender's queues to that
//!   exchange of the receiver (fan-out exchanges only; balancing ones keep the SUB and the
//!   PUSH legs). A handle attaches again when its link connection comes back up (a
//!   restarted owner forgot it), and an owner drops an attachment when its connection is
//!   gone (`EHOSTUNREACH`).
//!
//! `bind(E, Q)` with E ours: a PUSH leg connects to Q's endpoint, or E sends to the link's
//! connection to Q's owner (no wait: both queue until connected). With only Q ours: the SUB
//! connects to E's endpoint, or the link connects to E's owner and asks for E, and the call
//! returns once the ZMTP handshake is done (the subscription or request is then on its way;
//! as with any SUB, what E sends before it arrives is not delivered to Q). Names resolve in
//! this handle first, then in the process, then through the name service (one round trip;
//! the result is kept and watched by the heartbeat thread, and a wire is re-pointed on the
//! next `send`, `receive` or `bind` after its far end moved). oxmq's reconnection brings a
//! wire back when its far end returns at the same address.

use crate::client::{NameClient, Timing};
use crate::protocol::{self, Kind, Record, Style};
use crate::server::DEFAULT_PORT;
use crate::{Result, WiringError};
use oxmq::monitor::event;
use oxmq::{opt, Context, Msg, PollItem, Socket, SocketType};
use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs, UdpSocket};
use std::os::fd::RawFd;
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
    style: Style,
    /// The owning handle's link endpoint (empty: none).
    link: String,
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
    /// Queues bound from this handle that live in other handles with a link: the routing id
    /// of the link's connection to each (one entry per queue).
    link_legs: Vec<u32>,
    /// Queues of other handles attached to this exchange over their links: the routing ids
    /// of those handles on this handle's link.
    link_subs: Vec<u32>,
    /// Sends since `xpub` (and the link) were last checked for new subscribers.
    unchecked: u32,
    /// Balancing: whose turn it is (the legs' PUSH, or the XPUB's subscribers).
    turn: bool,
}

/// One wire to a global name, re-pointed when the name moves.
struct Wire {
    name: String,
    /// What it is connected to: the name's endpoint, or its owner's link endpoint.
    endpoint: String,
    from: WireFrom,
}

/// Which socket a wire connected.
#[derive(Clone, Copy)]
enum WireFrom {
    /// Leg `.1` of exchange `.0`.
    Leg(usize, usize),
    /// The handle's SUB.
    Sub,
    /// Exchange `.0` sends over the link to routing id `.1`.
    LinkLeg(usize, u32),
    /// A queue of this handle attached over the link (the wire's name is the exchange).
    LinkSub,
}

/// The handle's link: one PEER socket carrying both directions of this handle's traffic
/// with each other wiring handle it is wired to, over one connection per pair of handles.
struct Link {
    sock: Socket,
    /// The link's handshakes (HANDSHAKE_SUCCEEDED events), level-triggered: after a
    /// reconnection this handle attaches its queues again.
    monitor: Socket,
    /// Where the link is bound, by host: the link endpoint published with names bound there.
    bound: HashMap<String, String>,
    /// Handles this one connected to: link endpoint -> routing id.
    peers: HashMap<String, u32>,
    /// Link endpoints whose handshake has completed.
    up: HashSet<String>,
    /// Exchanges of other handles this handle's queues are attached to over the link:
    /// (exchange name, link endpoint).
    subs: Vec<(String, String)>,
    /// Peers whose last message was the escape (an empty message): their next message is a
    /// control message, or an empty data message if it is empty too.
    escaped: HashSet<u32>,
    /// Data messages read off the link while a send looked for control messages (at most
    /// `INBOX_MAX`).
    inbox: VecDeque<Msg>,
    /// Data messages read off the link of a handle with no queue (nothing could receive
    /// them: a foreign peer's), dropped.
    dropped: u64,
}

/// Data messages a sending handle keeps aside for `receive` at most: beyond that they stay in
/// the link socket, whose HWM holds their senders back (an application that only sends must
/// not grow its memory with what others send it).
const INBOX_MAX: usize = 1000;

/// A resolved name: its endpoint, its global record (if resolved through the name service),
/// and its owner's link endpoint with the exchange's style (if another handle owns it and has
/// a link).
type Resolved = (String, Option<Record>, Option<(String, Style)>);

/// The next HANDSHAKE_SUCCEEDED event queued on a monitor's PAIR (its frames: the event
/// number and value, then the endpoint), skipping other events; None once none is queued.
fn next_handshake(monitor: &mut Socket) -> Option<Vec<Msg>> {
    while let Ok(frames) = monitor.recv_multipart(opt::DONTWAIT) {
        let ev = frames.first().map(|f| f.as_slice()).filter(|b| b.len() >= 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        if ev == Some(event::HANDSHAKE_SUCCEEDED as u16) {
            return Some(frames);
        }
    }
    None
}

/// A control message on a link: attach the sender's queues to the exchange named after it.
const CONTROL_ATTACH: u8 = b'A';

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
    /// Created with the first name other handles can reach, or the first wire to a handle
    /// that has a link.
    link: Option<Link>,
    /// Receives that took the link's inline path since the general path last ran (which
    /// looks at the other sockets first).
    link_run: u8,
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
            link: None,
            link_run: 0,
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
        let Some(ep) = endpoint else { return Ok(()) };
        let link = self.link_endpoint_for(ep);
        match scope {
            Scope::Process => {
                let mut p = lock(process_names());
                if p.contains_key(name) {
                    return Err(WiringError::NameTaken(name.to_string()));
                }
                p.insert(name.to_string(), ProcessEntry { kind, endpoint: ep.to_string(), style, link, handle: self.id });
            }
            Scope::Global => {
                self.client.register(name, &Record { kind, endpoint: ep.to_string(), style, link })?;
            }
            Scope::Local => {}
        }
        Ok(())
    }

    /// The handle's link, created on first use.
    fn link(&mut self) -> Result<&mut Link> {
        if self.link.is_none() {
            let mut sock = self.ctx.socket(SocketType::Peer)?;
            sock.set_int(opt::LINGER, self.linger_ms())?;
            self.set_sndtimeo(&mut sock)?;
            let mon_ep = format!("inproc://oxmq-wiring-link-monitor-{}", self.id);
            sock.monitor(Some(&mon_ep), event::HANDSHAKE_SUCCEEDED)?;
            let mut monitor = self.ctx.socket(SocketType::Pair)?;
            monitor.connect(&mon_ep)?;
            monitor.set_fd_level(opt::POLLIN)?;
            // Waits on the link watch the other receiving sockets' descriptors.
            if let Some(p) = self.pull.as_mut() {
                p.set_fd_level(opt::POLLIN)?;
            }
            if let Some((s, _)) = self.sub.as_mut() {
                s.set_fd_level(opt::POLLIN)?;
            }
            self.link = Some(Link {
                sock,
                monitor,
                bound: HashMap::new(),
                peers: HashMap::new(),
                up: HashSet::new(),
                subs: Vec::new(),
                escaped: HashSet::new(),
                inbox: VecDeque::new(),
                dropped: 0,
            });
        }
        Ok(self.link.as_mut().expect("just created"))
    }

    /// The link endpoint to publish beside `published` (a name's `tcp://host:port`): the link
    /// bound on the same host, binding it there first if needed. Empty when that fails (the
    /// name's users then use its plain endpoint only).
    fn link_endpoint_for(&mut self, published: &str) -> String {
        let Some(host) = published.strip_prefix("tcp://").and_then(|a| a.rsplit_once(':')).map(|(h, _)| h.to_string()) else {
            return String::new();
        };
        let Ok(link) = self.link() else { return String::new() };
        if let Some(ep) = link.bound.get(&host) {
            return ep.clone();
        }
        let ep = match link.sock.bind(&format!("tcp://{host}:*")).and_then(|()| link.sock.last_endpoint()) {
            Ok(ep) => ep,
            Err(_) => return String::new(),
        };
        link.bound.insert(host, ep.clone());
        ep
    }

    /// The routing id of this handle's link connection to the link at `ep`, connecting first.
    fn link_peer(&mut self, ep: &str) -> Result<u32> {
        let link = self.link()?;
        if let Some(&rid) = link.peers.get(ep) {
            return Ok(rid);
        }
        let rid = link.sock.connect_peer(ep)?;
        link.peers.insert(ep.to_string(), rid);
        Ok(rid)
    }

    /// Asks the handle at the other end of `rid` to send exchange `exchange`'s messages to
    /// this handle (idempotent there): the escape, then the control message.
    fn send_attach(&mut self, rid: u32, exchange: &str) -> Result<()> {
        let link = self.link()?;
        link.sock.send_msg_to(&mut Msg::new(), rid, 0).map_err(send_err)?;
        let mut ctl = Vec::with_capacity(1 + exchange.len());
        ctl.push(CONTROL_ATTACH);
        ctl.extend_from_slice(exchange.as_bytes());
        link.sock.send_msg_to(&mut Msg::from(ctl), rid, 0).map_err(send_err)
    }

    /// Applies a control message from link peer `rid`.
    fn apply_control(&mut self, rid: u32, ctl: &[u8]) {
        let Some((&CONTROL_ATTACH, name)) = ctl.split_first() else { return };
        let Ok(name) = std::str::from_utf8(name) else { return };
        if let Some(&(Kind::Exchange, eid, _)) = self.names.get(name) {
            let ex = &mut self.exchanges[eid];
            if ex.reachable && ex.style == Style::FanOut && !ex.link_subs.contains(&rid) {
                ex.link_subs.push(rid);
            }
        }
    }

    /// Reads the link without waiting until a data message, which is left in `msg`
    /// (`Ok(true)`); control messages are applied on the way. `Ok(false)`: nothing more.
    fn link_take(&mut self, msg: &mut Msg) -> Result<bool> {
        loop {
            let Some(link) = self.link.as_mut() else { return Ok(false) };
            match link.sock.recv_msg(msg, opt::DONTWAIT) {
                Ok(()) => {}
                Err(oxmq::Error::Again) => return Ok(false),
                Err(e) => return Err(e.into()),
            }
            if self.link_is_data(msg) {
                return Ok(true);
            }
        }
    }

    /// Classifies a message just read off the link: `true` for data (left in `msg`); an escape
    /// or a control message (applied here) is `false`.
    fn link_is_data(&mut self, msg: &Msg) -> bool {
        let rid = msg.routing_id();
        let Some(link) = self.link.as_mut() else { return true };
        if link.escaped.remove(&rid) {
            if msg.is_empty() {
                return true; // an empty data message
            }
            let ctl = msg.to_vec();
            self.apply_control(rid, &ctl);
            return false;
        }
        if msg.is_empty() {
            link.escaped.insert(rid);
            return false;
        }
        true
    }

    /// Handles the link's handshake events: a connection that came (back) up gets this
    /// handle's attachments again (its peer may have restarted and forgotten them).
    fn link_events(&mut self) -> Result<()> {
        let Some(link) = self.link.as_mut() else { return Ok(()) };
        let mut again = Vec::new();
        while let Some(frames) = next_handshake(&mut link.monitor) {
            let Some(at) = frames.get(1).and_then(|f| std::str::from_utf8(f.as_slice()).ok()) else { continue };
            // Only connections this handle made: a peer connecting in is not in `peers`.
            let Some(&rid) = link.peers.get(at) else { continue };
            if !link.up.insert(at.to_string()) {
                for (name, ep) in &link.subs {
                    if ep == at {
                        again.push((rid, name.clone()));
                    }
                }
            }
        }
        for (rid, name) in again {
            self.send_attach(rid, &name)?;
        }
        Ok(())
    }

    /// Waits (to `deadline`) for the link's first handshake with `ep`.
    fn wait_link_up(&mut self, ep: &str, deadline: Instant) -> Result<()> {
        loop {
            self.link_events()?;
            let link = self.link()?;
            if link.up.contains(ep) {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(WiringError::Timeout);
            }
            let mut items = [PollItem::socket(&mut link.monitor, opt::POLLIN)];
            oxmq::poll(&mut items, (left.as_millis().min(50) as i64).max(1))?;
        }
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
        self.exchanges.push(Exchange {
            style,
            xpub,
            xpub_subs: 0,
            reachable,
            legs: Vec::new(),
            link_legs: Vec::new(),
            link_subs: Vec::new(),
            unchecked: 0,
            turn: false,
        });
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
            if self.link.is_some() {
                p.set_fd_level(opt::POLLIN)?;
            }
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
            if self.link.is_some() {
                // The link was created by the publication, while the PULL was out.
                self.pull()?.set_fd_level(opt::POLLIN)?;
            }
            published?;
            pull_bound = true;
        }
        let qid = self.queues.len();
        self.queues.insert(name.to_string(), Queue { pull_bound });
        self.names.insert(name.to_string(), (Kind::Queue, qid, scope));
        Ok(qid)
    }

    /// Where `name` lives, seen from this handle: endpoint, global record if resolved through
    /// the name service, and the owner's link endpoint and the exchange's style when another
    /// handle owns it and has a link.
    fn resolve_linked(&mut self, name: &str, want: Kind) -> Result<Resolved> {
        if !self.names.contains_key(name) {
            if let Some(p) = lock(process_names()).get(name) {
                if p.handle != self.id && p.kind == want {
                    let link = (!p.link.is_empty()).then(|| (p.link.clone(), p.style));
                    return Ok((p.endpoint.clone(), None, link));
                }
            }
        }
        let (ep, rec) = self.resolve(name, want)?;
        let link = rec.as_ref().filter(|r| !r.link.is_empty()).map(|r| (r.link.clone(), r.style));
        Ok((ep, rec, link))
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
                let (ep, rec, link) = self.resolve_linked(queue, Kind::Queue)?;
                if let (Some((link_ep, _)), Style::FanOut) = (&link, self.exchanges[eid].style) {
                    // Over the link: no wait, the link's pipe to that handle queues until
                    // its connection is up.
                    let rid = self.link_peer(link_ep)?;
                    self.exchanges[eid].link_legs.push(rid);
                    if let Some(rec) = rec {
                        self.client.watch(queue, &rec);
                        self.wires.push(Wire {
                            name: queue.to_string(),
                            endpoint: link_ep.clone(),
                            from: WireFrom::LinkLeg(eid, rid),
                        });
                    }
                    return Ok(());
                }
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
                    self.wires.push(Wire { name: queue.to_string(), endpoint: ep, from: WireFrom::Leg(eid, leg) });
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
                        return Err(WiringError::Invalid(format!("neither '{exchange}' nor '{queue}' belongs to this handle")));
                    }
                }
                let (ep, rec, link) = self.resolve_linked(exchange, Kind::Exchange)?;
                if let Some((link_ep, Style::FanOut)) = link {
                    // Over the link: ask the owner to send this exchange here, and wait (as
                    // for the SUB) until the connection is up, the request on its way.
                    let rid = self.link_peer(&link_ep)?;
                    self.send_attach(rid, exchange)?;
                    self.link()?.subs.push((exchange.to_string(), link_ep.clone()));
                    if let Some(rec) = rec {
                        self.client.watch(exchange, &rec);
                        self.wires.push(Wire { name: exchange.to_string(), endpoint: link_ep.clone(), from: WireFrom::LinkSub });
                    }
                    return self.wait_link_up(&link_ep, deadline);
                }
                let (sub, monitor) = self.sub()?;
                while monitor.recv(opt::DONTWAIT).is_ok() {}
                sub.connect(&ep)?;
                if let Some(rec) = rec {
                    self.client.watch(exchange, &rec);
                    self.wires.push(Wire { name: exchange.to_string(), endpoint: ep.clone(), from: WireFrom::Sub });
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
            if self.link.is_some() {
                sub.set_fd_level(opt::POLLIN)?;
            }
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
            while let Some(frames) = next_handshake(monitor) {
                if frames.get(1).map(|f| f.as_slice()) == Some(ep.as_bytes()) {
                    return Ok(());
                }
            }
        }
    }

    /// Re-points wires whose far end moved (called when the heartbeat thread saw a change).
    fn apply_moves(&mut self) {
        for (name, rec) in self.client.take_moves() {
            let Some(rec) = rec else { continue }; // gone for now: the old wire keeps trying
            for i in 0..self.wires.len() {
                let w = &self.wires[i];
                if w.name != name {
                    continue;
                }
                let from = w.from;
                match from {
                    WireFrom::Leg(..) | WireFrom::Sub => {
                        if w.endpoint == rec.endpoint {
                            continue;
                        }
                        let sock = match from {
                            WireFrom::Leg(eid, leg) => &mut self.exchanges[eid].legs[leg],
                            _ => match self.sub.as_mut() {
                                Some((s, _)) => s,
                                None => continue,
                            },
                        };
                        let _ = sock.disconnect(&self.wires[i].endpoint);
                        if sock.connect(&rec.endpoint).is_ok() {
                            self.wires[i].endpoint = rec.endpoint.clone();
                        }
                    }
                    // A linked wire follows the owner's new link (a restarted owner that
                    // kept no link falls back to nothing here: its old link keeps trying).
                    WireFrom::LinkLeg(eid, old) => {
                        if rec.link.is_empty() || w.endpoint == rec.link {
                            continue;
                        }
                        if let Ok(rid) = self.link_peer(&rec.link) {
                            for r in self.exchanges[eid].link_legs.iter_mut().filter(|r| **r == old) {
                                *r = rid;
                            }
                            self.wires[i].endpoint = rec.link.clone();
                            self.wires[i].from = WireFrom::LinkLeg(eid, rid);
                        }
                    }
                    WireFrom::LinkSub => {
                        if rec.link.is_empty() || w.endpoint == rec.link {
                            continue;
                        }
                        let old = w.endpoint.clone();
                        if let Ok(rid) = self.link_peer(&rec.link) {
                            if self.send_attach(rid, &name).is_ok() {
                                if let Some(link) = self.link.as_mut() {
                                    for sub in link.subs.iter_mut().filter(|(n, ep)| *n == name && *ep == old) {
                                        sub.1 = rec.link.clone();
                                    }
                                }
                                self.wires[i].endpoint = rec.link.clone();
                            }
                        }
                    }
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
        // The usual cases, inlined into the front ends.
        match self.direct(eid, msg) {
            Some(Direct::Leg(leg)) => leg.send_msg(msg, 0).map_err(send_err),
            Some(Direct::Link(link, rid)) => link.send_msg_to(msg, rid, 0).map_err(send_err),
            None => self.send_general(eid, msg),
        }
    }

    /// Sends `msg` through exchange `eid` if that needs no wait: `Ok(true)`. `Ok(false)` when
    /// it would have to wait, or when the exchange is one this call does not try (several
    /// destinations, or reachable from other handles): nothing was sent, `msg` is unchanged,
    /// and [`send_msg`](Self::send_msg) sends it. For bindings that may not block in a call.
    #[inline(always)]
    pub fn try_send_msg(&mut self, eid: usize, msg: &mut Msg) -> Result<bool> {
        let r = match self.direct(eid, msg) {
            Some(Direct::Leg(s)) => s.try_send_msg(msg, 0),
            Some(Direct::Link(s, rid)) => s.try_send_msg_to(msg, rid, 0),
            None => {
                return match self.exchanges.get(eid) {
                    Some(_) => Ok(false),
                    None => Err(WiringError::Invalid(format!("no exchange {eid}"))),
                }
            }
        };
        match r {
            Ok(()) => Ok(true),
            Err(oxmq::Error::Again) => Ok(false),
            Err(e) => Err(send_err(e)),
        }
    }

    /// Where `msg` can go straight to when exchange `eid` feeds one queue, no other handle can
    /// attach to it and no moved name is to be applied: its one leg, or the link and the
    /// routing id to send to (not for an empty message, which the link escapes). None
    /// otherwise, and for an unknown `eid`.
    #[inline(always)]
    fn direct(&mut self, eid: usize, msg: &mut Msg) -> Option<Direct<'_>> {
        if self.client.has_moves() {
            return None;
        }
        let ex = self.exchanges.get_mut(eid)?;
        if ex.reachable || ex.style != Style::FanOut {
            return None;
        }
        match (ex.legs.len(), ex.link_legs.len()) {
            (1, 0) => Some(Direct::Leg(&mut ex.legs[0])),
            (0, 1) if !msg.is_empty() => Some(Direct::Link(&mut self.link.as_mut()?.sock, ex.link_legs[0])),
            _ => None,
        }
    }

    #[inline(never)]
    fn send_general(&mut self, eid: usize, msg: &mut Msg) -> Result<()> {
        if self.client.has_moves() {
            self.apply_moves();
        }
        let ex = self.exchanges.get(eid).ok_or_else(|| WiringError::Invalid(format!("no exchange {eid}")))?;
        // Queues attached from elsewhere show up as XPUB subscriptions and link requests:
        // looked for on every send while there are none, now and then after.
        if ex.reachable {
            let none = ex.xpub_subs <= 0 && ex.link_subs.is_empty();
            let ex = &mut self.exchanges[eid];
            ex.unchecked += 1;
            if none || ex.unchecked >= XPUB_CHECK_EVERY {
                ex.unchecked = 0;
                drain_subscriptions(&mut ex.xpub, &mut ex.xpub_subs);
                self.pump_link()?;
                self.link_events()?;
            }
        }
        let Wiring { exchanges, link, .. } = self;
        let ex = &mut exchanges[eid];
        let to_xpub = ex.xpub_subs > 0;
        match ex.style {
            Style::FanOut => {
                // Every target gets a clone but the last, which gets `msg`.
                let n = ex.legs.len() + ex.link_legs.len() + ex.link_subs.len() + usize::from(to_xpub);
                if n == 0 {
                    // Nobody: the message goes nowhere, as with a PUB nobody subscribed to.
                    return ex.xpub.send_msg(msg, 0).map_err(send_err);
                }
                let mut left = n;
                let mut next = |m: &mut Msg| {
                    left -= 1;
                    if left == 0 {
                        std::mem::take(m)
                    } else {
                        m.clone()
                    }
                };
                for leg in &mut ex.legs {
                    leg.send_msg(&mut next(msg), 0).map_err(send_err)?;
                }
                if let Some(link) = link.as_mut() {
                    for &rid in &ex.link_legs {
                        link_send(&mut link.sock, rid, &mut next(msg)).map_err(send_err)?;
                    }
                    let mut gone = Vec::new();
                    for &rid in &ex.link_subs {
                        match link_send(&mut link.sock, rid, &mut next(msg)) {
                            Ok(()) => {}
                            // That handle's connection is gone: it attaches again over its
                            // new connection when it comes back.
                            Err(oxmq::Error::HostUnreach) => gone.push(rid),
                            Err(e) => return Err(send_err(e)),
                        }
                    }
                    ex.link_subs.retain(|r| !gone.contains(r));
                }
                if to_xpub {
                    ex.xpub.send_msg(&mut next(msg), 0).map_err(send_err)?;
                }
                Ok(())
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

    /// Reads what the link has without waiting: control messages are applied, data messages
    /// kept for `receive`.
    fn pump_link(&mut self) -> Result<()> {
        let mut m = Msg::new();
        while self.link.as_ref().is_some_and(|l| l.inbox.len() < INBOX_MAX) && self.link_take(&mut m)? {
            let keep = !self.queues.is_empty();
            if let Some(link) = self.link.as_mut() {
                if keep {
                    link.inbox.push_back(std::mem::take(&mut m));
                } else {
                    link.dropped += 1;
                }
            }
        }
        Ok(())
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
        // The usual cases, inlined into the front ends: a message already queued on the link
        // (every 32nd receive looks at the other sockets first), or on the PULL when the
        // handle has no other receiving socket.
        if !self.client.has_moves() {
            if let Some(link) = self.link.as_mut() {
                self.link_run = self.link_run.wrapping_add(1);
                if !self.link_run.is_multiple_of(32) && link.inbox.is_empty() && link.sock.recv_msg(msg, opt::DONTWAIT).is_ok() {
                    if !msg.is_empty() && (link.escaped.is_empty() || !link.escaped.contains(&msg.routing_id())) {
                        return Ok(());
                    }
                    return self.receive_linked_slow(msg, timeout);
                }
            } else if self.sub.is_none() {
                if let Some(p) = self.pull.as_mut() {
                    if p.recv_msg(msg, opt::DONTWAIT).is_ok() {
                        return Ok(());
                    }
                }
            }
        }
        self.receive_general(msg, timeout)
    }

    /// The inline path read an escape, or a message after one: handled as `link_take` does.
    #[inline(never)]
    fn receive_linked_slow(&mut self, msg: &mut Msg, timeout: Option<Duration>) -> Result<()> {
        if self.link_is_data(msg) {
            return Ok(());
        }
        self.receive_general(msg, timeout)
    }

    /// Receives for a handle with a link: whatever is queued on any of its receiving sockets,
    /// else a wait on the link (its direct path) that also watches the others' descriptors.
    fn receive_with_link(&mut self, msg: &mut Msg, timeout: Option<Duration>) -> Result<()> {
        // The clock is read only when the call has to wait.
        let mut deadline: Option<Option<Instant>> = None;
        loop {
            if self.client.has_moves() {
                self.apply_moves();
            }
            if let Some(m) = self.link.as_mut().and_then(|l| l.inbox.pop_front()) {
                msg.replace_with(m);
                return Ok(());
            }
            for s in [self.pull.as_mut(), self.sub.as_mut().map(|(s, _)| s)].into_iter().flatten() {
                match s.recv_msg(msg, opt::DONTWAIT) {
                    Ok(()) => return Ok(()),
                    Err(oxmq::Error::Again) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            if self.link_take(msg)? {
                return Ok(());
            }
            self.link_events()?;
            if timeout == Some(Duration::ZERO) {
                return Err(WiringError::Timeout);
            }
            let deadline = *deadline.get_or_insert_with(|| timeout.map(|t| Instant::now() + t));
            let left = match deadline {
                None => Duration::from_millis(RECV_SLICE_MS as u64),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(WiringError::Timeout);
                    }
                    left.min(Duration::from_millis(RECV_SLICE_MS as u64))
                }
            };
            let mut fds: [RawFd; 3] = [-1; 3];
            let mut k = 0;
            for fd in [self.pull.as_ref().map(|p| p.fd()), self.sub.as_ref().map(|(s, _)| s.fd())].into_iter().flatten() {
                fds[k] = fd;
                k += 1;
            }
            let link = self.link.as_mut().expect("a handle with a link");
            fds[k] = link.monitor.fd();
            k += 1;
            match link.sock.wait_recv_also(Some(left), &fds[..k]) {
                Ok(()) | Err(oxmq::Error::Again) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    #[inline(never)]
    fn receive_general(&mut self, msg: &mut Msg, timeout: Option<Duration>) -> Result<()> {
        if self.queues.is_empty() {
            return Err(WiringError::Invalid("this handle has no queue".into()));
        }
        if self.link.is_some() {
            return self.receive_with_link(msg, timeout);
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

/// Where [`Wiring::direct`] sends.
enum Direct<'a> {
    Leg(&'a mut Socket),
    /// The link, and the routing id to send to.
    Link(&'a mut Socket, u32),
}

/// Sends `msg` over the link to `rid`; an empty message goes as two (the escape, then the
/// empty message) so it is not taken for the escape.
fn link_send(sock: &mut Socket, rid: u32, msg: &mut Msg) -> oxmq::Result<()> {
    if msg.is_empty() {
        sock.send_msg_to(&mut Msg::new(), rid, 0)?;
    }
    sock.send_msg_to(msg, rid, 0)
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
        if let Some(link) = self.link.as_mut() {
            let _ = link.sock.monitor(None, 0);
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

    fn linked_pair() -> (crate::NameServer, Wiring, usize, Wiring, usize) {
        let ns = crate::NameServer::start("tcp://127.0.0.1:*", crate::Backend::Memory).expect("name server");
        let opts = Options {
            timing: Timing { request_timeout: Duration::from_secs(2), ttl: Duration::from_millis(600) },
            ..Options::default()
        };
        let mut owner = Wiring::with_options(ns.endpoint(), opts.clone()).unwrap();
        owner.create_queue("QG", Scope::Global, "").unwrap();
        let eg = owner.create_exchange("EG", Scope::Global, "").unwrap();
        let mut user = Wiring::with_options(ns.endpoint(), opts).unwrap();
        let el = user.create_exchange("EL", Scope::Local, "").unwrap();
        user.create_queue("QL", Scope::Local, "").unwrap();
        user.bind("EG", "QL").unwrap();
        user.bind("EL", "QG").unwrap();
        (ns, owner, eg, user, el)
    }

    const T: Option<Duration> = Some(Duration::from_secs(10));

    /// The wiring of a request/reply exchange between two handles (as remote_lat/local_lat
    /// do it) rides one link connection, both ways, with every size and the empty message.
    #[test]
    fn a_round_trip_between_two_handles_takes_one_link_connection() {
        let (_ns, mut owner, eg, mut user, el) = linked_pair();
        assert!(user.sub.is_none(), "no SUB: the exchange comes over the link");
        assert!(user.exchanges[el].legs.is_empty(), "no PUSH leg: the queue is reached over the link");
        assert_eq!(user.link.as_ref().unwrap().peers.len(), 1, "one connection to the owner");
        let big = vec![7u8; 100_000];
        let bodies: Vec<&[u8]> = vec![b"ping", b"", b"AEG", &big, b"\0", b""];
        for body in &bodies {
            user.send(el, body.to_vec()).unwrap();
            let got = owner.receive_timeout(T).unwrap();
            assert_eq!(got.as_slice(), *body);
            owner.send(eg, got.to_vec()).unwrap();
            assert_eq!(user.receive_timeout(T).unwrap().as_slice(), *body);
        }
        assert_eq!(owner.exchanges[eg].link_subs.len(), 1, "a data message that looks like a request is data");
        assert!(matches!(owner.receive_timeout(Some(Duration::from_millis(20))), Err(WiringError::Timeout)));
        assert!(matches!(user.receive_timeout(Some(Duration::from_millis(20))), Err(WiringError::Timeout)));
    }

    /// An owner that only sends learns of a queue attached over the link on a send, and what
    /// it reads off the link meanwhile waits for its `receive`.
    #[test]
    fn a_sending_owner_reads_attachments_and_keeps_data_for_receive() {
        let (_ns, mut owner, eg, mut user, el) = linked_pair();
        user.send(el, b"early".to_vec()).unwrap();
        // The attachment and "early" are on their way in that order; sends look for the
        // attachment until it has come, and keep "early" aside.
        let deadline = Instant::now() + Duration::from_secs(10);
        while owner.exchanges[eg].link_subs.is_empty() {
            assert!(Instant::now() < deadline, "the attachment never arrived");
            owner.send(eg, b"lost before the attachment".to_vec()).unwrap();
            owner.link.as_mut().unwrap().sock.wait_recv(Some(Duration::from_millis(10))).ok();
        }
        owner.send(eg, b"after".to_vec()).unwrap();
        // The send that found the attachment delivered its own message too.
        loop {
            let m = user.receive_timeout(T).unwrap();
            if m.as_slice() == b"after" {
                break;
            }
            assert_eq!(m.as_slice(), b"lost before the attachment");
        }
        assert_eq!(owner.receive_timeout(T).unwrap().as_slice(), b"early");
    }

    /// An owner that comes back at the same link address (a restart) has forgotten the
    /// attachments: the other handle sees its link connection's new handshake and attaches
    /// again, and what it sends meanwhile waits in its link's pipe.
    #[test]
    fn an_owner_back_at_the_same_link_gets_its_attachments_again() {
        let (ns, mut owner, eg, mut user, el) = linked_pair();
        user.send(el, b"one".to_vec()).unwrap();
        assert_eq!(owner.receive_timeout(T).unwrap().as_slice(), b"one");
        owner.send(eg, b"two".to_vec()).unwrap();
        assert_eq!(user.receive_timeout(T).unwrap().as_slice(), b"two");
        let (host, link_ep) = owner.link.as_ref().unwrap().bound.iter().next().map(|(h, e)| (h.clone(), e.clone())).unwrap();
        drop(owner);

        let opts = Options {
            timing: Timing { request_timeout: Duration::from_secs(2), ttl: Duration::from_millis(600) },
            ..Options::default()
        };
        let mut owner = Wiring::with_options(ns.endpoint(), opts).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while owner.link().unwrap().sock.bind(&link_ep).is_err() {
            assert!(Instant::now() < deadline, "the old link address never came free");
            std::thread::yield_now();
        }
        owner.link.as_mut().unwrap().bound.insert(host, link_ep.clone());
        owner.create_queue("QG", Scope::Global, "").unwrap();
        let eg = owner.create_exchange("EG", Scope::Global, "").unwrap();
        assert_eq!(owner.endpoint_of("EG").map(|_| owner.client.lookup("EG").unwrap().link), Some(link_ep));

        user.send(el, b"three".to_vec()).unwrap();
        assert_eq!(owner.receive_timeout(T).unwrap().as_slice(), b"three", "the user's link pipe reconnected");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            owner.send(eg, b"four".to_vec()).unwrap();
            if let Ok(m) = user.receive_timeout(Some(Duration::from_millis(50))) {
                assert_eq!(m.as_slice(), b"four");
                break;
            }
            assert!(Instant::now() < deadline, "the user never attached again");
        }
    }

    /// What a foreign peer sends over the link to a handle that only sends is dropped (it
    /// has no queue); a handle with queues keeps at most INBOX_MAX aside and leaves the rest
    /// in the link socket; control messages still arrive once `receive` has made room.
    #[test]
    fn a_sending_handle_keeps_a_bounded_inbox() {
        let ns = crate::NameServer::start("tcp://127.0.0.1:*", crate::Backend::Memory).expect("name server");
        let opts = Options {
            timing: Timing { request_timeout: Duration::from_secs(2), ttl: Duration::from_millis(600) },
            ..Options::default()
        };
        for with_queue in [false, true] {
            let mut h = Wiring::with_options(ns.endpoint(), opts.clone()).unwrap();
            let name = if with_queue { "EQ" } else { "E" };
            let eid = h.create_exchange(name, Scope::Global, "").unwrap();
            if with_queue {
                h.create_queue("Q", Scope::Local, "").unwrap();
            }
            let link_ep = h.client.lookup(name).unwrap().link;
            let ctx = Context::new();
            let mut foreign = ctx.socket(SocketType::Peer).unwrap();
            let rid = foreign.connect_peer(&link_ep).unwrap();
            let total = 3 * INBOX_MAX as u64;
            for i in 0..total {
                foreign.send_msg_to(&mut Msg::from(i.to_be_bytes().to_vec()), rid, 0).unwrap();
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            let link = |h: &Wiring| h.link.as_ref().map(|l| (l.inbox.len(), l.dropped)).unwrap();
            loop {
                h.send(eid, b"x".to_vec()).unwrap();
                let (kept, dropped) = link(&h);
                assert!(kept <= INBOX_MAX, "{kept} messages kept aside");
                if with_queue && kept == INBOX_MAX || !with_queue && dropped == total {
                    break;
                }
                assert!(Instant::now() < deadline, "kept {kept}, dropped {dropped}");
                h.link.as_mut().unwrap().sock.wait_recv(Some(Duration::from_millis(10))).ok();
            }
            if with_queue {
                // In order, none lost: the first INBOX_MAX from the inbox, the rest from the link.
                for i in 0..total {
                    assert_eq!(h.receive_timeout(T).unwrap().as_slice(), i.to_be_bytes(), "message {i}");
                }
                assert_eq!(link(&h).1, 0);
            } else {
                assert_eq!(link(&h).0, 0);
            }
        }
    }

    #[test]
    fn scopes() {
        assert_eq!(Scope::from_raw(0), Some(Scope::Local));
        assert_eq!(Scope::from_raw(1), Some(Scope::Global));
        assert_eq!(Scope::from_raw(2), Some(Scope::Process));
        assert_eq!(Scope::from_raw(3), None);
    }
}
