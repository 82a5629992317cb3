#!/usr/bin/env bash
# Sets up a fresh machine and runs every test: Rust unit/integration tests, interop against
# libzmq (pyzmq), the C ABI tests, the real-client check (pyzmq built against oxmq) and the
# Python package's tests. Used by .ci/run. Every step is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."

# step NAME: ends the previous step with its time (what CI's budget goes to), starts NAME.
step_start=$SECONDS
step() {
  [ -z "${step_name:-}" ] || echo "-- $step_name: $((SECONDS - step_start)) s (total $SECONDS s)"
  step_name="$1"
  step_start=$SECONDS
  echo "== $1"
}
trap 'step end' EXIT

step "setup"
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  # libzmq3-dev: the system zmq.h and libzmq for the C tests; valgrind; a JDK and Maven for
  # the JeroMQ peer of the draft-socket interop tests; openssl for the Python TLS tests' certificates.
  if ! dpkg -s libzmq3-dev >/dev/null 2>&1 || ! command -v valgrind >/dev/null 2>&1 \
     || ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1; then
    timeout 600 apt-get update -qq || true
    timeout 1200 apt-get install -y -qq libzmq3-dev valgrind pkg-config default-jdk-headless maven openssl >/dev/null
  fi
fi
# JeroMQ 0.6.0 into the local Maven repository (the draft interop tests compile their peer
# against it).
if command -v mvn >/dev/null 2>&1 && [ ! -f "$HOME/.m2/repository/org/zeromq/jeromq/0.6.0/jeromq-0.6.0.jar" ]; then
  timeout 600 mvn -q dependency:get -Dartifact=org.zeromq:jeromq:0.6.0 || true
fi
python3 -c "import zmq" 2>/dev/null || timeout 600 python3 -m pip install -q pyzmq
command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup" >&2; exit 1; }

step "hygiene: rustfmt, clippy (workspace and the Python extension, warnings are errors), SAFETY comments"
timeout 300 cargo fmt --all --check
(cd python && timeout 300 cargo fmt --check)
timeout 1800 cargo clippy --workspace --release --all-targets -- -D warnings
(cd python && timeout 900 cargo clippy --release --all-targets -- -D warnings)
python3 scripts/check-safety.py

step "cargo test (workspace: zmtp, oxmq, C ABI crate, perf tools, interop; doctests included)"
timeout 1800 cargo test --workspace --profile ci-test -- --test-threads=2

step "cargo test -p zmtp --no-default-features (CURVE's data phase from the RustCrypto crates alone)"
timeout 900 cargo test -p zmtp --profile ci-test --no-default-features -- --test-threads=2

step "C ABI tests (system zmq.h and ours, plain and under valgrind)"
timeout 1200 bash tests/c/run.sh

step "Real-client check (pyzmq from PyPI, built from source against oxmq's dist/, runs a workload)"
SKIP_BUILD=1 timeout 1500 bash tests/c/real_client.sh

step "Python package tests (fresh venv: the package, pytest, pyzmq for interop)"
timeout 1500 bash python/run-tests.sh

# Further suites (bindings, codecs, services), one script each, run in name order. Each
# installs what it needs, bounds itself in time, and exits non-zero on failure.
for suite in scripts/test.d/*.sh; do
  [ -e "$suite" ] || continue
  step "$(basename "$suite" .sh)"
  bash "$suite"
done
