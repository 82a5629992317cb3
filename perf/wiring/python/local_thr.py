#!/usr/bin/env python3
"""local_thr <host> <location> <message-size> <message-count>: the global queue "Q"; prints
the throughput timed from the first message (as perf/wiring/c/local_thr.c)."""
import time
from itertools import repeat

from oxmq import wiring as pyzmq
import _wiring_perf as u


def main():
    host, location, size, count = u.usage("local_thr <host> <location> <message-size> <message-count>", 4)
    size, count = int(size), int(count)
    w = pyzmq.ZMQ(host)
    w.create_queue("Q", pyzmq.SCOPE_GLOBAL, location)
    print("ready", flush=True)
    receive = w.receive
    if len(receive()) != size:
        raise SystemExit("error in message: wrong size")
    start = time.perf_counter()
    for _ in repeat(None, count - 1):
        msg = receive()
    elapsed = (time.perf_counter() - start) * 1e6
    if count > 1 and len(msg) != size:
        raise SystemExit("error in message: wrong size")
    u.print_throughput(size, count, elapsed)
    w.close()


main()
