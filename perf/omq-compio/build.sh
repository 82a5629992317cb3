#!/usr/bin/env bash
# Builds omq.rs' io_uring backend's perf tools (perf/omq-compio) from a checkout of omq.rs,
# for the async section's omq-compio column. omq-compio is not on crates.io, so it needs the
# source: OMQ_RS_SRC names a work tree or a git directory (its HEAD is taken). Without it, or
# without io_uring (/proc/sys/kernel/io_uring_disabled not 0), it says why and exits 1.
#   OMQ_RS_SRC=/path/to/omq.rs bash perf/omq-compio/build.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="${OMQ_RS_SRC:-}"
if [ -z "$src" ] || [ ! -e "$src" ]; then
  echo "perf/omq-compio: set OMQ_RS_SRC to a checkout of https://github.com/paddor/omq.rs (omq-compio is not on crates.io)" >&2
  exit 1
fi
if [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
  echo "perf/omq-compio: io_uring is disabled on this machine (kernel.io_uring_disabled)" >&2
  exit 1
fi
rm -rf "$here/omq.rs"
mkdir -p "$here/omq.rs"
if [ -d "$src/omq-compio" ]; then
  cp -a "$src/." "$here/omq.rs/"
  commit="$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
else
  git --git-dir="$src" archive HEAD | tar -x -C "$here/omq.rs"
  commit="$(git --git-dir="$src" rev-parse --short HEAD)"
fi
echo "$commit" > "$here/omq.rs/SOURCE_COMMIT"
timeout 1800 cargo build --release -q --manifest-path "$here/Cargo.toml"
