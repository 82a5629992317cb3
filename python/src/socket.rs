//! `Socket` and `Context`: thin shells over `oxmq::Socket` and `oxmq::Context`.
//!
//! Three rules shape every method here:
//! - **Never block with the GIL held.** A call first tries the operation non-blocking with the
//!   GIL held (the fast path: a message is already there, or there is room to send). Only if
//!   that would block does it wait on the socket's readiness fd, with the GIL released.
//! - **Ctrl-C arrives promptly.** The wait is sliced into waits of at most [`SLICE_MS`]; between
//!   slices `Python::check_signals` runs, so KeyboardInterrupt surfaces within ~0.1 s. The
//!   socket's own RCVTIMEO/SNDTIMEO bound the total.
//! - **Misuse raises, never crashes.** The socket lives in a [`SockCell`] (an `Option<_>` behind
//!   a busy flag); a second thread using it at the same time gets ZMQError(EFSM, "in use by
//!   another thread") from `try_lock`, and a closed socket (`None`) gives ZMQError(ENOTSOCK).
//!
//! The hot path allocates nothing but the Python object it returns: `send(bytes)` builds the
//! `Msg` straight from the bytes' memory (inline up to 38 B, or sharing the bytes object itself
//! above [`SHARE_THRESHOLD`]), and `recv()` creates the `bytes` straight from the `Msg` body.

use crate::busy::{BusyCell, BusyGuard};
use crate::error::{errno_err, to_py, IntoPy, EBUSY_TEXT};
use crate::frame::{frame_group, frame_msg, new_frame, new_frame_in, BufferView};
use bytes::Bytes;
use oxmq::{opt, Msg, PollItem, SocketType, SyncSocket};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest wait with the GIL released before checking for signals.
const SLICE_MS: u64 = 100;

/// `bytes` bodies at least this long are sent without copying: the `Msg` holds a reference to
/// the (immutable) bytes object. Below it, a copy is cheaper than the shared owner.
const SHARE_THRESHOLD: usize = 1024;

/// A Python `bytes` object as the owner of a `Bytes` body. Dropping it without the GIL (on an
/// I/O thread) is fine: PyO3 defers the decref to the next time a thread holds the GIL.
struct PyBytesOwner {
    _obj: Py<PyBytes>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: `ptr`/`len` point into the bytes object's immutable buffer, which lives as long as
// `_obj` does; reading immutable memory from any thread is sound.
unsafe impl Send for PyBytesOwner {}
// SAFETY: as for Send: immutable memory kept alive by `_obj`.
unsafe impl Sync for PyBytesOwner {}

impl AsRef<[u8]> for PyBytesOwner {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: see the Send impl.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// A copy of `s` as a frame, with [`Msg::copy_from_raw`]: a small body is loaded in words and
/// stored into the frame once. `Msg::copy_from` zeroes the inline buffer, calls memcpy for the
/// length, and the frame is then moved by loads across those narrower stores: a
/// store-forwarding stall per message.
#[inline(always)]
pub(crate) fn copy_msg(s: &[u8]) -> Msg {
    // SAFETY: `s` is valid for reads of its length.
    unsafe { Msg::copy_from_raw(s.as_ptr(), s.len()) }
}

/// A frame to send from a Python object: bytes, Frame, or any contiguous buffer.
pub fn msg_from_obj(obj: &Bound<'_, PyAny>) -> PyResult<Msg> {
    match small_bytes(obj) {
        Some(s) => Ok(copy_msg(s)),
        None => msg_from_any(obj),
    }
}

/// The contents of `obj` if it is exactly `bytes` and shorter than [`SHARE_THRESHOLD`] (a
/// frame copies it), tested without a call into CPython: the stable ABI's `PyBytes_Check`
/// calls `PyType_GetFlags`.
#[inline(always)]
pub(crate) fn small_bytes<'a>(obj: &'a Bound<'_, PyAny>) -> Option<&'a [u8]> {
    // SAFETY: reads the type pointer of a live object.
    if unsafe { ffi::Py_TYPE(obj.as_ptr()) } != &raw mut ffi::PyBytes_Type {
        return None;
    }
    // SAFETY: `obj` is a bytes object: `PyBytes_AsString` cannot fail and points at its
    // `ob_size` bytes (`ob_size` is in the stable ABI's `PyVarObject`), immutable and alive
    // as long as `obj` is.
    let s = unsafe {
        let p = ffi::PyBytes_AsString(obj.as_ptr()) as *const u8;
        std::slice::from_raw_parts(p, ffi::Py_SIZE(obj.as_ptr()) as usize)
    };
    (s.len() < SHARE_THRESHOLD).then_some(s)
}

/// [`msg_from_obj`] for everything but a small `bytes`.
#[inline(never)]
pub fn msg_from_any(obj: &Bound<'_, PyAny>) -> PyResult<Msg> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        let s = b.as_bytes();
        if s.len() < SHARE_THRESHOLD {
            return Ok(copy_msg(s));
        }
        let owner = PyBytesOwner { ptr: s.as_ptr(), len: s.len(), _obj: b.clone().unbind() };
        return Ok(Msg::from_bytes(Bytes::from_owner(owner)));
    }
    if let Some(m) = frame_msg(obj) {
        return Ok(m);
    }
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("unicode not allowed, use send_string"));
    }
    // Any other buffer (bytearray, memoryview, numpy...) may be mutated after send returns,
    // so it is copied.
    match BufferView::get(obj, false) {
        Ok(v) => Ok(copy_msg(v.as_slice())),
        Err(_) => Err(PyTypeError::new_err(format!(
            "expected bytes or a buffer, got {}",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))),
    }
}

/// Where a blocking call's time limit comes from.
#[derive(Clone, Copy)]
enum Limit {
    /// A socket option (RCVTIMEO, SNDTIMEO), read only when the call has to wait.
    Option(i32),
    /// Milliseconds, -1 for none.
    Ms(i64),
}

/// Runs `op` (a non-blocking attempt) until it does not say EAGAIN, waiting on the socket's fd
/// between attempts with the GIL released, in slices, checking for signals between slices.
fn wait_loop<T>(
    py: Python<'_>,
    s: &mut oxmq::Socket,
    block: bool,
    limit: Limit,
    mut op: impl FnMut(&mut oxmq::Socket) -> oxmq::Result<T>,
) -> PyResult<T> {
    match op(s) {
        Err(oxmq::Error::Again) => {}
        r => return r.py_err(py),
    }
    wait_after_again(py, s, block, limit, op)
}

