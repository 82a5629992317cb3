//! When a connecting session tries again and when it gives up, end to end
//! (`io/session/reconnect.rs`), with the monitor events libzmq shows.

use crate::testing::{events_until, next_event, no_sessions, queued_events, socket, watch, Wire};
use crate::{opt, Context, SocketType};

/// The events of a connect that is refused: tcp reports the connect in progress first;
/// ipc connects at once.
fn refused_events(t: Wire) -> Vec<&'static str> {
    match t {
        Wire::Tcp => vec!["CONNECT_DELAYED", "CLOSED"],
        Wire::Ipc => vec!["CLOSED"],
    }
}

fn refused_connect_stops_with_conn_refused(t: Wire) {
    let ctx = Context::new();
    let mut s = socket(&ctx, SocketType::Dealer);
    s.set_int(opt::RECONNECT_STOP, opt::RECONNECT_STOP_CONN_REFUSED).unwrap();
    assert_eq!(s.get_int(opt::RECONNECT_STOP).unwrap(), opt::RECONNECT_STOP_CONN_REFUSED);
    let mut r = watch(&ctx, &mut s);
    let ep = t.refusing_endpoint("refused");
    s.connect(&ep).unwrap();
    assert_eq!(events_until(&mut r, &ep, "CLOSED"), refused_events(t));
    no_sessions(&ctx);
    assert_eq!(queued_events(&mut r, &ep), Vec::<&str>::new(), "no CONNECT_RETRIED: the session ended");
}

fn refused_connect_retries_by_default(t: Wire) {
    let ctx = Context::new();
    let mut s = socket(&ctx, SocketType::Dealer);
    // The other flags leave a refusal alone (AFTER_DISCONNECT until a disconnect).
    let flags = opt::RECONNECT_STOP_HANDSHAKE_FAILED | opt::RECONNECT_STOP_AFTER_DISCONNECT;
    s.set_int(opt::RECONNECT_STOP, flags).unwrap();
    let mut r = watch(&ctx, &mut s);
    let ep = t.refusing_endpoint("retry");
    s.connect(&ep).unwrap();
    let mut expected = refused_events(t);
    expected.push("CONNECT_RETRIED");
    expected.extend(refused_events(t));
    expected.push("CONNECT_RETRIED");
    let mut seen = events_until(&mut r, &ep, "CONNECT_RETRIED");
    seen.extend(events_until(&mut r, &ep, "CONNECT_RETRIED"));
    assert_eq!(seen, expected);
}

/// A peer that never sends a greeting: HANDSHAKE_IVL ends the connection, and with
/// RECONNECT_STOP_HANDSHAKE_FAILED that is the end of the session (libzmq's
/// test_reconnect_options, reconnect_stop_on_handshake_failed); without it, a retry.
fn handshake_timeout(t: Wire, stop: bool) {
    let ctx = Context::new();
    let (_mute, ep) = t.mute_listener("mute");
    let mut s = socket(&ctx, SocketType::Sub);
    s.set_int(opt::HANDSHAKE_IVL, 100).unwrap();
    if stop {
        s.set_int(opt::RECONNECT_STOP, opt::RECONNECT_STOP_HANDSHAKE_FAILED).unwrap();
    }
    let mut r = watch(&ctx, &mut s);
    s.connect(&ep).unwrap();
    let mut expected = if t == Wire::Tcp { vec!["CONNECT_DELAYED"] } else { vec![] };
    expected.extend(["CONNECTED", "HANDSHAKE_FAILED_NO_DETAIL", "DISCONNECTED"]);
    assert_eq!(events_until(&mut r, &ep, "DISCONNECTED"), expected);
    if stop {
        no_sessions(&ctx);
        assert_eq!(queued_events(&mut r, &ep), Vec::<&str>::new(), "no CONNECT_RETRIED: the session ended");
    } else {
        assert_eq!(next_event(&mut r, &ep), "CONNECT_RETRIED");
    }
}

