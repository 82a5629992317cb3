#!/usr/bin/env python3
"""The C# section of the benchmark: the binding (csharp/) on oxmq and on Debian's libzmq, its
buffer receive beside its frame-per-message receive, and oxmq's C tools, per size.

Columns, run in interleaved rounds (each round runs every column once per size, in rotated
order, so all see the same machine weather):

  cs-buffer          csharp/perf tools on oxmq's libzmq.so.5, local_thr receiving with
                     ReceiveBytes into one buffer
  cs-pinvoke         the same with OXMQ_CS_FASTCALLS=0: every per-message call a P/Invoke,
                     which under Mono's default (hybrid) thread suspend enters and leaves a
                     GC-safe region; cs-buffer calls libzmq as a raw internal call first
                     (csharp/src/FastCalls.cs)
  cs-buffer-csend    cs-buffer's local_thr fed by the C tools' remote_thr (throughput only):
                     the receive path's cost on the same stream as the c column's receiver
                     (a receiver waiting on a slower sender spends more per message)
  cs-frame           the buffer tools with local_thr receiving a ZFrame per message
                     (OXMQ_CS_RECV=frame)
  cs-libzmq          the buffer tools on Debian's libzmq 4.3 (OXMQ_LIBZMQ=<path>): the binding's
                     cost apart from the engine's
  c                  perf/c's tools built against oxmq (perf/c/build/oxmq)

Receiver CPU per message (the seed's measure) is the receiving process's user+sys: the C#
tools measure it themselves over the timed span (clock_gettime(CLOCK_PROCESS_CPUTIME_ID), so
Mono's start-up and JIT are outside it), the C tool by its rusage (its start-up is a few
hundred microseconds against a run of ~0.5 s). Managed bytes allocated per message come from
GC.GetAllocatedBytesForCurrentThread over the same span.

    csharp_bench.py RESULT.md [--quick] [--rounds N] [--sizes 1,256] [--scale F] [--no-charts]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (free_port, wait_listening)
from cells import med, fmt_thr, fmt  # noqa: E402  (perf/harness/cells.py)


ROOT = bench.ROOT
CS = ROOT / "csharp" / "build"
C_TOOLS = ROOT / "perf" / "c" / "build" / "oxmq"
DEBIAN_LIBZMQ = Path("/usr/lib/x86_64-linux-gnu/libzmq.so.5")
THR_COUNT = {1: 2_000_000, 16: 2_000_000, 256: 1_000_000, 4096: 200_000, 65536: 20_000}
LAT_COUNT = {1: 20_000, 16: 20_000, 256: 20_000, 4096: 10_000, 65536: 2_000}
RUN_TIMEOUT = 180

RE = {
    "msgs": re.compile(r"^mean throughput: (\d+) \[msg/s\]", re.M),
    "lat": re.compile(r"^average latency: ([\d.]+) \[us\]", re.M),
    "cpu": re.compile(r"^cpu per message: ([\d.]+) \[ns\]", re.M),
    "alloc": re.compile(r"^allocated per message: ([\d.]+) \[B\]", re.M),
    "send_cpu": re.compile(r"^sender cpu per message: ([\d.]+) \[ns\]", re.M),
    "send_alloc": re.compile(r"^sender allocated per message: ([\d.]+) \[B\]", re.M),
}


class Column:
    def __init__(self, name, label, kind, env=None, needs=(), sender=None):
        self.name, self.label, self.kind, self.env, self.needs = name, label, kind, env or {}, needs
        self.sender = sender or kind  # the kind of tool on the sending (remote) side

    def missing(self):
        tools = ["local_thr", "remote_thr", "local_lat", "remote_lat"]
        files = [CS / f"{t}.exe" if self.kind == "cs" else C_TOOLS / t for t in tools]
        files.append(CS / "remote_thr.exe" if self.sender == "cs" else C_TOOLS / "remote_thr")
        return [str(p) for p in (*files, *self.needs) if not Path(p).exists()]

    def cmd(self, tool, *args):
        kind = self.sender if tool.startswith("remote") else self.kind
        if kind == "cs":
            return ["mono", "--gc=sgen", str(CS / f"{tool}.exe"), *map(str, args)]
        return [str(C_TOOLS / tool), *map(str, args)]


COLUMNS = [
    Column("cs-buffer", "C# on oxmq, buffer receive", "cs"),
    Column("cs-buffer-csend", "C# on oxmq, buffer receive, fed by the C sender", "cs", sender="c"),
    Column("cs-pinvoke", "C# on oxmq, buffer receive, P/Invoke only", "cs", {"OXMQ_CS_FASTCALLS": "0"}),
    Column("cs-frame", "C# on oxmq, frame per message", "cs", {"OXMQ_CS_RECV": "frame"}),
    Column("cs-libzmq", "C# on Debian's libzmq 4.3, buffer receive", "cs",
           {"OXMQ_LIBZMQ": str(DEBIAN_LIBZMQ)}, needs=[DEBIAN_LIBZMQ]),
    Column("c", "oxmq's C tools", "c"),
]


def run_pair(col, kind, size, count):
    """Runs local (binder) and remote; returns the parsed numbers, or None with a message."""
    port = bench.free_port()
    addr = f"tcp://127.0.0.1:{port}"
    local, remote = ("local_thr", "remote_thr") if kind == "thr" else ("local_lat", "remote_lat")
    env = {k: v for k, v in os.environ.items() if k not in ("OXMQ_CS_RECV", "OXMQ_CS_FASTCALLS", "OXMQ_LIBZMQ")}
    env.update(col.env)
    if "c" in (col.kind, col.sender):
        env["LD_LIBRARY_PATH"] = str(ROOT / "dist" / "lib")
    procs = []
    try:
        procs.append(subprocess.Popen(col.cmd(local, addr, size, count), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, env=env, text=True))
        if not bench.wait_listening(("tcp", port), procs[0], time.monotonic() + 20):
            return None, "the binding side never listened"
        procs.append(subprocess.Popen(col.cmd(remote, addr, size, count), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, env=env, text=True))
        outs, usage = [], []
        deadline = time.monotonic() + RUN_TIMEOUT
        for p in procs:
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:
                    return None, "timeout"
                time.sleep(0.005)
            p.returncode = os.waitstatus_to_exitcode(status)
            o, e = p.communicate()
            if p.returncode != 0:
                return None, f"exit {p.returncode}: {e.strip()[:300]}"
            outs.append(o)
            usage.append(ru.ru_utime + ru.ru_stime)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    out = "\n".join(outs)
    r = {k: float(m.group(1)) for k, rx in RE.items() if (m := rx.search(out))}
    if ("msgs" if kind == "thr" else "lat") not in r:
        return None, "no result in the output"
    if kind == "thr" and col.kind == "c":
        r["cpu"] = usage[0] * 1e9 / count  # the receiver, whole process
    return r, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result_md")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="1,16,256,4096,65536")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--no-charts", action="store_true")
    args, _unknown = ap.parse_known_args()  # the harness passes its own options along
    sizes = [int(x) for x in args.sizes.split(",") if x]
    if args.quick:
        args.rounds, sizes, args.scale = 1, [1, 65536], min(args.scale, 0.1)

    cols = []
    for c in COLUMNS:
        miss = c.missing()
        if miss:
            print(f"csharp section: no {c.name} column: missing {', '.join(miss)}", file=sys.stderr)
        else:
            cols.append(c)
    res: dict = {}
    started = time.time()
    for rnd in range(args.rounds):
        for size in sizes:
            for kind in ("thr", "lat"):
                base = THR_COUNT if kind == "thr" else LAT_COUNT
                count = max(200, int(base.get(size, 10_000) * args.scale))
                order = cols[rnd % len(cols):] + cols[:rnd % len(cols)]
                for c in order:
                    if kind == "lat" and c.name in ("cs-frame", "cs-buffer-csend"):
                        continue  # local_lat echoes with the buffer path; the pair is one kind
                    r, err = run_pair(c, kind, size, count)
                    if err:
                        print(f"  {c.name} {kind} {size}: {err}", file=sys.stderr)
                        continue
                    res.setdefault(f"{c.name}|{kind}|{size}", []).append(r)
        print(f"csharp section: round {rnd + 1}/{args.rounds} done ({time.time() - started:.0f} s)", file=sys.stderr)

    def get(name, kind, size, key):
        return med([r.get(key) for r in res.get(f"{name}|{kind}|{size}", [])])

    load = os.getloadavg()
    names = [c.name for c in cols]
    lines = ["", "## C#: the binding (csharp/) on oxmq and on libzmq, buffer vs frame receive, beside oxmq's C tools", "",
             f"{args.rounds} interleaved round(s), medians; tcp loopback, PUSH/PULL (throughput) and REQ/REP "
             f"(latency); Mono {mono_version()}. Receiver CPU = the receiving process's user+sys per message "
             "(the C# tools over the timed span, the C tool over its life); allocations = managed bytes "
             "per message on the receiving thread. cs-buffer-csend is cs-buffer's receiver fed by the C sender, "
             "the stream the c column's receiver gets: a receiver that waits on a slower sender spends more "
             "per message, so this column is the receive path's cost alone. "
             f"Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs "
             "(shared machine: wall-clock figures are noisy). Command: "
             f"`bash perf/harness/sections.d/50-csharp.sh RESULT.md{' --quick' if args.quick else ''}`.", "",
             "### Throughput (msg/s)", "",
             "| size | " + " | ".join(names) + " | cs-buffer / c | cs-buffer / cs-libzmq |",
             "|---" * (len(names) + 3) + "|"]
    for s in sizes:
        a = get("cs-buffer", "thr", s, "msgs")
        lines.append(f"| {s} B | " + " | ".join(fmt_thr(get(n, "thr", s, "msgs")) for n in names)
                     + f" | {bench.ratio(a, get('c', 'thr', s, 'msgs'))} | {bench.ratio(a, get('cs-libzmq', 'thr', s, 'msgs'))} |")
    lines += ["", "### Receiver CPU per message (ns) and managed allocations per message (B)", "",
              "| size | " + " | ".join(f"{n} CPU" for n in names)
              + " | cs-buffer / c CPU | cs-buffer-csend / c CPU | cs-frame / cs-buffer CPU | cs-buffer alloc | cs-frame alloc |",
              "|---" * (len(names) + 6) + "|"]
    for s in sizes:
        b, bc, f, c = (get(n, "thr", s, "cpu") for n in ("cs-buffer", "cs-buffer-csend", "cs-frame", "c"))
        lines.append(f"| {s} B | " + " | ".join(fmt(get(n, "thr", s, "cpu"), 0) for n in names)
                     + f" | {bench.ratio(b, c)} | {bench.ratio(bc, c)} | {bench.ratio(f, b)} | {fmt(get('cs-buffer', 'thr', s, 'alloc'), 3)}"
                     f" | {fmt(get('cs-frame', 'thr', s, 'alloc'), 1)} |")
    lat_names = [n for n in names if n not in ("cs-frame", "cs-buffer-csend")]
    lines += ["", "### One-way latency (µs)", "", "| size | " + " | ".join(lat_names) + " | cs-buffer / c |",
              "|---" * (len(lat_names) + 2) + "|"]
    for s in sizes:
        lines.append(f"| {s} B | " + " | ".join(fmt(get(n, "lat", s, "lat"), 2) for n in lat_names)
                     + f" | {bench.ratio(get('cs-buffer', 'lat', s, 'lat'), get('c', 'lat', s, 'lat'))} |")
    s0 = sizes[0]
    allocs = [get("cs-buffer", "thr", s, "alloc") for s in sizes]
    lines += ["", f"Targets: cs-buffer allocations per message at every size: "
              f"{', '.join(fmt(a, 3) for a in allocs)} B (target 0); receiver CPU / c at {s0} B: cs-buffer "
              f"{bench.ratio(get('cs-buffer', 'thr', s0, 'cpu'), get('c', 'thr', s0, 'cpu'))} (its own sender), "
              f"cs-buffer-csend {bench.ratio(get('cs-buffer-csend', 'thr', s0, 'cpu'), get('c', 'thr', s0, 'cpu'))} "
              f"(the c column's sender), cs-pinvoke "
              f"{bench.ratio(get('cs-pinvoke', 'thr', s0, 'cpu'), get('c', 'thr', s0, 'cpu'))} (target ≤ 1.5×); "
              f"throughput / c at {s0} B: cs-buffer {bench.ratio(get('cs-buffer', 'thr', s0, 'msgs'), get('c', 'thr', s0, 'msgs'))}, "
              f"cs-pinvoke {bench.ratio(get('cs-pinvoke', 'thr', s0, 'msgs'), get('c', 'thr', s0, 'msgs'))} (target ≥ 0.6×).", ""]
    text = "\n".join(lines)
    print(text)
    md = Path(args.result_md)
    with md.open("a") as fh:
        fh.write(text + "\n")
    stem = md.with_suffix("")
    Path(f"{stem}-csharp.json").write_text(json.dumps({"sizes": sizes, "rounds": args.rounds, "results": res}, indent=1))
    if not args.no_charts:
        chart(stem, names, sizes, get)
    if not res:
        sys.exit(1)


def mono_version():
    try:
        out = subprocess.run(["mono", "--version"], capture_output=True, text=True, timeout=30).stdout
        m = re.search(r"version ([\d.]+)", out)
        return m.group(1) if m else "?"
    except OSError:
        return "?"


def chart(stem, names, sizes, get):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib unavailable: no chart", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, key, ylab in ((axes[0], "msgs", "throughput [msg/s]"), (axes[1], "cpu", "receiver CPU per message [ns]")):
        for n in names:
            pts = [(s, get(n, "thr", s, key)) for s in sizes]
            pts = [(s, v) for s, v in pts if v is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=n)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size [B]")
        ax.set_ylabel(ylab)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("C# on tcp loopback: the binding on oxmq and libzmq, buffer vs frame receive, oxmq's C tools")
    fig.tight_layout()
    fig.savefig(f"{stem}-csharp.png", dpi=110)
    print(f"chart: {stem}-csharp.png", file=sys.stderr)


if __name__ == "__main__":
    main()