/// [`wait_loop`] once a first attempt has said EAGAIN: for callers that made it themselves.
#[inline(never)]
fn wait_after_again<T>(
    py: Python<'_>,
    s: &mut oxmq::Socket,
    block: bool,
    limit: Limit,
    mut op: impl FnMut(&mut oxmq::Socket) -> oxmq::Result<T>,
) -> PyResult<T> {
    if !block {
        return Err(to_py(py, oxmq::Error::Again));
    }
    let timeout = match limit {
        Limit::Option(o) => s.get_int(o).py_err(py)? as i64,
        Limit::Ms(ms) => ms,
    };
    if timeout == 0 {
        return Err(to_py(py, oxmq::Error::Again));
    }
    let deadline = (timeout > 0).then(|| Instant::now() + Duration::from_millis(timeout as u64));
    let fd = s.fd();
    let receiving = matches!(limit, Limit::Option(opt::RCVTIMEO));
    loop {
        let slice = match deadline {
            None => SLICE_MS as i32,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                (left.as_micros().div_ceil(1000) as u64).min(SLICE_MS) as i32
            }
        };
        // The fd is readable whenever the socket's state may have changed (a command is
        // pending); `op` drains it. Edge-triggered like ZMQ_FD, so waiting after a failed
        // attempt cannot miss a wake-up.
        if receiving {
            // A receive waits in the core, which reads the connections on this thread where it
            // can (one wake-up per message instead of two). Its result only says why the slice
            // ended: timeout, signal and shutdown are all seen below.
            py.detach(|| {
                let _ = s.wait_recv(Some(Duration::from_millis(slice as u64)));
            });
        } else {
            py.detach(|| {
                let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
                // SAFETY: one valid pollfd for the duration of the call. EINTR is fine: the
                // loop checks signals and retries.
                unsafe { libc::poll(&mut pfd, 1, slice) };
            });
        }
        py.check_signals()?;
        match op(s) {
            Err(oxmq::Error::Again) => {}
            r => return r.py_err(py),
        }
        if let Some(d) = deadline {
            if Instant::now() >= d {
                return Err(to_py(py, oxmq::Error::Again));
            }
        }
    }
}

/// How an option's value is represented in Python.
#[derive(PartialEq)]
enum OptKind {
    Int,
    Int64,
    UInt64,
    Bytes,
}

fn opt_kind(option: i32) -> OptKind {
    match option {
        opt::MAXMSGSIZE => OptKind::Int64,
        opt::AFFINITY => OptKind::UInt64,
        opt::ROUTING_ID
        | opt::SUBSCRIBE
        | opt::UNSUBSCRIBE
        | opt::LAST_ENDPOINT
        | opt::PLAIN_USERNAME
        | opt::PLAIN_PASSWORD
        | opt::CURVE_PUBLICKEY
        | opt::CURVE_SECRETKEY
        | opt::CURVE_SERVERKEY
        | opt::ZAP_DOMAIN
        | opt::CONNECT_ROUTING_ID
        | opt::XPUB_WELCOME_MSG
        | opt::BINDTODEVICE
        | opt::METADATA
        | opt::HELLO_MSG
        | opt::DISCONNECT_MSG
        | opt::OXMQ_NAME
        | opt::WSS_KEY_PEM
        | opt::WSS_CERT_PEM
        | opt::WSS_TRUST_PEM
        | opt::WSS_HOSTNAME
        | 68 /* SOCKS_PROXY */ | 99 /* SOCKS_USERNAME */ | 100 /* SOCKS_PASSWORD */ => OptKind::Bytes,
        _ => OptKind::Int,
    }
}

/// A ZeroMQ context (base class; `oxmq.Context` adds pyzmq's conveniences).
#[pyclass(subclass, frozen, module = "oxmq._oxmq", name = "Context")]
pub struct Context {
    pub inner: oxmq::Context,
    closed: AtomicBool,
}

#[pymethods]
impl Context {
    #[new]
    #[pyo3(signature = (io_threads = 1, **_kwargs))]
    fn new(py: Python<'_>, io_threads: i32, _kwargs: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let inner = oxmq::Context::new();
        if io_threads != 1 {
            inner.set(opt::IO_THREADS, io_threads).py_err(py)?;
        }
        Ok(Context { inner, closed: AtomicBool::new(false) })
    }

    /// Sets a context option (IO_THREADS, MAX_SOCKETS, ...).
    fn set(&self, py: Python<'_>, option: i32, optval: i32) -> PyResult<()> {
        self.inner.set(option, optval).py_err(py)
    }

    /// Reads a context option.
    fn get(&self, py: Python<'_>, option: i32) -> PyResult<i32> {
        self.inner.get(option).py_err(py)
    }

    /// Every socket's counters in the Prometheus text format (OpenMetrics with
    /// `openmetrics=True`), as the `/metrics` endpoint `OXMQ_METRICS_ADDR` serves them. Waits
    /// (GIL released) up to `timeout` ms for sockets to publish fresh counts: a socket does at
    /// its thread's next call, or at once while it waits in recv or poll. A caller on the
    /// sockets' own thread (an asyncio loop) passes 0 and gets the counts published since its
    /// previous call.
    #[pyo3(signature = (timeout = 100, openmetrics = false))]
    fn metrics(&self, py: Python<'_>, timeout: u64, openmetrics: bool) -> String {
        let format = if openmetrics { oxmq::metrics::Format::OpenMetrics } else { oxmq::metrics::Format::Prometheus };
        let inner = self.inner.clone();
        py.detach(move || inner.metrics_with(format, Duration::from_millis(timeout.min(60_000))))
    }

    /// Makes blocking and later calls on this context's sockets raise ContextTerminated.
    fn shutdown(&self) {
        self.inner.shutdown();
    }

