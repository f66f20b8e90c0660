"""Figures: the clock, percentiles and summaries of measured durations, and their human
formatting; shared by the bench, the report, `compare` and the gate.

Durations are integer nanoseconds from `time.perf_counter_ns` everywhere they are
recorded; percentiles are by nearest rank (no interpolation), so every reported figure is
a latency that was actually observed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence

import numpy as np

clock = time.perf_counter_ns

QUANTILES: dict[str, float] = {"p50": 0.50, "p90": 0.90, "p99": 0.99}


def percentile(values: Sequence[float] | np.ndarray, q: float) -> float:
    """Nearest-rank percentile of `values` (which need not be sorted); q in [0, 1]: the
    value at rank ceil(q * n) of the sorted values, which is numpy's `inverted_cdf`
    method (the one definition `harness.frames` and a notebook use too; a test holds it
    equal to the rank formula)."""
    if len(values) == 0:
        raise ValueError("percentile of an empty sequence")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {q}")
    return _nearest_rank(np.asarray(values), q)


def _nearest_rank(data: np.ndarray, q: float) -> float:
    value = np.quantile(data, q, method="inverted_cdf")
    return int(value) if np.issubdtype(data.dtype, np.integer) else float(value)


def summarize(values: Sequence[float] | np.ndarray) -> dict[str, float]:
    """n, mean, p50, p90, p99 and max of `values`; {"n": 0} when there are none."""
    if len(values) == 0:
        return {"n": 0}
    data = np.asarray(values)
    n = int(data.size)
    out: dict[str, float] = {"n": n, "mean": float(data.sum()) / n}
    for name, q in QUANTILES.items():
        out[name] = _nearest_rank(data, q)
    out["max"] = _nearest_rank(data, 1.0)
    return out


def geometric_mean(values: Iterable[float]) -> float | None:
    """Geometric mean of the positive values; None when there are none."""
    logs = [math.log(v) for v in values if v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


# --- formatting --------------------------------------------------------------------------


def fmt_ns(ns: float | None) -> str:
    """A duration in the unit that keeps 3 significant digits readable: 812 ns, 45.1 µs,
    3.20 ms, 14.2 s."""
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    for unit, scale in (("µs", 1e3), ("ms", 1e6)):
        if ns < scale * 1e3:
            value = ns / scale
            return f"{value:.1f} {unit}" if value >= 10 else f"{value:.2f} {unit}"
    value = ns / 1e9
    return f"{value:.1f} s" if value >= 10 else f"{value:.2f} s"


def fmt_bytes(n: float | None) -> str:
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return "-"
    sign = "-" if n < 0 else ""
    value = float(abs(n))
    if value < 1024:
        return f"{sign}{value:.0f} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{sign}{value:.1f} {unit}"
    raise AssertionError("unreachable")


def fmt_seconds(seconds: float) -> str:
    """Wall time for progress and summaries: 42s, 3m05s, 1h02m."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def parse_bytes(text: str) -> int:
    """'4G', '512M', '2GiB', '1000000' -> bytes (binary units). Raises ValueError naming
    the text."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    raw = text.strip().upper().removesuffix("IB").removesuffix("B")
    number, unit = raw, ""
    if raw and raw[-1] in "KMGT":
        number, unit = raw[:-1], raw[-1]
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"not a memory size: {text!r} (examples: 4G, 512M)") from None
    if value <= 0:
        raise ValueError(f"memory size must be positive: {text!r}")
    return int(value * units[unit])
