"""The console side of a report: `text_table` (plain-text tables, also `compare`'s) and
`summary_text`, the run summary `tokensieve bench` and `tokensieve report` print: the
run's cells and sessions on one line, then one row per engine and vocabulary.

`ENGINE` is the per-engine column table both the console and the HTML page show (the
page adds a few columns), so the two cannot disagree on a figure.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.figures import fmt_bytes, fmt_ns, fmt_seconds
from harness.report.columns import Column, headers, row
from harness.report.data import RunData, SessionTotals, Summary, load, summaries
from harness.results.status import FAILED, STATUSES
from harness.store import Session, Store

NOTE = (
    "compile/TTFM/mask percentiles by nearest rank over ok cells; mask latency pooled "
    "over every timed step; memory: the engine's own figure, or worker RSS growth (rss)"
)


def _failed(s: Summary) -> str:
    which = ", ".join(f"{s.counts[k]} {k}" for k in STATUSES if k in FAILED and s.counts[k])
    return f"{s.failed}" + (f" ({which})" if which else "")


def _memory(s: Summary) -> str:
    if s.memory is None:
        return "-"
    return fmt_bytes(s.memory) + (" rss" if s.memory_kind == "rss" else "")


ENGINE: list[Column[Summary]] = [
    Column("engine", lambda s: s.engine),
    Column("vocab", lambda s: s.vocab),
    Column("ok", lambda s: str(s.counts["ok"])),
    Column("unsup", lambda s: str(s.counts["unsupported"])),
    Column("failed", _failed),
    Column("compile p50", lambda s: fmt_ns(s.compile_p50)),
    Column("compile p99", lambda s: fmt_ns(s.compile_p99)),
    Column("TTFM p50", lambda s: fmt_ns(s.ttfm_p50)),
    Column("mask p50", lambda s: fmt_ns(s.mask.get("p50"))),
    Column("mask p99", lambda s: fmt_ns(s.mask.get("p99"))),
    Column("mask max", lambda s: fmt_ns(s.mask.get("max"))),
    Column("memory p50", _memory),
]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 2) -> str:
    """Plain-text table: the first `left` columns left-aligned, the others right."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for cells in rows:
        shown = [
            str(v).ljust(w) if i < left else str(v).rjust(w)
            for i, (v, w) in enumerate(zip(cells, widths, strict=True))
        ]
        lines.append("  ".join(shown).rstrip())
    return "\n".join(lines)


def killed_text(killed: int) -> str:
    """How many sessions were killed, for the run line: " (one killed)", " (2 killed)"
    or nothing."""
    if not killed:
        return ""
    return " (one killed)" if killed == 1 else f" ({killed} killed)"


def session_status(session: Session) -> str:
    """How a session stands: its stored status, "killed" for one whose controller is
    gone while it was still running."""
    return "killed" if session.killed else session.status


def run_line(data: RunData) -> str:
    """The summary's first line: cells by study, wall time, sessions, parallelism."""
    totals = SessionTotals.of(data.sessions)
    return (
        f"run {data.run.name}: {len(data.cells)} cells ({len(data.main)} main, "
        f"{len(data.scaling)} scaling, {len(data.batch)} batch), "
        f"wall {fmt_seconds(totals.wall_s)} over "
        f"{totals.count} session(s){killed_text(totals.killed)}, {totals.jobs_text} "
        "cell(s) at once"
    )


def unfinished_sessions(data: RunData) -> list[str]:
    """One line per session that did not complete: `session 2: failed: disk full ...`."""
    out = []
    for s in data.sessions:
        if s.status == "complete":
            continue
        reason = f": {s.reason}" if s.reason else ""
        out.append(f"session {s.number}: {session_status(s)}{reason}")
    return out


def summary_text(store: Store, name: str) -> str:
    """The run summary printed after `bench` and by `report` (see the module)."""
    data = load(store, name)
    rows = [row(ENGINE, s) for s in summaries(data)]
    return "\n".join(
        [
            run_line(data),
            *unfinished_sessions(data),
            text_table(headers(ENGINE), rows) if rows else "(no cells)",
            NOTE,
        ]
    )
