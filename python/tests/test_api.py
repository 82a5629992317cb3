"""The pyzmq API surface, as oxmq implements it."""

import gc
import pickle
import threading
import time

import pytest

import oxmq
import oxmq as zmq
from conftest import pair

pytestmark = pytest.mark.timeout(30)


def test_versions_and_has():
    assert zmq.zmq_version_info() >= (4, 3, 0)
    assert zmq.zmq_version() == "%d.%d.%d" % zmq.zmq_version_info()
    assert zmq.pyzmq_version_info() >= (17,)
    assert isinstance(zmq.__version__, str)
    assert zmq.has("ipc") and zmq.has("curve") and zmq.has("draft")


def test_constants_match_pyzmq():
    pz = pytest.importorskip("zmq")
    names = [n for n in zmq.constants.__all__ if n.isupper()]
    assert len(names) > 150
    checked = 0
    for n in names:
        if hasattr(pz, n):
            assert int(getattr(pz, n)) == getattr(zmq, n), n
            checked += 1
    assert checked > 150
    for n in ("PAIR", "PUB", "SUB", "REQ", "REP", "DEALER", "ROUTER", "PULL", "PUSH", "XPUB",
              "XSUB", "STREAM", "SNDMORE", "DONTWAIT", "NOBLOCK", "POLLIN", "POLLOUT", "POLLERR",
              "EAGAIN", "ETERM", "EFSM", "ENOTSOCK", "ENOCOMPATPROTO", "EMTHREAD", "LINGER",
              "RCVTIMEO", "IDENTITY", "ROUTING_ID", "SUBSCRIBE"):
        assert hasattr(zmq, n), n


def test_error_hierarchy():
    assert issubclass(zmq.ZMQError, zmq.ZMQBaseError)
    assert issubclass(zmq.Again, zmq.ZMQError)
    assert issubclass(zmq.ContextTerminated, zmq.ZMQError)
    assert zmq.error.Again is zmq.Again
    e = zmq.ZMQError(zmq.EFSM)
    assert e.errno == zmq.EFSM and "state" in str(e)
    assert zmq.strerror(zmq.ETERM) == "Context was terminated"


def test_push_pull_roundtrip(ctx):
    pull, push = pair(ctx, zmq.PULL, zmq.PUSH)
    push.send(b"hello")
    assert pull.recv() == b"hello"
    push.send(bytearray(b"ba"))
    assert pull.recv() == b"ba"
    push.send(memoryview(b"mv"))
    assert pull.recv() == b"mv"
    big = bytes(range(256)) * 400
    push.send(big)
    assert pull.recv() == big
    with pytest.raises(TypeError):
        push.send("unicode")


def test_multipart_and_rcvmore(ctx):
    a, b = pair(ctx, zmq.PAIR, zmq.PAIR)
    b.send_multipart([b"a", b"", b"c" * 5000])
    assert a.recv_multipart() == [b"a", b"", b"c" * 5000]
    b.send(b"x", zmq.SNDMORE)
    b.send(b"y")
    assert a.recv() == b"x" and a.rcvmore and a.getsockopt(zmq.RCVMORE) == 1
    assert a.recv() == b"y" and not a.rcvmore
    with pytest.raises(TypeError):
        b.send_multipart([b"ok", 5])
    b.send(b"after")
    assert a.recv() == b"after"  # the bad part sent nothing


def test_string_json_pyobj_serialized(ctx):
    a, b = pair(ctx, zmq.PAIR, zmq.PAIR)
    b.send_string("héllo")
    assert a.recv_string() == "héllo"
    b.send_json({"k": [1, 2]})
    assert a.recv_json() == {"k": [1, 2]}
    b.send_pyobj({"set": {1}})
    assert a.recv_pyobj() == {"set": {1}}
    b.send_serialized({"x": 1}, lambda o: [pickle.dumps(o)])
    assert a.recv_serialized(lambda parts: pickle.loads(parts[0])) == {"x": 1}


