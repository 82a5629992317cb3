#!/usr/bin/env python3
"""local_lat <host> <location> <message-size> <roundtrip-count>: the echo side, with the
global queue "QG" and the global exchange "EG"."""
from itertools import repeat

from oxmq import wiring as pyzmq
import _wiring_perf as u


def main():
    host, location, size, roundtrips = u.usage("local_lat <host> <location> <message-size> <roundtrip-count>", 4)
    size, roundtrips = int(size), int(roundtrips)
    w = pyzmq.ZMQ(host)
    w.create_queue("QG", pyzmq.SCOPE_GLOBAL, location)
    eid = w.create_exchange("EG", pyzmq.SCOPE_GLOBAL, location)
    print("ready", flush=True)
    receive, send = w.receive, w.send
    for _ in repeat(None, roundtrips):
        msg = receive()
        send(eid, msg)
    if len(msg) != size:
        raise SystemExit("error in message: wrong size")
    w.close()


main()
