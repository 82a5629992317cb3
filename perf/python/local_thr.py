#!/usr/bin/env python3
"""local_thr <bind-to> <message-size> <message-count> [--impl=oxmq|pyzmq]

Binds a PULL socket, receives <message-count> messages and prints the throughput, timed from
the first message to the last (libzmq's tool: same command line, same output lines)."""

import time
from itertools import repeat

import _impl

zmq = _impl.load()


def main():
    bind_to, size, count = _impl.usage("local_thr <bind-to> <message-size> <message-count>")
    ctx = zmq.Context()
    s = ctx.socket(zmq.PULL)
    s.bind(bind_to)
    recv = s.recv
    msg = recv()
    if len(msg) != size:
        raise SystemExit("error in message: wrong size")
    start = time.perf_counter()
    for _ in repeat(None, count - 1):
        msg = recv()
    elapsed = (time.perf_counter() - start) * 1e6
    if len(msg) != size:
        raise SystemExit("error in message: wrong size")
    _impl.print_throughput(size, count, elapsed)
    s.close()
    ctx.term()


# The loop runs inside a function: module-level code keeps its variables in a dict, which
# would add a dict store and lookups to every message and measure that instead of the library.
# `repeat` (timeit's idiom) counts without creating an int object per message.
main()
