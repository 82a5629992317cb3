#!/usr/bin/env bash
# Builds libzmq 4.3.5 with the draft API, ws:// and wss:// (GnuTLS) into a cache directory, for
# the interop tests of the web transports (CURVE through Debian's libsodium, which libzmq 4.3.5
# needs: it no longer carries tweetnacl). The source comes from crates.io: the crate
# `zeromq-src` 0.3.6+4.3.5 vendors libzmq 4.3.5's full source (nothing of it is kept here).
#
# Usage: build.sh [PREFIX]   (default: ${OXMQ_CACHE:-$HOME/.cache/oxmq}/libzmq-drafts-4.3.5)
# Prints the prefix on its last line; re-running with a finished build does nothing.
set -euo pipefail

VERSION=0.3.6+4.3.5
PREFIX=${1:-${OXMQ_CACHE:-$HOME/.cache/oxmq}/libzmq-drafts-4.3.5-curve}
if [[ -f $PREFIX/.done ]]; then
    echo "$PREFIX"
    exit 0
fi

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v pkg-config >/dev/null || need+=(pkg-config)
dpkg -s libgnutls28-dev >/dev/null 2>&1 || need+=(libgnutls28-dev)
dpkg -s libsodium-dev >/dev/null 2>&1 || need+=(libsodium-dev)
if ((${#need[@]})); then
    for i in 1 2 3 4 5; do
        if sudo -n true 2>/dev/null; then SUDO=sudo; else SUDO=; fi
        $SUDO apt-get install -y -q "${need[@]}" >&2 && break
        echo "apt busy; retrying ($i)" >&2
        sleep 20
    done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
url="https://static.crates.io/crates/zeromq-src/zeromq-src-$VERSION.crate"
curl -fsSL --retry 3 "$url" -o "$work/src.tar.gz"
tar -xzf "$work/src.tar.gz" -C "$work"
src="$work/zeromq-src-$VERSION/vendor"
[[ -f $src/CMakeLists.txt ]] || { echo "no libzmq source in $url" >&2; exit 1; }

cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DENABLE_DRAFTS=ON -DENABLE_WS=ON -DWITH_TLS=ON -DENABLE_CURVE=ON -DWITH_LIBSODIUM=ON \
    -DBUILD_TESTS=OFF -DBUILD_STATIC=OFF -DWITH_PERF_TOOL=OFF -DWITH_DOCS=OFF >&2
cmake --build "$work/build" -j "$(nproc)" >&2
cmake --install "$work/build" >&2
touch "$PREFIX/.done"
echo "$PREFIX"