def test_dgram_over_udp(ctx):
    """DGRAM as pyzmq's zmq.DGRAM on libzmq: [address, body] both ways, the address received
    as libzmq writes it (with a NUL), sent back as it is; udp may drop, so resend until heard."""
    a, b = ctx.socket(zmq.DGRAM), ctx.socket(zmq.DGRAM)
    for s in (a, b):
        s.linger = 0
        s.bind("udp://127.0.0.1:*")
    port = {s: int(s.last_endpoint.rsplit(b":", 1)[1]) for s in (a, b)}
    b.rcvtimeo = 200
    for _ in range(25):
        a.send_multipart([b"127.0.0.1:%d" % port[b], b"ping"])
        try:
            addr, body = b.recv_multipart()
            break
        except zmq.Again:
            pass
    else:
        pytest.fail("nothing arrived")
    assert (addr, body) == (b"127.0.0.1:%d\0" % port[a], b"ping")
    b.send_multipart([addr, b"pong"])
    a.rcvtimeo = 5000
    assert a.recv_multipart() == [b"127.0.0.1:%d\0" % port[b], b"pong"]
    with pytest.raises(zmq.ZMQError) as e:
        a.send(b"no address")
    assert e.value.errno == zmq.EINVAL
    with pytest.raises(zmq.ZMQError) as e:
        a.connect("udp://127.0.0.1:5555")
    assert e.value.errno == zmq.ENOCOMPATPROTO
    assert "DGRAM" in repr(a)
    a.close()
    b.close()


def test_req_rep_and_efsm(ctx):
    rep, req = pair(ctx, zmq.REP, zmq.REQ)
    req.send(b"q")
    with pytest.raises(zmq.ZMQError) as ei:
        req.send(b"again")
    assert ei.value.errno == zmq.EFSM
    assert rep.recv() == b"q"
    rep.send(b"a")
    assert req.recv() == b"a"


def test_router_dealer_identity(ctx):
    router = ctx.socket(zmq.ROUTER)
    dealer = ctx.socket(zmq.DEALER)
    dealer.identity = b"dealer-1"
    assert dealer.routing_id == b"dealer-1"
    router.rcvtimeo = 5000
    port = router.bind_to_random_port("tcp://127.0.0.1")
    dealer.connect(f"tcp://127.0.0.1:{port}")
    dealer.send(b"hi")
    assert router.recv_multipart() == [b"dealer-1", b"hi"]
    router.send_multipart([b"dealer-1", b"back"])
    dealer.rcvtimeo = 5000
    assert dealer.recv() == b"back"


def test_hello_and_disconnect_msgs(ctx):
    """The draft HELLO_MSG and DISCONNECT_MSG: bytes options (str attributes are encoded),
    write-only as in libzmq."""
    router = ctx.socket(zmq.ROUTER)
    router.hello_msg = b"welcome"
    router.disconnect_msg = "gone"
    router.rcvtimeo = 5000
    port = router.bind_to_random_port("tcp://127.0.0.1")
    dealer = ctx.socket(zmq.DEALER)
    dealer.routing_id = b"d"
    dealer.rcvtimeo = 5000
    dealer.linger = 0
    dealer.connect(f"tcp://127.0.0.1:{port}")
    assert dealer.recv() == b"welcome"
    dealer.close()
    assert router.recv_multipart() == [b"d", b"gone"]
    with pytest.raises(zmq.ZMQError) as ei:
        router.getsockopt(zmq.HELLO_MSG)
    assert ei.value.errno == zmq.EINVAL


def test_pub_sub_subscribe(ctx):
    pub, sub = pair(ctx, zmq.PUB, zmq.SUB)
    sub.subscribe(b"a")
    sub.setsockopt_string(zmq.SUBSCRIBE, "b")
    sub.subscribe = b"c"  # attribute style
    deadline = time.time() + 5
    got = None
    while time.time() < deadline:
        pub.send(b"z-skip")
        pub.send(b"a-1")
        if sub.poll(50):
            got = sub.recv()
            break
    assert got == b"a-1"
    sub.unsubscribe(b"a")


def test_timeouts_and_again(ctx):
    s = ctx.socket(zmq.PULL)
    s.bind("inproc://timeouts")
    with pytest.raises(zmq.Again):
        s.recv(zmq.NOBLOCK)
    s.rcvtimeo = 150
    t = time.monotonic()
    with pytest.raises(zmq.Again) as ei:
        s.recv()
    assert 0.1 < time.monotonic() - t < 2
    assert ei.value.errno == zmq.EAGAIN


