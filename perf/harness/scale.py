#!/usr/bin/env python3
"""Scale: oxmq vs libzmq side by side with many peers, in several processes as a deployment
would have them (issue 14). One C source per program in perf/c (fanout_pub/fanout_sub,
spread_push/spread_pull, router_srv/dealer_cli, fanin_pull/fanin_push, churn_srv/churn_cli, slow_pub/slow_sub),
compiled against each library; this script runs the same scenario for both in interleaved
rounds (A B, then B A, ...) and reports medians with min-max:

  fanout  one XPUB (SNDHWM 0) to N SUB sockets spread over processes (zmq_poll), 100 B
          messages, every message checked: deliveries/s, CPU per delivery (user+sys of
          every process over the sending span), peak RSS of the publisher and subscribers
  spread  one PUSH (SNDHWM 0) dealing round robin to N PULL sockets spread over processes
          (zmq_poll), 100 B messages, each PULL's order and the total checked: messages/s, CPU
          per message, peak RSS of the sender
  router  one ROUTER, N DEALERs over processes: time until all N said hello, RSS per
          connection, request/reply round trips per second with all connected, errors
  fanin   N PUSH (over processes) -> 1 PULL: messages/s, CPU per message, order per sender
  churn   connect / one round trip / close, over and over, against one bound ROUTER: its
          descriptors, threads and RSS before and after (the same, RSS within 1 MiB or 5 %)
  slow    PUB with SNDHWM 1,000 to a SUB that reads slowly: the publisher's RSS stays
          bounded, drops are counted (gaps in the sequence numbers)

Plans: --quick (fan-out to 1-100 over tcp, spread to 10-100, 200 DEALERs, 20 PUSH, 300 cycles, one round);
the default (fan-out to 1-1,000 over tcp and ipc, at least 5,000 messages per subscriber, plus a burst
of 1,000 messages to 1,000 subscribers; spread to 10-1,000 over tcp, 1,000 DEALERs, 100 PUSH,
1,000 cycles, three rounds, about four minutes); --scale-full (the issue's counts: 10,000 DEALERs, 1,000
PUSH, 10,000 cycles, 2 M deliveries per fan-out run; the ROUTER and churn runs once).

    perf/harness/scale.py [--quick | --scale-full] [--scale-rounds N] [--out DIR]
    perf/harness/scale.py --append perf/results/<run>.md   # as perf/harness/sections.d/10-scale.sh

Writes <stem>-scale.md (standalone) or appends to the given Markdown file, plus
<stem>-scale.json and <stem>-scale.png (deliveries/s against subscriber count, log x).
Unknown arguments (the main harness's) are ignored. Exit status 1 when an oxmq run fails
or a check fails (lost or misordered messages, errors, churn leaving descriptors or threads
behind, unbounded memory); libzmq's failures are reported only.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import resource
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "perf" / "c" / "build"
DIST = Path(os.environ.get("DIST", ROOT / "dist"))
RESULTS = ROOT / "perf" / "results"
LIBS = ["oxmq", "libzmq"]
# An A/B of two oxmq builds (AB_BEFORE: the root of another checkout, built with
# scripts/build-dist.sh and make -C perf/c): its programs take the second column, labelled
# "oxmq before" in the report (internally it keeps the second column's key).
BEFORE = Path(os.environ["AB_BEFORE"]) if os.environ.get("AB_BEFORE") else None


def bindir(lib: str) -> Path:
    return BEFORE / "perf" / "c" / "build" / "oxmq" if BEFORE and lib == "libzmq" else BUILD / lib
PROGRAMS = ["fanout_pub", "fanout_sub", "spread_push", "spread_pull", "router_srv", "dealer_cli", "fanin_pull", "fanin_push",
            "churn_srv", "churn_cli", "slow_pub", "slow_sub"]
MSG_SIZE = 100
RUN_TIMEOUT = 300  # seconds for any one run, whatever its size

# (quick, default, full) parameters of each scenario
PLANS = {
    "quick": dict(rounds=1, fanout=[1, 10, 100], deliveries=200_000, min_count=1_000, burst=None,
                  transports=["tcp"], spread=[10, 100], router=(200, 2, 10), fanin=(20, 2, 2_000), churn=(50, 300), slow=200_000),
    "default": dict(rounds=3, fanout=[1, 10, 100, 1000], deliveries=1_000_000, min_count=5_000,
                    burst=(1000, 1_000), transports=["tcp", "ipc"], spread=[10, 100, 1000],
                    router=(1_000, 2, 20), fanin=(100, 2, 5_000), churn=(100, 1_000), slow=1_000_000),
    "full": dict(rounds=3, fanout=[1, 10, 100, 1000], deliveries=2_000_000, min_count=5_000,
                 burst=(1000, 1_000), transports=["tcp", "ipc"], spread=[10, 100, 1000],
                 router=(10_000, 10, 10), fanin=(1_000, 10, 1_000), churn=(200, 10_000), slow=2_000_000),
}
SLOW_HWM = 1_000
SLOW_PAUSE_US = 100  # after every 100 messages
RSS_TOLERANCE_KB = 1024  # churn: "flat" is within 1 MiB (or 5 %)


class RunError(Exception):
    pass


def env_for(lib: str) -> dict:
    env = dict(os.environ)
    if BEFORE and lib == "libzmq":
        env["LD_LIBRARY_PATH"] = str(BEFORE / "dist" / "lib")
    else:
        env["LD_LIBRARY_PATH"] = str(DIST / "lib") if lib == "oxmq" else ""
    return env


class Procs:
    """Processes of one run; every one of them is killed when the run ends, however it ends."""

    def __init__(self, lib: str, deadline: float):
        self.lib, self.deadline, self.procs, self.early = lib, deadline, [], {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p, _ in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()

    def start(self, prog: str, *args) -> subprocess.Popen:
        cmd = [str(bindir(self.lib) / prog), *map(str, args)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_for(self.lib),
                             text=True, stdin=subprocess.DEVNULL)
        self.procs.append((p, prog))
        return p

    def read_labels(self, p: subprocess.Popen, labels: list[str]) -> dict:
        """The first lines of a binder: `label value` for each label, before the deadline.
        Reads the descriptor itself (no buffered reader that select cannot see into); what it
        read beyond those lines is kept for `results`."""
        got, buf = {}, b""
        fd = p.stdout.fileno()
        while len(got) < len(labels):
            while b"\n" not in buf:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    raise RunError(f"timeout waiting for {labels} from {p.args[0]}")
                ready, _, _ = select.select([fd], [], [], min(left, 1.0))
                if ready:
                    chunk = os.read(fd, 4096)
                    if not chunk:
                        raise RunError(f"{Path(p.args[0]).name} exited {p.wait()}: {p.stderr.read()[:300]}")
                    buf += chunk
            line, buf = buf.split(b"\n", 1)
            parts = line.decode().split(None, 1)
            if len(parts) == 2 and parts[0] in labels:
                got[parts[0]] = parts[1].strip()
        self.early[p.pid] = buf.decode()
        return got

    def results(self) -> list[tuple[str, dict]]:
        """Waits for every process; each must exit 0 with a result line."""
        out = []
        for p, prog in self.procs:
            left = max(1.0, self.deadline - time.monotonic())
            try:
                o, e = p.communicate(timeout=left)
            except subprocess.TimeoutExpired:
                raise RunError(f"{prog} timed out")
            o = self.early.get(p.pid, "") + o
            res = parse_result(o)
            if p.returncode != 0 or res is None:
                detail = (e.strip() or (o.strip().splitlines() or [""])[-1])[:300]
                raise RunError(f"{prog} exit {p.returncode}: {detail}")
            out.append((prog, res))
        return out


def parse_result(out: str) -> dict | None:
    for line in reversed(out.splitlines()):
        if line.startswith("result "):
            res = {}
            for kv in line.split()[1:]:
                k, _, v = kv.partition("=")
                try:
                    res[k] = float(v)
                except ValueError:
                    res[k] = v
            return res
    return None


def bind_ep(transport: str, tmp: Path, seq: int) -> str:
    return "tcp://127.0.0.1:*" if transport == "tcp" else f"ipc://{tmp}/s{seq}.ipc"


def split(n: int, k: int) -> list[int]:
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


# ----------------------------------------------------------------------------------------
# Scenarios: each returns a dict of metrics, or raises RunError
# ----------------------------------------------------------------------------------------


def fanout_procs(n: int) -> int:
    return 1 if n == 1 else max(2, math.ceil(n / 100))


def stream_count(plan: dict, n: int) -> int:
    """Messages per receiving socket in a fan-out or spread row: the plan's deliveries shared out,
    but at least min_count. A row measures a flowing stream; at 1,000 sockets and 1,000 messages
    each, the start (1,000 connections going from idle to streaming, their first pipe chunks and
    buffers) is a third of the run in either library. The burst row measures that case."""
    return max(plan["min_count"], plan["deliveries"] // n)


def run_one_to_many(lib, tmp, seq, n, count, transport, sender, receiver, got_key):
    """One sender (fanout_pub, spread_push) and n receiving sockets over fanout_procs(n)
    processes, count messages each; every message counted. Returns the sender's result, the
    receivers' results, the total expected and the CPU of every process."""
    k = fanout_procs(n)
    with Procs(lib, time.monotonic() + RUN_TIMEOUT) as ps:
        snd = ps.start(sender, bind_ep(transport, tmp, seq), n, k, count, MSG_SIZE)
        eps = ps.read_labels(snd, ["endpoint", "sync"])
        for share in split(n, k):
            ps.start(receiver, eps["endpoint"], eps["sync"], share, count)
        res = ps.results()
    p = res[0][1]
    recv = [r for _, r in res[1:]]
    total = n * count
    got = sum(r[got_key] for r in recv)
    errors = p["errors"] + sum(r["errors"] for r in recv)
    if got != total or errors:
        raise RunError(f"{got:.0f} of {total} {got_key}, {errors:.0f} errors")
    cpu = p["cpu_us"] + sum(r["cpu_us"] for r in recv)
    return p, recv, total, cpu, count, k


