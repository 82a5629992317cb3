//! Socket handles: `zmq_socket`, `zmq_close`, options, endpoints, `zmq_send`/`zmq_recv`.
//!
//! A socket handle is a heap slot holding a tag word and the `oxmq::Socket`. Every call checks
//! the tag (one load and compare, as libzmq's `check_tag`), so a closed handle gives `ENOTSOCK`.
//! Closing drops the socket, clears the tag and parks the slot on a free list instead of freeing
//! it: a double close or a use after close then reads valid memory with a dead tag and reports
//! `ENOTSOCK` — it is never a use-after-free, not even under valgrind. A later `zmq_socket`
//! reuses parked slots, so memory stays bounded by the peak number of open sockets (as with
//! malloc reuse in libzmq, a stale handle may then name the new socket).
//!
//! Classic sockets are not thread-safe (as in libzmq): a handle is used by one thread at a time.
//! The draft types are thread-safe, as libzmq's: their handle holds an `oxmq::SyncSocket`;
//! send and receive use its waiting calls (no lock held while blocked), every other export
//! locks it for the duration of the call (`guard::hold`).

use crate::ctx;
use crate::guard::{c_str, guard, len_to_int, non_null};
use bytes::Bytes;
use oxmq::{opt, Error, Msg, Result, Socket, SocketType, SyncSocket};
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const LIVE: u64 = 0x6f78_6d71_5f73_6f63; // "oxmq_soc"
const DEAD: u64 = 0xdead_0000_dead_0000;

/// What a `void *socket` points to.
pub(crate) struct SockHandle {
    /// `LIVE` while the slot holds an open socket. Atomic only so that a (misused) concurrent
    /// close is not a data race on the tag itself; loads are relaxed plain moves.
    tag: AtomicU64,
    sock: UnsafeCell<Option<Socket>>,
    /// A thread-safe (draft-type) socket instead: `sock` is then None.
    sync: UnsafeCell<Option<SyncSocket>>,
}

/// Parked slots of closed sockets, by address (see the module comment), reused oldest first,
/// so that a stale handle names a new socket as late as possible.
static FREE: Mutex<VecDeque<usize>> = Mutex::new(VecDeque::new());

fn free_list() -> std::sync::MutexGuard<'static, VecDeque<usize>> {
    FREE.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a live handle holds: a classic socket (one thread at a time) or a thread-safe one.
