"""Socket.monitor, get_monitor_socket, disable_monitor and zmq.utils.monitor, as pyzmq's."""

import asyncio
import os
import socket as pysocket
import struct

import pytest

import oxmq as zmq
import oxmq.asyncio as zaio
from oxmq.utils.monitor import parse_monitor_message, recv_monitor_message

pytestmark = pytest.mark.timeout(30)


def events_until(mon, last):
    """Events (name, value, endpoint) up to and including `last`."""
    mon.rcvtimeo = 5000
    out = []
    while True:
        m = recv_monitor_message(mon)
        out.append((m["event"].name, m["value"], m["endpoint"].decode()))
        if m["event"] == last:
            return out
        assert len(out) < 64, out


def test_bind_and_connect_sequences(ctx):
    rep = ctx.socket(zmq.REP)
    req = ctx.socket(zmq.REQ)
    for s in (rep, req):
        s.linger = 0
        s.rcvtimeo = 5000
    mrep = rep.get_monitor_socket()
    assert rep.get_monitor_socket() is mrep  # returned again while open
    mreq = req.get_monitor_socket(zmq.EVENT_ALL)
    port = rep.bind_to_random_port("tcp://127.0.0.1")
    ep = f"tcp://127.0.0.1:{port}"
    req.connect(ep)
    req.send(b"ping")
    assert rep.recv() == b"ping"
    rep.send(b"pong")
    assert req.recv() == b"pong"
    got = events_until(mrep, zmq.EVENT_HANDSHAKE_SUCCEEDED)
    assert [g[0] for g in got] == ["LISTENING", "ACCEPTED", "HANDSHAKE_SUCCEEDED"]
    assert all(g[2] == ep for g in got)
    got = events_until(mreq, zmq.EVENT_HANDSHAKE_SUCCEEDED)
    assert [g[0] for g in got] == ["CONNECT_DELAYED", "CONNECTED", "HANDSHAKE_SUCCEEDED"]
    assert got[0][1] == 115  # EINPROGRESS, as libzmq reports it on Linux
    req.close()
    assert [g[0] for g in events_until(mrep, zmq.EVENT_DISCONNECTED)] == ["DISCONNECTED"]
    assert [g[0] for g in events_until(mreq, zmq.EVENT_MONITOR_STOPPED)] == ["MONITOR_STOPPED"]
    rep.close()
    got = events_until(mrep, zmq.EVENT_MONITOR_STOPPED)
    assert [g[0] for g in got] == ["CLOSED", "MONITOR_STOPPED"]


def test_disable_monitor_and_mask(ctx):
    s = ctx.socket(zmq.PULL)
    mon = s.get_monitor_socket(zmq.EVENT_LISTENING | zmq.EVENT_MONITOR_STOPPED)
    s.bind_to_random_port("tcp://127.0.0.1")
    assert [g[0] for g in events_until(mon, zmq.EVENT_LISTENING)] == ["LISTENING"]
    s.disable_monitor()
    assert [g[0] for g in events_until(mon, zmq.EVENT_MONITOR_STOPPED)] == ["MONITOR_STOPPED"]
    # A new monitor socket after disabling.
    mon2 = s.get_monitor_socket()
    assert mon2 is not mon
    s.bind_to_random_port("tcp://127.0.0.1")
    assert [g[0] for g in events_until(mon2, zmq.EVENT_LISTENING)] == ["LISTENING"]
    mon.close()
    s.close()


def test_protocol_error_and_bind_failed(ctx):
    s = ctx.socket(zmq.REP)
    mon = s.get_monitor_socket()
    port = s.bind_to_random_port("tcp://127.0.0.1")
    c = pysocket.create_connection(("127.0.0.1", port))
    greeting = b"\xff" + b"\0" * 8 + b"\x7f\x03\x01" + b"PLAIN".ljust(20, b"\0") + b"\0" * 32
    c.sendall(greeting)
    got = events_until(mon, zmq.EVENT_DISCONNECTED)
    c.close()
    assert [g[0] for g in got] == ["LISTENING", "ACCEPTED", "HANDSHAKE_FAILED_PROTOCOL", "DISCONNECTED"]
    assert got[2][1] == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH

    other = ctx.socket(zmq.REP)
    omon = other.get_monitor_socket()
    with pytest.raises(zmq.ZMQError) as e:
        other.bind(f"tcp://127.0.0.1:{port}")
    assert e.value.errno == zmq.EADDRINUSE
    got = events_until(omon, zmq.EVENT_BIND_FAILED)
    assert [g[0] for g in got] == ["CLOSED", "BIND_FAILED"]
    assert got[1][1] == zmq.EADDRINUSE and got[1][2] == f"127.0.0.1:{port}"


def test_errors(ctx):
    s = ctx.socket(zmq.PAIR)
    with pytest.raises(zmq.ZMQError) as e:
        s.monitor("tcp://127.0.0.1:5555", zmq.EVENT_ALL)
    assert e.value.errno == zmq.EPROTONOSUPPORT
    with pytest.raises(zmq.ZMQError) as e:
        s.monitor("", zmq.EVENT_ALL)
    assert e.value.errno == zmq.EINVAL
    with pytest.raises(zmq.ZMQError) as e:
        s.monitor(f"inproc://mon-{os.getpid()}", 1 << 16)
    assert e.value.errno == zmq.EINVAL
    s.monitor(None, 0)  # nothing to stop: fine
    with pytest.raises(RuntimeError):
        parse_monitor_message([b"abc"])
    s.close()
    with pytest.raises(zmq.ZMQError) as e:
        s.monitor("inproc://closed", zmq.EVENT_ALL)
    assert e.value.errno == zmq.ENOTSOCK


def test_parse_monitor_message_format():
    m = parse_monitor_message([struct.pack("=hi", zmq.EVENT_CLOSED, -1), b"tcp://x:1"])
    assert m == {"event": zmq.Event.CLOSED, "value": -1, "endpoint": b"tcp://x:1"}
    assert isinstance(m["event"], zmq.Event)


async def _async_events():
    ctx = zaio.Context()
    try:
        pull = ctx.socket(zmq.PULL)
        push = ctx.socket(zmq.PUSH)
        push.linger = 0
        mon = push.get_monitor_socket()
        assert isinstance(mon, zaio.Socket)
        port = pull.bind_to_random_port("tcp://127.0.0.1")
        push.connect(f"tcp://127.0.0.1:{port}")
        names = []
        while "HANDSHAKE_SUCCEEDED" not in names:
            fut = recv_monitor_message(mon)
            m = await asyncio.wait_for(fut, 5)
            names.append(m["event"].name)
        assert names == ["CONNECT_DELAYED", "CONNECTED", "HANDSHAKE_SUCCEEDED"]
        await push.send(b"x")
        assert await asyncio.wait_for(pull.recv(), 5) == b"x"
    finally:
        ctx.destroy(linger=0)


def test_asyncio_monitor():
    asyncio.run(_async_events())
