#!/usr/bin/env python3
"""Faults between hosts, on a network simulated with Linux network namespaces.

Builds five hosts joined by veth links to a bridge in a namespace of its own (nothing leaves
the machine): `infra` (10.45.0.2: dnsmasq for the names, Prometheus), and h1-h4 (10.45.0.11-14),
whose resolver is that dnsmasq. A link is cut by taking the host's switch port down: no FIN,
no RST, packets just stop, as when a cable or a switch fails. Then, each with a time bound:

  cut     PUB/SUB, REQ/REP (lazy pirate), DEALER/ROUTER and PUSH/PULL between h1 (servers)
          and h2 (clients), heartbeats on; h2's link is cut, then healed. Checks: every socket
          sees the loss within its heartbeat timeout, the clients reconnect after the heal,
          every request is answered (none acknowledged is lost), and the senders' counters
          account for what was dropped.
  dns     A PUSH following svc.oxmq.test (OXMQ_DNS_FOLLOW): a replica is added, one removed
          while running, then the service moves to another host after its host is cut off.
          Checks: each change is followed within the lookup interval, nothing sent before the
          cut is lost, and what was queued for the cut-off address is counted as vanished.
  etcd    The wiring API's name service over a three-member etcd cluster on h2-h4: with h4 cut
          off, lookups and registrations through h2 and h3 keep working, and the name a
          process on h4 registered is withdrawn when its lease expires.
  metrics Prometheus scrapes every peer (OXMQ_METRICS_ADDR) during the cut; promtool checks
          the exposition and the rules in ops/prometheus; queries find the reconnects and
          drops the peers counted.

Usage: hosts.py --bin DIR [--only cut,dns,etcd,metrics] [--json FILE] | hosts.py --cleanup
The report (one line per observation) is printed; the exit status is 1 if a check failed.
Processes are the test's own; every one is ended and every namespace removed on exit.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

PREFIX = "oxmq45"
NET = "10.45.0"
SW = f"{PREFIX}-sw"
HOSTS = {"infra": 2, "h1": 11, "h2": 12, "h3": 13, "h4": 14}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FAILS = []
REPORT = []


def ip(host):
    return f"{NET}.{HOSTS[host]}"


def ns(host):
    return f"{PREFIX}-{host}"


def run(*cmd, check=True, capture=False, timeout=30):
    r = subprocess.run(cmd, check=False, timeout=timeout, text=True,
                       stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                       stderr=subprocess.PIPE if capture else subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode} {r.stderr if capture else ''}")
    return r


def check(ok, what):
    line = f"{'ok  ' if ok else 'FAIL'} {what}"
    print(line, flush=True)
    REPORT.append(line)
    if not ok:
        FAILS.append(what)
    return ok


def note(what):
    line = f"     {what}"
    print(line, flush=True)
    REPORT.append(line)


def wait_until(what, cond, timeout):
    """Waits for `cond()` (polled every 20 ms) until `timeout` s; returns its value or None."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() >= end:
            check(False, f"timed out after {timeout} s waiting for {what}")
            return None
        time.sleep(0.02)


def now_ms():
    return int(time.time() * 1000)


# ------------------------------------------------------------------------------------------
# The network.

