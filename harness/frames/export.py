"""`tokensieve export RUN --table cells|steps|findings|bugs --format csv|parquet|jsonl`:
one of a run's frames (`harness.frames.tables`, `.diffs`) written to a file, by default
`REPORTS_DIR/RUN/TABLE.FORMAT`.

CSV is written without the index, so `pandas.read_csv(path)` gives the frame back (a
test holds the two equal); JSON Lines has one object per row (`pandas.read_json(path,
lines=True)`); Parquet keeps the column types and needs `pyarrow` (`pip install
'tokensieve[parquet]'`; without it, one line saying so and exit code 1).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from harness.errors import EnvironmentFailure
from harness.frames import diffs, tables

TABLES: dict[str, Callable[[Path, str], pd.DataFrame]] = {
    "cells": tables.cells,
    "steps": tables.steps,
    "findings": diffs.findings,
    "bugs": diffs.bugs,
}
FORMATS = ("csv", "parquet", "jsonl")


def frame(reports_dir: Path, run: str, table: str) -> pd.DataFrame:
    """Table `table` of run `run` (one of `TABLES`)."""
    return TABLES[table](Path(reports_dir), run)


def export(reports_dir: Path, run: str, table: str, fmt: str, out: Path | None = None) -> Path:
    """Write table `table` of run `run` as `fmt` to `out` (default
    `reports_dir/run/TABLE.FMT`); returns the path written."""
    data = frame(reports_dir, run, table)
    target = out or Path(reports_dir) / run / f"{table}.{fmt}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        data.to_csv(target, index=False)
    elif fmt == "jsonl":
        data.to_json(target, orient="records", lines=True, force_ascii=False)
    else:
        _parquet(data, target)
    return target


def _parquet(data: pd.DataFrame, target: Path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise EnvironmentFailure(
            "--format parquet needs pyarrow: pip install 'tokensieve[parquet]'"
        ) from None
    data.to_parquet(target, index=False)
