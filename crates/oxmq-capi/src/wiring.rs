//! The wiring API's C front end (`include/zmq_wiring.h`): the seed's `czmq_*` functions with
//! their exact signatures, plus `_ex` variants that return an error code where the seed's
//! return `void`. A thin shell over `oxmq_wiring::Wiring`: each export checks its pointers,
//! calls the Rust API inside a panic boundary, and maps a `WiringError` to errno.
//!
//! Memory: `czmq_send` with a free function hands the buffer over without copying (it becomes
//! the body of a shared `Bytes` whose owner calls the function once, when the last reference,
//! on this thread or an I/O thread, is dropped), except a body of at most `INLINE_CAP` bytes,
//! which every message stores inline: it is copied and the function called before
//! `czmq_send` returns. Without a free function the buffer is copied, since the caller keeps
//! it. `czmq_receive` hands out a buffer the caller releases with the returned
//! function: bodies up to `COPY_MAX` bytes are copied into `malloc`ed memory (`ffn` keeps one
//! spare buffer per thread for the next receive and frees the rest),
//! larger ones are lent without copying (`ffn` is `release_lent`, which finds the message by
//! its data pointer).

use crate::guard::set_errno;
use crate::msg::zmq_msg_t;
use bytes::Bytes;
use oxmq::{Msg, INLINE_CAP};
use oxmq_wiring::{Scope, Style, Wiring, WiringError};
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// `void czmq_free_fn (void *data)`.
pub type czmq_free_fn = unsafe extern "C" fn(data: *mut c_void);

/// Received bodies up to this size are copied into malloc'd memory; larger ones are lent.
const COPY_MAX: usize = 1024;

const LIVE: u64 = 0x6f78_7769_7265_6421; // "oxwired!"

/// What a `czmq_create` pointer points to.
struct Handle {
    tag: u64,
    w: Wiring,
    /// A message `czmq_receive_into` found too large for the caller's buffer: the next
    /// receive of any kind returns it.
    pending: Option<Msg>,
    /// What `czmq_receive_ex` and `czmq_receive_into` receive into: reused, so a receive
    /// neither builds nor drops a `Msg` of its own, and consecutive messages of one connection
    /// share its properties without touching their count. Between receives it holds at most
    /// an inline body (a copied body is let go at once, a lent one moves to the table).
    scratch: Msg,
    /// The copy `czmq_try_send` made of a message it could not send at once, with its
    /// exchange: `czmq_send_parked` sends it without the caller copying it again.
    parked: Option<(usize, Msg)>,
}

/// Runs `body`; an error sets errno and returns `fail`, a panic sets EFAULT. Success leaves
/// errno alone (the `void` functions clear it, see [`clear_errno_on`]).
#[inline(always)]
fn wguard<T>(fail: T, body: impl FnOnce() -> Result<T, WiringError>) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            set_errno(e.errno());
            fail
        }
        Err(_) => {
            set_errno(libc::EFAULT);
            fail
        }
    }
}

/// The seed's `void` functions report through errno: 0 after a success.
#[inline(always)]
fn clear_errno_on(rc: c_int) {
    if rc == 0 {
        // SAFETY: this thread's errno, valid for the thread's life.
        unsafe { *libc::__errno_location() = 0 };
    }
}

fn bad(what: &str) -> WiringError {
    WiringError::Invalid(what.to_string())
}

/// # Safety
/// `obj` is null or a pointer from `czmq_create` not yet destroyed.
unsafe fn handle<'a>(obj: *mut c_void) -> Result<&'a mut Wiring, WiringError> {
    // SAFETY: forwarded contract.
    Ok(&mut unsafe { handle_full(obj) }?.w)
}

/// # Safety
/// As [`handle`].
unsafe fn handle_full<'a>(obj: *mut c_void) -> Result<&'a mut Handle, WiringError> {
    if obj.is_null() {
        return Err(WiringError::Socket(oxmq::Error::Fault));
    }
    // SAFETY: caller's contract: a live handle from czmq_create.
    let h = unsafe { &mut *obj.cast::<Handle>() };
    if h.tag != LIVE {
        return Err(WiringError::Socket(oxmq::Error::Fault));
    }
    Ok(h)
}

