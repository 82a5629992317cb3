//! `zmq_proxy`, `zmq_proxy_steerable` and the deprecated `zmq_device`, over `oxmq::proxy`.
//!
//! One socket may be both frontend and backend (libzmq's echo device, `oxmq::proxy::Ends::One`);
//! any other repeated handle gives `EINVAL`.
//!
//! A proxy runs for long on borrowed sockets, and applications close those sockets from other
//! threads to stop it (pyzmq's `Context.destroy` does). So each running proxy registers its
//! handles with a stop descriptor (an eventfd) in [`RUNNING`]. `zmq_close` of a registered
//! handle marks it dead, signals the descriptor and leaves the socket alone; the proxy then
//! returns `ENOTSOCK` (as libzmq's does), and only after it has let go of the socket does it
//! drop the socket and recycle the handle's slot. Otherwise the slot would be handed to the
//! next `zmq_socket` while the proxy still worked on it: the proxy would act on, and its
//! thread's cleanup close, sockets created later, and those failed with `ENOTSOCK`.

use crate::guard::guard;
use crate::socket::{park_closed, sock_mut};
use oxmq::proxy::Ends;
use oxmq::{Error, Result, Socket};
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// A handle in use by a running proxy.
struct Running {
    handle: usize,
    /// The proxy's eventfd: written when `handle` is closed.
    stop: c_int,
    /// `zmq_close` was called on `handle` while the proxy ran.
    closed: bool,
}

/// Handles of the running proxies (proxies start and stop rarely: one lock is fine).
static RUNNING: Mutex<Vec<Running>> = Mutex::new(Vec::new());

fn running() -> std::sync::MutexGuard<'static, Vec<Running>> {
    RUNNING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Called by `zmq_close` once it has marked `handle` dead: true if a proxy is using the
/// socket, which is then told to stop and will drop the socket itself when it returns.
pub(crate) fn close_in_use(handle: usize) -> bool {
    let mut r = running();
    let Some(e) = r.iter_mut().find(|e| e.handle == handle) else { return false };
    e.closed = true;
    let one: u64 = 1;
    // SAFETY: `e.stop` is the registering proxy's open eventfd: it is closed only after its
    // entries are removed under this same lock. Writing 8 bytes from a valid u64.
    unsafe { libc::write(e.stop, (&one as *const u64).cast(), 8) };
    true
}

/// The registration of one proxy call: removed on drop, which also drops the sockets closed
/// meanwhile and closes the eventfd.
struct Registration {
    stop: c_int,
}

impl Registration {
    /// Registers the distinct non-null `handles`; `EINVAL` if one is already in a running
    /// proxy, `ENOTSOCK` if one is closed.
    fn new(handles: &[*mut c_void]) -> Result<Registration> {
        // SAFETY: plain eventfd(2) call.
        let stop = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if stop < 0 {
            return Err(Error::from_errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EMFILE)));
        }
        let reg = Registration { stop };
        let mut r = running();
        for (i, &h) in handles.iter().enumerate() {
            if h.is_null() || handles[..i].contains(&h) {
                continue;
            }
            if r.iter().any(|e| e.handle == h as usize) {
                drop(r);
                return Err(Error::Invalid);
            }
            // SAFETY: C contract: handles come from `zmq_socket`; this only checks the tag.
            if let Err(e) = unsafe { crate::socket::handle(h) } {
                drop(r);
                return Err(e);
            }
            r.push(Running { handle: h as usize, stop, closed: false });
        }
        drop(r);
        Ok(reg)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut closed = Vec::new();
        running().retain(|e| {
            if e.stop != self.stop {
                return true;
            }
            if e.closed {
                closed.push(e.handle);
            }
            false
        });
        for h in closed {
            // SAFETY: the handle was closed (tag dead) while this proxy ran, and the proxy has
            // returned: nothing refers to its socket any more.
            unsafe { park_closed(h as *mut c_void) };
        }
        // SAFETY: our eventfd, no longer reachable from `RUNNING`.
        unsafe { libc::close(self.stop) };
    }
}

/// Runs the proxy over the handles (capture and control may be null; frontend may equal
/// backend). Distinct handles otherwise, or `EINVAL`.
///
/// # Safety
/// Non-null handles come from `zmq_socket` and are used only by this thread for the call.
unsafe fn run(frontend: *mut c_void, backend: *mut c_void, capture: *mut c_void, control: *mut c_void) -> Result<()> {
    let handles = [frontend, backend, capture, control];
    for (i, a) in handles.iter().enumerate() {
        let same_ends = i == 0 && *a == backend;
        if !a.is_null() && handles[i + 1..].iter().enumerate().any(|(j, b)| b == a && !(same_ends && j == 0)) {
            return Err(Error::Invalid);
        }
    }
    let reg = Registration::new(&handles)?;
    let r = (|| {
        // SAFETY: distinct handles (checked above; frontend and backend may be one handle,
        // then borrowed once), so the `&mut`s do not alias; caller's contract for the rest.
        unsafe {
            let opt = |p: *mut c_void| if p.is_null() { Ok(None) } else { sock_mut(p).map(Some) };
            let ends = if frontend == backend {
                Ends::One(sock_mut(frontend)?)
            } else {
                Ends::Two(sock_mut(frontend)?, sock_mut(backend)?)
            };
            let (cap, ctl): (Option<&mut Socket>, Option<&mut Socket>) = (opt(capture)?, opt(control)?);
            oxmq::proxy::run(ends, cap, ctl, Some(reg.stop))
        }
    })();
    // The borrows above have ended: unregister, and drop what was closed meanwhile.
    drop(reg);
    r
}

#[no_mangle]
pub unsafe extern "C" fn zmq_proxy(frontend: *mut c_void, backend: *mut c_void, capture: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: socket handles used by this thread while the proxy runs.
        unsafe { run(frontend, backend, capture, std::ptr::null_mut())? };
        // Only a terminating error ends a plain proxy.
        Err(Error::Term)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_proxy_steerable(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
    control: *mut c_void,
) -> c_int {
    guard(-1, || {
        // SAFETY: C contract: socket handles used by this thread while the proxy runs.
        unsafe { run(frontend, backend, capture, control)? };
        Ok(0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn zmq_device(_kind: c_int, frontend: *mut c_void, backend: *mut c_void) -> c_int {
    // SAFETY: same contract as zmq_proxy.
    unsafe { zmq_proxy(frontend, backend, std::ptr::null_mut()) }
}