pub(crate) enum Handle<'a> {
    Plain(&'a mut Socket),
    Sync(&'a SyncSocket),
}

/// The socket behind a C handle, classic or thread-safe. Null or closed → `ENOTSOCK` (libzmq's
/// answer for both).
///
/// # Safety
/// `p` is null or a pointer returned by `zmq_socket` (open or closed); for a classic socket,
/// no other reference to it is alive for `'a` (one thread uses a socket at a time, as in
/// libzmq).
#[inline(always)]
pub(crate) unsafe fn handle<'a>(p: *mut c_void) -> Result<Handle<'a>> {
    if p.is_null() {
        return Err(Error::NotSock);
    }
    let h = p.cast::<SockHandle>();
    // SAFETY: `p` came from `zmq_socket`, whose slots are never freed, so reading the tag is a
    // read of valid memory even after close.
    if unsafe { (*h).tag.load(Ordering::Relaxed) } != LIVE {
        return Err(Error::NotSock);
    }
    // SAFETY: the tag is LIVE, so the slot holds a socket. Only a shared look first: a
    // thread-safe socket's handle is used by several threads at once.
    if unsafe { (*(*h).sock.get()).is_some() } {
        // SAFETY: a classic socket: the caller guarantees exclusive use of the handle for the
        // duration of the borrow.
        return unsafe { (*(*h).sock.get()).as_mut() }.map(Handle::Plain).ok_or(Error::NotSock);
    }
    // SAFETY: LIVE without a classic socket: a thread-safe one, shared by reference.
    unsafe { (*(*h).sync.get()).as_ref() }.map(Handle::Sync).ok_or(Error::NotSock)
}

/// Checks that `p` is an open socket, without taking a thread-safe socket's lock (for calls
/// that reach the socket again later in the same export: a second lock would deadlock).
///
/// # Safety
/// As [`handle`].
pub(crate) unsafe fn check_sock(p: *mut c_void) -> Result<()> {
    // SAFETY: caller's contract; the borrow ends here.
    unsafe { handle(p) }.map(|_| ())
}

/// The socket behind a C handle, for calls that do not block. A thread-safe socket is locked
/// until the export returns (`guard::hold`).
///
/// # Safety
/// As [`handle`].
#[inline(always)]
pub(crate) unsafe fn sock_mut<'a>(p: *mut c_void) -> Result<&'a mut Socket> {
    // SAFETY: caller's contract.
    match unsafe { handle(p)? } {
        Handle::Plain(s) => Ok(s),
        // SAFETY: handle slots are never freed; the lock is released when this export returns.
        Handle::Sync(ts) => Ok(unsafe { crate::guard::hold_sync(ts) }),
    }
}

fn new_handle(sock: Option<Socket>, sync: Option<SyncSocket>) -> *mut c_void {
    let reused = free_list().pop_front();
    match reused {
        Some(addr) => {
            let h = addr as *mut SockHandle;
            // SAFETY: parked slots are valid `SockHandle`s with a dead tag; popping it from the
            // free list under the lock gives this call sole ownership of the slot.
            unsafe {
                *(*h).sock.get() = sock;
                *(*h).sync.get() = sync;
                (*h).tag.store(LIVE, Ordering::Release);
            }
            h.cast()
        }
        None => Box::into_raw(Box::new(SockHandle {
            tag: AtomicU64::new(LIVE),
            sock: UnsafeCell::new(sock),
            sync: UnsafeCell::new(sync),
        }))
        .cast(),
    }
}

#[no_mangle]
pub extern "C" fn zmq_socket(context: *mut c_void, kind: c_int) -> *mut c_void {
    guard(std::ptr::null_mut(), || {
        let ctx = ctx::lookup(context)?;
        let kind = SocketType::from_raw(kind).ok_or(Error::Invalid)?;
        if kind.is_thread_safe() {
            Ok(new_handle(None, Some(ctx.sync_socket(kind)?)))
        } else {
            Ok(new_handle(Some(ctx.socket(kind)?), None))
        }
    })
}

#[no_mangle]
pub extern "C" fn zmq_close(s: *mut c_void) -> c_int {
    guard(-1, || {
        // Validate first: a null, closed or foreign handle must not be parked.
        // SAFETY: `s` is a handle from `zmq_socket` by the C contract; exclusive use.
        unsafe { handle(s)? };
        let h = s.cast::<SockHandle>();
        // Exactly one close wins the slot: a second (or concurrent) close gets ENOTSOCK, so a
        // slot is never parked twice (twice parked, it would go to two new sockets at once).
        // SAFETY: validated above; slots are never freed.
        if unsafe { (*h).tag.compare_exchange(LIVE, DEAD, Ordering::AcqRel, Ordering::Relaxed) }.is_err() {
            return Err(Error::NotSock);
        }
        // A proxy running on another thread still uses the socket: it is told to stop, and
        // drops the socket and parks the slot itself once it has let go.
        if crate::proxy::close_in_use(s as usize) {
            return Ok(0);
        }
        // SAFETY: the tag is dead and no proxy holds the socket.
        unsafe { park_closed(s) };
        Ok(0)
    })
}

/// Drops the socket of a handle whose tag was set dead, and parks its slot for reuse.
/// Dropping `Socket` closes it (honouring LINGER).
///
/// # Safety
/// `s` is a handle from `zmq_socket` whose tag this caller turned dead, and no reference to
/// its socket is alive.
pub(crate) unsafe fn park_closed(s: *mut c_void) {
    let h = s.cast::<SockHandle>();
    // SAFETY: caller's contract: the slot is ours alone now.
    let (sock, sync) = unsafe { ((*(*h).sock.get()).take(), (*(*h).sync.get()).take()) };
    drop(sock);
    drop(sync);
    free_list().push_back(h as usize);
}

/// Reads an `int`-sized option into `optval`/`optvallen` as libzmq does (`*optvallen >= 4`).
///
/// # Safety
/// `optval` points to `*optvallen` writable bytes; `optvallen` is valid.
unsafe fn put_int(v: i32, optval: *mut c_void, optvallen: *mut usize) -> Result<c_int> {
    // SAFETY: caller's contract.
    unsafe {
        if *optvallen < 4 {
            return Err(Error::Invalid);
        }
        // libzmq's do_getsockopt clears the rest of the caller's buffer.
        std::ptr::write_bytes(optval.cast::<u8>().add(4), 0, *optvallen - 4);
        optval.cast::<i32>().write_unaligned(v);
        *optvallen = 4;
    }
    Ok(0)
}

#[no_mangle]
pub extern "C" fn zmq_setsockopt(s: *mut c_void, option: c_int, optval: *const c_void, optvallen: usize) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: `s` is a socket handle used by this thread only.
        let sock = unsafe { sock_mut(s)? };
        let value: &[u8] = if optvallen == 0 {
            // libzmq: NULL unsets the proxy, an empty string is no proxy address at all.
            if option == opt::SOCKS_PROXY && !optval.is_null() {
                return Err(oxmq::Error::Invalid);
            }
            &[]
        } else {
            non_null(optval)?;
            // SAFETY: non-null, and C promises `optvallen` readable bytes.
            unsafe { std::slice::from_raw_parts(optval.cast::<u8>(), optvallen) }
        };
        sock.setsockopt(option, value)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn zmq_getsockopt(s: *mut c_void, option: c_int, optval: *mut c_void, optvallen: *mut usize) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: `s` is a socket handle used by this thread only.
        let sock = unsafe { sock_mut(s)? };
        non_null(optvallen)?;
        // SAFETY: non-null, points to the caller's size_t.
        let cap = unsafe { *optvallen };
        if cap > 0 {
            non_null(optval)?;
        }
        // Options that are methods of their own in the Rust API.
        let int = match option {
            opt::FD => Some(sock.fd()),
            opt::EVENTS => Some(i32::from(sock.events()?)),
            opt::RCVMORE => Some(i32::from(sock.rcvmore())),
            opt::TYPE => Some(sock.socket_type().as_raw()),
            opt::THREAD_SAFE => Some(i32::from(sock.socket_type().is_thread_safe())),
            _ => None,
        };
        if let Some(v) = int {
            // SAFETY: `optval` has `cap` writable bytes and `optvallen` is valid (checked).
            return unsafe { put_int(v, optval, optvallen) };
        }
        let buf: &mut [u8] = if cap == 0 {
            &mut []
        } else {
            // SAFETY: non-null, and C promises `*optvallen` writable bytes.
            unsafe { std::slice::from_raw_parts_mut(optval.cast::<u8>(), cap) }
        };
        let n = match crate::curve::getsockopt_security(sock, option, buf)? {
            Some(n) => n,
            None => sock.getsockopt(option, buf)?,
        };
        // SAFETY: checked non-null above.
        unsafe { *optvallen = n };
        Ok(0)
    })
}

