"""The batch section of a bench run's page: decoding steps for whole batches
(`harness.bench.batch`), one row per (engine, vocabulary, threads, batch size) with the
step's p50, p99 and max and the memory per sequence, as `batch.csv`; and per (engine,
vocabulary, threads) the largest batch whose step p99 fits the run's step budget
(`--step-budget-ms`), which the section's verdict sentence reads ("at 10 ms per step,
tokensdfa serves 256 sequences, llguidance 64").

The rows and the sentence come from `harness.bench.batch_summary`.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from harness.bench.batch_summary import BatchRow, rows, verdict
from harness.report.columns import Column, html_table, ms, write_csv
from harness.report.data import RunData
from harness.report.html import link

ROWS: list[Column[BatchRow]] = [
    Column("engine", lambda r: r.engine),
    Column("vocab", lambda r: r.vocab),
    Column("threads", lambda r: r.threads),
    Column("batch", lambda r: r.size),
    Column("status", lambda r: r.status),
    Column("step p50 ms", lambda r: _round(ms(r.p50_ns))),
    Column("step p99 ms", lambda r: _round(ms(r.p99_ns))),
    Column("step max ms", lambda r: _round(ms(r.max_ns))),
    Column("steps", lambda r: r.steps),
    Column("bytes per sequence", lambda r: r.sequence_bytes),
    Column("specs mixed", lambda r: r.specs),
    Column("tokens refused", lambda r: r.refused),
]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def section(data: RunData, out: Path) -> list[str]:
    """The batch section (empty when the run has no batch cells); writes batch.csv."""
    found = rows(data.batch)
    if not found:
        return []
    budget = float(data.options.get("step_budget_ms", 10.0))
    name = write_csv(out / "batch.csv", ROWS, found)
    return [
        "<h2>Batches: one decoding step for many sequences</h2>",
        f"<p><b>{escape(verdict(found, budget))}</b></p>",
        '<p class="note">Each step: the masks of every sequence of the batch, through the '
        "engine's batch API on the given threads where it has one (else the loop a server "
        "runs), then one token each; the sequences mix the run's specs, each on its own "
        "token path, restarted when it ends. Batch cells ran one at a time after every "
        f"other cell. Bytes per sequence: the worker's resident-set growth over making the "
        f"matchers and the first step, per sequence. {link(name)}</p>",
        html_table(ROWS, found, left=4),
    ]