def test_options_attribute_and_getset(ctx):
    s = ctx.socket(zmq.DEALER)
    s.linger = 0
    assert s.linger == 0 and s.getsockopt(zmq.LINGER) == 0 and s.get(zmq.LINGER) == 0
    s.set(zmq.SNDHWM, 7)
    assert s.sndhwm == 7
    s.hwm = 11
    assert s.hwm == 11 and s.rcvhwm == 11 and s.get(zmq.HWM) == 11
    s.maxmsgsize = 1 << 40
    assert s.maxmsgsize == 1 << 40
    s.affinity = 3
    assert s.affinity == 3
    assert s.type == zmq.DEALER == s.socket_type
    assert s.fd == s.getsockopt(zmq.FD) == s.fileno() and s.fd > 0
    with pytest.raises(AttributeError):
        s.no_such_option = 1
    with pytest.raises(TypeError):
        s.setsockopt(zmq.ROUTING_ID, "str is not bytes")
    s.bind("tcp://127.0.0.1:*")
    assert s.last_endpoint.startswith(b"tcp://127.0.0.1:")
    assert s.get_string(zmq.LAST_ENDPOINT).startswith("tcp://")
    with pytest.raises(zmq.ZMQError) as ei:
        s.setsockopt(9999, 1)
    assert ei.value.errno == zmq.EINVAL


# Every option the core implements for a DEALER, with a non-default value to round-trip.
ROUND_TRIP = {
    "AFFINITY": 5, "ROUTING_ID": b"rid", "RATE": 200, "RECOVERY_IVL": 500, "SNDBUF": 65536,
    "RCVBUF": 65536, "LINGER": 10, "RECONNECT_IVL": 50, "BACKLOG": 20, "RECONNECT_IVL_MAX": 500,
    "MAXMSGSIZE": 4096, "SNDHWM": 5, "RCVHWM": 6, "MULTICAST_HOPS": 3, "RCVTIMEO": 10,
    "SNDTIMEO": 20, "TCP_KEEPALIVE": 1, "TCP_KEEPALIVE_CNT": 4, "TCP_KEEPALIVE_IDLE": 30,
    "TCP_KEEPALIVE_INTVL": 5, "IMMEDIATE": 1, "IPV6": 1, "TOS": 8, "HANDSHAKE_IVL": 1000,
    "CONNECT_TIMEOUT": 100, "TCP_MAXRT": 100, "SOCKS_PROXY": b"somehost:1080",
    "SOCKS_USERNAME": b"someuser", "SOCKS_PASSWORD": b"somepass",
    "RECONNECT_STOP": zmq.RECONNECT_STOP_CONN_REFUSED | zmq.RECONNECT_STOP_AFTER_DISCONNECT,
}
READ_ONLY = {"RCVMORE": 0, "TYPE": zmq.DEALER, "MECHANISM": zmq.NULL, "EVENTS": None, "FD": None}


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_option_round_trip(ctx, name):
    s = ctx.socket(zmq.DEALER)
    opt = getattr(zmq, name)
    s.setsockopt(opt, ROUND_TRIP[name])
    assert s.getsockopt(opt) == ROUND_TRIP[name]
    s.close()


def test_every_option_constant_is_handled(ctx):
    """Each option either round-trips, is read-only, or raises ZMQError(EINVAL): never a crash."""
    from oxmq.socket import _SOCKOPT_NAMES
    s = ctx.socket(zmq.DEALER)
    unsupported = []
    for name, opt in sorted(_SOCKOPT_NAMES.items()):
        try:
            s.getsockopt(opt)
        except zmq.ZMQError as e:
            assert e.errno == zmq.EINVAL, name
            unsupported.append(name)
    for name in ROUND_TRIP:
        assert name.lower() not in unsupported
    for name, v in READ_ONLY.items():
        got = s.getsockopt(getattr(zmq, name))
        if v is not None:
            assert got == v
    s.close()


def test_type_specific_options(ctx):
    r = ctx.socket(zmq.ROUTER)
    r.router_mandatory = 1
    with pytest.raises(zmq.ZMQError) as ei:
        r.send_multipart([b"nobody", b"x"])
    assert ei.value.errno == zmq.EHOSTUNREACH


def test_context_options_and_instance():
    c = zmq.Context(io_threads=2)
    assert c.io_threads == 2 and c.get(zmq.IO_THREADS) == 2
    c.max_sockets = 10
    assert c.max_sockets == 10
    c.linger = 0  # a default socket option
    s = c.socket(zmq.PUSH)
    assert s.linger == 0
    assert s.context is c
    s.close()
    assert s.closed
    c.term()
    assert c.closed
    i1 = zmq.Context.instance()
    assert zmq.Context.instance() is i1


def test_context_manager_and_destroy():
    with zmq.Context() as c:
        s = c.socket(zmq.PUSH)
        s.connect("tcp://127.0.0.1:1")  # never connects
    assert s.closed and c.closed
    with zmq.Context() as c2, c2.socket(zmq.PAIR) as p:
        assert not p.closed
    assert p.closed


