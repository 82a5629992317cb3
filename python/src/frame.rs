//! `Frame`: one received (or to-be-sent) message frame that exposes its body through the buffer
//! protocol without copying.
//!
//! Why raw FFI here: the package is an abi3 wheel for CPython 3.9+, and PyO3 only implements
//! `__getbuffer__` for the limited API from 3.11 on (before that `Py_buffer` was not part of the
//! limited API headers). The buffer *slots* have worked with `PyType_FromSpec` since CPython 3.9
//! (bpo-40724) and `Py_buffer`'s layout has not changed since 3.0, so this module declares the
//! struct and the three buffer functions itself and builds the type by hand. It is the only
//! module with `unsafe` besides the buffer reads in `bufread`.
//!
//! Contract: a `Frame` owns a [`Msg`] (a cheap clone: inline for small bodies, a reference-
//! counted `Bytes` for large ones), so a view of it stays valid after the socket and context
//! that produced it are gone. The body is exported read-only: it may be shared with other
//! frames (PUB fan-out) or with the receive buffer it was decoded from.

use bytes::Bytes;
use oxmq::Msg;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use std::ffi::{c_char, c_int, c_void};
use std::mem::ManuallyDrop;
use std::ptr;

/// CPython's `Py_buffer` (Include/pybuffer.h; unchanged since 3.0).
#[repr(C)]
pub struct PyBuffer {
    pub buf: *mut c_void,
    pub obj: *mut ffi::PyObject,
    pub len: ffi::Py_ssize_t,
    pub itemsize: ffi::Py_ssize_t,
    pub readonly: c_int,
    pub ndim: c_int,
    pub format: *mut c_char,
    pub shape: *mut ffi::Py_ssize_t,
    pub strides: *mut ffi::Py_ssize_t,
    pub suboffsets: *mut ffi::Py_ssize_t,
    pub internal: *mut c_void,
}

pub const PYBUF_SIMPLE: c_int = 0;
pub const PYBUF_WRITABLE: c_int = 0x0001;

extern "C" {
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut PyBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut PyBuffer);
    fn PyBuffer_FillInfo(
        view: *mut PyBuffer,
        obj: *mut ffi::PyObject,
        buf: *mut c_void,
        len: ffi::Py_ssize_t,
        readonly: c_int,
        flags: c_int,
    ) -> c_int;
}

/// A held buffer export of some Python object; released on drop (the GIL must be held, which
/// the `'py` lifetime guarantees).
pub struct BufferView<'py> {
    view: PyBuffer,
    _py: Python<'py>,
}

