#!/usr/bin/env bash
# Runs libzmq 4.3.4's own test programs (tests/test_*.cpp, built with the bundled Unity and
# tests/testutil*.cpp) against a libzmq.so.5: oxmq's (default) or the system's libzmq.
# Prints one line per program (PASS / FAIL / TIMEOUT / SKIP / BUILD-FAIL / NOT-RUN, seconds),
# then "N/M passed". Exits non-zero when a program outside EXPECTED_FAILURES did not pass.
#
#   interop/libzmq-suite/run.sh                    # against <repo>/dist/lib (built if missing)
#   interop/libzmq-suite/run.sh --against system   # against Debian's libzmq5, as a reference
#   interop/libzmq-suite/run.sh --only "test_hwm test_spec_pushpull"
#   interop/libzmq-suite/run.sh --list             # what is built, what is excluded
#   --build-dist  rebuild oxmq's dist first (scripts/build-dist.sh), even if it exists
#   --rebuild     recompile the test programs, ignoring the cache
#
# Environment:
#   LIBZMQ_SUITE_CACHE  cache dir (source tarball, built programs, logs)
#                       default $HOME/.cache/oxmq/libzmq-suite
#   LIBP                directory holding the libzmq.so.5 to test (default <repo>/dist/lib;
#                       with --against system, /usr/lib/<multiarch>)
#   ZMQ_H               zmq.h to compile with (default: <LIBP>/../include/zmq.h when it exists,
#                       i.e. oxmq's dist/include/zmq.h; else libzmq 4.3.4's own include/zmq.h)
#   DRAFT               1/0: build with ZMQ_BUILD_DRAFT_API; default auto = 1 when the library
#                       exports zmq_poller_new (oxmq does; Debian's libzmq5 does not)
#   TEST_TIMEOUT        seconds per program (default 60; test_heartbeats gets 100, it arms
#                       alarm(90) itself)
#   SUITE_BUDGET        seconds for the whole run, download + compile + tests (default 2400);
#                       programs not started in time are NOT-RUN and count as failures
#   JOBS                parallel compile jobs (default 2)
#   EXPECTED_FAILURES   override the expected-failure list (space separated)
#   TESTS               same as --only
#   PLATFORM_EXTRA      extra platform.hpp macros naming the library's optional features
#                       (default: none for oxmq; Debian's set for --against system)
#   LIBZMQ_TARBALL_URL  where to fetch zeromq3_4.3.4.orig.tar.gz (checked against its sha256)
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
start_epoch=$(date +%s)

LIBZMQ_VERSION=4.3.4
TARBALL=zeromq3_${LIBZMQ_VERSION}.orig.tar.gz
TARBALL_URL="${LIBZMQ_TARBALL_URL:-http://deb.debian.org/debian/pool/main/z/zeromq3/$TARBALL}"
# From Debian's signed zeromq3_4.3.4-6.dsc (Checksums-Sha256). The orig tarball is a git
# export of libzmq v4.3.4 (no configure script), unpacking to libzmq-4.3.4/.
TARBALL_SHA256=0ff5a531c9ffaf0dfdc7dc78d13d1383088f454896d252934c429b2554d10559
# Bump when the build recipe below changes, so cached programs are rebuilt.
BUILD_REV=2

CACHE="${LIBZMQ_SUITE_CACHE:-$HOME/.cache/oxmq/libzmq-suite}"
against=oxmq
list_only=0
build_dist=0
rebuild=0
only="${TESTS:-}"
JOBS="${JOBS:-2}"
TEST_TIMEOUT="${TEST_TIMEOUT:-60}"
SUITE_BUDGET="${SUITE_BUDGET:-2400}"

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --against) against="${2:-}"; shift 2 ;;
    --against=*) against="${1#*=}"; shift ;;
    --only) only="${2:-}"; shift 2 ;;
    --only=*) only="${1#*=}"; shift ;;
    --list) list_only=1; shift ;;
    --build-dist) build_dist=1; shift ;;
    --rebuild) rebuild=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$against" in oxmq|system) ;; *) echo "run.sh: --against oxmq|system" >&2; exit 2 ;; esac