def test_term_interrupts_blocked_recv():
    c = zmq.Context()
    s = c.socket(zmq.PULL)
    s.bind("inproc://term")
    errs = []

    def run():
        try:
            s.recv()
        except zmq.ContextTerminated as e:
            errs.append(e)
        s.close()

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.2)
    c.term()
    t.join(5)
    assert errs and errs[0].errno == zmq.ETERM


def test_closed_socket_raises_enotsock(ctx):
    s = ctx.socket(zmq.PAIR)
    s.close()
    s.close()  # idempotent
    for call in (lambda: s.recv(), lambda: s.send(b"x"), lambda: s.bind("inproc://x"),
                 lambda: s.getsockopt(zmq.LINGER), lambda: s.fd):
        with pytest.raises(zmq.ZMQError) as ei:
            call()
        assert ei.value.errno == zmq.ENOTSOCK


def test_two_threads_at_once_raises(ctx):
    s = ctx.socket(zmq.PULL)
    s.bind("inproc://busy")
    started = threading.Event()
    out = []

    def blocker():
        started.set()
        try:
            s.recv()
        except zmq.ZMQError as e:
            out.append(e)

    t = threading.Thread(target=blocker)
    t.start()
    started.wait()
    time.sleep(0.2)
    with pytest.raises(zmq.ZMQError) as ei:
        s.recv(zmq.NOBLOCK)
    assert ei.value.errno == zmq.EFSM and "thread" in str(ei.value)
    with pytest.raises(zmq.ZMQError):
        s.close()
    ctx.shutdown()  # wakes the blocked thread with ETERM
    t.join(5)
    assert out and out[0].errno == zmq.ETERM


