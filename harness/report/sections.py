"""The sections of a bench run's page about the run itself: its header, sessions, hosts,
the per-engine table, vocabulary preparation, distributions, vocabulary scaling, the
failed cells and the run's details.

Each section is one function returning its HTML parts (each a block the page joins with
newlines), writing the CSVs and plots it links into the run directory `out`. Data reaches
the page only through `harness.report.html` (escaped); literal prose is written here as
markup.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.figures import fmt_bytes, fmt_ns, fmt_seconds
from harness.report import csvs
from harness.report.columns import Column, html_table, write_csv
from harness.report.data import RunData, SessionTotals, Summary, summaries
from harness.report.html import Html, escape, figure, figures, link, table
from harness.report.plots import WIDE_PX, plot_cdfs, plot_scaling, plot_states, png_width
from harness.report.studies import scaling_points
from harness.report.text import ENGINE, session_status
from harness.results.status import FAILED
from harness.store import Cell, Preparation, Session


def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    return datetime.fromtimestamp(float(timestamp), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _option(key: str, value: Any) -> str:
    if key == "memory_limit" and isinstance(value, int):
        return fmt_bytes(value)
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _killed(killed: int) -> str:
    if not killed:
        return ""
    return "; a session was killed" if killed == 1 else f"; {killed} sessions were killed"


def header(data: RunData) -> list[str]:
    """The title and what the run measured: cells, engines, vocabularies, corpus, wall
    time and parallelism (where and with what: `details`)."""
    options = data.options
    totals = SessionTotals.of(data.sessions)
    limit = options.get("limit_specs")
    at_most = f" (at most {escape(limit)} specs per set)" if limit else ""
    summary = (
        f"<p>{len(data.cells)} cells ({len(data.main)} main, {len(data.scaling)} "
        f"vocabulary-scaling, {len(data.batch)} batch) — engines "
        f"{escape(', '.join(data.engines))}; vocabularies "
        f"{escape(', '.join(data.vocabs))}; corpus {escape(', '.join(options.get('sets', [])))}"
        f"{at_most}. Wall time {fmt_seconds(totals.wall_s)}; cells measured "
        f"{totals.jobs_text} at a time{_killed(totals.killed)}.</p>"
    )
    return [f"<h1>tokensieve run {escape(data.run.name)}</h1>", summary]


def details(data: RunData) -> list[str]:
    """Where and with what the run measured: commit, machine, engine versions, options."""
    meta, options = data.run.meta, data.options
    machine, versions = meta.get("machine", {}), meta.get("versions", {})
    rows = [
        ["commit", meta.get("commit") or "unknown"],
        [
            "machine",
            f"{machine.get('cpu')}, {machine.get('cpus')} CPUs, "
            f"{fmt_bytes(machine.get('memory_bytes'))}, {machine.get('platform')}",
        ],
        ["load average at start", ", ".join(f"{x:.2f}" for x in machine.get("load_average", []))],
        ["python", machine.get("python")],
        ["engine versions", ", ".join(f"{k} {v}" for k, v in versions.items())],
        ["options", ", ".join(f"{k}={_option(k, v)}" for k, v in options.items())],
    ]
    return ["<h2>Run details</h2>", table(["", ""], rows, 2)]


SESSIONS: list[Column[Session]] = [
    Column("started", lambda s: _when(s.started)),
    Column("status", session_status),
    Column("jobs", lambda s: s.jobs),
    Column("cells", lambda s: s.measured),
    Column("wall", lambda s: fmt_seconds(s.wall_s)),
    Column("reason", lambda s: s.reason or ""),
]


def sessions(data: RunData) -> list[str]:
    """Each session of the run: when, how it ended and why, how many cells at once and
    how many it measured, its wall time."""
    if not data.sessions:
        return [
            "<h2>Sessions</h2>",
            '<p class="note">No session recorded for this run (a run measured before '
            "sessions had their own table has none).</p>",
        ]
    parts = ["<h2>Sessions</h2>", html_table(SESSIONS, data.sessions, left=2)]
    if any(s.killed for s in data.sessions):
        parts.append(
            '<p class="note">A "killed" session\'s controller died while it ran: its wall '
            "time runs to its last checkpoint, and the cells it finished are kept; --resume "
            "continues a run where it stopped.</p>"
        )
    return parts


ENGINE_PAGE: list[Column[Summary]] = [
    *ENGINE,
    Column("states p50", lambda s: "-" if s.states_p50 is None else f"{s.states_p50:,.0f}"),
    Column("truncated", lambda s: s.truncated),
    Column("refused paths", lambda s: s.refused_paths),
]


def hosts(data: RunData) -> list[str]:
    """Where the cells ran, with each host's calibration (a fixed bitset copy and a fixed
    trie walk, best of five, medians over its cells); when a run spans several hosts the
    page says its absolute times pool them (ratios within a host stay sound)."""
    by_host: dict[str, list[Cell]] = {}
    for c in data.cells:
        if c.metrics.host:
            by_host.setdefault(c.metrics.host, []).append(c)
    if not by_host:
        return []
    rows = [
        [
            host,
            len(cells),
            fmt_ns(_median(c.metrics.calibration.get("bitset_copy_ns") for c in cells)),
            fmt_ns(_median(c.metrics.calibration.get("trie_walk_ns") for c in cells)),
        ]
        for host, cells in sorted(by_host.items())
    ]
    parts = ["<h2>Hosts</h2>", table(["host", "cells", "bitset copy", "trie walk"], rows, 1)]
    if len(by_host) > 1:
        parts.append(
            '<p class="note">This run spans several hosts: the absolute times below pool '
            "cells measured on different machines. Compare a host's calibration before "
            "comparing its times; ratios between engines on one host are unaffected.</p>"
        )
    return parts


def _median(values: Any) -> float | None:
    found = sorted(v for v in values if v is not None)
    return found[len(found) // 2] if found else None


def per_engine(data: RunData, out: Path) -> list[str]:
    """The per-(engine, vocabulary) table of the console summary, with more columns;
    writes summary.csv."""
    sums = summaries(data)
    summary_csv = write_csv(out / "summary.csv", csvs.SUMMARY, sums)
    return [
        "<h2>Per engine</h2>",
        html_table(ENGINE_PAGE, sums, left=2),
        '<p class="note">ok / unsup(ported) / failed count specs; failed = error, timeout, '
        "oom or crash. Percentiles by nearest rank over ok cells; a compile under 20 ms is "
        "the median of up to 5 repeats; mask latency pooled over "
        "every timed step (one fill per step, a fresh matcher per token path). Memory: the "
        "engine's own figure for the compiled spec, or the growth of the worker's resident "
        'set ("rss"; freed pages are reused, so it can read 0). "truncated": cells whose '
        'walk stopped at half the cell timeout; "refused paths": token paths an engine\'s '
        "mask or advance refused (the differ's business, not timed further). "
        f"{link(summary_csv)}</p>",
    ]


def _startup(p: Preparation) -> str:
    return "-" if p.metrics.startup_s is None else f"{p.metrics.startup_s:.1f} s"


PREPARATIONS: list[Column[Preparation]] = [
    Column("engine", lambda p: p.engine),
    Column("vocab", lambda p: p.vocab),
    Column("status", lambda p: p.status),
    Column("prepare", lambda p: fmt_ns(p.metrics.prepare_ns)),
    Column("RSS growth", lambda p: fmt_bytes(p.metrics.rss_growth_bytes)),
    Column("startup", _startup),
    Column("message", lambda p: p.message or ""),
]


def preparations(data: RunData, out: Path) -> list[str]:
    """Each worker's vocabulary preparation; writes preparations.csv. Nothing when the
    run has none."""
    if not data.preparations:
        return []
    prep_csv = write_csv(out / "preparations.csv", csvs.PREPARATIONS, data.preparations)
    return [
        "<h2>Vocabulary preparation</h2>",
        '<p class="note">Once per worker, never part of a cell. A worker restarted after '
        "a timeout, oom or crash prepares again, hence repeated rows. Startup: process "
        f"start to ready (imports, vocabulary load, preparation). {link(prep_csv)}</p>",
        html_table(PREPARATIONS, data.preparations, left=3),
    ]


def distributions(data: RunData, out: Path) -> list[str]:
    """Compile and mask CDFs, compile time and memory against states (PNGs)."""
    drawn = plot_cdfs(data, out) + plot_states(data, out)
    blocks = [
        figure(file, caption, wide=png_width(out / file) > WIDE_PX) for file, caption in drawn
    ]
    return ["<h2>Distributions</h2>", figures(blocks)]


def scaling(data: RunData, out: Path) -> list[str]:
    """Compile time against vocabulary size; writes scaling.csv when the run has a
    scaling study."""
    parts = ["<h2>Compile time against vocabulary size</h2>"]
    drawn = plot_scaling(data, out)
    if not drawn:
        parts.append('<p class="note">This run has no scaling cells (bench --scaling).</p>')
        return parts
    points = [
        csvs.ScalingPoint(engine, spec, size, compile_ns)
        for (engine, spec), pts in sorted(scaling_points(data).items())
        for size, compile_ns in pts
    ]
    scaling_csv = write_csv(out / "scaling.csv", csvs.SCALING, points)
    parts.extend(figure(file, caption, link(scaling_csv)) for file, caption in drawn)
    return parts


FAILED_CELLS: list[Column[Cell]] = [
    Column("engine", lambda c: c.engine),
    Column("vocab", lambda c: c.vocab),
    Column("spec", lambda c: c.spec_id),
    Column("status", lambda c: c.status),
    Column("message", lambda c: (c.message or "")[:300]),
]


def cells_csv(data: RunData, out: Path) -> str:
    """Every cell with its metrics and message, as cells.csv; returns the file name."""
    return write_csv(out / "cells.csv", csvs.CELLS, data.cells)


def failed_cells(data: RunData, out: Path) -> list[str]:
    """The cells that failed (error, timeout, oom, crash), at most 200; links cells.csv
    (`cells_csv`)."""
    name = cells_csv(data, out)
    bad = sorted(
        (c for c in data.cells if c.status in FAILED), key=lambda c: (c.engine, c.vocab, c.spec_id)
    )
    parts = [
        "<h2>Failed cells</h2>",
        f'<p class="note">{len(bad)} cells failed (error, timeout, oom, crash). Every cell, '
        f"with its metrics and message: {link(name)}</p>",
    ]
    if bad:
        parts.append(html_table(FAILED_CELLS, bad, left=5, limit=200))
    return parts


def generated(tool: str) -> Html:
    """The closing note: when the page was written, and by what."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return Html(f'<p class="note">Generated {stamp} by {escape(tool)}.</p>')
