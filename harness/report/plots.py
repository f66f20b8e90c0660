"""The report's PNG plots (matplotlib, Agg backend: no display needed).

Each `plot_*` function draws from a run's data into the run directory `out` and returns
[(file name, caption)], empty when the run has nothing to draw; every engine keeps one
colour (tab10, in run order) across plots. Captions are plain text: the page escapes them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.figures import geometric_mean
from harness.report.data import RunData, known, ok
from harness.report.studies import (
    SPEEDUP_BASELINES,
    SPEEDUP_ENGINE,
    Speedup,
    reference_states,
    scaling_base,
    scaling_points,
    state_source,
)
from harness.store import Cell

Figure = tuple[str, str]  # (file name in the run directory, caption)
# (engine, vocab) -> (sorted x values, the count a curve's share is out of), or None
Curve = Callable[[str, str], tuple[list[float], int] | None]


# A plot wider than this (two panels side by side) takes a row of its own on the page.
WIDE_PX = 1100


def png_width(path: Path) -> int:
    """The width in pixels of the PNG `path` (from its IHDR chunk); 0 when it is not a
    PNG."""
    with path.open("rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return 0
    return int.from_bytes(head[16:20], "big")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _colors(engines: Sequence[str]) -> dict[str, Any]:
    cmap = _pyplot().get_cmap("tab10")
    return {e: cmap(i % 10) for i, e in enumerate(engines)}


def _save(fig: Any, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path.name


def _grid(n: int, width: float = 6.0, height: float = 4.2) -> tuple[Any, list[Any]]:
    """A figure of `n` panels, two per row."""
    cols = min(n, 2)
    rows = math.ceil(n / cols)
    fig, axes = _pyplot().subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _cdf(data: RunData, path: Path, curve: Curve, labels: tuple[str, str, str]) -> str:
    """One CDF panel per vocabulary, one step curve per engine; `labels` are the x
    label, the y label and the title (before " — vocab")."""
    xlabel, ylabel, title = labels
    colors = _colors(data.engines)
    fig, axes = _grid(len(data.vocabs))
    for ax, vocab in zip(axes, data.vocabs, strict=True):
        for engine in data.engines:
            found = curve(engine, vocab)
            if found is None:
                continue
            values, total = found
            ys = [(i + 1) / total for i in range(len(values))]
            ax.step(values, ys, where="post", color=colors[engine], label=engine)
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title} — {vocab}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    return _save(fig, path)


def plot_cdfs(data: RunData, out: Path) -> list[Figure]:
    """Compile-time and mask-latency CDFs, one panel per vocabulary."""
    if not data.vocabs:
        return []

    def cells(engine: str, vocab: str) -> list[Cell]:
        return [c for c in data.main if c.engine == engine and c.vocab == vocab]

    def compiles(engine: str, vocab: str) -> tuple[list[float], int] | None:
        mine = cells(engine, vocab)  # the share is of every spec, compiled or not
        values = sorted(v / 1e6 for v in known(c.metrics.compile_ns for c in ok(mine)))
        return (values, len(mine)) if values else None

    def masks(engine: str, vocab: str) -> tuple[list[float], int] | None:
        values = sorted(v / 1e3 for c in ok(cells(engine, vocab)) for v in c.metrics.fill_ns)
        return (values, len(values)) if values else None

    compile_labels = ("compile time (ms, log)", "share of specs compiled", "compile time CDF")
    mask_labels = ("mask fill latency (µs, log)", "share of steps", "mask latency CDF")
    return [
        (
            _cdf(data, out / "compile_cdf.png", compiles, compile_labels),
            "Compile time CDF. A curve ends below 1 by the share of specs the engine did not "
            "compile (unsupported, error, timeout, oom, crash).",
        ),
        (
            _cdf(data, out / "mask_cdf.png", masks, mask_labels),
            "Mask latency CDF over every timed step of every ok cell (one fill per step).",
        ),
    ]


def _state_points(
    data: RunData, engine: str, states: dict[tuple[str, str], float], what: str
) -> tuple[list[float], list[float], list[float], list[float]]:
    """(x, y) of the engine's ok cells against states: filled points, then hollow ones
    (memory measured as resident-set growth; 0 growth is not drawn)."""
    xs: list[float] = []
    ys: list[float] = []
    hollow_x: list[float] = []
    hollow_y: list[float] = []
    for c in ok(c for c in data.main if c.engine == engine):
        x = states.get((c.spec_id, c.vocab))
        if x is None:
            continue
        if what == "compile":
            if c.metrics.compile_ns is not None:
                xs.append(x)
                ys.append(c.metrics.compile_ns / 1e6)
            continue
        memory, kind = c.metrics.memory
        if memory is None or memory <= 0:
            continue
        (xs if kind == "engine" else hollow_x).append(x)
        (ys if kind == "engine" else hollow_y).append(memory)
    return xs, ys, hollow_x, hollow_y


def _states_figure(
    data: RunData, states: dict[tuple[str, str], float], what: str, label: str, path: Path
) -> Figure:
    """Compile time or memory (`what`) of every ok cell against its spec's states."""
    colors = _colors(data.engines)
    source = state_source(data)
    fig, ax = _pyplot().subplots(figsize=(9, 5.5))
    for engine in data.engines:
        xs, ys, hollow_x, hollow_y = _state_points(data, engine, states, what)
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
    return _save(fig, path), caption


