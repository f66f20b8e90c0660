"""The page of `tokensieve findings recheck RUN`: finding x release, as
`findings/recheck.json`, `findings/recheck.html` and a console table.

The rechecking itself (every repro script run against each release) is
`harness.diff.findings.recheck`; this module runs it and writes what it found.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from harness.diff.findings.recheck import Recheck, recheck
from harness.report.html import page, table
from harness.report.text import text_table


def run(run_dir: Path, releases: list[str]) -> str:
    """Recheck the diff run at `run_dir` against `releases` (`NAME@VERSION`), write its
    JSON and HTML, and return the console table with the paths written."""
    rows = recheck(run_dir, releases)
    as_json, as_html = write(run_dir, rows)
    header, table_rows = grid(rows)
    return f"{text_table(header, table_rows, left=1)}\nwritten: {as_json} {as_html}"


def grid(rows: list[Recheck]) -> tuple[list[str], list[list[str]]]:
    """(header, one row per finding): the outcome under each (engine, release)."""
    releases = sorted({(r.engine, r.release) for r in rows})
    table_rows = []
    for finding in dict.fromkeys(r.finding for r in rows):
        mine = {(r.engine, r.release): r.outcome for r in rows if r.finding == finding}
        table_rows.append([finding, *(mine.get(k, "") for k in releases)])
    return ["finding", *(f"{e} {v}" for e, v in releases)], table_rows


def write(run_dir: Path, rows: list[Recheck]) -> tuple[Path, Path]:
    """findings/recheck.json and findings/recheck.html: finding x release."""
    folder = run_dir / "findings"
    folder.mkdir(parents=True, exist_ok=True)
    data: list[dict[str, Any]] = [asdict(r) for r in rows]
    as_json = folder / "recheck.json"
    as_json.write_text(json.dumps(data, indent=1), encoding="utf-8")
    header, table_rows = grid(rows)
    as_html = folder / "recheck.html"
    as_html.write_text(
        page(
            "tokensieve findings recheck",
            [
                "<h1>Findings against releases</h1>",
                '<p class="note">Each repro script run on its own with a release of its '
                "engine first on its path: REPRODUCED (the bug is there), FIXED, or cannot "
                "run.</p>",
                table(header, table_rows, 1),
            ],
        ),
        encoding="utf-8",
    )
    return as_json, as_html
