"""Two runs compared (`tokensieve compare RUN_A RUN_B`): what got faster or slower from A
to B, beyond noise.

Cells are matched on (engine, spec, vocabulary) and compared where both are `ok`, as
frames (`harness.frames`: the same columns `tokensieve export` writes). For
each metric the ratio B / A of the two medians is computed (< 1: B is faster). A change
counts as beyond noise when the ratio is outside [1/T, T] (T = --threshold, 1.25) and
also outside both runs' own spread for that cell (p90 / p50 of its steps, or of its
compile samples where a fast compile was repeated), and, for compile and TTFM, the
absolute difference is above --floor-us (sub-0.1 ms jitter is scheduler noise).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import IO

import pandas as pd

from harness.figures import fmt_ns
from harness.frames import cells_of, geometric_mean
from harness.report.text import text_table
from harness.store import Cell, Store

METRICS = ("compile", "ttfm", "mask p50", "advance p50")
# metric -> (its median, its spread's p90) among the columns of `harness.frames` cells: the
# p90 of a compile's samples where a fast compile was repeated, else the compile itself;
# time to first mask is one shot, its own spread
READINGS = {
    "compile": ("compile_ns", "compile_p90_ns"),
    "ttfm": ("ttfm_ns", "ttfm_ns"),
    "mask p50": ("mask_p50_ns", "mask_p90_ns"),
    "advance p50": ("advance_p50_ns", "advance_p90_ns"),
}
SINGLE_SHOT = ("compile", "ttfm")


@dataclass(frozen=True)
class Change:
    engine: str
    vocab: str
    spec_id: str
    metric: str
    a: float
    b: float
    noisy: bool

    @property
    def ratio(self) -> float:
        return self.b / self.a


def _keyed(cells: list[Cell]) -> pd.DataFrame:
    """The cells' frame with each row's position, its engine's base name and whether it is
    the run's only release of that engine."""
    frame = cells_of(cells)
    frame["row"] = range(len(frame))
    frame["base"] = frame["engine"].str.partition("@")[0]
    frame["single"] = frame.groupby("base")["engine"].transform("nunique") == 1
    return frame


