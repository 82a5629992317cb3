"""The draft socket types with pyzmq's draft API (issue 44): SERVER/CLIENT with routing ids,
RADIO/DISH with groups and join/leave, SCATTER/GATHER, PEER, CHANNEL; thread-safe as in
libzmq; with Poller and oxmq.asyncio (pyzmq's draft sockets break under asyncio on libzmq,
whose thread-safe sockets have no ZMQ_FD). Interop with JeroMQ's draft types is in
test_draft_interop.py."""

import asyncio
import threading
import time

import pytest

import oxmq as zmq
import oxmq.asyncio as zaio

pytestmark = pytest.mark.timeout(60)

TRANSPORTS = ["tcp", "ipc", "inproc"]


def endpoint(transport, tag):
    if transport == "tcp":
        return "tcp://127.0.0.1:*"
    return f"{transport}://oxmq-draft-{tag}-{time.monotonic_ns()}" if transport == "inproc" else \
        f"ipc://@oxmq-draft-{tag}-{time.monotonic_ns()}"


def bound(ctx, kind, transport, tag=""):
    s = ctx.socket(kind)
    s.linger = 0
    s.rcvtimeo = 5000
    s.sndtimeo = 5000
    s.bind(endpoint(transport, tag))
    return s, s.last_endpoint.decode()


def connected(ctx, kind, ep):
    s = ctx.socket(kind)
    s.linger = 0
    s.rcvtimeo = 5000
    s.sndtimeo = 5000
    s.connect(ep)
    return s