/// The next message of the handle: the one held back by `czmq_receive_into`, else a receive.
#[inline(always)]
fn next_message(w: &mut Wiring, pending: &mut Option<Msg>, msg: &mut Msg, timeout: Option<Duration>) -> Result<(), WiringError> {
    match pending.take() {
        Some(m) => {
            *msg = m;
            Ok(())
        }
        None => w.receive_into(msg, timeout),
    }
}

/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn text<'a>(p: *const c_char, null_ok: bool) -> Result<&'a str, WiringError> {
    if p.is_null() {
        return if null_ok { Ok("") } else { Err(WiringError::Socket(oxmq::Error::Fault)) };
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| bad("string is not UTF-8"))
}

fn scope(v: c_int) -> Result<Scope, WiringError> {
    Scope::from_raw(v).ok_or_else(|| bad("unknown scope"))
}

/// `void *czmq_create (const char *host)`: NULL and errno on failure (`EHOSTUNREACH`: no name
/// service answers at `host`; `EINVAL`: a malformed host).
#[no_mangle]
pub unsafe extern "C" fn czmq_create(host: *const c_char) -> *mut c_void {
    wguard(std::ptr::null_mut(), || {
        // SAFETY: C contract.
        let host = unsafe { text(host, true) }?;
        let w = Wiring::new(host)?;
        Ok(Box::into_raw(Box::new(Handle { tag: LIVE, w, pending: None, scratch: Msg::new(), parked: None })).cast())
    })
}

/// `int czmq_destroy_ex (void *obj)`: 0, or -1 with errno EFAULT for a bad handle.
#[no_mangle]
pub unsafe extern "C" fn czmq_destroy_ex(obj: *mut c_void) -> c_int {
    wguard(-1, || {
        // SAFETY: C contract; checked for null and tag.
        unsafe { handle(obj) }?;
        // SAFETY: the pointer came from Box::into_raw in czmq_create and is live (tag).
        let mut h = unsafe { Box::from_raw(obj.cast::<Handle>()) };
        h.tag = 0;
        drop(h);
        Ok(0)
    })
}

/// `void czmq_destroy (void *obj)`.
#[no_mangle]
pub unsafe extern "C" fn czmq_destroy(obj: *mut c_void) {
    // SAFETY: forwarded contract.
    clear_errno_on(unsafe { czmq_destroy_ex(obj) });
}

/// `int czmq_create_exchange (void *obj, const char *exchange, int scope, const char *nic)`:
/// the exchange id, or -1 and errno.
#[no_mangle]
pub unsafe extern "C" fn czmq_create_exchange(
    obj: *mut c_void,
    exchange: *const c_char,
    scope_: c_int,
    nic: *const c_char,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { czmq_create_exchange_ex(obj, exchange, scope_, nic, 0) }
}

/// `czmq_create_exchange` with a style: `CZMQ_STYLE_FANOUT` (0) or `CZMQ_STYLE_LOAD_BALANCE`.
#[no_mangle]
pub unsafe extern "C" fn czmq_create_exchange_ex(
    obj: *mut c_void,
    exchange: *const c_char,
    scope_: c_int,
    nic: *const c_char,
    style: c_int,
) -> c_int {
    wguard(-1, || {
        // SAFETY: C contract.
        let (w, name, loc) = unsafe { (handle(obj)?, text(exchange, false)?, text(nic, true)?) };
        let style = match style {
            0 => Style::FanOut,
            1 => Style::LoadBalance,
            _ => return Err(bad("unknown style")),
        };
        let eid = w.create_exchange_with(name, scope(scope_)?, loc, style)?;
        c_int::try_from(eid).map_err(|_| bad("too many exchanges"))
    })
}