# --- which programs ---------------------------------------------------------------------------
# The set libzmq's own autotools build (Makefile.am) compiles and runs on Linux with
# --enable-drafts and CURVE (tweetnacl), minus the exclusions listed in README.md.
TESTS_CORE="test_ancillaries test_system test_pair_inproc test_pair_tcp test_reqrep_inproc
 test_reqrep_tcp test_hwm test_hwm_pubsub test_reqrep_device test_sub_forward test_invalid_rep
 test_msg_flags test_msg_ffn test_connect_resolve test_immediate test_last_endpoint
 test_term_endpoint test_srcfd test_monitor test_router_mandatory test_router_mandatory_hwm
 test_router_handover test_probe_router test_stream test_stream_empty test_stream_disconnect
 test_stream_timeout test_disconnect_inproc test_unbind_wildcard test_ctx_options
 test_ctx_destroy test_security_no_zap_handler test_security_null test_security_plain
 test_security_zap test_iov test_spec_req test_spec_rep test_spec_dealer test_spec_router
 test_spec_pushpull test_req_correlate test_req_relaxed test_conflate test_inproc_connect
 test_issue_566 test_proxy test_proxy_hwm test_proxy_single_socket test_proxy_terminate
 test_getsockopt_memset test_setsockopt test_diffserv test_connect_rid test_bind_src_address
 test_metadata test_capabilities test_xpub_nodrop test_xpub_manual test_xpub_welcome_msg
 test_xpub_verbose test_atomics test_sockopt_hwm test_heartbeats test_stream_exceeds_buffer
 test_pub_invert_matching test_base85 test_bind_after_connect_tcp test_sodium
 test_reconnect_ivl test_mock_pub_sub test_socket_null test_tcp_accept_filter"
# HAVE_CURVE (compiled with copies of src/tweetnacl.c, err.cpp, random.cpp, clock.cpp, as
# libzmq's build does: it drives a CURVE handshake by hand; the library is used via its ABI).
TESTS_CURVE="test_security_curve"
# !ON_MINGW && !ON_CYGWIN, HAVE_FORK, ON_LINUX
TESTS_POSIX="test_shutdown_stress test_ipc_wildcard test_pair_ipc test_rebind_ipc
 test_reqrep_ipc test_use_fd test_zmq_poll_fd test_timeo test_filter_ipc test_fork
 test_abstract_ipc test_socks test_many_sockets"
# ENABLE_DRAFTS: built only when the library has the draft API.
TESTS_DRAFT="test_poller test_client_server test_thread_safe test_timers test_radio_dish
 test_scatter_gather test_dgram test_app_meta test_xpub_manual_last_value test_router_notify
 test_peer test_reconnect_options test_msg_init test_hello_msg test_disconnect_msg
 test_channel"
# Not built; reasons in README.md.
EXCLUDED="test_pair_tipc test_reqrep_tipc test_reqrep_device_tipc test_router_mandatory_tipc
 test_sub_forward_tipc test_connect_delay_tipc test_shutdown_stress_tipc test_term_endpoint_tipc
 test_address_tipc test_pair_vmci test_reqrep_vmci test_pair_tcp_cap_net_admin
 test_security_gssapi test_ws_transport test_wss_transport test_bind_fuzzer test_connect_fuzzer
 test_bind_null_fuzzer test_connect_null_fuzzer test_bind_stream_fuzzer
 test_connect_stream_fuzzer test_bind_curve_fuzzer test_connect_curve_fuzzer
 test_bind_ws_fuzzer test_connect_ws_fuzzer test_socket_options_fuzzer test_z85_decode_fuzzer"

