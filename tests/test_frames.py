"""harness.frames: a real run's cells, steps, findings and bugs as DataFrames, the one
percentile definition, the groupings the pages use, and `tokensieve export` round trips."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import frames
from harness.figures import percentile, summarize
from harness.frames.export import frame as table_frame
from harness.report.data import load, summaries
from harness.store import Store
from tests.test_bad_inputs import one_line

ROOT = Path(__file__).resolve().parents[1]
BUGGY = r"a(\.a)*"  # outlines-core's final-state bug (tests/test_check.py)


def rank(values: list[int], q: float) -> int:
    """The nearest-rank definition, written out: rank ceil(q * n) of the sorted values."""
    return sorted(values)[max(0, math.ceil(q * len(values)) - 1)]


@pytest.mark.parametrize("q", [0.5, 0.9, 0.99, 1.0])
def test_inverted_cdf_is_the_nearest_rank_at_every_size(q: float) -> None:
    rng = np.random.default_rng(7)
    for n in range(1, 3001):
        values = rng.integers(0, 10**9, size=n).tolist()
        assert percentile(values, q) == frames.percentile(values, q) == rank(values, q), n


@given(st.lists(st.integers(0, 10**12), min_size=1, max_size=400), st.floats(0, 1))
def test_percentile_is_an_observed_value(values: list[int], q: float) -> None:
    found = frames.percentile(values, q)
    assert found in values and found == percentile(values, q)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bench run and a diff run of the same name: two regexes (one that outlines-core
    gets wrong) on naive, tokensdfa and outlines-core."""
    pytest.importorskip("outlines_core")
    where = tmp_path_factory.mktemp("frames")
    for command in ("bench", "diff"):
        argv = [
            sys.executable, "-m", "harness.cli", command, "--regex", BUGGY, "--regex", "[0-9]{2}",
            "--vocab", "synthetic-1000-3", "--engines", "naive,tokensdfa,outlines-core",
            "--run", "r", "--reports-dir", str(where / "reports"),
        ]  # fmt: skip
        if command == "bench":
            argv += ["--paths", "2", "--no-report"]
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
    return where / "reports"


def test_cells_and_steps_are_the_stored_cells(run: Path) -> None:
    cells = frames.cells(run, "r")
    assert list(cells.columns) == list(frames.tables.CELL_COLUMNS)
    assert len(cells) == 6 and set(cells["status"]) == {"ok"}
    assert set(cells["corpus"]) == {"user"} and set(cells["study"]) == {"main"}
    assert cells.loc[cells["spec"] == "user/regex#1", "features"].isna().all()
    assert cells["release"].notna().all() and cells["host"].notna().all()
    with Store(run / "results.sqlite", readonly=True) as store:
        stored = {c.key: c for c in store.cells("r")}
    steps = frames.steps(run, "r")
    for row in cells.itertuples():
        cell = stored[(row.engine, row.spec, row.vocab)]
        assert row.ttfm_ns == cell.metrics.ttfm_ns and row.mask_p99_ns == cell.metrics.fill["p99"]
        mine = steps[(steps["engine"] == row.engine) & (steps["spec"] == row.spec)]
        assert mine[mine["kind"] == "fill"]["ns"].tolist() == cell.metrics.fill_ns
        assert mine[mine["kind"] == "advance"]["ns"].tolist() == cell.metrics.advance_ns


def test_the_summary_grouping_is_the_rank_definition_over_the_cells(run: Path) -> None:
    """The report's per-engine rows (computed on the frames) against the definition
    written out over the stored cells."""
    with Store(run / "results.sqlite", readonly=True) as store:
        data = load(store, "r")
        shown = summaries(data)
    assert [s.engine for s in shown] == ["naive", "tokensdfa", "outlines-core"]
    for s in shown:
        mine = [c for c in data.main if c.engine == s.engine and c.status == "ok"]
        fills = [v for c in mine for v in c.metrics.fill_ns]
        assert s.mask == summarize(fills) and s.mask["p99"] == rank(fills, 0.99)
        assert s.ttfm_p50 == rank([c.metrics.ttfm_ns for c in mine], 0.5)
        assert s.compile_p99 == rank([c.metrics.compile_ns for c in mine], 0.99)
        assert s.counts["ok"] == len(mine) == s.specs


def test_findings_and_bugs_of_the_diff(run: Path) -> None:
    found = frames.findings(run, "r")
    bugs = frames.bugs(run, "r")
    assert list(found.columns) == list(frames.diffs.FINDING_COLUMNS)
    assert set(found["engine"]) == set(bugs["engine"]) == {"outlines-core"}
    assert (found["specs"] == "user/regex#1").all() and (found["corpus"] == "user").all()
    assert bugs["witnesses"].str.contains("user/regex#1@synthetic-1000-3").all()
    assert all(Path(p).is_file() for p in found["repro"].dropna())


@pytest.mark.parametrize("table", ["cells", "steps", "findings", "bugs"])
def test_export_round_trips(run: Path, table: str, tmp_path: Path) -> None:
    frame = table_frame(run, "r", table)
    csv = frames.export(run, "r", table, "csv", tmp_path / f"{table}.csv")
    back = pd.read_csv(csv)
    pd.testing.assert_frame_equal(_values(back), _values(frame), check_dtype=False)
    lines = frames.export(run, "r", table, "jsonl", tmp_path / f"{table}.jsonl")
    assert len(lines.read_text(encoding="utf-8").splitlines()) == len(frame)
    if table == "cells":
        parquet = frames.export(run, "r", table, "parquet", tmp_path / "cells.parquet")
        pd.testing.assert_frame_equal(pd.read_parquet(parquet), frame, check_dtype=False)


def _values(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame's values with every missing one None (CSV keeps no dtype: an empty
    field reads back as NaN or None by column), numbers as floats."""
    out = frame.astype(object).where(frame.notna(), None)
    return out.apply(lambda col: col.map(lambda v: float(v) if _number(v) else v))


def _number(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def test_export_command(run: Path, tmp_path: Path) -> None:
    def export(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "harness.cli", "export", *argv, "--reports-dir", str(run)],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    done = export("r", "--table", "steps", "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    first = json.loads(Path(done.stdout.strip()).read_text(encoding="utf-8").splitlines()[0])
    assert {"engine", "kind", "step", "ns"} <= set(first)
    one_line(export("nope"), 2, "unknown run", "'nope'")
    one_line(export("r", "--out", str(tmp_path / "no" / "x.csv")), 2, "--out", "does not exist")
    assert not (tmp_path / "no").exists()


def test_runs_lists_every_kind(run: Path) -> None:
    listed = frames.runs(run)
    assert sorted(zip(listed["run"], listed["kind"], strict=True)) == [
        ("r", "bench"),
        ("r", "diff"),
    ]
