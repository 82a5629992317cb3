#!/usr/bin/env bash
# Every fuzz target of fuzz/ (cargo-fuzz, stable toolchain, no sanitizer) for a bounded time
# from its seed corpus: the data phase the engine runs (data_phase, legacy, connection), the
# engine's own data path into a pipe (engine_data), the handshakes and CURVE's cipher. A crash
# fails the suite and leaves its input in fuzz/artifacts/<target>/. FUZZ_SECONDS sets the time
# per target (default 8).
set -euo pipefail
cd "$(dirname "$0")/../../fuzz"
seconds="${FUZZ_SECONDS:-8}"
command -v cargo-fuzz >/dev/null || timeout 900 cargo install --locked -q cargo-fuzz
echo "== 25-fuzz: build"
timeout 1200 cargo fuzz build -s none
targets=(data_phase engine_data legacy connection handshake curve_handshake curve_transcript curve_message cipher_diff)
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  seeds=()
  [ -d "corpus-seed/$t" ] && seeds=("corpus-seed/$t")
  line="$(timeout $((seconds + 120)) cargo fuzz run -s none "$t" "corpus/$t" "${seeds[@]}" -- \
    -max_total_time="$seconds" -max_len=4096 2>&1 | tee "target/fuzz-$t.log" | grep -E '^Done|DONE' | tail -1)" || {
    echo "== 25-fuzz: $t FAILED"; tail -40 "target/fuzz-$t.log"; exit 1; }
  echo "$t: $line"
done
echo "${#targets[@]} fuzz targets ran ${seconds} s each without a crash"