/// Runs one endpoint operation (`bind`, `connect`, ...).
fn endpoint_op(s: *mut c_void, addr: *const c_char, op: fn(&mut Socket, &str) -> Result<()>) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: `s` is a socket handle used by this thread only.
        let sock = unsafe { sock_mut(s)? };
        // SAFETY: `addr` is null or a NUL-terminated string (C contract).
        let ep = unsafe { c_str(addr)? };
        op(sock, ep)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn zmq_bind(s: *mut c_void, addr: *const c_char) -> c_int {
    endpoint_op(s, addr, |s, ep| s.bind(ep))
}

#[no_mangle]
pub extern "C" fn zmq_connect(s: *mut c_void, addr: *const c_char) -> c_int {
    endpoint_op(s, addr, |s, ep| s.connect(ep))
}

#[no_mangle]
pub extern "C" fn zmq_unbind(s: *mut c_void, addr: *const c_char) -> c_int {
    endpoint_op(s, addr, |s, ep| s.unbind(ep))
}

#[no_mangle]
pub extern "C" fn zmq_disconnect(s: *mut c_void, addr: *const c_char) -> c_int {
    endpoint_op(s, addr, |s, ep| s.disconnect(ep))
}

/// `buf`/`len` as a slice; null with a non-zero length → `EFAULT`.
///
/// # Safety
/// When non-null, `buf` points to `len` readable bytes that outlive `'a`.
pub(crate) unsafe fn in_slice<'a>(buf: *const c_void, len: usize) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    non_null(buf)?;
    // SAFETY: caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) })
}

#[no_mangle]
pub extern "C" fn zmq_send(s: *mut c_void, buf: *const c_void, len: usize, flags: c_int) -> c_int {
    guard(-1, || {
        if len != 0 {
            non_null(buf)?;
        }
        // SAFETY: C promises `len` readable bytes at `buf`.
        let mut msg = unsafe { Msg::copy_from_raw(buf.cast(), len) };
        // SAFETY: C contract: `s` is a socket handle (used by this thread only unless
        // thread-safe).
        // Sent by reference: moving the frame into a by-value argument would load it right
        // after the narrower stores that built it (a store-forwarding stall per send).
        match unsafe { handle(s)? } {
            Handle::Plain(sock) => sock.send_msg(&mut msg, flags)?,
            Handle::Sync(ts) => ts.send_msg(&mut msg, flags)?,
        }
        Ok(len_to_int(len))
    })
}

