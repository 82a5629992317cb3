#!/usr/bin/env python3
"""The Node.js section of the benchmark: zeromq.js 6.5 (its promise API) on three libzmqs,
with perf/node's tools (libzmq's local_thr/remote_thr/local_lat/remote_lat command lines).

Columns, run in interleaved rounds (each round runs every column once per size, in rotated
order, so all see the same machine weather):

  oxmq      the addon compiled against oxmq's dist/lib/libzmq.so.5 (tests/node/zeromq-build.sh)
  bundled   the npm package's own prebuilt addon, libzmq 4.3.5 linked in (what `npm install
            zeromq` gives a user)
  debian    the addon compiled against Debian's libzmq 4.3.4

Throughput is PUSH/PULL over tcp loopback, latency REQ/REP. CPU per message is each process's
user+sys (Node's thread and libzmq's I/O threads) over its timed span, measured by the tools
themselves (process.cpuUsage), so Node's start-up is outside it.

    node_bench.py RESULT.md NODE_SUITE_DIR [--quick] [--rounds N] [--sizes 1,256] [--scale F]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (free_port, wait_listening, ratio)
from cells import med, fmt_thr, fmt  # noqa: E402  (perf/harness/cells.py)


ROOT = bench.ROOT
TOOLS = ROOT / "perf" / "node"
THR_COUNT = {1: 300_000, 16: 300_000, 256: 200_000, 4096: 100_000, 65536: 10_000}
LAT_COUNT = {1: 5_000, 16: 5_000, 256: 5_000, 4096: 4_000, 65536: 1_000}
RUN_TIMEOUT = 180
COLUMNS = [
    ("oxmq", "zeromq.js on oxmq"),
    ("bundled", "zeromq.js's prebuilt addon (libzmq 4.3.5)"),
    ("debian", "zeromq.js on Debian's libzmq 4.3.4"),
]

RE = {
    "msgs": re.compile(r"^mean throughput: (\d+) \[msg/s\]", re.M),
    "lat": re.compile(r"^average latency: ([\d.]+) \[us\]", re.M),
    "cpu": re.compile(r"^cpu per message: ([\d.]+) \[ns\]", re.M),
    "send_cpu": re.compile(r"^sender cpu per message: ([\d.]+) \[ns\]", re.M),
    "rt_cpu": re.compile(r"^cpu per roundtrip: ([\d.]+) \[ns\]", re.M),
    "echo_cpu": re.compile(r"^echo cpu per roundtrip: ([\d.]+) \[ns\]", re.M),
}


def run_pair(modules, kind, size, count):
    """Runs the binding tool and the connecting one; returns the parsed numbers or an error."""
    port = bench.free_port()
    addr = f"tcp://127.0.0.1:{port}"
    local, remote = ("local_thr", "remote_thr") if kind == "thr" else ("local_lat", "remote_lat")
    env = dict(os.environ, NODE_PATH=str(modules))
    procs = []
    try:
        procs.append(subprocess.Popen(["node", str(TOOLS / f"{local}.js"), addr, str(size), str(count)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True))
        if not bench.wait_listening(("tcp", port), procs[0], time.monotonic() + 20):
            return None, "the binding side never listened: " + (procs[0].communicate()[1] or "")[:300]
        procs.append(subprocess.Popen(["node", str(TOOLS / f"{remote}.js"), addr, str(size), str(count)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True))
        outs = []
        for p in procs:
            try:
                o, e = p.communicate(timeout=RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                return None, "timeout"
            if p.returncode != 0:
                return None, f"exit {p.returncode}: {e.strip()[:300]}"
            outs.append(o)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    out = "\n".join(outs)
    r = {k: float(m.group(1)) for k, rx in RE.items() if (m := rx.search(out))}
    if ("msgs" if kind == "thr" else "lat") not in r:
        return None, "no result in the output"
    if kind == "thr" and "cpu" in r and "send_cpu" in r:
        r["both_cpu"] = r["cpu"] + r["send_cpu"]
    if kind == "lat" and "rt_cpu" in r and "echo_cpu" in r:
        r["both_rt_cpu"] = (r["rt_cpu"] + r["echo_cpu"]) / 1000  # µs per round trip
    return r, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result_md")
    ap.add_argument("suite_dir", help="tests/node/zeromq-build.sh's OUT directory")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="1,256,4096,65536")
    ap.add_argument("--scale", type=float, default=1.0)
    args, _unknown = ap.parse_known_args()  # the harness passes its own options along
    sizes = [int(x) for x in args.sizes.split(",") if x]
    if args.quick:
        args.rounds, sizes, args.scale = 1, [1, 4096], min(args.scale, 0.1)

    suite = Path(args.suite_dir)
    cols = []
    for name, label in COLUMNS:
        modules = suite / name / "node_modules"
        if (modules / "zeromq" / "package.json").exists():
            cols.append((name, label, modules))
        else:
            print(f"node section: no {name} column ({modules} missing)", file=sys.stderr)
    res: dict = {}
    started = time.time()
    for rnd in range(args.rounds):
        for size in sizes:
            for kind in ("thr", "lat"):
                base = THR_COUNT if kind == "thr" else LAT_COUNT
                count = max(200, int(base.get(size, 10_000) * args.scale))
                order = cols[rnd % len(cols):] + cols[:rnd % len(cols)]
                for name, _label, modules in order:
                    r, err = run_pair(modules, kind, size, count)
                    if err:
                        print(f"  {name} {kind} {size}: {err}", file=sys.stderr)
                        continue
                    res.setdefault(f"{name}|{kind}|{size}", []).append(r)
        print(f"node section: round {rnd + 1}/{args.rounds} done ({time.time() - started:.0f} s)", file=sys.stderr)

    def get(name, kind, size, key):
        return med([r.get(key) for r in res.get(f"{name}|{kind}|{size}", [])])

    names = [c[0] for c in cols]
    load = os.getloadavg()
    node_version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    lines = ["", "## Node.js: zeromq.js 6.5 on oxmq, on its bundled libzmq 4.3.5 and on Debian's libzmq 4.3.4", "",
             f"{args.rounds} interleaved round(s), medians; tcp loopback, zeromq.js's promise API, PUSH/PULL "
             f"(throughput) and REQ/REP (latency), Node {node_version}. "
             + "; ".join(f"{n}: {label}" for n, label, _ in cols) + ". "
             "CPU = user+sys of a whole process (Node's thread and libzmq's I/O threads) over its timed span. "
             f"Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs "
             "(shared machine: wall-clock figures are noisy). Command: "
             f"`bash perf/harness/sections.d/45-node.sh RESULT.md{' --quick' if args.quick else ''}`.", "",
             "### Throughput (msg/s)", "",
             "| size | " + " | ".join(names) + " | oxmq / bundled | oxmq / debian |",
             "|---" * (len(names) + 3) + "|"]
    for s in sizes:
        a = get("oxmq", "thr", s, "msgs")
        lines.append(f"| {s} B | " + " | ".join(fmt_thr(get(n, "thr", s, "msgs")) for n in names)
                     + f" | {bench.ratio(a, get('bundled', 'thr', s, 'msgs'))} | {bench.ratio(a, get('debian', 'thr', s, 'msgs'))} |")
    lines += ["", "### CPU per message, throughput runs (ns): receiver, and receiver + sender", "",
              "| size | " + " | ".join(f"{n} recv | {n} both" for n in names) + " | oxmq / bundled both | oxmq / debian both |",
              "|---" * (2 * len(names) + 3) + "|"]
    for s in sizes:
        a = get("oxmq", "thr", s, "both_cpu")
        lines.append(f"| {s} B | " + " | ".join(f"{fmt(get(n, 'thr', s, 'cpu'), 0)} | {fmt(get(n, 'thr', s, 'both_cpu'), 0)}" for n in names)
                     + f" | {bench.ratio(a, get('bundled', 'thr', s, 'both_cpu'))} | {bench.ratio(a, get('debian', 'thr', s, 'both_cpu'))} |")
    lines += ["", "### One-way latency (µs), and CPU per round trip of both processes (µs)", "",
              "| size | " + " | ".join(f"{n} latency | {n} CPU" for n in names) + " | oxmq / bundled latency | oxmq / debian latency |",
              "|---" * (2 * len(names) + 3) + "|"]
    for s in sizes:
        a = get("oxmq", "lat", s, "lat")
        lines.append(f"| {s} B | " + " | ".join(f"{fmt(get(n, 'lat', s, 'lat'), 1)} | {fmt(get(n, 'lat', s, 'both_rt_cpu'), 1)}" for n in names)
                     + f" | {bench.ratio(a, get('bundled', 'lat', s, 'lat'))} | {bench.ratio(a, get('debian', 'lat', s, 'lat'))} |")
    lines.append("")
    text = "\n".join(lines)
    print(text)
    md = Path(args.result_md)
    with md.open("a") as fh:
        fh.write(text + "\n")
    Path(f"{md.with_suffix('')}-node.json").write_text(json.dumps({"sizes": sizes, "rounds": args.rounds, "results": res}, indent=1))
    if not res:
        sys.exit(1)


if __name__ == "__main__":
    main()
