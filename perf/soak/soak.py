#!/usr/bin/env python3
"""Soak: mixed ZeroMQ patterns on one library for a while, with peers killed (SIGKILL) and
restarted, frozen (SIGSTOP, so heartbeats must notice) and connecting in storms; at the end
nothing that must arrive is lost and the long-lived processes hold what they held before
(issue 14, item 3). The processes are perf/c/soak_peer, compiled against oxmq (default) or
libzmq (--lib libzmq), every socket with heartbeats on (HEARTBEAT_IVL 200 ms; TIMEOUT 800 ms for
REQ/REP, 3 s for the streams and PUB/SUB):

  REQ/REP     a REP server (killed and restarted at the same endpoint: every client socket
              reconnects at once; or frozen for 1.5 s) and --clients long-lived lazy-pirate
              clients of --sockets REQ sockets each (timeout: close, new socket, same request)
  PUSH/PULL   short-lived producers (bursts of them connecting at once; some killed midway)
              each sending a numbered stream to a long-lived PULL sink and exiting; the
              default linger must deliver all of it
  PUB/SUB     a long-lived PUB, a long-lived SUB, and short-lived SUBs killed at random

Checks: every request answered (retries allowed), every stream of a producer that exited 0
received whole and in order, no misordered or duplicated message anywhere, the long-lived
processes (clients, sink, pub, sub) alive and, between two quiet points (peers all up, no
producer running), the same descriptors other than established connections, the same
threads, and RSS within the tolerance (4 MiB or 10 %). Exit status 1 on any loss or leak.

    perf/soak/soak.py --duration 600            # ten minutes on oxmq
    perf/soak/soak.py --duration 45 --lib libzmq
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "perf" / "c" / "build"
DIST = Path(os.environ.get("DIST", ROOT / "dist"))


def log(msg: str):
    sys.stderr.write(f"[soak {time.strftime('%H:%M:%S')}] {msg}\n")
    sys.stderr.flush()


class Peer:
    """One soak_peer process; a thread collects its stdout lines."""

    def __init__(self, lib: str, role: str, *args):
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = str(DIST / "lib") if lib == "oxmq" else ""
        self.role = role
        self.p = subprocess.Popen([str(BUILD / lib / "soak_peer"), role, *map(str, args)], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.lines: list[str] = []
        self.err: list[str] = []
        self.cond = threading.Condition()
        self.readers = [threading.Thread(target=self._read, args=(self.p.stdout, self.lines), daemon=True),
                        threading.Thread(target=self._read, args=(self.p.stderr, self.err), daemon=True)]
        for t in self.readers:
            t.start()

    def _read(self, stream, into):
        for line in stream:
            with self.cond:
                into.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    @property
    def pid(self):
        return self.p.pid

    def alive(self):
        return self.p.poll() is None

    def wait_line(self, prefix: str, timeout: float, start: int = 0) -> str:
        """The first line from index `start` beginning with prefix, waiting for it."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines[start:]:
                    if line.startswith(prefix):
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or (self.p.poll() is not None and not self.readers[0].is_alive()):
                    raise RuntimeError(f"{self.role} (pid {self.pid}): no '{prefix}' line"
                                       f" (exit {self.p.poll()}, stderr: {' | '.join(self.err[-3:])})")
                self.cond.wait(min(left, 0.5))

    def command(self, text: str):
        try:
            self.p.stdin.write(text + "\n")
            self.p.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def stats(self, timeout=10.0) -> dict:
        start = len(self.lines)
        self.command("stats")
        return kv(self.wait_line("stats ", timeout, start))

    def stop(self, timeout=90.0) -> tuple[int | None, dict | None]:
        self.command("stop")
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None, None
        for t in self.readers:  # its last lines may still be in the pipe
            t.join(timeout=10)
        res = next((kv(line) for line in reversed(self.lines) if line.startswith("result ")), None)
        return self.p.returncode, res

    def kill(self, sig=signal.SIGKILL):
        if self.p.poll() is None:
            try:
                os.kill(self.p.pid, sig)
            except ProcessLookupError:
                pass
        if sig == signal.SIGKILL:
            self.p.wait()


def kv(line: str) -> dict:
    out = {}
    for part in line.split()[1:]:
        k, _, v = part.partition("=")
        try:
            out[k] = int(v)
        except ValueError:
            out[k] = v
    return out


def tcp_states() -> dict[str, str]:
    """socket inode -> TCP state (hex, 01 = established) for every tcp socket on the host."""
    states = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                for line in f.readlines()[1:]:
                    parts = line.split()
                    states[parts[9]] = parts[3]
        except OSError:
            pass
    return states


