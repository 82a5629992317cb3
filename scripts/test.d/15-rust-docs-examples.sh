#!/usr/bin/env bash
# The Rust API's documentation and examples: `cargo doc --no-deps` of oxmq and oxmq-wiring must
# be clean under RUSTDOCFLAGS=-D warnings (oxmq also denies missing docs), and every example in
# crates/oxmq/examples runs to completion (each is bounded and exits 0 when done). The
# doctests run with the workspace's `cargo test` in scripts/test-all.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "-- cargo doc --no-deps -p oxmq -p oxmq-wiring (RUSTDOCFLAGS=-D warnings)"
RUSTDOCFLAGS="-D warnings" timeout 900 cargo doc --no-deps -q -p oxmq -p oxmq-wiring

echo "-- examples"
timeout 900 cargo build --profile ci-test -q -p oxmq --examples
failed=0
passed=0
for src in crates/oxmq/examples/*.rs; do
  name="$(basename "$src" .rs)"
  start=$(date +%s%N)
  if timeout 120 "target/ci-test/examples/$name" > "/tmp/oxmq-example-$name.log" 2>&1; then
    passed=$((passed + 1))
    printf '   ok   %-22s %d ms\n' "$name" $(( ($(date +%s%N) - start) / 1000000 ))
  else
    rc=$?
    failed=$((failed + 1))
    echo "   FAIL $name (exit $rc); its output:"
    sed 's/^/      /' "/tmp/oxmq-example-$name.log" | tail -30
  fi
done
echo "examples: $passed passed, $failed failed"
[ "$failed" = 0 ]
