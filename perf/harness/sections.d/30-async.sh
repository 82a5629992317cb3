#!/usr/bin/env bash
# Async section: oxmq's async API (oxmq::asynch on tokio) beside its blocking API, omq.rs
# (perf/omq, omq-tokio) and zmq.rs (perf/zmqrs, crates.io `zeromq`): PUSH/PULL throughput and
# REQ/REP latency at 1 B and 256 B over tcp, with CPU per message, beside the wire's latency
# floors (perf/c wire_lat, spinning and blocking); the issue's targets judged, with the bounds.
# Appends its tables to $1.
#   bash perf/harness/sections.d/30-async.sh RESULT.md [--quick] [--rounds N] [--sizes 1,256] [--multi]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
result="${1:?usage: 30-async.sh RESULT.md [harness args]}"
shift
[ -e "$result" ] || { mkdir -p "$(dirname "$result")"; echo "# Async benchmark $(date -u +%F\ %H:%M) UTC" > "$result"; }
timeout 1800 cargo build --release -q -p oxmq-perf >&2
# The wire floors' tool (plain C, no ZeroMQ); without it their columns are left out.
make -s -C perf/c limit >&2 || echo "async section: building perf/c's limit tools failed" >&2
# The peers are standalone Cargo projects outside the workspace; a failed build drops their
# column (async_bench.py says so) and the rest runs.
for peer in perf/omq perf/zmqrs; do
  timeout 1800 cargo build --release -q --manifest-path "$peer/Cargo.toml" >&2 \
    || echo "async section: building $peer failed; its column is left out" >&2
done
# omq.rs' io_uring backend is not on crates.io: built only from a checkout (OMQ_RS_SRC).
if [ -n "${OMQ_RS_SRC:-}" ]; then
  bash perf/omq-compio/build.sh >&2 || echo "async section: building perf/omq-compio failed; its column is left out" >&2
fi
timeout 1800 python3 perf/harness/async_bench.py "$result" "$@"