/// A caller-owned buffer that stays valid and unchanged forever (`zmq_send_const`'s contract).
struct ConstBuf {
    ptr: *const u8,
    len: usize,
}

// SAFETY: `zmq_send_const` requires the buffer to be constant and live for the life of the
// program, so reading it from any thread is sound.
unsafe impl Send for ConstBuf {}

impl AsRef<[u8]> for ConstBuf {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: non-null (checked at construction) and constant by the caller's contract.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

#[no_mangle]
pub extern "C" fn zmq_send_const(s: *mut c_void, buf: *const c_void, len: usize, flags: c_int) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: `s` is a socket handle used by this thread only.
        let sock = unsafe { sock_mut(s)? };
        let msg = if len == 0 {
            Msg::new()
        } else {
            non_null(buf)?;
            Msg::from_bytes(Bytes::from_owner(ConstBuf { ptr: buf.cast(), len }))
        };
        sock.send(msg, flags)?;
        Ok(len_to_int(len))
    })
}

#[no_mangle]
pub extern "C" fn zmq_recv(s: *mut c_void, buf: *mut c_void, len: usize, flags: c_int) -> c_int {
    guard(-1, || {
        let out: &mut [u8] = if len == 0 {
            &mut []
        } else {
            non_null(buf)?;
            // SAFETY: C promises `len` writable bytes at `buf`.
            unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) }
        };
        // SAFETY: C contract: `s` is a socket handle (used by this thread only unless
        // thread-safe).
        let n = match unsafe { handle(s)? } {
            Handle::Plain(sock) => sock.recv_into(out, flags)?,
            Handle::Sync(ts) => {
                let m = ts.recv(flags)?;
                let n = m.len().min(out.len());
                out[..n].copy_from_slice(&m[..n]);
                m.len()
            }
        };
        Ok(len_to_int(n))
    })
}

#[no_mangle]
pub extern "C" fn zmq_sendiov(s: *mut c_void, iov: *mut libc::iovec, count: usize, flags: c_int) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: `s` is a socket handle used by this thread only.
        let sock = unsafe { sock_mut(s)? };
        // libzmq: a zero count or a null vector is EINVAL.
        if count == 0 || iov.is_null() {
            return Err(Error::Invalid);
        }
        // SAFETY: C promises `count` iovecs at `iov`.
        let iovs = unsafe { std::slice::from_raw_parts(iov, count) };
        let mut last = 0;
        for (i, v) in iovs.iter().enumerate() {
            // SAFETY: each iovec names `iov_len` readable bytes.
            let data = unsafe { in_slice(v.iov_base, v.iov_len)? };
            // libzmq's contract: the caller's flags go with every part (pass ZMQ_SNDMORE for a
            // multi-part message); SNDMORE is dropped from the last part.
            let f = if i + 1 == count { flags & !opt::SNDMORE } else { flags };
            sock.send(Msg::copy_from(data), f)?;
            last = v.iov_len;
        }
        Ok(len_to_int(last))
    })
}

#[no_mangle]
pub extern "C" fn zmq_recviov(s: *mut c_void, iov: *mut libc::iovec, count: *mut usize, flags: c_int) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: `s` is a socket handle used by this thread only.
        let sock = unsafe { sock_mut(s)? };
        // libzmq: a null count or vector is EINVAL.
        if count.is_null() || iov.is_null() {
            return Err(Error::Invalid);
        }
        // SAFETY: `count` is valid; `iov` has `*count` entries (C contract).
        let cap = unsafe { *count };
        if cap == 0 {
            return Err(Error::Invalid);
        }
        let mut n = 0;
        loop {
            let msg = sock.recv(flags)?;
            // libzmq hands each part over in a malloc'ed buffer the caller frees.
            // SAFETY: malloc of at least one byte; checked for null below.
            let p = unsafe { libc::malloc(msg.len().max(1)) }.cast::<u8>();
            if p.is_null() {
                return Err(Error::NoMem);
            }
            // SAFETY: `p` has room for `msg.len()` bytes; `iov` has `cap > n` entries.
            unsafe {
                std::ptr::copy_nonoverlapping(msg.as_ptr(), p, msg.len());
                *iov.add(n) = libc::iovec { iov_base: p.cast(), iov_len: msg.len() };
            }
            n += 1;
            if !sock.rcvmore() || n == cap {
                break;
            }
        }
        // SAFETY: checked non-null above.
        unsafe { *count = n };
        // libzmq returns the number of parts received.
        Ok(len_to_int(n))
    })
}