def run_fanout(lib, tmp, seq, n, count, transport):
    p, subs, total, cpu, count, k = run_one_to_many(lib, tmp, seq, n, count, transport,
                                                    "fanout_pub", "fanout_sub", "deliveries")
    return {"rate": total / (p["elapsed_us"] / 1e6), "cpu_ns": cpu * 1e3 / total,
            "pub_rss_mb": p["maxrss_kb"] / 1024, "sub_rss_mb": max(r["maxrss_kb"] for r in subs) / 1024,
            "sub_kb_per_socket": sum(r["maxrss_kb"] for r in subs) / n, "count": count, "procs": k}


def run_spread(lib, tmp, seq, n, count, transport):
    p, _, total, cpu, count, k = run_one_to_many(lib, tmp, seq, n, count, transport,
                                                 "spread_push", "spread_pull", "received")
    return {"rate": total / (p["elapsed_us"] / 1e6), "cpu_ns": cpu * 1e3 / total,
            "push_rss_mb": p["maxrss_kb"] / 1024, "count": count, "procs": k}


def run_router(lib, tmp, seq, peers, procs, rounds):
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if limit != resource.RLIM_INFINITY and limit < peers + 64:
        raise RunError(f"the ROUTER needs {peers + 64} descriptors, the hard limit is {limit} "
                       "(raise it: ulimit -Hn, as root)")
    with Procs(lib, time.monotonic() + RUN_TIMEOUT) as ps:
        srv = ps.start("router_srv", "tcp://127.0.0.1:*", peers, procs, rounds)
        ep = ps.read_labels(srv, ["endpoint"])["endpoint"]
        first = 0
        for share in split(peers, procs):
            ps.start("dealer_cli", ep, first, share, rounds)
            first += share
        res = ps.results()
    s = res[0][1]
    if s["errors"] or any(r["errors"] for _, r in res[1:]):
        raise RunError(f"errors: server {s['errors']:.0f}, clients {sum(r['errors'] for _, r in res[1:]):.0f}")
    rts = s["roundtrips"]
    cpu = s["cpu_us"] + sum(r["cpu_us"] for _, r in res[1:])
    return {"accept_s": s["accept_us"] / 1e6, "rt_rate": rts / (s["rt_us"] / 1e6), "cpu_us_rt": cpu / rts,
            "bytes_per_conn": (s["rss_after_kb"] - s["rss_before_kb"]) * 1024 / peers,
            "fds_per_conn": (s["fds_after"] - s["fds_before"]) / peers, "srv_rss_mb": s["maxrss_kb"] / 1024,
            "errors": 0}


