#!/usr/bin/env python3
"""remote_thr <host> <message-size> <message-count>: local exchange "E" bound to the global
queue "Q" by name; sends the messages and waits until they are delivered."""
from itertools import repeat

from oxmq import wiring as pyzmq
import _wiring_perf as u


def main():
    host, size, count = u.usage("remote_thr <host> <message-size> <message-count>", 3)
    size, count = int(size), int(count)
    w = pyzmq.ZMQ(host)
    eid = w.create_exchange("E", pyzmq.SCOPE_LOCAL)
    w.bind("E", "Q")
    msg = bytes(size)
    send = w.send
    for _ in repeat(None, count):
        send(eid, msg)
    w.close()


main()