/// `int czmq_create_queue (void *obj, const char *queue, int scope, const char *nic)`: the
/// queue's number, or -1 and errno.
#[no_mangle]
pub unsafe extern "C" fn czmq_create_queue(obj: *mut c_void, queue: *const c_char, scope_: c_int, nic: *const c_char) -> c_int {
    wguard(-1, || {
        // SAFETY: C contract.
        let (w, name, loc) = unsafe { (handle(obj)?, text(queue, false)?, text(nic, true)?) };
        let qid = w.create_queue(name, scope(scope_)?, loc)?;
        c_int::try_from(qid).map_err(|_| bad("too many queues"))
    })
}

/// `int czmq_bind_ex (void *obj, const char *exchange, const char *queue)`: 0 or -1 and errno.
#[no_mangle]
pub unsafe extern "C" fn czmq_bind_ex(obj: *mut c_void, exchange: *const c_char, queue: *const c_char) -> c_int {
    wguard(-1, || {
        // SAFETY: C contract.
        let (w, e, q) = unsafe { (handle(obj)?, text(exchange, false)?, text(queue, false)?) };
        w.bind(e, q)?;
        Ok(0)
    })
}

/// `void czmq_bind (void *obj, const char *exchange, const char *queue)`: errno 0 on success.
#[no_mangle]
pub unsafe extern "C" fn czmq_bind(obj: *mut c_void, exchange: *const c_char, queue: *const c_char) {
    // SAFETY: forwarded contract.
    clear_errno_on(unsafe { czmq_bind_ex(obj, exchange, queue) });
}

/// The caller's buffer given to `czmq_send` with a free function.
struct CallerBuf {
    data: *mut u8,
    len: usize,
    ffn: czmq_free_fn,
}

// SAFETY: the seed's contract hands the buffer to the library until it calls the free
// function, from whichever thread drops the last reference.
unsafe impl Send for CallerBuf {}

impl AsRef<[u8]> for CallerBuf {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `data` has `len` readable bytes until `ffn` runs, which is only in drop.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }
}

impl Drop for CallerBuf {
    fn drop(&mut self) {
        // SAFETY: the caller's free function, called once with its own buffer.
        unsafe { (self.ffn)(self.data.cast()) };
    }
}

/// `int czmq_send_ex (void *obj, int eid, void *data, size_t size, czmq_free_fn *ffn)`: 0 or
/// -1 and errno. With `ffn` the library owns `data` from now on (even on failure) and calls
/// `ffn(data)` when done with it; without, `data` is copied.
#[no_mangle]
pub unsafe extern "C" fn czmq_send_ex(
    obj: *mut c_void,
    eid: c_int,
    data: *mut c_void,
    size: usize,
    ffn: Option<czmq_free_fn>,
) -> c_int {
    wguard(-1, || {
        let mut msg = if data.is_null() {
            if size != 0 {
                return Err(WiringError::Socket(oxmq::Error::Fault));
            }
            Msg::new()
        } else {
            match ffn {
                // SAFETY: C contract: `data` has `size` readable bytes (until ffn, if given).
                None => unsafe { Msg::copy_from_raw(data.cast::<u8>(), size) },
                // A body this small is stored inside the message either way: copy it and
                // give the buffer back now, rather than wrap it only to copy it out.
                Some(ffn) if size <= INLINE_CAP => {
                    // SAFETY: C contract: `data` has `size` readable bytes until `ffn` runs.
                    let m = unsafe { Msg::copy_from_raw(data.cast::<u8>(), size) };
                    // SAFETY: the caller's free function, called once with its own buffer.
                    unsafe { ffn(data) };
                    m
                }
                Some(ffn) => Msg::from_bytes(Bytes::from_owner(CallerBuf { data: data.cast(), len: size, ffn })),
            }
        };
        // SAFETY: C contract.
        let w = unsafe { handle(obj) }?;
        let eid = usize::try_from(eid).map_err(|_| bad("negative exchange id"))?;
        w.send_msg(eid, &mut msg)?;
        Ok(0)
    })
}

