#!/usr/bin/env python3
"""local_lat <bind-to> <message-size> <roundtrip-count> [--impl=oxmq|pyzmq]

Binds a REP socket and echoes <roundtrip-count> messages back."""

from itertools import repeat

import _impl

zmq = _impl.load()


def main():
    bind_to, size, count = _impl.usage("local_lat <bind-to> <message-size> <roundtrip-count>")
    ctx = zmq.Context()
    s = ctx.socket(zmq.REP)
    s.bind(bind_to)
    recv, send = s.recv, s.send
    for _ in repeat(None, count):
        msg = recv()
        if len(msg) != size:
            raise SystemExit("error in message: wrong size")
        send(msg)
    s.close()
    ctx.term()


# A function, not module-level code: see local_thr.py.
main()