def run_fanin(lib, tmp, seq, senders, procs, count):
    with Procs(lib, time.monotonic() + RUN_TIMEOUT) as ps:
        pull = ps.start("fanin_pull", "tcp://127.0.0.1:*", senders, procs, count)
        eps = ps.read_labels(pull, ["endpoint", "sync"])
        first = 0
        for share in split(senders, procs):
            ps.start("fanin_push", eps["endpoint"], eps["sync"], first, share, count, MSG_SIZE)
            first += share
        res = ps.results()
    p = res[0][1]
    if p["errors"]:
        raise RunError(f"{p['errors']:.0f} messages out of order")
    cpu = p["cpu_us"] + sum(r["cpu_us"] for _, r in res[1:])
    return {"rate": p["messages"] / (p["elapsed_us"] / 1e6), "cpu_ns": cpu * 1e3 / p["messages"],
            "pull_rss_mb": p["maxrss_kb"] / 1024}


def run_churn(lib, tmp, seq, warmup, cycles):
    with Procs(lib, time.monotonic() + RUN_TIMEOUT) as ps:
        srv = ps.start("churn_srv", "tcp://127.0.0.1:*")
        ep = ps.read_labels(srv, ["endpoint"])["endpoint"]
        ps.start("churn_cli", ep, warmup, cycles)
        res = ps.results()
    c = res[1][1]
    if c["cycles"] != cycles:
        raise RunError(f"the server counted {c['cycles']:.0f} cycles of {cycles}")
    leak = []
    if c["fds_after"] > c["fds_before"]:
        leak.append(f"descriptors {c['fds_before']:.0f} -> {c['fds_after']:.0f}")
    if c["threads_after"] > c["threads_before"]:
        leak.append(f"threads {c['threads_before']:.0f} -> {c['threads_after']:.0f}")
    grow = c["rss_after_kb"] - c["rss_before_kb"]
    if grow > max(RSS_TOLERANCE_KB, 0.05 * c["rss_before_kb"]):
        leak.append(f"RSS +{grow:.0f} KiB")
    return {"rate": cycles / (c["cycle_us"] / 1e6), "fds": (c["fds_before"], c["fds_after"]),
            "threads": (c["threads_before"], c["threads_after"]),
            "rss_kb": (c["rss_before_kb"], c["rss_after_kb"]), "rss_b_per_cycle": grow * 1024 / cycles,
            "leak": "; ".join(leak)}


