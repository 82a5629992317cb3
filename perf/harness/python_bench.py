#!/usr/bin/env python3
"""oxmq's Python package vs pyzmq, side by side: tcp throughput and latency, 1 B to 64 KiB.

Runs perf/python/{local,remote}_{thr,lat}.py once with --impl=oxmq and once with --impl=pyzmq
per round, alternating which goes first (A B, B A, A B), so both see the same machine weather.
Prints a markdown table of medians with min-max and the oxmq/pyzmq ratio. Given the JSON
results of perf/harness/bench.py (C tools against oxmq and libzmq), it adds the Python/C
ratios: oxmq-python against oxmq's C ABI, pyzmq against libzmq (the papers' comparison).
With --c-tools it runs the C tools itself (perf/c/build/{oxmq,libzmq}, as bench.py builds
them) inside the same interleaved rounds, so each Python/C ratio compares runs made minutes,
not a whole benchmark, apart: on shared cores whose speed swings 2x that is the fair ratio.

    perf/harness/python_bench.py [C-RESULTS.json] [--c-tools] [--rounds 3]
                                 [--sizes 1,16,256,4096,65536]
                                 [--python /path/to/venv/bin/python] [--json OUT.json]

The Python interpreter must have both `oxmq` and `zmq` (pyzmq) importable; by default the one
running this script. Takes about 2-3 minutes with the defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "perf" / "python"
IMPLS = ["oxmq", "pyzmq"]
SIZES = [1, 16, 256, 4096, 65536]
# Chosen so one run takes ~0.2-1 s for either implementation.
THR_COUNT = {1: 400_000, 16: 400_000, 256: 300_000, 4096: 100_000, 65536: 10_000}
LAT_COUNT = {1: 3_000, 16: 3_000, 256: 3_000, 4096: 2_000, 65536: 1_000}
# The C tools run bench.py's counts (they are 2-5x faster than the Python ones).
C_THR_COUNT = {1: 2_000_000, 16: 2_000_000, 256: 1_000_000, 4096: 200_000, 65536: 20_000}
C_LAT_COUNT = {1: 5_000, 16: 5_000, 256: 5_000, 4096: 4_000, 65536: 1_500}
# perf/c/build/<impl> and the library it runs on (None: the system's libzmq).
C_TOOLS = {"oxmq": (ROOT / "perf/c/build/oxmq", ROOT / "dist/lib"), "libzmq": (ROOT / "perf/c/build/libzmq", None)}
RUN_TIMEOUT = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_pair(py: str, kind: str, impl: str, size: int) -> float:
    """One run: the bound side reports (thr: msg/s; lat: us). `impl` is a Python one (oxmq,
    pyzmq) or, prefixed with "c-", one of C_TOOLS."""
    port = free_port()
    ep = f"tcp://127.0.0.1:{port}"
    local, remote = (f"local_{kind}", f"remote_{kind}")
    env = None
    if impl.startswith("c-"):
        bindir, libdir = C_TOOLS[impl[2:]]
        count = C_THR_COUNT[size] if kind == "thr" else C_LAT_COUNT[size]
        args = [ep, str(size), str(count)]
        cmds = [[str(bindir / local)] + args, [str(bindir / remote)] + args]
        env = dict(os.environ, LD_LIBRARY_PATH=str(libdir) if libdir else "")
    else:
        count = THR_COUNT[size] if kind == "thr" else LAT_COUNT[size]
        args = [ep, str(size), str(count), f"--impl={impl}"]
        cmds = [[py, str(TOOLS / f"{local}.py")] + args, [py, str(TOOLS / f"{remote}.py")] + args]
    srv = subprocess.Popen(cmds[0], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(0.3)  # the bound side must be up first (connect retries anyway)
    cli = subprocess.run(cmds[1], capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)
    out, err = srv.communicate(timeout=RUN_TIMEOUT)
    text = out + cli.stdout
    for line in text.splitlines():
        if kind == "thr" and line.startswith("mean throughput:") and "[msg/s]" in line:
            return float(line.split()[2])
        if kind == "lat" and line.startswith("average latency:"):
            return float(line.split()[2])
    raise RuntimeError(f"{impl} {kind} {size}: no result\n{text}\n{err}\n{cli.stderr}")


def c_numbers(path: str | None) -> dict:
    """{(kind, size, impl): median} from bench.py's JSON (tcp only)."""
    if not path:
        return {}
    d = json.loads(Path(path).read_text())
    out = {}
    for s in d.get("samples", []):
        if s.get("transport") != "tcp" or s.get("impl") not in ("oxmq", "libzmq"):
            continue
        vals = []
        for r in s.get("runs", []):
            if s["kind"] == "thr" and "msgs" in r:
                vals.append(r["msgs"])
            elif s["kind"] == "lat":
                v = next((r[k] for k in ("us", "latency_us", "latency", "lat") if k in r), None)
                if v is None:
                    v = next((x for x in r.values() if isinstance(x, (int, float))), None)
                if v is not None:
                    vals.append(v)
        if vals:
            out[(s["kind"], s["size"], s["impl"])] = statistics.median(vals)
    return out


