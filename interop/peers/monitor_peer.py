#!/usr/bin/env python3
"""libzmq's socket-monitor event sequences (through pyzmq), for interop/tests/monitor.rs.

Usage: monitor_peer.py SCENARIO [IPC_DIR]

Runs one scenario with libzmq sockets on both ends and prints, one line per event, in order:

    SIDE EVENT_NAME VALUE ENDPOINT

SIDE is B (the bound socket's monitor) or C (the connecting socket's); ENDPOINT is the version-1
endpoint frame with the scenario's port replaced by PORT and its ipc directory by DIR ("-" when
empty). The Rust test runs the same scenario on oxmq, normalises the same way and compares.
The last line is "end". The process gives up after 60 s whatever happens.

Scenarios (each described in interop/tests/monitor.rs, which mirrors them step by step):
bind_peer_leaves, connect_peer_leaves, bind_busy, protocol_mechanism, protocol_command,
handshake_cut, ipc, inproc, auth_client (a client refused by a ZAP handler).

monitor_peer.py plain_client ENDPOINT: a libzmq PLAIN client with a refused password connects to
ENDPOINT (an oxmq PLAIN server) and prints its events.

monitor_peer.py zap_server: a NULL server whose ZAP handler denies 127.0.0.1; prints
"ep ENDPOINT" and serves until stdin closes (the oxmq side of auth_client connects to it).
(NULL, not PLAIN: libzmq 4.3.5's PLAIN server sends a malformed ERROR command to clients, seen
on the wire as "\x04\x09^RROR\x03400", which only libzmq's own client reads as status 400.)
"""

import signal
import socket as pysocket
import sys

import zmq
from zmq.utils.monitor import recv_monitor_message

RECONNECT_IVL = 200

ctx = zmq.Context()
norm = []  # (text, replacement) pairs applied to endpoints


def until(side, mon, last, out, count=1):
    """Appends events to `out` until the count-th `last` event (included)."""
    mon.rcvtimeo = 10000
    seen = 0
    while seen < count:
        m = recv_monitor_message(mon)
        ep = m["endpoint"].decode()
        for a, b in norm:
            ep = ep.replace(a, b)
        out.append(f"{side} {zmq.Event(m['event']).name} {m['value'] & 0xFFFFFFFF} {ep or '-'}")
        if m["event"] == last:
            seen += 1
        if len(out) > 64:
            raise SystemExit("runaway event stream")


def sock(kind, monitored=False):
    s = ctx.socket(kind)
    s.linger = 0
    s.rcvtimeo = 10000
    s.sndtimeo = 10000
    return (s, s.get_monitor_socket()) if monitored else s


def bind_tcp(s):
    port = s.bind_to_random_port("tcp://127.0.0.1")
    norm.append((f"127.0.0.1:{port}", "127.0.0.1:PORT"))
    return f"tcp://127.0.0.1:{port}"


def roundtrip(req, rep):
    req.send(b"ping")
    assert rep.recv() == b"ping"
    rep.send(b"pong")
    assert req.recv() == b"pong"


def greeting(mechanism):
    return b"\xff" + b"\0" * 8 + b"\x7f\x03\x01" + mechanism.ljust(20, b"\0") + b"\0" * 32


def raw_client(data, out):
    rep, mon = sock(zmq.REP, True)
    ep = bind_tcp(rep)
    c = pysocket.create_connection(("127.0.0.1", int(ep.rsplit(":", 1)[1])))
    c.settimeout(10)
    c.sendall(data)
    if len(data) >= 64:
        try:
            while c.recv(256):  # until the server drops us
                pass
        except OSError:
            pass
    c.close()
    until("B", mon, zmq.EVENT_DISCONNECTED, out)
    rep.close()
    until("B", mon, zmq.EVENT_MONITOR_STOPPED, out)


def zap_server():
    """A libzmq NULL server behind a ZAP handler that denies 127.0.0.1 (status 400)."""
    from zmq.auth.thread import ThreadAuthenticator

    auth = ThreadAuthenticator(ctx)
    auth.start()
    auth.deny("127.0.0.1")
    s = sock(zmq.REP)
    s.zap_domain = b"global"  # NULL asks ZAP only when a domain is set
    ep = bind_tcp(s)
    return auth, s, ep


