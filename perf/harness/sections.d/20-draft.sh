#!/usr/bin/env bash
# Thread-safe draft sockets section: CLIENT/SERVER and PEER beside PUSH/PULL and REQ/REP on oxmq
# (perf/c/draft_thr.c, draft_lat.c); throughput, latency and CPU. Appends its tables to $1.
#   bash perf/harness/sections.d/20-draft.sh RESULT.md [--quick] [--rounds N] [--sizes 1,256]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
result="${1:?usage: 20-draft.sh RESULT.md [harness args]}"
shift
[ -e "$result" ] || { mkdir -p "$(dirname "$result")"; echo "# Thread-safe sockets benchmark $(date -u +%F\ %H:%M) UTC" > "$result"; }
[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh >&2
make -s -C perf/c DIST="$root/dist" oxmq >&2
timeout 900 python3 perf/harness/draft_bench.py "$result" "$@"
