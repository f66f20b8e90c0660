"""A bench run's page, `RUN/index.html`: its sections in order, in the shared page shell,
and `RUN/specs.html`, each spec across engines.

Order: what the run measured, then the verdict (which engine to use, per corpus set and
vocabulary), then the batch steps (when the run has batch cells), then the plots
(distributions, vocabulary scaling, speedup), then the tables: per engine, MaskBench
comparison, jump-forward and differential test (when those commands wrote into the run
directory), per spec, failed cells, vocabulary preparation, sessions, hosts and the run's
details. Long tables are collapsed; every table with a header sorts.
"""

from __future__ import annotations

from pathlib import Path

from harness.report import batch_section, comparisons, sections, verdict_section
from harness.report.data import load
from harness.report.diff_page import diff_section
from harness.report.html import page
from harness.report.jumpforward_page import jumpforward_section
from harness.report.spec_page import per_spec
from harness.store import Store


def write(store: Store, name: str, out: Path) -> Path:
    """Write `out/index.html` of run `name`, with its CSVs, PNGs and `specs.html` beside
    it (creating `out`); returns the page's path. UnknownName when the store has no such
    run."""
    data = load(store, name)
    out.mkdir(parents=True, exist_ok=True)
    parts = [
        *sections.header(data),
        *verdict_section.section(data, out),
        *batch_section.section(data, out),
        *sections.distributions(data, out),
        *sections.scaling(data, out),
        *comparisons.speedup(data, out),
        *sections.per_engine(data, out),
        *comparisons.maskbench(store, data, out),
        *jumpforward_section(out),
        *diff_section(out),
        *per_spec(data, out),
        *sections.failed_cells(data, out),
        *sections.preparations(data, out),
        *sections.sessions(data),
        *sections.hosts(data),
        *sections.details(data),
        sections.generated("tokensieve report"),
    ]
    index = out / "index.html"
    index.write_text(page(f"tokensieve {name}", parts), encoding="utf-8")
    return index
