#!/usr/bin/env bash
# Node.js section: zeromq.js 6.5 (promise API, perf/node's tools with libzmq's command lines)
# on oxmq, on the npm package's prebuilt addon (its bundled libzmq 4.3.5) and on Debian's
# libzmq 4.3.4: throughput, latency and CPU per message in interleaved rounds.
# Appends its tables to $1.
#   bash perf/harness/sections.d/45-node.sh RESULT.md [--quick] [--rounds N] [--sizes 1,256]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
result="${1:?usage: 45-node.sh RESULT.md [harness args]}"
shift
[ -e "$result" ] || { mkdir -p "$(dirname "$result")"; echo "# Node.js benchmark $(date -u +%F\ %H:%M) UTC" > "$result"; }
[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh >&2
work="$root/target/node-suite"
timeout 1500 bash tests/node/zeromq-build.sh "$work" oxmq bundled debian >&2
timeout 3000 python3 perf/harness/node_bench.py "$result" "$work" "$@"
