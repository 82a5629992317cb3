"""The wiring API from Python (``oxmq.wiring``): the issue's snippet with only the import line
changed, errors as exceptions, and libzmq peers (pyzmq) on a global exchange and queue."""

import errno
import socket
import time
import types

import pytest

from oxmq import wiring as pyzmq
import oxmq


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def embedded(monkeypatch):
    """An embedded name service on a free port (the empty host)."""
    monkeypatch.setenv("OXMQ_WIRING_PORT", str(free_port()))
    monkeypatch.setenv("OXMQ_WIRING_TIMEOUT_MS", "500")
    return ""


def test_issue_snippet(embedded):
    hostname = embedded
    msg = b"hello, wiring"
    # ---- the snippet ----
    zmq = pyzmq.ZMQ(hostname)
    eid = zmq.create_exchange("E", pyzmq.SCOPE_GLOBAL, "")
    zmq.create_queue("Q", pyzmq.SCOPE_LOCAL)
    zmq.bind("E", "Q"); zmq.send(eid, msg); msg = zmq.receive()
    # ---- end ----
    assert msg == b"hello, wiring"
    kind, endpoint, style = zmq.lookup("E")
    assert (kind, style) == ("exchange", "fanout") and endpoint.startswith("tcp://127.0.0.1:")
    zmq.close()
    assert zmq.closed


def test_errors_are_exceptions(embedded):
    with pyzmq.ZMQ(embedded) as a, pyzmq.ZMQ(embedded) as b:
        eid = a.create_exchange("E", pyzmq.SCOPE_GLOBAL, "")
        a.create_queue("Q")
        with pytest.raises(oxmq.ZMQError) as e:
            a.bind("E", "nope")
        assert e.value.errno == errno.ENOENT
        with pytest.raises(oxmq.ZMQError) as e:
            b.create_queue("E", pyzmq.SCOPE_GLOBAL, "")
        assert e.value.errno == errno.EADDRINUSE
        with pytest.raises(oxmq.ZMQError) as e:
            a.create_queue("L", pyzmq.SCOPE_GLOBAL, "127.0.0.1:99999")
        assert e.value.errno == errno.EINVAL
        with pytest.raises(oxmq.ZMQError) as e:
            a.create_queue("L", 9)
        assert e.value.errno == errno.EINVAL
        with pytest.raises(oxmq.ZMQError) as e:
            a.send(eid + 5, b"x")
        assert e.value.errno == errno.EINVAL
        t0 = time.monotonic()
        with pytest.raises(oxmq.Again):
            a.receive(timeout=0.1)
        assert time.monotonic() - t0 < 2
    with pytest.raises(oxmq.ZMQError) as e:
        a.receive(timeout=0)
    assert e.value.errno == oxmq.ETERM


def test_unreachable_service(monkeypatch):
    monkeypatch.setenv("OXMQ_WIRING_TIMEOUT_MS", "300")
    t0 = time.monotonic()
    with pytest.raises(oxmq.ZMQError) as e:
        pyzmq.ZMQ(f"127.0.0.1:{free_port()}")
    assert e.value.errno == errno.EHOSTUNREACH
    assert time.monotonic() - t0 < 3


def test_str_and_large_messages_and_load_balancing(embedded):
    with pyzmq.ZMQ(embedded) as w:
        eid = w.create_exchange("E", pyzmq.SCOPE_LOCAL)
        w.create_queue("Q", pyzmq.SCOPE_PROCESS)
        w.bind("E", "Q")
        w.send(eid, "text")
        assert w.receive(timeout=5) == b"text"
        big = bytes(range(256)) * 1000
        w.send(eid, big)
        assert w.receive(timeout=5) == big
        lb = w.create_exchange("LB", pyzmq.SCOPE_LOCAL, "", pyzmq.STYLE_LOAD_BALANCE)
        w.create_queue("Q2")
        w.bind("LB", "Q")
        w.bind("LB", "Q2")
        for i in range(4):
            w.send(lb, b"%d" % i)
        got = sorted(w.receive(timeout=5) for _ in range(4))
        assert got == [b"0", b"1", b"2", b"3"]
        with pytest.raises(oxmq.Again):
            w.receive(timeout=0.05)


def test_send_takes_buffers_and_refuses_the_rest(embedded):
    with pyzmq.ZMQ(embedded) as w:
        eid = w.create_exchange("E")
        w.create_queue("Q")
        w.bind("E", "Q")
        w.send(eid, bytearray(b"ba"))
        w.send(eid, memoryview(b"xmvx")[1:3])
        assert [w.receive(timeout=5), w.receive(timeout=5)] == [b"ba", b"mv"]
        for bad in (123, None, [1, 2]):
            with pytest.raises(TypeError):
                w.send(eid, bad)
        with pytest.raises(oxmq.Again):
            w.receive(timeout=0.05)
        # The seed's two methods are native: no Python frame per message.
        for name in ("send", "receive"):
            m = getattr(type(w), name)
            assert isinstance(m, types.MethodDescriptorType) and m.__objclass__ is oxmq._oxmq.Wiring


