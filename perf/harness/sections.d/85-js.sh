#!/usr/bin/env bash
# The js/ package (@oxmq/zws): its PUSH socket's throughput under Node and in headless Chromium
# over ws:// into libzmq's local_thr (libzmq 4.3.5 with drafts, and the same binary on oxmq's
# libzmq.so.5 when this tree has oxmq's ws transport), interleaved rounds, medians
# (js/perf/throughput.mjs). Appends its table to $1.
#   bash perf/harness/sections.d/85-js.sh RESULT.md [--quick] [--rounds N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
result="${1:?usage: 85-js.sh RESULT.md [harness args]}"
shift
[ -e "$result" ] || { mkdir -p "$(dirname "$result")"; echo "# js/ benchmark $(date -u +%F\ %H:%M) UTC" > "$result"; }
result="$(cd "$(dirname "$result")" && pwd)/$(basename "$result")"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) args+=(--quick) ;;
    --rounds) args+=(--rounds "$2"); shift ;;
  esac
  shift
done
cd "$root"
if [ -d crates/oxmq/src/transport/ws ]; then
  [ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh >&2
  args+=(--oxmq "$root/dist")
fi
export LIBZMQ_DRAFTS_PREFIX="${LIBZMQ_DRAFTS_PREFIX:-$(timeout 1500 bash interop/libzmq-drafts/build.sh | tail -1)}"
cd js
[ -d node_modules ] || timeout 600 npm ci --no-audit --no-fund --loglevel=error >&2
timeout 300 npx tsc -p tsconfig.json
timeout 3000 node perf/throughput.mjs ${args[@]+"${args[@]}"} --out "$result"
