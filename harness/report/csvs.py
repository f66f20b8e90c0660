"""Every CSV file a bench report writes, each declared as one column table (see
`harness.report.columns`): its header and the value of each column for one row.

Units are in the headers: `_ms` / `_us` columns are rounded milliseconds / microseconds,
`_bytes` are bytes; an empty cell was not measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.report.columns import Column, ms, us
from harness.report.data import Summary
from harness.report.studies import MASKBENCH_FIGURES, SPEEDUP_ENGINE, MaskBenchRow, Speedup
from harness.results.status import STATUSES
from harness.store import Cell, Preparation


def _count(status: str) -> Column[Summary]:
    return Column(status, lambda s: s.counts[status])


def _mask(name: str) -> Column[Summary]:
    return Column(f"mask_{name}_us", lambda s: us(s.mask.get(name)))


SUMMARY: list[Column[Summary]] = [
    Column("engine", lambda s: s.engine),
    Column("vocab", lambda s: s.vocab),
    Column("specs", lambda s: s.specs),
    *(_count(status) for status in STATUSES),
    Column("compile_p50_ms", lambda s: ms(s.compile_p50)),
    Column("compile_p99_ms", lambda s: ms(s.compile_p99)),
    Column("ttfm_p50_ms", lambda s: ms(s.ttfm_p50)),
    *(_mask(name) for name in ("mean", "p50", "p90", "p99", "max")),
    Column("mask_steps", lambda s: s.mask.get("n")),
    Column("advance_p50_us", lambda s: us(s.advance_p50)),
    Column("memory_p50_bytes", lambda s: s.memory),
    Column("memory_kind", lambda s: s.memory_kind),
    Column("states_p50", lambda s: s.states_p50),
    Column("truncated_cells", lambda s: s.truncated),
    Column("refused_paths", lambda s: s.refused_paths),
]

PREPARATIONS: list[Column[Preparation]] = [
    Column("engine", lambda p: p.engine),
    Column("vocab", lambda p: p.vocab),
    Column("status", lambda p: p.status),
    Column("prepare_ms", lambda p: ms(p.metrics.prepare_ns)),
    Column("rss_growth_bytes", lambda p: p.metrics.rss_growth_bytes),
    Column("startup_s", lambda p: p.metrics.startup_s),
    Column("message", lambda p: p.message),
]


@dataclass(frozen=True)
class ScalingPoint:
    engine: str
    spec_id: str
    vocab_size: int
    compile_ns: float


SCALING: list[Column[ScalingPoint]] = [
    Column("engine", lambda x: x.engine),
    Column("spec", lambda x: x.spec_id),
    Column("vocab_size", lambda x: x.vocab_size),
    Column("compile_ms", lambda x: ms(x.compile_ns)),
]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


SPEEDUP: list[Column[Speedup]] = [
    Column("spec", lambda s: s.spec_id),
    Column("vocab", lambda s: s.vocab),
    Column("baseline", lambda s: s.baseline),
    Column(f"{SPEEDUP_ENGINE}_compile_ms", lambda s: ms(s.ours_ns)),
    Column("baseline_compile_ms", lambda s: ms(s.theirs_ns)),
    Column("baseline_status", lambda s: s.theirs_status),
    Column("compile_speedup", lambda s: _round(s.ratio)),
    Column("mask_p50_ratio", lambda s: _round(s.mask_ratio)),
]


def _figure(source: str, figure: str) -> Column[MaskBenchRow]:
    if source == "ours":
        return Column(f"ours_{figure}_us", lambda r: r.ours[figure])
    return Column(f"published_{figure}_us", lambda r: r.published[figure])


MASKBENCH: list[Column[MaskBenchRow]] = [
    Column("engine", lambda r: r.engine),
    Column("specs", lambda r: r.specs),
    Column("ok", lambda r: r.ok),
    *(_figure(w, k) for k in MASKBENCH_FIGURES for w in ("ours", "published")),
]


def _fill(name: str) -> Column[Cell]:
    return Column(f"mask_{name}_us", lambda c: us(c.metrics.fill.get(name)))


CELLS: list[Column[Cell]] = [
    Column("engine", lambda c: c.engine),
    Column("spec", lambda c: c.spec_id),
    Column("vocab", lambda c: c.vocab),
    Column("study", lambda c: c.study),
    Column("status", lambda c: c.status),
    Column("compile_ms", lambda c: ms(c.metrics.compile_ns)),
    Column("ttfm_ms", lambda c: ms(c.metrics.ttfm_ns)),
    *(_fill(name) for name in ("p50", "p90", "p99", "max")),
    Column("advance_p50_us", lambda c: us(c.metrics.advance.get("p50"))),
    Column("steps", lambda c: c.metrics.fill.get("n")),
    Column("paths", lambda c: c.metrics.paths),
    Column("refused_paths", lambda c: c.metrics.refused_paths),
    Column("truncated", lambda c: c.metrics.truncated),
    Column("engine_memory_bytes", lambda c: c.metrics.engine_memory_bytes),
    Column("rss_growth_bytes", lambda c: c.metrics.rss_growth_bytes),
    Column("peak_rss_bytes", lambda c: c.metrics.peak_rss_bytes),
    Column("num_states", lambda c: c.metrics.num_states),
    Column("message", lambda c: c.message),
]
