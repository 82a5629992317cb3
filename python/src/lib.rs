//! `oxmq._oxmq`: the native half of the `oxmq` Python package.
//!
//! A thin shell over the `oxmq` Rust API: `Context`, `Socket`, `Frame`, `zmq_poll`, `proxy`, and
//! the error bridge. Everything pyzmq-shaped that can be written in Python (constants, option
//! attributes, string/json/pickle helpers, Poller, asyncio) lives in `python/oxmq/`, so this
//! file stays small and the hot path stays here.

mod busy;
mod error;
mod fast;
mod frame;
mod security;
mod socket;
mod wiring;

use pyo3::prelude::*;

#[pymodule]
fn _oxmq(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<socket::Context>()?;
    m.add_class::<socket::Socket>()?;
    m.add_class::<wiring::Wiring>()?;
    m.add("Frame", frame::base_type(py)?.clone_ref(py))?;
    m.add_function(wrap_pyfunction!(frame::_set_frame_class, m)?)?;
    m.add_function(wrap_pyfunction!(frame::_frame_gets, m)?)?;
    m.add_function(wrap_pyfunction!(frame::_frame_routing_id, m)?)?;
    m.add_function(wrap_pyfunction!(frame::_frame_set_routing_id, m)?)?;
    m.add_function(wrap_pyfunction!(frame::_frame_group, m)?)?;
    m.add_function(wrap_pyfunction!(frame::_frame_set_group, m)?)?;
    m.add_function(wrap_pyfunction!(error::_set_error_classes, m)?)?;
    m.add_function(wrap_pyfunction!(error::strerror, m)?)?;
    m.add_function(wrap_pyfunction!(fast::_install_fast_methods, m)?)?;
    m.add_function(wrap_pyfunction!(fast::_install_wiring_fast_methods, m)?)?;
    m.add_function(wrap_pyfunction!(socket::zmq_poll, m)?)?;
    m.add_function(wrap_pyfunction!(socket::proxy, m)?)?;
    m.add_function(wrap_pyfunction!(socket::proxy_steerable, m)?)?;
    m.add_function(wrap_pyfunction!(security::curve_keypair, m)?)?;
    m.add_function(wrap_pyfunction!(security::curve_public, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
