#!/usr/bin/env python3
"""The seeds' table for the wiring API: throughput and latency at 1, 16, 256, 4096 and
65536 B, per front end (C, Python, Java), beside oxmq's socket API tools measured in the same
interleaved rounds, plus CPU per message (both processes' user+sys), which swings far less
than wall-clock rates on shared cores. Names are resolved through the embedded name service
(empty host, on a free port) before the timing starts.

    bench.py RESULT.md [--quick] [--rounds N] [--python PYTHON] [--java JAVA]

Prints the tables, appends them to RESULT.md, and charts them in <RESULT stem>-wiring.png.
Expects the tools built: perf/c/build/oxmq (make -C perf/c), perf/wiring/c/build
(make -C perf/wiring/c), oxmq importable by PYTHON, and for the Java rows the jars of
java/oxmq, java/oxmq-perf and java/oxmq-wiring with a JDK 25 (--java or OXMQ_JAVA).
"""
import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIZES = [1, 16, 256, 4096, 65536]
# Untimed messages (round trips) before a Java pair's timed ones, at least: what C2 needs here.
JAVA_WARMUP_MIN = {"thr": 100_000, "lat": 50_000}
STEP_TIMEOUT = 300
# The C pairs: messages (round trips) times the other front ends' counts, and samples per round.
C_LONGER = 3
C_REPS = 3


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_pair(local, remote, env, wait_ready):
    """Starts `local`, waits for its "ready" line if asked, runs `remote`; both outputs and
    the CPU seconds both used."""
    c0 = cpu_children()
    lp = subprocess.Popen(local, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        if wait_ready:
            line = lp.stdout.readline()
            if line.strip() != "ready":
                raise RuntimeError(f"{local[0]}: {line!r} {lp.stderr.read()}")
        rp = subprocess.run(remote, capture_output=True, text=True, env=env, timeout=STEP_TIMEOUT)
        lout, lerr = lp.communicate(timeout=STEP_TIMEOUT)
    except Exception:
        lp.kill()
        lp.wait()
        raise
    if rp.returncode or lp.returncode:
        raise RuntimeError(f"{remote[0]} rc={rp.returncode} {rp.stderr.strip()} / {local[0]} rc={lp.returncode} {lerr.strip()}")
    return lout, rp.stdout, cpu_children() - c0


def value(text, key):
    for line in text.splitlines():
        if line.startswith(key):
            return float(line.split(":")[1].split("[")[0])
    raise RuntimeError(f"no '{key}' in {text!r}")


def front_ends(py, java=None):
    c, w, pp, wp = (os.path.join(ROOT, p) for p in ("perf/c/build/oxmq", "perf/wiring/c/build", "perf/python", "perf/wiring/python"))
    # Each: name, language, kind -> (local argv(size, n, ep), remote argv(size, n, ep)), wiring?
    sock = lambda tool: [os.path.join(c, tool)]
    pys = lambda tool: [py, os.path.join(pp, tool + ".py")]
    fes = [
        ("C sockets", "C", sock, False),
        ("C wiring", "C", lambda tool: [os.path.join(w, tool)], True),
        # The same tools on libzmq's message object (czmq_send_msg, czmq_receive_msg): no copy
        # of the body, as the socket tools' zmq_msg_send and zmq_msg_recv.
        ("C wiring (zmq_msg_t)", "C", lambda tool: [os.path.join(w, tool)], True, ["msg"]),
        ("Python sockets", "Python", pys, False),
        ("Python wiring", "Python", lambda tool: [py, os.path.join(wp, tool + ".py")], True),
    ]
    if java:
        jars = {m: os.path.join(ROOT, "java", m, "target", f"{m}-0.1.0-SNAPSHOT.jar") for m in ("oxmq", "oxmq-perf", "oxmq-wiring")}
        missing = [j for j in jars.values() if not os.path.exists(j)]
        if missing:
            print(f"wiring bench: no Java rows, missing {', '.join(missing)}", file=sys.stderr)
        else:
            # libzmq's tool names in Java's class-name spelling: local_thr -> LocalThr.
            cls = lambda tool: "".join(part.capitalize() for part in tool.split("_"))
            jvm = [java, "--enable-native-access=ALL-UNNAMED", "-XX:+UseParallelGC", "-Xms256m", "-Xmx256m"]
            fes += [
                ("Java sockets", "Java",
                 lambda tool: jvm + ["-cp", f"{jars['oxmq']}:{jars['oxmq-perf']}", f"io.oxmq.perf.{cls(tool)}"], False),
                # Arrays, copied by the library each way: the socket API's counterpart of the
                # seed's byte[] calls.
                ("Java sockets (byte[])", "Java",
                 lambda tool: jvm + ["-cp", f"{jars['oxmq']}:{jars['oxmq-perf']}", f"io.oxmq.perf.{cls(tool)}"], False,
                 ["bytes"]),
                ("Java wiring", "Java",
                 lambda tool: jvm + ["-cp", f"{jars['oxmq']}:{jars['oxmq-wiring']}", f"io.oxmq.wiring.perf.{cls(tool)}"], True),
                # Frames (the library's buffers, no copy), as the Java socket tools use.
                ("Java wiring (Frame)", "Java",
                 lambda tool: jvm + ["-cp", f"{jars['oxmq']}:{jars['oxmq-wiring']}", f"io.oxmq.wiring.perf.{cls(tool)}"], True,
                 ["frame"]),
            ]
    return fes


def measure(fe, kind, size, n, env):
    name, lang, tool, wiring = fe[:4]
    extra = fe[4] if len(fe) > 4 else []
    if wiring:
        env = dict(env, OXMQ_WIRING_PORT=str(free_port()))
        local = tool(f"local_{kind}") + ["", "127.0.0.1:*", str(size), str(n)] + extra
        remote = tool(f"remote_{kind}") + ["", str(size), str(n)] + extra
    else:
        ep = f"tcp://127.0.0.1:{free_port()}"
        local = tool(f"local_{kind}") + [ep, str(size), str(n)] + extra
        remote = tool(f"remote_{kind}") + [ep, str(size), str(n)] + extra
        if lang == "Python":
            local.append("--impl=oxmq")
            remote.append("--impl=oxmq")
    warm = 0
    if lang == "Java":
        # The JVM runs its first thousands of calls in the interpreter: both Java rows first
        # move untimed messages (round trips), as the Java section does (java_bench.py).
        warm = max(n, JAVA_WARMUP_MIN[kind])
        local.insert(1, f"-Dperf.warmup={warm}")
        remote.insert(1, f"-Dperf.warmup={warm}")
    lout, rout, cpu = run_pair(local, remote, env, wiring)
    # CPU over every message moved, warm-up included.
    if kind == "thr":
        return value(lout, "mean throughput"), cpu / (n + warm) * 1e9
    return value(rout, "average latency"), cpu / (n + warm) * 1e6


def callgrind_pair(fe, size, n, env):
    """Instructions (receiver, sender) of one throughput run, both under callgrind."""
    name, lang, tool, wiring = fe
    out = []
    for side in ("local", "remote"):
        f = f"/tmp/oxmq-wiring-cg-{os.getpid()}-{side}.out"
        out.append(f)
    cg = lambda f: ["valgrind", "--tool=callgrind", f"--callgrind-out-file={f}"]
    if wiring:
        env = dict(env, OXMQ_WIRING_PORT=str(free_port()), OXMQ_WIRING_TIMEOUT_MS="30000", OXMQ_WIRING_BIND_TIMEOUT_MS="60000")
        local = cg(out[0]) + tool("local_thr") + ["", "127.0.0.1:*", str(size), str(n)]
        remote = cg(out[1]) + tool("remote_thr") + ["", str(size), str(n)]
    else:
        ep = f"tcp://127.0.0.1:{free_port()}"
        local = cg(out[0]) + tool("local_thr") + [ep, str(size), str(n)]
        remote = cg(out[1]) + tool("remote_thr") + [ep, str(size), str(n)]
    run_pair(local, remote, env, wiring)
    counts = []
    for f in out:
        total = 0
        with open(f) as fh:
            for line in fh:
                if line.startswith("totals:") or line.startswith("summary:"):
                    total = int(line.split()[1])
        os.unlink(f)
        counts.append(total)
    return counts


def callgrind_table(fes, env, quick):
    """Instructions per message (receiver, sender) at 1 and 256 B, C front end vs C sockets:
    the difference of a run of 2n and one of n messages, so set-up (including name
    resolution) cancels out."""
    n = 20_000 if quick else 100_000
    rows = ["### C, instructions per message (callgrind, throughput runs; set-up cancelled out)", "",
            "| size | sockets recv | wiring recv | ratio | sockets send | wiring send | ratio |", "|---|---|---|---|---|---|---|"]
    for size in (1, 256):
        per = {}
        for fe in fes:
            if fe[1] != "C" or len(fe) > 4:
                continue
            a = callgrind_pair(fe, size, n, env)
            b = callgrind_pair(fe, size, 2 * n, env)
            per[fe[0]] = [(y - x) / n for x, y in zip(a, b)]
        s, w = per["C sockets"], per["C wiring"]
        rows.append(f"| {size} B | {s[0]:.0f} | {w[0]:.0f} | {w[0] / s[0]:.3f} | {s[1]:.0f} | {w[1]:.0f} | {w[1] / s[1]:.3f} |")
    return rows + [""]


def fmt_rate(v):
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.1f} k"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("result")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--java", default=os.environ.get("OXMQ_JAVA"), help="a JDK 25 java: adds the Java rows")
    ap.add_argument("--callgrind", action="store_true", help="add instructions per message (C)")
    args, _ = ap.parse_known_args()
    rounds = args.rounds or (1 if args.quick else 3)
    env = dict(os.environ)
    env.setdefault("OXMQ_WIRING_TIMEOUT_MS", "5000")
    fes = front_ends(args.python, args.java)

    def count(fe, kind, size):
        big = size >= 65536
        if kind == "thr":
            n = 20_000 if big else 1_000_000
            if fe[1] == "Python":
                n = 10_000 if big else 200_000
        else:
            n = 5_000 if big else 20_000
            if fe[1] == "Python":
                n = 2_000 if big else 10_000
        if fe[1] == "C":
            # The C pairs run at 30 M msg/s: a million messages take 35 ms, where a
            # scheduling hiccup on two shared cores moves a rate by 20%.
            n *= C_LONGER
        return max(n // (10 if args.quick else 1), 100)

    res = {}  # (fe name, kind, size) -> [(value, cpu)]
    failures = []
    for r in range(rounds):
        for size in SIZES:
            for kind in ("thr", "lat"):
                order = fes if r % 2 == 0 else list(reversed(fes))
                # The C pairs take a fraction of a second: several samples of each per
                # round, alternated, so their medians resolve a few per cent.
                c = [fe for fe in order if fe[1] == "C"]
                seq = [fe for k in range(C_REPS) for fe in (c if k % 2 == 0 else c[::-1])]
                seq += [fe for fe in order if fe[1] != "C"]
                for fe in seq:
                    try:
                        v = measure(fe, kind, size, count(fe, kind, size), env)
                        res.setdefault((fe[0], kind, size), []).append(v)
                    except Exception as e:  # noqa: BLE001 - reported in the table
                        failures.append(f"{fe[0]} {kind} {size} B: {e}")
                        print(f"  failed: {failures[-1]}", file=sys.stderr)
        print(f"  round {r + 1}/{rounds} done", file=sys.stderr)

    def med(fe, kind, size, i):
        xs = [x[i] for x in res.get((fe, kind, size), [])]
        return statistics.median(xs) if xs else None

    load = os.getloadavg()
    out = [
        "## The wiring API (the seeds' table)",
        "",
        f"`perf/wiring/bench.py` ({'quick, ' if args.quick else ''}{rounds} interleaved round(s), medians), tcp loopback, "
        f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end. Wiring tools resolve their names through "
        "the embedded name service, then time; socket tools are oxmq's own (perf/c, perf/python). "
        "CPU is both processes' user+sys per message (throughput) or per round trip (latency). "
        f"C pairs move {C_LONGER}x the messages (round trips) of the others and run {C_REPS} times per round, "
        "alternated, all samples in their medians. "
        f"Java pairs (sockets and wiring alike) first move as many untimed messages (round trips) as they "
        f"time, at least {JAVA_WARMUP_MIN['thr']:,} ({JAVA_WARMUP_MIN['lat']:,}), for the JIT; their CPU "
        "includes JVM start-up and warm-up, over every message moved.",
        "",
    ]
    chart = {}
    names = {fe[0] for fe in fes}
    groups = [
        ("C", "C sockets", "C wiring"),
        ("C, zero-copy calls: czmq_send_msg and czmq_receive_msg on zmq_msg_t (the socket tools' "
         "zmq_msg_send and zmq_msg_recv); the table above is the seed's czmq_send (copies a body up to "
         "4 KiB in these tools) and czmq_receive (copies one up to 1 KiB)", "C sockets", "C wiring (zmq_msg_t)"),
        ("Java (the seed's byte[] calls: send(int, byte[]) and receive(byte[]), a copy on each side; "
         "the socket tools likewise send(byte[]) and recv(byte[], 0))", "Java sockets (byte[])", "Java wiring"),
        ("Java, zero-copy calls: Jzmq.send(int, Frame) and receive(Frame), as the socket tools",
         "Java sockets", "Java wiring (Frame)"),
        ("Python", "Python sockets", "Python wiring"),
    ]
    for title, s_name, w_name in groups:
        if s_name not in names or w_name not in names:
            continue
        out += [f"### {title}", "",
                "| size | thr sockets | thr wiring | wiring/sockets | CPU ns/msg sockets | wiring | ratio "
                "| latency sockets µs | wiring µs | wiring/sockets | CPU µs/rt sockets | wiring | ratio |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for size in SIZES:
            cells = [f"{size} B"]
            for kind in ("thr", "lat"):
                sv, wv = med(s_name, kind, size, 0), med(w_name, kind, size, 0)
                sc, wc = med(s_name, kind, size, 1), med(w_name, kind, size, 1)
                f = fmt_rate if kind == "thr" else (lambda v: f"{v:.1f}")
                cells += [f(sv) if sv else "—", f(wv) if wv else "—",
                          f"{wv / sv:.2f}" if sv and wv else "—",
                          f"{sc:.0f}" if sc is not None and kind == "thr" else (f"{sc:.1f}" if sc is not None else "—"),
                          f"{wc:.0f}" if wc is not None and kind == "thr" else (f"{wc:.1f}" if wc is not None else "—"),
                          f"{wc / sc:.2f}" if sc and wc else "—"]
                chart.setdefault((s_name, kind), []).append(sv)
                chart.setdefault((w_name, kind), []).append(wv)
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if args.callgrind:
        if os.system("command -v valgrind >/dev/null") == 0:
            try:
                out += callgrind_table(fes, env, args.quick)
            except Exception as e:  # noqa: BLE001 - reported in the table
                failures.append(f"callgrind: {e}")
        else:
            out += ["(no valgrind: no instruction counts)", ""]
    if failures:
        out += ["Failed measurements:", ""] + [f"- {f}" for f in failures] + [""]
    text = "\n".join(out)
    print(text)
    with open(args.result, "a") as f:
        f.write("\n" + text + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        for ax, kind, title, unit in ((axes[0], "thr", "throughput", "msg/s"), (axes[1], "lat", "one-way latency", "µs")):
            for (name, k), ys in sorted(chart.items()):
                if k != kind:
                    continue
                pts = [(s, y) for s, y in zip(SIZES, ys) if y]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                            linestyle="--" if "sockets" in name else "-", label=name)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size [B]")
            ax.set_ylabel(unit)
            ax.set_title(f"wiring API vs sockets: {title}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        stem = os.path.splitext(args.result)[0]
        fig.tight_layout()
        fig.savefig(f"{stem}-wiring.png", dpi=110)
        print(f"chart: {stem}-wiring.png")
    except ImportError:
        print("matplotlib unavailable: no chart", file=sys.stderr)
    return 1 if failures and not res else 0


if __name__ == "__main__":
    sys.exit(main())