def run(name, ipc_dir):
    out = []
    if name == "zap_server":
        auth, s, ep = zap_server()
        print(f"ep {ep}")
        sys.stdout.flush()
        sys.stdin.read()  # until the test closes our stdin
        s.close()
        auth.stop()
        return
    if name == "plain_client":
        # A libzmq PLAIN client with a password the server refuses, connecting to the endpoint
        # given as the second argument: its events until DISCONNECTED, then any that follow
        # within a second (a retry would show here).
        req, mon = sock(zmq.REQ, True)
        req.reconnect_ivl = RECONNECT_IVL
        req.plain_username = b"admin"
        req.plain_password = b"wrong"
        req.connect(ipc_dir)
        until("C", mon, zmq.EVENT_DISCONNECTED, out)
        mon.rcvtimeo = 1000
        try:
            while True:
                m = recv_monitor_message(mon)
                out.append(f"C {zmq.Event(m['event']).name} {m['value'] & 0xFFFFFFFF} {m['endpoint'].decode()}")
        except zmq.Again:
            pass
        for line in out:
            print(line)
        print("end")
        return
    if name == "bind_peer_leaves":
        rep, mon = sock(zmq.REP, True)
        ep = bind_tcp(rep)
        req = sock(zmq.REQ)
        req.connect(ep)
        roundtrip(req, rep)
        req.close()
        until("B", mon, zmq.EVENT_DISCONNECTED, out)
        rep.close()
        until("B", mon, zmq.EVENT_MONITOR_STOPPED, out)
    elif name == "connect_peer_leaves":
        rep = sock(zmq.REP)
        ep = bind_tcp(rep)
        req, mon = sock(zmq.REQ, True)
        req.reconnect_ivl = RECONNECT_IVL
        req.connect(ep)
        roundtrip(req, rep)
        until("C", mon, zmq.EVENT_HANDSHAKE_SUCCEEDED, out)
        rep.close()
        until("C", mon, zmq.EVENT_CONNECT_RETRIED, out, count=2)
        req.close()
        until("C", mon, zmq.EVENT_MONITOR_STOPPED, out)
    elif name == "bind_busy":
        holder = sock(zmq.REP)
        ep = bind_tcp(holder)
        s, mon = sock(zmq.REP, True)
        try:
            s.bind(ep)
            raise SystemExit("bind to a busy port succeeded")
        except zmq.ZMQError as e:
            assert e.errno == zmq.EADDRINUSE
        s.close()
        until("B", mon, zmq.EVENT_MONITOR_STOPPED, out)
    elif name == "protocol_mechanism":
        raw_client(greeting(b"PLAIN"), out)
    elif name == "protocol_command":
        raw_client(greeting(b"NULL") + b"\x04\x06\x05HELLO", out)
    elif name == "handshake_cut":
        raw_client(greeting(b"NULL")[:20], out)
    elif name == "ipc":
        norm.append((ipc_dir, "DIR"))
        ep = f"ipc://{ipc_dir}/mon.ipc"
        pull, bmon = sock(zmq.PULL, True)
        pull.bind(ep)
        push, cmon = sock(zmq.PUSH, True)
        push.reconnect_ivl = RECONNECT_IVL
        push.connect(ep)
        push.send(b"x")
        assert pull.recv() == b"x"
        until("B", bmon, zmq.EVENT_HANDSHAKE_SUCCEEDED, out)
        until("C", cmon, zmq.EVENT_HANDSHAKE_SUCCEEDED, out)
        pull.close()
        until("B", bmon, zmq.EVENT_MONITOR_STOPPED, out)
        until("C", cmon, zmq.EVENT_CONNECT_RETRIED, out)
        push.close()
        until("C", cmon, zmq.EVENT_MONITOR_STOPPED, out)
    elif name == "auth_client":
        auth, s, ep = zap_server()
        c, mon = sock(zmq.REQ, True)
        c.connect(ep)
        until("C", mon, zmq.EVENT_DISCONNECTED, out)
        c.close()
        s.close()
        auth.stop()
    elif name == "inproc":
        a, mon = sock(zmq.PAIR, True)
        a.bind("inproc://monitored")
        b = sock(zmq.PAIR)
        b.connect("inproc://monitored")
        b.send(b"x")
        assert a.recv() == b"x"
        b.close()
        a.close()
        until("B", mon, zmq.EVENT_MONITOR_STOPPED, out)
    else:
        raise SystemExit(f"unknown scenario {name}")
    for line in out:
        print(line)
    print("end")
    sys.stdout.flush()


if __name__ == "__main__":
    signal.alarm(60)
    run(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "/tmp")
    ctx.destroy(linger=0)
