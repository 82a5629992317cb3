"""ZAP and message properties through the Python API: an oxmq ZAP handler approves or refuses
a PLAIN client, and received frames expose the verdict (``frame.get("User-Id")``,
``frame["X-Role"]``) and the connection's properties, as pyzmq's Frame.get does."""

import threading

import pytest

import oxmq as zmq

pytestmark = pytest.mark.timeout(30)

META = bytes([6]) + b"X-Role" + (5).to_bytes(4, "big") + b"admin"


def start_handler(ctx, answers):
    """A REP handler at inproc://zeromq.zap.01 answering `answers` requests: 200 for password
    "secret" (user id = username), 400 otherwise. Returns (thread, list of requests)."""
    rep = ctx.socket(zmq.REP)
    rep.linger = 0
    rep.rcvtimeo = 5000
    rep.bind("inproc://zeromq.zap.01")
    seen = []

    def run():
        try:
            for _ in range(answers):
                req = rep.recv_multipart()
                seen.append(req)
                ok = req[7] == b"secret"
                rep.send_multipart([b"1.0", b"1", b"200" if ok else b"400", b"text",
                                    req[6] if ok else b"", META])
        finally:
            rep.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, seen


def plain_pair(ctx, password):
    server = ctx.socket(zmq.PULL)
    server.plain_server = True
    server.zap_domain = b"py"
    server.linger = 0
    server.rcvtimeo = 5000
    port = server.bind_to_random_port("tcp://127.0.0.1")
    client = ctx.socket(zmq.PUSH)
    client.plain_username = b"alice"
    client.plain_password = password
    client.linger = 0
    client.connect(f"tcp://127.0.0.1:{port}")
    return server, client


def test_frame_get_reads_zap_user_id_and_properties(ctx):
    t, seen = start_handler(ctx, 1)
    server, client = plain_pair(ctx, b"secret")
    client.send(b"hello")
    frame = server.recv(copy=False)
    assert frame.bytes == b"hello"
    assert frame.get("User-Id") == "alice"
    assert frame["X-Role"] == "admin"
    assert frame["Socket-Type"] == "PUSH"
    assert frame.get("Peer-Address") == "127.0.0.1"
    with pytest.raises(zmq.ZMQError) as e:
        frame.get("No-Such-Property")
    assert e.value.errno == zmq.EINVAL
    assert frame.get(zmq.MORE) is False
    t.join(5)
    assert seen[0][:6] == [b"1.0", b"1", b"py", b"127.0.0.1", b"", b"PLAIN"]
    assert server.zap_domain == b"py"
    # A frame built locally has no properties.
    with pytest.raises(zmq.ZMQError):
        zmq.Frame(b"x").get("Socket-Type")


def test_refused_client_delivers_nothing(ctx):
    t, seen = start_handler(ctx, 1)
    server, client = plain_pair(ctx, b"wrong")
    client.send(b"hello")
    t.join(10)
    assert len(seen) == 1
    server.rcvtimeo = 150
    with pytest.raises(zmq.Again):
        server.recv()
