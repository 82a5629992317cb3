#!/usr/bin/env bash
# ws:// and wss:// against omq.rs (omq-tokio 0.33 from crates.io with its ws, plain and curve
# features): interop/omq's peer on omq (a Cargo project outside the workspace, its own
# Cargo.lock, built once into a cache) and interop/omq/peer.c on oxmq's libzmq.so.5 run the
# script of interop/omq/README.md (multipart messages with an empty frame, frames over 255 B,
# a 1 MiB message, every byte checked) for PUSH->PULL, REQ<->REP, DEALER<->ROUTER and PUB->SUB
# (a "t" prefix subscription; the publisher's noise must not arrive), each socket of a pair on
# either library and either side binding, under NULL, PLAIN and CURVE. Certificates for wss are
# made at test time with openssl. Prints the matrix and "N passed, N failed".
#   OXMQ_CACHE (default ~/.cache/oxmq) holds the omq build; OMQ_SCHEMES (default "ws wss").
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
work="$root/target/omq-suite"
mkdir -p "$work"
[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh

echo "== 42-omq: omq.rs' peer (omq-tokio 0.33, cached build)"
cache="${OXMQ_CACHE:-$HOME/.cache/oxmq}/omq-interop-target"
mkdir -p "$cache"
start=$SECONDS
timeout 1200 cargo build --release --locked --quiet --manifest-path interop/omq/Cargo.toml --target-dir "$cache"
echo "   built in $((SECONDS - start)) s"
omq="$cache/release/omq-interop"

echo "== 42-omq: oxmq's peer (C, against dist/lib/libzmq.so.5)"
gcc -O1 -Wall -Werror -o "$work/oxmq-peer" interop/omq/peer.c -Icrates/oxmq-capi/include -L"$root/dist/lib" \
    -Wl,-rpath,"$root/dist/lib" -l:libzmq.so.5 -lpthread
case "$(ldd "$work/oxmq-peer")" in *"$root/dist/lib/libzmq.so.5"*) ;; *) echo "oxmq-peer does not load oxmq"; exit 1 ;; esac
oxmq="$work/oxmq-peer"

echo "== 42-omq: test certificates"
certs="$work/certs"
bash "$root/scripts/make-test-certs.sh" "$certs" "oxmq omq test CA"

passed=0
failed=0
matrix=()
# run SCHEME MECH BINDER(omq|oxmq) BIND_ROLE CONNECTOR CONNECT_ROLE
run() {
    local scheme="$1" mech="$2" binder="$3" brole="$4" connector="$5" crole="$6"
    local name="$scheme $mech: ${binder} ${brole^^} binds, ${connector} ${crole^^} connects"
    local log="$work/$scheme-$mech-$binder-$brole-$connector-$crole"
    local env_b=() env_c=()
    if [ "$scheme" = wss ]; then
        env_b=(WSS_CERT="$certs/server.pem" WSS_KEY="$certs/server.key")
        env_c=(WSS_TRUST="$certs/ca.pem" WSS_HOSTNAME=localhost)
    fi
    # The binder's first stdout line is its endpoint: read through a fifo, so the connecter
    # starts the moment the bind is done (or at once with nothing when the binder died).
    local fifo="$log.fifo" ep="" ok=1 bpid
    rm -f "$fifo" && mkfifo "$fifo"
    env "${env_b[@]}" timeout 40 "${!binder}" bind "$scheme://127.0.0.1:*/zmq" "$mech" "$brole" > "$fifo" 2> "$log.bind.err" &
    bpid=$!
    exec {epfd}< "$fifo"
    read -r -t 20 ep <&"$epfd" || true
    if [ -z "$ep" ]; then
        ok=0
    else
        env "${env_c[@]}" timeout 40 "${!connector}" connect "$ep" "$mech" "$crole" 2> "$log.conn.err" || ok=0
    fi
    wait "$bpid" || ok=0
    exec {epfd}<&-
    rm -f "$fifo"
    if [ "$ok" = 1 ]; then
        passed=$((passed + 1)); matrix+=("ok    $name")
    else
        failed=$((failed + 1)); matrix+=("FAIL  $name")
        echo "FAIL  $name"
        cat "$log.bind.err" "$log.conn.err" 2>/dev/null | sed 's/^/    /' | head -10 || true
    fi
}

start=$SECONDS
for scheme in ${OMQ_SCHEMES:-ws wss}; do
    for mech in null plain curve; do
        # Each pair with the sender, then the receiver, on either library, binding or connecting.
        for pair in "push pull" "req rep" "dealer router" "pub sub"; do
            set -- $pair
            run "$scheme" "$mech" omq "$1" oxmq "$2"
            run "$scheme" "$mech" oxmq "$2" omq "$1"
            run "$scheme" "$mech" oxmq "$1" omq "$2"
            run "$scheme" "$mech" omq "$2" oxmq "$1"
        done
    done
done

echo "== 42-omq: matrix (omq-tokio 0.33.0 <-> oxmq; the script of interop/omq/README.md each), $((SECONDS - start)) s"
printf '%s\n' "${matrix[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
