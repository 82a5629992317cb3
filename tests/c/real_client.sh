#!/usr/bin/env bash
# Real-client check: pyzmq (an existing libzmq consumer, from PyPI) is compiled from source
# against oxmq's dist/ (pyzmq 27's scikit-build-core/CMake build honours ZMQ_PREFIX and puts
# dist/lib on the extension's RPATH) into a throwaway venv, then runs a small workload
# (tests/c/real_client/workload.py: REQ/REP, PUSH/PULL with zero-copy frames, PUB/SUB with a
# poller, DEALER/ROUTER, errors as exceptions) over tcp, ipc and inproc. The workload checks
# that the libzmq.so.5 mapped into the process is oxmq's.
#
#   tests/c/real_client.sh          (SKIP_BUILD=1 to reuse dist/; VENV=<dir> to keep the venv)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dist="${DIST:-$root/dist}"
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -f "$dist/lib/libzmq.so.5" ]; then
  DIST="$dist" timeout 900 "$root/scripts/build-dist.sh" >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
fi
venv="${VENV:-$(mktemp -d /tmp/oxmq-pyzmq-XXXXXX)}"
cleanup() { [ -z "${VENV:-}" ] && rm -rf "$venv"; }
trap cleanup EXIT

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import zmq' 2>/dev/null; then
  python3 -m venv "$venv" || { echo "0 passed, 1 failed"; exit 1; }
  echo "building pyzmq from source against $dist (1-3 minutes)" >&2
  if ! ZMQ_PREFIX="$dist" PKG_CONFIG_PATH="$dist/lib/pkgconfig" timeout 1200 \
      "$venv/bin/pip" install -q --no-cache-dir --no-binary pyzmq pyzmq >"$venv/build.log" 2>&1; then
    tail -30 "$venv/build.log"
    echo "pyzmq build failed"
    echo "0 passed, 1 failed"
    exit 1
  fi
fi
"$venv/bin/python" -c 'import zmq; print("pyzmq", zmq.__version__, "on libzmq", zmq.zmq_version())' >&2
# LD_LIBRARY_PATH as well as the RPATH, so nothing else can shadow oxmq's library.
LD_LIBRARY_PATH="$dist/lib" timeout 300 "$venv/bin/python" "$root/tests/c/real_client/workload.py"
