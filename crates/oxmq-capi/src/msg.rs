//! `zmq_msg_t` and the `zmq_msg_*` family.
//!
//! libzmq's `zmq_msg_t` is 64 opaque bytes aligned to a pointer. oxmq keeps an `oxmq::Msg`
//! (at most 56 bytes, 8-aligned) in the first 56 bytes, a RADIO/DISH group (see [`groups`]) in
//! the next 4 and a tag word in the last 4: `LIVE`
//! after any `zmq_msg_init*`, `DEAD` after `zmq_msg_close`. Every call but the initialisers
//! requires `LIVE` and otherwise fails with `EFAULT` (libzmq's `check()` answer), which catches a
//! double close, a use after close and most uses of a never-initialised message (garbage that
//! happens to equal the 64-bit tag is the only miss).
//!
//! No export here locks a thread-safe socket (send and receive use its waiting calls), so
//! they run under `guard_unlocked`, which has no locks to release.
//!
//! `zmq_msg_init_data` is the zero-copy path: the caller's buffer becomes the body of a `Bytes`
//! whose owner calls the caller's free function exactly once, when the last reference (in the
//! application, a queue or an I/O thread) is dropped. Bodies of up to `oxmq::msg::INLINE_CAP`
//! bytes are copied inline instead, and the free function is then called before
//! `zmq_msg_init_data` returns.

use crate::guard::{guard_unlocked, len_to_int, non_null};
use crate::socket::{handle, Handle};
use bytes::Bytes;
use oxmq::{opt, Error, Msg, Result, SocketType};
use std::ffi::{c_char, c_int, c_void};
use std::mem::{align_of, size_of, MaybeUninit};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const LIVE: u32 = 0x6f78_6d73; // "oxms"
const DEAD: u32 = 0xdead_beef;

/// libzmq's `zmq_msg_t`: `unsigned char _[64]` aligned to `sizeof(void *)`.
#[repr(C, align(8))]
pub struct zmq_msg_t {
    slot: [MaybeUninit<u8>; 56],
    /// The message's RADIO/DISH group: 0 for none, else a [`groups`] index.
    group: u32,
    tag: u32,
}

const _: () = assert!(size_of::<zmq_msg_t>() == 64);
const _: () = assert!(align_of::<zmq_msg_t>() == 8);
const _: () = assert!(size_of::<Msg>() <= 56 && align_of::<Msg>() <= 8);

/// `void zmq_free_fn (void *data, void *hint)`.
pub type zmq_free_fn = unsafe extern "C" fn(data: *mut c_void, hint: *mut c_void);

/// Reads the tag. Volatile, because the C side may hand us a never-initialised struct and the
/// compiler must not reason about its contents.
///
/// # Safety
/// `m` is non-null and points to 64 readable bytes.
#[inline(always)]
unsafe fn tag(m: *const zmq_msg_t) -> u32 {
    // SAFETY: caller's contract; `tag` is at offset 60 of an 8-aligned struct.
    unsafe { std::ptr::addr_of!((*m).tag).read_volatile() }
}

/// The live `Msg` inside `m`, or `EFAULT`.
///
/// # Safety
/// `m` is null or points to a `zmq_msg_t` the caller owns, not aliased for `'a`.
#[inline(always)]
pub(crate) unsafe fn live<'a>(m: *mut zmq_msg_t) -> Result<&'a mut Msg> {
    non_null(m)?;
    // SAFETY: non-null; the caller's contract gives 64 valid bytes.
    if unsafe { tag(m) } != LIVE {
        return Err(Error::Fault);
    }
    // SAFETY: a LIVE tag means `init` wrote a `Msg` at offset 0 (8-aligned) and nothing has
    // moved it out since; the caller gives exclusive access.
    Ok(unsafe { &mut *m.cast::<Msg>() })
}

/// Forgets `m`'s RADIO/DISH group (a message sent or received elsewhere has none).
///
/// # Safety
/// `m` is live (see [`live`]).
#[inline(always)]
pub(crate) unsafe fn clear_group(m: *mut zmq_msg_t) {
    // SAFETY: caller's contract.
    unsafe { (*m).group = 0 };
}