def run_slow(lib, tmp, seq, count):
    with Procs(lib, time.monotonic() + RUN_TIMEOUT) as ps:
        pub = ps.start("slow_pub", "tcp://127.0.0.1:*", SLOW_HWM, count, MSG_SIZE)
        eps = ps.read_labels(pub, ["endpoint", "sync"])
        ps.start("slow_sub", eps["endpoint"], eps["sync"], SLOW_HWM, SLOW_PAUSE_US)
        res = ps.results()
    p, s = res[0][1], res[1][1]
    if s["errors"]:
        raise RunError(f"{s['errors']:.0f} messages out of order")
    # every message is accounted for: received, or a gap the subscriber saw, or after its last
    seen_end = s["last_seq"]
    if s["received"] + s["dropped_gaps"] + (p["sent"] - seen_end) != p["sent"]:
        raise RunError("drop accounting does not add up")
    growth_mb = (p["rss_peak_kb"] - p["rss_before_kb"]) / 1024
    unbounded_mb = p["sent"] * MSG_SIZE / 2**20
    m = {"sent": p["sent"], "received": s["received"], "dropped": p["sent"] - s["received"],
         "rss_before_mb": p["rss_before_kb"] / 1024, "rss_peak_mb": p["rss_peak_kb"] / 1024,
         "growth_mb": growth_mb, "unbounded_mb": unbounded_mb}
    if growth_mb > max(16.0, 0.25 * unbounded_mb):
        raise RunError(f"publisher RSS grew {growth_mb:.1f} MiB: not bounded by the HWM")
    return m


# ----------------------------------------------------------------------------------------
# Plan, run, report
# ----------------------------------------------------------------------------------------


def cells(plan: dict) -> list[tuple]:
    out = []
    for t in plan["transports"]:
        for n in plan["fanout"]:
            out.append(("fanout", t, n))
    if plan["burst"]:
        out.append(("burst", "tcp", plan["burst"][0]))
    for n in plan["spread"]:
        out.append(("spread", "tcp", n))
    out.append(("router", "tcp", plan["router"][0]))
    out.append(("fanin", "tcp", plan["fanin"][0]))
    out.append(("churn", "tcp", plan["churn"][1]))
    out.append(("slow", "tcp", SLOW_HWM))
    return out


def run_cell(cell, lib, plan, tmp, seq):
    kind, t, n = cell
    if kind == "fanout":
        return run_fanout(lib, tmp, seq, n, stream_count(plan, n), t)
    if kind == "burst":
        return run_fanout(lib, tmp, seq, n, plan["burst"][1], t)
    if kind == "spread":
        return run_spread(lib, tmp, seq, n, stream_count(plan, n), t)
    if kind == "router":
        return run_router(lib, tmp, seq, *plan["router"])
    if kind == "fanin":
        return run_fanin(lib, tmp, seq, *plan["fanin"])
    if kind == "churn":
        return run_churn(lib, tmp, seq, *plan["churn"])
    return run_slow(lib, tmp, seq, plan["slow"])