def cleanup():
    """Ends every process left in the test's namespaces and removes them (idempotent)."""
    names = run("ip", "netns", "list", capture=True, check=False).stdout.split()
    mine = [n for n in names if n.startswith(PREFIX + "-")]
    for n in mine:
        pids = run("ip", "netns", "pids", n, capture=True, check=False).stdout.split()
        for p in pids:
            try:
                os.kill(int(p), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
    for n in mine:
        run("ip", "netns", "del", n, check=False)
        shutil.rmtree(f"/etc/netns/{n}", ignore_errors=True)


def net_up():
    cleanup()
    run("ip", "netns", "add", SW)
    run("ip", "-n", SW, "link", "add", "br0", "type", "bridge")
    run("ip", "-n", SW, "link", "set", "br0", "up")
    run("ip", "-n", SW, "link", "set", "lo", "up")
    for h in HOSTS:
        n = ns(h)
        run("ip", "netns", "add", n)
        port = f"p-{h}"
        run("ip", "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", n)
        run("ip", "link", "set", port, "netns", SW)
        run("ip", "-n", SW, "link", "set", port, "master", "br0", "up")
        run("ip", "netns", "exec", n, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        run("ip", "-n", n, "addr", "add", f"{ip(h)}/24", "dev", "eth0")
        run("ip", "-n", n, "link", "set", "eth0", "up")
        run("ip", "-n", n, "link", "set", "lo", "up")
        # `ip netns exec` mounts /etc/netns/NAME/* over /etc: the hosts resolve through dnsmasq.
        os.makedirs(f"/etc/netns/{n}", exist_ok=True)
        with open(f"/etc/netns/{n}/resolv.conf", "w") as f:
            f.write(f"nameserver {ip('infra')}\noptions timeout:1 attempts:2\n")


def cut(host):
    run("ip", "-n", SW, "link", "set", f"p-{host}", "down")
    return now_ms()


def heal(host):
    run("ip", "-n", SW, "link", "set", f"p-{host}", "up")
    return now_ms()


def fetch(host, url, timeout=5):
    """GET `url` from inside `host`'s namespace; (status, body) or (None, error)."""
    code = ("import sys,urllib.request,urllib.error\n"
            "try:\n r=urllib.request.urlopen(sys.argv[1],timeout=float(sys.argv[2]));print(r.status);sys.stdout.write(r.read().decode())\n"
            "except urllib.error.HTTPError as e: print(e.code)\n"
            "except Exception as e: print('ERR');print(e)\n")
    r = run("ip", "netns", "exec", ns(host), sys.executable, "-c", code, url, str(timeout),
            capture=True, check=False, timeout=timeout + 5)
    first, _, rest = r.stdout.partition("\n")
    return (int(first) if first.isdigit() else None), rest


# ------------------------------------------------------------------------------------------
# Processes in the namespaces.

class Proc:
    """A process in a host's namespace, its JSON-line output collected with arrival times."""

    all = []

    def __init__(self, host, argv, name, env=None, json_lines=True):
        self.name, self.host = name, host
        self.lines = []
        self.cv = threading.Condition()
        self.log = open(os.path.join(WORK, f"{name}.err"), "w")
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen(["ip", "netns", "exec", ns(host)] + argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.log, text=True, env=e)
        Proc.all.append(self)
        self.json = json_lines
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            line = line.strip()
            if not line:
                continue
            if self.json:
                try:
                    obj = json.loads(line)
                except ValueError:
                    obj = {"ev": "text", "text": line, "t": now_ms()}
            else:
                obj = {"ev": "text", "text": line, "t": now_ms()}
            with self.cv:
                self.lines.append(obj)
                self.cv.notify_all()

    def find(self, pred, after=0):
        with self.cv:
            return [o for o in self.lines if o.get("t", 0) >= after and pred(o)]

    def wait(self, what, pred, timeout, after=0):
        """The first line after `after` (ms) satisfying `pred`, waiting up to `timeout` s."""
        end = time.monotonic() + timeout
        with self.cv:
            while True:
                for o in self.lines:
                    if o.get("t", 0) >= after and pred(o):
                        return o
                left = end - time.monotonic()
                if left <= 0 or self.p.poll() is not None:
                    check(False, f"{self.name}: timed out after {timeout} s waiting for {what}")
                    return None
                self.cv.wait(min(left, 0.1))

    def last(self, ev):
        got = self.find(lambda o: o.get("ev") == ev)
        return got[-1] if got else None

    def stop(self, timeout=10):
        """Asks the process to stop; returns its summary line (None if it had none)."""
        try:
            self.p.stdin.write("stop\n")
            self.p.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        return self.last("summary")

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def stop_all():
    for p in Proc.all:
        p.kill()
    Proc.all = []


def seqs(summary, source):
    """The sequence numbers a receiver's summary lists for `source`, as a set."""
    out = set()
    for r in (summary or {}).get("seqs", {}).get(source, []):
        lo, hi = r.split("-")
        out.update(range(int(lo), int(hi) + 1))
    return out


METRICS_PORTS = iter(range(9101, 9200))
TARGETS = {}  # peer name -> "ip:port" of its metrics endpoint, for Prometheus


def peer(host, role, endpoint, name, *extra):
    port = next(METRICS_PORTS)
    addr = f"{ip(host)}:{port}"
    TARGETS[name] = addr
    p = Proc(host, [os.path.join(BIN, "oxmq-hostpeer"), role, endpoint, "--name", name, *extra], name,
             env={"OXMQ_METRICS_ADDR": addr})
    if "proc" in PROM:
        prometheus_targets()
    return p


def mon_after(p, what, t0):
    o = p.find(lambda o: o.get("ev") == "mon" and o.get("what") == what, after=t0)
    return o[0]["t"] if o else None


# ------------------------------------------------------------------------------------------
# Scenario: a link cut without FIN.

def scenario_cut(during=None):
    print("== cut: a link cut without FIN between h1 (servers) and h2 (clients), heartbeats 200/1000 ms", flush=True)
    s = {
        "pub": peer("h1", "pub", "tcp://*:7001", "pub", "--rate", "500", "--hwm", "200"),
        "rep": peer("h1", "rep", "tcp://*:7002", "rep"),
        "router": peer("h1", "router", "tcp://*:7003", "router"),
        "pull": peer("h1", "pull", "tcp://*:7004", "pull"),
    }
    for p in s.values():
        p.wait("ready", lambda o: o.get("ev") == "ready", 10)
    h1 = ip("h1")
    c = {
        "sub": peer("h2", "sub", f"tcp://{h1}:7001", "sub"),
        "req": peer("h2", "req", f"tcp://{h1}:7002", "req", "--rate", "50", "--timeout", "1000"),
        "dealer": peer("h2", "dealer", f"tcp://{h1}:7003", "dealer", "--rate", "100", "--timeout", "1000"),
        "push": peer("h2", "push", f"tcp://{h1}:7004", "push", "--rate", "500", "--hwm", "200"),
    }
    for name, p in c.items():
        key = "tx" if name == "push" else "rx"
        p.wait(f"{name} traffic", lambda o, key=key: o.get("ev") == "tick" and o[key] > 0, 15)
    s["pull"].wait("pull traffic", lambda o: o.get("ev") == "tick" and o["rx"] > 0, 10)
    if during:
        during()
    time.sleep(1.0)  # a second of steady traffic before the fault (the scenario's own pace)
    t_cut = cut("h2")
    note(f"cut h2's link at {t_cut}")
    every = {**s, **c}
    detected = {}
    for name, p in every.items():
        # The lazy pirate gives up on its reply (and its socket) before its heartbeat would.
        what = ("retry",) if name == "req" else ("mon",)
        o = p.wait(f"{name} detects the loss", lambda o: o.get("ev") in what and (o.get("ev") == "retry" or o.get("what") == "DISCONNECTED"),
                   8, after=t_cut)
        if o:
            detected[name] = o["t"] - t_cut
    time.sleep(max(0.0, 3.0 - (now_ms() - t_cut) / 1000))  # keep the link down 3 s in all
    t_heal = heal("h2")
    note(f"healed at {t_heal} ({t_heal - t_cut} ms down)")
    recovered = {}
    for name in ("sub", "pull"):
        p = c.get(name) or s.get(name)
        o = p.wait(f"{name} receives again", lambda o: o.get("ev") == "resume", 15, after=t_heal)
        if o:
            recovered[name] = o["t"] - t_heal
    for name in ("req", "dealer"):
        before = (c[name].find(lambda o: o.get("ev") == "tick" and o["t"] <= t_heal) or [{"acked": 0}])[-1]["acked"]
        o = c[name].wait(f"{name} answered again", lambda o: o.get("ev") == "tick" and o.get("acked", 0) > before, 15, after=t_heal)
        if o:
            recovered[name] = o["t"] - t_heal
    time.sleep(1.0)  # steady traffic again, then stop
    # Prometheus has scraped the reconnects before the peers go.
    prom_saw('max_over_time(oxmq_socket_reconnects_total{name="sub"}[5m])', lambda v: v >= 1)
    prom_saw('max_over_time(oxmq_socket_reconnects_total{name="push"}[5m])', lambda v: v >= 1)
    for name, t in sorted(detected.items()):
        if name == "req":
            check(t <= 2500, f"cut: req gave up on its reply {t} ms after the cut (its timeout 1000 ms)")
        else:
            check(t <= 2000, f"cut: {name} saw DISCONNECTED {t} ms after the cut (heartbeats: ping every 200 ms, timeout 1000 ms)")
    for name, t in sorted(recovered.items()):
        check(t <= 6000, f"cut: {name} delivering again {t} ms after the heal")
    # Clients stop first, so their last requests are answered and the servers count them.
    sums = {name: p.stop() for name, p in c.items()}
    sums.update({name: p.stop() for name, p in s.items()})
    pb_proc = s["pub"]
    RESULT["cut"] = {"detected_ms": detected, "recovered_ms": recovered, "down_ms": t_heal - t_cut}
    # REQ/REP (lazy pirate): every request answered, in order, none lost.
    r = sums["req"]
    if check(r is not None, "cut: req summary"):
        ok = r["unacked"] in (0, 1) and seqs(r, "req") == set(range(r["acked"]))
        check(ok and r["retries"] >= 1, f"cut: REQ lazy pirate: {r['acked']} requests answered, none lost, "
                                         f"{r['retries']} resent after a timeout")
        RESULT["cut"]["req"] = {k: r[k] for k in ("acked", "retries")}
    d = sums["dealer"]
    if check(d is not None, "cut: dealer summary"):
        got = seqs(d, "dealer")
        check(got == set(range(len(got))) and d["retries"] >= 1,
              f"cut: DEALER/ROUTER: {d['acked']} requests answered, none lost, {d['retries']} resent, "
              f"{d['dups']} duplicate answers ignored, {d['unacked']} in flight at the stop")
        RESULT["cut"]["dealer"] = {k: d[k] for k in ("acked", "retries", "dups", "unacked")}
    # PUB/SUB: no acknowledgements; the publisher counts what it dropped.
    pb, sb = sums["pub"], sums["sub"]
    if check(pb is not None and sb is not None, "cut: pub/sub summaries"):
        got = seqs(sb, "pub")
        missing = pb["tx"] - len(got)
        counted = pb["stats"]["dropped_hwm"] + pb["stats"]["dropped_disconnected"]
        # Published while no subscriber was connected (from the publisher's 200 ms ticks): no
        # drop for PUB, which sends to the subscribers it has.
        ticks = pb_proc.find(lambda o: o.get("ev") == "tick")
        alone = sum(b["tx"] - a["tx"] for a, b in zip(ticks, ticks[1:]) if b["stats"]["peers"] == 0 and a["stats"]["peers"] == 0)
        in_tcp = missing - counted - alone
        check(counted > 0 and missing >= counted,
              f"cut: PUB/SUB: {pb['tx']} published, {len(got)} received, {missing} missing: the publisher counted "
              f"{pb['stats']['dropped_hwm']} dropped at the HWM and {pb['stats']['dropped_disconnected']} dropped with "
              f"the dead connection's queue; about {alone} were published while it had no subscriber (not drops) "
              f"and about {in_tcp} were in the dead TCP connection (not countable)")
        check(sb["stats"]["reconnects"] >= 1, f"cut: SUB reconnected ({sb['stats']['reconnects']} reconnects)")
        RESULT["cut"]["pubsub"] = {"published": pb["tx"], "received": len(got), "dropped_hwm": pb["stats"]["dropped_hwm"],
                                   "dropped_disconnected": pb["stats"]["dropped_disconnected"],
                                   "without_subscriber": alone, "in_tcp": in_tcp}
    ps, pl = sums["push"], sums["pull"]
    if check(ps is not None and pl is not None, "cut: push/pull summaries"):
        got = seqs(pl, "push")
        lost = ps["tx"] - len(got)
        check(got <= set(range(ps["tx"])) and lost < 2 * 200 + 2000 and ps["stats"]["reconnects"] >= 1,
              f"cut: PUSH/PULL: {ps['tx']} sent, {len(got)} received, {lost} lost with the dead TCP connection "
              f"(PUSH has no acknowledgement; its queue waited for the reconnect: HWM reached "
              f"{ps['stats']['hwm_reached']} times, no drop counted), {ps['stats']['reconnects']} reconnect")
        RESULT["cut"]["pushpull"] = {"sent": ps["tx"], "received": len(got), "lost_in_tcp": lost}


# ------------------------------------------------------------------------------------------
# Scenario: a DNS record that changes, followed by OXMQ_DNS_FOLLOW.

DNS = {}


def dns_start():
    DNS["hosts"] = os.path.join(WORK, "dns-hosts")
    dns_set({})
    DNS["proc"] = Proc("infra", ["dnsmasq", "--no-daemon", "--no-resolv", "--no-hosts", f"--addn-hosts={DNS['hosts']}",
                                 f"--listen-address={ip('infra')}", "--bind-interfaces", "--local=/oxmq.test/",
                                 "--local-ttl=0", "--neg-ttl=0", "--cache-size=0", f"--pid-file={WORK}/dnsmasq.pid",
                                 "--user=root"], "dnsmasq", json_lines=False)


def dns_set(records):
    """Replaces the DNS records (name -> [hosts]) and waits until h1 resolves them so."""
    with open(DNS["hosts"] + ".tmp", "w") as f:
        for name, hosts in records.items():
            for h in hosts:
                f.write(f"{ip(h)} {name}\n")
    os.replace(DNS["hosts"] + ".tmp", DNS["hosts"])
    if "proc" in DNS:
        DNS["proc"].p.send_signal(signal.SIGHUP)
    t = now_ms()
    for name, hosts in records.items():
        want = sorted(ip(h) for h in hosts)

        def resolved(name=name, want=want):
            r = run("ip", "netns", "exec", ns("h1"), "getent", "ahostsv4", name, capture=True, check=False)
            return sorted({l.split()[0] for l in r.stdout.splitlines() if l.strip()}) == want

        if "proc" in DNS:
            wait_until(f"{name} -> {want} in DNS", resolved, 10)
    return t


def scenario_dns():
    print("== dns: a PUSH following svc.oxmq.test (OXMQ_DNS_FOLLOW, interval 500 ms)", flush=True)
    port = 7100
    pulls = {h: peer(h, "pull", f"tcp://*:{port}", f"svc-{h}") for h in ("h2", "h3", "h4")}
    for p in pulls.values():
        p.wait("ready", lambda o: o.get("ev") == "ready", 10)
    dns_set({"svc.oxmq.test": ["h3"]})
    push = peer("h1", "push", f"tcp://svc.oxmq.test:{port}", "svcpush", "--follow", "500", "--rate", "400",
                "--linger", "2000")
    pulls["h3"].wait("h3 receives", lambda o: o.get("ev") == "resume", 15)
    time.sleep(1.0)
    res = {}
    # A replica is added.
    t = dns_set({"svc.oxmq.test": ["h3", "h4"]})
    o = pulls["h4"].wait("the added replica receives", lambda o: o.get("ev") == "resume", 10, after=t)
    if o:
        res["added_ms"] = o["t"] - t
        check(res["added_ms"] <= 3000, f"dns: replica added: h4 receiving {res['added_ms']} ms after the record changed")
    time.sleep(1.0)
    # A replica is removed while it runs: drained, then disconnected, nothing lost.
    t = dns_set({"svc.oxmq.test": ["h4"]})
    o = pulls["h3"].wait("the removed replica disconnected", lambda o: o.get("ev") == "mon" and o.get("what") == "DISCONNECTED", 10, after=t)
    if o:
        res["removed_ms"] = o["t"] - t
        check(res["removed_ms"] <= 3000, f"dns: replica removed: h3's connection closed by the PUSH {res['removed_ms']} ms "
                                         f"after the record changed (after its queue was delivered)")
    time.sleep(1.0)
    # The service moves: its host is cut off (no FIN), and the record points elsewhere.
    t_before = now_ms() - 300
    sent_before = max((o["tx"] for o in push.find(lambda o: o.get("ev") == "tick" and o["t"] <= t_before)), default=0)
    t_cut = cut("h4")
    t = dns_set({"svc.oxmq.test": ["h2"]})
    o = pulls["h2"].wait("the new host receives", lambda o: o.get("ev") == "resume", 10, after=t)
    if o:
        res["moved_ms"] = o["t"] - t
        check(res["moved_ms"] <= 3000, f"dns: service moved to h2 after h4 was cut off: h2 receiving {res['moved_ms']} ms "
                                       f"after the record changed")
    # The cut-off address's queue is counted once its drain period (LINGER, 2000 ms) is over.
    push.wait("the vanished address counted", lambda o: o.get("ev") == "tick" and o["stats"]["dropped_vanished"] > 0
              and o["stats"]["peers"] == 1, 10, after=t)
    prom_saw('max_over_time(oxmq_socket_dropped_messages_total{name="svcpush",reason="vanished"}[5m])', lambda v: v > 0)
    heal("h4")
    ps = push.stop()
    sums = {h: p.stop() for h, p in pulls.items()}
    if check(ps is not None and all(sums.values()), "dns: summaries"):
        got = {h: seqs(sums[h], "svcpush") for h in sums}
        union = set().union(*got.values())
        overlap = sum(len(v) for v in got.values()) - len(union)
        sent = ps["tx"]
        vanished = ps["stats"]["dropped_vanished"]
        before = set(range(sent_before))
        check(overlap == 0, f"dns: no message delivered twice ({overlap})")
        check(before <= union, f"dns: all {sent_before} messages sent before the cut delivered across the changes "
                               f"(h3 {len(got['h3'])}, h4 {len(got['h4'])}, h2 {len(got['h2'])})")
        lost = sent - len(union) - vanished
        check(vanished > 0 and 0 <= lost <= 2000,
              f"dns: after the cut: {vanished} messages queued for the cut-off address counted as dropped (vanished), "
              f"{lost} lost in its dead TCP connection (not countable), {sent} sent in all")
        res.update(sent=sent, received=len(union), vanished=vanished, lost_in_tcp=lost,
                   changes=ps["stats"])
    RESULT["dns"] = res


# ------------------------------------------------------------------------------------------
# Scenario: the wiring API's name service on a three-member etcd cluster.

def scenario_etcd():
    print("== etcd: the wiring name service on etcd members in h2, h3, h4; h4 cut off", flush=True)
    members = ("h2", "h3", "h4")
    cluster = ",".join(f"e{h}=http://{ip(h)}:2380" for h in members)
    for h in members:
        data = os.path.join(WORK, f"etcd-{h}")
        Proc(h, ["etcd", "--name", f"e{h}", "--data-dir", data, "--listen-client-urls", f"http://{ip(h)}:2379",
                 "--advertise-client-urls", f"http://{ip(h)}:2379", "--listen-peer-urls", f"http://{ip(h)}:2380",
                 "--initial-advertise-peer-urls", f"http://{ip(h)}:2380", "--initial-cluster", cluster,
                 "--initial-cluster-state", "new", "--initial-cluster-token", PREFIX, "--log-level", "error",
                 # A member that comes back does not depose the leader the others elected.
                 "--pre-vote"],
             f"etcd-{h}", json_lines=False)
    eps = ",".join(f"http://{ip(h)}:2379" for h in members)
    wait_until("etcd cluster healthy", lambda: run("ip", "netns", "exec", ns("h1"), "etcdctl", f"--endpoints={eps}",
                                                   "endpoint", "health", capture=True, check=False).returncode == 0, 30)
    for h in members:
        Proc(h, [os.path.join(BIN, "oxmq-name-server"), "--bind", f"tcp://{ip(h)}:5682", "--etcd", f"http://{ip(h)}:2379"],
             f"ns-{h}", json_lines=False)
    env = {"OXMQ_WIRING_TTL_MS": "3000", "OXMQ_WIRING_TIMEOUT_MS": "3000"}

    def wiring(host, server, *cmd, name):
        return Proc(host, [os.path.join(BIN, "oxmq-wiring-peer"), f"{ip(server)}:5682", *cmd], name, env=env,
                    json_lines=False)

    def lookup(server, name):
        r = run("ip", "netns", "exec", ns("h1"), os.path.join(BIN, "oxmq-wiring-peer"), f"{ip(server)}:5682", "lookup",
                name, capture=True, check=False, timeout=20)
        return r.stdout.strip() if r.returncode == 0 else None

    def ready(p):
        return p.wait(f"{p.name} registered", lambda o: o["text"].startswith("READY"), 20)

    # Name servers up (a lookup of an unknown name answers NOTFOUND, exit 1, quickly).
    a = wiring("h1", "h3", "exchange", "before.cut", name="wiring-a")
    b = wiring("h4", "h4", "exchange", "on.cut.host", name="wiring-b")
    ready(a)
    ready(b)
    check(lookup("h2", "before.cut") is not None and lookup("h2", "on.cut.host") is not None,
          "etcd: names registered through h3 and h4 are found through h2")
    t_cut = cut("h4")
    res = {}
    # If h4 led the cluster, h2 and h3 elect a leader first (etcd's election timeout, 1 s):
    # a request meanwhile times out (3 s) and the client tries again, as any client would.
    attempts, c, o = 0, None, None
    deadline = time.monotonic() + 20
    while o is None and time.monotonic() < deadline:
        attempts += 1
        c = wiring("h1", "h2", "exchange", "during.cut", name=f"wiring-c{attempts}")
        while c.p.poll() is None and not c.find(lambda o: o["text"].startswith("READY")):
            time.sleep(0.02)
        got = c.find(lambda o: o["text"].startswith("READY"))
        o = got[0] if got else None
    if o:
        res["register_ms"] = o["t"] - t_cut
        res["register_attempts"] = attempts
    check(o is not None, f"etcd: with h4 cut off, a registration through h2 succeeds {res.get('register_ms')} ms after "
                         f"the cut (attempt {attempts})")
    found = wait_until("lookups through h2 and h3", lambda: lookup("h3", "during.cut") is not None
                       and lookup("h2", "before.cut") is not None and now_ms(), 20)
    if found:
        res["lookups_ms"] = found - t_cut
    check(found is not None, f"etcd: with h4 cut off, lookups through h2 and h3 find old and new names "
                             f"({res.get('lookups_ms')} ms after the cut)")
    t_gone = wait_until("the cut-off host's name withdrawn", lambda: lookup("h2", "on.cut.host") is None and now_ms(), 30)
    if t_gone:
        res["withdrawn_ms"] = t_gone - t_cut
        check(res["withdrawn_ms"] <= 20000, f"etcd: the name registered by the process on h4 was withdrawn "
                                            f"{res['withdrawn_ms']} ms after the cut (ttl 3000 ms, an etcd lease)")
    t_heal = heal("h4")
    back = wait_until("the name back after the heal", lambda: lookup("h2", "on.cut.host") is not None and now_ms(), 30)
    if back:
        res["reregistered_ms"] = back - t_heal
        note(f"etcd: after the heal, the process on h4 registered its name again ({res['reregistered_ms']} ms)")
    RESULT["etcd"] = res
    for p in (a, b, c):
        p.kill()


# ------------------------------------------------------------------------------------------
# Metrics: Prometheus scraping the peers, promtool on the exposition and the rules.

PROM = {}


def prometheus_start():
    rules = os.path.join(ROOT, "ops", "prometheus", "oxmq-rules.yml")
    r = run("promtool", "check", "rules", rules, capture=True, check=False)
    check(r.returncode == 0, f"metrics: promtool check rules ops/prometheus/oxmq-rules.yml {r.stdout.strip().splitlines()[-1:] }")
    cfg = os.path.join(WORK, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n"
                f"rule_files: ['{rules}']\n"
                "scrape_configs:\n  - job_name: oxmq\n    file_sd_configs:\n"
                f"      - files: ['{WORK}/targets.json']\n        refresh_interval: 1s\n")
    with open(os.path.join(WORK, "targets.json"), "w") as f:
        json.dump([{"targets": []}], f)
    PROM["proc"] = Proc("infra", ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={WORK}/tsdb",
                                  f"--web.listen-address={ip('infra')}:9090", "--log.level=warn"], "prometheus",
                        json_lines=False)
    wait_until("Prometheus ready", lambda: fetch("infra", f"http://{ip('infra')}:9090/-/ready", 2)[0] == 200, 30)


def prometheus_targets():
    with open(os.path.join(WORK, "targets.json.tmp"), "w") as f:
        json.dump([{"targets": sorted(TARGETS.values())}], f)
    os.replace(os.path.join(WORK, "targets.json.tmp"), os.path.join(WORK, "targets.json"))


def prom_saw(expr, want, timeout=10):
    """When Prometheus runs: waits until `expr` has a value `want` accepts (it scrapes every
    second), so the peers are not stopped before their counts were scraped."""
    if "proc" not in PROM:
        return
    wait_until(f"Prometheus: {expr}", lambda: (q := query(expr)) and want(float(q[0]["value"][1])), timeout)


def query(expr):
    url = f"http://{ip('infra')}:9090/api/v1/query?query={urllib.parse.quote(expr)}"
    code, body = fetch("infra", url)
    if code != 200:
        return None
    return json.loads(body)["data"]["result"]


def promtool_exposition(addr, what):
    code, body = fetch("infra", f"http://{addr}/metrics")
    if not check(code == 200 and "oxmq_socket_sent_messages_total" in body, f"metrics: GET http://{addr}/metrics ({what})"):
        return
    r = subprocess.run(["promtool", "check", "metrics"], input=body, text=True, capture_output=True, timeout=30)
    check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
          f"metrics: promtool check metrics on {what}'s exposition ({len(body.splitlines())} lines) "
          f"{(r.stdout + r.stderr).strip()[:300]}")
    return body


