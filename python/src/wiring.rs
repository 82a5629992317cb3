//! `oxmq._oxmq.Wiring`: the wiring API (`oxmq_wiring::Wiring`) for `oxmq/wiring.py`, which
//! gives it the seed's `ZMQ(hostname)` shape. Errors become `ZMQError`s with the errno the C
//! front end reports; waits release the GIL and run in slices so Ctrl-C gets through.

use crate::busy::{BusyCell, BusyGuard};
use crate::error::errno_err;
use crate::socket::{copy_msg, msg_from_any, small_bytes};
use oxmq::Msg;
use oxmq_wiring::{Scope, Style, WiringError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::time::{Duration, Instant};

const SLICE: Duration = Duration::from_millis(100);
const BUSY_TEXT: &str = "Wiring handle is in use by another thread (use one from one thread at a time)";

fn err(py: Python<'_>, e: WiringError) -> PyErr {
    errno_err(py, e.errno(), Some(&e.to_string()))
}

fn scope(py: Python<'_>, v: i32) -> PyResult<Scope> {
    Scope::from_raw(v).ok_or_else(|| err(py, WiringError::Invalid(format!("unknown scope {v}"))))
}

/// What a `Wiring` holds: the handle (None once closed) and the message `receive` reuses.
pub(crate) struct State {
    w: Option<oxmq_wiring::Wiring>,
    msg: Msg,
}

/// One wiring handle, used by one thread at a time (a second thread inside a call at the same
/// time gets ZMQError(EFSM), as with a socket).
/// `oxmq.wiring.ZMQ` subclasses it: `send` and `receive` keep the seed's signatures here, so a
/// call from Python reaches native code without a Python frame in between.
#[pyclass(subclass, frozen, module = "oxmq._oxmq", name = "Wiring")]
pub struct Wiring {
    inner: BusyCell<State>,
}

impl Wiring {
    #[inline]
    fn lock(&self, py: Python<'_>) -> PyResult<BusyGuard<'_, State>> {
        self.inner.try_lock().ok_or_else(|| errno_err(py, oxmq::error::EFSM, Some(BUSY_TEXT)))
    }

    /// Runs `f` on the open handle (ETERM once closed).
    fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&mut oxmq_wiring::Wiring) -> PyResult<R>) -> PyResult<R> {
        let mut g = self.lock(py)?;
        let w = g.w.as_mut().ok_or_else(|| err(py, WiringError::Terminated))?;
        f(w)
    }

    /// Sends `message` through exchange `eid`: `bytes` (shared from 1 KiB on, as a socket's
    /// send does), a `Frame`, any other buffer (copied), or `str` (as UTF-8).
    pub(crate) fn send_impl(&self, py: Python<'_>, eid: usize, message: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut m = if let Some(b) = small_bytes(message) {
            copy_msg(b)
        } else if let Ok(t) = message.cast::<PyString>() {
            copy_msg(t.to_cow()?.as_bytes())
        } else {
            msg_from_any(message)?
        };
        self.with(py, |w| {
            // Most sends find room at once: try without giving up the GIL; wait (up to the
            // wiring's send timeout) only with it released, so other threads run meanwhile.
            match w.try_send_msg(eid, &mut m) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return Err(err(py, e)),
            }
            py.detach(|| w.send_msg(eid, &mut m)).map_err(|e| err(py, e))
        })
    }

    /// The next message from any queue, as bytes: waits forever, or `timeout` seconds (then
    /// raises `Again`).
    pub(crate) fn receive_impl<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyBytes>> {
        let timeout_ms = timeout.map_or(-1, |t| (t * 1000.0) as i64);
        let deadline = (timeout_ms >= 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
        let mut g = self.lock(py)?;
        let State { w, msg } = &mut *g;
        let w = w.as_mut().ok_or_else(|| err(py, WiringError::Terminated))?;
        // Something queued: take it without giving up the GIL.
        match w.receive_into(msg, Some(Duration::ZERO)) {
            Ok(()) => return Ok(PyBytes::new(py, msg.as_slice())),
            Err(WiringError::Timeout) if timeout_ms != 0 => {}
            Err(e) => return Err(err(py, e)),
        }
        loop {
            let slice = match deadline {
                None => SLICE,
                Some(d) => d.saturating_duration_since(Instant::now()).min(SLICE),
            };
            match py.detach(|| w.receive_into(msg, Some(slice))) {
                Ok(()) => return Ok(PyBytes::new(py, msg.as_slice())),
                Err(WiringError::Timeout) if deadline.is_none_or(|d| Instant::now() < d) => py.check_signals()?,
                Err(e) => return Err(err(py, e)),
            }
        }
    }
}

#[pymethods]
impl Wiring {
    #[new]
    #[pyo3(signature = (hostname = ""))]
    fn new(py: Python<'_>, hostname: &str) -> PyResult<Self> {
        let host = hostname.to_string();
        let w = py.detach(move || oxmq_wiring::Wiring::new(&host)).map_err(|e| err(py, e))?;
        Ok(Wiring { inner: BusyCell::new(State { w: Some(w), msg: Msg::default() }) })
    }

    fn create_exchange(&self, py: Python<'_>, name: &str, scope_: i32, location: &str, style: i32) -> PyResult<usize> {
        let sc = scope(py, scope_)?;
        let st = match style {
            0 => Style::FanOut,
            1 => Style::LoadBalance,
            _ => return Err(err(py, WiringError::Invalid(format!("unknown style {style}")))),
        };
        self.with(py, |w| py.detach(|| w.create_exchange_with(name, sc, location, st)).map_err(|e| err(py, e)))
    }

    fn create_queue(&self, py: Python<'_>, name: &str, scope_: i32, location: &str) -> PyResult<usize> {
        let sc = scope(py, scope_)?;
        self.with(py, |w| py.detach(|| w.create_queue(name, sc, location)).map_err(|e| err(py, e)))
    }

    fn bind(&self, py: Python<'_>, exchange: &str, queue: &str) -> PyResult<()> {
        self.with(py, |w| py.detach(|| w.bind(exchange, queue)).map_err(|e| err(py, e)))
    }

    /// Sends `message` (bytes-like, copied; `str` as UTF-8) through exchange `eid`.
    fn send(&self, py: Python<'_>, eid: usize, message: &Bound<'_, PyAny>) -> PyResult<()> {
        self.send_impl(py, eid, message)
    }

    /// The next message from any queue, as bytes: waits forever, or `timeout` seconds (then
    /// raises `Again`).
    #[pyo3(signature = (timeout = None))]
    fn receive<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyBytes>> {
        self.receive_impl(py, timeout)
    }

    /// `(kind, endpoint, style)` of a global name.
    fn lookup(&self, py: Python<'_>, name: &str) -> PyResult<(String, String, String)> {
        let r = self.with(py, |w| py.detach(move || w.lookup(name)).map_err(|e| err(py, e)))?;
        Ok((r.kind.as_str().into(), r.endpoint, r.style.as_str().into()))
    }

    /// Withdraws the handle's names and closes it (waits up to the linger to deliver).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut g = self.lock(py)?;
        if let Some(w) = g.w.take() {
            py.detach(move || drop(w));
        }
        Ok(())
    }

    /// True once closed (False while another thread is inside a call on it).
    #[getter]
    fn closed(&self) -> bool {
        self.inner.try_lock().is_some_and(|g| g.w.is_none())
    }
}
