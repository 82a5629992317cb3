#!/usr/bin/env bash
# Web transports section (issue 42): ws, wss and tls beside tcp and tcp+CURVE on oxmq, and
# libzmq 4.3.5's ws and wss (drafts build, interop/libzmq-drafts/build.sh); throughput,
# latency, CPU, and the issue's targets judged (perf/harness/web_bench.py). Appends to $1.
#   bash perf/harness/sections.d/80-web.sh RESULT.md [--quick] [--rounds N] [--sizes 1,256]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
result="${1:?usage: 80-web.sh RESULT.md [harness args]}"
shift
[ -e "$result" ] || { mkdir -p "$(dirname "$result")"; echo "# Web transports benchmark $(date -u +%F\ %H:%M) UTC" > "$result"; }
[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh >&2
make -s -C perf/c DIST="$root/dist" oxmq >&2
# libzmq with ws/wss: a cached build (~5 min cold); without it the section runs oxmq alone.
if drafts=$(timeout 1500 bash interop/libzmq-drafts/build.sh | tail -n 1) && [ -f "$drafts/lib/libzmq.so.5" ]; then
  make -s -C perf/c DRAFTS="$drafts" drafts >&2
else
  echo "web section: libzmq drafts build failed; oxmq columns only" >&2
fi
# A CA and a server certificate for localhost and 127.0.0.1 (P-256), made for this run.
certs=$(mktemp -d)
trap 'rm -rf "$certs"' EXIT
bash scripts/make-test-certs.sh "$certs" "oxmq perf CA"
timeout 1200 python3 perf/harness/web_bench.py "$result" --certs "$certs" "$@"
