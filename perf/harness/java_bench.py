#!/usr/bin/env python3
"""The Java section of the benchmark: oxmq's Java binding beside JeroMQ, jzmq and oxmq's C tools.

Columns, all run in one session in interleaved rounds (each round runs every column once per
size, in rotated order, so all see the same machine weather):

  oxmq-java          java/oxmq-perf's io.oxmq.perf tools on the io.oxmq binding, oxmq's library
  oxmq-java/libzmq   the same class files on Debian's libzmq 4.3 (-Doxmq.library=...): binding
                     cost separated from engine cost
  jeromq             the org.zeromq-API tools (io.oxmq.perf.zapi) on JeroMQ 0.6.0
  jzmq               the same class files on Debian's jzmq 3.1 (JNI) over Debian's libzmq
  oxmq-c             perf/c's tools built against oxmq (perf/c/build/oxmq)

Every Java tool runs in its own JVM (JDK 25). By default each Java pair first runs untimed
messages (-Dperf.warmup, see io.oxmq.perf.Args): as many as it then times, and at least
100,000 messages or 50,000 round trips, which is what C2 needs here (with 5,000 warm-up round
trips a 1 B round trip still measured 9-12 µs, with 50,000 it is 6.6-8.5 µs, like the C tools'),
so the figures are of JIT-compiled code, for every Java column alike; --cold times from the first
message like libzmq's tools (then a short run mostly measures the interpreter and the JIT).
CPU time is both processes' user+sys from getrusage(RUSAGE_CHILDREN), JVM start-up and
warm-up included, divided by all messages sent (warm-up too).

    java_bench.py RESULT.md [--quick] [--cold] [--rounds N] [--sizes 1,256] [--scale F] [--no-charts]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (Endpoint, execute, parse, counts)
from cells import fmt_thr  # noqa: E402  (perf/harness/cells.py)


ROOT = bench.ROOT
JAVA_HOME = Path(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"))
JAVA = str(JAVA_HOME / "bin" / "java")
M2 = Path(os.environ.get("M2_REPO", Path.home() / ".m2" / "repository"))
OXMQ_JAR = ROOT / "java/oxmq/target/oxmq-0.1.0-SNAPSHOT.jar"
PERF_JAR = ROOT / "java/oxmq-perf/target/oxmq-perf-0.1.0-SNAPSHOT.jar"
JEROMQ_JAR = M2 / "org/zeromq/jeromq/0.6.0/jeromq-0.6.0.jar"
JZMQ_JAR = Path("/usr/share/java/zmq.jar")
JZMQ_JNI = Path("/usr/lib/x86_64-linux-gnu/jni")
DEBIAN_LIBZMQ = Path("/usr/lib/x86_64-linux-gnu/libzmq.so.5")
C_TOOLS = bench.PERF_C / "oxmq"
JVM_OPTS = ["-XX:+UseParallelGC", "-Xms256m", "-Xmx256m"]
WARM = True  # --cold clears it: Java tools then time from the first message
WARMUP_MIN = {"thr": 100_000, "lat": 50_000}


class JavaTools(bench.Impl):
    def __init__(self, name, label, cp, pkg, props=(), env=None, inproc=False, needs=()):
        self.name, self.label, self.cp, self.pkg = name, label, cp, pkg
        self.props, self.extra_env, self.inproc, self.needs = list(props), env or {}, inproc, needs

    def available(self):
        missing = [str(p) for p in (*self.cp, *self.needs) if not Path(p).exists()]
        return f"missing {', '.join(missing)}" if missing else None

    def cmd(self, tool, *args, warmup=0):
        return [JAVA, "--enable-native-access=ALL-UNNAMED", *JVM_OPTS, *self.props, f"-Dperf.warmup={warmup}",
                "-cp", ":".join(map(str, self.cp)), f"{self.pkg}.{tool}", *map(str, args)]

    def warmup(self, kind, transport, count):
        if not WARM:
            return 0
        return max(count, WARMUP_MIN[kind])

    def run(self, kind, transport, size, count, ep):
        w = self.warmup(kind, transport, count)
        if transport == "inproc":
            if not self.inproc:
                return None
            return bench.Run([self.cmd("InprocThr" if kind == "thr" else "InprocLat", size, count, warmup=w)], self.extra_env)
        addr = ep.zmq(transport)
        local, remote = ("LocalThr", "RemoteThr") if kind == "thr" else ("LocalLat", "RemoteLat")
        return bench.Run([self.cmd(local, addr, size, count, warmup=w), self.cmd(remote, addr, size, count, warmup=w)],
                         self.extra_env, ep.listen(transport))


def impls():
    return [
        JavaTools("oxmq-java", "oxmq-java (io.oxmq on oxmq)", [OXMQ_JAR, PERF_JAR], "io.oxmq.perf", inproc=True),
        JavaTools("oxmq-java-libzmq", "io.oxmq on libzmq 4.3", [OXMQ_JAR, PERF_JAR], "io.oxmq.perf",
                  props=[f"-Doxmq.library={DEBIAN_LIBZMQ}"], inproc=True, needs=[DEBIAN_LIBZMQ]),
        JavaTools("jeromq", "JeroMQ 0.6.0", [JEROMQ_JAR, PERF_JAR], "io.oxmq.perf.zapi"),
        JavaTools("jzmq", "jzmq 3.1 (JNI) on libzmq 4.3", [JZMQ_JAR, PERF_JAR], "io.oxmq.perf.zapi",
                  props=[f"-Djava.library.path={JZMQ_JNI}"], env={"LD_LIBRARY_PATH": ""}, needs=[JZMQ_JNI / "libjzmq.so"]),
        bench.CTools("oxmq-c", "oxmq C tools", C_TOOLS, None),
    ]


def measure(impl, kind, transport, size, count, tmp, seq):
    ep = bench.Endpoint(Path(tmp), seq)
    run = impl.run(kind, transport, size, count, ep)
    if run is None:
        return None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out, err = bench.execute(run, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if err:
        print(f"  {impl.name} {kind} {transport} {size}: {err}", file=sys.stderr)
        return None
    r = bench.parse(kind, out)
    if r is None:
        print(f"  {impl.name} {kind} {transport} {size}: no result in output", file=sys.stderr)
        return None
    r["cpu_s"] = cpu
    r["count"] = count
    r["warmup"] = impl.warmup(kind, transport, count) if isinstance(impl, JavaTools) else 0
    return r


def med(xs):
    return statistics.median(xs) if xs else None


def fmt_lat(v):
    return "—" if v is None else f"{v:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result_md")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="1,16,256,4096,65536")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--no-charts", action="store_true")
    ap.add_argument("--cold", action="store_true", help="no warm-up: Java tools time from the first message")
    args, _unknown = ap.parse_known_args()  # the harness passes its own options along
    sizes = [int(x) for x in args.sizes.split(",") if x]
    global WARM
    WARM = not args.cold
    if args.quick:
        args.rounds, sizes, args.scale = 1, [1, 65536], min(args.scale, 0.1)

    cols = []
    for impl in impls():
        why = impl.available()
        if why:
            print(f"java section: no {impl.name} column: {why}", file=sys.stderr)
        else:
            cols.append(impl)
    transports = ["tcp", "inproc"]
    res: dict = {}
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="oxmq-java-bench-") as tmp:
        seq = 0
        for rnd in range(args.rounds):
            for transport in transports:
                for size in sizes:
                    for kind in ("thr", "lat"):
                        count = bench.thr_count(size, args.scale) if kind == "thr" else bench.lat_count(size, args.scale)
                        order = cols[rnd % len(cols):] + cols[:rnd % len(cols)]
                        for impl in order:
                            seq += 1
                            r = measure(impl, kind, transport, size, count, tmp, seq)
                            if r is not None:
                                res.setdefault(f"{impl.name}|{kind}|{transport}|{size}", []).append(r)
            print(f"java section: round {rnd + 1}/{args.rounds} done ({time.time() - started:.0f} s)", file=sys.stderr)

    def get(name, kind, transport, size, key):
        rs = res.get(f"{name}|{kind}|{transport}|{size}", [])
        return med([r[key] for r in rs])

    def cpu_per(name, kind, transport, size):
        rs = res.get(f"{name}|{kind}|{transport}|{size}", [])
        if not rs:
            return None
        # ns per message (thr) or µs per round trip (lat), JVM start-up included
        vals = [r["cpu_s"] / (r["count"] + r.get("warmup", 0)) * (1e9 if kind == "thr" else 1e6) for r in rs]
        return med(vals)

    load = os.getloadavg()
    lines = ["", "## Java: oxmq's FFM binding (io.oxmq) beside JeroMQ, jzmq and oxmq's C tools"
             + (" (cold JVMs)" if args.cold else ""), "",
             f"{args.rounds} interleaved round(s), medians; tcp loopback; each Java tool in its own JDK 25 JVM "
             f"({' '.join(JVM_OPTS)}), "
             + ("each Java pair first runs untimed messages (round trips) for the JIT: as many as it times, "
                f"at least {WARMUP_MIN['thr']:,} ({WARMUP_MIN['lat']:,}), inproc tools too. " if WARM else "no warm-up, timed from the first message like libzmq's tools. ")
             + f"Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs "
             "(the machine is shared: wall-clock figures are noisy). CPU = both processes' user+sys, "
             "JVM start-up and warm-up included, over all messages sent. Command: "
             "`bash perf/harness/sections.d/60-java.sh RESULT.md"
             f"{' --quick' if args.quick else ''}{' --cold' if args.cold else ''}`.", ""]
    names = [c.name for c in cols]
    for kind, title, unit, fmt, key in (("thr", "Throughput, tcp", "msg/s", fmt_thr, "msgs"),
                                         ("lat", "One-way latency, tcp", "µs", fmt_lat, "lat")):
        lines += [f"### {title} ({unit}; CPU in {'ns/msg' if kind == 'thr' else 'µs/round trip'})", "",
                  "| size | " + " | ".join(names) + " | oxmq-java / jeromq | oxmq-java / oxmq-c |",
                  "|---" * (len(names) + 3) + "|"]
        for size in sizes:
            cells = []
            for n in names:
                v, c = get(n, kind, "tcp", size, key), cpu_per(n, kind, "tcp", size)
                cells.append(fmt(v) + ("" if c is None else f" (CPU {c:.0f})" if kind == "thr" else f" (CPU {c:.1f})"))
            a = get("oxmq-java", kind, "tcp", size, key)
            lines.append(f"| {size} B | " + " | ".join(cells) + f" | {bench.ratio(a, get('jeromq', kind, 'tcp', size, key))}"
                         f" | {bench.ratio(a, get('oxmq-c', kind, 'tcp', size, key))} |")
        lines.append("")
    inproc_cols = [c.name for c in cols if (isinstance(c, JavaTools) and c.inproc) or c.name == "oxmq-c"]
    lines += ["### inproc (throughput msg/s; latency µs)", "",
              "| size | " + " | ".join(f"{n} thr" for n in inproc_cols) + " | " + " | ".join(f"{n} lat" for n in inproc_cols) + " |",
              "|---" * (2 * len(inproc_cols) + 1) + "|"]
    for size in sizes:
        lines.append(f"| {size} B | " + " | ".join(fmt_thr(get(n, "thr", "inproc", size, "msgs")) for n in inproc_cols)
                     + " | " + " | ".join(fmt_lat(get(n, "lat", "inproc", size, "lat")) for n in inproc_cols) + " |")
    lines.append("")
    a1, j1, c1 = (get(n, "thr", "tcp", sizes[0], "msgs") for n in ("oxmq-java", "jeromq", "oxmq-c"))
    l1, jl1, cl1 = (get(n, "lat", "tcp", sizes[0], "lat") for n in ("oxmq-java", "jeromq", "oxmq-c"))
    lines += [f"Targets at {sizes[0]} B: throughput oxmq-java/jeromq {bench.ratio(a1, j1)} (target ≥ 3×), "
              f"oxmq-java/oxmq-c {bench.ratio(a1, c1)} (target ≥ 0.7×); latency oxmq-java/jeromq {bench.ratio(l1, jl1)} "
              f"(target ≤ 0.5×), oxmq-java/oxmq-c {bench.ratio(l1, cl1)} (target ≤ 1.15×).", ""]
    text = "\n".join(lines)
    print(text)
    md = Path(args.result_md)
    with md.open("a") as f:
        f.write(text + "\n")
    stem = md.with_suffix("")
    Path(f"{stem}-java.json").write_text(json.dumps({"sizes": sizes, "rounds": args.rounds, "results": res}, indent=1))
    if not args.no_charts:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
            for ax, kind, key, ylab in ((axes[0], "thr", "msgs", "throughput [msg/s]"), (axes[1], "lat", "lat", "one-way latency [µs]")):
                for n in names:
                    pts = [(s, get(n, kind, "tcp", s, key)) for s in sizes]
                    pts = [(s, v) for s, v in pts if v is not None]
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=n)
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("message size [B]")
                ax.set_ylabel(ylab)
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=8)
            fig.suptitle("Java on tcp loopback: oxmq's binding, JeroMQ, jzmq, oxmq's C tools")
            fig.tight_layout()
            fig.savefig(f"{stem}-java.png", dpi=110)
            print(f"chart: {stem}-java.png", file=sys.stderr)
        except ImportError:
            print("matplotlib unavailable: no chart", file=sys.stderr)
    if not res:
        sys.exit(1)


if __name__ == "__main__":
    main()