    /// Shuts down and waits (GIL released) until every socket of this context is closed.
    ///
    /// The wait runs on a helper thread so this call can check for signals every
    /// [`SLICE_MS`]: Ctrl-C during a term that waits for an unclosed socket raises
    /// KeyboardInterrupt (the context stays shut down; the helper finishes the term later).
    fn term(&self, py: Python<'_>) -> PyResult<()> {
        let inner = self.inner.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("oxmq-term".into())
            .spawn(move || {
                let _ = tx.send(inner.term());
            })
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
        let mut rx = rx;
        loop {
            // A Receiver is Send but not Sync: move it into the GIL-free section and back.
            let (r, back) = py.detach(move || (rx.recv_timeout(Duration::from_millis(SLICE_MS)), rx));
            rx = back;
            match r {
                Ok(r) => {
                    r.py_err(py)?;
                    break;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => py.check_signals()?,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        self.closed.store(true, Ordering::Release);
        Ok(())
    }

    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

/// The socket of a Python `Socket`: `Option<oxmq::Socket>` (None once closed), one thread at
/// a time.
pub(crate) type SockCell = BusyCell<Option<oxmq::Socket>>;
type SockGuard<'a> = BusyGuard<'a, Option<oxmq::Socket>>;

/// A socket of a thread-safe draft type (SERVER, CLIENT, RADIO, DISH, SCATTER, GATHER, PEER,
/// CHANNEL): as in libzmq, any thread may call into it at any time (`oxmq::SyncSocket`). A
/// call holds a read lock for its duration, taken without waiting (the lock is written only
/// by `close`, so failing to take it means the socket is closing: ENOTSOCK); a call that waits
/// does so in slices and returns ENOTSOCK at the first slice after a `close`, which takes the
/// write lock once the calls in flight have returned.
pub(crate) struct Shared {
    sock: std::sync::RwLock<Option<SyncSocket>>,
}

/// A thread-safe socket held for one call (see [`Shared`]).
pub(crate) struct SyncRef<'a>(std::sync::RwLockReadGuard<'a, Option<SyncSocket>>);

impl std::ops::Deref for SyncRef<'_> {
    type Target = SyncSocket;
    fn deref(&self) -> &SyncSocket {
        self.0.as_ref().expect("checked when taken")
    }
}

/// A ZeroMQ socket (base class; `oxmq.Socket` adds pyzmq's conveniences).
#[pyclass(subclass, frozen, module = "oxmq._oxmq", name = "Socket")]
pub struct Socket {
    inner: SockCell,
    /// Thread-safe types only (`inner` then stays empty).
    shared: Option<Shared>,
    closed: AtomicBool,
    socket_type: i32,
    fd: i32,
    context: Py<PyAny>,
}

impl Socket {
    /// Locks the socket for one call: EFSM if another thread is using it, ENOTSOCK if closed.
    #[inline]
    fn lock(&self, py: Python<'_>) -> PyResult<SockGuard<'_>> {
        let Some(g) = self.inner.try_lock() else {
            return Err(errno_err(py, oxmq::error::EFSM, Some(EBUSY_TEXT)));
        };
        if g.is_none() {
            return Err(to_py(py, oxmq::Error::NotSock));
        }
        Ok(g)
    }

    /// The thread-safe socket, for one call: None for the other types; ENOTSOCK once closed or
    /// closing.
    #[inline]
    fn sync(&self, py: Python<'_>) -> PyResult<Option<SyncRef<'_>>> {
        let Some(sh) = &self.shared else { return Ok(None) };
        match sh.sock.try_read() {
            Ok(g) if g.is_some() => Ok(Some(SyncRef(g))),
            _ => Err(to_py(py, oxmq::Error::NotSock)),
        }
    }

    /// Runs `f` on the socket; `f` must not wait (a thread-safe socket is locked meanwhile).
    #[inline]
    fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&mut oxmq::Socket) -> PyResult<R>) -> PyResult<R> {
        if let Some(s) = self.sync(py)? {
            let mut g = s.lock();
            return f(&mut g);
        }
        let mut g = self.lock(py)?;
        match g.as_mut() {
            Some(s) => f(s),
            None => Err(to_py(py, oxmq::Error::NotSock)),
        }
    }

    /// Receives one frame as a Frame (with its group on a DISH).
    pub(crate) fn recv_frame<'py>(&self, py: Python<'py>, flags: i32) -> PyResult<Bound<'py, PyAny>> {
        if self.shared.is_some() {
            let (m, group) = self.shared_recv(py, flags)?;
            let more = m.more();
            return new_frame_in(py, m, more, group);
        }
        let m = self.recv_one(py, flags)?;
        to_py_frame(py, m, false)
    }

    pub(crate) fn recv_one(&self, py: Python<'_>, flags: i32) -> PyResult<Msg> {
        if self.shared.is_some() {
            return Ok(self.shared_recv(py, flags)?.0);
        }
        self.with(py, |s| wait_loop(py, s, flags & opt::DONTWAIT == 0, Limit::Option(opt::RCVTIMEO), |s| s.recv(opt::DONTWAIT)))
    }

    /// `recv()` as bytes, the call a messaging loop makes per message: the message is turned
    /// into a `bytes` where it is received, with the socket held once, and only a call that
    /// has to wait goes on to [`wait_after_again`]. Returns a new reference.
    #[inline]
    pub(crate) fn recv_bytes(&self, py: Python<'_>, flags: i32) -> PyResult<*mut ffi::PyObject> {
        if self.shared.is_some() {
            return new_bytes(py, &self.shared_recv(py, flags)?.0);
        }
        let mut g = self.lock(py)?;
        let Some(s) = g.as_mut() else { return Err(to_py(py, oxmq::Error::NotSock)) };
        match s.recv(opt::DONTWAIT) {
            Ok(m) => new_bytes(py, &m),
            Err(oxmq::Error::Again) => {
                let m =
                    wait_after_again(py, s, flags & opt::DONTWAIT == 0, Limit::Option(opt::RCVTIMEO), |s| s.recv(opt::DONTWAIT))?;
                new_bytes(py, &m)
            }
            Err(e) => Err(to_py(py, e)),
        }
    }

    /// Sends one frame built from `data` (bytes, Frame or buffer). Like [`Socket::recv_bytes`],
    /// one non-blocking attempt with the socket held once before any waiting.
    ///
    /// The common case, a small `bytes`, builds its frame in place and sends it in one inlined
    /// branch: merging it with the general case's frame made the compiler shuffle the frame's
    /// 56 bytes between stack slots, a few dozen instructions per message. Inlined into the
    /// fast call, so one function frame and no `PyResult` return slot sit between them.
    #[inline(always)]
    pub(crate) fn send_one(&self, py: Python<'_>, data: &Bound<'_, PyAny>, flags: i32) -> PyResult<()> {
        if let Some(s) = small_bytes(data) {
            let mut m = copy_msg(s);
            return self.send_msg(py, &mut m, flags);
        }
        let mut m = msg_from_any(data)?;
        if self.shared.is_some() {
            return self.shared_send(py, &mut m, frame_group(data), flags);
        }
        self.send_msg(py, &mut m, flags)
    }

    #[inline(always)]
    fn send_msg(&self, py: Python<'_>, m: &mut Msg, flags: i32) -> PyResult<()> {
        if self.shared.is_some() {
            return self.shared_send(py, m, None, flags);
        }
        let f = (flags & opt::SNDMORE) | opt::DONTWAIT;
        let mut g = self.lock(py)?;
        let Some(s) = g.as_mut() else { return Err(to_py(py, oxmq::Error::NotSock)) };
        // A blocking send waits here, with the GIL released, between attempts that must each
        // see the peers' progress afresh (`try_send_msg`); the caller's own DONTWAIT send is
        // the core's, which reads it as libzmq does.
        let block = flags & opt::DONTWAIT == 0;
        let r = if block { s.try_send_msg(m, f) } else { s.send_msg(m, f) };
        match r {
            Ok(()) => Ok(()),
            Err(oxmq::Error::Again) => wait_after_again(py, s, block, Limit::Option(opt::SNDTIMEO), |s| s.try_send_msg(m, f)),
            Err(e) => Err(to_py(py, e)),
        }
    }
}

