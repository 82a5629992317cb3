"""Shared bits of the wiring perf tools in Python: argument parsing and libzmq's output lines
(the harness parses them), over ``oxmq.wiring``."""
import sys


def usage(line, n):
    if len(sys.argv) != n + 1:
        raise SystemExit("usage: " + line)
    return sys.argv[1:]


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
    print(f"average latency: {elapsed_us / (roundtrips * 2):.3f} [us]")