def snapshot(pid: int) -> dict:
    """Descriptors (split into established connections and the rest), threads, RSS."""
    states = tcp_states()
    conns = other = closing = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", target)
        state = states.get(m.group(1)) if m else None
        if state == "01":
            conns += 1
        elif state is not None and state != "0A":
            closing += 1  # connecting or closing: not a quiet point
        else:
            other += 1
    status = Path(f"/proc/{pid}/status").read_text()
    threads = int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))
    rss = int(re.search(r"^VmRSS:\s+(\d+)", status, re.M).group(1))
    return {"conns": conns, "other_fds": other, "closing": closing, "threads": threads, "rss_kb": rss}


class Soak:
    def __init__(self, args):
        self.a = args
        self.rng = random.Random(args.seed)
        self.stop_event = threading.Event()
        self.all: list[Peer] = []
        self.producers: list[tuple[Peer, int, bool]] = []  # (peer, id, killed by us)
        self.next_id = 1
        self.stream_len: dict[int, int] = {}
        self.finished_ok: set[int] = set()
        self.failed_producers: list[str] = []
        self.transient_subs: list[Peer] = []
        self.counts = {"rep_kills": 0, "rep_freezes": 0, "producers": 0, "producers_killed": 0,
                       "sub_kills": 0}

    def peer(self, role, *args) -> Peer:
        p = Peer(self.a.lib, role, *args)
        self.all.append(p)
        return p

    # the REP server: killed and restarted at the same endpoint
    def start_rep(self, ep: str) -> str:
        self.rep = self.peer("rep", ep)
        line = self.rep.wait_line("endpoint ", 15)
        return line.split()[1]

    def restart_rep(self):
        self.rep.kill()
        self.counts["rep_kills"] += 1
        self.start_rep(self.rep_ep)

    def freeze_rep(self, seconds: float):
        self.rep.kill(signal.SIGSTOP)
        self.counts["rep_freezes"] += 1
        self.stop_event.wait(seconds)  # the freeze itself: long enough for heartbeats to time out
        self.rep.kill(signal.SIGCONT)

    def reap_producers(self):
        keep = []
        for p, pid_, killed in self.producers:
            if p.alive():
                keep.append((p, pid_, killed))
                continue
            if p.p.returncode == 0:
                self.finished_ok.add(pid_)  # killed too late: it had finished, so all must arrive
            elif killed and p.p.returncode == -signal.SIGKILL:
                self.counts["producers_killed"] += 1
            elif not killed:
                self.failed_producers.append(f"producer {pid_} exit {p.p.returncode}: {' | '.join(p.err[-2:])}")
            self.all.remove(p)
        self.producers = keep

    def spawn_producers(self, n: int):
        for _ in range(n):
            pid_ = self.next_id
            self.next_id += 1
            count = self.rng.choice([100, 1_000, 10_000])
            self.producers.append((self.peer("producer", self.sink_ep, pid_, count), pid_, False))
            self.stream_len[pid_] = count
            self.counts["producers"] += 1

    def chaos_step(self):
        self.reap_producers()
        r = self.rng.random()
        if r < 0.15:
            log("SIGKILL the REP server and restart it (reconnect storm)")
            self.restart_rep()
        elif r < 0.22:
            log("SIGSTOP the REP server for 1.5 s (heartbeats)")
            self.freeze_rep(1.5)
        elif r < 0.55:
            self.spawn_producers(self.rng.randint(4, 12))  # a burst of connections
        elif r < 0.65:
            # a long stream killed midway: what it sent must arrive in order, the rest is lost
            pid_ = self.next_id
            self.next_id += 1
            p = self.peer("producer", self.sink_ep, pid_, 1_000_000)
            self.stream_len[pid_] = 1_000_000
            self.counts["producers"] += 1
            self.stop_event.wait(self.rng.uniform(0.02, 0.2))
            p.kill()
            self.producers.append((p, pid_, True))
        elif r < 0.85 and len(self.transient_subs) < 4:
            self.transient_subs.append(self.peer("sub", self.pub_ep))
        elif self.transient_subs:
            p = self.transient_subs.pop(self.rng.randrange(len(self.transient_subs)))
            p.kill()
            self.all.remove(p)
            self.counts["sub_kills"] += 1

    def quiesce(self):
        """A quiet point: the REP server up, no producer running, no short-lived SUB; then
        wait until every long-lived process holds exactly its steady connections and every
        client socket has had a reply since."""
        if not self.rep.alive():
            self.start_rep(self.rep_ep)
        deadline = time.monotonic() + 90
        while self.producers and time.monotonic() < deadline:
            self.reap_producers()
            if self.producers:
                self.producers[0][0].p.wait(timeout=max(0.1, deadline - time.monotonic()))
        self.reap_producers()
        if self.producers:
            raise RuntimeError("producers still running 90 s after the last one started")
        for p in self.transient_subs:
            p.kill()
            self.all.remove(p)
        self.transient_subs = []
        want = {"client": self.a.sockets, "sink": 0, "pub": 1, "sub": 1}
        base = [c.stats()["answered"] for c in self.clients]
        deadline = time.monotonic() + 30
        while True:
            snaps = {p.pid: snapshot(p.pid) for p in self.long_lived}
            ok = all(snaps[p.pid]["conns"] == want[p.role] and snaps[p.pid]["closing"] == 0
                     for p in self.long_lived)
            done = [c.stats()["answered"] for c in self.clients]
            ok = ok and all(d - b >= self.a.sockets for b, d in zip(base, done))
            if ok:
                return snaps
            if time.monotonic() > deadline:
                raise RuntimeError(f"no quiet point within 30 s: {snaps}")
            self.stop_event.wait(0.05)  # a condition polled under a deadline

    def run(self) -> int:
        a = self.a
        self.sink = self.peer("sink", "tcp://127.0.0.1:*")
        self.sink_ep = self.sink.wait_line("endpoint ", 15).split()[1]
        self.pub = self.peer("pub", "tcp://127.0.0.1:*", 2)
        self.pub_ep = self.pub.wait_line("endpoint ", 15).split()[1]
        self.sub = self.peer("sub", self.pub_ep)
        self.rep_ep = self.start_rep("tcp://127.0.0.1:*")
        self.clients = [self.peer("client", self.rep_ep, a.sockets, 20, 1000) for _ in range(a.clients)]
        self.long_lived = [self.sink, self.pub, self.sub, *self.clients]
        log(f"{a.lib}: sink {self.sink_ep}, pub {self.pub_ep}, rep {self.rep_ep}, "
            f"{a.clients} clients x {a.sockets} REQ sockets; {a.duration:.0f} s")

        t_end = time.monotonic() + a.duration
        warm = max(3.0, a.duration * 0.2)
        t_warm = time.monotonic() + warm
        while time.monotonic() < t_warm:
            self.chaos_step()
            self.stop_event.wait(self.rng.uniform(0.1, 0.4))
        before = self.quiesce()
        log("before: " + ", ".join(f"{p.role}[{p.pid}] {before[p.pid]}" for p in self.long_lived))
        t_end = max(t_end, time.monotonic() + a.duration * 0.5)
        while time.monotonic() < t_end:
            self.chaos_step()
            self.stop_event.wait(self.rng.uniform(0.1, 0.4))
        after = self.quiesce()
        log("after:  " + ", ".join(f"{p.role}[{p.pid}] {after[p.pid]}" for p in self.long_lived))

        problems = []
        dead = [p for p in self.long_lived if not p.alive()]
        problems += [f"{p.role} {p.pid} died: exit {p.p.returncode} {' | '.join(p.err[-3:])}" for p in dead]
        for p in self.long_lived:
            b, f = before[p.pid], after[p.pid]
            if f["other_fds"] != b["other_fds"]:
                problems.append(f"{p.role} {p.pid}: descriptors (not connections) {b['other_fds']} -> {f['other_fds']}")
            if f["threads"] != b["threads"]:
                problems.append(f"{p.role} {p.pid}: threads {b['threads']} -> {f['threads']}")
            grow = f["rss_kb"] - b["rss_kb"]
            if grow > max(a.rss_tolerance_kb, 0.10 * b["rss_kb"]):
                problems.append(f"{p.role} {p.pid}: RSS {b['rss_kb']} -> {f['rss_kb']} KiB")
        # the sink has every stream of every producer that finished: a producer's exit means
        # its stream has left it, not that the sink has read it all, so wait for the lines
        deadline = time.monotonic() + 30
        with self.sink.cond:
            while time.monotonic() < deadline and self.sink.alive():
                ok = {int(line.split()[1]) for line in self.sink.lines if line.endswith(" ok")}
                if self.finished_ok <= ok:
                    break
                self.sink.cond.wait(0.5)
        sink_done = {}
        for line in list(self.sink.lines):
            if line.startswith("done "):
                parts = line.split()
                sink_done[int(parts[1])] = parts[2]
            if line.startswith("order "):
                problems.append("sink: " + line)
        missing = sorted(i for i in self.finished_ok if sink_done.get(i) != "ok")
        if missing:
            detail = [next((line for line in self.sink.lines if line.startswith(f"done {i} ")),
                           f"{i} ({self.stream_len.get(i)} messages): no end marker") for i in missing[:5]]
            problems.append(f"streams of {len(missing)} finished producers incomplete: {missing[:10]} "
                            f"(sink: {'; '.join(detail)})")
        bad = [i for i, v in sink_done.items() if v != "ok" and i in self.finished_ok]
        if bad:
            problems.append(f"bad streams: {bad[:10]}")
        problems += self.failed_producers
        # stop the long-lived ones: clients finish what is outstanding
        results = {}
        for p in self.long_lived:
            rc, res = p.stop()
            results[f"{p.role}[{p.pid}]"] = res
            if rc != 0 or res is None:
                problems.append(f"{p.role} {p.pid}: exit {rc} {res} {' | '.join(p.err[-3:])}")
        req = sum(r["requests"] for k, r in results.items() if k.startswith("client") and r)
        ans = sum(r["answered"] for k, r in results.items() if k.startswith("client") and r)
        retries = sum(r["retries"] for k, r in results.items() if k.startswith("client") and r)
        if req != ans:
            problems.append(f"requests {req}, answered {ans}")
        sub = results.get(f"sub[{self.sub.pid}]") or {}
        sink = results.get(f"sink[{self.sink.pid}]") or {}

        def num(d, k):
            v = d.get(k)
            return f"{v:,}" if isinstance(v, int) else "?"

        print(f"## Soak: {a.lib}, {a.duration:.0f} s (perf/soak/soak.py, seed {a.seed})")
        print()
        print(f"- REQ/REP: {req:,} requests, {ans:,} answered, {retries:,} retries (lazy pirate); REP server "
              f"SIGKILLed and restarted {self.counts['rep_kills']}x, frozen {self.counts['rep_freezes']}x")
        print(f"- PUSH/PULL: {self.counts['producers']} producers ({self.counts['producers_killed']} SIGKILLed), "
              f"{len(self.finished_ok)} finished, all their streams whole: {'yes' if not missing else 'NO'}; "
              f"sink: {num(sink, 'messages')} messages, {num(sink, 'order_errors')} out of order")
        print(f"- PUB/SUB: long-lived SUB received {num(sub, 'received')}, gaps {num(sub, 'gaps')}, "
              f"misordered {num(sub, 'errors')}; {self.counts['sub_kills']} short-lived SUBs SIGKILLed")
        print()
        print("| long-lived process | descriptors (not connections) | connections | threads | RSS KiB |")
        print("|---|---|---|---|---|")
        for p in self.long_lived:
            b, f = before[p.pid], after[p.pid]
            print(f"| {p.role} | {b['other_fds']} → {f['other_fds']} | {b['conns']} → {f['conns']} "
                  f"| {b['threads']} → {f['threads']} | {b['rss_kb']:,} → {f['rss_kb']:,} |")
        print()
        if problems:
            print("FAILED:\n" + "\n".join(f"- {x}" for x in problems))
            return 1
        print("passed: nothing lost, nothing leaked")
        return 0

    def cleanup(self):
        for p in self.all:
            try:
                p.kill(signal.SIGCONT)
                p.kill()
            except Exception:  # noqa: BLE001
                pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=300, help="seconds of chaos (default 300)")
    ap.add_argument("--lib", choices=["oxmq", "libzmq"], default="oxmq")
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--sockets", type=int, default=8, help="REQ sockets per client")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--rss-tolerance-kb", type=int, default=4096,
                    help="RSS growth allowed between the quiet points (or 10 %%; queue peaks are not leaks)")
    args = ap.parse_args()
    # a timeout's SIGTERM unwinds like an exception, so every started process is killed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.seed is None:
        args.seed = random.randrange(1 << 30)
    exe = BUILD / args.lib / "soak_peer"
    if not exe.exists():
        sys.exit(f"missing {exe}: make -C perf/c DIST=$PWD/dist")
    s = Soak(args)
    try:
        rc = s.run()
    except Exception as e:  # noqa: BLE001 - reported, and a failure
        print(f"FAILED: {e}")
        rc = 1
    finally:
        s.cleanup()
    sys.exit(rc)


if __name__ == "__main__":
    main()