/// The thread-safe types' sends, receives and waits (see [`Shared`]).
impl Socket {
    /// Receives one frame, with its group on a DISH.
    pub(crate) fn shared_recv(&self, py: Python<'_>, flags: i32) -> PyResult<(Msg, Option<Bytes>)> {
        let s = self.sync(py)?.ok_or_else(|| to_py(py, oxmq::Error::NotSock))?;
        let dish = self.socket_type == SocketType::Dish.as_raw();
        let op = move |sk: &mut oxmq::Socket| -> oxmq::Result<(Msg, Option<Bytes>)> {
            let m = sk.recv(opt::DONTWAIT)?;
            Ok((m, if dish { sk.last_group() } else { None }))
        };
        self.shared_wait(py, &s, flags & opt::DONTWAIT == 0, false, opt::RCVTIMEO, op)
    }

    /// Sends one frame (to `group` on a RADIO; a frame without one goes to the empty group, as
    /// in libzmq). `m` is left to the caller on error.
    fn shared_send(&self, py: Python<'_>, m: &mut Msg, group: Option<Bytes>, flags: i32) -> PyResult<()> {
        let s = self.sync(py)?.ok_or_else(|| to_py(py, oxmq::Error::NotSock))?;
        let block = flags & opt::DONTWAIT == 0;
        let f = (flags & opt::SNDMORE) | opt::DONTWAIT;
        let op = |sk: &mut oxmq::Socket| match &group {
            Some(g) => sk.send_group_msg(g, m, f),
            // A blocking send's attempts read the peers' progress afresh (see `send_msg`).
            None if block => sk.try_send_msg(m, f),
            None => sk.send_msg(m, f),
        };
        self.shared_wait(py, &s, block, true, opt::SNDTIMEO, op)
    }

    /// Runs `op` (non-blocking) until it does not say EAGAIN: at once, then (if `block`) in
    /// waits of at most [`SLICE_MS`] with the GIL released, made with the other threads of the
    /// socket (`SyncSocket::wait_until`), checking for signals and `close` between them, up to
    /// the socket's `timeo_opt`.
    fn shared_wait<T: Send>(
        &self,
        py: Python<'_>,
        s: &SyncSocket,
        block: bool,
        send: bool,
        timeo_opt: i32,
        mut op: impl FnMut(&mut oxmq::Socket) -> oxmq::Result<T> + Send,
    ) -> PyResult<T> {
        match s.with(&mut op) {
            Err(oxmq::Error::Again) => {}
            r => return r.py_err(py),
        }
        if !block {
            return Err(to_py(py, oxmq::Error::Again));
        }
        let timeout = s.get_int(timeo_opt).py_err(py)?;
        if timeout == 0 {
            return Err(to_py(py, oxmq::Error::Again));
        }
        let deadline = (timeout > 0).then(|| Instant::now() + Duration::from_millis(timeout as u64));
        loop {
            let slice = Instant::now() + Duration::from_millis(SLICE_MS);
            let until = deadline.map_or(slice, |d| d.min(slice));
            match py.detach(|| s.wait_until(send, until, &mut op)) {
                Err(oxmq::Error::Again) => {}
                r => return r.py_err(py),
            }
            py.check_signals()?;
            if self.closed() {
                return Err(to_py(py, oxmq::Error::NotSock));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(to_py(py, oxmq::Error::Again));
            }
        }
    }

    /// `Socket.poll` on a thread-safe socket: looks at its events, then waits on its
    /// descriptor as its watcher (`SyncSocket::watch`), so another thread's call that takes
    /// the change it waits for re-signals the descriptor.
    fn shared_poll(&self, py: Python<'_>, timeout_ms: i64, flags: i16) -> PyResult<i16> {
        let s = self.sync(py)?.ok_or_else(|| to_py(py, oxmq::Error::NotSock))?;
        let deadline = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
        loop {
            let ev = s.events().py_err(py)? & flags;
            if ev != 0 || timeout_ms == 0 || deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(ev);
            }
            let watching = s.watch();
            // A change between the look above and the watch signalled the descriptor then,
            // and a call since drained it: look once more, as the watcher.
            let ev = s.events().py_err(py)? & flags;
            if ev != 0 {
                if watching {
                    s.unwatch();
                }
                return Ok(ev);
            }
            let slice = match deadline {
                None => SLICE_MS as i32,
                Some(d) => (d.saturating_duration_since(Instant::now()).as_micros().div_ceil(1000) as u64).min(SLICE_MS) as i32,
            };
            let fd = s.fd();
            py.detach(|| {
                let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
                // SAFETY: one valid pollfd for the duration of the call.
                unsafe { libc::poll(&mut pfd, 1, slice) };
            });
            if watching {
                s.unwatch();
            }
            py.check_signals()?;
            if self.closed() {
                return Err(to_py(py, oxmq::Error::NotSock));
            }
        }
    }
}

/// A new `bytes` holding a copy of `m`'s body (a new reference, never NULL).
#[inline]
fn new_bytes(py: Python<'_>, m: &Msg) -> PyResult<*mut ffi::PyObject> {
    let b = m.as_slice();
    // SAFETY: a valid pointer and length; CPython copies them (one-byte bodies come from its
    // cache of one-character bytes objects).
    let p = unsafe { ffi::PyBytes_FromStringAndSize(b.as_ptr().cast(), b.len() as ffi::Py_ssize_t) };
    if p.is_null() {
        return Err(PyErr::fetch(py));
    }
    Ok(p)
}

pub(crate) fn to_py_frame<'py>(py: Python<'py>, msg: Msg, copy: bool) -> PyResult<Bound<'py, PyAny>> {
    if copy {
        Ok(PyBytes::new(py, msg.as_slice()).into_any())
    } else {
        let more = msg.more();
        new_frame(py, msg, more)
    }
}

#[pymethods]
impl Socket {
    #[new]
    #[pyo3(signature = (context, socket_type, **_kwargs))]
    fn new(context: &Bound<'_, PyAny>, socket_type: i32, _kwargs: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let py = context.py();
        let ctx = context.cast::<Context>().map_err(|_| PyTypeError::new_err("context must be an oxmq Context"))?;
        let kind = SocketType::from_raw(socket_type).ok_or_else(|| to_py(py, oxmq::Error::Invalid))?;
        if kind.is_thread_safe() {
            let s = ctx.get().inner.sync_socket(kind).py_err(py)?;
            return Ok(Socket {
                fd: s.fd(),
                inner: SockCell::new(None),
                shared: Some(Shared { sock: std::sync::RwLock::new(Some(s)) }),
                closed: AtomicBool::new(false),
                socket_type,
                context: context.clone().unbind(),
            });
        }
        let s = ctx.get().inner.socket(kind).py_err(py)?;
        Ok(Socket {
            fd: s.fd(),
            inner: SockCell::new(Some(s)),
            shared: None,
            closed: AtomicBool::new(false),
            socket_type,
            context: context.clone().unbind(),
        })
    }

    /// The Context this socket was created from.
    #[getter]
    fn context(&self, py: Python<'_>) -> Py<PyAny> {
        self.context.clone_ref(py)
    }

