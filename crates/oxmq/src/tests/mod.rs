//! End-to-end tests of the engine through sockets: what a session does (its hello and
//! farewell messages, its reconnects), seen as an application sees it. They live here, not
//! beside the session's code, because they drive it through the layers above it.

mod hello;
mod reconnect;
