#!/usr/bin/env bash
# callgrind_thr.sh BINDIR LIBDIR SIZE COUNT [tcp|ipc|ws|wss|tls]: instructions per message of the perf/c
# throughput pair (local_thr receiving, remote_thr sending), every thread included, by the
# difference between runs of COUNT/10 and COUNT messages (start-up cancels out). For an A/B of
# two builds: run it on each bin/lib pair (perf/c/build/oxmq, dist/lib) in turn. wss and tls
# take their certificates from PERF_WSS_CERT, PERF_WSS_KEY, PERF_WSS_TRUST (perf/c/perf_tls.h)
# and connect to localhost.
set -euo pipefail
bin=$1 lib=$2 size=$3 count=$4 tr=${5:-tcp}
tmp=$(mktemp -d)
run() { # n -> "recv send" totals
  local n=$1 port=$((20000 + RANDOM % 20000))
  local ep cep
  case "$tr" in
    ipc) ep="ipc://$tmp/s$n" cep=$ep ;;
    ws) ep="ws://127.0.0.1:$port/p" cep=$ep ;;
    wss) ep="wss://127.0.0.1:$port/p" cep="wss://localhost:$port/p" ;;
    tls) ep="tls://127.0.0.1:$port" cep="tls://localhost:$port" ;;
    *) ep="tcp://127.0.0.1:$port" cep=$ep ;;
  esac
  LD_LIBRARY_PATH=$lib valgrind --tool=callgrind --callgrind-out-file=$tmp/r.$n --dump-instr=no $bin/local_thr $ep $size $n >/dev/null 2>$tmp/rl.$n &
  local p=$!
  sleep 0.5
  LD_LIBRARY_PATH=$lib valgrind --tool=callgrind --callgrind-out-file=$tmp/s.$n --dump-instr=no $bin/remote_thr $cep $size $n >/dev/null 2>$tmp/sl.$n
  wait $p
  echo "$(grep -E '^(summary|totals):' $tmp/r.$n | awk '{print $2}' | sort -n | tail -1) $(grep -E '^(summary|totals):' $tmp/s.$n | awk '{print $2}' | sort -n | tail -1)"
}
lo=$(run $((count/10))); hi=$(run $count)
python3 -c "
lo=[int(x) for x in '$lo'.split()]; hi=[int(x) for x in '$hi'.split()]; d=$count-$count//10
print(f'recv {(hi[0]-lo[0])/d:.1f} send {(hi[1]-lo[1])/d:.1f}')"
rm -rf $tmp
