#!/usr/bin/env bash
# JVM section: netty-zmtp's three benchmarks (one-way throughput, req/rep throughput, req/rep
# with a custom encoder/decoder), written for oxmq-netty (java/oxmq-netty, bench package) and for
# com.spotify:netty4-zmtp 0.4.0 (src/bench-netty4, netty 4.0 in its own JVM), same handlers,
# same JDK, interleaved round by round; beside them oxmq's Rust perf tools for the same patterns
# (local_thr/remote_thr; local_lat/remote_lat = req/rep with one request in flight), and the
# custom benchmark once more with a framing-only floor codec (the bound on any codec's rate).
#
#   bash perf/harness/sections.d/40-netty.sh RESULT.md [--quick]
#
# Appends a table to RESULT.md and writes RESULT-netty.png (matplotlib) beside it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
result="$(realpath -m "${1:?usage: 40-netty.sh RESULT.md [--quick]}")"
shift
quick=0
for a in "$@"; do [ "$a" = "--quick" ] && quick=1; done
cd "$root"

# Five rounds, not the other sections' three: one JVM's rate moves up to 20% from the next's
# with what C2 makes of the hot code, most of all in the custom benchmark.
if [ "$quick" = 1 ]; then rounds=1; warm=1; meas=2; thr_count=200000; lat_count=5000
else rounds=5; warm=3; meas=5; thr_count=2000000; lat_count=20000; fi

command -v mvn >/dev/null 2>&1 || timeout 600 apt-get install -y -q maven
python3 -c 'import matplotlib' 2>/dev/null || timeout 600 python3 -m pip install -q matplotlib \
  || echo "40-netty: matplotlib unavailable, no chart" >&2

mod="$root/java/oxmq-netty"
echo "== 40-netty: building oxmq-netty and its benchmarks" >&2
timeout 900 bash java/mvnw.sh -q -B -pl oxmq-netty test-compile dependency:build-classpath \
  -Dmdep.outputFile="$mod/target/cp.txt" >&2
