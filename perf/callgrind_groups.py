#!/usr/bin/env python3
"""Instructions per message of the perf/c throughput pair, per thread and per group of code.

    perf/callgrind_groups.py [--lib oxmq|libzmq] [--size 1] [--count 200000] [--transport tcp]
                             [--functions N]

Runs local_thr (receiving) and remote_thr (sending) under valgrind --tool=callgrind with
--separate-threads=yes at COUNT/10 and COUNT messages and divides the difference by the
difference in messages, so start-up and connection set-up cancel out (as bench.py --callgrind
does for the process totals). Then, per process and thread, it sums the exclusive cost of each
file:function that callgrind_annotate reports into groups by source file: inlined code counts
for the file it came from, and Rust core/std helpers for the group of the function they were
inlined into. With --functions N it also lists each thread's N costliest functions.

Under valgrind the threads of a process run one at a time, so how work splits between an
application thread and its I/O thread can differ from a real run; the sums per message are
what to compare before and after a change (the sender's I/O thread varies with how its writes
batch: 455-536 in all at tcp 1 B over three runs of one build, so compare a few runs). Debian's libzmq has no symbols: its rows are
per-thread totals only. perf/results/2026-11-29-where-time-goes.md is a worked example.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
import bench  # noqa: E402  (IMPLS, Endpoint, execute)

# (group, regular expression on the source file as callgrind names it), first match wins
GROUPS = [
    ("C API (oxmq-capi: zmq_msg_*, zmq_msg_send/recv)", r"/oxmq-capi/"),
    ("socket send/recv (socket/: Socket, patterns, lb, fq, pipes)", r"/oxmq/src/socket/"),
    ("pipe (pipe/: slots, flush, HWM counts)", r"/oxmq/src/pipe/"),
    ("message (msg.rs, chunk.rs, arena.rs)", r"/oxmq/src/(msg|chunk|arena)\.rs"),
    ("session encode/decode (io/session/, zmtp)", r"/oxmq/src/io/session/|/zmtp/"),
    ("reactor, pacing, mailbox (io/, mailbox.rs, mio)", r"/oxmq/src/(io/|mailbox)|/mio-"),
    ("libc (memcpy, malloc, syscall stubs, TLS)", r"^\./|libc|ld-linux"),
]
# Rust core/std (and other crates') helpers inlined into a function: counted for the group of
# that function, found by its name.
BY_FUNCTION = [
    (r"^zmq_", "/oxmq-capi/"),
    (r"decode_into|write_side|direct_read|direct_write|session::", "/oxmq/src/io/session/"),
    (r"socket::|Pattern", "/oxmq/src/socket/"),
    (r"pipe::", "/oxmq/src/pipe/"),
    (r"msg::|chunk::|arena::", "/oxmq/src/msg.rs"),
]
LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([ \d.]+%\)\s+)?(.*?)(?: \[(.*)\])?$")


def annotate(path: Path) -> collections.Counter:
    """Exclusive Ir per (file, function, object) of one callgrind output file."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", str(path)],
                         capture_output=True, text=True, check=True).stdout
    costs: collections.Counter = collections.Counter()
    started = False
    for line in out.splitlines():
        if "file:function" in line:
            started = True
            continue
        m = LINE.match(line) if started else None
        if m:
            fl, _, fn = m.group(2).partition(":")
            costs[(fl, fn, m.group(3) or "")] += int(m.group(1).replace(",", ""))
    return costs


def group_of(fl: str, fn: str, obj: str) -> str:
    if "/perf/c/build/" in obj:  # the tool's own code (its source path may be relative)
        return "the perf tool's own loop"
    if fl.startswith("/rustc/") or ("/registry/" in fl and "/mio-" not in fl):
        fl = next((f for rx, f in BY_FUNCTION if re.search(rx, fn)), "Rust core/std")
    if fl == "???":
        return f"unknown ({Path(obj).name})"
    return next((g for g, rx in GROUPS if re.search(rx, fl)), "Rust core/std and other" if fl else "other")


def run_pair(impl, size: int, count: int, transport: str, tmp: Path, seq: int) -> dict[str, list[Path]]:
    """The callgrind files of each process's threads: {"recv": [...], "send": [...]}."""
    run = impl.run("thr", transport, size, count, bench.Endpoint(tmp, seq))
    stem = {0: tmp / f"recv.{seq}", 1: tmp / f"send.{seq}"}

    def wrap(i, cmd):
        return ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--dump-instr=no",
                f"--callgrind-out-file={stem[i]}", *cmd]

    _, err = bench.execute(run, wrap=wrap, timeout=1800)
    if err:
        sys.exit(f"{impl.name} {size} B x{count}: {err}")
    return {side: sorted(tmp.glob(f"{side}.{seq}-*")) for side in ("recv", "send")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default="oxmq", choices=["oxmq", "libzmq"])
    ap.add_argument("--size", type=int, default=1)
    ap.add_argument("--count", type=int, default=200_000)
    ap.add_argument("--transport", default="tcp", choices=["tcp", "ipc"])
    ap.add_argument("--functions", type=int, default=0, help="also list each thread's N costliest functions")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind not installed")
    impl = next(i for i in bench.IMPLS if i.name == args.lib)
    if impl.available():
        sys.exit(impl.available())
    tmp = Path(tempfile.mkdtemp(prefix="oxmq-cgg-"))
    try:
        lo_n, hi_n = args.count // 10, args.count
        lo, hi = (run_pair(impl, args.size, n, args.transport, tmp, seq) for seq, n in ((1, lo_n), (2, hi_n)))
        d = hi_n - lo_n
        print(f"{args.lib}, {args.transport} {args.size} B: instructions per message, "
              f"({hi_n:,} messages - {lo_n:,}) / {d:,}")
        for side, name in (("send", "sender (remote_thr)"), ("recv", "receiver (local_thr)")):
            total = 0.0
            for fa, fb in zip(lo[side], hi[side]):
                a, b = annotate(fa), annotate(fb)
                diff = {k: b[k] - a[k] for k in set(a) | set(b)}
                thread_total = sum(diff.values()) / d
                total += thread_total
                if thread_total < 1:
                    continue
                print(f"\n{name}, thread {fb.name.rsplit('-', 1)[1]}: {thread_total:,.0f}")
                groups: collections.Counter = collections.Counter()
                for k, v in diff.items():
                    groups[group_of(*k)] += v
                for g, v in groups.most_common():
                    if abs(v / d) >= 0.5:
                        print(f"  {v / d:8,.0f}  {g}")
                if args.functions:
                    fns: collections.Counter = collections.Counter()
                    for (_, fn, _), v in diff.items():
                        fns[fn] += v
                    print("  costliest functions (inlined code included):")
                    for fn, v in fns.most_common(args.functions):
                        print(f"  {v / d:8,.0f}  {fn[:100]}")
            print(f"\n{name}, all threads: {total:,.0f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
