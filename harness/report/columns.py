"""Column tables: a table (a CSV file, or an HTML table) declared once as a list of
`Column`s, each a header and the function giving that column's value for one row, so a
header and its values cannot drift apart, nor a column be added to one and not the other.

Contract of `write_csv`: the header line, then one line per item, every cell through
`harness.embed.csv_cell` (None as empty, no cell a spreadsheet would run as a formula);
UTF-8, `csv` module quoting. It returns the file's name, for the page to link.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from harness.embed import csv_cell
from harness.report.html import COLLAPSE_ROWS, Html, table

T = TypeVar("T")


@dataclass(frozen=True)
class Column(Generic[T]):
    """One column: its header, and its value for a row."""

    header: str
    value: Callable[[T], Any]


def headers(columns: Sequence[Column[T]]) -> list[str]:
    return [c.header for c in columns]


def row(columns: Sequence[Column[T]], item: T) -> list[Any]:
    return [c.value(item) for c in columns]


def write_csv(path: Path, columns: Sequence[Column[T]], items: Iterable[T]) -> str:
    """Write `items` as `path` (see the module's contract); returns `path.name`."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(headers(columns))
        for item in items:
            writer.writerow([csv_cell(v) for v in row(columns, item)])
    return path.name


def html_table(
    columns: Sequence[Column[T]],
    items: Iterable[T],
    left: int = 1,
    limit: int | None = None,
    collapse: int | None = COLLAPSE_ROWS,
) -> Html:
    """`items` as an HTML table (`harness.report.html.table`, same `left`, `limit` and
    `collapse`)."""
    rows = [row(columns, item) for item in items]
    return table(headers(columns), rows, left, limit, collapse)


def ms(ns: float | None) -> float | None:
    """Nanoseconds as milliseconds rounded to 4 decimals (the CSVs' unit for compiles)."""
    return None if ns is None else round(ns / 1e6, 4)


def us(ns: float | None) -> float | None:
    """Nanoseconds as microseconds rounded to 3 decimals (the CSVs' unit for masks)."""
    return None if ns is None else round(ns / 1e3, 3)