# Expected failures: a failure of one of these is reported but does not fail the run; a pass
# is reported as "expected to fail but passed". Without the draft API (the configuration of
# Debian's libzmq, the reference) there are none. With it, one draft case falls short, as
# README.md says: test_monitor's PIPES_STATS case, whose exact queue counts (500) oxmq misses
# by a few under load (its other cases are drafts-off cases and must pass).
EXPECTED_FAILURES_oxmq=""
EXPECTED_FAILURES_oxmq_draft="test_monitor"
EXPECTED_FAILURES_system=""

declare -A TIMEOUT_OVERRIDE=([test_heartbeats]=100)

if [ "$list_only" = 1 ]; then
  echo "built and run (draft-only programs only when the library has the draft API):"
  for t in $TESTS_CORE $TESTS_CURVE $TESTS_POSIX; do echo "  $t"; done
  for t in $TESTS_DRAFT; do echo "  $t (draft)"; done
  echo "excluded (see README.md):"
  for t in $EXCLUDED; do echo "  $t"; done
  echo "expected failures: oxmq: ${EXPECTED_FAILURES_oxmq:-none}; system: ${EXPECTED_FAILURES_system:-none}"
  exit 0
fi

remaining() { echo $(( SUITE_BUDGET - ($(date +%s) - start_epoch) )); }
# For timeout(1), where 0 would mean "no limit".
budget_left() { local r; r=$(remaining); [ "$r" -ge 1 ] && echo "$r" || echo 1; }
die() { echo "run.sh: $*" >&2; exit 2; }

mkdir -p "$CACHE" || die "cannot create cache dir $CACHE"
CACHE="$(cd "$CACHE" && pwd)"

# One run at a time per cache: the programs bind fixed loopback ports (5555-5561), and the
# build directory is shared.
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
  echo "run.sh: another run holds $CACHE/.lock; waiting (at most 15 min)" >&2
  flock -w 900 9 || die "lock $CACHE/.lock still held"
fi

# --- the library under test -------------------------------------------------------------------
if [ "$against" = system ]; then
  multiarch="$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"
  LIBP="${LIBP:-/usr/lib/$multiarch}"
  [ -e "$LIBP/libzmq.so.5" ] || die "no $LIBP/libzmq.so.5: install it with 'apt-get install libzmq3-dev' (or libzmq5)"
else
  if [ -z "${LIBP:-}" ]; then
    LIBP="$root/dist/lib"
    if [ "$build_dist" = 1 ] || [ ! -e "$LIBP/libzmq.so.5" ]; then
      echo "== building oxmq's dist (scripts/build-dist.sh)" >&2
      # A second try: someone else's build-dist running at the same moment can make
      # 'install' trip over the files it is replacing.
      d0=$(date +%s)
      timeout "$(budget_left)" bash "$root/scripts/build-dist.sh" >&2 \
        || { sleep 5; timeout "$(budget_left)" bash "$root/scripts/build-dist.sh" >&2; } \
        || die "scripts/build-dist.sh failed"
      echo "== dist built in $(( $(date +%s) - d0 )) s" >&2
    fi
  fi
  [ -e "$LIBP/libzmq.so.5" ] || die "no $LIBP/libzmq.so.5"
fi
LIBP="$(cd "$LIBP" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/oxmq-libzmq-suite.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Run on a private copy: other people may rebuild dist/ while the suite runs.
mkdir -p "$work/lib"
cp "$LIBP/libzmq.so.5" "$work/lib/libzmq.so.5" || die "cannot copy $LIBP/libzmq.so.5"
LIB="$work/lib/libzmq.so.5"
lib_sum="$(sha256sum "$LIB" | cut -c1-12)"

