//! oxmq errors become Python exceptions here, and only here.
//!
//! The exception classes are defined in Python (`oxmq/error.py`, pyzmq's hierarchy:
//! `ZMQBaseError` → `ZMQError` → `Again`, `ContextTerminated`, `InterruptedSystemCall`) and
//! registered at import, so `except zmq.Again` works whichever side raised it. Before
//! registration (importing `_oxmq` alone) errors fall back to `OSError(errno, text)`.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

struct Classes {
    zmq_error: Py<PyType>,
    again: Py<PyType>,
    term: Py<PyType>,
    intr: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

/// errno for "socket used from two threads at once" — reported as EFSM with its own text.
pub const EBUSY_TEXT: &str = "Socket is in use by another thread (oxmq sockets are not thread-safe)";

/// Registers the exception classes (called once by `oxmq/__init__.py`).
#[pyfunction]
pub fn _set_error_classes(
    zmq_error: Bound<'_, PyType>,
    again: Bound<'_, PyType>,
    term: Bound<'_, PyType>,
    intr: Bound<'_, PyType>,
) {
    let py = zmq_error.py();
    let _ = CLASSES
        .set(py, Classes { zmq_error: zmq_error.unbind(), again: again.unbind(), term: term.unbind(), intr: intr.unbind() });
}

/// `zmq.strerror(errno)`.
#[pyfunction]
pub fn strerror(errnum: i32) -> String {
    oxmq::error::strerror(errnum)
}

/// The exception for an oxmq error.
pub fn to_py(py: Python<'_>, e: oxmq::Error) -> PyErr {
    errno_err(py, e.errno(), None)
}

/// A ZMQError (or subclass) for `errno`, with an optional message replacing strerror.
pub fn errno_err(py: Python<'_>, errno: i32, msg: Option<&str>) -> PyErr {
    let Some(c) = CLASSES.get(py) else {
        let text = msg.map(str::to_string).unwrap_or_else(|| oxmq::error::strerror(errno));
        return pyo3::exceptions::PyOSError::new_err((errno, text));
    };
    let cls = match errno {
        libc::EAGAIN => &c.again,
        oxmq::error::ETERM => &c.term,
        libc::EINTR => &c.intr,
        _ => &c.zmq_error,
    };
    let r = match msg {
        Some(m) => cls.bind(py).call1((errno, m)),
        None => cls.bind(py).call1((errno,)),
    };
    match r {
        Ok(v) => PyErr::from_value(v),
        Err(e) => e,
    }
}

/// Shorthand: map an oxmq result into a PyResult.
pub trait IntoPy<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPy<T> for oxmq::Result<T> {
    #[inline]
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
