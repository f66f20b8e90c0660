"""Two runs compared (`tokensieve compare RUN_A RUN_B`): what got faster or slower from A
to B, beyond noise.

Cells are matched on (engine, spec, vocabulary) and compared where both are `ok`. For
each metric the ratio B / A of the two medians is computed (< 1: B is faster). A change
counts as beyond noise when the ratio is outside [1/T, T] (T = --threshold, 1.25) and
also outside both runs' own spread for that cell (p90 / p50 of its steps, or of its
compile samples where a fast compile was repeated), and, for compile and TTFM, the
absolute difference is above --floor-us (sub-0.1 ms jitter is scheduler noise).
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import IO

from harness.figures import fmt_ns, geometric_mean
from harness.report.text import text_table
from harness.store import Cell, Store

METRICS = ("compile", "ttfm", "mask p50", "advance p50")


def reading(cell: Cell, metric: str) -> tuple[float, float] | None:
    """(median, p90) of `metric` in `cell`; p90 == median for single-shot metrics."""
    m = cell.metrics
    if metric == "compile" and len(m.compile_samples_ns) >= 3:
        samples = sorted(m.compile_samples_ns)
        return float(m.compile_ns or 0), float(samples[math.ceil(0.9 * len(samples)) - 1])
    if metric in ("compile", "ttfm"):
        value = m.compile_ns if metric == "compile" else m.ttfm_ns
        return None if value is None else (float(value), float(value))
    summary = m.fill if metric == "mask p50" else m.advance
    if not summary.get("n"):
        return None
    return float(summary["p50"]), float(summary["p90"])


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


def changes(
    cells_a: list[Cell], cells_b: list[Cell], threshold: float, floor_ns: float
) -> tuple[list[Change], list[tuple[Cell, Cell]]]:
    """(every comparable metric of every matched ok cell, status changes). Cells match on
    (engine, spec, vocabulary); an engine run at another release in B (`NAME@VERSION`, or
    the pinned NAME) matches NAME's cells in A when each run has one release of it, so two
    runs that differ only in an engine's release compare cell by cell."""
    by_key = {c.key: c for c in cells_a}
    by_base = {(_base(c.engine), c.spec_id, c.vocab): c for c in cells_a if _single(cells_a, c)}
    out: list[Change] = []
    status_changes: list[tuple[Cell, Cell]] = []
    for b in cells_b:
        a = by_key.get(b.key)
        if a is None and _single(cells_b, b):
            a = by_base.get((_base(b.engine), b.spec_id, b.vocab))
        if a is None:
            continue
        if a.status != b.status:
            status_changes.append((a, b))
            continue
        if a.status != "ok":
            continue
        for metric in METRICS:
            ra, rb = reading(a, metric), reading(b, metric)
            if ra is None or rb is None or ra[0] <= 0 or rb[0] <= 0:
                continue
            limit = max(threshold, ra[1] / ra[0], rb[1] / rb[0])
            ratio = rb[0] / ra[0]
            single = metric in ("compile", "ttfm")
            small = single and abs(rb[0] - ra[0]) < floor_ns
            noisy = small or (1 / limit <= ratio <= limit)
            out.append(Change(b.engine, b.vocab, b.spec_id, metric, ra[0], rb[0], noisy))
    return out, status_changes


def _base(engine: str) -> str:
    return engine.partition("@")[0]


def _single(cells: list[Cell], cell: Cell) -> bool:
    """Whether `cell`'s engine is the only release of its engine among `cells`."""
    base = _base(cell.engine)
    return len({c.engine for c in cells if _base(c.engine) == base}) == 1


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
    groups: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for c in found:
        groups[(c.engine, c.vocab)][c.metric].append(c.ratio)
    if groups:
        print_("\nper engine, geometric mean of B / A over the cells ok in both:")
        rows = []
        for (engine, vocab), per in groups.items():
            cells = [engine, vocab]
            for metric in METRICS:
                gm = geometric_mean(per.get(metric, []))
                cells.append("-" if gm is None else f"{gm:.2f}")
            rows.append(cells)
        print_(text_table(("engine", "vocab", *METRICS), rows))
    if status_changes:
        print_("\nstatus changes:")
        rows = [
            [a.engine, a.vocab, a.spec_id, a.status, b.status, (b.message or "")[:80]]
            for a, b in sorted(status_changes, key=lambda p: p[0].key)
        ]
        print_(text_table(("engine", "vocab", "spec", "A", "B", "B's message"), rows, left=6))
    return 0