# --- the libzmq source --------------------------------------------------------------------------
src="$CACHE/libzmq-$LIBZMQ_VERSION"
if [ ! -f "$src/.complete" ]; then
  if [ ! -f "$CACHE/$TARBALL" ] || ! echo "$TARBALL_SHA256  $CACHE/$TARBALL" | sha256sum -c --status; then
    echo "== downloading $TARBALL_URL" >&2
    curl -fsSL --retry 3 --connect-timeout 20 -m 300 -o "$CACHE/$TARBALL.part" "$TARBALL_URL" \
      || die "download of $TARBALL_URL failed"
    echo "$TARBALL_SHA256  $CACHE/$TARBALL.part" | sha256sum -c --status \
      || die "$TARBALL: sha256 mismatch (expected $TARBALL_SHA256)"
    mv -f "$CACHE/$TARBALL.part" "$CACHE/$TARBALL"
  fi
  tmpx="$(mktemp -d "$CACHE/extract.XXXXXX")"
  tar -xzf "$CACHE/$TARBALL" -C "$tmpx" || die "cannot unpack $TARBALL"
  [ -d "$tmpx/libzmq-$LIBZMQ_VERSION/tests" ] || die "unexpected tarball layout"
  rm -rf "$src"
  mv "$tmpx/libzmq-$LIBZMQ_VERSION" "$src"
  rmdir "$tmpx"
  touch "$src/.complete"
fi

# --- build configuration --------------------------------------------------------------------------
if [ -n "${ZMQ_H:-}" ]; then
  zmq_h="$ZMQ_H"
elif [ "$against" = oxmq ] && [ -f "$LIBP/../include/zmq.h" ]; then
  zmq_h="$LIBP/../include/zmq.h"
else
  zmq_h="$src/include/zmq.h"
fi
[ -f "$zmq_h" ] || die "no zmq.h at $zmq_h"
zmq_h="$(cd "$(dirname "$zmq_h")" && pwd)/$(basename "$zmq_h")"
cp "$zmq_h" "$work/zmq.h"   # a snapshot, like the library's

lib_exports() { nm -D --defined-only "$LIB" 2>/dev/null | awk '{print $NF}' | grep -qx "$1"; }
case "${DRAFT:-auto}" in
  1|0) draft="$DRAFT" ;;
  auto) if lib_exports zmq_poller_new; then draft=1; else draft=0; fi ;;
  *) die "DRAFT must be 1, 0 or auto" ;;
esac

# The optional features the library was configured with, which test_capabilities checks
# against zmq_has(): oxmq has none of them; Debian's libzmq5 is configured with
# --with-pgm --with-norm --with-libgssapi_krb5 (debian/rules of zeromq3 4.3.4-6), and its
# configure turns TIPC on by itself on Linux. (ZMQ_HAVE_TIPC also makes testutil's
# is_tipc_available() probe; only the excluded TIPC programs call it.) Env PLATFORM_EXTRA
# overrides the list.
if [ -n "${PLATFORM_EXTRA+x}" ]; then platform_extra="$PLATFORM_EXTRA"
elif [ "$against" = system ]; then
  platform_extra="ZMQ_HAVE_OPENPGM ZMQ_HAVE_NORM HAVE_LIBGSSAPI_KRB5 ZMQ_HAVE_TIPC"
else platform_extra=""; fi

# platform.hpp: libzmq's configure generates it; the test programs (and the four library
# sources test_security_curve compiles in) read only these of its macros on Linux.
platform_hpp="// generated by interop/libzmq-suite/run.sh (what libzmq's configure sets on Linux)
#ifndef __ZMQ_PLATFORM_HPP_INCLUDED__
#define __ZMQ_PLATFORM_HPP_INCLUDED__
#define ZMQ_HAVE_LINUX 1
#define ZMQ_HAVE_IPC 1
#define ZMQ_HAVE_SO_PEERCRED 1
#define ZMQ_HAVE_SO_PRIORITY 1
#define ZMQ_HAVE_UIO 1
#define ZMQ_HAVE_CURVE 1
#define ZMQ_USE_TWEETNACL 1
#define HAVE_MKDTEMP 1
#define HAVE_FORK 1
#define HAVE_CLOCK_GETTIME 1
$( [ "$draft" = 1 ] && echo '#define ZMQ_BUILD_DRAFT_API 1' )
$(for d in $platform_extra; do echo "#define $d 1"; done)
#endif"

