"""The sections of a bench run's page that compare engines against a reference: TokensDFA's
speedup over its baselines, and our figures beside MaskBench's published ones.

Each section is one function returning its HTML parts and writing the CSV and plot it
links into the run directory `out`; see `harness.report.studies` for the figures.
"""

from __future__ import annotations

from pathlib import Path

from harness.report import csvs
from harness.report.columns import Column, html_table, write_csv
from harness.report.data import RunData
from harness.report.html import escape, figure, link
from harness.report.plots import plot_speedups
from harness.report.studies import (
    MASKBENCH_FIGURES,
    SPEEDUP_BASELINES,
    SPEEDUP_ENGINE,
    MaskBenchRow,
    SpeedupMean,
    find_maskbench,
    speedup_means,
    speedups,
)
from harness.store import Store


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


SPEEDUP_MEANS: list[Column[SpeedupMean]] = [
    Column("vocab", lambda m: m.vocab),
    Column("against", lambda m: m.baseline),
    Column("specs", lambda m: m.specs),
    Column("compile speedup (geomean)", lambda m: _times(m.compile_gm)),
    Column("mask p50 speedup (geomean)", lambda m: _times(m.mask_gm)),
    Column(
        f"{SPEEDUP_ENGINE} ok, baseline failed",
        lambda m: ", ".join(f"{s.spec_id} ({s.theirs_status})" for s in m.unfinished) or "-",
    ),
]


def speedup(data: RunData, out: Path) -> list[str]:
    """SPEEDUP_ENGINE's compile and mask speedups over each baseline: the per-spec plot,
    the geometric means per vocabulary; writes speedup.csv."""
    parts = [f"<h2>{escape(SPEEDUP_ENGINE)} speedup</h2>"]
    items = speedups(data)
    if not items:
        parts.append(
            f'<p class="note">Needs ok cells of {escape(SPEEDUP_ENGINE)} and of '
            f"{escape(' or '.join(SPEEDUP_BASELINES))} in this run.</p>"
        )
        return parts
    speed_csv = write_csv(out / "speedup.csv", csvs.SPEEDUP, items)
    parts.extend(figure(file, caption) for file, caption in plot_speedups(data, items, out))
    parts.append(html_table(SPEEDUP_MEANS, speedup_means(data, items), left=2))
    parts.append(
        f'<p class="note">Speedup = baseline time / {escape(SPEEDUP_ENGINE)} time, per spec '
        "both engines handled; specs where the baseline failed are listed, not averaged. "
        f"Per-spec values: {link(speed_csv)}</p>"
    )
    return parts


def _us(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def _figure(label: str, source: str, key: str) -> Column[MaskBenchRow]:
    if source == "ours":
        return Column(f"{label} ours", lambda r: _us(r.ours[key]))
    return Column(f"{label} MaskBench", lambda r: _us(r.published[key]))


_LABELS = {
    "mask_mean": "mask mean",
    "mask_p50": "mask p50",
    "mask_p99": "mask p99",
    "ttfm_p50": "TTFM p50",
}

MASKBENCH: list[Column[MaskBenchRow]] = [
    Column("engine", lambda r: r.engine),
    Column("ok/specs", lambda r: f"{r.ok}/{r.specs}"),
    *(_figure(_LABELS[k], w, k) for k in MASKBENCH_FIGURES for w in ("ours", "published")),
]


def maskbench(store: Store, data: RunData, out: Path) -> list[str]:
    """Our mask latency and TTFM beside MaskBench's published figures, from this run or
    else the latest run with MaskBench cells; writes maskbench.csv."""
    parts = ["<h2>MaskBench comparison</h2>"]
    found = find_maskbench(store, data)
    if found is None:
        parts.append(
            '<p class="note">No MaskBench run recorded yet: <code>tokensieve bench --corpus '
            "maskbench --limit-specs 200</code> measures one.</p>"
        )
        return parts
    mb_csv = write_csv(out / "maskbench.csv", csvs.MASKBENCH, found.rows)
    origin = "this run" if found.source is data else f"run {found.source.run.name}"
    parts.append(
        f'<p class="note">From {escape(origin)}, vocabulary {escape(found.vocab)}, in µs. '
        "MaskBench's figures: "
        "Llama-3.1 tokenizer, single thread, 2025-03-27 run, every token of the valid "
        "instances; ours: one fill per step along at most the run's --paths valid "
        "instances per schema and --max-steps steps per path, on this machine. TTFM = "
        "compile + first mask, as MaskBench's \"compile\". Each engine's figures pool "
        "the schemas it handled (ok/specs), so an engine failing the hard ones looks "
        f"faster there. {link(mb_csv)}</p>"
    )
    parts.append(html_table(MASKBENCH, found.rows, left=2))
    return parts
