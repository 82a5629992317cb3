"""Table cells the harness sections share: a median that skips missing runs, and the
formats of a rate and of a plain number ("—" for a missing value)."""

from __future__ import annotations

import statistics


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_thr(v):
    return "—" if v is None else (f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.0f} k")


def fmt(v, digits=1):
    return "—" if v is None else f"{v:.{digits}f}"
