#!/usr/bin/env bash
# Java section: oxmq's FFM binding (java/oxmq) beside JeroMQ 0.6.0, jzmq (Debian's libzmq-java
# on Debian's libzmq) and oxmq's C tools, per size. Appends tables to $1, chart <stem>-java.png.
#   bash perf/harness/sections.d/60-java.sh RESULT.md [--quick] [--rounds N] [--sizes 1,256]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
result="${1:?usage: 60-java.sh RESULT.md [harness args]}"
shift
[ -e "$result" ] || { mkdir -p "$(dirname "$result")"; echo "# Java benchmark $(date -u +%F\ %H:%M) UTC" > "$result"; }

apt_need=()
command -v mvn >/dev/null || apt_need+=(maven)
[ -f /usr/lib/x86_64-linux-gnu/libzmq.so.5 ] || apt_need+=(libzmq5)
[ -f /usr/share/java/zmq.jar ] || apt_need+=(libzmq-java)
[ -f /usr/lib/x86_64-linux-gnu/jni/libjzmq.so ] || apt_need+=(libzmq-jni)
if [ ${#apt_need[@]} -gt 0 ]; then
  echo "installing ${apt_need[*]}" >&2
  timeout 600 apt-get update -qq >/dev/null || true
  DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq "${apt_need[@]}" >/dev/null
fi
python3 -c 'import matplotlib' 2>/dev/null || timeout 600 python3 -m pip install -q matplotlib >/dev/null 2>&1 || true

[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh >&2
make -s -C perf/c DIST="$root/dist" oxmq >&2
echo "building java/oxmq and java/oxmq-perf" >&2
timeout 900 bash java/mvnw.sh -q -B -DskipTests -pl oxmq,oxmq-perf -am package >&2
timeout 600 bash java/mvnw.sh -q -B dependency:get -Dartifact=org.zeromq:jeromq:0.6.0 >&2

JAVA_HOME="$(bash -c 'for d in /usr/lib/jvm/*25* /usr/lib/jvm/*; do [ -x "$d/bin/javac" ] && "$d/bin/java" -version 2>&1 | grep -q "version \"2[5-9]" && { echo "$d"; exit; }; done')"
export JAVA_HOME
timeout 3000 python3 perf/harness/java_bench.py "$result" "$@"
