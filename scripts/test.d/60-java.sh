#!/usr/bin/env bash
# Java suites: every module of java/pom.xml under Maven Surefire with a JDK 25: the io.oxmq FFM
# binding (java/oxmq), the JeroMQ API on it (java/oxmq-jeromq: guide programs, interop with
# JeroMQ 0.6.0 in a second JVM and libzmq through pyzmq), the perf tools' build, and the wiring
# API's Java front end (java/oxmq-wiring: Jzmq against a name server and wiring peers in other
# processes). java/oxmq-netty is 40-netty.sh's.
# io.oxmq's TlsTest makes its certificates with the openssl CLI.
# Installs Maven, openssl, Debian's libzmq/jzmq and pyzmq when missing (JeroMQ comes from Maven Central);
# the JDK 25 is the machine's Temurin, or Debian's openjdk-25 where the release has one.
# Every step is bounded in time; exits non-zero on any failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

have_jdk25() {
  for d in /usr/lib/jvm/*; do
    [ -x "$d/bin/javac" ] && "$d/bin/java" -version 2>&1 | grep -q 'version "2[5-9]' && return 0
  done
  return 1
}
apt_need=()
command -v mvn >/dev/null || apt_need+=(maven)
command -v openssl >/dev/null || apt_need+=(openssl)
if ! have_jdk25; then
  if command -v apt-cache >/dev/null && apt-cache show openjdk-25-jdk-headless >/dev/null 2>&1; then
    apt_need+=(openjdk-25-jdk-headless)
  else
    echo "no JDK 25 under /usr/lib/jvm and none in the apt sources (the FFM API needs Java 22+)" >&2
    exit 1
  fi
fi
[ -f /usr/lib/x86_64-linux-gnu/libzmq.so.5 ] || apt_need+=(libzmq5)
[ -f /usr/share/java/zmq.jar ] || apt_need+=(libzmq-java)
[ -f /usr/lib/x86_64-linux-gnu/jni/libjzmq.so ] || apt_need+=(libzmq-jni)
. "$root/scripts/apt-install.sh"
apt_install ${apt_need[@]+"${apt_need[@]}"}
python3 -c "import zmq" 2>/dev/null || timeout 600 python3 -m pip install -q pyzmq

# The jar carries oxmq's library from dist/.
[ -f dist/lib/libzmq.so.5 ] || timeout 1500 bash scripts/build-dist.sh

# java/oxmq-wiring's tests run the wiring name server and peers (crates/oxmq-wiring).
timeout 1500 cargo build --release -q -p oxmq-wiring --bins

log="$(mktemp)"
status=0
# Every module but oxmq-netty, whose suite (with its Python peers) is 40-netty.sh's.
# One rerun of a failed test: oxmq-jeromq's interop with JeroMQ 0.6.0 (a round trip whose
# handshake sometimes does not complete within its 10 s) is a known flake of JeroMQ's (its
# connecting socket sometimes never sends its greeting), listed in ARCHITECTURE.md's known gaps.
# Surefire reports a test that passed on its rerun as a flake.
timeout 900 bash java/mvnw.sh -B -pl oxmq,oxmq-jeromq,oxmq-perf,oxmq-wiring test \
  -Dsurefire.rerunFailingTestsCount=1 >"$log" 2>&1 || status=$?
grep -E "Tests run:|FAIL|ERROR\]|BUILD|Flake" "$log" | grep -v "^WARNING" | sed 's/\x1b\[[0-9;]*m//g' | tail -40
if [ "$status" != 0 ]; then
  echo "java suites failed (exit $status); last lines of the Maven log:" >&2
  tail -n 80 "$log" | sed 's/\x1b\[[0-9;]*m//g' >&2
fi
rm -f "$log"
exit "$status"
