//! Fast calls for the methods a messaging loop calls per message: `Socket.send` and
//! `Socket.recv`, and the wiring API's `Wiring.send` and `Wiring.receive`.
//!
//! The wheel targets the stable ABI from CPython 3.9, where a native method can only take its
//! arguments as a tuple and a dict (`METH_VARARGS | METH_KEYWORDS`): each `send(data)` then
//! builds and frees a tuple and goes through the generic call path, which costs about as many
//! instructions as the send itself. From 3.10 the vectorcall convention (`METH_FASTCALL`) is part
//! of the stable ABI too, so on 3.10+ we install `send`/`recv` as `METH_FASTCALL` method
//! descriptors that read their arguments straight from the interpreter's stack.
//!
//! `recv()`, `recv(flags)`, `send(data)` and `send(data, flags)` take the shortest path; the
//! other shapes of `flags`, `copy` and `track`, positional or keyword (`recv(copy=False)`,
//! `send(frame, copy=False)`), are parsed here too, since building a tuple and a dict for the
//! ordinary method tripled the cost of such a call. Anything else (an unknown keyword, too
//! many arguments, one given twice) is handed to the ordinary PyO3 methods, so behaviour and
//! errors are identical on both paths.

use crate::socket::{done_tracker, Socket};
use crate::wiring::Wiring;
use pyo3::exceptions::{PySystemError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::Borrowed;
use std::ffi::c_int;
use std::panic::AssertUnwindSafe;
use std::ptr::null_mut;
use std::sync::OnceLock;

/// The `METH_FASTCALL | METH_KEYWORDS` signature (`PyCFunctionFastWithKeywords`).
type FastFn = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    ffi::Py_ssize_t,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// CPython's documented flag value; PyO3 only names it when compiling for 3.10+, but our wheel
/// targets 3.9 and decides at run time.
const METH_FASTCALL: c_int = 0x0080;

/// The ordinary PyO3 methods `(recv, send)`, for calls the fast path does not take.
static SLOW: OnceLock<(Py<PyAny>, Py<PyAny>)> = OnceLock::new();

/// The ordinary PyO3 methods `(receive, send)` of `Wiring`, for calls the fast path does not take.
static WIRING_SLOW: OnceLock<(Py<PyAny>, Py<PyAny>)> = OnceLock::new();

/// The method definitions must outlive every descriptor made from them: created once, never freed.
struct Defs([ffi::PyMethodDef; 2]);
// SAFETY: the definitions are immutable after creation and only hold pointers to static data.
unsafe impl Send for Defs {}
unsafe impl Sync for Defs {}
static DEFS: OnceLock<Defs> = OnceLock::new();
static WIRING_DEFS: OnceLock<Defs> = OnceLock::new();

fn def(name: &'static std::ffi::CStr, f: FastFn, doc: &'static std::ffi::CStr) -> ffi::PyMethodDef {
    ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            // SAFETY: both are plain C function pointers; CPython calls this one with the
            // FASTCALL signature because `ml_flags` says METH_FASTCALL | METH_KEYWORDS.
            PyCFunctionWithKeywords: unsafe { std::mem::transmute::<FastFn, ffi::PyCFunctionWithKeywords>(f) },
        },
        ml_flags: METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: doc.as_ptr(),
    }
}

/// Installs the fast `send`/`recv` on `cls` (a subclass of `_oxmq.Socket`). Returns False, and
/// changes nothing, on CPython 3.9, where METH_FASTCALL is not in the stable ABI.
#[pyfunction]
pub fn _install_fast_methods(py: Python<'_>, cls: &Bound<'_, PyType>) -> PyResult<bool> {
    install(cls, py.get_type::<Socket>(), &SLOW, &DEFS, || {
        Defs([
            def(c"recv", recv_fast, c"recv(flags=0, copy=True, track=False)\n--\n\nReceives one frame."),
            def(c"send", send_fast, c"send(data, flags=0, copy=True, track=False)\n--\n\nSends one frame."),
        ])
    })
}

/// Installs the fast `receive`/`send` on `cls` (a subclass of `_oxmq.Wiring`), as
/// [`_install_fast_methods`] does for sockets.
#[pyfunction]
pub fn _install_wiring_fast_methods(py: Python<'_>, cls: &Bound<'_, PyType>) -> PyResult<bool> {
    install(cls, py.get_type::<Wiring>(), &WIRING_SLOW, &WIRING_DEFS, || {
        Defs([
            def(
                c"receive",
                wiring_receive_fast,
                c"receive(timeout=None)\n--\n\nThe next message from any queue of the handle, as bytes.",
            ),
            def(c"send", wiring_send_fast, c"send(eid, message)\n--\n\nSends a message through exchange eid."),
        ])
    })
}

