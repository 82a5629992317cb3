#!/usr/bin/env python3
"""The thread-safe draft sockets beside the classic pairs, on oxmq (perf/c/draft_thr.c,
draft_lat.c): a user moving from REQ/REP or PUSH/PULL to CLIENT/SERVER or PEER should not pay
for the thread safety they may not use. Debian's libzmq is built without the draft API, so
there is no libzmq column.

  throughput  PUSH -> PULL, CLIENT -> SERVER, PEER -> PEER: msg/s and the CPU per message of
              both processes (user+sys by rusage, start-up included: a few hundred
              microseconds against runs of ~0.3 s)
  latency     REQ/REP (waiting in zmq_msg_recv, and in zmq_poll as event loops do),
              CLIENT/SERVER, PEER/PEER round trips: one-way latency and CPU per round trip

tcp loopback, one connection, each pair run once per round in rotated order (interleaved), and
medians over the rounds.

    draft_bench.py RESULT.md [--quick] [--rounds N] [--sizes 1,256]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (free_port, run_local_remote, THR_RE, LAT_RE)

TOOLS = bench.ROOT / "perf" / "c" / "build" / "oxmq"
THR_PATTERNS = [("pushpull", "PUSH → PULL"), ("clientserver", "CLIENT → SERVER"), ("peer", "PEER → PEER")]
LAT_PATTERNS = [("reqrep", "REQ/REP"), ("reqrep-poll", "REQ/REP in zmq_poll"), ("clientserver", "CLIENT/SERVER"),
                ("peer", "PEER/PEER")]
THR_COUNT = {1: 3_000_000, 16: 3_000_000, 256: 1_500_000, 4096: 300_000}
LAT_COUNT = 20_000
RUN_TIMEOUT = 120


class RunError(Exception):
    pass


def run_pair(tool: str, pattern: str, size: int, count: int) -> tuple[str, float]:
    """Runs `tool local` and `tool remote` over a fresh tcp port: (the output of the side that
    prints, seconds of CPU of both: the rusage of waited-for children, before and after)."""
    port = bench.free_port()
    args = [f"tcp://127.0.0.1:{port}", str(size), str(count), pattern]
    exe = str(TOOLS / tool)
    try:
        outs, cpu = bench.run_local_remote([exe, "local"] + args, [exe, "remote"] + args, port, RUN_TIMEOUT)
    except RuntimeError as e:
        raise RunError(f"{tool} {pattern} {size} B: {e}") from None
    return (outs[1] if tool == "draft_thr" else outs[0]), cpu


def measure(rounds: int, sizes: list[int]) -> dict:
    res: dict = {"thr": {}, "lat": {}}
    jobs = [("thr", p, s) for s in sizes for p, _ in THR_PATTERNS] + [("lat", p, 1) for p, _ in LAT_PATTERNS]
    for r in range(rounds):
        k = r % len(jobs)
        for kind, pattern, size in jobs[k:] + jobs[:k]:
            if kind == "thr":
                count = THR_COUNT.get(size, 100_000)
                out, cpu = run_pair("draft_thr", pattern, size, count)
                m = bench.THR_RE.search(out)
                if not m:
                    raise RunError(f"draft_thr {pattern} {size}: no throughput line")
                row = (float(m.group(1)), cpu * 1e9 / count)
            else:
                out, cpu = run_pair("draft_lat", pattern, size, LAT_COUNT)
                m = bench.LAT_RE.search(out)
                if not m:
                    raise RunError(f"draft_lat {pattern}: no latency line")
                row = (float(m.group(1)), cpu * 1e6 / LAT_COUNT)
            res[kind].setdefault(f"{pattern}/{size}", []).append(row)
            print(f"  round {r + 1}: {kind} {pattern} {size} B: {row[0]:.3f}, CPU {row[1]:.1f}", file=sys.stderr)
    return res


def med(rows, i):
    return statistics.median(r[i] for r in rows)


def rate(v: float) -> str:
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.0f} k"


def tables(res: dict, rounds: int, sizes: list[int]) -> str:
    load = os.getloadavg()
    out = [
        "## Thread-safe draft sockets beside the classic pairs, and waits in zmq_poll (oxmq)",
        "",
        f"perf/c's draft_thr and draft_lat on oxmq; tcp loopback, one connection, {rounds} interleaved round(s), "
        f"medians; CPU is user+sys of both processes (start-up included). Debian's libzmq has no draft API, so no "
        f"libzmq column. Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}. Command: "
        "`bash perf/harness/sections.d/20-draft.sh RESULT.md`.",
        "",
        "### Throughput (msg/s; CPU ns per message, both processes)",
        "",
        "| size | " + " | ".join(label for _, label in THR_PATTERNS) + " | CLIENT→SERVER / PUSH→PULL | PEER / PUSH→PULL |",
        "|---|" + "---|" * (len(THR_PATTERNS) + 2),
    ]
    for size in sizes:
        rows = [res["thr"][f"{p}/{size}"] for p, _ in THR_PATTERNS]
        cells = [f"{rate(med(r, 0))} ({med(r, 1):.0f})" for r in rows]
        base = med(rows[0], 0)
        out.append(f"| {size} B | " + " | ".join(cells) + f" | {med(rows[1], 0) / base:.2f}× | {med(rows[2], 0) / base:.2f}× |")
    out += [
        "",
        "### One-way latency, 1 B (µs; CPU µs per round trip, both processes)",
        "",
        "| " + " | ".join(label for _, label in LAT_PATTERNS) + " | in zmq_poll / REQ/REP | CLIENT/SERVER / REQ/REP | PEER / REQ/REP |",
        "|" + "---|" * (len(LAT_PATTERNS) + 3),
    ]
    rows = [res["lat"][f"{p}/1"] for p, _ in LAT_PATTERNS]
    base = med(rows[0], 0)
    out.append("| " + " | ".join(f"{med(r, 0):.2f} ({med(r, 1):.1f})" for r in rows) + " | "
               + " | ".join(f"{med(r, 0) / base:.2f}×" for r in rows[1:]) + " |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--sizes", default="1,256")
    args, _ = ap.parse_known_args()
    missing = [t for t in ("draft_thr", "draft_lat") if not (TOOLS / t).exists()]
    if missing:
        print(f"draft section: missing tools {missing} (make -C perf/c oxmq)", file=sys.stderr)
        return 1
    sizes = [int(s) for s in args.sizes.split(",") if s]
    rounds = args.rounds or (1 if args.quick else 3)
    if args.quick:
        for k in THR_COUNT:
            THR_COUNT[k] //= 10
        global LAT_COUNT
        LAT_COUNT //= 10
    try:
        res = measure(rounds, sizes)
    except RunError as e:
        print(f"draft section failed: {e}", file=sys.stderr)
        return 1
    text = tables(res, rounds, sizes)
    print(text)
    result = Path(args.result)
    with result.open("a") as f:
        f.write("\n" + text)
    result.with_name(result.stem + "-draft.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
