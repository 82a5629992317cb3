#!/usr/bin/env bash
# js/: the ZWS 2.0 browser/Node client package (@oxmq/zws). Builds libzmq 4.3.5 with drafts (ws)
# once into the cache (interop/libzmq-drafts/build.sh), installs the package's locked npm
# dependencies (npm ci), compiles it with tsc, then runs its unit tests, its scenarios under Node
# (every socket type, NULL, PLAIN, CURVE, reconnect) and the same scenarios in Debian's headless
# Chromium through playwright-core, against libzmq's ws:// (test/peer/zws-peer.c), and the demo's
# screenshot test. Installs node, npm, chromium and the build tools with apt when missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root/js"

need=()
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v gcc >/dev/null || need+=(gcc)
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || need+=(chromium)
. "$root/scripts/apt-install.sh"
apt_install ${need[@]+"${need[@]}"}

echo "== 42-js: libzmq 4.3.5 with drafts (cached after the first build)"
LIBZMQ_DRAFTS_PREFIX="$(timeout 1500 bash "$root/interop/libzmq-drafts/build.sh")"
export LIBZMQ_DRAFTS_PREFIX
echo "== 42-js: npm ci, tsc"
timeout 600 npm ci --no-audit --no-fund --loglevel=error
timeout 300 npx tsc -p tsconfig.json

mkdir -p test-results
tests=(test/unit.test.js test/node.test.js test/browser.test.js)
[ -f test/demo.test.js ] && tests+=(test/demo.test.js)
echo "== 42-js: ${tests[*]}"
status=0
timeout 600 node --test --test-concurrency=1 "${tests[@]}" > test-results/js.tap 2>&1 || status=$?
# Each failure with its diagnostics, then the totals.
awk '/^ *not ok/ {p = 1} /^ *ok / {p = 0} p' test-results/js.tap | head -200
grep -E '^# (tests|pass|fail)' test-results/js.tap || true
pass="$(awk '/^# pass/ {print $3}' test-results/js.tap)"
fail="$(awk '/^# fail/ {print $3}' test-results/js.tap)"
echo "${pass:-0} passed, ${fail:-?} failed"
[ "$status" -eq 0 ] && [ "${fail:-1}" = 0 ]
