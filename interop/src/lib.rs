#![deny(unsafe_op_in_unsafe_fn)]
//! Interop tests against libzmq live in `tests/`; see README.md. This crate has no library code.