def test_send_and_receive_take_every_call_shape(embedded):
    # The fast calls take positional arguments; keywords and wrong shapes go to the ordinary
    # methods, which accept or refuse them the same way.
    with pyzmq.ZMQ(embedded) as w:
        eid = w.create_exchange("E")
        w.create_queue("Q")
        w.bind("E", "Q")
        w.send(eid, b"a")
        w.send(eid=eid, message=b"b")
        w.send(eid, message="c\u00e9")
        big = bytes(range(256)) * 64  # shared, not copied, from 1 KiB on
        w.send(eid, big)
        w.send(eid, oxmq.Frame(b"frame"))
        assert w.receive() == b"a"
        assert w.receive(5) == b"b"
        assert w.receive(timeout=5) == "c\u00e9".encode()
        assert w.receive(None) == big
        assert w.receive(timeout=None) == b"frame"
        with pytest.raises(oxmq.Again):
            w.receive(0.05)
        with pytest.raises(TypeError):
            w.receive(1, 2)
        with pytest.raises(TypeError):
            w.receive(nope=1)
        with pytest.raises(TypeError):
            w.send(eid)
        with pytest.raises(TypeError):
            w.send(eid, b"x", b"y")
        with pytest.raises(TypeError):
            w.send("not an id", b"x")
        with pytest.raises(oxmq.ZMQError) as e:
            w.send(99, b"x")
        assert e.value.errno == errno.EINVAL
        # Nothing the refused calls carried was sent.
        with pytest.raises(oxmq.Again):
            w.receive(timeout=0.05)
    with pytest.raises(oxmq.ZMQError):
        w.send(eid, b"after close")


def test_a_send_waiting_for_room_lets_other_threads_run(embedded):
    # The sender fills the queue and the kernel's buffers (2 M messages, about 12 MB on the
    # wire) while this thread only sleeps, so the sender ends up waiting for room. This thread
    # then needs the interpreter back to notice and to drain the queue: a send that waited
    # holding the GIL would hang here until pytest-timeout fails the test.
    import threading
    n = 2_000_000
    a = pyzmq.ZMQ(embedded)
    a.create_queue("PQ", pyzmq.SCOPE_PROCESS, "")
    ready, failed, sent = threading.Event(), [], [0]

    def sender():
        try:
            with pyzmq.ZMQ(embedded) as b:
                eid = b.create_exchange("E")
                b.bind("E", "PQ")
                ready.set()
                for i in range(n):
                    b.send(eid, i.to_bytes(4, "big"))
                    if i % 1000 == 0:
                        sent[0] = i
        except Exception as e:  # noqa: BLE001 - reported below
            failed.append(e)
            ready.set()

    t = threading.Thread(target=sender)
    t.start()
    assert ready.wait(30)
    last, still = -1, 0
    while still < 5:  # no progress for 5 looks in a row: the sender waits for room
        time.sleep(0.05)
        still = still + 1 if sent[0] == last else 0
        last = sent[0]
    assert t.is_alive() and not failed, "the sender never had to wait: the test needs more messages"
    for i in range(n):
        assert a.receive(30) == i.to_bytes(4, "big")
    t.join(30)
    assert not t.is_alive() and not failed
    a.close()


def test_a_handle_in_use_by_another_thread_raises_efsm(embedded):
    # One thread at a time, as with a socket: a call made while another thread is inside one
    # (here a receive waiting with the GIL released) raises EFSM instead of racing it, and the
    # handle serves any thread afterwards.
    import threading
    w = pyzmq.ZMQ(embedded)
    w.create_queue("TQ", pyzmq.SCOPE_PROCESS, "")
    b = pyzmq.ZMQ(embedded)
    eid = b.create_exchange("TE")
    b.bind("TE", "TQ")
    got, failed = [], []

    def receiver():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                got.append(w.receive(30))
                return
            except oxmq.ZMQError as e:
                if e.errno != oxmq.EFSM:  # the main thread's probe held it: try again
                    failed.append(e)
                    return

    t = threading.Thread(target=receiver)
    t.start()
    deadline = time.monotonic() + 30
    busy = None
    while busy is None and time.monotonic() < deadline:
        try:
            w.receive(timeout=0)
        except pyzmq.Again:
            continue  # the receiver is not inside its call yet
        except oxmq.ZMQError as e:
            busy = e
    assert busy is not None and busy.errno == oxmq.EFSM and "thread" in str(busy)
    b.send(eid, b"one")
    t.join(30)
    assert not t.is_alive() and not failed and got == [b"one"]
    b.send(eid, b"two")
    assert w.receive(5) == b"two"
    b.close()
    w.close()


def test_libzmq_peers_on_global_names(embedded):
    zmq = pytest.importorskip("zmq")
    ctx = zmq.Context()
    try:
        with pyzmq.ZMQ(embedded) as w:
            eid = w.create_exchange("GE", pyzmq.SCOPE_GLOBAL, "")
            w.create_queue("GQ", pyzmq.SCOPE_GLOBAL, "")
            # A libzmq SUB reads from the global exchange at the address the service returns.
            sub = ctx.socket(zmq.SUB)
            sub.setsockopt(zmq.SUBSCRIBE, b"")
            sub.connect(w.lookup("GE")[1])
            deadline = time.monotonic() + 10
            while True:
                w.send(eid, b"to libzmq")
                if sub.poll(50):
                    assert sub.recv() == b"to libzmq"
                    break
                assert time.monotonic() < deadline, "libzmq SUB got nothing"
            # A libzmq PUSH delivers into the global queue.
            pub = ctx.socket(zmq.PUSH)
            pub.connect(w.lookup("GQ")[1])
            deadline = time.monotonic() + 10
            while True:
                pub.send(b"from libzmq", zmq.NOBLOCK) if pub.poll(50, zmq.POLLOUT) else None
                try:
                    assert w.receive(timeout=0.05) == b"from libzmq"
                    break
                except oxmq.Again:
                    assert time.monotonic() < deadline, "nothing from the libzmq PUSH"
            sub.close(0)
            pub.close(0)
    finally:
        ctx.term()