def joined(radio, dish, group, probe=b"probe"):
    """Publishes `probe` to `group` until the dish has it: its JOIN has reached the radio."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        radio.send(probe, group=group)
        if dish.poll(20):
            f = dish.recv(copy=False)
            assert (f.bytes, f.group) == (probe, group)
            while dish.poll(0):  # leftover probes
                dish.recv()
            return
    raise AssertionError("the dish's JOIN never reached the radio")


def test_draft_api_is_on():
    assert zmq.DRAFT_API is True and zmq.has("draft")
    assert (zmq.SERVER, zmq.CLIENT, zmq.RADIO, zmq.DISH, zmq.GATHER, zmq.SCATTER, zmq.DGRAM,
            zmq.PEER, zmq.CHANNEL) == (12, 13, 14, 15, 16, 17, 18, 19, 20)
    pz = pytest.importorskip("zmq")
    for name in ("SERVER", "CLIENT", "RADIO", "DISH", "GATHER", "SCATTER", "PEER", "CHANNEL"):
        assert getattr(zmq, name) == getattr(pz, name), name


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_server_client_routing_ids(ctx, transport):
    srv, ep = bound(ctx, zmq.SERVER, transport, "sc")
    clients = [connected(ctx, zmq.CLIENT, ep) for _ in range(3)]
    ids = {}
    for i, c in enumerate(clients):
        c.send(b"hello %d" % i)
    for _ in clients:
        f = srv.recv(copy=False)
        assert f.routing_id != 0 and f.get("routing_id") == f.routing_id
        ids[f.bytes] = f.routing_id
    assert len(set(ids.values())) == 3
    for i, c in enumerate(clients):
        rid = ids[b"hello %d" % i]
        if i == 0:
            srv.send(b"reply 0", routing_id=rid)       # pyzmq's send(routing_id=)
        else:
            r = zmq.Frame(b"reply %d" % i)              # or a Frame with its routing_id
            r.routing_id = rid
            srv.send(r)
    for i, c in enumerate(clients):
        assert c.recv() == b"reply %d" % i
    # Unroutable: EHOSTUNREACH, as libzmq; 0 is not a routing id.
    with pytest.raises(zmq.ZMQError) as e:
        srv.send(b"x", routing_id=12345)
    assert e.value.errno == zmq.EHOSTUNREACH
    with pytest.raises(zmq.ZMQError) as e:
        zmq.Frame(b"x").routing_id = 0
    assert e.value.errno == zmq.EINVAL
    with pytest.raises(zmq.ZMQError):
        zmq.Frame(b"x").routing_id  # none set
    # Single-part only: a frame with more after it is EINVAL.
    with pytest.raises(zmq.ZMQError) as e:
        clients[0].send_multipart([b"a", b"b"])
    assert e.value.errno == zmq.EINVAL
    clients[0].send_multipart([b"one"])
    assert srv.recv_multipart() == [b"one"]


@pytest.mark.parametrize("transport", ["tcp", "ipc", "inproc", "udp"])
def test_radio_dish_groups(ctx, transport):
    dish = ctx.socket(zmq.DISH)
    dish.linger = 0
    dish.rcvtimeo = 5000
    dish.bind("udp://127.0.0.1:*" if transport == "udp" else endpoint(transport, "rd"))
    ep = dish.last_endpoint.decode()
    radio = connected(ctx, zmq.RADIO, ep)
    dish.join("weather")
    dish.join(b"sports")
    with pytest.raises(zmq.ZMQError) as e:
        dish.join("weather")
    assert e.value.errno == zmq.EINVAL
    with pytest.raises(zmq.ZMQError) as e:
        dish.join("x" * 256)
    assert e.value.errno == zmq.EINVAL
    if transport != "udp":  # udp: a datagram goes to whoever listens; the dish filters
        joined(radio, dish, "weather")
    else:
        radio.send(b"probe", group="weather")
        assert dish.recv() == b"probe"
    radio.send(b"news", group="politics")          # not joined: never delivered
    f = zmq.Frame(b"goal")
    f.group = "sports"
    radio.send(f)
    radio.send(b"rain", group="weather")
    got = [dish.recv(copy=False) for _ in range(2)]
    assert [(g.bytes, g.group, g.get("group")) for g in got] == [
        (b"goal", "sports", "sports"), (b"rain", "weather", "weather")]
    dish.leave("sports")
    with pytest.raises(zmq.ZMQError) as e:
        dish.leave("sports")
    assert e.value.errno == zmq.EINVAL
    # After the LEAVE: weather still arrives, sports no more (probe until the leave is seen).
    deadline = time.monotonic() + 10
    while True:
        radio.send(b"late goal", group="sports")
        radio.send(b"sun", group="weather")
        f = dish.recv(copy=False)
        if f.bytes == b"sun":
            if not dish.poll(50):
                break
            while dish.poll(0):
                dish.recv()
        assert time.monotonic() < deadline, "the LEAVE never took effect"
    radio.send(b"late goal", group="sports")
    radio.send(b"sun again", group="weather")
    assert dish.recv() == b"sun again"
    with pytest.raises(zmq.ZMQError) as e:
        ctx.socket(zmq.SERVER).join("g")
    assert e.value.errno == zmq.ENOTSUP


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_scatter_gather_and_channel(ctx, transport):
    gather, ep = bound(ctx, zmq.GATHER, transport, "sg")
    scatter = connected(ctx, zmq.SCATTER, ep)
    for i in range(20):
        scatter.send(b"%d" % i)
    assert [gather.recv() for _ in range(20)] == [b"%d" % i for i in range(20)]
    a, ep = bound(ctx, zmq.CHANNEL, transport, "ch")
    b = connected(ctx, zmq.CHANNEL, ep)
    b.send(b"ping")
    assert a.recv() == b"ping"
    a.send(b"pong")
    assert b.recv() == b"pong"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_peer_connect_peer(ctx, transport):
    a, ep = bound(ctx, zmq.PEER, transport, "pe")
    b = ctx.socket(zmq.PEER)
    b.linger = 0
    b.rcvtimeo = 5000
    rid = b.connect_peer(ep)
    assert rid != 0
    b.send(b"first", routing_id=rid)  # speaks first, through the id connect_peer gave
    f = a.recv(copy=False)
    assert f.bytes == b"first"
    a.send(b"back", routing_id=f.routing_id)
    g = b.recv(copy=False)
    assert (g.bytes, g.routing_id) == (b"back", rid)


def test_thread_safe_as_in_libzmq(ctx):
    """One thread blocks in recv on a SERVER while others send on it and on a CLIENT: no
    EFSM (as the classic types raise for concurrent use), nothing lost."""
    srv, ep = bound(ctx, zmq.SERVER, "tcp")
    cli = connected(ctx, zmq.CLIENT, ep)
    cli.send(b"hi")
    rid = srv.recv(copy=False).routing_id
    got = []
    receiver = threading.Thread(target=lambda: got.extend(srv.recv() for _ in range(400)))
    receiver.start()
    senders = [threading.Thread(target=lambda k=k: [cli.send(b"%d:%d" % (k, i)) for i in range(100)])
               for k in range(4)]
    for t in senders:
        t.start()
    for i in range(50):  # meanwhile this thread sends on the SERVER the receiver blocks in
        srv.send(b"down %d" % i, routing_id=rid)
    for t in senders:
        t.join(20)
    receiver.join(20)
    assert not receiver.is_alive()
    assert sorted(got) == sorted(b"%d:%d" % (k, i) for k in range(4) for i in range(100))
    assert [cli.recv() for _ in range(50)] == [b"down %d" % i for i in range(50)]


def test_close_while_another_thread_waits(ctx):
    srv, _ = bound(ctx, zmq.SERVER, "tcp")
    srv.rcvtimeo = -1
    errs = []

    def wait():
        try:
            srv.recv()
        except zmq.ZMQError as e:
            errs.append(e.errno)
    t = threading.Thread(target=wait)
    t.start()
    time.sleep(0.1)
    srv.close()
    t.join(5)
    assert not t.is_alive() and errs == [zmq.ENOTSOCK]
    with pytest.raises(zmq.ZMQError):
        srv.send(b"x", routing_id=1)


def test_poller_with_draft_sockets(ctx):
    srv, ep = bound(ctx, zmq.SERVER, "tcp")
    cli = connected(ctx, zmq.CLIENT, ep)
    dish, dep = bound(ctx, zmq.DISH, "tcp")
    dish.join("g")
    radio = connected(ctx, zmq.RADIO, dep)
    joined(radio, dish, "g")
    pull, pep = bound(ctx, zmq.PULL, "tcp")  # a classic socket in the same set
    push = connected(ctx, zmq.PUSH, pep)
    poller = zmq.Poller()
    for s in (srv, dish, pull):
        poller.register(s, zmq.POLLIN)
    assert poller.poll(0) == []
    for send, sock, want in ((lambda: cli.send(b"c"), srv, b"c"), (lambda: radio.send(b"r", group="g"), dish, b"r"),
                             (lambda: push.send(b"p"), pull, b"p")):
        threading.Timer(0.05, send).start()
        assert poller.poll(5000) == [(sock, zmq.POLLIN)]
        assert sock.recv() == want
    assert dict(poller.poll(0)) == {}
    assert srv.poll(0) == 0 and srv.poll(0, zmq.POLLOUT) == zmq.POLLOUT
    # A poll that waits while another thread uses the socket (here: sends on the SERVER, which
    # takes the SERVER's commands) still wakes for the message that arrives meanwhile.
    stop = threading.Event()
    rid = None
    cli.send(b"id")
    rid = srv.recv(copy=False).routing_id

    def busy():
        while not stop.is_set():
            srv.send(b"noise", routing_id=rid)
            time.sleep(0.001)
    t = threading.Thread(target=busy)
    t.start()
    try:
        for i in range(20):
            threading.Timer(0.01, lambda i=i: cli.send(b"m%d" % i)).start()
            assert poller.poll(5000) == [(srv, zmq.POLLIN)], i
            assert srv.recv() == b"m%d" % i
    finally:
        stop.set()
        t.join(5)


@pytest.mark.asyncio
async def test_asyncio_server_client_and_radio_dish():
    ctx = zaio.Context()
    try:
        srv, ep = bound(ctx, zmq.SERVER, "tcp")
        cli = connected(ctx, zmq.CLIENT, ep)

        async def serve(n):
            for _ in range(n):
                f = await srv.recv(copy=False)
                await srv.send(b"echo:" + f.bytes, routing_id=f.routing_id)
        server = asyncio.ensure_future(serve(200))
        for i in range(200):
            await cli.send(b"%d" % i)
            assert await asyncio.wait_for(cli.recv(), 10) == b"echo:%d" % i
        await asyncio.wait_for(server, 10)

        dish, dep = bound(ctx, zmq.DISH, "tcp")
        dish.join("g")
        radio = connected(ctx, zmq.RADIO, dep)
        fut = dish.recv(copy=False)
        deadline = time.monotonic() + 10
        while not fut.done():
            radio.send(b"tick", group="g")
            radio.send(b"other", group="h")
            await asyncio.sleep(0.01)
            assert time.monotonic() < deadline
        f = fut.result()
        assert (f.bytes, f.group) == (b"tick", "g")

        poller = zaio.Poller()
        poller.register(srv, zmq.POLLIN)
        waiting = poller.poll(5000)
        await asyncio.sleep(0.02)
        await cli.send(b"polled")
        assert await asyncio.wait_for(waiting, 10) == [(srv, zmq.POLLIN)]
        assert (await srv.recv()) == b"polled"
    finally:
        ctx.destroy(linger=0)


@pytest.mark.asyncio
async def test_asyncio_wakes_while_another_thread_uses_the_socket():
    """The event loop awaits recv on a SERVER while a plain thread keeps calling into the same
    SERVER. A message arrives while the loop is busy (not in its selector); the other thread's
    next call takes the SERVER's pending commands, which drains the edge-triggered descriptor
    the loop is about to wait on. The loop watches the socket (``Socket._watch``) while it
    waits on it, so such a call signals the descriptor again; without that, the loop slept on
    (every round timed out)."""
    ctx = zaio.Context()
    try:
        srv, ep = bound(ctx, zmq.SERVER, "tcp")
        a = connected(ctx, zmq.CLIENT, ep)
        stop = threading.Event()
        sent = [0]

        def busy():
            # The blocking API, off the loop: each call takes the SERVER's pending commands
            # (and, unlike sends to a peer whose queue fills up, posts none of its own).
            while not stop.is_set():
                zmq.Socket.getsockopt(srv, zmq.EVENTS)
                sent[0] += 1
        t = threading.Thread(target=busy)
        t.start()
        try:
            for i in range(20):
                fut = srv.recv()
                await asyncio.sleep(0)  # the recv is waiting on the descriptor now
                zmq.Socket.send(a, b"m%d" % i)
                # The loop stays busy while the message arrives and the other thread goes on
                # calling into the SERVER (the situation to survive, not a wait for it).
                start, t0 = sent[0], time.monotonic()
                while sent[0] < start + 100 or time.monotonic() < t0 + 0.02:
                    time.sleep(0.001)
                assert await asyncio.wait_for(fut, 5) == b"m%d" % i, i
        finally:
            stop.set()
            t.join(5)
    finally:
        ctx.destroy(linger=0)
