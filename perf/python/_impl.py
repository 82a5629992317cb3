"""Picks the ZeroMQ module the perf tools measure: oxmq (default) or pyzmq.

Either ``--impl=oxmq|pyzmq`` anywhere on the command line (removed before the tool parses its
arguments) or the environment variable ``OXMQ_PY_IMPL``.
"""

import os
import sys


def load():
    impl = os.environ.get("OXMQ_PY_IMPL", "oxmq")
    args = []
    for a in sys.argv[1:]:
        if a.startswith("--impl="):
            impl = a.split("=", 1)[1]
        else:
            args.append(a)
    sys.argv[1:] = args
    if impl == "oxmq":
        import oxmq as zmq
    elif impl in ("pyzmq", "zmq"):
        import zmq
    else:
        sys.exit(f"unknown --impl={impl} (oxmq or pyzmq)")
    return zmq


def usage(line):
    if len(sys.argv) != 4:
        print(f"usage: {line}")
        sys.exit(1)
    return sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def print_throughput(size, count, elapsed_us):
    elapsed_us = max(elapsed_us, 1.0)
    thr = count / (elapsed_us / 1e6)
    print(f"message size: {size} [B]")
    print(f"message count: {count}")
    print(f"mean throughput: {int(thr)} [msg/s]")
    print(f"mean throughput: {thr * size * 8 / 1e6:.3f} [Mb/s]")


def print_latency(size, roundtrips, elapsed_us):
    print(f"message size: {size} [B]")
    print(f"roundtrip count: {roundtrips}")
    print(f"average latency: {elapsed_us / (2.0 * roundtrips):.3f} [us]")
