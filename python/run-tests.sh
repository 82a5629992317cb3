#!/usr/bin/env bash
# Builds and installs the oxmq Python package into a fresh venv, with pytest, pytest-asyncio,
# pytest-timeout and pyzmq (for interop), then runs python/tests. Exits non-zero on failure.
#   python/run-tests.sh [pytest args...]        VENV=/path to reuse a venv; TIMEOUT=secs (900)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${VENV:-$(mktemp -d /tmp/oxmq-pytest.XXXXXX)/venv}"
limit="${TIMEOUT:-900}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
timeout "$limit" "$venv/bin/pip" install -q --upgrade pip >/dev/null
timeout "$limit" "$venv/bin/pip" install -q "$here" pytest pytest-asyncio pytest-timeout pyzmq
cd "$here/tests"
# Run from tests/ so `import oxmq` resolves to the installed package, not the source tree.
exec timeout "$limit" "$venv/bin/python" -m pytest -c "$here/pyproject.toml" --rootdir "$here" -q "$@" "$here/tests"
