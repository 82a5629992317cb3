#!/usr/bin/env bash
# Builds the C# binding, its tests, examples and perf tools with Mono's mcs into csharp/build/:
#   ZeroMQ.dll                  the binding (namespace ZeroMQ)
#   tests.exe                   the test runner (prints "N passed, N failed")
#   examples.exe                the three device patterns (pubsub, reqrep, pushpull)
#   local_lat.exe remote_lat.exe local_thr.exe remote_thr.exe   libzmq's perf tools
# The sources keep to C# that Mono's mcs (-langversion:experimental, for Span) and .NET 8's
# csc both accept.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/build"
mkdir -p "$out"
MCS=(mcs -langversion:experimental -unsafe -optimize+ -debug- -nologo -warnaserror+)
# The library: every public member documented (a missing XML comment fails the build).
"${MCS[@]}" -target:library -doc:"$out/ZeroMQ.xml" -out:"$out/ZeroMQ.dll" "$here"/src/*.cs
MCS+=(-nowarn:1591)
"${MCS[@]}" -target:exe -r:"$out/ZeroMQ.dll" -out:"$out/tests.exe" "$here"/tests/*.cs
cp "$here/tests/peer.py" "$out/peer.py"
"${MCS[@]}" -target:exe -r:"$out/ZeroMQ.dll" -out:"$out/examples.exe" "$here"/examples/*.cs
for tool in local_lat remote_lat local_thr remote_thr; do
  "${MCS[@]}" -target:exe -r:"$out/ZeroMQ.dll" -out:"$out/$tool.exe" "$here/perf/$tool.cs" "$here/perf/PerfUtil.cs"
done
echo "csharp build ready: $out"
