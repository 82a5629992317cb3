#!/usr/bin/env python3
"""remote_lat <host> <message-size> <roundtrip-count>: binds "EL" -> "QG" and "EG" -> "QL"
by name, then times the round trips and prints half of one."""
import time
from itertools import repeat

from oxmq import wiring as pyzmq
import _wiring_perf as u


def main():
    host, size, roundtrips = u.usage("remote_lat <host> <message-size> <roundtrip-count>", 3)
    size, roundtrips = int(size), int(roundtrips)
    w = pyzmq.ZMQ(host)
    eid = w.create_exchange("EL", pyzmq.SCOPE_LOCAL)
    w.create_queue("QL", pyzmq.SCOPE_LOCAL)
    w.bind("EG", "QL")
    w.bind("EL", "QG")
    msg = bytes(size)
    receive, send = w.receive, w.send
    start = time.perf_counter()
    for _ in repeat(None, roundtrips):
        send(eid, msg)
        msg = receive()
    elapsed = (time.perf_counter() - start) * 1e6
    if len(msg) != size:
        raise SystemExit("error in message: wrong size")
    u.print_latency(size, roundtrips, elapsed)
    w.close()


main()
