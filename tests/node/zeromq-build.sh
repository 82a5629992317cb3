#!/usr/bin/env bash
# Installs zeromq.js (npm `zeromq`, pinned) and builds its native addon against a chosen
# libzmq, offline: the package carries the addon's C++ sources (src/*.cc) but its own build
# (cmake-ts + vcpkg) downloads libzmq from GitHub, which cannot work here, nor with another
# library. So the sources are compiled here with the definitions of its CMakeLists.txt.
#
#   bash tests/node/zeromq-build.sh OUT VARIANT...
#
# VARIANT is one of
#   oxmq     the addon linked to oxmq's dist/lib/libzmq.so.5 (rpath), draft API on
#   debian   linked to Debian's libzmq 4.3.4 (libzmq3-dev; built without drafts, so none here)
#   bundled  the package's own prebuilt addon (libzmq 4.3.5 linked in statically), unchanged
# Each lands in OUT/VARIANT/node_modules/zeromq; put OUT/VARIANT/node_modules on NODE_PATH.
# Needs node and npm; Node's headers (node_api.h, uv.h) come with the nodejs package or
# Debian's libnode-dev. DIST=<dir> picks oxmq's dist (default <repo>/dist, built if absent).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ZEROMQ_VERSION="${ZEROMQ_VERSION:-6.5.0}"
out="${1:?usage: zeromq-build.sh OUT VARIANT...}"
shift
dist="${DIST:-$root/dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

. "$root/scripts/apt-install.sh"
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || apt_install nodejs npm
# The directory Node's own headers are in (the nodejs package's, or libnode-dev's).
node_inc() {
  local d
  for d in "$(node -p 'require("path").resolve(process.execPath, "../../include/node")')" \
           /usr/include/node /usr/include/nodejs; do
    [ -f "$d/node_api.h" ] && [ -f "$d/uv.h" ] && { echo "$d"; return 0; }
  done
  return 1
}
inc="$(node_inc)" || { apt_install libnode-dev; inc="$(node_inc)"; }

# The package, once: --ignore-scripts, since its install script would try the prebuilt addon
# and then its vcpkg build.
pkg="$out/npm/node_modules/zeromq"
if [ ! -f "$pkg/package.json" ] || ! grep -q "\"version\": \"$ZEROMQ_VERSION\"" "$pkg/package.json"; then
  mkdir -p "$out/npm"
  (cd "$out/npm" && [ -f package.json ] || echo '{"private": true}' > package.json)
  (cd "$out/npm" && timeout 600 npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
    "zeromq@$ZEROMQ_VERSION")
fi

# The loader (cmake-ts) reads build/manifest.json and loads the first addon whose os, arch
# and libc match, highest Node ABI first: a manifest naming ours alone makes it the one.
write_manifest() {
  node -e '
    const fs = require("fs"), [file, addon] = process.argv.slice(1)
    const libc = fs.existsSync("/etc/alpine-release") ? "musl" : "glibc"
    const key = JSON.stringify({os: process.platform, arch: process.arch, libc,
      runtime: "node", abi: Number(process.versions.modules), buildType: "Release"})
    fs.writeFileSync(file, JSON.stringify({[key]: addon}))' "$1" "$2"
}

# compile VARIANT_DIR CXXFLAGS... -- LDFLAGS...
compile() {
  local dir="$1"; shift
  local cflags=() ldflags=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do cflags+=("$1"); shift; done
  shift
  ldflags=("$@")
  local z="$dir/node_modules/zeromq"
  mkdir -p "$z/build/local"
  # CMakeLists.txt's definitions (V8_*, BUILDING_NODE_EXTENSION, NAPI_CPP_EXCEPTIONS, and
  # ZMQ_BUILD_DRAFT_API for its default ZMQ_DRAFT=ON); C++20 as its project options pick.
  # shellcheck disable=SC2046
  timeout 900 g++ -std=c++20 -O2 -fPIC -shared -fvisibility=hidden -w \
    -DV8_COMPRESS_POINTERS -DV8_31BIT_SMIS_ON_64BIT_ARCH -DV8_REVERSE_JSARGS \
    -DBUILDING_NODE_EXTENSION -DNAPI_CPP_EXCEPTIONS "${cflags[@]}" \
    -I"$inc" -I"$dir/node_modules/node-addon-api" \
    $(ls "$z"/src/*.cc | grep -v win_delay_load_hook) \
    -o "$z/build/local/addon.node" "${ldflags[@]}"
  write_manifest "$z/build/manifest.json" local/addon.node
}

fresh_copy() {
  rm -rf "$out/$1"
  mkdir -p "$out/$1"
  cp -a "$out/npm/node_modules" "$out/$1/"
}

for variant in "$@"; do
  case "$variant" in
    oxmq)
      [ -f "$dist/lib/libzmq.so.5" ] || timeout 1200 bash "$root/scripts/build-dist.sh"
      fresh_copy oxmq
      compile "$out/oxmq" -DZMQ_BUILD_DRAFT_API -I"$dist/include" -- \
        -L"$dist/lib" -lzmq -Wl,-rpath,"$dist/lib"
      # The addon must load oxmq's library, not another libzmq.so.5 found first.
      loaded="$(ldd "$out/oxmq/node_modules/zeromq/build/local/addon.node" | awk '/libzmq.so.5/ {print $3}')"
      if [ "$(readlink -f "$loaded")" != "$(readlink -f "$dist/lib/libzmq.so.5")" ]; then
        echo "the oxmq addon loads $loaded, not $dist/lib/libzmq.so.5" >&2
        exit 1
      fi
      ;;
    debian)
      [ -f /usr/include/zmq.h ] || apt_install libzmq3-dev
      fresh_copy debian
      compile "$out/debian" -- -lzmq
      ;;
    bundled)
      fresh_copy bundled
      ;;
    *) echo "unknown variant $variant (oxmq, debian, bundled)" >&2; exit 2 ;;
  esac
  echo "zeromq.js $ZEROMQ_VERSION ($variant): $out/$variant/node_modules"
done
