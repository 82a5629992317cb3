#!/usr/bin/env bash
# The C# binding (csharp/): builds it with Mono's mcs (installing mono-devel if missing), runs
# its tests (own runner: "N passed, N failed"; pyzmq peers for interop; tls:// and wss:// with
# certificates the openssl CLI makes at test time) and the three device examples over tcp, ipc
# and inproc.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
. "$root/scripts/apt-install.sh"
command -v mcs >/dev/null 2>&1 || apt_install mono-devel
command -v openssl >/dev/null 2>&1 || apt_install openssl
python3 -c "import zmq" 2>/dev/null || timeout 600 python3 -m pip install -q pyzmq
[ -f dist/lib/libzmq.so.5 ] || timeout 1200 bash scripts/build-dist.sh
echo "== 50-csharp: build"
timeout 600 bash csharp/build.sh
echo "== 50-csharp: tests"
timeout 900 mono csharp/build/tests.exe
echo "== 50-csharp: tests of the per-message calls through P/Invoke only (no raw internal calls)"
OXMQ_CS_FASTCALLS=0 timeout 600 mono csharp/build/tests.exe BufferTests FastCallTests PatternTests
echo "== 50-csharp: examples"
timeout 180 mono csharp/build/examples.exe all
