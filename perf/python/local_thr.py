#!/usr/bin/env python3
"""local_thr <bind-to> <message-size> <message-count> [--impl=oxmq|pyzmq]

Binds a PULL socket, receives <message-count> messages and prints the throughput, timed from
the first message to the last (libzmq's tool: same command line, same output lines)."""

import time

import _impl

zmq = _impl.load()
bind_to, size, count = _impl.usage("local_thr <bind-to> <message-size> <message-count>")
ctx = zmq.Context()
s = ctx.socket(zmq.PULL)
s.bind(bind_to)
recv = s.recv
msg = recv()
if len(msg) != size:
    raise SystemExit("error in message: wrong size")
start = time.perf_counter()
for _ in range(count - 1):
    msg = recv()
elapsed = (time.perf_counter() - start) * 1e6
if len(msg) != size:
    raise SystemExit("error in message: wrong size")
_impl.print_throughput(size, count, elapsed)
s.close()
ctx.term()
