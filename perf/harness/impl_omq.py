"""omq.rs (crates omq-tokio / omq-proto, https://github.com/paddor/omq.rs): a second Rust ZMTP
implementation as a third column beside oxmq and libzmq (issue #6).

Its tools are perf/omq, a standalone Cargo project outside the oxmq workspace with pinned
versions (perf/omq/Cargo.lock): local_thr/remote_thr (PUSH/PULL) and local_lat/remote_lat
(REQ/REP) with libzmq's command lines and output lines, the optional <enable_curve> included.
perf/harness/run.sh builds them (cargo build --release --manifest-path perf/omq/Cargo.toml);
when that build fails or was not done, `available()` says why and the column is dropped, the
rest of the benchmark runs as usual.

omq runs its ZMTP I/O on the application thread (a tokio current_thread runtime with
Context::current(), as omq's own benchmark peer does), where libzmq and oxmq have an I/O thread.

Cells omq has no tool for: inproc (libzmq's inproc_thr/inproc_lat are one-process tools; not
written for omq), so those return None and stay blank. tcp, ipc and tcp-curve run.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# The harness loads this module from bench.py running as __main__: subclass its own Impl and
# return its own Run (a second import of bench.py would make different classes). Imported
# any other way (a test, a REPL), fall back to importing bench.
_h = sys.modules.get("__main__")
if not hasattr(_h, "Impl") or not hasattr(_h, "CTools"):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench as _h  # noqa: E402

OMQ = _h.ROOT / "perf" / "omq"
BIN = OMQ / "target" / "release"
TOOLS = ("local_thr", "remote_thr", "local_lat", "remote_lat")


def locked_versions() -> str:
    """`omq-tokio 0.33.0, omq-proto 0.37.0` from perf/omq/Cargo.lock."""
    try:
        text = (OMQ / "Cargo.lock").read_text()
    except OSError:
        return ""
    found = dict(re.findall(r'name = "(omq-tokio|omq-proto)"\nversion = "([^"]+)"', text))
    return ", ".join(f"{n} {found[n]}" for n in ("omq-tokio", "omq-proto") if n in found)


class OmqTools(_h.Impl):
    name, label = "omq", "omq.rs"

    def available(self):
        missing = [t for t in TOOLS if not (BIN / t).exists()]
        if missing:
            return (f"missing {', '.join(missing)} in {BIN} "
                    "(cargo build --release --manifest-path perf/omq/Cargo.toml)")
        # Stale binaries from older sources would measure something else: say so, run anyway.
        newest_src = max((p.stat().st_mtime for p in (OMQ / "src").rglob("*.rs")), default=0)
        if any((BIN / t).stat().st_mtime < newest_src for t in TOOLS):
            print("omq: perf/omq/target is older than perf/omq/src (rebuild it)", file=sys.stderr)
        return None

    def run(self, kind, transport, size, count, ep):
        if transport not in ("tcp", "ipc", _h.CURVE):
            return None  # inproc: no one-process omq tool
        addr = ep.zmq(transport)
        local, remote = ("local_thr", "remote_thr") if kind == "thr" else ("local_lat", "remote_lat")
        curve = ["1"] if transport == _h.CURVE else []
        return _h.Run([[str(BIN / local), addr, str(size), str(count), *curve],
                       [str(BIN / remote), addr, str(size), str(count), *curve]],
                      {}, ep.listen(transport))

    def describe(self):
        v = locked_versions()
        return (f"omq.rs{' (' + v + ')' if v else ''}, perf/omq tools (libzmq's command lines; "
                "I/O on the application thread: tokio current_thread runtime, Context::current())")


IMPL = OmqTools()