/// `int czmq_try_send (void *obj, int eid, const void *data, size_t size)` (an oxmq extension,
/// for bindings whose calls must not block): sends a copy of the `size` bytes at `data` if that
/// needs no wait: 0. Otherwise -1 with `EAGAIN` and nothing sent (a full queue, or an exchange
/// with several destinations or reachable from other handles): the handle keeps the copy and
/// the caller sends it with `czmq_send_parked` (or the data with `czmq_send_ex`; the next
/// `czmq_try_send` drops a copy left unsent). Other errors as `czmq_send_ex`.
#[no_mangle]
pub unsafe extern "C" fn czmq_try_send(obj: *mut c_void, eid: c_int, data: *const c_void, size: usize) -> c_int {
    wguard(-1, || {
        if data.is_null() && size != 0 {
            return Err(WiringError::Socket(oxmq::Error::Fault));
        }
        // SAFETY: C contract.
        let h = unsafe { handle_full(obj) }?;
        h.parked = None;
        let eid = usize::try_from(eid).map_err(|_| bad("negative exchange id"))?;
        // SAFETY: C contract: `data` has `size` readable bytes for the call (checked non-null
        // when `size` is not 0).
        let mut msg = unsafe { Msg::copy_from_raw(data.cast::<u8>(), size) };
        if h.w.try_send_msg(eid, &mut msg)? {
            Ok(0)
        } else {
            h.parked = Some((eid, msg));
            Err(WiringError::Socket(oxmq::Error::Again))
        }
    })
}

/// `int czmq_send_parked (void *obj, int eid)` (an oxmq extension): sends the copy the last
/// `czmq_try_send` on exchange `eid` kept when it returned `EAGAIN`, waiting as `czmq_send_ex`
/// does: 0, or -1 and errno (the copy is dropped either way). `EINVAL` when no copy of a
/// message for `eid` is kept.
#[no_mangle]
pub unsafe extern "C" fn czmq_send_parked(obj: *mut c_void, eid: c_int) -> c_int {
    wguard(-1, || {
        // SAFETY: C contract.
        let h = unsafe { handle_full(obj) }?;
        match h.parked.take() {
            Some((e, mut msg)) if usize::try_from(eid).is_ok_and(|eid| eid == e) => {
                h.w.send_msg(e, &mut msg)?;
                Ok(0)
            }
            _ => Err(bad("no message kept by czmq_try_send for this exchange")),
        }
    })
}

/// `int czmq_send_msg (void *obj, int eid, zmq_msg_t *msg)` (an oxmq extension): sends the
/// message in `msg` through exchange `eid`, waiting as `czmq_send_ex` does, without copying
/// its body: a body from `zmq_msg_init_size` (filled in place) or `zmq_msg_init_data` goes as
/// it is, as `zmq_msg_send` sends it. Its size on success, with `msg` empty again (ready for
/// `zmq_msg_init_size` or `zmq_msg_close`); -1 and errno on failure, with `msg` unchanged.
#[no_mangle]
pub unsafe extern "C" fn czmq_send_msg(obj: *mut c_void, eid: c_int, msg: *mut zmq_msg_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { send_zmq_msg::<true>(obj, eid, msg) }
}

/// `int czmq_try_send_msg (void *obj, int eid, zmq_msg_t *msg)` (an oxmq extension, for
/// bindings whose calls must not block): `czmq_send_msg` if that needs no wait. Otherwise -1
/// with `EAGAIN` and nothing sent, `msg` unchanged (a full queue, or an exchange with several
/// destinations or reachable from other handles): the caller then sends with `czmq_send_msg`.
#[no_mangle]
pub unsafe extern "C" fn czmq_try_send_msg(obj: *mut c_void, eid: c_int, msg: *mut zmq_msg_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { send_zmq_msg::<false>(obj, eid, msg) }
}

