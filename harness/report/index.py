"""A bench run's page, `RUN/index.html`: its sections in order, in the shared page shell.

Order: header, sessions, per engine, vocabulary preparation, distributions, vocabulary
scaling, speedup, MaskBench comparison, jump-forward and differential test (when those
commands wrote into the run directory), failed cells.
"""

from __future__ import annotations

from pathlib import Path

from harness.report import comparisons, sections
from harness.report.data import load
from harness.report.diff_page import diff_section
from harness.report.html import page
from harness.report.jumpforward_page import jumpforward_section
from harness.store import Store


def write(store: Store, name: str, out: Path) -> Path:
    """Write `out/index.html` of run `name`, with its CSVs and PNGs beside it (creating
    `out`); returns the page's path. UnknownName when the store has no such run."""
    data = load(store, name)
    out.mkdir(parents=True, exist_ok=True)
    parts = [
        *sections.header(data),
        *sections.sessions(data),
        *sections.hosts(data),
        *sections.per_engine(data, out),
        *sections.preparations(data, out),
        *sections.distributions(data, out),
        *sections.scaling(data, out),
        *comparisons.speedup(data, out),
        *comparisons.maskbench(store, data, out),
        *jumpforward_section(out),
        *diff_section(out),
        *sections.failed_cells(data, out),
        sections.generated("tokensieve report"),
    ]
    index = out / "index.html"
    index.write_text(page(f"tokensieve {name}", parts), encoding="utf-8")
    return index