def run_all(plan, rounds, libs, only):
    samples, failures = {}, []
    todo = []
    for r in range(rounds):
        order = libs if r % 2 == 0 else list(reversed(libs))
        for cell in cells(plan):
            if only and ("fanout" if cell[0] == "burst" else cell[0]) not in only:
                continue
            # one round of the slow ones (churn, router at full scale) is enough to judge leaks
            if r > 0 and cell[0] in ("churn", "router") and rounds > 1 and plan is PLANS["full"]:
                continue
            for lib in order:
                todo.append((r, cell, lib))
    tmp = Path(tempfile.mkdtemp(prefix="oxmq-scale-"))
    start = time.monotonic()
    try:
        for i, (r, cell, lib) in enumerate(todo):
            what = f"round {r + 1}/{rounds} {cell[0]} {cell[1]} N={cell[2]} {lib}"
            sys.stderr.write(f"[{i + 1:3d}/{len(todo)}] {what:<44} {time.monotonic() - start:5.0f}s\n")
            sys.stderr.flush()
            try:
                res = run_cell(cell, lib, plan, tmp, i)
                samples.setdefault((cell, lib), []).append(res)
                if res.get("leak"):  # measured, and a failed check
                    raise RunError("churn left something behind: " + res["leak"])
            except RunError as e:
                failures.append({"cell": list(cell), "lib": lib, "round": r + 1, "error": str(e)})
                sys.stderr.write(f"    failed: {e}\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return samples, failures


def med(samples, key, metric):
    vals = [s[metric] for s in samples.get(key, []) if s.get(metric) is not None]
    if not vals:
        return None, None, None
    return statistics.median(vals), min(vals), max(vals)


def fmt_rate(v):
    if v is None:
        return "—"
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    if v >= 1e3:
        return f"{v / 1e3:.1f} k"
    return f"{v:.0f}"


def fmt(v, spec="{:.0f}"):
    return "—" if v is None else spec.format(v)


def cellr(samples, key, metric, f=fmt_rate):
    m, lo, hi = med(samples, key, metric)
    if m is None:
        return None, "—"
    n = len(samples.get(key, []))
    return m, f(m) if n == 1 or lo == hi else f"{f(m)} ({f(lo)}–{f(hi)})"


def ratio(a, b):
    return f"{a / b:.2f}×" if a is not None and b else "—"


def fanout_row(samples, c, count, label=""):
    n = c[2]
    a, ta = cellr(samples, (c, "oxmq"), "rate")
    b, tb = cellr(samples, (c, "libzmq"), "rate")
    ca, tca = cellr(samples, (c, "oxmq"), "cpu_ns", lambda v: f"{v:.0f}")
    cb, tcb = cellr(samples, (c, "libzmq"), "cpu_ns", lambda v: f"{v:.0f}")
    pr = [fmt(med(samples, (c, lib), "pub_rss_mb")[0], "{:.1f}") for lib in LIBS]
    sr = [fmt(med(samples, (c, lib), "sub_rss_mb")[0], "{:.1f}") for lib in LIBS]
    return (f"| {n} ({fanout_procs(n)}){label} | {count:,} | {ta} | {tb} | {ratio(a, b)} | {tca} | {tcb} "
            f"| {ratio(ca, cb)} | {pr[0]} / {pr[1]} | {sr[0]} / {sr[1]} |")


def report(plan, name, rounds, samples, failures, mach, only=frozenset()) -> str:
    def wanted(kind):
        return not only or kind in only

    L = ["## Scale: many peers, oxmq vs libzmq (perf/harness/scale.py)", ""]
    L += [f"`perf/harness/scale.py` ({name} plan: {rounds} interleaved round(s), medians with min–max; "
          f"{mach['nproc']} CPUs, load average at start {mach['loadavg']}; oxmq at {mach['oxmq_commit']}, "
          f"libzmq {mach['libzmq']}). Every process is a C program from perf/c compiled against each library; "
          f"peers in other processes over loopback, {MSG_SIZE} B messages, each checked. CPU is user+sys of "
          "every process of the run over the measured span.", ""]
    # fan-out
    for t in plan["transports"] if wanted("fanout") else []:
        L += [f"### PUB fan-out over {t} (XPUB, SNDHWM 0; subscribers: SUB sockets read with zmq_poll, "
              "≤ 100 per process)", "",
              "| subscribers (processes) | messages | oxmq deliveries/s | libzmq deliveries/s | oxmq/libzmq "
              "| oxmq CPU ns/delivery | libzmq CPU ns/delivery | CPU oxmq/libzmq | publisher peak RSS MiB "
              "oxmq / libzmq | subscriber process peak RSS MiB oxmq / libzmq |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        L += [fanout_row(samples, ("fanout", t, n), stream_count(plan, n)) for n in plan["fanout"]]
        if plan["burst"] and t == "tcp":
            n, count = plan["burst"]
            L.append(fanout_row(samples, ("burst", t, n), count, ", burst"))
        L.append("")
        if plan["burst"] and t == "tcp":
            L += [f"The burst row sends {plan['burst'][1]:,} messages to each subscriber: it measures a "
                  "publisher that starts, sends a burst and stops, start-up included (the connections "
                  "going from idle to streaming, their first pipe chunks and buffers), where the rows "
                  f"above (at least {plan['min_count']:,} messages each) measure a stream.", ""]
    # spread
    if wanted("spread") and plan["spread"]:
        L += ["### PUSH spreading over many PULLs over tcp (SNDHWM 0, round robin; PULL sockets read "
              "with zmq_poll, ≤ 100 per process)", "",
              "| peers (processes) | messages per peer | oxmq messages/s | libzmq messages/s | oxmq/libzmq "
              "| oxmq CPU ns/message | libzmq CPU ns/message | CPU oxmq/libzmq | sender peak RSS MiB "
              "oxmq / libzmq |",
              "|---|---|---|---|---|---|---|---|---|"]
        for n in plan["spread"]:
            c = ("spread", "tcp", n)
            a, ta = cellr(samples, (c, "oxmq"), "rate")
            b, tb = cellr(samples, (c, "libzmq"), "rate")
            ca, tca = cellr(samples, (c, "oxmq"), "cpu_ns", lambda v: f"{v:.0f}")
            cb, tcb = cellr(samples, (c, "libzmq"), "cpu_ns", lambda v: f"{v:.0f}")
            pr = [fmt(med(samples, (c, lib), "push_rss_mb")[0], "{:.1f}") for lib in LIBS]
            count = stream_count(plan, n)
            L.append(f"| {n} ({fanout_procs(n)}) | {count:,} | {ta} | {tb} | {ratio(a, b)} | {tca} | {tcb} "
                     f"| {ratio(ca, cb)} | {pr[0]} / {pr[1]} |")
        L.append("")
    # router
    peers, procs, rts = plan["router"]
    if not wanted("router"):
        L, keep = [], L
    c = ("router", "tcp", peers)
    L += [f"### ROUTER serving {peers:,} DEALERs ({procs} client processes, {rts} round trips each, all "
          "sockets at once)", "", "| | oxmq | libzmq | oxmq/libzmq |", "|---|---|---|---|"]
    for metric, label, f in (("accept_s", "time until all said hello, s", lambda v: f"{v:.2f}"),
                             ("rt_rate", "round trips/s", fmt_rate),
                             ("cpu_us_rt", "CPU per round trip, µs (all processes)", lambda v: f"{v:.1f}"),
                             ("bytes_per_conn", "ROUTER RSS per connection, bytes", lambda v: f"{v:,.0f}"),
                             ("fds_per_conn", "ROUTER descriptors per connection", lambda v: f"{v:.2f}"),
                             ("srv_rss_mb", "ROUTER peak RSS, MiB", lambda v: f"{v:.1f}")):
        a, ta = cellr(samples, (c, "oxmq"), metric, f)
        b, tb = cellr(samples, (c, "libzmq"), metric, f)
        L.append(f"| {label} | {ta} | {tb} | {ratio(a, b)} |")
    L.append("")
    if not wanted("router"):
        L = keep
    # fan-in
    senders, procs, count = plan["fanin"]
    if not wanted("fanin"):
        L, keep = [], L
    c = ("fanin", "tcp", senders)
    L += [f"### {senders:,} PUSH → 1 PULL ({procs} sender processes, {count:,} messages each, order checked "
          "per sender)", "", "| | oxmq | libzmq | oxmq/libzmq |", "|---|---|---|---|"]
    for metric, label, f in (("rate", "messages/s", fmt_rate),
                             ("cpu_ns", "CPU per message, ns (all processes)", lambda v: f"{v:.0f}"),
                             ("pull_rss_mb", "PULL peak RSS, MiB", lambda v: f"{v:.1f}")):
        a, ta = cellr(samples, (c, "oxmq"), metric, f)
        b, tb = cellr(samples, (c, "libzmq"), metric, f)
        L.append(f"| {label} | {ta} | {tb} | {ratio(a, b)} |")
    L.append("")
    if not wanted("fanin"):
        L = keep
    # churn
    warm, cycles = plan["churn"]
    if not wanted("churn"):
        L, keep = [], L
    c = ("churn", "tcp", cycles)
    L += [f"### Connection churn: {cycles:,} cycles (DEALER created, connected, one round trip, closed) "
          f"against one bound ROUTER, after {warm} warm-up cycles; nothing left behind = the same "
          f"descriptors and threads, RSS within {RSS_TOLERANCE_KB} KiB or 5 %", "",
          "| | oxmq | libzmq |", "|---|---|---|"]
    rows = {"cycles/s": [], "descriptors before → after": [], "threads before → after": [],
            "RSS before → after, KiB": [], "RSS growth per cycle, bytes": [], "verdict": []}
    for lib in LIBS:
        ss = samples.get((c, lib), [])
        fail = [f for f in failures if tuple(f["cell"]) == c and f["lib"] == lib]
        rows["cycles/s"].append(cellr(samples, (c, lib), "rate")[1])
        last = ss[-1] if ss else None
        rows["descriptors before → after"].append(f"{last['fds'][0]:.0f} → {last['fds'][1]:.0f}" if last else "—")
        rows["threads before → after"].append(f"{last['threads'][0]:.0f} → {last['threads'][1]:.0f}" if last else "—")
        rows["RSS before → after, KiB"].append(f"{last['rss_kb'][0]:,.0f} → {last['rss_kb'][1]:,.0f}" if last else "—")
        rows["RSS growth per cycle, bytes"].append(cellr(samples, (c, lib), "rss_b_per_cycle",
                                                         lambda v: f"{v:.0f}")[1])
        rows["verdict"].append("nothing left behind" if ss and not fail else
                               ("; ".join(f["error"] for f in fail)[:120] or "—"))
    for k, v in rows.items():
        L.append(f"| {k} | {v[0]} | {v[1]} |")
    L.append("")
    if not wanted("churn"):
        L = keep
    # slow subscriber
    c = ("slow", "tcp", SLOW_HWM)
    if not wanted("slow"):
        L, keep = [], L
    L += [f"### Slow subscriber: PUB with SNDHWM {SLOW_HWM:,} sending {plan['slow']:,} messages as fast as it "
          f"can; the SUB (RCVHWM {SLOW_HWM:,}) pauses {SLOW_PAUSE_US} µs every 100 messages", "",
          "| | oxmq | libzmq |", "|---|---|---|"]
    for metric, label, f in (("received", "received", lambda v: f"{v:,.0f}"),
                             ("dropped", "dropped (counted as gaps)", lambda v: f"{v:,.0f}"),
                             ("rss_before_mb", "publisher RSS before, MiB", lambda v: f"{v:.1f}"),
                             ("rss_peak_mb", "publisher RSS peak while sending, MiB", lambda v: f"{v:.1f}"),
                             ("unbounded_mb", "(all messages sent, MiB)", lambda v: f"{v:.0f}")):
        L.append(f"| {label} | {cellr(samples, (c, 'oxmq'), metric, f)[1]} | "
                 f"{cellr(samples, (c, 'libzmq'), metric, f)[1]} |")
    L.append("")
    if not wanted("slow"):
        L = keep
    L += targets(plan, samples, failures, wanted)
    if failures:
        L += ["### Failed runs", ""] + [f"- round {f['round']} {' '.join(map(str, f['cell']))} {f['lib']}: "
                                        f"{f['error']}" for f in failures] + [""]
    return "\n".join(L)


def targets(plan, samples, failures, wanted) -> list[str]:
    """Issue 14's targets, judged on this run's medians."""
    rows = []

    def failed(kind, lib="oxmq"):
        return any(f["cell"][0] == kind and f["lib"] == lib for f in failures)

    def judge(cells):
        """The cells (label, cell) whose rate is under 2x libzmq's, and those whose CPU is over half."""
        slow, heavy = [], []
        for label, c in cells:
            a, b = med(samples, (c, "oxmq"), "rate")[0], med(samples, (c, "libzmq"), "rate")[0]
            ca, cb = med(samples, (c, "oxmq"), "cpu_ns")[0], med(samples, (c, "libzmq"), "cpu_ns")[0]
            if a is None or b is None or a < 2 * b:
                slow.append(f"{label}: {ratio(a, b)}")
            if ca is None or cb is None or ca > 0.5 * cb:
                heavy.append(f"{label}: {ratio(ca, cb)}")
        return slow, heavy

    if wanted("fanout"):
        slow, heavy = judge([(f"{t} {n}", ("fanout", t, n)) for t in plan["transports"] for n in plan["fanout"]])
        rows.append(("fan-out deliveries/s ≥ 2× libzmq's at every subscriber count",
                     "met" if not slow else "not met: " + ", ".join(slow)))
        rows.append(("fan-out CPU per delivery ≤ ½ libzmq's",
                     "met" if not heavy else "not met: " + ", ".join(heavy)))
        if plan["burst"]:
            n, count = plan["burst"]
            slow, heavy = judge([("burst", ("burst", "tcp", n))])
            rows.append((f"the same two for a burst ({count:,} messages to each of {n:,} subscribers, tcp)",
                         "met" if not slow and not heavy else
                         "not met: " + ", ".join(["rate " + x for x in slow] + ["CPU " + x for x in heavy])))
    if wanted("spread") and plan["spread"]:
        slow, heavy = judge([(f"{n}", ("spread", "tcp", n)) for n in plan["spread"]])
        rows.append(("PUSH spreading over many peers: messages/s ≥ 2× libzmq's, CPU ≤ ½ (the fan-out "
                     "targets applied to the load balancer)",
                     "met" if not slow and not heavy else
                     "not met: " + ", ".join(["rate " + x for x in slow] + ["CPU " + x for x in heavy])))
    if wanted("router"):
        c = ("router", "tcp", plan["router"][0])
        a, b = med(samples, (c, "oxmq"), "bytes_per_conn")[0], med(samples, (c, "libzmq"), "bytes_per_conn")[0]
        rows.append(("memory per idle connection ≤ libzmq's (ROUTER RSS per DEALER)",
                     "—" if a is None or b is None else
                     (f"met ({a:,.0f} vs {b:,.0f} bytes)" if a <= b else f"not met ({a:,.0f} vs {b:,.0f} bytes)")))
        n = plan["router"][0]
        ok = samples.get((c, "oxmq")) and not failed("router")
        rows.append((f"{n:,} peers on one ROUTER served without errors"
                     + ("" if n >= 10_000 else " (10,000 with --scale-full)"), "met" if ok else "not met"))
    if wanted("churn"):
        c = ("churn", "tcp", plan["churn"][1])
        ok = samples.get((c, "oxmq")) and not failed("churn")
        rows.append((f"churn ({plan['churn'][1]:,} cycles) leaves nothing behind", "met" if ok else "not met"))
    if not rows:
        return []
    return ["### Targets of issue 14, on this run", "", "| target | oxmq |", "|---|---|"] + \
        [f"| {k} | {v} |" for k, v in rows] + [""]


def chart(plan, samples, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no chart", file=sys.stderr)
        return False
    style = {"oxmq": dict(color="tab:red", marker="o"), "libzmq": dict(color="tab:blue", marker="s")}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for t in plan["transports"]:
        for lib in LIBS:
            for ax, metric in zip(axes, ("rate", "cpu_ns")):
                xs, ys, lo, hi = [], [], [], []
                for n in plan["fanout"]:
                    m, a, b = med(samples, (("fanout", t, n), lib), metric)
                    if m is not None:
                        xs.append(n)
                        ys.append(m)
                        lo.append(m - a)
                        hi.append(b - m)
                if xs:
                    ax.errorbar(xs, ys, yerr=[lo, hi], capsize=3, label=f"{lib} {t}",
                                linestyle="-" if t == "tcp" else "--", **style[lib])
    for ax, ylabel in zip(axes, ("deliveries/s", "CPU per delivery [ns]")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("subscribers")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.suptitle(f"PUB fan-out, {MSG_SIZE} B messages, subscribers in other processes (median, min–max)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def machine() -> dict:
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
        except Exception:  # noqa: BLE001
            return ""

    return {"host": socket.gethostname(), "nproc": os.cpu_count(), "kernel": platform.release(),
            "loadavg": sh("cat /proc/loadavg"), "libzmq": (f"at {sh(f'git -C {BEFORE} rev-parse --short HEAD') or BEFORE}" if BEFORE
                       else sh("dpkg-query -W -f='${Version}' libzmq5")),
            "oxmq_commit": sh(f"git -C {ROOT} rev-parse --short HEAD") or "uncommitted",
            "port_range": sh("cat /proc/sys/net/ipv4/ip_local_port_range"),
            "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)}


def main():
    # allow_abbrev=False: the harness's own options (bench.py's --scale 0.5, ...) pass through
    # here and must be ignored, not taken for an abbreviation of --scale-full
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 allow_abbrev=False)
    ap.add_argument("--quick", action="store_true", help="smoke run: small N, one round")
    ap.add_argument("--scale-full", action="store_true",
                    help="the issue's counts: 10,000 DEALERs, 1,000 PUSH, 10,000 churn cycles, tcp and ipc")
    ap.add_argument("--scale-rounds", type=int, default=None)
    ap.add_argument("--scale-only", default="", help="comma list of scenarios: fanout,spread,router,fanin,churn,slow")
    ap.add_argument("--append", default=None, help="append the tables to this Markdown file (a harness run)")
    ap.add_argument("--out", default=str(RESULTS), help="directory of a standalone run's files")
    ap.add_argument("--no-chart", action="store_true")
    args, _ignored = ap.parse_known_args()
    # a timeout's SIGTERM unwinds like an exception, so every started process is killed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    name = "quick" if args.quick else ("full" if args.scale_full else "default")
    plan = PLANS[name]
    rounds = args.scale_rounds or plan["rounds"]
    missing = [f"{bindir(lib)}/{p}" for lib in LIBS for p in PROGRAMS if not (bindir(lib) / p).exists()]
    if missing:
        sys.exit(f"missing {', '.join(missing)}: build with `make -C perf/c DIST=$PWD/dist`")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    started = datetime.datetime.now()
    mach = machine()
    only = {x for x in args.scale_only.split(",") if x}
    samples, failures = run_all(plan, rounds, LIBS, only)
    text = report(plan, name, rounds, samples, failures, mach, only)
    if BEFORE:
        text = text.replace("libzmq", "oxmq before") + f"\n(oxmq before: {BEFORE})\n"

    if args.append:
        md = Path(args.append)
        stem = md.with_suffix("")
    else:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = out / f"{started:%Y-%m-%d-%H%M}-{mach['host']}{'-quick' if args.quick else ''}"
        md = None
    png = stem.with_name(stem.name + "-scale.png")
    if not args.no_chart and (not only or "fanout" in only) and chart(plan, samples, png):
        text += f"\n![scale: fan-out]({png.name})\n"
    if md is not None:
        with md.open("a") as f:
            f.write("\n" + text)
    else:
        stem.with_name(stem.name + "-scale.md").write_text(text)
    raw = {"machine": mach, "plan": name, "rounds": rounds,
           "params": {k: v for k, v in plan.items()},
           "samples": [{"scenario": c[0], "transport": c[1], "n": c[2], "lib": lib, "runs": v}
                       for (c, lib), v in samples.items()],
           "failures": failures}
    stem.with_name(stem.name + "-scale.json").write_text(json.dumps(raw, indent=1))
    print(text)
    print(f"\nwritten: {md or stem.with_name(stem.name + '-scale.md')}, {stem.name}-scale.json, {png.name}",
          file=sys.stderr)
    if any(f["lib"] == "oxmq" for f in failures):
        sys.exit(1)


if __name__ == "__main__":
    main()