/// `czmq_send_msg` (`WAIT`), or `czmq_try_send_msg`. A const parameter, not an argument:
/// each export then has a closure of its own, which the compiler inlines into its unwinding
/// boundary; one closure shared by both stayed an out-of-line call with its captures passed
/// through memory.
///
/// # Safety
/// `obj` a live handle, `msg` null or the caller's zmq_msg_t (C contract).
#[inline(always)]
unsafe fn send_zmq_msg<const WAIT: bool>(obj: *mut c_void, eid: c_int, msg: *mut zmq_msg_t) -> c_int {
    wguard(-1, || {
        // SAFETY: the caller's contract.
        let (w, m) = unsafe { (handle(obj)?, crate::msg::live(msg)?) };
        let eid = usize::try_from(eid).map_err(|_| bad("negative exchange id"))?;
        let n = m.len();
        // One message per send: a frame received with "more" goes as a whole message. (Only
        // then stored: a store to the flags just before the frame is copied into the pipe
        // would stall that copy.)
        if m.more() {
            m.set_more(false);
        }
        if WAIT {
            w.send_msg(eid, m)?;
        } else if !w.try_send_msg(eid, m)? {
            return Err(WiringError::Socket(oxmq::Error::Again));
        }
        // SAFETY: `msg` is live (checked above).
        unsafe { crate::msg::clear_group(msg) };
        Ok(crate::guard::len_to_int(n))
    })
}

/// `int czmq_receive_msg (void *obj, zmq_msg_t *msg, int timeout_ms)` (an oxmq extension):
/// waits up to `timeout_ms` (-1: forever) for the next message from any queue of the handle
/// and puts it in `msg` (initialised, as for `zmq_msg_recv`; what it held is released) without
/// copying the body: read it with `zmq_msg_data` and `zmq_msg_size`. Its size, or -1 and
/// errno (`EAGAIN` on timeout).
#[no_mangle]
pub unsafe extern "C" fn czmq_receive_msg(obj: *mut c_void, msg: *mut zmq_msg_t, timeout_ms: c_int) -> c_int {
    wguard(-1, || {
        // SAFETY: C contract: a live handle and the caller's zmq_msg_t.
        let (h, m) = unsafe { (handle_full(obj)?, crate::msg::live(msg)?) };
        let timeout = (timeout_ms >= 0).then(|| Duration::from_millis(timeout_ms as u64));
        next_message(&mut h.w, &mut h.pending, m, timeout)?;
        // SAFETY: `msg` is live (checked above).
        unsafe { crate::msg::clear_group(msg) };
        Ok(crate::guard::len_to_int(m.len()))
    })
}

/// `void czmq_send (void *obj, int eid, void *data, size_t size, czmq_free_fn *ffn)`.
#[no_mangle]
pub unsafe extern "C" fn czmq_send(obj: *mut c_void, eid: c_int, data: *mut c_void, size: usize, ffn: Option<czmq_free_fn>) {
    // SAFETY: forwarded contract.
    clear_errno_on(unsafe { czmq_send_ex(obj, eid, data, size, ffn) });
}

/// Messages lent to C by `czmq_receive`, by data pointer, until `release_lent`.
fn lent() -> &'static Mutex<HashMap<usize, Msg>> {
    static L: OnceLock<Mutex<HashMap<usize, Msg>>> = OnceLock::new();
    L.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The free function of a lent body: drops the message it belongs to.
unsafe extern "C" fn release_lent(data: *mut c_void) {
    let m = lent().lock().unwrap_or_else(|p| p.into_inner()).remove(&(data as usize));
    drop(m);
}

/// One spare receive buffer (`COPY_MAX` bytes, from malloc) per thread, so a receive loop
/// that frees each message before the next reuses one buffer instead of a malloc and a free
/// per message. Per thread, not one for the process: a shared slot cost an atomic exchange
/// on each side of every message. A buffer freed on another thread becomes that thread's
/// spare; a thread's spare is freed when the thread exits.
struct Spare(Cell<*mut c_void>);

