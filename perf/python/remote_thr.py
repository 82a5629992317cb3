#!/usr/bin/env python3
"""remote_thr <connect-to> <message-size> <message-count> [--impl=oxmq|pyzmq]

Connects a PUSH socket and sends <message-count> messages of <message-size> bytes."""

from itertools import repeat

import _impl

zmq = _impl.load()


def main():
    connect_to, size, count = _impl.usage("remote_thr <connect-to> <message-size> <message-count>")
    ctx = zmq.Context()
    s = ctx.socket(zmq.PUSH)
    s.connect(connect_to)
    data = b"\0" * size
    send = s.send
    for _ in repeat(None, count):
        send(data)
    s.close()  # LINGER -1: delivers everything before the context terminates
    ctx.term()


# A function, not module-level code: see local_thr.py.
main()