/// Writes the message `make` builds into `m` (without reading or dropping what was there, as
/// libzmq's init does) and marks it live. `m` is checked before the message is built, so it
/// is built in place: built first, it would live on the stack in case `m` were null and be
/// copied over with loads that span the narrower stores that built it (a store-forwarding
/// stall in every `zmq_msg_init_size` of a small body, and in the send that read it next).
///
/// # Safety
/// `m` is null or points to 64 writable bytes aligned to 8.
#[inline(always)]
unsafe fn init(m: *mut zmq_msg_t, make: impl FnOnce() -> Msg) -> Result<c_int> {
    non_null(m)?;
    // SAFETY: non-null, 8-aligned 64-byte struct; offset 0 holds a `Msg` (size checked above).
    unsafe {
        m.cast::<Msg>().write(make());
        std::ptr::addr_of_mut!((*m).group).write(0);
        std::ptr::addr_of_mut!((*m).tag).write(LIVE);
    }
    Ok(0)
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init(m: *mut zmq_msg_t) -> c_int {
    // SAFETY: C contract: `m` is null or a zmq_msg_t.
    guard_unlocked(-1, || unsafe { init(m, Msg::new) })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_size(m: *mut zmq_msg_t, size: usize) -> c_int {
    // An inline body can neither fail nor panic: built here, with no unwinding guard (whose
    // landing pad would give this export a stack frame); the rest goes to `init_size_large`,
    // a tail call.
    if size <= oxmq::INLINE_CAP && !m.is_null() {
        // SAFETY: C contract: `m` is a zmq_msg_t (non-null, checked).
        unsafe {
            m.cast::<Msg>().write(Msg::with_size(size));
            std::ptr::addr_of_mut!((*m).group).write(0);
            std::ptr::addr_of_mut!((*m).tag).write(LIVE);
        }
        return 0;
    }
    // SAFETY: forwarded C contract.
    unsafe { init_size_large(m, size) }
}

/// `zmq_msg_init_size` of a body that does not fit inline (or of a null `m`).
///
/// # Safety
/// `m` is null or a zmq_msg_t.
#[inline(never)]
unsafe extern "C" fn init_size_large(m: *mut zmq_msg_t, size: usize) -> c_int {
    // libzmq does not clear the data either ("for performance reasons zmq_msg_init_size()
    // shall not clear the message data"): a large body is handed out uninitialised.
    // SAFETY: C contract: `m` is null or a zmq_msg_t; the caller fills the `size` bytes at
    // `zmq_msg_data` before the message is used (a C program that sends them unwritten, as
    // the perf tools do, sends whatever the memory held, as it would with libzmq).
    guard_unlocked(-1, || unsafe {
        non_null(m)?;
        if size <= oxmq::INLINE_CAP {
            return init(m, || Msg::with_size(size));
        }
        // Built in place (see `Msg::write_with_size_uninit`).
        Msg::write_with_size_uninit(&mut *m.cast::<MaybeUninit<Msg>>(), size);
        std::ptr::addr_of_mut!((*m).group).write(0);
        std::ptr::addr_of_mut!((*m).tag).write(LIVE);
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_buffer(m: *mut zmq_msg_t, buf: *const c_void, size: usize) -> c_int {
    guard_unlocked(-1, || {
        // SAFETY: C promises `size` readable bytes at `buf`.
        let data = unsafe { crate::socket::in_slice(buf, size)? };
        // SAFETY: C contract: `m` is null or a zmq_msg_t.
        unsafe { init(m, || Msg::copy_from(data)) }
    })
}

/// The owner of a caller buffer given to `zmq_msg_init_data`: calls the caller's free function
/// once, when the body's last reference is dropped.
struct CallerBuf {
    data: *mut u8,
    len: usize,
    ffn: Option<zmq_free_fn>,
    hint: *mut c_void,
}

// SAFETY: libzmq's contract lets the library read the buffer and call the free function from
// any thread (its I/O threads do); the caller hands the buffer over until the free call.
unsafe impl Send for CallerBuf {}

impl AsRef<[u8]> for CallerBuf {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `data` is non-null with `len` readable bytes until `ffn` runs, which happens
        // only in `drop`, after the last reader is gone.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }
}

/// Start addresses of the caller buffers alive now (`zmq_msg_init_data`), with a count per
/// address: `zmq_msg_data` hands out such a buffer itself (the caller's pointer, writable as
/// in libzmq) where it would otherwise copy a body it cannot prove unreferenced elsewhere.
/// `CALLER_BUFS_LIVE` spares every other program the lock.
static CALLER_BUFS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
static CALLER_BUFS_LIVE: AtomicUsize = AtomicUsize::new(0);

fn caller_bufs() -> std::sync::MutexGuard<'static, Vec<(usize, usize)>> {
    CALLER_BUFS.lock().unwrap_or_else(|p| p.into_inner())
}

impl CallerBuf {
    fn new(data: *mut u8, len: usize, ffn: Option<zmq_free_fn>, hint: *mut c_void) -> CallerBuf {
        let mut v = caller_bufs();
        match v.iter_mut().find(|e| e.0 == data as usize) {
            Some(e) => e.1 += 1,
            None => v.push((data as usize, 1)),
        }
        CALLER_BUFS_LIVE.fetch_add(1, Ordering::Relaxed);
        CallerBuf { data, len, ffn, hint }
    }
}

/// True if `p` starts a live caller buffer.
fn is_caller_buf(p: *const u8) -> bool {
    CALLER_BUFS_LIVE.load(Ordering::Relaxed) != 0 && caller_bufs().iter().any(|e| e.0 == p as usize)
}

impl Drop for CallerBuf {
    fn drop(&mut self) {
        {
            let mut v = caller_bufs();
            if let Some(i) = v.iter().position(|e| e.0 == self.data as usize) {
                v[i].1 -= 1;
                if v[i].1 == 0 {
                    v.swap_remove(i);
                }
            }
            CALLER_BUFS_LIVE.fetch_sub(1, Ordering::Relaxed);
        }
        if let Some(f) = self.ffn {
            // SAFETY: the caller's free function, called exactly once with its own arguments.
            unsafe { f(self.data.cast(), self.hint) };
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_data(
    m: *mut zmq_msg_t,
    data: *mut c_void,
    size: usize,
    ffn: Option<zmq_free_fn>,
    hint: *mut c_void,
) -> c_int {
    guard_unlocked(-1, || {
        non_null(m)?;
        let msg = if data.is_null() {
            if size != 0 {
                return Err(Error::Fault);
            }
            Msg::new()
        } else {
            let owner = CallerBuf::new(data.cast(), size, ffn, hint);
            // Zero copy at every size (libzmq): zmq_msg_data is the caller's pointer, and the
            // free function runs when the last copy goes, after the send has completed.
            Msg::from_bytes_uncopied(Bytes::from_owner(owner))
        };
        // SAFETY: C contract: `m` is a zmq_msg_t (non-null checked).
        unsafe { init(m, || msg) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_close(m: *mut zmq_msg_t) -> c_int {
    // A live message that owns nothing (an inline or empty body, every message a send left
    // behind) is closed here with no unwinding guard (whose landing pad would give this export
    // a stack frame); the rest goes to `close_slow`, a tail call.
    // SAFETY: C contract: `m` is null or the caller's zmq_msg_t; the tag is read before the
    // `Msg` is looked at.
    unsafe {
        if !m.is_null() && tag(m) == LIVE && !(*m.cast::<Msg>()).needs_drop() {
            std::ptr::addr_of_mut!((*m).tag).write(DEAD);
            return 0;
        }
        close_slow(m)
    }
}

/// `zmq_msg_close` of a message with a body to drop, or of a null or dead `m` (`EFAULT`).
///
/// # Safety
/// `m` is null or the caller's zmq_msg_t.
#[inline(never)]
unsafe extern "C" fn close_slow(m: *mut zmq_msg_t) -> c_int {
    guard_unlocked(-1, || {
        // SAFETY: C contract: `m` is null or the caller's zmq_msg_t.
        let msg = unsafe { live(m)? };
        // SAFETY: `msg` is a live `Msg` in place; the tag is cleared right after so it is never
        // dropped twice.
        unsafe {
            std::ptr::drop_in_place(msg as *mut Msg);
            std::ptr::addr_of_mut!((*m).tag).write(DEAD);
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_move(dest: *mut zmq_msg_t, src: *mut zmq_msg_t) -> c_int {
    guard_unlocked(-1, || {
        if dest == src {
            // SAFETY: C contract.
            unsafe { live(src)? };
            return Ok(0);
        }
        // SAFETY: distinct zmq_msg_t's owned by the caller.
        let (d, s) = unsafe { (live(dest)?, live(src)?) };
        *d = std::mem::take(s);
        // SAFETY: both are live zmq_msg_t's (checked above) owned by the caller.
        unsafe {
            (*dest).group = (*src).group;
            (*src).group = 0;
        }
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_copy(dest: *mut zmq_msg_t, src: *mut zmq_msg_t) -> c_int {
    guard_unlocked(-1, || {
        if dest == src {
            // SAFETY: C contract.
            unsafe { live(src)? };
            return Ok(0);
        }
        // SAFETY: distinct zmq_msg_t's owned by the caller.
        let (d, s) = unsafe { (live(dest)?, live(src)?) };
        *d = s.clone();
        // SAFETY: both are live zmq_msg_t's (checked above) owned by the caller.
        unsafe { (*dest).group = (*src).group };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_data(m: *mut zmq_msg_t) -> *mut c_void {
    guard_unlocked(std::ptr::null_mut(), || {
        // SAFETY: C contract: `m` is the caller's zmq_msg_t.
        let msg = unsafe { live(m)? };
        // A caller's buffer from zmq_msg_init_data is handed back as it is, as libzmq does
        // (its memory is the caller's; copies share it there too).
        let p = msg.as_slice().as_ptr();
        if !msg.is_empty() && is_caller_buf(p) {
            return Ok(p.cast_mut().cast());
        }
        // Writable: a body shared with another message is copied first, so a write through
        // this pointer never shows in another message (copy on write).
        Ok(msg.as_mut_slice().as_mut_ptr().cast())
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_size(m: *const zmq_msg_t) -> usize {
    // SAFETY: C contract: `m` is the caller's zmq_msg_t; only read here.
    guard_unlocked(0, || Ok(unsafe { live(m.cast_mut())? }.len()))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_more(m: *const zmq_msg_t) -> c_int {
    // SAFETY: C contract: `m` is the caller's zmq_msg_t; only read here.
    guard_unlocked(0, || Ok(c_int::from(unsafe { live(m.cast_mut())? }.more())))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_get(m: *const zmq_msg_t, property: c_int) -> c_int {
    guard_unlocked(-1, || {
        // SAFETY: C contract: `m` is the caller's zmq_msg_t; only read here.
        let msg = unsafe { live(m.cast_mut())? };
        match property {
            opt::MORE => Ok(c_int::from(msg.more())),
            opt::SHARED => Ok(c_int::from(msg.is_shared())),
            // ZMQ_SRCFD (deprecated): the descriptor of the connection the message arrived on,
            // -1 for one that did not arrive on a tcp/ipc connection (libzmq: retired_fd, no
            // errno).
            opt::SRCFD => Ok(msg.properties().and_then(|p| p.src_fd()).unwrap_or(-1)),
            _ => Err(Error::Invalid),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_set(m: *mut zmq_msg_t, _property: c_int, _value: c_int) -> c_int {
    guard_unlocked(-1, || {
        // SAFETY: C contract.
        unsafe { live(m)? };
        // libzmq has no settable message property either.
        Err(Error::Invalid)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_gets(m: *const zmq_msg_t, property: *const c_char) -> *const c_char {
    guard_unlocked(std::ptr::null(), || {
        // SAFETY: C contract: `m` is the caller's zmq_msg_t.
        let msg = unsafe { live(m.cast_mut())? };
        // SAFETY: `property` is null or NUL-terminated (C contract).
        let name = unsafe { crate::guard::c_str(property)? };
        // The value is stored NUL-terminated inside the message's shared properties, so the
        // pointer stays valid while the message lives, as libzmq promises. Unknown property,
        // or a message that did not arrive on a connection: EINVAL, as libzmq.
        let v = msg.properties().and_then(|p| p.get_with_nul(name)).ok_or(Error::Invalid)?;
        Ok(v.as_ptr().cast::<c_char>())
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_send(m: *mut zmq_msg_t, s: *mut c_void, flags: c_int) -> c_int {
    guard_unlocked(-1, || {
        // SAFETY: C contract: `s` is a socket handle, `m` the caller's zmq_msg_t.
        let (h, msg) = unsafe { (handle(s)?, live(m)?) };
        let n = msg.len();
        match h {
            Handle::Plain(sock) if sock.socket_type() != SocketType::Radio => sock.send_msg(msg, flags)?,
            // SAFETY: `m` is live (checked above).
            h => unsafe { send_draft(h, m, msg, flags)? },
        }
        Ok(len_to_int(n))
    })
}

/// `zmq_msg_send` to a RADIO (which takes the message's group) or a thread-safe socket; out
/// of line so the common path stays small.
///
/// # Safety
/// `m` is live and `msg` is the `Msg` inside it.
#[cold]
#[inline(never)]
unsafe fn send_draft(h: Handle<'_>, m: *mut zmq_msg_t, msg: &mut Msg, flags: c_int) -> Result<()> {
    // SAFETY: caller's contract.
    let group = groups::get(unsafe { (*m).group }).to_bytes();
    match h {
        Handle::Plain(sock) => sock.send_group_msg(group, msg, flags)?,
        Handle::Sync(ts) if ts.socket_type() == SocketType::Radio => ts.send_group_msg(group, msg, flags)?,
        Handle::Sync(ts) => ts.send_msg(msg, flags)?,
    }
    // SAFETY: caller's contract; a sent message is empty again, group included (libzmq).
    unsafe { (*m).group = 0 };
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_recv(m: *mut zmq_msg_t, s: *mut c_void, flags: c_int) -> c_int {
    guard_unlocked(-1, || {
        // SAFETY: C contract: `s` is a socket handle, `m` the caller's zmq_msg_t.
        let (h, msg) = unsafe { (handle(s)?, live(m)?) };
        match h {
            Handle::Plain(sock) if sock.socket_type() != SocketType::Dish => {
                sock.recv_msg(msg, flags)?;
                // SAFETY: `m` is live (checked above).
                unsafe { (*m).group = 0 };
            }
            // SAFETY: `m` is live (checked above).
            h => unsafe { recv_draft(h, m, msg, flags)? },
        }
        Ok(len_to_int(msg.len()))
    })
}

/// `zmq_msg_recv` from a DISH (which sets the message's group) or a thread-safe socket.
///
/// # Safety
/// `m` is live and `msg` is the `Msg` inside it.
#[cold]
#[inline(never)]
unsafe fn recv_draft(h: Handle<'_>, m: *mut zmq_msg_t, msg: &mut Msg, flags: c_int) -> Result<()> {
    let group = match h {
        Handle::Plain(sock) => {
            let (g, body) = sock.recv_group(flags)?;
            *msg = body;
            groups::intern(&g)?
        }
        Handle::Sync(ts) if ts.socket_type() == SocketType::Dish => {
            let (g, body) = ts.recv_group(flags)?;
            *msg = body;
            groups::intern(&g)?
        }
        Handle::Sync(ts) => {
            ts.recv_msg(msg, flags)?;
            0
        }
    };
    // SAFETY: caller's contract.
    unsafe { (*m).group = group };
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn zmq_sendmsg(s: *mut c_void, m: *mut zmq_msg_t, flags: c_int) -> c_int {
    // SAFETY: same contract as zmq_msg_send.
    unsafe { zmq_msg_send(m, s, flags) }
}

#[no_mangle]
pub unsafe extern "C" fn zmq_recvmsg(s: *mut c_void, m: *mut zmq_msg_t, flags: c_int) -> c_int {
    // SAFETY: same contract as zmq_msg_recv.
    unsafe { zmq_msg_recv(m, s, flags) }
}

// Draft: CLIENT/SERVER and PEER routing ids (carried by `oxmq::Msg`) and RADIO/DISH groups
// (carried beside it in the zmq_msg_t, see `groups`).

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_set_routing_id(m: *mut zmq_msg_t, routing_id: u32) -> c_int {
    guard_unlocked(-1, || {
        // SAFETY: C contract.
        unsafe { live(m)? }.set_routing_id(routing_id)?;
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_routing_id(m: *mut zmq_msg_t) -> u32 {
    // SAFETY: C contract.
    guard_unlocked(0, || unsafe { live(m) }.map(|m| m.routing_id()))
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_set_group(m: *mut zmq_msg_t, group: *const c_char) -> c_int {
    guard_unlocked(-1, || {
        // SAFETY: C contract.
        unsafe { live(m)? };
        non_null(group)?;
        // SAFETY: NUL-terminated string (C contract).
        let g = unsafe { std::ffi::CStr::from_ptr(group) };
        if g.to_bytes().len() > 255 {
            // ZMQ_GROUP_MAX_LENGTH
            return Err(Error::Invalid);
        }
        let idx = groups::intern(g.to_bytes())?;
        // SAFETY: live (checked above).
        unsafe { (*m).group = idx };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_msg_group(m: *mut zmq_msg_t) -> *const c_char {
    guard_unlocked(std::ptr::null(), || {
        // SAFETY: C contract.
        unsafe { live(m)? };
        // SAFETY: live (checked above).
        Ok(groups::get(unsafe { (*m).group }).as_ptr())
    })
}

/// RADIO/DISH group names, interned: a `zmq_msg_t` has 4 spare bytes, not the 256 a group
/// needs, so it holds an index here (0: no group). `zmq_msg_group` returns a pointer into
/// this table, valid for the life of the process, as libzmq's is for the life of the message.
/// Entries are never freed: the table holds the distinct groups the application set on
/// messages or received on a DISH (which only delivers groups it joined), so it is bounded by
/// the application's own group names, not by what peers send.
mod groups {
    use oxmq::{Error, Result};
    use std::collections::HashMap;
    use std::ffi::{CStr, CString};
    use std::sync::Mutex;

    struct Table {
        names: Vec<&'static CStr>,
        index: HashMap<Vec<u8>, u32>,
    }

    static TABLE: Mutex<Option<Table>> = Mutex::new(None);

    /// The index for `group` (0 for the empty group, which needs no entry).
    pub(super) fn intern(group: &[u8]) -> Result<u32> {
        if group.is_empty() {
            return Ok(0);
        }
        let c = CString::new(group).map_err(|_| Error::Invalid)?;
        let mut t = TABLE.lock().unwrap_or_else(|p| p.into_inner());
        let t = t.get_or_insert_with(|| Table { names: Vec::new(), index: HashMap::new() });
        if let Some(&i) = t.index.get(group) {
            return Ok(i);
        }
        let i = u32::try_from(t.names.len() + 1).map_err(|_| Error::NoMem)?;
        t.names.push(Box::leak(c.into_boxed_c_str()));
        t.index.insert(group.to_vec(), i);
        Ok(i)
    }

    /// The group at `i` ("" for 0 or an index never handed out).
    pub(super) fn get(i: u32) -> &'static CStr {
        if i == 0 {
            return c"";
        }
        let t = TABLE.lock().unwrap_or_else(|p| p.into_inner());
        t.as_ref().and_then(|t| t.names.get(i as usize - 1).copied()).unwrap_or(c"")
    }
}
