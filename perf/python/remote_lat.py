#!/usr/bin/env python3
"""remote_lat <connect-to> <message-size> <roundtrip-count> [--impl=oxmq|pyzmq]

Connects a REQ socket, sends <roundtrip-count> messages and waits for each echo; prints half
the mean round-trip time (libzmq's tool: same command line, same output lines)."""

import time
from itertools import repeat

import _impl

zmq = _impl.load()


def main():
    connect_to, size, count = _impl.usage("remote_lat <connect-to> <message-size> <roundtrip-count>")
    ctx = zmq.Context()
    s = ctx.socket(zmq.REQ)
    s.connect(connect_to)
    data = b"\0" * size
    recv, send = s.recv, s.send
    start = time.perf_counter()
    for _ in repeat(None, count):
        send(data)
        msg = recv()
        if len(msg) != size:
            raise SystemExit("error in message: wrong size")
    elapsed = (time.perf_counter() - start) * 1e6
    _impl.print_latency(size, count, elapsed)
    s.close()
    ctx.term()


# A function, not module-level code: see local_thr.py.
main()