def pairs(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """B's cells with their match in A (columns suffixed `_a`, `_b`): on (engine, spec,
    vocabulary); an engine run at another release in B (`NAME@VERSION`, or the pinned
    NAME) matches NAME's cells in A when each run has one release of it."""
    keys = ["engine", "spec", "vocab"]
    direct = b.merge(a, on=keys, suffixes=("_b", "_a"))
    rest = b[~b["row"].isin(direct["row_b"]) & b["single"]]
    by_base = rest.merge(
        a[a["single"]].drop(columns="engine"), on=["base", "spec", "vocab"], suffixes=("_b", "_a")
    )
    return pd.concat([direct, by_base], ignore_index=True).sort_values("row_b", kind="stable")


def _metric_changes(
    ok: pd.DataFrame, metric: str, threshold: float, floor_ns: float
) -> pd.DataFrame:
    """One metric of the pairs both ok where both runs measured it: ratio B / A, and
    whether it is within noise (see the module)."""
    value, spread = READINGS[metric]
    va, vb = ok[f"{value}_a"].astype("float64"), ok[f"{value}_b"].astype("float64")
    sa, sb = ok[f"{spread}_a"].astype("float64"), ok[f"{spread}_b"].astype("float64")
    usable = (va > 0) & (vb > 0)
    limit = pd.concat([sa / va, sb / vb], axis=1).max(axis=1).clip(lower=threshold)
    ratio = vb / va
    small = (vb - va).abs() < floor_ns if metric in SINGLE_SHOT else False
    noisy = small | ((1 / limit <= ratio) & (ratio <= limit))
    out = pd.DataFrame(
        {"row_b": ok["row_b"], "engine": ok["engine"], "vocab": ok["vocab"], "spec": ok["spec"],
         "metric": metric, "a": va, "b": vb, "noisy": noisy}
    )  # fmt: skip
    return out[usable]


def changes(
    cells_a: list[Cell], cells_b: list[Cell], threshold: float, floor_ns: float
) -> tuple[list[Change], list[tuple[Cell, Cell]]]:
    """(every comparable metric of every matched ok cell, status changes), computed on the
    two runs' frames (`pairs` matches them)."""
    matched = pairs(_keyed(cells_a), _keyed(cells_b))
    moved = matched[matched["status_a"] != matched["status_b"]]
    status_changes = [
        (cells_a[i], cells_b[j]) for i, j in zip(moved["row_a"], moved["row_b"], strict=True)
    ]
    ok = matched[(matched["status_a"] == "ok") & (matched["status_b"] == "ok")]
    parts = [_metric_changes(ok, m, threshold, floor_ns) for m in METRICS]
    found = pd.concat(parts, ignore_index=True) if len(ok) else pd.DataFrame()
    if found.empty:
        return [], status_changes
    found["order"] = found["metric"].map(METRICS.index)
    found = found.sort_values(["row_b", "order"], kind="stable")
    return [
        Change(r.engine, r.vocab, r.spec, r.metric, float(r.a), float(r.b), bool(r.noisy))
        for r in found.itertuples()
    ], status_changes


def _base(engine: str) -> str:
    return engine.partition("@")[0]


def ratio_means(found: list[Change]) -> pd.DataFrame:
    """Per (engine, vocabulary) in order of appearance, the geometric mean of B / A of
    each metric over the cells ok in both (NaN where none)."""
    frame = pd.DataFrame(
        [(c.engine, c.vocab, c.metric, c.ratio) for c in found],
        columns=["engine", "vocab", "metric", "ratio"],
    )
    means = frame.groupby(["engine", "vocab", "metric"], sort=False)["ratio"].agg(geometric_mean)
    return means.unstack("metric").reindex(columns=list(METRICS))


def compare(
    store: Store,
    run_a: str,
    run_b: str,
    threshold: float,
    floor_us: float,
    out: IO[str] | None = None,
) -> int:
    """Print what got faster or slower from `run_a` to `run_b`, beyond noise (on `out`,
    default the current standard output)."""
    out = out or sys.stdout
    versions_a = store.run(run_a).meta.get("versions", {})
    versions_b = store.run(run_b).meta.get("versions", {})
    cells_a, cells_b = store.cells(run_a), store.cells(run_b)
    found, status_changes = changes(cells_a, cells_b, threshold, floor_us * 1e3)

    def print_(text: str) -> None:
        print(text, file=out)

    matched = {(c.engine, c.vocab, c.spec_id) for c in found}
    print_(
        f"A = {run_a}, B = {run_b}: {len(matched)} cells ok in both, "
        f"{len(status_changes)} status changes; ratio = B / A (< 1: B faster)"
    )
    for engine in sorted({_base(c.engine) for c in [*cells_a, *cells_b]}):
        a = ", ".join(f"{k} {v}" for k, v in versions_a.items() if _base(k) == engine)
        b = ", ".join(f"{k} {v}" for k, v in versions_b.items() if _base(k) == engine)
        if a != b:
            print_(f"{engine}: A ran {a or '-'}; B ran {b or '-'}")
    header = ("ratio", "metric", "engine", "vocab", "spec", "A", "B")
    real = [c for c in found if not c.noisy]
    for title, picked in (
        ("slower", sorted((c for c in real if c.ratio > 1), key=lambda c: -c.ratio)),
        ("faster", sorted((c for c in real if c.ratio < 1), key=lambda c: c.ratio)),
    ):
        print_(f"\n{title} beyond noise: {len(picked)}")
        if picked:
            rows = [
                [f"{c.ratio:.2f}", c.metric, c.engine, c.vocab, c.spec_id, fmt_ns(c.a), fmt_ns(c.b)]
                for c in picked
            ]
            print_(text_table(header, rows, left=0))
    if found:
        print_("\nper engine, geometric mean of B / A over the cells ok in both:")
        rows = [
            [engine, vocab, *("-" if pd.isna(gm) else f"{gm:.2f}" for gm in means)]
            for (engine, vocab), means in ratio_means(found).iterrows()
        ]
        print_(text_table(("engine", "vocab", *METRICS), rows))
    if status_changes:
        print_("\nstatus changes:")
        rows = [
            [a.engine, a.vocab, a.spec_id, a.status, b.status, (b.message or "")[:80]]
            for a, b in sorted(status_changes, key=lambda p: p[0].key)
        ]
        print_(text_table(("engine", "vocab", "spec", "A", "B", "B's message"), rows, left=6))
    return 0