impl<'py> BufferView<'py> {
    /// Gets a contiguous byte view of `obj` (`writable`: the caller will write into it).
    pub fn get(obj: &Bound<'py, PyAny>, writable: bool) -> PyResult<BufferView<'py>> {
        let mut view = std::mem::MaybeUninit::<PyBuffer>::zeroed();
        let flags = if writable { PYBUF_WRITABLE } else { PYBUF_SIMPLE };
        // SAFETY: `obj` is a live object (the GIL is held); `view` points to writable storage
        // of the right layout. On failure CPython sets an exception and leaves nothing to release.
        let rc = unsafe { PyObject_GetBuffer(obj.as_ptr(), view.as_mut_ptr(), flags) };
        if rc != 0 {
            return Err(PyErr::fetch(obj.py()));
        }
        // SAFETY: PyObject_GetBuffer succeeded, so it filled the struct.
        Ok(BufferView { view: unsafe { view.assume_init() }, _py: obj.py() })
    }

    pub fn as_slice(&self) -> &[u8] {
        if self.view.len <= 0 || self.view.buf.is_null() {
            return &[];
        }
        // SAFETY: PYBUF_SIMPLE/WRITABLE request a C-contiguous buffer of `len` bytes at `buf`,
        // valid until the view is released (in Drop).
        unsafe { std::slice::from_raw_parts(self.view.buf as *const u8, self.view.len as usize) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        if self.view.len <= 0 || self.view.buf.is_null() || self.view.readonly != 0 {
            return &mut [];
        }
        // SAFETY: as above, and the exporter granted a writable view (readonly == 0).
        unsafe { std::slice::from_raw_parts_mut(self.view.buf as *mut u8, self.view.len as usize) }
    }
}

impl Drop for BufferView<'_> {
    fn drop(&mut self) {
        // SAFETY: the view was filled by a successful PyObject_GetBuffer and is released once;
        // the GIL is held for `'py`.
        unsafe { PyBuffer_Release(&mut self.view) };
    }
}

/// The instance layout of the base `Frame` type.
#[repr(C)]
struct FrameObject {
    ob_base: ffi::PyObject,
    msg: ManuallyDrop<Msg>,
    /// `frame.more` (a `T_BOOL` member reads one `char`).
    more: c_char,
    /// RADIO/DISH: the group the frame was received in, or is to be sent to (`Frame.group`).
    /// A `Msg` has none: groups travel as a frame of their own (`oxmq::Socket::send_group`).
    group: ManuallyDrop<Option<Bytes>>,
}

/// The base type, created once at module init; `FRAME_CLASS` is the class `recv(copy=False)`
/// instantiates (the Python-level subclass with the convenience methods, once registered).
static BASE_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static FRAME_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

unsafe extern "C" fn frame_dealloc(obj: *mut ffi::PyObject) {
    let tp = ffi::Py_TYPE(obj);
    // SAFETY: `obj` is a FrameObject (or a subclass instance whose layout starts with one)
    // whose `msg` was initialised by `alloc_frame`; it is dropped exactly once, here.
    ManuallyDrop::drop(&mut (*(obj as *mut FrameObject)).msg);
    ManuallyDrop::drop(&mut (*(obj as *mut FrameObject)).group);
    let free = ffi::PyType_GetSlot(tp, ffi::Py_tp_free);
    if !free.is_null() {
        let free: ffi::freefunc = std::mem::transmute(free);
        free(obj as *mut c_void);
    }
    // Instances of heap types hold a reference to their type.
    ffi::Py_DECREF(tp as *mut ffi::PyObject);
}

unsafe extern "C" fn frame_getbuffer(obj: *mut ffi::PyObject, view: *mut PyBuffer, flags: c_int) -> c_int {
    // SAFETY: called by CPython with a live FrameObject; the body pointer stays valid while the
    // object lives, and PyBuffer_FillInfo takes a reference to `obj` for the view.
    let f = &*(obj as *const FrameObject);
    let body = f.msg.as_slice();
    PyBuffer_FillInfo(view, obj, body.as_ptr() as *mut c_void, body.len() as ffi::Py_ssize_t, 1, flags)
}

unsafe extern "C" fn frame_new(
    subtype: *mut ffi::PyTypeObject,
    args: *mut ffi::PyObject,
    kwargs: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls tp_new with the GIL held and valid (possibly NULL kwargs) objects.
    let py = Python::assume_attached();
    let result = (|| -> PyResult<*mut ffi::PyObject> {
        let args = Bound::from_borrowed_ptr(py, args);
        let mut data: Option<Bound<'_, PyAny>> = None;
        if let Ok(t) = args.cast::<pyo3::types::PyTuple>() {
            if !t.is_empty() {
                data = Some(t.get_item(0)?);
            }
        }
        if data.is_none() && !kwargs.is_null() {
            let kw = Bound::from_borrowed_ptr(py, kwargs);
            if let Ok(d) = kw.cast::<pyo3::types::PyDict>() {
                data = d.get_item("data")?;
            }
        }
        let (msg, group) = match data {
            Some(d) if !d.is_none() => (crate::socket::msg_from_obj(&d)?, frame_group(&d)),
            _ => (Msg::new(), None),
        };
        let p = alloc_frame_raw(py, subtype, msg, false)?;
        if group.is_some() {
            *(*(p as *mut FrameObject)).group = group;
        }
        Ok(p)
    })();
    match result {
        Ok(p) => p,
        Err(e) => {
            e.restore(py);
            ptr::null_mut()
        }
    }
}

unsafe fn alloc_frame_raw(py: Python<'_>, tp: *mut ffi::PyTypeObject, msg: Msg, more: bool) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: `tp` is the base type or a subclass of it (heap types), so the allocation has
    // room for a FrameObject; the fields are written before anyone can see the object.
    let obj = ffi::PyType_GenericAlloc(tp, 0);
    if obj.is_null() {
        return Err(PyErr::fetch(py));
    }
    let f = obj as *mut FrameObject;
    ptr::write(&mut (*f).msg, ManuallyDrop::new(msg));
    (*f).more = more as c_char;
    ptr::write(&mut (*f).group, ManuallyDrop::new(None));
    Ok(obj)
}

/// Wraps a received message in a new `Frame`.
pub fn new_frame(py: Python<'_>, msg: Msg, more: bool) -> PyResult<Bound<'_, PyAny>> {
    new_frame_in(py, msg, more, None)
}

/// [`new_frame`] for a message received in `group` (DISH).
pub fn new_frame_in(py: Python<'_>, msg: Msg, more: bool, group: Option<Bytes>) -> PyResult<Bound<'_, PyAny>> {
    let cls = match FRAME_CLASS.get(py) {
        Some(c) => c,
        None => base_type(py)?,
    };
    // SAFETY: `cls` is the base type or a registered subclass of it (checked in register).
    unsafe {
        let p = alloc_frame_raw(py, cls.as_ptr() as *mut ffi::PyTypeObject, msg, more)?;
        if group.is_some() {
            *(*(p as *mut FrameObject)).group = group;
        }
        Ok(Bound::from_owned_ptr(py, p))
    }
}

/// The frame object inside `obj`, if it is a Frame.
fn frame_object(obj: &Bound<'_, PyAny>) -> Option<*mut FrameObject> {
    let base = BASE_TYPE.get(obj.py())?;
    // SAFETY: both pointers are live objects; the type check guarantees the layout.
    unsafe {
        if ffi::PyObject_TypeCheck(obj.as_ptr(), base.as_ptr() as *mut ffi::PyTypeObject) == 0 {
            return None;
        }
    }
    Some(obj.as_ptr() as *mut FrameObject)
}

/// The group set on (or received with) `obj`, if it is a Frame that has one.
pub fn frame_group(obj: &Bound<'_, PyAny>) -> Option<Bytes> {
    let f = frame_object(obj)?;
    // SAFETY: a live Frame (checked); read with the GIL held.
    unsafe { (*(*f).group).clone() }
}

fn not_a_frame() -> PyErr {
    pyo3::exceptions::PyTypeError::new_err("expected a Frame")
}

/// `Frame.routing_id` (SERVER, PEER): the peer a received frame came from, or the one it is to
/// be sent to; 0 when none.
#[pyfunction]
pub fn _frame_routing_id(frame: &Bound<'_, PyAny>) -> PyResult<u32> {
    let f = frame_object(frame).ok_or_else(not_a_frame)?;
    // SAFETY: a live Frame (checked), read with the GIL held.
    Ok(unsafe { (*f).msg.routing_id() })
}

/// Sets `Frame.routing_id`; 0 is EINVAL, as libzmq's `zmq_msg_set_routing_id`.
#[pyfunction]
pub fn _frame_set_routing_id(frame: &Bound<'_, PyAny>, routing_id: u32) -> PyResult<()> {
    let f = frame_object(frame).ok_or_else(not_a_frame)?;
    // SAFETY: a live Frame (checked); the GIL serializes access to its fields, and no view
    // of the body depends on the routing id.
    unsafe { (*(*f).msg).set_routing_id(routing_id) }.map_err(|e| crate::error::to_py(frame.py(), e))
}

/// `Frame.group` (RADIO, DISH) as bytes, empty when none (libzmq's `zmq_msg_group`).
#[pyfunction]
pub fn _frame_group<'py>(frame: &Bound<'py, PyAny>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let g = frame_group(frame);
    if frame_object(frame).is_none() {
        return Err(not_a_frame());
    }
    Ok(pyo3::types::PyBytes::new(frame.py(), g.as_deref().unwrap_or_default()))
}

/// Sets `Frame.group`; longer than 255 bytes is EINVAL, as libzmq's `zmq_msg_set_group`.
#[pyfunction]
pub fn _frame_set_group(frame: &Bound<'_, PyAny>, group: &[u8]) -> PyResult<()> {
    let f = frame_object(frame).ok_or_else(not_a_frame)?;
    if group.len() > 255 {
        return Err(crate::error::to_py(frame.py(), oxmq::Error::Invalid));
    }
    // SAFETY: a live Frame (checked); the GIL serializes access to its fields.
    unsafe { *(*f).group = Some(Bytes::copy_from_slice(group)) };
    Ok(())
}

/// The message inside `obj` if it is a Frame (a cheap clone).
pub fn frame_msg(obj: &Bound<'_, PyAny>) -> Option<Msg> {
    let base = BASE_TYPE.get(obj.py())?;
    // SAFETY: both pointers are live objects; the type check guarantees the layout.
    unsafe {
        if ffi::PyObject_TypeCheck(obj.as_ptr(), base.as_ptr() as *mut ffi::PyTypeObject) == 0 {
            return None;
        }
        let f = &*(obj.as_ptr() as *const FrameObject);
        Some((*f.msg).clone())
    }
}

/// Sets the class `recv(copy=False)` returns; it must subclass the base `Frame`.
#[pyfunction]
pub fn _set_frame_class(cls: &Bound<'_, PyType>) -> PyResult<()> {
    let base = base_type(cls.py())?;
    if !cls.is_subclass(base.bind(cls.py()))? {
        return Err(pyo3::exceptions::PyTypeError::new_err("not a Frame subclass"));
    }
    let _ = FRAME_CLASS.set(cls.py(), cls.clone().unbind());
    Ok(())
}

pub fn base_type(py: Python<'_>) -> PyResult<&Py<PyType>> {
    BASE_TYPE.get_or_try_init(py, || create_type(py))
}

fn create_type(py: Python<'_>) -> PyResult<Py<PyType>> {
    // The spec and its tables must outlive the type on CPython < 3.12 (it may keep pointers
    // into them), so they are leaked: this runs once per process.
    let members = Box::leak(Box::new([
        ffi::PyMemberDef {
            name: c"more".as_ptr(),
            type_code: ffi::Py_T_BOOL,
            offset: std::mem::offset_of!(FrameObject, more) as ffi::Py_ssize_t,
            flags: 0,
            doc: c"True when more frames of the same message follow.".as_ptr(),
        },
        ffi::PyMemberDef::default(),
    ]));
    let slots = Box::leak(Box::new([
        ffi::PyType_Slot { slot: ffi::Py_tp_dealloc, pfunc: frame_dealloc as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_new, pfunc: frame_new as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_bf_getbuffer, pfunc: frame_getbuffer as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_members, pfunc: members.as_mut_ptr() as *mut c_void },
        ffi::PyType_Slot {
            slot: ffi::Py_tp_doc,
            pfunc: c"A message frame; exposes its body through the buffer protocol without copying.".as_ptr() as *mut c_void,
        },
        ffi::PyType_Slot { slot: 0, pfunc: ptr::null_mut() },
    ]));
    let spec = Box::leak(Box::new(ffi::PyType_Spec {
        name: c"oxmq._oxmq.Frame".as_ptr(),
        basicsize: std::mem::size_of::<FrameObject>() as c_int,
        itemsize: 0,
        flags: (ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_BASETYPE) as _,
        slots: slots.as_mut_ptr(),
    }));
    // SAFETY: the spec is fully initialised and 'static.
    unsafe {
        let t = ffi::PyType_FromSpec(spec);
        if t.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, t).cast_into::<PyType>()?.unbind())
    }
}

/// A property of the connection `frame` arrived on (`zmq_msg_gets`), up to its first NUL as a
/// C caller sees it; `None` if there is no such property or `frame` is not a Frame.
#[pyfunction]
pub fn _frame_gets<'py>(frame: &Bound<'py, PyAny>, name: &str) -> Option<Bound<'py, pyo3::types::PyBytes>> {
    let msg = frame_msg(frame)?;
    let v = msg.gets(name)?;
    let v = v.split(|&b| b == 0).next().unwrap_or(v);
    Some(pyo3::types::PyBytes::new(frame.py(), v))
}