impl Drop for Spare {
    fn drop(&mut self) {
        let p = self.0.replace(std::ptr::null_mut());
        if !p.is_null() {
            // SAFETY: the spare came from libc::malloc in copy_buffer, owned by this slot.
            unsafe { libc::free(p) };
        }
    }
}

thread_local! {
    static SPARE: Spare = const { Spare(Cell::new(std::ptr::null_mut())) };
}

/// A `COPY_MAX`-byte buffer: this thread's spare if it has one, else a new one (null if out
/// of memory).
#[inline(always)]
fn copy_buffer() -> *mut c_void {
    // A thread past its locals' destruction (`try_with` fails) just allocates.
    let p = SPARE.try_with(|s| s.0.replace(std::ptr::null_mut())).unwrap_or(std::ptr::null_mut());
    if !p.is_null() {
        return p;
    }
    // SAFETY: malloc of a non-zero size.
    unsafe { libc::malloc(COPY_MAX) }
}

/// The free function of a copied body: keeps the buffer as this thread's spare, or frees it.
unsafe extern "C" fn free_copy(data: *mut c_void) {
    let kept = SPARE
        .try_with(|s| {
            if s.0.get().is_null() {
                s.0.set(data);
                true
            } else {
                false
            }
        })
        .unwrap_or(false);
    if !kept {
        // SAFETY: `data` came from libc::malloc in copy_buffer (caller's contract: once).
        unsafe { libc::free(data) };
    }
}

/// `int czmq_receive_ex (void *obj, void **data, size_t *size, czmq_free_fn **ffn, int
/// timeout_ms)`: waits up to `timeout_ms` (-1: forever) for a message from any queue of the
/// handle; 0, or -1 and errno (`EAGAIN` on timeout). The caller owns `*data` and releases it
/// with `(*ffn)(*data)` when `*ffn` is not NULL (an empty message gives NULL data, no ffn).
#[no_mangle]
pub unsafe extern "C" fn czmq_receive_ex(
    obj: *mut c_void,
    data: *mut *mut c_void,
    size: *mut usize,
    ffn: *mut Option<czmq_free_fn>,
    timeout_ms: c_int,
) -> c_int {
    wguard(-1, || {
        if data.is_null() || size.is_null() || ffn.is_null() {
            return Err(WiringError::Socket(oxmq::Error::Fault));
        }
        // SAFETY: C contract.
        let h = unsafe { handle_full(obj) }?;
        let timeout = (timeout_ms >= 0).then(|| Duration::from_millis(timeout_ms as u64));
        let Handle { w, pending, scratch: msg, .. } = h;
        next_message(w, pending, msg, timeout)?;
        let len = msg.len();
        let (p, f): (*mut c_void, Option<czmq_free_fn>) = if len == 0 {
            (std::ptr::null_mut(), None)
        } else if len <= COPY_MAX {
            let p = copy_buffer();
            if p.is_null() {
                return Err(WiringError::Socket(oxmq::Error::NoMem));
            }
            match msg.inline_body() {
                // SAFETY: `p` has COPY_MAX >= INLINE_CAP writable bytes.
                Some((_, buf)) => unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), p.cast::<u8>(), INLINE_CAP) },
                None => {
                    // SAFETY: `p` has `len` writable bytes; the body has `len` readable ones.
                    unsafe { std::ptr::copy_nonoverlapping(msg.as_slice().as_ptr(), p.cast::<u8>(), len) };
                    // The handle keeps no hold on the buffer the body lives in (its
                    // connection's properties stay, for the next message).
                    msg.release_body();
                }
            }
            (p, Some(free_copy as czmq_free_fn))
        } else {
            // Bodies this large live outside the Msg (a shared buffer or a chunk piece), so
            // the pointer stays valid while the Msg sits in the table.
            let p = msg.as_slice().as_ptr() as *mut c_void;
            lent().lock().unwrap_or_else(|e| e.into_inner()).insert(p as usize, std::mem::take(msg));
            (p, Some(release_lent as czmq_free_fn))
        };
        // SAFETY: non-null out-pointers (checked above).
        unsafe {
            *data = p;
            *size = len;
            *ffn = f;
        }
        Ok(0)
    })
}

