#!/usr/bin/env bash
# C ABI tests: compiles tests/c/test_*.c against the SYSTEM zmq.h (Debian's libzmq3-dev) and
# against oxmq's own include/zmq.h, links them with -lzmq from dist/lib (oxmq), checks with ldd
# that oxmq's library is the one loaded, and runs every test case plainly and under valgrind
# memcheck (leak check: definite leaks and memory errors fail the test).
#
#   tests/c/run.sh                 build dist if needed, run everything
#   tests/c/run.sh --no-valgrind   skip the memcheck pass
#   tests/c/run.sh --libzmq        also run the tests against Debian's libzmq (a check of the
#                                  tests themselves; reported, not counted)
#   SKIP_BUILD=1                   use the existing dist/
#
# Closing line: "N passed, N failed" over all test cases of all passes.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/tests/c"
dist="${DIST:-$root/dist}"
build="$here/build"
valgrind=1
against_libzmq=0
for a in "$@"; do
  case "$a" in
    --no-valgrind) valgrind=0 ;;
    --libzmq) against_libzmq=1 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

passed=0
failed=0
note() { echo "== $*"; }

if [ ! -f /usr/include/zmq.h ]; then
  note "installing libzmq3-dev for the system zmq.h"
  (apt-get update -qq && apt-get install -y -qq libzmq3-dev) >/dev/null 2>&1 || true
fi
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -f "$dist/lib/libzmq.so.5" ]; then
  note "building dist"
  DIST="$dist" timeout 900 "$root/scripts/build-dist.sh" >/dev/null || { echo "build-dist failed"; echo "0 passed, 1 failed"; exit 1; }
fi

mkdir -p "$build/sys" "$build/own"
cflags=(-O1 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -DZMQ_BUILD_DRAFT_API -pthread)
tests=()
for src in "$here"/test_*.c; do
  name="$(basename "$src" .c)"
  # System header (what a Debian-built program sees); oxmq's library at link and run time.
  if gcc "${cflags[@]}" -I/usr/include -o "$build/sys/$name" "$src" -L"$dist/lib" -lzmq; then
    tests+=("$name")
  else
    echo "FAIL compile-sys-$name"; failed=$((failed + 1))
  fi
  # oxmq's header must be self-consistent: same program, -Werror.
  if gcc "${cflags[@]}" -Werror -I"$dist/include" -o "$build/own/$name" "$src" -L"$dist/lib" -lzmq; then
    echo "ok compile-own-header-$name"; passed=$((passed + 1))
  else
    echo "FAIL compile-own-header-$name"; failed=$((failed + 1))
  fi
done

# The library actually loaded must be oxmq's.
loaded="$(LD_LIBRARY_PATH="$dist/lib" ldd "$build/sys/${tests[0]}" | awk '/libzmq.so.5/ {print $3}')"
if [ "$(readlink -f "$loaded")" = "$(readlink -f "$dist/lib/libzmq.so.5")" ]; then
  echo "ok ldd-loads-oxmq ($loaded)"; passed=$((passed + 1))
else
  echo "FAIL ldd-loads-oxmq (loaded: $loaded)"; failed=$((failed + 1))
fi

# run_pass LABEL DIR LIBPATH WRAPPER... : runs every binary, counts ok/FAIL lines.
run_pass() {
  local label="$1" dir="$2" libpath="$3"; shift 3
  local p=0 f=0
  for name in "${tests[@]}"; do
    local out rc
    out="$(LD_LIBRARY_PATH="$libpath" timeout 600 "$@" "$dir/$name" 2>&1)"; rc=$?
    local tp tf
    tp="$(grep -c '^ok ' <<<"$out")"; tf="$(grep -c '^FAIL ' <<<"$out")"
    # every failing case, then its details (bounded: a broken build can print thousands)
    grep -E '^FAIL ' <<<"$out" | sed "s/^/[$label $name] /"
    grep -E '^  |^==[0-9]+==' <<<"$out" | awk '!seen[$0]++' | sed "s/^/[$label $name] /" | head -40
    if [ "$rc" -ne 0 ] && [ "$tf" -eq 0 ]; then
      echo "[$label $name] binary exited $rc with no failing case reported"; tf=1
    fi
    p=$((p + tp)); f=$((f + tf))
  done
  echo "== $label: $p passed, $f failed"
  pass_p=$p; pass_f=$f
}

note "pass 1: system zmq.h, oxmq library"
run_pass plain "$build/sys" "$dist/lib"
passed=$((passed + pass_p)); failed=$((failed + pass_f))

note "pass 2: oxmq zmq.h, oxmq library"
run_pass own-header "$build/own" "$dist/lib"
passed=$((passed + pass_p)); failed=$((failed + pass_f))

if [ "$valgrind" = 1 ]; then
  if command -v valgrind >/dev/null; then
    note "pass 3: valgrind memcheck (definite leaks and memory errors fail)"
    TEST_TIMEOUT=240 run_pass valgrind "$build/sys" "$dist/lib" \
      valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
      --show-leak-kinds=definite --suppressions="$here/valgrind.supp"
    passed=$((passed + pass_p)); failed=$((failed + pass_f))
  else
    echo "valgrind not installed: memcheck pass skipped"
  fi
fi

if [ "$against_libzmq" = 1 ]; then
  note "reference: the same tests on Debian's libzmq (not counted)"
  run_pass libzmq "$build/sys" ""
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
