#!/usr/bin/env bash
# ws:// and wss:// against libzmq 4.3.5 built with drafts, ws and wss (GnuTLS; source from the
# crates.io crate zeromq-src, built once into a cache by interop/libzmq-drafts/build.sh): the
# same C peer (interop/web/peer.c) built against libzmq and against oxmq's libzmq.so.5, each
# binding while the other connects, REQ/REP under NULL, PLAIN and CURVE, PUB/SUB and PUSH/PULL
# under NULL, over ws and wss, and REQ/REP with heartbeats on both sides across an idle
# second and a half (the connection must last: WebSocket pings, as libzmq sends them).
# Certificates are made at test time with openssl. Prints the matrix and "N passed, N failed".
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
work="$root/target/web-suite"
mkdir -p "$work"
[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh

echo "== 42-web: libzmq 4.3.5 with drafts, ws, wss (cached build)"
prefix="$(timeout 1500 bash interop/libzmq-drafts/build.sh | tail -1)"
libdir="$prefix/lib"
[ -d "$libdir" ] || libdir="$prefix/lib64"

echo "== 42-web: the peer, against each library"
gcc -O1 -o "$work/peer-libzmq" interop/web/peer.c -I"$prefix/include" -L"$libdir" -Wl,-rpath,"$libdir" -lzmq -lpthread
gcc -O1 -o "$work/peer-oxmq" interop/web/peer.c -Icrates/oxmq-capi/include -L"$root/dist/lib" \
    -Wl,-rpath,"$root/dist/lib" -l:libzmq.so.5 -lpthread
case "$(ldd "$work/peer-oxmq")" in *"$root/dist/lib/libzmq.so.5"*) ;; *) echo "peer-oxmq does not load oxmq"; exit 1 ;; esac

echo "== 42-web: test certificates"
certs="$work/certs"
bash "$root/scripts/make-test-certs.sh" "$certs"

passed=0
failed=0
matrix=()
# run NAME BINDER CONNECTOR SCHEME MECH BIND_TYPE CONNECT_TYPE [VAR=VALUE...for both peers]
run() {
    local name="$1" binder="$2" connector="$3" scheme="$4" mech="$5" btype="$6" ctype="$7"
    shift 7
    local env_b=("$@") env_c=("$@")
    if [ "$scheme" = wss ]; then
        env_b+=(WSS_CERT="$certs/server.pem" WSS_KEY="$certs/server.key")
        env_c+=(WSS_TRUST="$certs/ca.pem" WSS_HOSTNAME=localhost)
    fi
    local out="$work/$name.bind"
    rm -f "$out"
    env "${env_b[@]}" timeout 20 "$work/peer-$binder" bind "$scheme://127.0.0.1:*/zmq" "$mech" "$btype" 10 \
        > "$out" 2> "$work/$name.bind.err" &
    local bpid=$!
    local ep=""
    for _ in $(seq 1 200); do
        ep="$(head -1 "$out" 2>/dev/null || true)"
        [ -n "$ep" ] && break
        kill -0 "$bpid" 2>/dev/null || break
        sleep 0.05
    done
    local ok=1
    if [ -z "$ep" ]; then
        ok=0
    else
        env "${env_c[@]}" timeout 20 "$work/peer-$connector" connect "$ep" "$mech" "$ctype" 10 2> "$work/$name.conn.err" || ok=0
    fi
    wait "$bpid" || ok=0
    if [ "$ok" = 1 ]; then
        passed=$((passed + 1)); matrix+=("ok    $name")
    else
        failed=$((failed + 1)); matrix+=("FAIL  $name")
        [ "$connector" = "$binder" ] && return 0
        cat "$work/$name.bind.err" "$work/$name.conn.err" 2>/dev/null | sed 's/^/    /' | head -10 || true
    fi
}

for scheme in ws wss; do
    for mech in null plain curve; do
        run "$scheme-$mech-reqrep-libzmq-binds" libzmq oxmq "$scheme" "$mech" rep req
        run "$scheme-$mech-reqrep-oxmq-binds" oxmq libzmq "$scheme" "$mech" rep req
    done
    run "$scheme-null-pubsub-libzmq-binds" libzmq oxmq "$scheme" null pub sub
    run "$scheme-null-pubsub-oxmq-binds" oxmq libzmq "$scheme" null pub sub
    run "$scheme-null-pushpull-libzmq-binds" libzmq oxmq "$scheme" null pull push
    run "$scheme-null-pushpull-oxmq-binds" oxmq libzmq "$scheme" null pull push
done
for mech in null curve; do
    run "ws-$mech-heartbeats-libzmq-binds" libzmq oxmq ws "$mech" rep req HEARTBEAT=50,300 IDLE_MS=1500
    run "ws-$mech-heartbeats-oxmq-binds" oxmq libzmq ws "$mech" rep req HEARTBEAT=50,300 IDLE_MS=1500
done

echo "== 42-web: matrix (binder listed; the other side connects)"
printf '%s\n' "${matrix[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