def test_gil_released_while_blocked(ctx):
    pull, push = pair(ctx, zmq.PULL, zmq.PUSH, "inproc")
    counter = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            counter[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    pull.rcvtimeo = 300
    with pytest.raises(zmq.Again):
        pull.recv()
    stop.set()
    t.join()
    assert counter[0] > 1000


def test_frame_zero_copy_outlives_socket_and_context():
    c = zmq.Context()
    a, b = pair(c, zmq.PAIR, zmq.PAIR)
    big = b"\x07" * 100_000
    b.send(big)
    b.send_multipart([b"small", b"x" * 2000])
    f = a.recv(copy=False)
    parts = a.recv_multipart(copy=False)
    assert isinstance(f, zmq.Frame) and len(f) == len(big) and not f.more
    view = memoryview(f)
    assert view.readonly and view.nbytes == len(big)
    assert parts[0].more and not parts[1].more
    assert parts[0].bytes == b"small" and parts[1].buffer.nbytes == 2000
    a.close()
    b.close()
    c.term()
    del c, a, b
    gc.collect()
    assert view[0] == 7 and view[-1] == 7 and bytes(view) == big
    assert f.bytes == big and bytes(parts[1]) == b"x" * 2000
    del f
    gc.collect()
    assert bytes(view[:3]) == b"\x07\x07\x07"  # the view keeps the frame alive


def test_frame_construct_and_send(ctx):
    a, b = pair(ctx, zmq.PAIR, zmq.PAIR)
    fr = zmq.Frame(b"built")
    assert fr.bytes == b"built" and len(fr) == 5 and fr == b"built"
    b.send(fr, copy=False)
    assert a.recv() == b"built"
    tracker = b.send(b"t" * 5000, copy=False, track=True)
    assert tracker.done
    assert a.recv(copy=False).bytes == b"t" * 5000
    assert zmq.Message is zmq.Frame


def test_recv_into(ctx):
    a, b = pair(ctx, zmq.PAIR, zmq.PAIR)
    buf = bytearray(8)
    b.send(b"0123456789")
    assert a.recv_into(buf) == 10  # full length, truncated copy (zmq_recv semantics)
    assert buf == b"01234567"
    b.send(b"ab")
    assert a.recv_into(buf, nbytes=1) == 2 and buf[:2] == b"a1"
    with pytest.raises((TypeError, BufferError)):
        a.recv_into(b"readonly")


def test_poller_and_select(ctx):
    pull, push = pair(ctx, zmq.PULL, zmq.PUSH)
    p = zmq.Poller()
    p.register(pull, zmq.POLLIN)
    p.register(push, zmq.POLLOUT)
    assert pull in p
    ev = dict(p.poll(1000))
    assert ev.get(push) == zmq.POLLOUT
    push.send(b"m")
    deadline = time.time() + 5
    while time.time() < deadline:
        ev = dict(p.poll(1000))
        if pull in ev:
            break
    assert ev[pull] == zmq.POLLIN
    p.unregister(push)
    p.modify(pull, zmq.POLLIN)
    assert dict(p.poll(0)) == {pull: zmq.POLLIN}
    assert pull.recv() == b"m"
    assert p.poll(50) == []
    r, w, x = zmq.select([pull], [push], [], 0.1)
    assert r == [] and w == [push]
    assert pull.poll(10) == 0 and push.poll(10, zmq.POLLOUT) == zmq.POLLOUT


def test_poller_with_plain_fd(ctx):
    import os
    rfd, wfd = os.pipe()
    try:
        p = zmq.Poller()
        p.register(rfd, zmq.POLLIN)
        assert p.poll(10) == []
        os.write(wfd, b"x")
        assert p.poll(1000) == [(rfd, zmq.POLLIN)]
    finally:
        os.close(rfd)
        os.close(wfd)


def test_bind_unbind_connect_disconnect(ctx):
    s = ctx.socket(zmq.PULL)
    port = s.bind_to_random_port("tcp://127.0.0.1", min_port=40000, max_port=50000)
    assert 40000 <= port < 50000
    ep = f"tcp://127.0.0.1:{port}"
    s.unbind(ep)
    c = ctx.socket(zmq.PUSH)
    c.connect(ep)
    c.disconnect(ep)
    with pytest.raises(zmq.ZMQError) as ei:
        c.disconnect(ep)
    assert ei.value.errno == zmq.ENOENT
    with pytest.raises(zmq.ZMQError) as ei:
        s.bind("bogus://x")
    assert ei.value.errno == zmq.EPROTONOSUPPORT


def test_socket_types(ctx):
    for t in (zmq.PAIR, zmq.PUB, zmq.SUB, zmq.REQ, zmq.REP, zmq.DEALER, zmq.ROUTER, zmq.PULL, zmq.PUSH):
        ctx.socket(t).close()
    for t in (zmq.XPUB, zmq.XSUB, zmq.STREAM):
        # Being added to the core: either a socket, or a clean EINVAL.
        try:
            ctx.socket(t).close()
        except zmq.ZMQError as e:
            assert e.errno == zmq.EINVAL
    with pytest.raises(zmq.ZMQError) as ei:
        ctx.socket(99)
    assert ei.value.errno == zmq.EINVAL


def test_proxy_moves_messages_and_ends_on_term():
    c = zmq.Context()
    fe = c.socket(zmq.PULL)
    be = c.socket(zmq.PUSH)
    fe.bind("inproc://pfe")
    be.bind("inproc://pbe")
    errs = []

    def run():
        try:
            zmq.proxy(fe, be)
        except zmq.ContextTerminated as e:
            errs.append(e)
        fe.close()
        be.close()

    t = threading.Thread(target=run)
    t.start()
    client = c.socket(zmq.PUSH)
    worker = c.socket(zmq.PULL)
    client.connect("inproc://pfe")
    worker.connect("inproc://pbe")
    worker.rcvtimeo = 5000
    client.send_multipart([b"a", b"b"])
    assert worker.recv_multipart() == [b"a", b"b"]
    client.close()
    worker.close()
    c.term()
    t.join(5)
    assert errs


def test_z85_and_jsonapi():
    from oxmq.utils import jsonapi, z85
    raw = bytes([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])
    assert z85.encode(raw) == b"HelloWorld"
    assert z85.decode(b"HelloWorld") == raw
    assert z85.decode("HelloWorld") == raw
    with pytest.raises(ValueError):
        z85.encode(b"abc")
    assert jsonapi.loads(jsonapi.dumps({"a": 1})) == {"a": 1}


def test_inproc_and_ipc(ctx):
    for tr in ("inproc", "ipc"):
        a, b = pair(ctx, zmq.PAIR, zmq.PAIR, tr)
        b.send(b"via " + tr.encode())
        assert a.recv() == b"via " + tr.encode()


def test_socket_subclass_and_module_names():
    assert issubclass(zmq.Socket, oxmq._oxmq.Socket)
    assert issubclass(zmq.Frame, oxmq._oxmq.Frame)
    import importlib
    for m in ("oxmq.asyncio", "oxmq.error", "oxmq.utils.z85", "oxmq.utils.jsonapi", "oxmq.constants"):
        importlib.import_module(m)