def plot_states(data: RunData, out: Path) -> list[Figure]:
    """Compile time and memory against the number of states (`reference_states`)."""
    states = reference_states(data)
    if not states:
        return []
    return [
        _states_figure(data, states, "compile", "compile time (ms, log)",
                       out / "compile_vs_states.png"),
        _states_figure(data, states, "memory", "memory (bytes, log)",
                       out / "memory_vs_states.png"),
    ]  # fmt: skip


def plot_scaling(data: RunData, out: Path) -> list[Figure]:
    """Compile time against vocabulary size, one panel per spec of the scaling study."""
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
    caption = (
        f"Compile time against vocabulary size: the first N ids of {scaling_base(data)} "
        "(plus any single-byte tokens they lack), and the full vocabulary. A missing point "
        "is a cell that did not compile."
    )
    return [(_save(fig, out / "vocab_scaling.png"), caption)]


def _speedup_panel(ax: Any, done: list[Speedup], vocab: str, specs: list[str]) -> None:
    """One vocabulary's bars: per spec, one bar per baseline, growing from 1x."""
    cmap = _pyplot().get_cmap("tab10")
    colors = {b: cmap(i + 2) for i, b in enumerate(SPEEDUP_BASELINES)}
    bar = 0.8 / len(SPEEDUP_BASELINES)
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


def plot_speedups(data: RunData, items: list[Speedup], out: Path) -> list[Figure]:
    """Per-spec compile speedups where the baseline finished, one panel per vocabulary."""
    done = [s for s in items if s.ratio is not None]
    if not done:
        return []
    vocabs = [v for v in data.vocabs if any(s.vocab == v for s in done)]
    specs = sorted({s.spec_id for s in done})
    height = max(3.5, 0.16 * len(specs) * len(SPEEDUP_BASELINES) + 1.8)
    label_width = 0.065 * max(len(s) for s in specs)
    fig, axes = _pyplot().subplots(
        1,
        len(vocabs),
        figsize=(5.0 * len(vocabs) + label_width, height),
        squeeze=False,
        sharey=True,
    )
    for ax, vocab in zip(axes[0], vocabs, strict=True):
        _speedup_panel(ax, done, vocab, specs)
    axes[0][0].invert_yaxis()  # once: the panels share their y axis
    caption = (
        f"Compile time of the baseline divided by {SPEEDUP_ENGINE}'s, per spec both "
        "compiled (log scale); geometric means in the legend."
    )
    return [(_save(fig, out / "speedup.png"), caption)]
