#!/usr/bin/env bash
# C# section: the binding (csharp/) on oxmq and on Debian's libzmq, buffer receive vs a frame per
# message (receiver CPU and managed allocations per message), beside oxmq's C tools, per size.
# Appends tables to $1 and draws <stem>-csharp.png.
#   bash perf/harness/sections.d/50-csharp.sh RESULT.md [--quick] [--rounds N] [--sizes 1,256]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
result="${1:?usage: 50-csharp.sh RESULT.md [harness args]}"
shift
[ -e "$result" ] || { mkdir -p "$(dirname "$result")"; echo "# C# benchmark $(date -u +%F\ %H:%M) UTC" > "$result"; }

apt_need=()
command -v mcs >/dev/null || apt_need+=(mono-devel)
[ -f /usr/lib/x86_64-linux-gnu/libzmq.so.5 ] || apt_need+=(libzmq5)
if [ ${#apt_need[@]} -gt 0 ]; then
  echo "installing ${apt_need[*]}" >&2
  timeout 600 apt-get update -qq >/dev/null || true
  DEBIAN_FRONTEND=noninteractive timeout 1200 apt-get install -y -qq "${apt_need[@]}" >/dev/null
fi
python3 -c 'import matplotlib' 2>/dev/null || timeout 600 python3 -m pip install -q matplotlib >/dev/null 2>&1 || true

[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh >&2
make -s -C perf/c DIST="$root/dist" oxmq >&2
timeout 600 bash csharp/build.sh >&2
timeout 3000 python3 perf/harness/csharp_bench.py "$result" "$@"