CXX="${CXX:-g++}"
CC="${CC:-gcc}"
CXXFLAGS_SUITE="-O2 -std=gnu++11 -pthread -w"
CFLAGS_SUITE="-O2 -pthread -w"
key="$( {
  echo "rev=$BUILD_REV tarball=$TARBALL_SHA256"
  echo "$CXX $CXXFLAGS_SUITE | $CC $CFLAGS_SUITE"
  "$CXX" --version 2>&1 | head -1
  "$CC" --version 2>&1 | head -1
  echo "$platform_hpp"
  cat "$work/zmq.h"
} | sha256sum | cut -c1-16)"
bdir="$CACHE/build/$key"

selected=()
draft_skipped=()
want() { [ -z "$only" ] || [[ " $(echo $only) " == *" $1 "* ]]; }
for t in $TESTS_CORE $TESTS_CURVE $TESTS_POSIX; do want "$t" && selected+=("$t"); done
for t in $TESTS_DRAFT; do
  want "$t" || continue
  if [ "$draft" = 1 ]; then selected+=("$t"); else draft_skipped+=("$t"); fi
done
if [ -n "$only" ]; then
  for t in $only; do
    [[ " $TESTS_CORE $TESTS_CURVE $TESTS_POSIX $TESTS_DRAFT " =~ [[:space:]]$t[[:space:]] ]] \
      || die "unknown or excluded program '$t' (see --list)"
  done
fi

echo "== libzmq $LIBZMQ_VERSION test programs against $LIBP/libzmq.so.5 ($against, sha256 $lib_sum...)"
echo "   header $zmq_h, draft API $([ "$draft" = 1 ] && echo on || echo off), build dir $bdir"