def metrics_during_cut():
    """While the cut scenario's peers run: every target scraped, each exposition linted."""
    prometheus_targets()
    wait_until("Prometheus scraping every peer", lambda: (q := query('count(up{job="oxmq"} == 1)')) and
               int(float(q[0]["value"][1])) == len(TARGETS), 30)
    for name in ("pub", "sub", "router", "dealer"):
        promtool_exposition(TARGETS[name], name)
    # The dashboard names only metrics the exposition has.
    code, body = fetch("infra", f"http://{TARGETS['pub']}/metrics")
    have = {l.split()[2] for l in body.splitlines() if l.startswith("# TYPE ")}
    dash = json.load(open(os.path.join(ROOT, "ops", "grafana", "oxmq-dashboard.json")))
    used = set()
    for p in dash["panels"]:
        for t in p["targets"]:
            used.update(re.findall(r"oxmq_[a-z_]+", t["expr"]))
    check(used and used <= have, f"metrics: the Grafana dashboard's {len(used)} metrics are all exposed "
                                 f"{sorted(used - have)}")


def scenario_metrics_after():
    """After the scenarios (their peers stopped, so their series are stale: `_over_time`)."""
    res = {}
    for expr, what, want in [
        ('max_over_time(oxmq_socket_reconnects_total{name="sub"}[5m])', "the SUB's reconnects", lambda v: v >= 1),
        ('max_over_time(oxmq_socket_reconnects_total{name="push"}[5m])', "the PUSH's reconnects", lambda v: v >= 1),
        ('sum(max_over_time(oxmq_socket_dropped_messages_total{name="pub",reason=~"hwm|disconnected"}[5m]))',
         "the PUB's drops", lambda v: v > 0),
        ('max_over_time(oxmq_socket_peers{name="pub"}[5m])', "the PUB's subscriber connected", lambda v: v == 1),
        ('max_over_time(oxmq_socket_sent_messages_total{name="svcpush"}[5m])', "the followed PUSH's messages", lambda v: v > 0),
        ('max_over_time(oxmq_socket_dropped_messages_total{name="svcpush",reason="vanished"}[5m])',
         "the followed PUSH's vanished drops", lambda v: v > 0),
        ('max_over_time(oxmq_socket_dns_address_changes_total{name="svcpush",change="added"}[5m])',
         "the followed PUSH's address changes", lambda v: v >= 3),
        ('min_over_time(up{job="oxmq",instance="%s"}[5m])' % TARGETS.get("sub"),
         "the SUB's scrapes failing while its host was cut off", lambda v: v == 0),
    ]:
        got = wait_until(f"Prometheus: {what}", lambda expr=expr: (q := query(expr)) and q[0]["value"][1], 15)
        v = float(got) if got else None
        check(v is not None and want(v), f"metrics: Prometheus query {expr} = {v} ({what})")
        res[expr] = v
    RESULT["metrics"] = res