    #[getter]
    fn socket_type(&self) -> i32 {
        self.socket_type
    }

    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// ZMQ_FD: readable when `events` may have changed (edge-triggered, as libzmq).
    #[getter]
    fn fd(&self, py: Python<'_>) -> PyResult<i32> {
        if self.closed() {
            return Err(to_py(py, oxmq::Error::NotSock));
        }
        Ok(self.fd)
    }

    fn fileno(&self, py: Python<'_>) -> PyResult<i32> {
        self.fd(py)
    }

    /// ZMQ_EVENTS: POLLIN | POLLOUT bits.
    #[getter]
    fn events(&self, py: Python<'_>) -> PyResult<i16> {
        self.with(py, |s| s.events().py_err(py))
    }

    /// oxmq's counters (`oxmq::SocketStats`) as a dict; `peer_queues` lists each peer's
    /// (queued_out, queued_in or None).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let (st, peers) = self.with(py, |s| Ok((s.stats(), s.peer_stats())))?;
        let d = pyo3::types::PyDict::new(py);
        for (k, v) in [
            ("msgs_in", st.msgs_in),
            ("bytes_in", st.bytes_in),
            ("msgs_out", st.msgs_out),
            ("bytes_out", st.bytes_out),
            ("dropped_hwm", st.dropped_hwm),
            ("dropped_no_route", st.dropped_no_route),
            ("dropped_oversized", st.dropped_oversized),
            ("dropped_malformed", st.dropped_malformed),
            ("dropped_unsendable", st.dropped_unsendable),
            ("peers", st.peers),
            ("connections", st.connections),
            ("reconnects", st.reconnects),
            ("handshake_failures", st.handshake_failures),
            ("protocol_errors", st.protocol_errors),
            ("wire_bytes_in", st.wire_bytes_in),
            ("wire_bytes_out", st.wire_bytes_out),
            ("direct_reads", st.direct_reads),
            ("direct_resumes", st.direct_resumes),
            ("lent_waits", st.lent_waits),
            ("lease_lapses", st.lease_lapses),
            ("spun_waits", st.spun_waits),
            ("wire_writes", st.wire_writes),
            ("direct_writes", st.direct_writes),
            ("dropped_disconnected", st.dropped_disconnected),
            ("dropped_vanished", st.dropped_vanished),
            ("hwm_reached", st.hwm_reached),
        ] {
            d.set_item(k, v)?;
        }
        let q: Vec<(u64, Option<u64>)> = peers.iter().map(|p| (p.queued_out, p.queued_in)).collect();
        d.set_item("peer_queues", q)?;
        Ok(d)
    }

    #[getter]
    fn rcvmore(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |s| Ok(s.rcvmore()))
    }

    /// Closes the socket (idempotent). `linger` (ms) overrides LINGER for this close.
    #[pyo3(signature = (linger = None))]
    fn close(&self, py: Python<'_>, linger: Option<i32>) -> PyResult<()> {
        if let Some(sh) = &self.shared {
            if self.closed.swap(true, Ordering::AcqRel) {
                return Ok(());
            }
            // The calls in flight return within a slice; the socket is dropped (and lingers)
            // without the GIL.
            py.detach(|| {
                let mut w = sh.sock.write().unwrap_or_else(|p| p.into_inner());
                if let Some(s) = w.take() {
                    if let Some(l) = linger {
                        let _ = s.set_int(opt::LINGER, l);
                    }
                    drop(w);
                    drop(s);
                }
            });
            return Ok(());
        }
        let Some(mut g) = self.inner.try_lock() else {
            return Err(errno_err(py, oxmq::error::EFSM, Some(EBUSY_TEXT)));
        };
        if let Some(mut s) = g.take() {
            if let Some(l) = linger {
                s.set_int(opt::LINGER, l).py_err(py)?;
            }
            self.closed.store(true, Ordering::Release);
            drop(g);
            py.detach(move || drop(s));
        }
        Ok(())
    }

    fn bind(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.with(py, |s| s.bind(addr).map_err(|e| bind_err(py, e, addr)))
    }

    fn connect(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.with(py, |s| s.connect(addr).map_err(|e| bind_err(py, e, addr)))
    }

    fn unbind(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.with(py, |s| s.unbind(addr).py_err(py))
    }

    fn disconnect(&self, py: Python<'_>, addr: &str) -> PyResult<()> {
        self.with(py, |s| s.disconnect(addr).py_err(py))
    }

    /// Starts the socket monitor at the inproc `addr` (zmq_socket_monitor), or stops it (None).
    #[pyo3(signature = (addr, events = 0xFFFF, version = 1))]
    fn monitor(&self, py: Python<'_>, addr: Option<&str>, events: i64, version: u8) -> PyResult<()> {
        self.with(py, |s| s.monitor_versioned(addr, events as u64, version, oxmq::SocketType::Pair).py_err(py))
    }

    /// Sends one frame. `data`: bytes, a Frame, or any buffer. Returns None (or, with
    /// `track=True`, a tracker that is already done: mutable buffers are copied). pyzmq's
    /// draft arguments: `routing_id` (SERVER, PEER: the peer to send to) and `group` (RADIO),
    /// which override a Frame's own.
    #[pyo3(signature = (data, flags = 0, copy = true, track = false, routing_id = None, group = None, **_kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn send(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        flags: i32,
        copy: bool,
        track: bool,
        routing_id: Option<u32>,
        group: Option<&Bound<'_, PyAny>>,
        _kwargs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let _ = copy;
        if routing_id.is_none() && group.is_none() {
            self.send_one(py, data, flags)?;
        } else {
            let mut m = msg_from_obj(data)?;
            if let Some(id) = routing_id {
                m.set_routing_id(id).py_err(py)?;
            }
            let group = match group {
                Some(g) => Some(group_bytes(py, g)?),
                None => frame_group(data),
            };
            if self.shared.is_some() {
                self.shared_send(py, &mut m, group, flags)?;
            } else {
                // Only the thread-safe draft types have groups and routing ids.
                if group.is_some() {
                    return Err(to_py(py, oxmq::Error::NotSup));
                }
                self.send_msg(py, &mut m, flags)?;
            }
        }
        if track {
            return Ok(Some(done_tracker(py)?));
        }
        Ok(None)
    }

    /// Receives one frame: bytes (`copy=True`) or a zero-copy Frame (`copy=False`; on a DISH
    /// with its `group`, on a SERVER or PEER with its `routing_id`).
    #[pyo3(signature = (flags = 0, copy = true, track = false))]
    fn recv<'py>(&self, py: Python<'py>, flags: i32, copy: bool, track: bool) -> PyResult<Bound<'py, PyAny>> {
        let _ = track;
        if copy {
            let m = self.recv_one(py, flags)?;
            return to_py_frame(py, m, true);
        }
        self.recv_frame(py, flags)
    }

    /// DISH: joins `group` (str or bytes; at most 255 bytes). EINVAL if already joined,
    /// ENOTSUP on other types, as libzmq's `zmq_join`.
    fn join(&self, py: Python<'_>, group: &Bound<'_, PyAny>) -> PyResult<()> {
        let g = group_bytes(py, group)?;
        self.with(py, |s| s.join(&g).py_err(py))
    }

    /// DISH: leaves `group`; EINVAL if not joined.
    fn leave(&self, py: Python<'_>, group: &Bound<'_, PyAny>) -> PyResult<()> {
        let g = group_bytes(py, group)?;
        self.with(py, |s| s.leave(&g).py_err(py))
    }

    /// PEER: connects to `addr` and returns the routing id of that peer, to send to it at once
    /// (libzmq's `zmq_connect_peer`; pyzmq has no binding for it).
    fn connect_peer(&self, py: Python<'_>, addr: &str) -> PyResult<u32> {
        self.with(py, |s| s.connect_peer(addr).map_err(|e| bind_err(py, e, addr)))
    }

    /// For an event loop about to wait on `fd` (`oxmq.asyncio`): on a thread-safe socket, asks
    /// the socket's other threads to re-signal the descriptor when they take a change
    /// (`SyncSocket::watch`); True if so. Nothing to do (False) for the other types.
    fn _watch(&self, py: Python<'_>) -> PyResult<bool> {
        match self.sync(py)? {
            Some(s) => Ok(s.watch()),
            None => Ok(false),
        }
    }

    /// Ends a wait begun with a `_watch` that returned True.
    fn _unwatch(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(s) = self.sync(py)? {
            s.unwatch();
        }
        Ok(())
    }

    /// Sends a multi-part message; every part is converted before the first is sent, so a bad
    /// part cannot leave half a message behind.
    #[pyo3(signature = (msg_parts, flags = 0, copy = true, track = false, **_kwargs))]
    fn send_multipart(
        &self,
        py: Python<'_>,
        msg_parts: &Bound<'_, PyAny>,
        flags: i32,
        copy: bool,
        track: bool,
        _kwargs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let _ = copy;
        let mut parts = Vec::new();
        for (i, p) in msg_parts.try_iter()?.enumerate() {
            let p = p?;
            parts.push(msg_from_obj(&p).map_err(|e| {
                if e.is_instance_of::<PyTypeError>(py) {
                    PyTypeError::new_err(format!(
                        "Frame {i} ({}) does not support the buffer interface.",
                        p.repr().map(|r| r.to_string()).unwrap_or_default()
                    ))
                } else {
                    e
                }
            })?);
        }
        if parts.is_empty() {
            return Err(PyValueError::new_err("send_multipart needs at least one part"));
        }
        let block = flags & opt::DONTWAIT == 0;
        let n = parts.len();
        if self.shared.is_some() {
            // The draft types take single-part messages: a part with more after it is EINVAL
            // there, as in libzmq.
            for (i, mut m) in parts.into_iter().enumerate() {
                let f = if i + 1 < n { opt::SNDMORE } else { flags & opt::SNDMORE };
                self.shared_send(py, &mut m, None, f | (flags & opt::DONTWAIT))?;
            }
            return if track { Ok(Some(done_tracker(py)?)) } else { Ok(None) };
        }
        self.with(py, |s| {
            for (i, mut m) in parts.into_iter().enumerate() {
                let f = opt::DONTWAIT | if i + 1 < n { opt::SNDMORE } else { flags & opt::SNDMORE };
                let wait = block || i > 0;
                wait_loop(py, s, wait, Limit::Option(opt::SNDTIMEO), |s| {
                    if wait {
                        s.try_send_msg(&mut m, f)
                    } else {
                        s.send_msg(&mut m, f)
                    }
                })?;
            }
            Ok(())
        })?;
        if track {
            return Ok(Some(done_tracker(py)?));
        }
        Ok(None)
    }

    /// Receives every frame of the next message as a list of bytes (or Frames).
    #[pyo3(signature = (flags = 0, copy = true, track = false))]
    fn recv_multipart<'py>(&self, py: Python<'py>, flags: i32, copy: bool, track: bool) -> PyResult<Bound<'py, PyList>> {
        let _ = track;
        if self.shared.is_some() {
            let list = PyList::empty(py);
            list.append(if copy { to_py_frame(py, self.recv_one(py, flags)?, true)? } else { self.recv_frame(py, flags)? })?;
            return Ok(list);
        }
        let msgs = self.with(py, |s| {
            let first = wait_loop(py, s, flags & opt::DONTWAIT == 0, Limit::Option(opt::RCVTIMEO), |s| s.recv(opt::DONTWAIT))?;
            let mut more = first.more();
            let mut v = vec![first];
            while more {
                // The rest of a message arrives with its first part.
                let m = wait_loop(py, s, true, Limit::Option(opt::RCVTIMEO), |s| s.recv(opt::DONTWAIT))?;
                more = m.more();
                v.push(m);
            }
            Ok(v)
        })?;
        let list = PyList::empty(py);
        for m in msgs {
            list.append(to_py_frame(py, m, copy)?)?;
        }
        Ok(list)
    }

    /// Receives one frame into a writable buffer; returns the frame's full length (which may be
    /// larger than what fit, as zmq_recv). `nbytes` limits how much is written (0: all).
    #[pyo3(signature = (buffer, nbytes = 0, flags = 0))]
    fn recv_into(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>, nbytes: usize, flags: i32) -> PyResult<usize> {
        let mut view = BufferView::get(buffer, true)?;
        let dst = view.as_mut_slice();
        let limit = if nbytes == 0 { dst.len() } else { nbytes.min(dst.len()) };
        let m = self.recv_one(py, flags)?;
        let n = m.len().min(limit);
        dst[..n].copy_from_slice(&m[..n]);
        Ok(m.len())
    }

    /// Sets an option: ints for int options, bytes for bytes options (as pyzmq).
    fn setsockopt(&self, py: Python<'_>, option: i32, optval: &Bound<'_, PyAny>) -> PyResult<()> {
        let kind = opt_kind(option);
        self.with(py, |s| {
            let r = match kind {
                OptKind::Bytes => {
                    if optval.is_instance_of::<PyString>() {
                        return Err(PyTypeError::new_err("unicode not allowed, use setsockopt_string"));
                    }
                    let v = BufferView::get(optval, false).map_err(|_| PyTypeError::new_err("expected bytes for this option"))?;
                    s.setsockopt(option, v.as_slice())
                }
                OptKind::Int64 => s.setsockopt(option, &optval.extract::<i64>()?.to_ne_bytes()),
                OptKind::UInt64 => s.setsockopt(option, &optval.extract::<u64>()?.to_ne_bytes()),
                OptKind::Int => {
                    let v: i64 = optval.extract().map_err(|_| PyTypeError::new_err("expected int for this option"))?;
                    let v = i32::try_from(v).map_err(|_| to_py(py, oxmq::Error::Invalid))?;
                    s.set_int(option, v)
                }
            };
            r.py_err(py)
        })
    }

    /// Reads an option: int, or bytes for bytes options (string ones without their NUL).
    fn getsockopt<'py>(&self, py: Python<'py>, option: i32) -> PyResult<Bound<'py, PyAny>> {
        if option == opt::FD {
            return Ok(self.fd(py)?.into_pyobject(py)?.into_any());
        }
        let kind = opt_kind(option);
        let raw = self.with(py, |s| s.get_bytes(option).py_err(py))?;
        Ok(match kind {
            OptKind::Bytes => {
                let mut v = raw.as_slice();
                // String options, as pyzmq returns them: without the NUL libzmq writes.
                if matches!(option, opt::LAST_ENDPOINT | opt::ZAP_DOMAIN | opt::BINDTODEVICE | opt::OXMQ_NAME | 68 | 99 | 100) {
                    if let Some(stripped) = v.strip_suffix(&[0]) {
                        v = stripped;
                    }
                }
                PyBytes::new(py, v).into_any()
            }
            OptKind::Int64 => {
                let a: [u8; 8] = raw.as_slice().try_into().map_err(|_| to_py(py, oxmq::Error::Invalid))?;
                i64::from_ne_bytes(a).into_pyobject(py)?.into_any()
            }
            OptKind::UInt64 => {
                let a: [u8; 8] = raw.as_slice().try_into().map_err(|_| to_py(py, oxmq::Error::Invalid))?;
                u64::from_ne_bytes(a).into_pyobject(py)?.into_any()
            }
            OptKind::Int => {
                let a: [u8; 4] = raw.as_slice().try_into().map_err(|_| to_py(py, oxmq::Error::Invalid))?;
                i32::from_ne_bytes(a).into_pyobject(py)?.into_any()
            }
        })
    }

    /// Waits up to `timeout` ms (None: forever) for `flags` events; returns the events ready.
    #[pyo3(signature = (timeout = None, flags = 1))]
    fn poll(&self, py: Python<'_>, timeout: Option<i64>, flags: i16) -> PyResult<i16> {
        let ms = timeout.unwrap_or(-1);
        if self.shared.is_some() {
            return self.shared_poll(py, ms, flags);
        }
        self.with(py, |s| {
            let ev = |s: &mut oxmq::Socket| match s.events() {
                Ok(e) if e & flags != 0 => Ok(e & flags),
                Ok(_) => Err(oxmq::Error::Again),
                Err(e) => Err(e),
            };
            match wait_loop(py, s, ms != 0, Limit::Ms(ms), ev) {
                Ok(e) => Ok(e),
                Err(e) if e.is_instance(py, &again_type(py)?) => Ok(0),
                Err(e) => Err(e),
            }
        })
    }
}

