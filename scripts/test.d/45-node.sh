#!/usr/bin/env bash
# Node.js: zeromq.js (npm `zeromq` 6.5.0) with its addon compiled offline against oxmq's
# dist/ (tests/node/zeromq-build.sh), checked to load oxmq's libzmq.so.5, then the Node tests
# of tests/node (node:test) over both its APIs: promises and async iterators, and the callback
# API (zeromq/v5-compat). Then the same tests on zeromq.js built against Debian's libzmq 4.3.4,
# as a check of the tests themselves: reported, not counted (libzmq loses an inproc edge that
# two of them need, see tests/c/test_event_loop.c). NODE_SUITE_REFERENCE=0 skips that run.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
work="$root/target/node-suite"
[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh
reference="${NODE_SUITE_REFERENCE:-1}"
variants=(oxmq)
[ "$reference" = 1 ] && variants+=(debian)

echo "== 45-node: zeromq.js on ${variants[*]} (install, compile the addon)"
timeout 1500 bash tests/node/zeromq-build.sh "$work" "${variants[@]}"

tests=(tests/node/library.test.js tests/node/promise-api.test.js tests/node/compat-api.test.js)
echo "== 45-node: tests on oxmq"
status=0
EXPECT_LIBZMQ="$root/dist/lib/libzmq.so.5" EXPECT_DRAFT=1 NODE_PATH="$work/oxmq/node_modules" \
  timeout 300 node --test "${tests[@]}" > "$work/oxmq.tap" 2>&1 || status=$?
# Each failure with its diagnostics, then the totals.
awk '/^ *not ok/ {p = 1} /^ *ok / {p = 0} p' "$work/oxmq.tap" | head -200
grep -E '^# (tests|pass|fail)' "$work/oxmq.tap" || true

if [ "$reference" = 1 ]; then
  echo "== 45-node: reference: the same tests on Debian's libzmq (not counted)"
  EXPECT_LIBZMQ=/usr/lib/x86_64-linux-gnu/libzmq.so.5 EXPECT_DRAFT=0 NODE_PATH="$work/debian/node_modules" \
    timeout 300 node --test "${tests[@]}" > "$work/debian.tap" || true
  grep -E '^ +not ok|^# (tests|pass|fail)' "$work/debian.tap" | sed 's/^ */[libzmq] /' || true
fi

pass="$(awk '/^# pass/ {print $3}' "$work/oxmq.tap")"
fail="$(awk '/^# fail/ {print $3}' "$work/oxmq.tap")"
echo "${pass:-0} passed, ${fail:-?} failed"
[ "$status" -eq 0 ] && [ "${fail:-1}" = 0 ]
