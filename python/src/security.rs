//! CURVE key helpers for Python (`zmq.curve_keypair`, `zmq.curve_public`) over
//! `oxmq::security`. Keys are Z85 `bytes`, as pyzmq returns them.

use crate::error::IntoPy;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A new key pair `(public, secret)`, each 40 Z85 characters.
#[pyfunction]
pub fn curve_keypair(py: Python<'_>) -> (Py<PyBytes>, Py<PyBytes>) {
    let (public, secret) = oxmq::security::curve_keypair();
    (PyBytes::new(py, public.as_bytes()).unbind(), PyBytes::new(py, secret.as_bytes()).unbind())
}

/// The Z85 public key of a secret key (40 Z85 characters or 32 bytes); ZMQError(EINVAL) if
/// it is neither.
#[pyfunction]
pub fn curve_public(py: Python<'_>, secret: &[u8]) -> PyResult<Py<PyBytes>> {
    let public = oxmq::security::curve_public(secret).py_err(py)?;
    Ok(PyBytes::new(py, public.as_bytes()).unbind())
}
