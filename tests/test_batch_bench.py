"""`tokensieve bench --batch SIZES --threads COUNTS`: batch cells (`harness.bench.batch`)
planned per (engine, size, threads, vocabulary), measured in workers one at a time after
the other cells, stored with the run, and reported as a table and a verdict sentence
(`harness.report.batch_section`)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from harness import cli, report
from harness.bench.batch import batch_id, batch_shape
from harness.bench.batch_summary import BatchRow, served, verdict
from harness.bench.controller import Runner
from harness.bench.options import Options
from harness.store import Store

pytest.importorskip("tokensdfa")


def test_a_batch_cell_id_names_its_shape() -> None:
    assert batch_shape(batch_id(64, 2)) == (64, 2)
    with pytest.raises(ValueError):
        batch_shape("outlines-bench/date")


def _row(engine: str, threads: int, size: int, p99_ms: float, status: str = "ok") -> BatchRow:
    return BatchRow(
        engine, "llama3", threads, size, status, None, p99_ms * 1e6, None, 50, None, 4, 0
    )


def test_the_verdict_names_the_largest_batch_within_the_budget() -> None:
    found = [
        _row("a", 1, 16, 2.0),
        _row("a", 1, 64, 12.0),
        _row("a", 2, 64, 9.0),
        _row("b", 1, 16, 11.0),
        _row("c", 1, 16, 1.0, status="timeout"),
    ]
    assert served(found, 10e6) == {
        ("a", "llama3", 1): 16,
        ("a", "llama3", 2): 64,
        ("b", "llama3", 1): 0,
        ("c", "llama3", 1): 0,
    }
    said = verdict(found, 10.0)
    assert said.startswith("On llama3, at 10 ms per step (p99): a serves 64 sequences (2 threads)")
    assert "b none of the sizes measured" in said and "c none" in said


def test_a_bench_with_batches_stores_and_reports_them(tmp_path: Path) -> None:
    store = Store(tmp_path / "results.sqlite")
    options = Options(
        engines=("tokensdfa", "naive"),
        vocabs=("synthetic-1000-0",),
        sets=("outlines-bench",),
        limit_specs=3,
        batch=(2, 8),
        threads=(1, 2),
        batch_steps=5,
    )
    Runner(store, "b", options, stream=io.StringIO()).run()
    cells = [c for c in store.cells("b") if c.study == "batch"]
    assert sorted((c.engine, c.spec_id) for c in cells) == sorted(
        (e, batch_id(b, t)) for e in ("tokensdfa", "naive") for b in (2, 8) for t in (1, 2)
    )
    for c in cells:
        assert c.status == "ok", (c.engine, c.spec_id, c.message)
        size, threads = batch_shape(c.spec_id)
        m = c.metrics
        assert (m.batch_size, m.threads, len(m.step_ns)) == (size, threads, 5)
        assert m.batch_specs and m.batch_specs <= 3 and m.step["p99"] >= m.step["p50"] > 0
    out = report.write(store, "b", tmp_path / "b")
    page = out.read_text()
    assert "Batches: one decoding step for many sequences" in page
    assert "at 10 ms per step (p99)" in page
    lines = (tmp_path / "b" / "batch.csv").read_text().splitlines()
    assert lines[0].startswith("engine,vocab,threads,batch") and len(lines) == 1 + len(cells)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["bench", "--batch", "0"], "--batch: must be at least 1"),
        (["bench", "--batch", "4,x"], "--batch: not a whole number: 'x'"),
        (["bench", "--batch", "4,", "--threads", "1"], "not a comma-separated list"),
        (["bench", "--threads", "5000"], "--threads: must be at most 4,096"),
    ],
)
def test_bad_batch_options_are_one_line(argv: list[str], expected: str, tmp_path: Path) -> None:
    err = io.StringIO()
    saved, sys.stderr = sys.stderr, err
    try:
        assert cli.main([*argv, "--reports-dir", str(tmp_path)]) == 2
    finally:
        sys.stderr = saved
    message = err.getvalue().strip()
    assert expected in message and "\n" not in message, message
