#!/usr/bin/env bash
# Builds oxmq's C library and lays it out like an installed libzmq:
#
#   dist/lib/libzmq.so.5        the shared library (soname libzmq.so.5)
#   dist/lib/libzmq.so          -> libzmq.so.5 (what -lzmq links)
#   dist/lib/libzmq.a           the static library
#   dist/include/zmq.h          oxmq's header (ABI-identical to libzmq 4.3's)
#   dist/include/zmq_wiring.h   the wiring API (czmq_*), exported by the same library
#   dist/lib/pkgconfig/libzmq.pc
#
# Use:  LD_LIBRARY_PATH=dist/lib ./program            (run a libzmq program on oxmq)
#       PKG_CONFIG_PATH=dist/lib/pkgconfig pkg-config --cflags --libs libzmq
#
# Options: DIST=<dir> to place it elsewhere (default: <repo>/dist); PROFILE=dev for a debug build.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dist="${DIST:-$root/dist}"
profile="${PROFILE:-release}"
case "$profile" in
  release) cargo_flags=(--release); outdir=release ;;
  dev) cargo_flags=(); outdir=debug ;;
  *) echo "PROFILE must be release or dev" >&2; exit 2 ;;
esac

cd "$root"
cargo build "${cargo_flags[@]}" -p oxmq-capi
target="${CARGO_TARGET_DIR:-$root/target}/$outdir"

mkdir -p "$dist/lib/pkgconfig" "$dist/include"
dist="$(cd "$dist" && pwd)"
install -m 0755 "$target/libzmq.so" "$dist/lib/libzmq.so.5"
ln -sfn libzmq.so.5 "$dist/lib/libzmq.so"
install -m 0644 "$target/libzmq.a" "$dist/lib/libzmq.a"
install -m 0644 "$root/crates/oxmq-capi/include/zmq.h" "$dist/include/zmq.h"
install -m 0644 "$root/crates/oxmq-capi/include/zmq_wiring.h" "$dist/include/zmq_wiring.h"

# Libraries the static archive needs from the system (the Rust standard library's).
cat > "$dist/lib/pkgconfig/libzmq.pc" <<PC
prefix=$dist
exec_prefix=\${prefix}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: libzmq
Description: oxmq: ZeroMQ in Rust, libzmq-compatible C library
Version: 4.3.5
Libs: -L\${libdir} -lzmq
Libs.private: -lpthread -ldl -lm -lgcc_s -lc
Cflags: -I\${includedir}
PC

soname="$(readelf -d "$dist/lib/libzmq.so.5" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
if [ "$soname" != "libzmq.so.5" ]; then
  echo "build-dist: unexpected soname '$soname'" >&2
  exit 1
fi
echo "dist ready: $dist (soname $soname)"
