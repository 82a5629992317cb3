"""oxmq as another checkout built it: the "before" column of an A/B (an engine change, say).

Set AB_BEFORE to the root of that checkout, built as the harness builds this one
(scripts/build-dist.sh for dist/lib, perf/c's tools in perf/c/build/oxmq):

    git worktree add /tmp/before <rev> && (cd /tmp/before && bash scripts/build-dist.sh && make -C perf/c DIST=$PWD/dist)
    AB_BEFORE=/tmp/before perf/harness/bench.py --impls oxmq,before --rounds 5 --no-charts

The rounds interleave the two as they do oxmq and libzmq. `--impls before` also takes
before-nospin (its latency with the receive spin off, beside oxmq-nospin). Without AB_BEFORE
the columns drop out.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_h = sys.modules.get("__main__")
if not hasattr(_h, "Impl") or not hasattr(_h, "CTools"):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench as _h  # noqa: E402


class Before(_h.CTools):
    def __init__(self, root: str | None, nospin: bool = False):
        self.root = Path(root) if root else None
        base = self.root or Path("/nonexistent")
        if nospin:
            super().__init__("before-nospin", "oxmq before, receive spin off", base / "perf" / "c" / "build" / "oxmq",
                             base / "dist" / "lib", kinds=("lat",), env={"OXMQ_RECV_SPIN_US": "0"}, group="before")
        else:
            super().__init__("before", "oxmq before", base / "perf" / "c" / "build" / "oxmq", base / "dist" / "lib")

    def available(self):
        if self.root is None:
            return "AB_BEFORE is not set"
        return super().available()

    def describe(self):
        spin = ", receive spin off" if self.name.endswith("nospin") else ""
        return f"oxmq before ({self.root}, perf/c tools{spin})"


IMPLS = [Before(os.environ.get("AB_BEFORE")), Before(os.environ.get("AB_BEFORE"), nospin=True)]