/// Sets a method descriptor of `base` for each definition on `cls`, keeping `base`'s own
/// methods of those names in `slow` (in the definitions' order) for the calls the fast ones
/// hand over. Nothing on CPython 3.9 (False).
fn install(
    cls: &Bound<'_, PyType>,
    base: Bound<'_, PyType>,
    slow: &OnceLock<(Py<PyAny>, Py<PyAny>)>,
    defs: &'static OnceLock<Defs>,
    make: fn() -> Defs,
) -> PyResult<bool> {
    let py = cls.py();
    if py.version_info() < (3, 10) {
        return Ok(false);
    }
    if !cls.is_subclass(&base)? {
        return Err(PyTypeError::new_err(format!("expected a subclass of _oxmq.{}", base.name()?)));
    }
    let defs = defs.get_or_init(make);
    // SAFETY: every `ml_name` is one of the static C strings given to `def`.
    let name = |d: &ffi::PyMethodDef| unsafe { std::ffi::CStr::from_ptr(d.ml_name) }.to_str().expect("ASCII name");
    let _ = slow.set((base.getattr(name(&defs.0[0]))?.unbind(), base.getattr(name(&defs.0[1]))?.unbind()));
    for d in &defs.0 {
        // SAFETY: `d` lives forever (a static) and `base` is a valid type object. The
        // descriptor checks that `self` is an instance of `base` before calling us.
        let descr =
            unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyDescr_NewMethod(base.as_type_ptr(), d as *const _ as *mut _))? };
        cls.setattr(name(d), descr)?;
    }
    Ok(true)
}