/// A group as bytes, from str (UTF-8) or bytes, as pyzmq takes it; over 255 bytes is EINVAL.
fn group_bytes(py: Python<'_>, g: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    let b = if let Ok(s) = g.cast::<PyString>() {
        Bytes::copy_from_slice(s.to_cow()?.as_bytes())
    } else {
        Bytes::copy_from_slice(
            BufferView::get(g, false).map_err(|_| PyTypeError::new_err("group must be str or bytes"))?.as_slice(),
        )
    };
    if b.len() > 255 {
        return Err(to_py(py, oxmq::Error::Invalid));
    }
    Ok(b)
}

fn again_type(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    // The class registered for EAGAIN (falls back to OSError before registration).
    let e = to_py(py, oxmq::Error::Again);
    Ok(e.get_type(py).into_any())
}

pub(crate) fn done_tracker(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(py.import("oxmq")?.getattr("_DONE_TRACKER")?.unbind())
}

fn bind_err(py: Python<'_>, e: oxmq::Error, addr: &str) -> PyErr {
    match e {
        oxmq::Error::Again | oxmq::Error::Term => to_py(py, e),
        _ => errno_err(py, e.errno(), Some(&format!("{} (addr='{}')", oxmq::error::strerror(e.errno()), addr))),
    }
}