# --- compile (cached: the build dir is keyed by header, defines, flags and compiler) -----------------
[ "$rebuild" = 1 ] && rm -rf "$bdir"
# Forget build dirs (other headers, flags) unused for two weeks.
find "$CACHE/build" -mindepth 1 -maxdepth 1 -type d -mtime +14 ! -path "$bdir" -exec rm -rf {} + 2>/dev/null
if [ ! -f "$bdir/.tree" ]; then
  rm -rf "$bdir"
  mkdir -p "$bdir/tree/include" "$bdir/tree/src" "$bdir/tree/tests" "$bdir/obj" "$bdir/bin" "$bdir/blog"
  # The programs include "../include/zmq.h" and "../src/platform.hpp" relative to themselves,
  # so they get a tree of their own holding the chosen header.
  cp "$src"/tests/*.cpp "$src"/tests/*.hpp "$bdir/tree/tests/"
  cp -r "$src"/src/. "$bdir/tree/src/"
  cp "$src/include/zmq_utils.h" "$bdir/tree/include/"
  cp "$work/zmq.h" "$bdir/tree/include/zmq.h"
  printf '%s\n' "$platform_hpp" > "$bdir/tree/src/platform.hpp"
  cat > "$bdir/Makefile" <<MK
CXX := $CXX
CC := $CC
CXXFLAGS := $CXXFLAGS_SUITE
CFLAGS := $CFLAGS_SUITE
CPPFLAGS := -Itree/include -I$src/external/unity -DUNITY_USE_COMMAND_LINE_ARGS -DUNITY_EXCLUDE_FLOAT
COMMON := obj/unity.o obj/testutil.o obj/testutil_monitoring.o obj/testutil_security.o obj/testutil_unity.o
CURVE_EXTRA := obj/tweetnacl.o obj/err.o obj/random.o obj/clock.o
# test_security_curve's private copies of tweetnacl and three library sources: hidden, so that
# a libzmq.so.5 built on libsodium (Debian's) keeps calling libsodium's crypto_box & co rather
# than the executable's same-named tweetnacl functions (ld would export those to it).
\$(CURVE_EXTRA): CFLAGS += -fvisibility=hidden
\$(CURVE_EXTRA): CXXFLAGS += -fvisibility=hidden

obj/unity.o: $src/external/unity/unity.c
	\$(CC) \$(CPPFLAGS) \$(CFLAGS) -c -o \$@ \$< > blog/\$(@F).log 2>&1 || { cat blog/\$(@F).log; exit 1; }
obj/tweetnacl.o: tree/src/tweetnacl.c
	\$(CC) \$(CPPFLAGS) \$(CFLAGS) -c -o \$@ \$< > blog/\$(@F).log 2>&1 || { cat blog/\$(@F).log; exit 1; }
obj/%.o: tree/tests/%.cpp
	\$(CXX) \$(CPPFLAGS) \$(CXXFLAGS) -c -o \$@ \$< > blog/\$(@F).log 2>&1 || { cat blog/\$(@F).log; exit 1; }
obj/%.o: tree/src/%.cpp
	\$(CXX) \$(CPPFLAGS) \$(CXXFLAGS) -c -o \$@ \$< > blog/\$(@F).log 2>&1 || { cat blog/\$(@F).log; exit 1; }
bin/test_security_curve: tree/tests/test_security_curve.cpp \$(COMMON) \$(CURVE_EXTRA)
	\$(CXX) \$(CPPFLAGS) \$(CXXFLAGS) -o \$@.tmp \$< \$(COMMON) \$(CURVE_EXTRA) \$(LIBZMQ) > blog/\$(@F).log 2>&1 || { cat blog/\$(@F).log; exit 1; }
	mv \$@.tmp \$@
bin/%: tree/tests/%.cpp \$(COMMON)
	\$(CXX) \$(CPPFLAGS) \$(CXXFLAGS) -o \$@.tmp \$< \$(COMMON) \$(LIBZMQ) > blog/\$(@F).log 2>&1 || { cat blog/\$(@F).log; exit 1; }
	mv \$@.tmp \$@
MK
  touch "$bdir/.tree"
fi

touch "$bdir"
targets=()
for t in "${selected[@]}"; do [ -x "$bdir/bin/$t" ] || targets+=("bin/$t"); done
if [ "${#targets[@]}" -gt 0 ]; then
  echo "== compiling ${#targets[@]} programs (make -j$JOBS, log $bdir/make.log)"
  c0=$(date +%s)
  # Link against the library under test (DT_NEEDED is its soname, libzmq.so.5).
  timeout "$(budget_left)" make -C "$bdir" -k -j"$JOBS" LIBZMQ="$LIB" "${targets[@]}" > "$bdir/make.log" 2>&1
  echo "   compiled in $(( $(date +%s) - c0 )) s"
fi
r0=$(date +%s)

# --- run, serially --------------------------------------------------------------------------------
logs="$CACHE/logs/$against"
rm -rf "$logs"; mkdir -p "$logs"
xfail="${EXPECTED_FAILURES-}"
if [ -z "${EXPECTED_FAILURES+x}" ]; then
  v="EXPECTED_FAILURES_$against"; xfail="${!v}"
  v="EXPECTED_FAILURES_${against}_draft"
  [ "$draft" = 1 ] && xfail="$xfail ${!v-}"
fi
is_xfail() { [[ " $(echo $xfail) " == *" $1 "* ]]; }

# Line-buffered stdout, so that the log of a program killed by the timeout still shows the
# Unity lines of the cases that finished (and so which case hung).
linebuf=""; command -v stdbuf >/dev/null && linebuf="stdbuf -oL -eL"

declare -A result secs note
passed=0; total=0; skipped=0
failed=(); xfailed=(); xpassed=()
printf '%-34s %-10s %8s  %s\n' PROGRAM RESULT SECONDS NOTE
for t in "${selected[@]}"; do
  total=$((total + 1))
  bin="$bdir/bin/$t"
  log="$logs/$t.log"
  r=""; n=""; s="0.0"
  if [ ! -x "$bin" ]; then
    r=BUILD-FAIL; n="see $bdir/blog/$t.log"
    cp "$bdir/blog/$t.log" "$log" 2>/dev/null || true
  else
    left=$(remaining)
    limit="${TIMEOUT_OVERRIDE[$t]:-$TEST_TIMEOUT}"
    if [ "$left" -le 1 ]; then
      r=NOT-RUN; n="SUITE_BUDGET (${SUITE_BUDGET}s) spent"
    else
      [ "$left" -lt "$limit" ] && limit="$left"
      d="$work/$t"; mkdir -p "$d"
      t0=$(date +%s%N)
      ( cd "$d" && LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
          exec timeout -k 5 "$limit" $linebuf "$bin" ) > "$log" 2>&1 < /dev/null
      rc=$?
      t1=$(date +%s%N)
      s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
      rm -rf "$d"
      case $rc in
        0) r=PASS ;;
        77) r=SKIP; n="program skipped itself (exit 77)" ;;
        124|137) r=TIMEOUT; n="killed after ${limit}s" ;;
        142) r=TIMEOUT; n="the program's own alarm() fired (SIGALRM)" ;;
        127) r=FAIL; n="$(grep -m1 -o 'symbol lookup error.*\|error while loading.*' "$log" | cut -c1-80)" ;;
        *) r=FAIL
           if [ $rc -gt 128 ]; then n="killed by signal $((rc - 128))"
           else n="$(grep -c ':FAIL' "$log") failing case(s)"; fi ;;
      esac
    fi
  fi
  result[$t]=$r; secs[$t]=$s
  case $r in
    PASS) passed=$((passed + 1)); is_xfail "$t" && xpassed+=("$t") ;;
    SKIP) skipped=$((skipped + 1)); total=$((total - 1)) ;;
    *) if is_xfail "$t"; then xfailed+=("$t"); n="expected failure; $n"; else failed+=("$t"); fi ;;
  esac
  printf '%-34s %-10s %8s  %s\n' "$t" "$r" "$s" "$n"
done
for t in "${draft_skipped[@]}"; do
  printf '%-34s %-10s %8s  %s\n' "$t" SKIP "-" "draft-only program; the library has no draft API"
  skipped=$((skipped + 1))
done

elapsed=$(( $(date +%s) - start_epoch ))
echo
skipnote=""; [ "$skipped" -gt 0 ] && skipnote=" ($skipped skipped)"
echo "$passed/$total passed$skipnote against $against, ${elapsed}s wall, $(( $(date +%s) - r0 ))s of it running the programs (logs: $logs)"
if [ "${#xfailed[@]}" -gt 0 ]; then echo "expected failures: ${xfailed[*]}"; fi
if [ "${#xpassed[@]}" -gt 0 ]; then echo "expected to fail but passed (update the list): ${xpassed[*]}"; fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  for t in "${failed[@]}"; do
    echo "--- $t (${result[$t]}): $logs/$t.log"
    if [ "${result[$t]}" = TIMEOUT ]; then
      # Unity prints "file:line:case:PASS|FAIL|IGNORE..." after each case; the case that hung
      # is the RUN_TEST after the last one reported (later cases never ran). Cases compiled
      # out by #if still appear in the list, so this is a good guess, not a proof.
      cases=$(tr '\n' ' ' < "$src/tests/$t.cpp" | grep -oE 'RUN_TEST *\( *[A-Za-z0-9_]+' | sed -E 's/.*\( *//')
      last=$(grep -oE "$t\.cpp:[0-9]+:[A-Za-z0-9_]+:(PASS|FAIL|IGNORE)" "$logs/$t.log" | tail -n 1 | cut -d: -f3)
      hung=$(echo "$cases" | awk -v l="$last" 'l == "" { print; exit } p { print; exit } $0 == l { p = 1 }')
      echo "    hung in case: ${hung:-?} (the last case reported: ${last:-none})"
    fi
    [ -f "$logs/$t.log" ] || continue
    { grep -E ':FAIL|Assertion|symbol lookup|error:' "$logs/$t.log" || tail -n 5 "$logs/$t.log"; } | head -n 8 | sed 's/^/    /'
  done
  exit 1
fi
exit 0
