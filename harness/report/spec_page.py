"""One spec across engines: the page `RUN/specs.html` (`write_specs_page`), one anchored
table per spec with every engine and vocabulary's cell, and the bench page's per-spec
table (`per_spec`), one row per spec and vocabulary linking to that spec's anchor.

Anchors are `spec-` and the spec id's letters, digits, `_` and `-` (`html.anchor_id`),
numbered on a clash, in sorted spec order, so the same run gives the same anchors. Every
figure shown is a cell's, as `cells.csv` holds it.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from harness.figures import fmt_bytes, fmt_ns
from harness.report.columns import Column, html_table
from harness.report.data import RunData
from harness.report.html import Html, anchor_id, link, markup, page, table
from harness.store import Cell

SPECS_PAGE = "specs.html"


def _memory(c: Cell) -> str:
    value, kind = c.metrics.memory
    if value is None:
        return "-"
    return fmt_bytes(value) + (" rss" if kind == "rss" else "")


def _states(c: Cell) -> str:
    states = c.metrics.num_states
    return "-" if states is None else f"{states:,}"


SPEC_CELLS: list[Column[Cell]] = [
    Column("engine", lambda c: c.engine),
    Column("vocab", lambda c: c.vocab),
    Column("status", lambda c: c.status),
    Column("compile", lambda c: fmt_ns(c.metrics.compile_ns)),
    Column("TTFM", lambda c: fmt_ns(c.metrics.ttfm_ns)),
    Column("mask p50", lambda c: fmt_ns(c.metrics.fill.get("p50"))),
    Column("mask p99", lambda c: fmt_ns(c.metrics.fill.get("p99"))),
    Column("memory", _memory),
    Column("states", _states),
    Column("message", lambda c: (c.message or "")[:300]),
]


def anchors(data: RunData) -> dict[str, str]:
    """Spec id -> its anchor on the specs page, for every spec of the main study."""
    taken: set[str] = set()
    return {spec: anchor_id(spec, taken) for spec in sorted({c.spec_id for c in data.main})}


def _ordered(data: RunData, cells: list[Cell]) -> list[Cell]:
    """Cells by vocabulary, then engine, in run order."""
    vocab_rank = {v: i for i, v in enumerate(data.vocabs)}
    engine_rank = {e: i for i, e in enumerate(data.engines)}
    return sorted(cells, key=lambda c: (vocab_rank.get(c.vocab, 0), engine_rank[c.engine]))


def write_specs_page(data: RunData, out: Path, ids: dict[str, str]) -> str:
    """Write `out/specs.html`: per spec (sorted), an anchored heading and every cell of
    it; returns the file name."""
    by_spec: dict[str, list[Cell]] = defaultdict(list)
    for c in data.main:
        by_spec[c.spec_id].append(c)
    parts: list[str] = [
        markup("<h1>tokensieve run {run}: each spec across engines</h1>", run=data.run.name),
        markup(
            '<p class="note">Back to the {report}. Every cell with its figures: {csv}. '
            "Compile and TTFM: medians of the cell; mask: percentiles over its timed fills; "
            "memory: the engine's own figure, or the worker's RSS growth (\"rss\").</p>",
            report=link("index.html", "report"),
            csv=link("cells.csv"),
        ),
    ]
    for spec in sorted(by_spec):
        parts.append(markup('<h2 id="{id}">{spec}</h2>', id=ids[spec], spec=spec))
        rows = _ordered(data, by_spec[spec])
        parts.append(html_table(SPEC_CELLS, rows, left=3, collapse=None))
    path = out / SPECS_PAGE
    path.write_text(page(f"tokensieve {data.run.name}: specs", parts), encoding="utf-8")
    return path.name


def _fastest(cells: list[Cell], value: str) -> tuple[str, str]:
    """(engine, figure) of the ok cell with the least TTFM or mask p99; ("-", "-")."""
    found = [
        (v, c.engine)
        for c in cells
        if c.status == "ok"
        and (v := (c.metrics.ttfm_ns if value == "ttfm" else c.metrics.fill.get("p99"))) is not None
    ]
    if not found:
        return "-", "-"
    v, engine = min(found)
    return engine, fmt_ns(v)


def per_spec(data: RunData, out: Path) -> list[str]:
    """The per-spec table (one row per spec and vocabulary, collapsed when long) linking
    each spec to its anchor on `specs.html`, which it writes."""
    if not data.main:
        return []
    ids = anchors(data)
    name = write_specs_page(data, out, ids)
    by_key: dict[tuple[str, str], list[Cell]] = defaultdict(list)
    for c in data.main:
        by_key[(c.spec_id, c.vocab)].append(c)
    rows = []
    for (spec, vocab), cells in sorted(by_key.items()):
        ok = sum(1 for c in cells if c.status == "ok")
        ttfm = _fastest(cells, "ttfm")
        mask = _fastest(cells, "p99")
        spec_link = link(name, spec, fragment=ids[spec])
        rows.append([spec_link, vocab, f"{ok} of {len(cells)}", *ttfm, *mask])
    header = ["spec", "vocab", "engines ok", "fastest TTFM", "TTFM", "fastest mask p99", "p99"]
    return [
        "<h2>Per spec</h2>",
        Html(
            '<p class="note">Each spec and vocabulary: how many engines ran it ok, and the '
            "fastest of them at time to first mask and at mask p99 (that cell's own figures, "
            f"in {link('cells.csv')}). A spec's name opens every engine's cell of it on "
            f"{link(name)}.</p>"
        ),
        table(header, rows, left=2),
    ]
