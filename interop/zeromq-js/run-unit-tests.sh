#!/usr/bin/env bash
# Runs zeromq.js's own mocha unit tests (test/unit/*-test.ts and test/unit/compat/*-test.ts)
# against oxmq's libzmq.so.5 and, as the reference, Debian's libzmq 4.3.4. Those tests live
# only in zeromq.js's GitHub repository, which CI cannot reach: give this script a copy, a
# work tree or a git directory (then its tag v6.5.0 is exported). Nothing of it is kept here.
#
#   bash interop/zeromq-js/run-unit-tests.sh CHECKOUT [oxmq] [debian]     (default: both)
#
# The addons are tests/node/zeromq-build.sh's (npm zeromq 6.5.0, whose src/ is the tag's),
# copied into the copy's build/ with a manifest naming them. Dev dependencies come from npm
# (mocha, chai 4, ts-node, typescript 4.9, ...). Prints mocha's totals and each failure per
# library; logs in target/zeromq-js-unit/<library>.log. RUNS=n repeats each library's run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
src="${1:?usage: run-unit-tests.sh CHECKOUT [oxmq] [debian]}"
shift
libs=("$@")
[ ${#libs[@]} -gt 0 ] || libs=(oxmq debian)
work="$root/target/zeromq-js-unit"
runs="${RUNS:-1}"
mkdir -p "$work"

# A fresh copy of the tests, so nothing is written into the given checkout.
tree="$work/zeromq.js"
rm -rf "$tree"
mkdir -p "$tree"
if [ -d "$src/.git" ] || [ -f "$src/package.json" ]; then
  (cd "$src" && tar cf - --exclude=node_modules --exclude=build --exclude=lib --exclude=tmp .) | (cd "$tree" && tar xf -)
else
  git -C "$src" archive "${ZEROMQ_JS_REF:-v6.5.0}" | tar x -C "$tree"
fi

echo "== dev dependencies (npm) and zeromq.js's TypeScript build"
(cd "$tree" && timeout 900 npm install --ignore-scripts --no-save --no-package-lock --legacy-peer-deps \
  --no-audit --no-fund --loglevel=error \
  mocha@11.0.1 chai@4 ts-node@10.9.2 typescript@~4.9.5 semver@7.6.3 proper-lockfile@4.1.2 \
  which@5.0.0 fs-extra@11.3.0 @types/node@22 @types/mocha@10 @types/chai@4 @types/semver \
  @types/proper-lockfile @types/which @types/fs-extra cmake-ts@1.0.2 node-addon-api@8.3.1 >/dev/null)
(cd "$tree" && npx tsc -p ./src/tsconfig.json)

echo "== the addons (tests/node/zeromq-build.sh ${libs[*]})"
timeout 1500 bash "$root/tests/node/zeromq-build.sh" "$root/target/node-suite" "${libs[@]}" >/dev/null

for lib in "${libs[@]}"; do
  mkdir -p "$tree/build/$lib"
  cp "$root/target/node-suite/$lib/node_modules/zeromq/build/local/addon.node" "$tree/build/$lib/"
  node -e '
    const fs = require("fs"), [file, addon] = process.argv.slice(1)
    const key = JSON.stringify({os: process.platform, arch: process.arch, libc: "glibc",
      runtime: "node", abi: Number(process.versions.modules), buildType: "Release"})
    fs.writeFileSync(file, JSON.stringify({[key]: addon}))' "$tree/build/manifest.json" "$lib/addon.node"
  for run in $(seq 1 "$runs"); do
    log="$work/$lib-$run.log"
    rm -rf "$tree/tmp"
    mkdir -p "$tree/tmp"
    # package.json's test.unit, with mocha's own config (.mocharc.js: parallel, retries 3).
    # Without the typings tests (zeromq.js's own switch): they npm-install TypeScript 3.7 to
    # 5.x and compile the .d.ts files, nothing of libzmq; here each install outlasts the test's
    # 6 s, the test's cleanup then deletes the directory under the still running npm, which
    # falls back to the package root, runs its install scripts (cmake-ts, clean.lib) and
    # deletes lib/, failing every later test that starts a process.
    (cd "$tree" && EXCLUDE_TYPINGS_COMPAT_TESTS=true INCLUDE_COMPAT_TESTS=true timeout 1800 npx mocha --reporter dot \
      ./test/unit/*-test.ts ./test/unit/compat/*-test.ts > "$log" 2>&1) || true
    echo "== $lib, run $run: $(grep -E '^ +[0-9]+ (passing|failing|pending)' "$log" | tr -s ' ' | tr '\n' ' ')"
    # Each failure: its title lines and the first line of its error.
    awk '/^  [0-9]+\) / {p = 1; n = 0} p && NF {print; if (/Error/ || ++n > 8) p = 0}' "$log" | sed 's/^/    /'
  done
done
