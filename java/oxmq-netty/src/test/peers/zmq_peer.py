"""Interop peer for oxmq-netty's tests: a ZeroMQ socket driven through pyzmq's API.

    python3 zmq_peer.py MODULE SCENARIO bind|connect:PORT

MODULE is `zmq` (pyzmq, libzmq) or `oxmq` (oxmq's Python package). SCENARIO names the peer's
socket (router, dealer, pub, sub), or `echo`: a DEALER whose messages must come back unchanged. Prints `PORT n` after
binding, `OK ...` when its scenario succeeded (then exits 0), or exits non-zero. Every wait is
bounded by a 10 s receive timeout.

With PLAIN (RFC 24): `plain-router` is a ROUTER that is a PLAIN server (a ZAP handler accepts
admin/secret) and otherwise the router scenario; `plain-dealer` a DEALER that is a PLAIN client
(admin/secret), otherwise the dealer scenario; `plain-refuses` the PLAIN server ROUTER, which
must receive nothing (the client's password is wrong); `plain-refused` a PLAIN client DEALER
with a wrong password, whose message must never be answered. `heartbeat` is the dealer scenario
after 1.5 s of silence, with libzmq's heartbeats on (PING every 100 ms, timeout 300 ms, TTL
500 ms): the connection must outlive it on both sides.
"""
import importlib
import sys
import threading
import time

zmq = importlib.import_module(sys.argv[1])
scenario, where = sys.argv[2], sys.argv[3]

ctx = zmq.Context()
kind = {"router": zmq.ROUTER, "dealer": zmq.DEALER, "pub": zmq.PUB, "sub": zmq.SUB,
        "echo": zmq.DEALER, "plain-router": zmq.ROUTER, "plain-refuses": zmq.ROUTER,
        "plain-dealer": zmq.DEALER, "plain-refused": zmq.DEALER, "heartbeat": zmq.DEALER}[scenario]


def zap_handler(ready):
    """Answers ZAP requests (RFC 27) on this context: PLAIN admin/secret only."""
    h = ctx.socket(zmq.REP)
    h.setsockopt(zmq.LINGER, 0)
    h.bind("inproc://zeromq.zap.01")
    ready.set()
    while True:
        try:
            req = h.recv_multipart()
        except zmq.ContextTerminated:
            break
        version, rid, mech = req[0], req[1], req[5]
        ok = mech == b"PLAIN" and req[6:8] == [b"admin", b"secret"]
        h.send_multipart([version, rid, b"200" if ok else b"400",
                          b"OK" if ok else b"Invalid username or password",
                          b"admin" if ok else b"", b""])
    h.close()


if scenario in ("plain-router", "plain-refuses"):
    ready = threading.Event()
    threading.Thread(target=zap_handler, args=(ready,), daemon=True).start()
    ready.wait(10)
s = ctx.socket(kind)
s.setsockopt(zmq.LINGER, 5000)
s.setsockopt(zmq.RCVTIMEO, 10000)
if scenario in ("plain-router", "plain-refuses"):
    s.setsockopt(zmq.PLAIN_SERVER, 1)
    s.setsockopt(zmq.ZAP_DOMAIN, b"global")
    scenario = scenario.replace("plain-", "") if scenario == "plain-router" else scenario
if scenario in ("plain-dealer", "plain-refused"):
    s.setsockopt(zmq.PLAIN_USERNAME, b"admin")
    s.setsockopt(zmq.PLAIN_PASSWORD, b"secret" if scenario == "plain-dealer" else b"guess")
    scenario = "dealer" if scenario == "plain-dealer" else scenario
if scenario == "heartbeat":
    s.setsockopt(zmq.HEARTBEAT_IVL, 100)
    s.setsockopt(zmq.HEARTBEAT_TIMEOUT, 300)
    s.setsockopt(zmq.HEARTBEAT_TTL, 500)
    s.setsockopt(zmq.IDENTITY, b"peer-dealer")
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
elif scenario == "heartbeat":
    # The first message goes out once connected; then 1.5 s with nothing but heartbeats; then
    # a second message must still reach the other side, and its reply come back.
    s.send_multipart([b"ping", b"x"])
    time.sleep(1.5)
    s.send_multipart([b"ping", b"y"])
    reply = s.recv_multipart()
    if reply != [b"pong", b"peer-dealer"]:
        sys.exit("unexpected reply %r" % (reply,))
    print("OK", flush=True)
elif scenario == "plain-refuses":
    s.setsockopt(zmq.RCVTIMEO, 3000)
    try:
        msg = s.recv_multipart()
        sys.exit("a refused client's message arrived: %r" % (msg,))
    except zmq.Again:
        print("OK refused", flush=True)
elif scenario == "plain-refused":
    s.setsockopt(zmq.RCVTIMEO, 3000)
    s.setsockopt(zmq.SNDTIMEO, 3000)  # a bound DEALER has no pipe until a handshake completes
    s.setsockopt(zmq.LINGER, 0)
    try:
        s.send_multipart([b"ping", b"x"])
        reply = s.recv_multipart()
        sys.exit("a refused client got a reply: %r" % (reply,))
    except zmq.Again:
        print("OK refused", flush=True)
elif scenario == "pub":
    deadline = time.time() + 15
    while time.time() < deadline:
        s.send_multipart([b"B-skip", b"part2"])
        s.send_multipart([b"A-data", b"part2"])
        time.sleep(0.02)
s.close()
ctx.term()
