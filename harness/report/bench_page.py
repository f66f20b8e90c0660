"""A run's report: `reports/RUN/index.html` with CSV tables and PNG plots beside it.

Static and offline: inline CSS, relative links, no script. Engines are only ever looked
up by name in two places: the TokensDFA speedup section (TokensDFA against the naive
index and outlines-core) and the MaskBench comparison, whose published figures are per
engine.

Definitions used throughout:
- compile: `engine.compile` of one spec (the median of up to 5 samples when one takes
  under 20 ms); TTFM (time to first mask): compile + first matcher + its first fill, as
  MaskBench defines "compile";
- mask latency: one fill per step along the token paths, pooled over every step of every
  `ok` cell of an engine (MaskBench pools the same way);
- memory: the engine's own figure for a compiled spec where it has one, else the growth
  of the worker's resident set over compile and walk ("rss");
- states: plotted against the count reported by the first engine of the run that knows
  it for that (spec, vocabulary), so every engine shares the same x axis.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.embed import csv_cell, html_text
from harness.figures import fmt_bytes, fmt_ns, fmt_seconds, geometric_mean, percentile, summarize
from harness.store.db import FAILED, STATUSES, Cell, Run, Store

# MaskBench's published figures (README of ../shared/corpora: Llama-3.1 tokenizer, single
# thread, 2025-03-27 run), in microseconds.
MASKBENCH_PUBLISHED: dict[str, dict[str, float]] = {
    "llguidance": {"mask_mean": 64, "mask_p50": 46, "mask_p99": 533, "ttfm_p50": 1_037},
    "xgrammar": {"mask_mean": 728, "mask_p50": 9, "mask_p99": 5_687, "ttfm_p50": 919_459},
    "outlines-core": {
        "mask_mean": 1_858,
        "mask_p50": 34,
        "mask_p99": 7_184,
        "ttfm_p50": 587_900,
    },
}
MASKBENCH_VOCAB = "llama3"
MASKBENCH_PREFIX = "maskbench/"
SPEEDUP_ENGINE = "tokensdfa"
SPEEDUP_BASELINES = ("naive", "outlines-core")


# --- data --------------------------------------------------------------------------------


@dataclass
class RunData:
    run: Run
    cells: list[Cell]
    preparations: list[Any]

    @property
    def engines(self) -> list[str]:
        order = list(self.run.meta.get("options", {}).get("engines", []))
        seen = {c.engine for c in self.cells}
        return [e for e in order if e in seen] + sorted(seen - set(order))

    @property
    def vocabs(self) -> list[str]:
        order = list(self.run.meta.get("options", {}).get("vocabs", []))
        seen = {c.vocab for c in self.main}
        return [v for v in order if v in seen] + sorted(seen - set(order))

    @property
    def main(self) -> list[Cell]:
        return [c for c in self.cells if c.study == "main"]

    @property
    def scaling(self) -> list[Cell]:
        return [c for c in self.cells if c.study == "scaling"]


def load(store: Store, name: str) -> RunData:
    return RunData(store.run(name), store.cells(name), store.preparations(name))


def _ok(cells: Iterable[Cell]) -> list[Cell]:
    return [c for c in cells if c.status == "ok"]


def _values(cells: Iterable[Cell], key: str) -> list[float]:
    return [c.metrics[key] for c in cells if c.metrics.get(key) is not None]


def _memory(cell: Cell) -> tuple[float | None, str]:
    own = cell.metrics.get("engine_memory_bytes")
    if own is not None:
        return float(own), "engine"
    growth = cell.metrics.get("rss_growth_bytes")
    return (None, "rss") if growth is None else (float(max(0, growth)), "rss")


def _p(values: Sequence[float], q: float) -> float | None:
    return percentile(values, q) if values else None


@dataclass
class Summary:
    engine: str
    vocab: str
    specs: int
    counts: dict[str, int]
    compile_p50: float | None
    compile_p99: float | None
    ttfm_p50: float | None
    mask: dict[str, float]
    advance_p50: float | None
    memory: float | None
    memory_kind: str
    states_p50: float | None
    truncated: int
    refused_paths: int

    @property
    def failed(self) -> int:
        return sum(self.counts.get(s, 0) for s in FAILED)


def summarize_cells(engine: str, vocab: str, cells: Sequence[Cell]) -> Summary:
    ok = _ok(cells)
    fills = [v for c in ok for v in c.metrics.get("fill_ns", [])]
    advances = [v for c in ok for v in c.metrics.get("advance_ns", [])]
    memories = [m for m, _ in map(_memory, ok) if m is not None]
    kinds = {k for m, k in map(_memory, ok) if m is not None}
    compiles = _values(ok, "compile_ns")
    return Summary(
        engine=engine,
        vocab=vocab,
        specs=len(cells),
        counts={s: sum(1 for c in cells if c.status == s) for s in STATUSES},
        compile_p50=_p(compiles, 0.5),
        compile_p99=_p(compiles, 0.99),
        ttfm_p50=_p(_values(ok, "ttfm_ns"), 0.5),
        mask=summarize(fills),
        advance_p50=_p(advances, 0.5),
        memory=_p(memories, 0.5),
        memory_kind="engine" if kinds == {"engine"} else "rss" if kinds == {"rss"} else "mixed",
        states_p50=_p(_values(ok, "num_states"), 0.5),
        truncated=sum(1 for c in ok if c.metrics.get("truncated")),
        refused_paths=sum(int(c.metrics.get("refused_paths") or 0) for c in ok),
    )


def summaries(data: RunData, cells: Sequence[Cell] | None = None) -> list[Summary]:
    cells = data.main if cells is None else cells
    by_key: dict[tuple[str, str], list[Cell]] = defaultdict(list)
    for c in cells:
        by_key[(c.engine, c.vocab)].append(c)
    return [
        summarize_cells(e, v, by_key[(e, v)])
        for v in data.vocabs
        for e in data.engines
        if (e, v) in by_key
    ]


# --- console summary ---------------------------------------------------------------------

SUMMARY_HEADER = (
    "engine",
    "vocab",
    "ok",
    "unsup",
    "failed",
    "compile p50",
    "compile p99",
    "TTFM p50",
    "mask p50",
    "mask p99",
    "mask max",
    "memory p50",
)


def _summary_row(s: Summary) -> list[str]:
    failed = ", ".join(f"{s.counts[k]} {k}" for k in STATUSES if k in FAILED and s.counts[k])
    memory = fmt_bytes(s.memory) + (" rss" if s.memory_kind == "rss" else "")
    return [
        s.engine,
        s.vocab,
        str(s.counts["ok"]),
        str(s.counts["unsupported"]),
        f"{s.failed}" + (f" ({failed})" if failed else ""),
        fmt_ns(s.compile_p50),
        fmt_ns(s.compile_p99),
        fmt_ns(s.ttfm_p50),
        fmt_ns(s.mask.get("p50")),
        fmt_ns(s.mask.get("p99")),
        fmt_ns(s.mask.get("max")),
        memory if s.memory is not None else "-",
    ]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 2) -> str:
    """Plain-text table: the first `left` columns left-aligned, the others right."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        cells = [
            str(v).ljust(w) if i < left else str(v).rjust(w)
            for i, (v, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def wall_and_jobs(run: Run) -> tuple[float, list[int], bool]:
    sessions = run.meta.get("sessions", [])
    wall = sum(float(s.get("wall_s") or 0.0) for s in sessions)
    jobs = sorted({int(s.get("jobs", 1)) for s in sessions})
    killed = any(s.get("status") == "running" for s in sessions)
    return wall, jobs, killed


def summary_text(store: Store, name: str) -> str:
    data = load(store, name)
    rows = [_summary_row(s) for s in summaries(data)]
    wall, jobs, killed = wall_and_jobs(data.run)
    total = len(data.cells)
    lines = [
        f"run {name}: {total} cells ({len(data.main)} main, {len(data.scaling)} scaling), "
        f"wall {fmt_seconds(wall)} over {len(data.run.meta.get('sessions', []))} session(s)"
        f"{' (one killed)' if killed else ''}, {'/'.join(map(str, jobs)) or '1'} "
        "cell(s) at once",
        text_table(SUMMARY_HEADER, rows) if rows else "(no cells)",
        "compile/TTFM/mask percentiles by nearest rank over ok cells; mask latency pooled "
        "over every timed step; memory: the engine's own figure, or worker RSS growth (rss)",
    ]
    return "\n".join(lines)


# --- plots -------------------------------------------------------------------------------


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _colors(engines: Sequence[str]) -> dict[str, Any]:
    plt = _pyplot()
    cmap = plt.get_cmap("tab10")
    return {e: cmap(i % 10) for i, e in enumerate(engines)}


def _save(fig: Any, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path.name


def _grid(n: int, width: float = 6.0, height: float = 4.2) -> tuple[Any, list[Any]]:
    plt = _pyplot()
    cols = min(n, 2)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def plot_cdfs(data: RunData, out: Path) -> list[tuple[str, str]]:
    """Compile-time and mask-latency CDFs, one panel per vocabulary."""
    colors = _colors(data.engines)
    made: list[tuple[str, str]] = []
    vocabs = data.vocabs
    if not vocabs:
        return made
    fig, axes = _grid(len(vocabs))
    for ax, vocab in zip(axes, vocabs, strict=True):
        for engine in data.engines:
            cells = [c for c in data.main if c.engine == engine and c.vocab == vocab]
            values = sorted(v / 1e6 for v in _values(_ok(cells), "compile_ns"))
            if not values:
                continue
            ys = [(i + 1) / len(cells) for i in range(len(values))]
            ax.step(values, ys, where="post", color=colors[engine], label=engine)
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("compile time (ms, log)")
        ax.set_ylabel("share of specs compiled")
        ax.set_title(f"compile time CDF — {vocab}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    made.append(
        (
            _save(fig, out / "compile_cdf.png"),
            "Compile time CDF. A curve ends below 1 by the share of specs the engine did not "
            "compile (unsupported, error, timeout, oom, crash).",
        )
    )
    fig, axes = _grid(len(vocabs))
    for ax, vocab in zip(axes, vocabs, strict=True):
        for engine in data.engines:
            cells = _ok(c for c in data.main if c.engine == engine and c.vocab == vocab)
            values = sorted(v / 1e3 for c in cells for v in c.metrics.get("fill_ns", []))
            if not values:
                continue
            ys = [(i + 1) / len(values) for i in range(len(values))]
            ax.step(values, ys, where="post", color=colors[engine], label=engine)
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("mask fill latency (µs, log)")
        ax.set_ylabel("share of steps")
        ax.set_title(f"mask latency CDF — {vocab}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    made.append(
        (
            _save(fig, out / "mask_cdf.png"),
            "Mask latency CDF over every timed step of every ok cell (one fill per step).",
        )
    )
    return made


def reference_states(data: RunData) -> dict[tuple[str, str], float]:
    """(spec, vocab) -> states, from the first engine (run order) that reports them."""
    out: dict[tuple[str, str], float] = {}
    rank = {e: i for i, e in enumerate(data.engines)}
    best: dict[tuple[str, str], int] = {}
    for c in data.cells:
        states = c.metrics.get("num_states")
        if c.status != "ok" or states is None:
            continue
        key = (c.spec_id, c.vocab)
        if key not in best or rank[c.engine] < best[key]:
            best[key] = rank[c.engine]
            out[key] = float(states)
    return out


def state_source(data: RunData) -> str | None:
    for engine in data.engines:
        if any(c.engine == engine and c.metrics.get("num_states") for c in data.cells):
            return engine
    return None


def plot_states(data: RunData, out: Path) -> list[tuple[str, str]]:
    states = reference_states(data)
    if not states:
        return []
    colors = _colors(data.engines)
    source = state_source(data)
    made = []
    for what, label, file in (
        ("compile", "compile time (ms, log)", "compile_vs_states.png"),
        ("memory", "memory (bytes, log)", "memory_vs_states.png"),
    ):
        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(9, 5.5))
        for engine in data.engines:
            xs, ys, hollow_x, hollow_y = [], [], [], []
            for c in _ok(c for c in data.main if c.engine == engine):
                x = states.get((c.spec_id, c.vocab))
                if x is None:
                    continue
                if what == "compile":
                    xs.append(x)
                    ys.append(c.metrics["compile_ns"] / 1e6)
                    continue
                memory, kind = _memory(c)
                if memory is None or memory <= 0:
                    continue
                (xs if kind == "engine" else hollow_x).append(x)
                (ys if kind == "engine" else hollow_y).append(memory)
            if xs:
                ax.scatter(xs, ys, s=14, color=colors[engine], label=engine, alpha=0.75)
            if hollow_x:
                ax.scatter(
                    hollow_x,
                    hollow_y,
                    s=18,
                    facecolors="none",
                    edgecolors=colors[engine],
                    label=f"{engine} (rss growth)",
                    alpha=0.75,
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"DFA states (as counted by {source})")
        ax.set_ylabel(label)
        ax.set_title(f"{what} against number of states (all vocabularies)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
        caption = (
            f"{what.capitalize()} of each ok cell against the number of states of its "
            f"spec, as {source} counts them."
        )
        if what == "memory":
            caption += (
                " Filled markers: the engine's own figure; hollow: growth of the worker's "
                "resident set (engines without a figure; 0 growth is not drawn)."
            )
        made.append((_save(fig, out / file), caption))
    return made


def scaling_points(data: RunData) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """(engine, spec) -> [(vocabulary size, compile ns)], the full vocabulary's point
    taken from the main cells of the base vocabulary."""
    if not data.scaling:
        return {}
    base = data.scaling[0].vocab.split("[:", 1)[0]
    specs = {c.spec_id for c in data.scaling}
    out: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for c in _ok(data.scaling):
        out[(c.engine, c.spec_id)].append((c.metrics["vocab_size"], c.metrics["compile_ns"]))
    for c in _ok(data.main):
        if c.vocab == base and c.spec_id in specs:
            out[(c.engine, c.spec_id)].append((c.metrics["vocab_size"], c.metrics["compile_ns"]))
    return {k: sorted(v) for k, v in out.items()}


def plot_scaling(data: RunData, out: Path) -> list[tuple[str, str]]:
    points = scaling_points(data)
    if not points:
        return []
    specs = sorted({spec for _, spec in points})
    colors = _colors(data.engines)
    fig, axes = _grid(len(specs), width=6.0, height=4.0)
    for ax, spec in zip(axes, specs, strict=True):
        for engine in data.engines:
            pts = points.get((engine, spec))
            if not pts:
                continue
            ax.plot(
                [p[0] for p in pts],
                [p[1] / 1e6 for p in pts],
                marker="o",
                color=colors[engine],
                label=engine,
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("vocabulary size (ids, log2)")
        ax.set_ylabel("compile time (ms, log)")
        ax.set_title(spec, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    base = data.scaling[0].vocab.split("[:", 1)[0]
    return [
        (
            _save(fig, out / "vocab_scaling.png"),
            f"Compile time against vocabulary size: the first N ids of {base} (plus any "
            "single-byte tokens they lack), and the full vocabulary. A missing point is a "
            "cell that did not compile.",
        )
    ]


@dataclass
class Speedup:
    spec_id: str
    vocab: str
    ours_ns: float
    baseline: str
    theirs_ns: float | None  # None: the baseline did not finish
    theirs_status: str
    mask_ratio: float | None  # baseline mask p50 / ours

    @property
    def ratio(self) -> float | None:
        return None if self.theirs_ns is None else self.theirs_ns / self.ours_ns


def speedups(data: RunData) -> list[Speedup]:
    by_key = {(c.engine, c.spec_id, c.vocab): c for c in data.main}
    out = []
    for (engine, spec, vocab), ours in sorted(by_key.items(), key=lambda kv: kv[0][1:]):
        if engine != SPEEDUP_ENGINE or ours.status != "ok":
            continue
        for baseline in SPEEDUP_BASELINES:
            theirs = by_key.get((baseline, spec, vocab))
            if theirs is None or theirs.status == "unsupported":
                continue
            mask_ratio = None
            ours_p50 = ours.metrics.get("fill", {}).get("p50")
            theirs_p50 = theirs.metrics.get("fill", {}).get("p50")
            if theirs.status == "ok" and ours_p50 and theirs_p50:
                mask_ratio = theirs_p50 / ours_p50
            out.append(
                Speedup(
                    spec,
                    vocab,
                    ours.metrics["compile_ns"],
                    baseline,
                    theirs.metrics.get("compile_ns") if theirs.status == "ok" else None,
                    theirs.status,
                    mask_ratio,
                )
            )
    return out


def plot_speedups(data: RunData, items: list[Speedup], out: Path) -> list[tuple[str, str]]:
    done = [s for s in items if s.ratio is not None]
    if not done:
        return []
    plt = _pyplot()
    vocabs = [v for v in data.vocabs if any(s.vocab == v for s in done)]
    specs = sorted({s.spec_id for s in done})
    height = max(3.5, 0.16 * len(specs) * len(SPEEDUP_BASELINES) + 1.8)
    label_width = 0.065 * max(len(s) for s in specs)
    fig, axes = plt.subplots(
        1,
        len(vocabs),
        figsize=(5.0 * len(vocabs) + label_width, height),
        squeeze=False,
        sharey=True,
    )
    cmap = plt.get_cmap("tab10")
    colors = {b: cmap(i + 2) for i, b in enumerate(SPEEDUP_BASELINES)}
    bar = 0.8 / len(SPEEDUP_BASELINES)
    for ax, vocab in zip(axes[0], vocabs, strict=True):
        for j, baseline in enumerate(SPEEDUP_BASELINES):
            ratios = {
                s.spec_id: s.ratio
                for s in done
                if s.vocab == vocab and s.baseline == baseline and s.ratio is not None
            }
            if not ratios:
                continue
            ys = [i + j * bar for i, spec in enumerate(specs) if spec in ratios]
            xs = [ratios[spec] for spec in specs if spec in ratios]
            gm = geometric_mean(xs)
            label = f"vs {baseline}" + (f" (geomean {gm:.2f}x)" if gm else "")
            # Bars grow from 1x, left when slower, right when faster.
            widths = [x - 1.0 for x in xs]
            ax.barh(ys, widths, left=1.0, height=bar, color=colors[baseline], label=label)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yticks([i + bar * (len(SPEEDUP_BASELINES) - 1) / 2 for i in range(len(specs))])
        ax.set_yticklabels(specs, fontsize=7)
        ax.set_xlabel("compile speedup (x, log; > 1: faster)")
        ax.set_title(f"{SPEEDUP_ENGINE} against baselines — {vocab}", fontsize=10)
        ax.grid(True, axis="x", which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    axes[0][0].invert_yaxis()  # once: the panels share their y axis
    return [
        (
            _save(fig, out / "speedup.png"),
            f"Compile time of the baseline divided by {SPEEDUP_ENGINE}'s, per spec both "
            "compiled (log scale); geometric means in the legend.",
        )
    ]


# --- MaskBench comparison ----------------------------------------------------------------


def maskbench_rows(data: RunData) -> tuple[str, list[dict[str, Any]]] | None:
    """(vocabulary used, one row per engine) for the run's MaskBench cells, or None."""
    cells = [c for c in data.main if c.spec_id.startswith(MASKBENCH_PREFIX)]
    if not cells:
        return None
    vocabs = sorted({c.vocab for c in cells})
    vocab = MASKBENCH_VOCAB if MASKBENCH_VOCAB in vocabs else vocabs[0]
    rows = []
    for engine in data.engines:
        mine = [c for c in cells if c.engine == engine and c.vocab == vocab]
        if not mine:
            continue
        ok = _ok(mine)
        fills = [v for c in ok for v in c.metrics.get("fill_ns", [])]
        mask = summarize(fills)
        ours = {
            "mask_mean": mask.get("mean"),
            "mask_p50": mask.get("p50"),
            "mask_p99": mask.get("p99"),
            "ttfm_p50": _p(_values(ok, "ttfm_ns"), 0.5),
        }
        theirs = MASKBENCH_PUBLISHED.get(engine, {})
        rows.append(
            {
                "engine": engine,
                "specs": len(mine),
                "ok": len(ok),
                **{f"ours_{k}_us": None if v is None else v / 1e3 for k, v in ours.items()},
                **{f"published_{k}_us": theirs.get(k) for k in ours},
            }
        )
    return vocab, rows


def find_maskbench(store: Store, data: RunData) -> tuple[RunData, str, list[dict[str, Any]]] | None:
    """The MaskBench comparison of this run, else of the latest run that has one."""
    found = maskbench_rows(data)
    if found:
        return data, *found
    for run in reversed(store.runs()):
        if "maskbench" in run.meta.get("options", {}).get("sets", []):
            other = load(store, run.name)
            found = maskbench_rows(other)
            if found:
                return other, *found
    return None


# --- HTML --------------------------------------------------------------------------------

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1280px;
       color: #222; padding: 0 16px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px;
     border-bottom: 1px solid #ddd; padding-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
img { max-width: 100%; border: 1px solid #eee; margin: 6px 0; }
.note { color: #555; font-size: 13px; } code { background: #f4f4f4; padding: 0 3px; }
.status-ok { color: #176d2c; } .status-failed { color: #b00020; }
"""


def _e(value: Any) -> str:
    return html_text(value)


def html_table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], left: int = 1, limit: int | None = None
) -> str:
    shown = rows if limit is None else rows[:limit]
    head = "".join(
        f'<th class="l">{_e(h)}</th>' if i < left else f"<th>{_e(h)}</th>"
        for i, h in enumerate(header)
    )
    body = []
    for row in shown:
        cells = "".join(
            f'<td class="l">{_e(v)}</td>' if i < left else f"<td>{_e(v)}</td>"
            for i, v in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    more = ""
    if limit is not None and len(rows) > limit:
        more = f'<p class="note">{len(rows) - limit} more rows in the CSV.</p>'
    return f"<table><tr>{head}</tr>{''.join(body)}</table>{more}"


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for row in rows:
            writer.writerow([csv_cell(v) for v in row])
    return path.name


def _ms(ns: float | None) -> float | None:
    return None if ns is None else round(ns / 1e6, 4)


def _us(ns: float | None) -> float | None:
    return None if ns is None else round(ns / 1e3, 3)


def write(store: Store, name: str, out: Path) -> Path:
    """Write `out/index.html` with its CSVs and PNGs; returns the HTML's path."""
    data = load(store, name)
    out.mkdir(parents=True, exist_ok=True)
    parts: list[str] = []
    meta = data.run.meta
    wall, jobs, killed = wall_and_jobs(data.run)

    # summary
    sums = summaries(data)
    summary_csv = write_csv(
        out / "summary.csv",
        [
            "engine",
            "vocab",
            "specs",
            *STATUSES,
            "compile_p50_ms",
            "compile_p99_ms",
            "ttfm_p50_ms",
            "mask_mean_us",
            "mask_p50_us",
            "mask_p90_us",
            "mask_p99_us",
            "mask_max_us",
            "mask_steps",
            "advance_p50_us",
            "memory_p50_bytes",
            "memory_kind",
            "states_p50",
            "truncated_cells",
            "refused_paths",
        ],
        (
            [
                s.engine,
                s.vocab,
                s.specs,
                *(s.counts[k] for k in STATUSES),
                _ms(s.compile_p50),
                _ms(s.compile_p99),
                _ms(s.ttfm_p50),
                _us(s.mask.get("mean")),
                _us(s.mask.get("p50")),
                _us(s.mask.get("p90")),
                _us(s.mask.get("p99")),
                _us(s.mask.get("max")),
                s.mask.get("n"),
                _us(s.advance_p50),
                s.memory,
                s.memory_kind,
                s.states_p50,
                s.truncated,
                s.refused_paths,
            ]
            for s in sums
        ),
    )
    parts.append("<h2>Per engine</h2>")
    parts.append(
        html_table(
            [*SUMMARY_HEADER, "states p50", "truncated", "refused paths"],
            [
                [
                    *_summary_row(s),
                    "-" if s.states_p50 is None else f"{s.states_p50:,.0f}",
                    s.truncated,
                    s.refused_paths,
                ]
                for s in sums
            ],
            left=2,
        )
    )
    parts.append(
        '<p class="note">ok / unsup(ported) / failed count specs; failed = error, timeout, '
        "oom or crash. Percentiles by nearest rank over ok cells; a compile under 20 ms is "
        "the median of up to 5 repeats; mask latency pooled over "
        "every timed step (one fill per step, a fresh matcher per token path). Memory: the "
        "engine's own figure for the compiled spec, or the growth of the worker's resident "
        'set ("rss"; freed pages are reused, so it can read 0). "truncated": cells whose '
        'walk stopped at half the cell timeout; "refused paths": token paths an engine\'s '
        f"mask or advance refused (the differ's business, not timed further). "
        f'<a href="{summary_csv}">{summary_csv}</a></p>'
    )

    # preparations
    preps = data.preparations
    if preps:
        prep_rows = [
            [
                p.engine,
                p.vocab,
                p.status,
                fmt_ns(p.metrics.get("prepare_ns")),
                fmt_bytes(p.metrics.get("rss_growth_bytes")),
                "-" if p.metrics.get("startup_s") is None else f"{p.metrics['startup_s']:.1f} s",
                p.message or "",
            ]
            for p in preps
        ]
        prep_csv = write_csv(
            out / "preparations.csv",
            ["engine", "vocab", "status", "prepare_ms", "rss_growth_bytes", "startup_s", "message"],
            (
                [
                    p.engine,
                    p.vocab,
                    p.status,
                    _ms(p.metrics.get("prepare_ns")),
                    p.metrics.get("rss_growth_bytes"),
                    p.metrics.get("startup_s"),
                    p.message,
                ]
                for p in preps
            ),
        )
        parts.append("<h2>Vocabulary preparation</h2>")
        parts.append(
            '<p class="note">Once per worker, never part of a cell. A worker restarted after '
            "a timeout, oom or crash prepares again, hence repeated rows. Startup: process "
            f'start to ready (imports, vocabulary load, preparation). <a href="{prep_csv}">'
            f"{prep_csv}</a></p>"
        )
        parts.append(
            html_table(
                ["engine", "vocab", "status", "prepare", "RSS growth", "startup", "message"],
                prep_rows,
                left=3,
            )
        )

    # plots
    figures = plot_cdfs(data, out) + plot_states(data, out)
    parts.append("<h2>Distributions</h2>")
    for file, caption in figures:
        parts.append(f'<p><img src="{file}" alt="{_e(caption)}"><br>')
        parts.append(f'<span class="note">{_e(caption)}</span></p>')

    # scaling
    parts.append("<h2>Compile time against vocabulary size</h2>")
    scaling_figs = plot_scaling(data, out)
    if scaling_figs:
        points = scaling_points(data)
        scaling_csv = write_csv(
            out / "scaling.csv",
            ["engine", "spec", "vocab_size", "compile_ms"],
            ([e, s, n, _ms(t)] for (e, s), pts in sorted(points.items()) for n, t in pts),
        )
        for file, caption in scaling_figs:
            parts.append(f'<p><img src="{file}" alt="{_e(caption)}"><br>')
            parts.append(
                f'<span class="note">{_e(caption)} <a href="{scaling_csv}">{scaling_csv}</a>'
                "</span></p>"
            )
    else:
        parts.append('<p class="note">This run has no scaling cells (bench --scaling).</p>')

    # speedup
    parts.append(f"<h2>{SPEEDUP_ENGINE} speedup</h2>")
    items = speedups(data)
    if items:
        speed_csv = write_csv(
            out / "speedup.csv",
            [
                "spec",
                "vocab",
                "baseline",
                f"{SPEEDUP_ENGINE}_compile_ms",
                "baseline_compile_ms",
                "baseline_status",
                "compile_speedup",
                "mask_p50_ratio",
            ],
            (
                [
                    s.spec_id,
                    s.vocab,
                    s.baseline,
                    _ms(s.ours_ns),
                    _ms(s.theirs_ns),
                    s.theirs_status,
                    None if s.ratio is None else round(s.ratio, 3),
                    None if s.mask_ratio is None else round(s.mask_ratio, 3),
                ]
                for s in items
            ),
        )
        for file, caption in plot_speedups(data, items, out):
            parts.append(f'<p><img src="{file}" alt="{_e(caption)}"><br>')
            parts.append(f'<span class="note">{_e(caption)}</span></p>')
        gm_rows = []
        for vocab in data.vocabs:
            for baseline in SPEEDUP_BASELINES:
                mine = [s for s in items if s.vocab == vocab and s.baseline == baseline]
                if not mine:
                    continue
                compile_gm = geometric_mean(s.ratio for s in mine if s.ratio is not None)
                mask_gm = geometric_mean(s.mask_ratio for s in mine if s.mask_ratio is not None)
                unfinished = [s for s in mine if s.ratio is None]
                gm_rows.append(
                    [
                        vocab,
                        baseline,
                        sum(1 for s in mine if s.ratio is not None),
                        "-" if compile_gm is None else f"{compile_gm:.2f}x",
                        "-" if mask_gm is None else f"{mask_gm:.2f}x",
                        ", ".join(f"{s.spec_id} ({s.theirs_status})" for s in unfinished) or "-",
                    ]
                )
        parts.append(
            html_table(
                [
                    "vocab",
                    "against",
                    "specs",
                    "compile speedup (geomean)",
                    "mask p50 speedup (geomean)",
                    f"{SPEEDUP_ENGINE} ok, baseline failed",
                ],
                gm_rows,
                left=2,
            )
        )
        parts.append(
            f'<p class="note">Speedup = baseline time / {SPEEDUP_ENGINE} time, per spec '
            "both engines handled; specs where the baseline failed are listed, not averaged. "
            f'Per-spec values: <a href="{speed_csv}">{speed_csv}</a></p>'
        )
    else:
        parts.append(
            f'<p class="note">Needs ok cells of {SPEEDUP_ENGINE} and of '
            f"{' or '.join(SPEEDUP_BASELINES)} in this run.</p>"
        )

    # MaskBench
    parts.append("<h2>MaskBench comparison</h2>")
    found = find_maskbench(store, data)
    if found:
        source, vocab, rows = found
        keys = ("mask_mean", "mask_p50", "mask_p99", "ttfm_p50")
        mb_csv = write_csv(
            out / "maskbench.csv",
            [
                "engine",
                "specs",
                "ok",
                *(f"{w}_{k}_us" for k in keys for w in ("ours", "published")),
            ],
            (
                [
                    r["engine"],
                    r["specs"],
                    r["ok"],
                    *(r[f"{w}_{k}_us"] for k in keys for w in ("ours", "published")),
                ]
                for r in rows
            ),
        )

        def us(v: float | None) -> str:
            return "-" if v is None else f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"

        table_rows = [
            [r["engine"], f"{r['ok']}/{r['specs']}"]
            + [us(r[f"{w}_{k}_us"]) for k in keys for w in ("ours", "published")]
            for r in rows
        ]
        header = ["engine", "ok/specs"] + [
            f"{label} {w}"
            for label in ("mask mean", "mask p50", "mask p99", "TTFM p50")
            for w in ("ours", "MaskBench")
        ]
        origin = "this run" if source is data else f"run {source.run.name}"
        parts.append(
            f'<p class="note">From {origin}, vocabulary {vocab}, in µs. MaskBench\'s figures: '
            "Llama-3.1 tokenizer, single thread, 2025-03-27 run, every token of the valid "
            "instances; ours: one fill per step along at most the run's --paths valid "
            "instances per schema and --max-steps steps per path, on this machine. TTFM = "
            "compile + first mask, as MaskBench's \"compile\". Each engine's figures pool "
            "the schemas it handled (ok/specs), so an engine failing the hard ones looks "
            f'faster there. <a href="{mb_csv}">{mb_csv}</a></p>'
        )
        parts.append(html_table(header, table_rows, left=2))
    else:
        parts.append(
            '<p class="note">No MaskBench run recorded yet: <code>tokensieve bench --corpus '
            "maskbench --limit-specs 200</code> measures one.</p>"
        )

    # failures
    cells_csv = write_csv(
        out / "cells.csv",
        [
            "engine",
            "spec",
            "vocab",
            "study",
            "status",
            "compile_ms",
            "ttfm_ms",
            "mask_p50_us",
            "mask_p90_us",
            "mask_p99_us",
            "mask_max_us",
            "advance_p50_us",
            "steps",
            "paths",
            "refused_paths",
            "truncated",
            "engine_memory_bytes",
            "rss_growth_bytes",
            "peak_rss_bytes",
            "num_states",
            "message",
        ],
        (
            [
                c.engine,
                c.spec_id,
                c.vocab,
                c.study,
                c.status,
                _ms(c.metrics.get("compile_ns")),
                _ms(c.metrics.get("ttfm_ns")),
                _us(c.metrics.get("fill", {}).get("p50")),
                _us(c.metrics.get("fill", {}).get("p90")),
                _us(c.metrics.get("fill", {}).get("p99")),
                _us(c.metrics.get("fill", {}).get("max")),
                _us(c.metrics.get("advance", {}).get("p50")),
                c.metrics.get("fill", {}).get("n"),
                c.metrics.get("paths"),
                c.metrics.get("refused_paths"),
                c.metrics.get("truncated"),
                c.metrics.get("engine_memory_bytes"),
                c.metrics.get("rss_growth_bytes"),
                c.metrics.get("peak_rss_bytes"),
                c.metrics.get("num_states"),
                c.message,
            ]
            for c in data.cells
        ),
    )
    parts.extend(jumpforward_section(out))
    parts.extend(diff_section(out))
    bad = [c for c in data.cells if c.status in FAILED]
    parts.append("<h2>Failed cells</h2>")
    parts.append(
        f'<p class="note">{len(bad)} cells failed (error, timeout, oom, crash). Every cell, '
        f'with its metrics and message: <a href="{cells_csv}">{cells_csv}</a></p>'
    )
    if bad:
        parts.append(
            html_table(
                ["engine", "vocab", "spec", "status", "message"],
                [
                    [c.engine, c.vocab, c.spec_id, c.status, (c.message or "")[:300]]
                    for c in sorted(bad, key=lambda c: (c.engine, c.vocab, c.spec_id))
                ],
                left=5,
                limit=200,
            )
        )

    # header last: it needs the totals
    options = meta.get("options", {})
    machine = meta.get("machine", {})
    versions = meta.get("versions", {})
    sessions = meta.get("sessions", [])
    session_rows = [
        [
            _when(s.get("started")),
            s.get("status"),
            s.get("jobs"),
            s.get("measured"),
            "-" if s.get("wall_s") is None else fmt_seconds(float(s["wall_s"])),
        ]
        for s in sessions
    ]
    head = [
        f"<h1>tokensieve run {_e(name)}</h1>",
        f"<p>{len(data.cells)} cells ({len(data.main)} main, {len(data.scaling)} "
        f"vocabulary-scaling) — engines {_e(', '.join(data.engines))}; vocabularies "
        f"{_e(', '.join(data.vocabs))}; corpus {_e(', '.join(options.get('sets', [])))}"
        f"{' (at most ' + str(options['limit_specs']) + ' specs per set)' if options.get('limit_specs') else ''}"  # noqa: E501
        f". Wall time {fmt_seconds(wall)}; cells measured "
        f"{'/'.join(map(str, jobs)) or '1'} at a time"
        f"{'; a session was killed' if killed else ''}.</p>",
        html_table(
            ["", ""],
            [
                ["commit", meta.get("commit") or "unknown"],
                [
                    "machine",
                    f"{machine.get('cpu')}, {machine.get('cpus')} CPUs, "
                    f"{fmt_bytes(machine.get('memory_bytes'))}, {machine.get('platform')}",
                ],
                [
                    "load average at start",
                    ", ".join(f"{x:.2f}" for x in machine.get("load_average", [])),
                ],
                ["python", machine.get("python")],
                ["engine versions", ", ".join(f"{k} {v}" for k, v in versions.items())],
                ["options", ", ".join(f"{k}={_option(k, v)}" for k, v in options.items())],
            ],
            left=2,
        ),
        "<h2>Sessions</h2>",
        html_table(["started", "status", "jobs", "cells", "wall"], session_rows, left=2),
    ]
    if killed:
        head.append(
            '<p class="note">A session still "running" was killed (its figures are those of '
            "its last 10 s checkpoint); --resume continues a run where it stopped.</p>"
        )
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    document = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>tokensieve {_e(name)}</title><style>{CSS}</style></head><body>"
        + "\n".join(head + parts)
        + f'<p class="note">Generated {generated} by tokensieve report.</p></body></html>'
    )
    index = out / "index.html"
    index.write_text(document, encoding="utf-8")
    return index


def jumpforward_section(out: Path) -> list[str]:
    """The summary of `tokensieve jumpforward --run RUN`, when it wrote into this run."""
    source = out / "jumpforward.json"
    if not source.exists():
        return [
            "<h2>Jump-forward</h2>",
            '<p class="note">Not measured for this run: '
            "<code>tokensieve jumpforward --run RUN</code> adds it.</p>",
        ]
    data = json.loads(source.read_text())
    parts = ["<h2>Jump-forward</h2>"]
    for title, rows in (
        ("Forced tokens and decode steps saved (%)", data.get("summary", [])),
        (
            "MaskBench, llama3: ours beside the published fast-forward share (%)",
            data.get("maskbench", []),
        ),
    ):
        if not rows:
            continue
        head = "".join(f"<th>{_e(k)}</th>" for k in rows[0])
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{v:.1f}</td>" if isinstance(v, float) else f"<td>{_e(v)}</td>"
                for v in r.values()
            )
            + "</tr>"
            for r in rows
        )
        parts.append(f"<h3>{_e(title)}</h3><table><tr>{head}</tr>{body}</table>")
    parts.append(
        f'<p class="note">{data.get("states_compared", 0)} states compared across engines, '
        f"{len(data.get('forced_text_disagreements', []))} with differing forced text; "
        'details: <a href="jumpforward.html">jumpforward.html</a></p>'
    )
    return parts


def diff_section(out: Path) -> list[str]:
    """The findings of `tokensieve diff --run RUN`, when it wrote into this run."""
    source = out / "diff.json"
    if not source.exists():
        return [
            "<h2>Differential test</h2>",
            '<p class="note">Not run for this run: '
            "<code>tokensieve diff --run RUN</code> adds it.</p>",
        ]
    data = json.loads(source.read_text())
    parts = ["<h2>Differential test</h2>"]
    findings = data.get("findings", [])
    rows = "".join(
        "<tr>"
        f"<td>{_e(f['engine'])} {_e(f['version'])}</td><td>{_e(f['signature'])}</td>"
        f"<td>{f['occurrences']}</td><td>{_e(', '.join(f['specs'][:3]))}</td>"
        + (
            f'<td><a href="findings/{_e(f["repro"])}">{_e(f["repro"])}</a>'
            f" ({'reproduces' if f['reproduces'] else 'does not reproduce'})</td>"
            if f.get("repro")
            else "<td>not minimized</td>"
        )
        + f"<td>{_e(f['explanation'])}</td></tr>"
        for f in findings
    )
    parts.append(
        "<table><tr><th>engine</th><th>signature</th><th>occurrences</th><th>specs</th>"
        f"<th>repro</th><th>explanation</th></tr>{rows}</table>"
    )
    parts.append(
        f'<p class="note">{len(findings)} findings; per-engine state counts, policies and '
        'cells not compared: <a href="diff.html">diff.html</a>, data: '
        '<a href="diff.json">diff.json</a></p>'
    )
    return parts


def _option(key: str, value: Any) -> str:
    if key == "memory_limit" and isinstance(value, int):
        return fmt_bytes(value)
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    return datetime.fromtimestamp(float(timestamp), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
