#!/usr/bin/env bash
# ZMTP 1.0/2.0 interop (interop/tests/legacy_peers.rs): oxmq against JeroMQ 0.3.6 (Debian's
# libjeromq-java, ZMTP 2.0), netty4-zmtp 0.4.0 (Maven Central, on netty-all 4.0.56.Final; ZMTP
# 1.0 and 2.0), and jzmq 3.1.0 (Debian's libzmq-java + libzmq-jni) running on oxmq's
# libzmq.so.5 from dist/ against JeroMQ 0.3.6. Installs the peers, builds dist/ if absent, and
# runs the test binary with its Java tests included.
set -euo pipefail
cd "$(dirname "$0")/../.."

. scripts/apt-install.sh
missing=()
for p in libjeromq-java libzmq-java libzmq-jni default-jdk-headless maven; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
apt_install ${missing[@]+"${missing[@]}"}
for artifact in io.netty:netty-all:4.0.56.Final com.spotify:netty4-zmtp:0.4.0; do
  g=${artifact%%:*}; rest=${artifact#*:}; a=${rest%%:*}; v=${rest#*:}
  [ -f "$HOME/.m2/repository/${g//.//}/$a/$v/$a-$v.jar" ] \
    || timeout 600 mvn -q dependency:get -Dartifact="$artifact"
done
[ -f dist/lib/libzmq.so.5 ] || timeout 1500 bash scripts/build-dist.sh
timeout 1200 cargo test --profile ci-test -p oxmq-interop --test legacy_peers -- --include-ignored --test-threads=2
