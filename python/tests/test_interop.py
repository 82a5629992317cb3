"""oxmq-python ↔ pyzmq (libzmq 4.3.5) over tcp, both directions, every socket-type pairing the
core implements: either side binds, either side is oxmq."""

import time

import pytest

import oxmq

pz = pytest.importorskip("zmq")

pytestmark = pytest.mark.timeout(30)

# (bind type, connect type, how to exercise)
PAIRINGS = [
    ("PAIR", "PAIR", "bidi"),
    ("PUSH", "PULL", "a_to_b"),
    ("PULL", "PUSH", "b_to_a"),
    ("PUB", "SUB", "pubsub"),
    ("SUB", "PUB", "subpub"),
    ("REQ", "REP", "reqrep_a"),
    ("REP", "REQ", "reqrep_b"),
    ("REQ", "ROUTER", "req_router"),
    ("ROUTER", "REQ", "router_req"),
    ("DEALER", "REP", "dealer_rep"),
    ("REP", "DEALER", "rep_dealer"),
    ("DEALER", "ROUTER", "dealer_router"),
    ("ROUTER", "DEALER", "router_dealer"),
    ("DEALER", "DEALER", "bidi"),
]


@pytest.fixture(scope="module")
def contexts():
    ox = oxmq.Context()
    py = pz.Context()
    yield ox, py
    ox.destroy(linger=0)
    py.destroy(linger=0)


def mk(lib, ctx, name):
    s = ctx.socket(getattr(lib, name))
    s.linger = 0
    s.rcvtimeo = 5000
    s.sndtimeo = 5000
    return s


def exercise(kind, a, b):
    """`a` is bound, `b` connected; each may be oxmq or pyzmq."""
    if kind == "bidi":
        b.send_multipart([b"hello", b"x" * 3000])
        assert a.recv_multipart() == [b"hello", b"x" * 3000]
        a.send(b"back")
        assert b.recv() == b"back"
    elif kind == "a_to_b":
        for i in range(100):
            a.send(str(i).encode())
        assert [int(b.recv()) for _ in range(100)] == list(range(100))
    elif kind == "b_to_a":
        for i in range(100):
            b.send(str(i).encode())
        assert [int(a.recv()) for _ in range(100)] == list(range(100))
    elif kind in ("pubsub", "subpub"):
        pub, sub = (a, b) if kind == "pubsub" else (b, a)
        sub.setsockopt(oxmq.SUBSCRIBE, b"t")
        deadline = time.time() + 10
        while time.time() < deadline:
            pub.send(b"skip")
            pub.send_multipart([b"t", b"payload"])
            if sub.poll(50):
                break
        assert sub.recv_multipart() == [b"t", b"payload"]
    elif kind in ("reqrep_a", "reqrep_b"):
        req, rep = (a, b) if kind == "reqrep_a" else (b, a)
        for i in range(20):
            req.send(b"q%d" % i)
            assert rep.recv() == b"q%d" % i
            rep.send(b"r%d" % i)
            assert req.recv() == b"r%d" % i
    elif kind in ("req_router", "router_req"):
        req, router = (a, b) if kind == "req_router" else (b, a)
        req.send(b"ask")
        ident, empty, body = router.recv_multipart()
        assert empty == b"" and body == b"ask"
        router.send_multipart([ident, b"", b"answer"])
        assert req.recv() == b"answer"
    elif kind in ("dealer_rep", "rep_dealer"):
        dealer, rep = (a, b) if kind == "dealer_rep" else (b, a)
        dealer.send_multipart([b"", b"ask"])
        assert rep.recv() == b"ask"
        rep.send(b"answer")
        assert dealer.recv_multipart() == [b"", b"answer"]
    elif kind in ("dealer_router", "router_dealer"):
        dealer, router = (a, b) if kind == "dealer_router" else (b, a)
        dealer.send(b"ask")
        ident, body = router.recv_multipart()
        assert body == b"ask"
        router.send_multipart([ident, b"answer"])
        assert dealer.recv() == b"answer"
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("bind_side", ["oxmq-binds", "pyzmq-binds"])
@pytest.mark.parametrize("bind_type,connect_type,kind", PAIRINGS, ids=[f"{a}-{b}" for a, b, _ in PAIRINGS])
def test_interop(contexts, bind_side, bind_type, connect_type, kind):
    ox, py = contexts
    if bind_side == "oxmq-binds":
        a, b = mk(oxmq, ox, bind_type), mk(pz, py, connect_type)
    else:
        a, b = mk(pz, py, bind_type), mk(oxmq, ox, connect_type)
    try:
        port = a.bind_to_random_port("tcp://127.0.0.1")
        b.connect(f"tcp://127.0.0.1:{port}")
        exercise(kind, a, b)
    finally:
        a.close()
        b.close()


def test_routing_id_across_libraries(contexts):
    ox, py = contexts
    router = mk(pz, py, "ROUTER")
    dealer = mk(oxmq, ox, "DEALER")
    dealer.identity = b"ox-dealer"
    try:
        port = router.bind_to_random_port("tcp://127.0.0.1")
        dealer.connect(f"tcp://127.0.0.1:{port}")
        dealer.send(b"hi")
        assert router.recv_multipart() == [b"ox-dealer", b"hi"]
    finally:
        router.close()
        dealer.close()


def test_large_messages_both_ways(contexts):
    ox, py = contexts
    a, b = mk(oxmq, ox, "PAIR"), mk(pz, py, "PAIR")
    try:
        port = a.bind_to_random_port("tcp://127.0.0.1")
        b.connect(f"tcp://127.0.0.1:{port}")
        for size in (0, 1, 255, 256, 65536, 1 << 20):
            payload = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
            a.send(payload)
            assert b.recv() == payload
            b.send(payload)
            f = a.recv(copy=False)
            assert f.bytes == payload
    finally:
        a.close()
        b.close()