def fmt(kind: str, v: float) -> str:
    if kind == "thr":
        return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.0f} k"
    return f"{v:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("c_results", nargs="?", help="JSON from perf/harness/bench.py (for Python/C ratios)")
    ap.add_argument("--c-tools", action="store_true",
                    help="run the C tools (perf/c/build/oxmq on dist/lib, perf/c/build/libzmq) in the same rounds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--kinds", default="thr,lat")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json", help="also write the raw samples here")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    kinds = a.kinds.split(",")
    for mod in ("oxmq", "zmq"):
        if subprocess.run([a.python, "-c", f"import {mod}"], capture_output=True).returncode != 0:
            print(f"{a.python} cannot import {mod}; pip install ./python pyzmq", file=sys.stderr)
            return 2
    impls = IMPLS + (["c-oxmq", "c-libzmq"] if a.c_tools else [])
    if a.c_tools:
        for name, (bindir, libdir) in C_TOOLS.items():
            if not (bindir / "local_thr").exists() or (libdir and not libdir.exists()):
                print(f"missing {bindir} or {libdir}: scripts/build-dist.sh && make -C perf/c DIST=$PWD/dist",
                      file=sys.stderr)
                return 2
    samples: dict = {}
    t0 = time.time()
    for r in range(a.rounds):
        order = impls if r % 2 == 0 else impls[::-1]
        for kind in kinds:
            for size in sizes:
                for impl in order:
                    v = run_pair(a.python, kind, impl, size)
                    samples.setdefault((kind, size, impl), []).append(v)
                    print(f"round {r + 1} {kind} {size:>6} B {impl:6} {fmt(kind, v)}", file=sys.stderr)
    c = c_numbers(a.c_results)
    if a.c_tools:
        c = {(k, sz, i[2:]): statistics.median(v) for (k, sz, i), v in samples.items() if i.startswith("c-")}
    ver = subprocess.run([a.python, "-c", "import zmq, oxmq; print(zmq.__version__, zmq.zmq_version(), oxmq.__version__)"],
                         capture_output=True, text=True).stdout.split()
    print(f"\n### Python: oxmq vs pyzmq {ver[0] if ver else '?'} (libzmq {ver[1] if len(ver) > 1 else '?'}), tcp loopback, "
          f"{a.rounds} interleaved rounds, median (min-max), {time.time() - t0:.0f} s"
          f"{'; C tools in the same rounds' if a.c_tools else ''}\n")
    head = "| kind | size | oxmq-python | pyzmq | oxmq/pyzmq |"
    sep = "|---|---|---|---|---|"
    if c:
        head += " oxmq-py / oxmq-C | pyzmq / libzmq-C |"
        sep += "---|---|"
        if a.c_tools:
            head += " oxmq-C | libzmq-C |"
            sep += "---|---|"
    print(head)
    print(sep)
    for kind in kinds:
        for size in sizes:
            o, p = samples[(kind, size, "oxmq")], samples[(kind, size, "pyzmq")]
            mo, mp = statistics.median(o), statistics.median(p)
            unit = "msg/s" if kind == "thr" else "µs"
            cell = lambda v, m: f"{fmt(kind, m)} ({fmt(kind, min(v))}-{fmt(kind, max(v))})"  # noqa: E731
            row = f"| {'throughput' if kind == 'thr' else 'latency'} {unit} | {size} B | {cell(o, mo)} | {cell(p, mp)} | {mo / mp:.2f}× |"
            if c:
                co, cl = c.get((kind, size, "oxmq")), c.get((kind, size, "libzmq"))
                row += f" {mo / co:.2f} |" if co else " — |"
                row += f" {mp / cl:.2f} |" if cl else " — |"
                if a.c_tools:
                    row += f" {fmt(kind, co)} | {fmt(kind, cl)} |"
            print(row)
    print("\nthroughput: higher is better (ratio > 1 favours oxmq); latency: one-way, lower is better "
          "(ratio < 1 favours oxmq). Python/C: throughput as a fraction of C, latency as a multiple of C.")
    if a.json:
        Path(a.json).write_text(json.dumps([{"kind": k, "size": s, "impl": i, "runs": v} for (k, s, i), v in samples.items()], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
