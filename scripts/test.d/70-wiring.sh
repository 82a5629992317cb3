#!/usr/bin/env bash
# The wiring API's suites not covered by `cargo test --workspace`: the Rust tests against a
# real etcd (required here), the C front end (the issue's snippet verbatim and the API
# contracts, plainly and under valgrind, over a name server process and the embedded
# service), the Python front end (its pytest file in a venv, and the snippet). Installs
# etcd-server/etcd-client when missing; every step is bounded; exits non-zero on failure.
#   VENV=/path reuses a venv (default: a fresh one under a temp dir).
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
work="$(mktemp -d /tmp/oxmq-wiring-test.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

echo "-- setup"
if ! command -v etcd >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    timeout 600 apt-get update -qq || true
    timeout 600 apt-get install -y -qq etcd-server etcd-client >/dev/null
  fi
fi
command -v etcd >/dev/null || { echo "etcd not found (apt-get install etcd-server)" >&2; exit 1; }
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

echo "-- cargo test -p oxmq-wiring (with etcd required)"
rc=0
OXMQ_WIRING_REQUIRE_ETCD=1 timeout 900 cargo test --profile ci-test -p oxmq-wiring -- --test-threads=2 >"$work/cargo.log" 2>&1 || rc=$?
grep -E "^test result|FAILED|panicked" "$work/cargo.log" || true
[ "$rc" = 0 ] || { tail -50 "$work/cargo.log"; echo "cargo test -p oxmq-wiring failed" >&2; exit 1; }

echo "-- C front end"
timeout 900 bash scripts/build-dist.sh >/dev/null
cc_flags=(-O2 -Wall -Wextra -Werror -I"$root/dist/include" -L"$root/dist/lib" -Wl,-rpath,"$root/dist/lib")
for t in snippet api; do
  timeout 120 gcc "${cc_flags[@]}" -o "$work/$t" "tests/wiring/$t.c" -lzmq
done
# A name server process on a free port.
timeout 120 cargo build --release -q -p oxmq-wiring --bins
target/release/oxmq-name-server --bind tcp://127.0.0.1:* --print-endpoint >"$work/ns.out" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/ns.out" ] && break; sleep 0.1; done
ns="$(head -1 "$work/ns.out" | sed 's#tcp://##')"
[ -n "$ns" ] || { echo "name server did not start" >&2; exit 1; }
dead="127.0.0.1:$(free_port)"
export OXMQ_WIRING_TIMEOUT_MS=500
timeout 60 "$work/snippet" "$ns"
timeout 120 "$work/api" "$ns" "$dead"
OXMQ_WIRING_PORT="$(free_port)" timeout 60 "$work/snippet" ""
echo "-- C front end under valgrind"
vg=(valgrind -q --error-exitcode=9 --leak-check=full --show-possibly-lost=no --errors-for-leak-kinds=definite)
timeout 300 "${vg[@]}" "$work/snippet" "$ns"
timeout 300 "${vg[@]}" "$work/api" "$ns" "$dead"

echo "-- Python front end"
venv="${VENV:-$work/venv}"
[ -x "$venv/bin/python" ] || timeout 300 python3 -m venv "$venv"
timeout 600 "$venv/bin/pip" install -q maturin pytest pytest-timeout pyzmq
# A thin-LTO build: this suite tests behaviour; the packaged build (fat LTO) is python/run-tests.sh's.
(cd python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" CARGO_PROFILE_RELEASE_LTO=thin \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=8 timeout 1200 "$venv/bin/maturin" develop --release -q >"$work/maturin.log" 2>&1) \
  || { tail -30 "$work/maturin.log"; exit 1; }
(cd python/tests && timeout 300 "$venv/bin/python" -m pytest -q -p no:cacheprovider -c ../pyproject.toml \
  --rootdir .. test_wiring.py 2>&1 | grep -vE "PytestConfigWarning|warn_or_fail|^\s*$|_pytest/config|Docs: https" )
test "${PIPESTATUS[0]:-0}" = 0
(cd "$work" && OXMQ_WIRING_PORT="$(free_port)" timeout 60 "$venv/bin/python" "$root/tests/wiring/snippet.py")
echo "-- wiring: all passed"