/// Runs `f` with the GIL (CPython holds it when calling a method), turning errors and panics
/// into a raised exception and a NULL return, as the C API expects.
///
/// SAFETY: call only from a CPython method call, with the GIL held.
unsafe fn guard(f: impl FnOnce(Python<'_>) -> PyResult<*mut ffi::PyObject>) -> *mut ffi::PyObject {
    // SAFETY: the caller guarantees the GIL is held.
    let py = unsafe { Python::assume_attached() };
    // The error is raised inside the closure, so what crosses `catch_unwind` is one pointer,
    // not a whole `PyResult` moved in and out of its return slot on every call.
    let call = || match f(py) {
        Ok(p) => p,
        Err(e) => {
            e.restore(py);
            null_mut()
        }
    };
    match std::panic::catch_unwind(AssertUnwindSafe(call)) {
        Ok(p) => p,
        Err(_) => {
            PySystemError::new_err("panic inside oxmq").restore(py);
            null_mut()
        }
    }
}

/// Forwards a call the fast path does not handle to the ordinary method.
///
/// SAFETY: `args` holds `nargs` positional arguments followed by one value per name in
/// `kwnames` (a tuple of str, or NULL), all borrowed, as METH_FASTCALL | METH_KEYWORDS passes them.
unsafe fn slow(
    py: Python<'_>,
    method: &Py<PyAny>,
    slf: &Bound<'_, PyAny>,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<*mut ffi::PyObject> {
    let arg = |i: isize| unsafe { Bound::from_borrowed_ptr(py, *args.offset(i)) };
    let mut pos = vec![slf.clone()];
    pos.extend((0..nargs).map(arg));
    let kwargs = PyDict::new(py);
    if !kwnames.is_null() {
        let names = unsafe { Bound::from_borrowed_ptr(py, kwnames) };
        let names = names.cast::<PyTuple>()?;
        for (i, name) in names.iter().enumerate() {
            kwargs.set_item(name, arg(nargs + i as isize))?;
        }
    }
    Ok(method.bind(py).call(PyTuple::new(py, pos)?, Some(&kwargs))?.into_ptr())
}

unsafe extern "C" fn recv_fast(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls us with the GIL held and the FASTCALL argument layout.
    unsafe {
        guard(|py| {
            if kwnames.is_null() && nargs <= 1 {
                // recv() and recv(flags): the messaging loop's call.
                let flags = if nargs == 1 { Bound::from_borrowed_ptr(py, *args).extract::<i32>()? } else { 0 };
                return socket(py, slf).recv_bytes(py, flags);
            }
            let Some([flags, copy, track]) = options(py, args, nargs, kwnames, 0)? else {
                let slf = Bound::from_borrowed_ptr(py, slf);
                return slow(py, &SLOW.get().expect("installed").0, &slf, args, nargs, kwnames);
            };
            let flags = flags.map_or(Ok(0), |f| f.extract::<i32>())?;
            let copy = copy.map_or(Ok(true), |c| c.extract::<bool>())?;
            // Checked as the ordinary method does, then not needed (nothing to track on recv).
            track.map_or(Ok(false), |t| t.extract::<bool>())?;
            if copy {
                return socket(py, slf).recv_bytes(py, flags);
            }
            Ok(socket(py, slf).recv_frame(py, flags)?.into_ptr())
        })
    }
}

unsafe extern "C" fn send_fast(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls us with the GIL held and the FASTCALL argument layout.
    unsafe {
        guard(|py| {
            if kwnames.is_null() && (nargs == 1 || nargs == 2) {
                // send(data) and send(data, flags): the messaging loop's call.
                let data = Borrowed::from_ptr(py, *args);
                let flags = if nargs == 2 { Bound::from_borrowed_ptr(py, *args.offset(1)).extract::<i32>()? } else { 0 };
                socket(py, slf).send_one(py, &data, flags)?;
                return Ok(py.None().into_ptr());
            }
            let opts = if nargs >= 1 { options(py, args, nargs, kwnames, 1)? } else { None };
            let Some([flags, copy, track]) = opts else {
                let slf = Bound::from_borrowed_ptr(py, slf);
                return slow(py, &SLOW.get().expect("installed").1, &slf, args, nargs, kwnames);
            };
            let data = Borrowed::from_ptr(py, *args);
            let flags = flags.map_or(Ok(0), |f| f.extract::<i32>())?;
            // `copy` is accepted and checked as the ordinary method does, then not needed:
            // bytes are copied or shared by size, mutable buffers always copied.
            copy.map_or(Ok(true), |c| c.extract::<bool>())?;
            let track = track.map_or(Ok(false), |t| t.extract::<bool>())?;
            socket(py, slf).send_one(py, &data, flags)?;
            if track {
                return Ok(done_tracker(py)?.into_ptr());
            }
            Ok(py.None().into_ptr())
        })
    }
}

unsafe extern "C" fn wiring_receive_fast(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls us with the GIL held and the FASTCALL argument layout.
    unsafe {
        guard(|py| {
            let slf = Bound::from_borrowed_ptr(py, slf);
            if !kwnames.is_null() || nargs > 1 {
                return slow(py, &WIRING_SLOW.get().expect("installed").0, &slf, args, nargs, kwnames);
            }
            let timeout = if nargs == 1 { Bound::from_borrowed_ptr(py, *args).extract::<Option<f64>>()? } else { None };
            Ok(wiring(py, slf.as_ptr()).receive_impl(py, timeout)?.into_ptr())
        })
    }
}

unsafe extern "C" fn wiring_send_fast(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls us with the GIL held and the FASTCALL argument layout.
    unsafe {
        guard(|py| {
            let slf = Bound::from_borrowed_ptr(py, slf);
            if !kwnames.is_null() || nargs != 2 {
                return slow(py, &WIRING_SLOW.get().expect("installed").1, &slf, args, nargs, kwnames);
            }
            let eid = Bound::from_borrowed_ptr(py, *args).extract::<usize>()?;
            let message = Bound::from_borrowed_ptr(py, *args.offset(1));
            wiring(py, slf.as_ptr()).send_impl(py, eid, &message)?;
            Ok(py.None().into_ptr())
        })
    }
}

/// The `flags`, `copy` and `track` arguments of a call whose first `first` positional
/// arguments come before them (recv: 0, send: 1), by position or by keyword; None (take the
/// ordinary method, which raises what PyO3 raises) for any other shape: more positionals,
/// another keyword, or one given twice.
///
/// SAFETY: the FASTCALL layout, as for [`slow`].
unsafe fn options<'py>(
    py: Python<'py>,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
    first: ffi::Py_ssize_t,
) -> PyResult<Option<[Option<Borrowed<'py, 'py, PyAny>>; 3]>> {
    const NAMES: [&std::ffi::CStr; 3] = [c"flags", c"copy", c"track"];
    let mut out = [None, None, None];
    if nargs - first > 3 {
        return Ok(None);
    }
    for i in first..nargs {
        // SAFETY: i < nargs.
        out[(i - first) as usize] = Some(unsafe { Borrowed::from_ptr(py, *args.offset(i)) });
    }
    if !kwnames.is_null() {
        // SAFETY: kwnames is a tuple of str, one per value after the positionals.
        let nkw = unsafe { ffi::PyTuple_Size(kwnames) };
        for j in 0..nkw {
            let name = unsafe { ffi::PyTuple_GetItem(kwnames, j) };
            let Some(k) = NAMES.iter().position(|n| unsafe { ffi::PyUnicode_CompareWithASCIIString(name, n.as_ptr()) } == 0)
            else {
                return Ok(None);
            };
            if out[k].is_some() {
                return Ok(None);
            }
            out[k] = Some(unsafe { Borrowed::from_ptr(py, *args.offset(nargs + j)) });
        }
    }
    Ok(Some(out))
}

/// The `_oxmq.Socket` that `slf` is, without a type check.
///
/// SAFETY: `slf` must be the `self` of a call through one of our method descriptors: CPython
/// has then checked it is an instance of `_oxmq.Socket` (`descr_check`, both when the method
/// is called on the instance and when it is bound first), so the check PyO3's `cast` would
/// repeat (a `PyType_IsSubtype` walk, as `oxmq.Socket` is a subclass) is skipped.
#[inline(always)]
unsafe fn socket<'a>(py: Python<'a>, slf: *mut ffi::PyObject) -> &'a Socket {
    // SAFETY: see above; the object outlives this call, which borrows it from CPython.
    unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<Socket>().get() }
}

/// The `_oxmq.Wiring` that `slf` is, without a type check: as [`socket`].
///
/// SAFETY: as for [`socket`], with `_oxmq.Wiring` for `_oxmq.Socket`.
#[inline(always)]
unsafe fn wiring<'a>(py: Python<'a>, slf: *mut ffi::PyObject) -> &'a Wiring {
    // SAFETY: see above.
    unsafe { Borrowed::from_ptr(py, slf).cast_unchecked::<Wiring>().get() }
}
