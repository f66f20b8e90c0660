"""The groupings every page, the console summary, `compare` and the gate compute, as
operations on the frames of `harness.frames.tables`, so one definition serves them and a
user's notebook alike.

- `percentile(values, q)`: the nearest-rank percentile, the value at rank ceil(q * n) of
  the sorted values: numpy's `inverted_cdf` method is exactly that definition (a test
  holds it equal to the rank formula), so every figure is a latency that was observed.
- `engine_summary(cells, steps)`: one row per (engine, vocabulary): specs, cells by
  status, compile p50/p99, time to first mask p50 over the `ok` cells; the mask
  latency pooled over every timed fill of the `ok` cells (n, mean, p50, p90, p99, max);
  advance p50 pooled the same way; memory p50 and its kind ("engine" or "rss" when every
  measured cell agrees, else "mixed"); states p50; truncated walks and refused paths.
- `geometric_mean(values)`: over the positive values, as `harness.figures` defines it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness import figures
from harness.results.status import STATUSES


def _present(values: Sequence[float] | np.ndarray | pd.Series) -> np.ndarray:
    """The values that are not missing, as integers where they all are (so a percentile
    is one of them, an int), else floats."""
    series = pd.Series(values).dropna()
    integers = pd.api.types.is_integer_dtype(series.dtype)
    return series.to_numpy(dtype="int64" if integers else "float64")


def percentile(values: Sequence[float] | np.ndarray | pd.Series, q: float) -> float | None:
    """Nearest-rank percentile `q` (in [0, 1]) of the values that are not missing
    (`harness.figures.percentile`, the one definition); None when there are none."""
    data = _present(values)
    return figures.percentile(data, q) if data.size else None


def geometric_mean(values: Sequence[float] | pd.Series) -> float | None:
    """Geometric mean of the positive values (`harness.figures.geometric_mean`); None
    when there are none."""
    return figures.geometric_mean(_present(values).tolist())


def pooled(values: pd.Series) -> dict[str, float]:
    """n, mean, p50, p90, p99 and max of pooled step times (`harness.figures.summarize`);
    {"n": 0} without any."""
    return figures.summarize(_present(values))


def _memory_kind(kinds: pd.Series) -> str:
    seen = set(kinds.dropna())
    return "engine" if seen == {"engine"} else "rss" if seen == {"rss"} else "mixed"


def _one(cells: pd.DataFrame, steps: pd.DataFrame) -> dict[str, object]:
    """The summary figures of one engine on one vocabulary (see the module)."""
    good = cells[cells["status"] == "ok"]
    fills = steps[(steps["kind"] == "fill") & (steps["status"] == "ok")]["ns"]
    advances = steps[(steps["kind"] == "advance") & (steps["status"] == "ok")]["ns"]
    measured = good[good["memory_bytes"].notna()]
    row: dict[str, object] = {"specs": len(cells)}
    counts = cells["status"].value_counts()
    row.update({status: int(counts.get(status, 0)) for status in STATUSES})
    row.update(
        compile_p50=percentile(good["compile_ns"], 0.5),
        compile_p99=percentile(good["compile_ns"], 0.99),
        ttfm_p50=percentile(good["ttfm_ns"], 0.5),
        mask=pooled(fills),
        advance_p50=percentile(advances, 0.5),
        memory=percentile(measured["memory_bytes"], 0.5),
        memory_kind=_memory_kind(measured["memory_kind"]),
        states_p50=percentile(good["states"], 0.5),
        truncated=int(good["truncated"].fillna(False).astype(bool).sum()),
        refused_paths=int(good["refused_paths"].fillna(0).sum()),
    )
    return row


def engine_summary(cells: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """One row per (engine, vocab) of `cells` (see the module), indexed by the pair; the
    steps are matched to the cells by (engine, vocab, spec, study)."""
    keys = ["engine", "vocab", "spec", "study"]
    steps = steps.merge(cells[keys].drop_duplicates(), on=keys, how="inner")
    keys_seen: list[tuple[str, str]] = []
    rows = []
    step_groups = dict(iter(steps.groupby(["engine", "vocab"], sort=False)))
    for key, group in cells.groupby(["engine", "vocab"], sort=False):
        keys_seen.append(key)
        rows.append(_one(group, step_groups.get(key, steps.iloc[0:0])))
    # object columns: each figure as computed (an int stays an int, a missing one None)
    index = pd.MultiIndex.from_tuples(keys_seen, names=["engine", "vocab"]) if rows else None
    return pd.DataFrame(rows, index=index, dtype=object)
