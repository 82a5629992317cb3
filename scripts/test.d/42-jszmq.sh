#!/usr/bin/env bash
# jszmq 0.1.2 (npm; ZWS 2.0 in its plain "ZWS2.0" form) under Node against oxmq's ws://, in both
# directions: jszmq connects to a bound peer, then the peer connects to jszmq bound (through the
# `ws` package) on an HTTP server. The peer is js/test/peer/zws-peer.c built against oxmq's
# libzmq.so.5 and, as the reference row, against libzmq 4.3.5 with drafts (built once into the
# cache by interop/libzmq-drafts/build.sh). REQ/REP, REQ/ROUTER, DEALER/REP, DEALER/ROUTER,
# ROUTER/ROUTER, PUB/SUB and XPUB/XSUB with filters, PUSH/PULL, PAIR, multipart and a 1 MiB
# message, each way, jszmq reconnecting to a restarted peer, and a PLAIN server refusing jszmq
# (interop/jszmq/test/). Installs
# node, npm and gcc with apt when missing; JSZMQ_LIBZMQ=0 skips the libzmq row.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
work="$root/target/jszmq"
mkdir -p "$work"

need=()
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v gcc >/dev/null || need+=(gcc)
. "$root/scripts/apt-install.sh"
apt_install ${need[@]+"${need[@]}"}

[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh >/dev/null
peer_src=js/test/peer/zws-peer.c
echo "== 42-jszmq: zws-peer on oxmq"
gcc -O1 -o "$work/peer-oxmq" "$peer_src" -Icrates/oxmq-capi/include -L"$root/dist/lib" \
    -Wl,-rpath,"$root/dist/lib" -l:libzmq.so.5 -lpthread
case "$(ldd "$work/peer-oxmq")" in *"$root/dist/lib/libzmq.so.5"*) ;; *) echo "peer-oxmq does not load oxmq"; exit 1 ;; esac
peers=(oxmq)
if [ "${JSZMQ_LIBZMQ:-1}" = 1 ]; then
    echo "== 42-jszmq: zws-peer on libzmq 4.3.5 with drafts (cached build)"
    prefix="$(timeout 1500 bash interop/libzmq-drafts/build.sh | tail -1)"
    libdir="$prefix/lib"
    [ -d "$libdir" ] || libdir="$prefix/lib64"
    gcc -O1 -o "$work/peer-libzmq" "$peer_src" -I"$prefix/include" -L"$libdir" -Wl,-rpath,"$libdir" -lzmq -lpthread
    peers+=(libzmq)
fi

cd interop/jszmq
echo "== 42-jszmq: npm ci (jszmq 0.1.2)"
timeout 300 npm ci --no-audit --no-fund --loglevel=error
mkdir -p test-results

status=0
total_pass=0
total_fail=0
for lib in "${peers[@]}"; do
    echo "== 42-jszmq: jszmq against zws-peer on $lib"
    rc=0
    JSZMQ_PEER="$work/peer-$lib" JSZMQ_PEER_NAME="$lib" timeout 300 \
        node --test --test-concurrency=1 test/jszmq.test.js > "test-results/$lib.tap" 2>&1 || rc=$?
    # Each test's verdict, then the failures with their diagnostics.
    grep -E '^(not )?ok ' "test-results/$lib.tap" | sed 's/^/  /'
    awk '/^ *not ok/ {p = 1} /^ *ok / {p = 0} p' "test-results/$lib.tap" | head -200
    pass="$(awk '/^# pass/ {print $3}' "test-results/$lib.tap")"
    fail="$(awk '/^# fail/ {print $3}' "test-results/$lib.tap")"
    echo "$lib: ${pass:-0} passed, ${fail:-?} failed"
    total_pass=$((total_pass + ${pass:-0}))
    total_fail=$((total_fail + ${fail:-1}))
    [ "$rc" -eq 0 ] && [ "${fail:-1}" = 0 ] || status=1
done
echo "${total_pass} passed, ${total_fail} failed"
exit "$status"
