#!/usr/bin/env bash
# lat_pair.sh ROUNDS ENDPOINT_PREFIX DIR_A DIR_B [SIZES]: interleaved one-way latency of two
# perf/c builds (their local_lat/remote_lat), 20,000 round trips per run, the sizes (default
# "1 256") in turn; prints every run, each side's median and the median of the rounds' paired
# ratios A/B. ENDPOINT_PREFIX is e.g. ws://127.0.0.1 (a free port and, for ws, /p are added).
# Example: perf/lat_pair.sh 9 ws://127.0.0.1 perf/c/build/oxmq perf/c/build/libzmq-drafts
set -euo pipefail
rounds=$1 prefix=$2 a=$3 b=$4 sizes=${5:-1 256}
out=$(mktemp)
for r in $(seq 1 "$rounds"); do
  for dir in "$a" "$b"; do
    for sz in $sizes; do
      port=$((20000 + RANDOM % 20000))
      ep="$prefix:$port"
      case "$prefix" in ws*) ep="$ep/p" ;; esac
      timeout 120 "$dir/local_lat" "$ep" "$sz" 20000 >/dev/null &
      sleep 0.2
      v=$(timeout 120 "$dir/remote_lat" "$ep" "$sz" 20000 | awk '/latency/ {print $3}')
      wait
      echo "$r $dir $sz $v" | tee -a "$out"
    done
  done
done
python3 - "$out" "$a" "$b" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list); pair = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, d, sz, v = line.split()
    runs[(d, sz)].append(float(v)); pair[(r, sz)][d] = float(v)
a, b = sys.argv[2], sys.argv[3]
for sz in sorted({s for _, s in runs}, key=int):
    ratios = [p[a] / p[b] for (r, s), p in pair.items() if s == sz]
    print(f"{sz} B: {a} {statistics.median(runs[(a, sz)]):.2f} us, {b} {statistics.median(runs[(b, sz)]):.2f} us, "
          f"paired ratio median {statistics.median(ratios):.3f}")
PY
rm -f "$out"
