#!/usr/bin/env bash
# A short soak (issue 14): perf/soak/soak.py on oxmq for 30 s of chaos (peers SIGKILLed and
# restarted, a frozen REP server, connect storms, heartbeats on), bounded to 100 s in all.
# Fails on any lost request or stream, any misordered message, and any descriptor, thread or
# RSS the long-lived processes did not have before. A real soak: perf/soak/soak.py
# --duration 600 (and --lib libzmq for the same run on Debian's libzmq).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ -e dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh
# only oxmq's build of the peer: this suite needs no libzmq
timeout 300 make -s -C perf/c DIST="$root/dist" build/oxmq/soak_peer
timeout 100 python3 perf/soak/soak.py --duration "${OXMQ_SOAK_SECONDS:-30}" --lib oxmq
