#!/usr/bin/env bash
# The side-by-side benchmark, from a fresh machine: installs what it needs (Debian's libzmq
# with its header, valgrind for --callgrind, matplotlib), builds oxmq's C library (dist/),
# the C perf tools for both libraries and, if it can, omq.rs's tools (perf/omq, a third
# column), then runs perf/harness/bench.py with the given options.
#
#   perf/harness/run.sh              # default: 3 interleaved rounds, all sizes and transports
#   perf/harness/run.sh --quick      # CI smoke
#   perf/harness/run.sh --callgrind  # plus instructions per message
#
# Results: perf/results/<date>-<host>.md (+ .json, + PNG charts), also printed; then the
# Python package vs pyzmq table is appended (OXMQ_NO_PYTHON=1 skips it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

need_apt=()
[ -f /usr/include/zmq.h ] || need_apt+=(libzmq3-dev)
command -v valgrind >/dev/null || need_apt+=(valgrind)
command -v gcc >/dev/null || need_apt+=(gcc)
command -v make >/dev/null || need_apt+=(make)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]}" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  echo "installing matplotlib" >&2
  python3 -m pip install -q matplotlib >/dev/null 2>&1 || echo "matplotlib unavailable: no charts" >&2
fi

echo "building dist/ and perf/c tools" >&2
timeout 1200 scripts/build-dist.sh >&2
make -s -C perf/c DIST="$root/dist" >&2

# omq.rs tools (issue 6): a standalone Cargo project with pinned crates.io versions. Optional:
# when the build fails (no registry access, an older rustc than omq's rust-version 1.93, ...)
# the omq column is dropped with the reason below, and the benchmark runs without it.
echo "building perf/omq (omq.rs tools)" >&2
omq_log="$(mktemp)"
if timeout 1800 cargo build --release --manifest-path perf/omq/Cargo.toml >"$omq_log" 2>&1; then
  rm -f "$omq_log"
else
  echo "perf/omq did not build: no omq column in this run. Last lines of the build:" >&2
  tail -n 15 "$omq_log" >&2
  rm -f "$omq_log"
  # stale tools from an older build would measure other sources: hide them from the harness
  rm -f perf/omq/target/release/{local,remote}_{thr,lat}
fi

status=0
started="$(mktemp)"
timeout 3000 python3 perf/harness/bench.py "$@" || status=$?

# Further sections (bindings, scale, codecs): each perf/harness/sections.d/*.sh runs in name
# order with the Markdown result file of the run above as $1 and appends its tables to it
# (charts beside it in perf/results/). A section that fails is reported and the rest go on.
# A section's charts and JSON are named after that file: <stem>-<section>.png, .json.
run_md=$(find perf/results -maxdepth 1 -name '*.md' -newer "$started" | head -n 1)
rm -f "$started"
run_sections() {
  [ -n "$run_md" ] || return 0
  for section in perf/harness/sections.d/*.sh; do
    [ -e "$section" ] || continue
    echo "running section $(basename "$section" .sh)" >&2
    bash "$section" "$run_md" "$@" || { echo "section $section failed" >&2; status=1; }
  done
}

# The Python column (issue 4): oxmq's Python package vs pyzmq, with the Python/C ratios taken
# from the run above. Skipped for --quick / --callgrind-only, or with OXMQ_NO_PYTHON=1.
case " $* " in *" --quick "*|*" --callgrind-only "*) run_sections "$@"; exit "$status" ;; esac
if [ "${OXMQ_NO_PYTHON:-0}" = 1 ]; then run_sections "$@"; exit "$status"; fi
venv="${OXMQ_PY_VENV:-$root/target/py-bench-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
echo "installing the oxmq Python package and pyzmq into $venv" >&2
timeout 1200 "$venv/bin/pip" install -q ./python pyzmq >&2
latest=$(ls -t perf/results/*.json | grep -v -- '-python' | head -n 1)
md="${latest%.json}.md"
{
  echo
  echo "## Python: oxmq package vs pyzmq (perf/harness/python_bench.py)"
  echo
  timeout 1200 "$venv/bin/python" perf/harness/python_bench.py "$latest" --json "${latest%.json}-python.json"
} | tee -a "$md"
run_sections "$@"
exit "$status"
