"""Interop peer for oxmq-netty's tests: a ZeroMQ socket driven through pyzmq's API.

    python3 zmq_peer.py MODULE SCENARIO bind|connect:PORT

MODULE is `zmq` (pyzmq, libzmq) or `oxmq` (oxmq's Python package). SCENARIO names the peer's
socket (router, dealer, pub, sub), or `echo`: a DEALER whose messages must come back unchanged. Prints `PORT n` after
binding, `OK ...` when its scenario succeeded (then exits 0), or exits non-zero. Every wait is
bounded by a 10 s receive timeout.
"""
import importlib
import sys
import time

zmq = importlib.import_module(sys.argv[1])
scenario, where = sys.argv[2], sys.argv[3]

ctx = zmq.Context()
kind = {"router": zmq.ROUTER, "dealer": zmq.DEALER, "pub": zmq.PUB, "sub": zmq.SUB,
        "echo": zmq.DEALER}[scenario]
s = ctx.socket(kind)
s.setsockopt(zmq.LINGER, 5000)
s.setsockopt(zmq.RCVTIMEO, 10000)
if scenario == "dealer":
    s.setsockopt(zmq.IDENTITY, b"peer-dealer")
if scenario == "sub":
    s.setsockopt(zmq.SUBSCRIBE, b"A")
if where == "bind":
    s.bind("tcp://127.0.0.1:*")
    ep = s.getsockopt(zmq.LAST_ENDPOINT)
    ep = ep.decode() if isinstance(ep, bytes) else ep
    print("PORT", ep.rsplit(":", 1)[1], flush=True)
else:
    s.connect("tcp://127.0.0.1:" + where.split(":", 1)[1])

if scenario == "router":
    # [routing id, frames...] -> [routing id, "echo", routing id, frames...]
    msg = s.recv_multipart()
    s.send_multipart([msg[0], b"echo", msg[0]] + msg[1:])
    print("OK", msg[0].decode(), flush=True)
elif scenario == "dealer":
    s.send_multipart([b"ping", b"x"])
    reply = s.recv_multipart()
    if reply != [b"pong", b"peer-dealer"]:
        sys.exit("unexpected reply %r" % (reply,))
    print("OK", flush=True)
elif scenario == "echo":
    # multipart messages, one with a frame over oxmq-netty's 8 KiB copy limit: each must come
    # back as it was sent
    sent = [[b"env", b"", b"body"], [bytes(range(256)) * 40, b"tail"], [b"last"]]
    for m in sent:
        s.send_multipart(m)
    for m in sent:
        back = s.recv_multipart()
        if back != m:
            sys.exit("echoed %r, expected %r" % ([len(f) for f in back], [len(f) for f in m]))
    print("OK", flush=True)
elif scenario == "sub":
    first = s.recv_multipart()
    if first != [b"A-data", b"part2"]:
        sys.exit("unexpected first message %r" % (first,))
    print("OK", flush=True)
elif scenario == "pub":
    deadline = time.time() + 15
    while time.time() < deadline:
        s.send_multipart([b"B-skip", b"part2"])
        s.send_multipart([b"A-data", b"part2"])
        time.sleep(0.02)
s.close()
ctx.term()
