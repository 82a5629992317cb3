#!/usr/bin/env bash
# js/: the ZWS 2.0 browser/Node client package (@oxmq/zws). Builds libzmq 4.3.5 with drafts (ws)
# once into the cache (interop/libzmq-drafts/build.sh), installs the package's locked npm
# dependencies (npm ci), compiles it with tsc, then runs its unit tests, its scenarios under Node
# (every socket type, NULL, PLAIN, CURVE, ws and wss, reconnect), the same scenarios in Debian's
# headless Chromium through playwright-core, and the demo's screenshot test, against libzmq's
# ws:// (test/peer/zws-peer.c); then the scenarios and the demo again with oxmq's libzmq.so.5
# under the same peer. That second run happens when the tree has oxmq's ws transport
# (ZWS_OXMQ=1 forces it, 0 skips it; OXMQ_DIST names the dist/ to use, default <repo>/dist).
# Installs node, npm, chromium and the build tools with apt when missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root/js"

need=()
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v gcc >/dev/null || need+=(gcc)
command -v openssl >/dev/null || need+=(openssl)
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || need+=(chromium)
. "$root/scripts/apt-install.sh"
apt_install ${need[@]+"${need[@]}"}

echo "== 42-js: libzmq 4.3.5 with drafts (cached after the first build)"
LIBZMQ_DRAFTS_PREFIX="$(timeout 1500 bash "$root/interop/libzmq-drafts/build.sh" | tail -1)"
export LIBZMQ_DRAFTS_PREFIX
echo "== 42-js: npm ci, tsc"
timeout 600 npm ci --no-audit --no-fund --loglevel=error
timeout 300 npx tsc -p tsconfig.json
mkdir -p test-results

status=0
# run LABEL TESTS...: one node:test run, its failures with diagnostics and its totals.
run() {
  local label="$1" rc=0
  shift
  echo "== 42-js: $label: $*"
  timeout 600 node --test --test-concurrency=1 "$@" > "test-results/$label.tap" 2>&1 || rc=$?
  awk '/^ *not ok/ {p = 1} /^ *ok / {p = 0} p' "test-results/$label.tap" | head -200
  local pass fail
  pass="$(awk '/^# pass/ {print $3}' "test-results/$label.tap")"
  fail="$(awk '/^# fail/ {print $3}' "test-results/$label.tap")"
  echo "$label: ${pass:-0} passed, ${fail:-?} failed"
  total_pass=$((total_pass + ${pass:-0}))
  total_fail=$((total_fail + ${fail:-1}))
  [ "$rc" -eq 0 ] && [ "${fail:-1}" = 0 ] || status=1
}
total_pass=0
total_fail=0
run libzmq test/unit.test.js test/node.test.js test/browser.test.js test/demo.test.js

oxmq="${ZWS_OXMQ:-auto}"
[ "$oxmq" = auto ] && { [ -d "$root/crates/oxmq/src/transport/ws" ] && oxmq=1 || oxmq=0; }
if [ "$oxmq" = 1 ]; then
  dist="${OXMQ_DIST:-$root/dist}"
  [ -f "$dist/lib/libzmq.so.5" ] || (cd "$root" && timeout 1200 bash scripts/build-dist.sh >/dev/null)
  ZWS_PEER_LIBRARY_PATH="$dist/lib" run oxmq test/node.test.js test/browser.test.js test/demo.test.js
else
  echo "== 42-js: this tree has no oxmq ws:// transport: the run on oxmq is skipped"
fi
echo "${total_pass} passed, ${total_fail} failed"
exit "$status"