/// A peer that hangs up before the handshake completes ends the session with the flag.
fn peer_hanging_up_mid_handshake_stops(t: Wire) {
    let ctx = Context::new();
    let (mute, ep) = t.mute_listener("hangup");
    let mut s = socket(&ctx, SocketType::Dealer);
    s.set_int(opt::RECONNECT_STOP, opt::RECONNECT_STOP_HANDSHAKE_FAILED).unwrap();
    let mut r = watch(&ctx, &mut s);
    s.connect(&ep).unwrap();
    mute.accept_and_hang_up();
    let seen = events_until(&mut r, &ep, "DISCONNECTED");
    assert_eq!(seen[seen.len() - 2..], ["HANDSHAKE_FAILED_NO_DETAIL", "DISCONNECTED"], "{seen:?}");
    no_sessions(&ctx);
    assert_eq!(queued_events(&mut r, &ep), Vec::<&str>::new(), "no CONNECT_RETRIED: the session ended");
}

/// RECONNECT_STOP_AFTER_DISCONNECT: once the socket has let an endpoint go (`disconnect`,
/// or `unbind`), a refused connect ends the session. (Before that, a refusal is retried:
/// `refused_connect_retries_by_default` sets the flag too.)
fn refused_connect_stops_after(t: Wire, let_go: fn(&mut crate::Socket, Wire)) {
    let ctx = Context::new();
    let mut s = socket(&ctx, SocketType::Dealer);
    s.set_int(opt::RECONNECT_STOP, opt::RECONNECT_STOP_AFTER_DISCONNECT).unwrap();
    let mut r = watch(&ctx, &mut s);
    let_go(&mut s, t);
    let ep = t.refusing_endpoint("after");
    s.connect(&ep).unwrap();
    assert_eq!(events_until(&mut r, &ep, "CLOSED"), refused_events(t));
    no_sessions(&ctx);
    assert_eq!(queued_events(&mut r, &ep), Vec::<&str>::new(), "no CONNECT_RETRIED: the session ended");
}

fn disconnect_one(s: &mut crate::Socket, t: Wire) {
    let other = t.refusing_endpoint("other");
    s.connect(&other).unwrap();
    s.disconnect(&other).unwrap();
}

fn unbind_one(s: &mut crate::Socket, t: Wire) {
    s.bind(&t.bind_endpoint("unbound")).unwrap();
    let ep = s.last_endpoint().unwrap();
    s.unbind(&ep).unwrap();
}

#[test]
fn refused_connect_stops_with_conn_refused_tcp() {
    refused_connect_stops_with_conn_refused(Wire::Tcp);
}

#[test]
fn refused_connect_stops_with_conn_refused_ipc() {
    refused_connect_stops_with_conn_refused(Wire::Ipc);
}

#[test]
fn refused_connect_retries_by_default_tcp() {
    refused_connect_retries_by_default(Wire::Tcp);
}

#[test]
fn refused_connect_retries_by_default_ipc() {
    refused_connect_retries_by_default(Wire::Ipc);
}

#[test]
fn handshake_timeout_stops_with_handshake_failed_tcp() {
    handshake_timeout(Wire::Tcp, true);
}

#[test]
fn handshake_timeout_stops_with_handshake_failed_ipc() {
    handshake_timeout(Wire::Ipc, true);
}

#[test]
fn handshake_timeout_retries_by_default_tcp() {
    handshake_timeout(Wire::Tcp, false);
}

#[test]
fn peer_hanging_up_mid_handshake_stops_tcp() {
    peer_hanging_up_mid_handshake_stops(Wire::Tcp);
}

#[test]
fn peer_hanging_up_mid_handshake_stops_ipc() {
    peer_hanging_up_mid_handshake_stops(Wire::Ipc);
}

#[test]
fn refused_connect_stops_after_a_disconnect_tcp() {
    refused_connect_stops_after(Wire::Tcp, disconnect_one);
}

#[test]
fn refused_connect_stops_after_a_disconnect_ipc() {
    refused_connect_stops_after(Wire::Ipc, disconnect_one);
}

#[test]
fn refused_connect_stops_after_an_unbind_tcp() {
    refused_connect_stops_after(Wire::Tcp, unbind_one);
}