/// One entry of a poll set, as `zmq_poll` takes it.
enum Entry<'py> {
    Sock(Bound<'py, Socket>, i16),
    Fd(i32, i16),
}

/// `zmq.zmq_poll(sockets, timeout=-1)`: `sockets` is a list of (socket or fd or object with
/// fileno(), events); returns [(obj, revents)] for the ready ones. Timeout in ms, -1 forever.
#[pyfunction]
#[pyo3(signature = (sockets, timeout = -1))]
pub fn zmq_poll<'py>(py: Python<'py>, sockets: &Bound<'py, PyAny>, timeout: Option<i64>) -> PyResult<Bound<'py, PyList>> {
    let timeout = timeout.unwrap_or(-1);
    let mut objs = Vec::new();
    let mut entries = Vec::new();
    for item in sockets.try_iter()? {
        let item = item?;
        let t = item.cast::<PyTuple>().map_err(|_| PyTypeError::new_err("expected (socket, events) tuples"))?;
        let (obj, ev): (Bound<'py, PyAny>, i16) = t.extract()?;
        let e = if let Ok(s) = obj.cast::<Socket>() {
            Entry::Sock(s.clone(), ev)
        } else if let Ok(fd) = obj.extract::<i32>() {
            Entry::Fd(fd, ev)
        } else if let Ok(f) = obj.call_method0("fileno") {
            Entry::Fd(f.extract()?, ev)
        } else {
            return Err(PyTypeError::new_err("poll items must be sockets, fds, or have fileno()"));
        };
        entries.push(e);
        objs.push(obj);
    }
    if entries.iter().any(|e| matches!(e, Entry::Sock(s, _) if s.get().shared.is_some())) {
        return poll_with_shared(py, &entries, objs, timeout);
    }
    let mut guards = Vec::new();
    for e in &entries {
        if let Entry::Sock(s, _) = e {
            guards.push(s.get().lock(py)?);
        }
    }
    let mut items: Vec<PollItem<'_>> = Vec::with_capacity(entries.len());
    let mut gi = guards.iter_mut();
    for e in &entries {
        match e {
            Entry::Sock(_, ev) => {
                let g = gi.next().and_then(|g| g.as_mut()).ok_or_else(|| to_py(py, oxmq::Error::NotSock))?;
                items.push(PollItem::socket(g, *ev));
            }
            Entry::Fd(fd, ev) => items.push(PollItem::fd(*fd, *ev)),
        }
    }
    let deadline = (timeout > 0).then(|| Instant::now() + Duration::from_millis(timeout as u64));
    loop {
        let slice = match (timeout, deadline) {
            (0, _) => 0,
            (_, None) => SLICE_MS as i64,
            (_, Some(d)) => (d.saturating_duration_since(Instant::now()).as_micros().div_ceil(1000) as i64).min(SLICE_MS as i64),
        };
        let r = py.detach(|| oxmq::poll(&mut items, slice));
        match r {
            Ok(n) if n > 0 => break,
            Ok(_) | Err(oxmq::Error::Intr) => {}
            Err(e) => return Err(to_py(py, e)),
        }
        py.check_signals()?;
        if timeout == 0 || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
    }
    let out = PyList::empty(py);
    for (it, obj) in items.iter().zip(objs) {
        let rev = it.revents();
        if rev != 0 {
            out.append((obj, rev))?;
        }
    }
    Ok(out)
}

/// [`zmq_poll`] over a set with thread-safe sockets among its sockets: each round looks at
/// every item (a socket's events, a descriptor's poll with no timeout), then, if none is
/// ready, waits on all their descriptors at once with the GIL released, as each thread-safe
/// socket's watcher (`SyncSocket::watch`) so that another thread's call does not leave its
/// descriptor drained. The sockets' direct reads are not made here, as they are for a set of
/// other sockets alone.
fn poll_with_shared<'py>(
    py: Python<'py>,
    entries: &[Entry<'py>],
    objs: Vec<Bound<'py, PyAny>>,
    timeout: i64,
) -> PyResult<Bound<'py, PyList>> {
    let deadline = (timeout > 0).then(|| Instant::now() + Duration::from_millis(timeout as u64));
    let look = |with_fds: bool| -> PyResult<Vec<i16>> {
        let mut rev = Vec::with_capacity(entries.len());
        for e in entries {
            rev.push(match e {
                Entry::Sock(s, ev) => {
                    let sock = s.get();
                    sock.with(py, |x| x.events().py_err(py))? & *ev
                }
                Entry::Fd(fd, ev) if with_fds => {
                    let mut pfd = libc::pollfd { fd: *fd, events: fd_events(*ev), revents: 0 };
                    // SAFETY: one valid pollfd; a zero timeout never blocks.
                    unsafe { libc::poll(&mut pfd, 1, 0) };
                    fd_revents(pfd.revents) & (*ev | opt::POLLERR)
                }
                Entry::Fd(..) => 0,
            });
        }
        Ok(rev)
    };
    loop {
        let rev = look(true)?;
        if rev.iter().any(|&r| r != 0) || timeout == 0 || deadline.is_some_and(|d| Instant::now() >= d) {
            let out = PyList::empty(py);
            for (r, obj) in rev.into_iter().zip(objs) {
                if r != 0 {
                    out.append((obj, r))?;
                }
            }
            return Ok(out);
        }
        // Watch the thread-safe sockets, then look once more (a change since the look above
        // may have been drained meanwhile), then wait.
        let mut watched = Vec::new();
        for e in entries {
            if let Entry::Sock(s, _) = e {
                if let Some(x) = s.get().sync(py)? {
                    if x.watch() {
                        watched.push(s.clone());
                    }
                }
            }
        }
        let unwatch = |py: Python<'_>| -> PyResult<()> {
            for s in &watched {
                s.get()._unwatch(py)?;
            }
            Ok(())
        };
        let again = look(false);
        if again.as_ref().map_or(true, |r| r.iter().any(|&r| r != 0)) {
            unwatch(py)?;
            again?;
            continue;
        }
        let mut pfds: Vec<libc::pollfd> = entries
            .iter()
            .map(|e| match e {
                Entry::Sock(s, _) => libc::pollfd { fd: s.get().fd, events: libc::POLLIN, revents: 0 },
                Entry::Fd(fd, ev) => libc::pollfd { fd: *fd, events: fd_events(*ev), revents: 0 },
            })
            .collect();
        let slice = match deadline {
            None => SLICE_MS as i32,
            Some(d) => (d.saturating_duration_since(Instant::now()).as_micros().div_ceil(1000) as u64).min(SLICE_MS) as i32,
        };
        py.detach(|| {
            // SAFETY: `pfds` is a valid array of its length for the duration of the call.
            unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, slice) };
        });
        unwatch(py)?;
        py.check_signals()?;
    }
}

