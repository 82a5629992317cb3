#!/usr/bin/env bash
# Builds libzmq 4.3.5 with its draft API on (ENABLE_DRAFTS, which turns on the ws:// transport),
# wss:// through Debian's GnuTLS and CURVE through libsodium, and installs it into a cache
# directory, then prints that prefix (the only line on stdout). Used as an interop peer for
# oxmq's ws/wss transports and the js/ browser client: released libzmq builds (Debian's, pyzmq's
# wheels) have no ws. Nothing of libzmq is committed: its source is the libzmq 4.3.5 tree that
# the crates.io crate zeromq-src 0.3.6+4.3.5 vendors (crates.io is reachable at CI time, GitHub
# is not), checked against the crate's sha256. The tree has no configure script, so this is
# CMake's build, configured as autotools' `--enable-drafts --with-libsodium --enable-curve`.
#
#   bash interop/libzmq-drafts/build.sh [PREFIX]   # PREFIX gets lib/libzmq.so.5, include/zmq.h
#                          # and bin/local_thr, remote_lat ... (libzmq's perf tools, with a
#                          # RUNPATH to this libzmq: LD_LIBRARY_PATH can swap another); default
#                          # $OXMQ_CACHE/libzmq-4.3.5-drafts
#   LIBZMQ_DRAFTS_PREFIX=$(bash interop/libzmq-drafts/build.sh)
#
# Skips everything when the prefix already holds a finished build (a stamp file written last).
# Environment: OXMQ_CACHE (default $HOME/.cache/oxmq), JOBS (default 2), ZEROMQ_SRC_CRATE_URL.
# Installs build deps with apt when missing (as root; see scripts/apt-install.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

VERSION=4.3.5
CRATE=zeromq-src-0.3.6+4.3.5
CRATE_URL="${ZEROMQ_SRC_CRATE_URL:-https://static.crates.io/crates/zeromq-src/$CRATE.crate}"
# sha256 of the .crate file, as crates.io's index records it (the "cksum" of 0.3.6+4.3.5).
CRATE_SHA256=d9a1c884770df9c1b3eb0a0ad01d7516234879e0ce144c505348550f2492923e
# Bump when the recipe below changes, so a cached build is redone.
BUILD_REV=2

cache="${OXMQ_CACHE:-$HOME/.cache/oxmq}"
prefix="${1:-$cache/libzmq-$VERSION-drafts}"
stamp="$prefix/.built-rev-$BUILD_REV"
if [ -f "$stamp" ]; then
  echo "$prefix"
  exit 0
fi

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v curl >/dev/null || need+=(curl)
command -v pkg-config >/dev/null || need+=(pkg-config)
dpkg -s libgnutls28-dev >/dev/null 2>&1 || need+=(libgnutls28-dev)
dpkg -s libsodium-dev >/dev/null 2>&1 || need+=(libsodium-dev)
. "$root/scripts/apt-install.sh"
apt_install ${need[@]+"${need[@]}"} >&2

work="$prefix.build"
rm -rf "$work" "$prefix"
mkdir -p "$work"
echo "libzmq-drafts: downloading $CRATE_URL" >&2
timeout 300 curl -sSfL --retry 3 -o "$work/src.crate" "$CRATE_URL"
got="$(sha256sum "$work/src.crate" | cut -d' ' -f1)"
if [ "$got" != "$CRATE_SHA256" ]; then
  echo "libzmq-drafts: $CRATE.crate has sha256 $got, expected $CRATE_SHA256" >&2
  exit 1
fi
tar -xzf "$work/src.crate" -C "$work"
src="$work/$CRATE/vendor"
[ -f "$src/CMakeLists.txt" ] && [ -f "$src/src/ws_engine.cpp" ] || {
  echo "libzmq-drafts: $CRATE has no libzmq source tree under vendor/" >&2; exit 1; }

echo "libzmq-drafts: configuring and building into $prefix" >&2
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_INSTALL_RPATH="$prefix/lib" -DENABLE_DRAFTS=ON -DENABLE_WS=ON -DWITH_TLS=ON \
  -DENABLE_CURVE=ON -DWITH_LIBSODIUM=ON -DBUILD_TESTS=OFF -DBUILD_STATIC=OFF \
  -DWITH_DOC=OFF -DWITH_DOCS=OFF -DENABLE_CPACK=OFF -DWITH_PERF_TOOL=ON \
  > "$work/cmake.log" 2>&1 || { tail -40 "$work/cmake.log" >&2; exit 1; }
# CMake only warns when GnuTLS or libsodium is missing; a build without them is not this build.
for want in ZMQ_USE_GNUTLS ZMQ_USE_LIBSODIUM ZMQ_HAVE_WS ZMQ_HAVE_WSS ZMQ_HAVE_CURVE; do
  grep -q "#define $want" "$work/build/platform.hpp" || {
    echo "libzmq-drafts: configured without $want (see $work/cmake.log)" >&2; exit 1; }
done
timeout 1800 make -C "$work/build" -j"${JOBS:-2}" > "$work/make.log" 2>&1 || { tail -40 "$work/make.log" >&2; exit 1; }
make -C "$work/build" install > "$work/install.log" 2>&1 || { tail -40 "$work/install.log" >&2; exit 1; }
# Check the result: a REQ/REP round trip over ws:// on loopback, and zmq_has for the draft API,
# ws, wss and curve (libzmq 4.3.5 answers only the upper-case names "WS" and "WSS").
cat > "$work/ws_check.c" <<'C'
#include <zmq.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  const char *caps[] = {"draft", "WS", "WSS", "curve"};
  for (int i = 0; i < 4; i++)
    if (!zmq_has(caps[i])) { fprintf(stderr, "zmq_has(\"%s\") is false\n", caps[i]); return 1; }
  void *ctx = zmq_ctx_new();
  void *rep = zmq_socket(ctx, ZMQ_REP), *req = zmq_socket(ctx, ZMQ_REQ);
  char ep[256]; size_t len = sizeof ep; int timeout = 10000;
  zmq_setsockopt(rep, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(req, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  if (zmq_bind(rep, "ws://127.0.0.1:*/check") != 0) { perror("bind"); return 1; }
  zmq_getsockopt(rep, ZMQ_LAST_ENDPOINT, ep, &len);
  if (zmq_connect(req, ep) != 0) { perror("connect"); return 1; }
  char buf[16] = {0};
  if (zmq_send(req, "ping", 4, 0) != 4 || zmq_recv(rep, buf, sizeof buf, 0) != 4 || strcmp(buf, "ping")) { fprintf(stderr, "request lost\n"); return 1; }
  if (zmq_send(rep, "pong", 4, 0) != 4 || zmq_recv(req, buf, sizeof buf, 0) != 4 || strcmp(buf, "pong")) { fprintf(stderr, "reply lost\n"); return 1; }
  printf("ws check: REQ/REP over %s\n", ep);
  zmq_close(req); zmq_close(rep); zmq_ctx_term(ctx);
  return 0;
}
C
gcc -O1 -o "$work/ws_check" "$work/ws_check.c" -I"$prefix/include" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lzmq
timeout 30 "$work/ws_check" >&2 || { echo "libzmq-drafts: the ws check failed" >&2; exit 1; }
rm -rf "$work"
touch "$stamp"
echo "$prefix"