# ------------------------------------------------------------------------------------------

def main():
    global BIN, WORK, RESULT
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--only", default="cut,dns,etcd,metrics")
    ap.add_argument("--json")
    ap.add_argument("--cleanup", action="store_true")
    a = ap.parse_args()
    if a.cleanup:
        cleanup()
        return 0
    # SIGTERM (the suite's trap, `timeout`) unwinds through the `finally` below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    BIN = os.path.abspath(a.bin)
    WORK = tempfile.mkdtemp(prefix="oxmq-hosts.")
    RESULT = {}
    only = set(a.only.split(","))
    t0 = time.monotonic()
    try:
        net_up()
        dns_start()
        if "metrics" in only:
            prometheus_start()
        if "cut" in only:
            scenario_cut(during=metrics_during_cut if "metrics" in only else None)
        if "dns" in only:
            scenario_dns()
        if "metrics" in only and "cut" in only and "dns" in only:
            scenario_metrics_after()
        if "etcd" in only:
            scenario_etcd()
    finally:
        stop_all()
        cleanup()
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"result": RESULT, "report": REPORT, "failures": FAILS}, f, indent=1)
        if not os.environ.get("KEEP_WORK"):
            shutil.rmtree(WORK, ignore_errors=True)
    print(f"== hosts: {len([l for l in REPORT if l.startswith('ok')])} checks passed, {len(FAILS)} failed "
          f"in {time.monotonic() - t0:.0f} s", flush=True)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
