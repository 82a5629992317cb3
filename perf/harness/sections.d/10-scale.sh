#!/usr/bin/env bash
# Harness section "scale" (issue 14): fan-out to many subscribers, a ROUTER with many
# DEALERs, many PUSH to one PULL, connection churn and a slow subscriber, oxmq vs libzmq in
# one run (perf/harness/scale.py). Called by perf/harness/run.sh as
#
#   bash perf/harness/sections.d/10-scale.sh RESULT.md [harness args...]
#
# and appends its tables to RESULT.md, with RESULT-scale.json and RESULT-scale.png beside
# it. Of the harness args it reads --quick (a smoke run), --scale-full (the issue's counts:
# 10,000 DEALERs, 1,000 PUSH, 10,000 churn cycles, 2 M deliveries per fan-out run) and
# --scale-rounds N; the default covers every scenario at smaller counts (fan-out to 1,000
# subscribers over tcp and ipc, 1,000 DEALERs, 100 PUSH, 1,000 churn cycles) in a few minutes.
# Through run.sh, whose benchmark takes no --scale-* options, choose the plan with the
# environment: OXMQ_SCALE=full bash perf/harness/run.sh (OXMQ_SCALE=quick: the smoke run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
md="${1:?usage: 10-scale.sh RESULT.md [args]}"
shift

# Many connections, many descriptors: as high as the hard limit allows (root may raise it).
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# Standalone use: build what is missing (run.sh has built it already).
if [ ! -e dist/lib/libzmq.so.5 ]; then
  timeout 1200 bash scripts/build-dist.sh >&2
fi
if [ ! -f /usr/include/zmq.h ]; then
  echo "scale: libzmq3-dev is not installed (apt-get install libzmq3-dev)" >&2
  exit 1
fi
timeout 600 make -s -C perf/c DIST="$root/dist" >&2

case "${OXMQ_SCALE:-}" in
  full) set -- "$@" --scale-full ;;
  quick) set -- "$@" --quick ;;
  ""|default) ;;
  *) echo "OXMQ_SCALE must be quick, default or full" >&2; exit 2 ;;
esac
budget=3000
case " $* " in *" --scale-full "*) budget=7200 ;; esac
exec timeout "$budget" python3 perf/harness/scale.py --append "$md" "$@"