fn fd_events(ev: i16) -> i16 {
    let mut e = 0;
    if ev & opt::POLLIN != 0 {
        e |= libc::POLLIN;
    }
    if ev & opt::POLLOUT != 0 {
        e |= libc::POLLOUT;
    }
    if ev & opt::POLLPRI != 0 {
        e |= libc::POLLPRI;
    }
    e
}

fn fd_revents(r: i16) -> i16 {
    let mut e = 0;
    if r & libc::POLLIN != 0 {
        e |= opt::POLLIN;
    }
    if r & libc::POLLOUT != 0 {
        e |= opt::POLLOUT;
    }
    if r & libc::POLLPRI != 0 {
        e |= opt::POLLPRI;
    }
    if r & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
        e |= opt::POLLERR;
    }
    e
}

/// `zmq.proxy(frontend, backend, capture=None)`: runs until the context is terminated, then
/// raises ContextTerminated (as pyzmq does). Blocks with the GIL released.
#[pyfunction]
#[pyo3(signature = (frontend, backend, capture = None))]
pub fn proxy(
    py: Python<'_>,
    frontend: &Bound<'_, Socket>,
    backend: &Bound<'_, Socket>,
    capture: Option<&Bound<'_, Socket>>,
) -> PyResult<()> {
    proxy_steerable(py, frontend, backend, capture, None)
}

/// `zmq.proxy_steerable(frontend, backend, capture=None, control=None)`: like `proxy`, and
/// returns after TERMINATE arrives on `control` (PAUSE/RESUME/STATISTICS as libzmq).
#[pyfunction]
#[pyo3(signature = (frontend, backend, capture = None, control = None))]
pub fn proxy_steerable(
    py: Python<'_>,
    frontend: &Bound<'_, Socket>,
    backend: &Bound<'_, Socket>,
    capture: Option<&Bound<'_, Socket>>,
    control: Option<&Bound<'_, Socket>>,
) -> PyResult<()> {
    for s in [Some(frontend), Some(backend), capture, control].into_iter().flatten() {
        if s.get().shared.is_some() {
            // libzmq's proxy takes the classic types; a thread-safe socket would be locked
            // against its other threads for the proxy's whole run.
            return Err(to_py(py, oxmq::Error::NotSup));
        }
    }
    let mut fg = frontend.get().lock(py)?;
    // One socket as frontend and backend is libzmq's echo device: locked once.
    let mut bg = if frontend.is(backend) { None } else { Some(backend.get().lock(py)?) };
    let mut cg = capture.map(|c| c.get().lock(py)).transpose()?;
    let mut kg = control.map(|c| c.get().lock(py)).transpose()?;
    let Some(f) = fg.as_mut() else { return Err(to_py(py, oxmq::Error::NotSock)) };
    let ends = match bg.as_mut() {
        None => oxmq::proxy::Ends::One(f),
        Some(g) => match g.as_mut() {
            Some(b) => oxmq::proxy::Ends::Two(f, b),
            None => return Err(to_py(py, oxmq::Error::NotSock)),
        },
    };
    let c = cg.as_mut().and_then(|g| g.as_mut());
    let k = kg.as_mut().and_then(|g| g.as_mut());
    py.detach(|| oxmq::proxy::run(ends, c, k, None)).py_err(py)
}
