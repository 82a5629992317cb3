#!/usr/bin/env python3
"""oxmq's async API beside its blocking API and the async-first Rust peers, over tcp loopback:

  oxmq             perf/rust's blocking tools (target/release/local_thr, ...)
  oxmq async       the same tools on oxmq::asynch on a tokio current_thread runtime
                   (target/release/async_local_thr, ...), as a user gets them: the receive
                   spins within OXMQ_RECV_SPIN (50 µs), yielding between looks; with --multi
                   also on tokio's multi-thread runtime (OXMQ_ASYNC_RT=multi)
  async, no spin   the async tools with OXMQ_RECV_SPIN_US=0: a receive that finds nothing
                   waits for the engine's wake-up at once
  async, in place  the async tools with the opt-in in-place spin (AsyncSocket::set_recv_spin,
                   50 µs), which blocks the executor's thread while it spins
  omq.rs           perf/omq (omq-tokio, I/O on the application thread, as omq's own benchmark)
  zmq.rs           perf/zmqrs (crates.io `zeromq`, tokio multi-thread runtime)
  omq-compio       perf/omq-compio (omq.rs' io_uring backend, one compio runtime on the main
                   thread); omq-compio is not on crates.io, so only after
                   `OMQ_RS_SRC=<omq.rs checkout> bash perf/omq-compio/build.sh`
  wire, spin       latency only: perf/c/build/limit/wire_lat spin, a ping-pong of one frame over
                   a plain socket, both sides busy-polling: the floor for a receive that spins
  wire, block      latency only: wire_lat block, the same with blocking reads: the floor for a
                   receive that sleeps in the kernel (every async receive without the spin)
  wire, stream     throughput only: perf/c/build/limit/wire_thr, a framed byte stream with no
                   messaging layer (ZMTP-style headers in 64 KiB writes, the reader walking every
                   frame; 10x the messages): the ceiling any ZMTP implementation over this
                   loopback shares

Throughput is PUSH -> PULL (msg/s, the clock of the receiving side as libzmq's local_thr), with
CPU ns per message of both processes (user+sys by rusage, start-up included); latency is REQ/REP
one-way (µs, remote_lat's clock) with CPU µs per round trip of both processes. Each
implementation runs once per round in rotated order (interleaved), medians over the rounds.
Then the issue's targets are judged on the medians: async >= 2x the best peer's throughput and
<= 0.5x its latency; async >= 0.8x oxmq's blocking throughput and <= 1.2x its latency. Beside
them, the bounds measured in the same run: the blocking API's throughput over the best peer's
(the engine the async API rides: async reaches 2x only if the engine does), the framed
stream's throughput over the best peer's (the wire's ceiling) and each wire floor's latency
over the best peer's (a receive that sleeps cannot beat the blocking floor).

    async_bench.py RESULT.md [--quick] [--rounds N] [--sizes 1,256] [--multi]

A peer whose tools are missing (its build failed) is left out with the reason printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (ROOT, free_port, run_local_remote, THR_RE, LAT_RE)

REL = bench.ROOT / "target" / "release"
IMPLS = [
    # (key, label, directory, tool prefix, extra environment)
    ("oxmq", "oxmq blocking", REL, "", {}),
    ("async", "oxmq async (tokio current_thread)", REL, "async_", {}),
    ("async-nospin", "oxmq async, no receive spin", REL, "async_", {"OXMQ_RECV_SPIN_US": "0"}),
    ("async-spin", "oxmq async, in-place spin 50 µs", REL, "async_", {"OXMQ_ASYNC_SPIN_US": "50"}),
    ("async-mt", "oxmq async (tokio multi-thread)", REL, "async_", {"OXMQ_ASYNC_RT": "multi"}),
    ("omq", "omq.rs (omq-tokio 0.33)", bench.ROOT / "perf" / "omq" / "target" / "release", "", {}),
    ("zmqrs", "zmq.rs (zeromq 0.7)", bench.ROOT / "perf" / "zmqrs" / "target" / "release", "", {}),
]
# omq.rs' io_uring backend: not on crates.io, so only where perf/omq-compio/build.sh was given a
# checkout of omq.rs (the column names its commit).
COMPIO = bench.ROOT / "perf" / "omq-compio"
_compio_src = COMPIO / "omq.rs" / "SOURCE_COMMIT"
IMPLS.append(("omq-compio",
              f"omq.rs (omq-compio, io_uring, {_compio_src.read_text().strip() if _compio_src.exists() else 'unbuilt'})",
              COMPIO / "target" / "release", "", {}))
# The wire's limits, no messaging layer: (key, label, wire_lat mode, or "stream" for wire_thr).
FLOORS = [
    ("wire-spin", "wire, spin (floor)", "spin"),
    ("wire-block", "wire, block (floor)", "block"),
    ("wire-stream", "wire, framed stream (ceiling)", "stream"),
]
WIRE_LAT = bench.ROOT / "perf" / "c" / "build" / "limit" / "wire_lat"
WIRE_THR = bench.ROOT / "perf" / "c" / "build" / "limit" / "wire_thr"
# The framed stream runs this many times the messages of a throughput run (it is that much faster).
STREAM_TIMES = 10
PEERS = ("omq", "omq-compio", "zmqrs")
THR_COUNT = {1: 2_000_000, 256: 1_000_000}
LAT_COUNT = 20_000
RUN_TIMEOUT = 120


class RunError(Exception):
    pass


def runs(impl, kind: str) -> bool:
    """Whether `impl` has a `kind` run: the tools both, the framed stream throughput only, the
    ping-pong floors latency only."""
    if impl[2] is not None:
        return True
    return (impl[3] == "stream") == (kind == "thr")


def run_pair(impl, kind: str, size: int, count: int) -> tuple[str, float]:
    """Runs local_KIND then remote_KIND of `impl` over a fresh port: (the output of the side that
    prints, CPU seconds of both processes)."""
    key, _, bindir, prefix, extra = impl
    port = bench.free_port()
    args = [f"tcp://127.0.0.1:{port}", str(size), str(count)]
    if bindir is None and prefix == "stream":
        local, remote = ([str(WIRE_THR), side] + args for side in ("local", "remote"))
    elif bindir is None:  # a wire floor: prefix is wire_lat's mode
        local, remote = ([str(WIRE_LAT), side] + args + [prefix] for side in ("local", "remote"))
    else:
        local, remote = ([str(bindir / f"{prefix}{side}_{kind}")] + args for side in ("local", "remote"))
    try:
        outs, cpu = bench.run_local_remote(local, remote, port, RUN_TIMEOUT, dict(os.environ, **extra))
    except RuntimeError as e:
        raise RunError(f"{key} {kind} {size} B: {e}") from None
    return (outs[0] if kind == "thr" else outs[1]), cpu


def available(impls):
    ok = []
    for impl in impls:
        if impl[2] is None:
            tool = WIRE_THR if impl[3] == "stream" else WIRE_LAT
            if tool.exists():
                ok.append(impl)
            else:
                print(f"async section: {impl[1]} left out: missing {tool} (make -C perf/c limit)", file=sys.stderr)
            continue
        missing = [f"{impl[3]}{t}" for t in ("local_thr", "remote_thr", "local_lat", "remote_lat")
                   if not (impl[2] / f"{impl[3]}{t}").exists()]
        if missing:
            print(f"async section: {impl[1]} left out: missing {', '.join(missing)} in {impl[2]}", file=sys.stderr)
        else:
            ok.append(impl)
    return ok


def measure(impls, rounds: int, sizes: list[int]) -> dict:
    res: dict = {}
    jobs = [(i, "thr", s) for s in sizes for i in impls if runs(i, "thr")]
    jobs += [(i, "lat", s) for s in sizes for i in impls if runs(i, "lat")]
    for r in range(rounds):
        k = (r * len(impls)) % len(jobs)
        for impl, kind, size in jobs[k:] + jobs[:k]:
            count = THR_COUNT.get(size, 200_000) if kind == "thr" else LAT_COUNT
            if impl[3] == "stream" and impl[2] is None:
                count *= STREAM_TIMES
            out, cpu = run_pair(impl, kind, size, count)
            m = (bench.THR_RE if kind == "thr" else bench.LAT_RE).search(out)
            if not m:
                raise RunError(f"{impl[0]} {kind} {size}: no result line in {out!r}")
            row = (float(m.group(1)), cpu * (1e9 if kind == "thr" else 1e6) / count)
            res.setdefault(f"{impl[0]}/{kind}/{size}", []).append(row)
            print(f"  round {r + 1}: {impl[0]} {kind} {size} B: {row[0]:.3f}, CPU {row[1]:.1f}", file=sys.stderr)
    return res


def med(res, key, i=0):
    rows = res.get(key)
    return statistics.median(r[i] for r in rows) if rows else None


def rate(v: float) -> str:
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.0f} k"


def tables(impls, res: dict, rounds: int, sizes: list[int]) -> str:
    load = os.getloadavg()
    keys = [i[0] for i in impls if runs(i, "lat")]
    labels = [i[1] for i in impls if runs(i, "lat")]
    thr_keys = [i[0] for i in impls if runs(i, "thr")]
    thr_labels = [i[1] for i in impls if runs(i, "thr")]
    out = [
        "## The async API beside the blocking API and the async Rust peers (tcp)",
        "",
        f"PUSH → PULL throughput and REQ/REP one-way latency, one connection over tcp loopback, {rounds} "
        "interleaved round(s), medians; CPU is user+sys of both processes (start-up included). Load average "
        f"at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}. Command: "
        "`bash perf/harness/sections.d/30-async.sh RESULT.md`.",
        "",
        "### Throughput (msg/s; CPU ns per message, both processes)",
        "",
        "| size | " + " | ".join(thr_labels) + " |",
        "|---|" + "---|" * len(thr_labels),
    ]
    for size in sizes:
        cells = []
        for k in thr_keys:
            v, c = med(res, f"{k}/thr/{size}"), med(res, f"{k}/thr/{size}", 1)
            cells.append(f"{rate(v)} ({c:.0f})" if v is not None else "")
        out.append(f"| {size} B | " + " | ".join(cells) + " |")
    out += ["", "### One-way latency (µs; CPU µs per round trip, both processes)", "",
            "| size | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for size in sizes:
        cells = []
        for k in keys:
            v, c = med(res, f"{k}/lat/{size}"), med(res, f"{k}/lat/{size}", 1)
            cells.append(f"{v:.1f} ({c:.1f})" if v is not None else "")
        out.append(f"| {size} B | " + " | ".join(cells) + " |")
    out += ["", "### Targets (oxmq async as shipped, on tokio current_thread, and multi-thread with --multi; the in-place spin beside)", "",
            "| variant | size | thr / best peer (≥ 2) | lat / best peer (≤ 0.5) | thr / blocking (≥ 0.8) | lat / blocking (≤ 1.2) |",
            "|---|---|---|---|---|---|"]
    for variant in ("async", "async-mt", "async-spin"):
        if variant not in keys:
            continue
        for size in sizes:
            a_thr, a_lat = med(res, f"{variant}/thr/{size}"), med(res, f"{variant}/lat/{size}")
            b_thr, b_lat = med(res, f"oxmq/thr/{size}"), med(res, f"oxmq/lat/{size}")
            p_thr = max((v for v in (med(res, f"{p}/thr/{size}") for p in PEERS) if v is not None), default=None)
            p_lat = min((v for v in (med(res, f"{p}/lat/{size}") for p in PEERS) if v is not None), default=None)

            def judge(x, y, ok):
                if x is None or y is None:
                    return "n/a"
                r = x / y
                return f"{r:.2f}× {'met' if ok(r) else 'NOT met'}"

            out.append(f"| {variant} | {size} B | {judge(a_thr, p_thr, lambda r: r >= 2)} | "
                       f"{judge(a_lat, p_lat, lambda r: r <= 0.5)} | {judge(a_thr, b_thr, lambda r: r >= 0.8)} | "
                       f"{judge(a_lat, b_lat, lambda r: r <= 1.2)} |")
    out += ["", "### Bounds measured in this run (over the best peer)", "",
            "| size | blocking API thr (the engine async rides) | framed stream thr (the wire's ceiling) "
            "| wire spin floor, lat | wire block floor, lat |",
            "|---|---|---|---|---|"]
    for size in sizes:
        p_thr = max((v for v in (med(res, f"{p}/thr/{size}") for p in PEERS) if v is not None), default=None)
        p_lat = min((v for v in (med(res, f"{p}/lat/{size}") for p in PEERS) if v is not None), default=None)

        def ratio(x, y):
            return f"{x / y:.2f}×" if x is not None and y else "n/a"

        out.append(f"| {size} B | {ratio(med(res, f'oxmq/thr/{size}'), p_thr)} | "
                   f"{ratio(med(res, f'wire-stream/thr/{size}'), p_thr)} | "
                   f"{ratio(med(res, f'wire-spin/lat/{size}'), p_lat)} | {ratio(med(res, f'wire-block/lat/{size}'), p_lat)} |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--sizes", default="1,256")
    ap.add_argument("--multi", action="store_true", help="also oxmq async on tokio's multi-thread runtime")
    args, _ = ap.parse_known_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    rounds = args.rounds or (1 if args.quick else 5)
    if args.quick:
        for k in THR_COUNT:
            THR_COUNT[k] //= 10
        global LAT_COUNT
        LAT_COUNT //= 10
    impls = [i for i in IMPLS if args.multi or i[0] != "async-mt"]
    impls += [(key, label, None, mode, {}) for key, label, mode in FLOORS]
    impls = available(impls)
    if not any(i[0] == "async" for i in impls):
        print("async section: oxmq's async tools are missing (cargo build --release -p oxmq-perf)", file=sys.stderr)
        return 1
    try:
        res = measure(impls, rounds, sizes)
    except RunError as e:
        print(f"async section failed: {e}", file=sys.stderr)
        return 1
    text = tables(impls, res, rounds, sizes)
    print(text)
    result = Path(args.result)
    with result.open("a") as f:
        f.write("\n" + text)
    result.with_name(result.stem + "-async.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
