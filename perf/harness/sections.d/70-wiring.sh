#!/usr/bin/env bash
# The wiring API's section of the benchmark: the seeds' table (throughput and latency at 1, 16,
# 256, 4096 and 65536 B) for the C, Python and Java front ends beside oxmq's socket tools, measured
# in interleaved rounds (perf/wiring/bench.py), appended to RESULT.md, charted as
# <RESULT stem>-wiring.png. The harness args go to bench.py, which takes `--quick` (one short
# round) and `--rounds N` (default 3) and ignores the others.
#   bash 70-wiring.sh RESULT.md [harness args...]      VENV=/path reuses a venv
set -euo pipefail
result="$(realpath "${1:?usage: 70-wiring.sh RESULT.md [args]}")"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"

echo "== wiring: building dist/, the C tools and the Python package" >&2
timeout 1200 bash scripts/build-dist.sh >&2
timeout 600 make -s -C perf/c DIST="$root/dist" oxmq >&2
timeout 600 make -s -C perf/wiring/c DIST="$root/dist" >&2
venv="${VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/oxmq-wiring-bench-venv}"
[ -x "$venv/bin/python" ] || timeout 300 python3 -m venv "$venv"
timeout 1800 "$venv/bin/pip" install -q "$root/python" >&2
python3 -c 'import matplotlib' 2>/dev/null || timeout 600 python3 -m pip install -q matplotlib >&2 || true
# The Java rows: the binding, its perf tools and the wiring front end, on a JDK 25.
java_args=()
jdk="$(bash -c 'for d in /usr/lib/jvm/*25* /usr/lib/jvm/*; do [ -x "$d/bin/javac" ] && "$d/bin/java" -version 2>&1 | grep -q "version \"2[5-9]" && { echo "$d"; exit; }; done')" || true
if [ -n "$jdk" ] && command -v mvn >/dev/null \
   && timeout 900 bash java/mvnw.sh -q -B -DskipTests -pl oxmq,oxmq-perf,oxmq-wiring -am package >&2; then
  java_args=(--java "$jdk/bin/java")
else
  echo "== wiring: no JDK 25 or Maven build: no Java rows" >&2
fi

echo "== wiring: measuring" >&2
timeout 3000 python3 perf/wiring/bench.py "$result" --python "$venv/bin/python" "${java_args[@]}" "$@"