/// `int czmq_receive_into (void *obj, void *buf, size_t len, size_t *size, int timeout_ms)`
/// (an oxmq extension, for bindings that keep their own buffer): waits up to `timeout_ms`
/// (-1: forever) for the next message, copies it into `buf` and stores its length in `*size`;
/// 0, or -1 and errno. A message longer than `len` is not consumed: EMSGSIZE, with its length
/// in `*size`, and the next receive returns it (into a larger buffer). One call and one copy
/// per message, where `czmq_receive` costs a copy or a loan and a call of the free function.
#[no_mangle]
pub unsafe extern "C" fn czmq_receive_into(
    obj: *mut c_void,
    buf: *mut c_void,
    len: usize,
    size: *mut usize,
    timeout_ms: c_int,
) -> c_int {
    wguard(-1, || {
        if size.is_null() || (buf.is_null() && len != 0) {
            return Err(WiringError::Socket(oxmq::Error::Fault));
        }
        // SAFETY: C contract.
        let h = unsafe { handle_full(obj) }?;
        let timeout = (timeout_ms >= 0).then(|| Duration::from_millis(timeout_ms as u64));
        // Into the handle's reused frame, as czmq_receive_ex: consecutive messages of one
        // connection then share its properties without two atomic RMWs per message.
        let Handle { w, pending, scratch: msg, .. } = h;
        next_message(w, pending, msg, timeout)?;
        let n = msg.len();
        // SAFETY: non-null (checked above).
        unsafe { *size = n };
        if n > len {
            *pending = Some(std::mem::take(msg));
            return Err(WiringError::Socket(oxmq::Error::MsgSize));
        }
        if n > 0 {
            // SAFETY: `buf` has `len >= n` writable bytes (C contract); the body has `n`.
            unsafe { std::ptr::copy_nonoverlapping(msg.as_slice().as_ptr(), buf.cast::<u8>(), n) };
        }
        // The handle keeps no hold on a buffer the body lives in.
        msg.release_body();
        Ok(0)
    })
}

/// `void czmq_receive (void *obj, void **data, size_t *size, czmq_free_fn **ffn)`: waits
/// forever; errno 0 on success.
#[no_mangle]
pub unsafe extern "C" fn czmq_receive(
    obj: *mut c_void,
    data: *mut *mut c_void,
    size: *mut usize,
    ffn: *mut Option<czmq_free_fn>,
) {
    // SAFETY: forwarded contract.
    clear_errno_on(unsafe { czmq_receive_ex(obj, data, size, ffn, -1) });
}

/// `int czmq_lookup (void *obj, const char *name, char *endpoint, size_t len)`: writes the
/// ZMTP endpoint of a global name (NUL-terminated) for other ZeroMQ programs to connect to;
/// its length, or -1 and errno (`ENOENT` unknown, `ENAMETOOLONG` buffer too small).
#[no_mangle]
pub unsafe extern "C" fn czmq_lookup(obj: *mut c_void, name: *const c_char, endpoint: *mut c_char, len: usize) -> c_int {
    wguard(-1, || {
        // SAFETY: C contract.
        let (w, name) = unsafe { (handle(obj)?, text(name, false)?) };
        if endpoint.is_null() {
            return Err(WiringError::Socket(oxmq::Error::Fault));
        }
        let ep = w.lookup(name)?.endpoint;
        if ep.len() + 1 > len {
            return Err(WiringError::Socket(oxmq::Error::NameTooLong));
        }
        // SAFETY: `endpoint` has `len` writable bytes (caller's contract), len > ep.len().
        unsafe {
            std::ptr::copy_nonoverlapping(ep.as_ptr(), endpoint.cast::<u8>(), ep.len());
            *endpoint.add(ep.len()) = 0;
        }
        Ok(ep.len() as c_int)
    })
}
