#!/usr/bin/env bash
# oxmq-netty (java/oxmq-netty): the ZMTP codec for Netty 4.1. JUnit 5 under Surefire: the shared
# golden vectors (crates/zmtp/tests/vectors), pipeline tests, and interop over TCP loopback with
# libzmq 4.3 (pyzmq) and oxmq (its Python package, built here into a venv), NULL and PLAIN, JeroMQ 0.6.0 and 0.3.6
# and netty4-zmtp 0.4.0 (ZMTP 1.0/2.0, netty 4.0), the last three in child JVMs.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

have_jdk25() {
  for d in /usr/lib/jvm/*; do
    [ -x "$d/bin/javac" ] && "$d/bin/java" -version 2>&1 | grep -q 'version "2[5-9]' && return 0
  done
  return 1
}
if ! command -v mvn >/dev/null 2>&1; then
  timeout 600 apt-get install -y -q maven
fi
if ! have_jdk25; then
  timeout 900 apt-get install -y -q openjdk-25-jdk-headless \
    || { echo "40-netty: no JDK 25 (install temurin-25-jdk or openjdk-25-jdk)" >&2; exit 1; }
fi
python3 -c "import zmq" 2>/dev/null || timeout 600 python3 -m pip install -q pyzmq

# oxmq's Python package, for the interop tests against oxmq itself.
venv="$root/java/oxmq-netty/target/oxmq-venv"
if ! "$venv/bin/python" -c "import oxmq" 2>/dev/null; then
  echo "== 40-netty: building oxmq's Python package into $venv"
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  timeout 300 python3 -m venv "$venv"
  timeout 1200 "$venv/bin/pip" install -q ./python
fi

echo "== 40-netty: mvn test (java/oxmq-netty)"
log="$(mktemp)"
set +e
# One rerun of a failed test, as 60-java.sh: the interop cases with a connecting JeroMQ 0.6.0
# peer sometimes see no handshake, a known flake of JeroMQ's (its connecting socket sometimes
# never sends its greeting; ARCHITECTURE.md's known gaps). Surefire reports a test that passed
# on its rerun as a flake.
timeout 900 bash java/mvnw.sh -B -pl oxmq-netty test -Doxmq.python="$venv/bin/python" \
  -Dsurefire.rerunFailingTestsCount=1 >"$log" 2>&1
rc=$?
set -e
grep -E 'Tests run:|FAIL|ERROR\]|Flake' "$log" | grep -v 'WARNING' | tail -25
if [ "$rc" -ne 0 ]; then
  echo "40-netty: FAILED (exit $rc); full log: $log" >&2
  exit "$rc"
fi
grep -E '^\[INFO\] Tests run:' "$log" | tail -1
rm -f "$log"