# java/mvnw.sh picked a JDK 25; run everything on that one JVM.
jdk=""
for d in /usr/lib/jvm/*25* /usr/lib/jvm/*; do
  if [ -x "$d/bin/javac" ] && "$d/bin/java" -version 2>&1 | grep -q 'version "2[5-9]'; then jdk="$d"; break; fi
done
[ -n "$jdk" ] || { echo "40-netty: no JDK 25" >&2; exit 1; }
java="$jdk/bin/java"
peers="$mod/target/peers"
n4cp="$peers/netty-all-4.0.jar:$peers/netty4-zmtp.jar"
mkdir -p "$mod/target/bench-netty4"
timeout 300 "$jdk/bin/javac" -nowarn -d "$mod/target/bench-netty4" -cp "$n4cp" \
  "$mod/src/bench-netty4/Netty4ZmtpBench.java" >&2
oxcp="$mod/target/classes:$mod/target/test-classes:$(cat "$mod/target/cp.txt")"

rust_ok=1
echo "== 40-netty: building oxmq's Rust perf tools" >&2
if ! timeout 1800 cargo build -q --release -p oxmq-perf >&2; then
  rust_ok=0; echo "40-netty: cargo build -p oxmq-perf failed: Rust rows omitted" >&2
fi
bin="$root/target/release"

raw="$(mktemp)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for r in $(seq 1 "$rounds"); do
  for m in throughput reqrep custom; do
    out=$(timeout 120 "$java" -cp "$oxcp" io.oxmq.netty.bench.OxmqNettyBench "$m" "$warm" "$meas" 2>/dev/null | grep '^RESULT' || true)
    echo "oxmq-netty $out" | tee -a "$raw" >&2
    out=$(timeout 120 "$java" -cp "$mod/target/bench-netty4:$n4cp" Netty4ZmtpBench "$m" "$warm" "$meas" 2>/dev/null | grep '^RESULT' || true)
    echo "netty4-zmtp $out" | tee -a "$raw" >&2
  done
  # The custom benchmark with a codec that frames and does nothing else (FloorCodec): the rate
  # this benchmark allows any codec on this machine.
  out=$(timeout 120 "$java" -cp "$oxcp" io.oxmq.netty.bench.OxmqNettyBench custom-floor "$warm" "$meas" 2>/dev/null | grep '^RESULT' || true)
  echo "oxmq-netty $out" | tee -a "$raw" >&2
  if [ "$rust_ok" = 1 ]; then
    p=$(free_port)
    timeout 120 "$bin/local_thr" "tcp://127.0.0.1:$p" 100 "$thr_count" > "$raw.thr" 2>&1 &
    lp=$!
    timeout 120 "$bin/remote_thr" "tcp://127.0.0.1:$p" 100 "$thr_count" >/dev/null 2>&1 || true
    wait "$lp" || true
    t=$(awk '/mean throughput/ && /msg/ {print $3}' "$raw.thr")
    echo "oxmq-rust RESULT throughput ${t:-0} 0" | tee -a "$raw" >&2
    p=$(free_port)
    timeout 120 "$bin/local_lat" "tcp://127.0.0.1:$p" 100 "$lat_count" >/dev/null 2>&1 &
    lp=$!
    l=$(timeout 120 "$bin/remote_lat" "tcp://127.0.0.1:$p" 100 "$lat_count" 2>&1 | awk '/average latency/ {print $3}')
    wait "$lp" || true
    echo "oxmq-rust RESULT reqrep1 ${l:-0} 0" | tee -a "$raw" >&2
  fi
done

python3 - "$raw" "$result" "$rounds" "$warm" "$meas" "$("$java" -version 2>&1 | head -1)" <<'PY'
import statistics, sys, pathlib
raw, result, rounds, warm, meas, jver = sys.argv[1:7]
runs = {}
for line in open(raw):
    f = line.split()
    if len(f) < 5 or f[1] != "RESULT":
        continue
    runs.setdefault((f[0], f[2]), []).append((float(f[3]), float(f[4])))
def med(impl, mode, i):
    v = [x[i] for x in runs.get((impl, mode), []) if x[0] > 0]
    return statistics.median(v) if v else None
rows = []
names = {"throughput": "one-way throughput (DEALER→ROUTER, 100 B, msg/s)",
         "reqrep": "req/rep throughput (6-frame request, 1000 in flight, req/s)",
         "custom": "req/rep, custom encoder/decoder (1000 in flight, req/s)",
         "custom-floor": "the same with a framing-only floor codec (FloorCodec, no ZMTP codec's work): "
                         "the most any codec reaches here"}
out = ["", "## JVM: oxmq-netty vs netty4-zmtp (netty-zmtp's three benchmarks)", "",
       f"Same machine, same JVM ({jver}), interleaved per round; medians of {rounds} round(s) of "
       f"{meas} s after {warm} s warm-up; beside each ratio, the range of the rounds' own ratios. "
       "Latency: per request (custom), 1000 / rate (reqrep). "
       "oxmq-netty negotiates ZMTP 3.1 with itself, netty4-zmtp 0.4.0 ZMTP 2.0 (netty 4.0.56).", "",
       "| benchmark | oxmq-netty | netty4-zmtp 0.4.0 | ratio | oxmq Rust tools, same pattern |",
       "|---|---|---|---|---|"]
chart = []
for mode in ("throughput", "reqrep", "custom", "custom-floor"):
    # the floor row sets the floor codec beside netty4-zmtp's custom run of the same round
    peer = "custom" if mode == "custom-floor" else mode
    a, b = med("oxmq-netty", mode, 0), med("netty4-zmtp", peer, 0)
    la, lb = med("oxmq-netty", mode, 1), med("netty4-zmtp", peer, 1)
    fa = f"{a/1e6:.2f} M" if a else "failed"
    fb = f"{b/1e6:.2f} M" if b else "failed"
    if mode != "throughput":
        fa += f" ({la/1000:.2f} ms)" if la else ""
        fb += f" ({lb/1000:.2f} ms)" if lb else ""
    ratio = f"{a/b:.2f}×" if a and b else "—"
    # the round-by-round ratios' range: a JVM's rate moves from one run to the next
    per = [x[0] / y[0] for x, y in zip(runs.get(("oxmq-netty", mode), []),
                                      runs.get(("netty4-zmtp", peer), [])) if x[0] > 0 and y[0] > 0]
    if len(per) > 1:
        ratio += f" ({min(per):.2f}–{max(per):.2f})"
    rust = "—"
    if mode == "throughput":
        t = med("oxmq-rust", "throughput", 0)
        rust = f"{t/1e6:.2f} M msg/s (local_thr/remote_thr, PUSH/PULL)" if t else "—"
    elif mode == "reqrep":
        l = med("oxmq-rust", "reqrep1", 0)
        rust = (f"{1e6/(2*l)/1e3:.1f} k req/s, {l:.1f} µs one-way (local_lat/remote_lat, "
                "REQ/REP, 1 in flight)") if l else "—"
    out.append(f"| {names[mode]} | {fa} | {fb} | {ratio} | {rust} |")
    if mode != "custom-floor":
        chart.append((mode, a or 0, b or 0))
out.append("")
with open(result, "a") as fh:
    fh.write("\n".join(out) + "\n")
print("\n".join(out))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 3.5))
    xs = range(len(chart))
    ax.bar([x - 0.2 for x in xs], [c[1] / 1e6 for c in chart], 0.4, label="oxmq-netty")
    ax.bar([x + 0.2 for x in xs], [c[2] / 1e6 for c in chart], 0.4, label="netty4-zmtp 0.4.0")
    ax.set_xticks(list(xs), [c[0] for c in chart])
    ax.set_ylabel("M msg/s or req/s")
    ax.set_title("netty-zmtp benchmarks, tcp loopback")
    ax.legend()
    png = str(pathlib.Path(result).with_suffix("")) + "-netty.png"
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    print(f"chart: {png}")
except ImportError:
    pass
PY
rm -f "$raw" "$raw.thr"
