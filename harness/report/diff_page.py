"""The differential test's HTML: its own page `RUN/diff.html` (`diff_page`) and its summary
on the bench run's page (`diff_section`), both from the dict `tokensieve diff` dumps as
`RUN/diff.json`. Both lead with bugs (one per engine, signature and minimized regex, with
the specs and vocabularies it showed on as witnesses), then the findings they group.

Both use the shared page shell and table helper: every string of the JSON is escaped, and
a repro is linked only when its path is a file of the run directory (`findings/...`).
Bugs, findings and cells are read as the records the differ writes
(`harness.diff.findings.records`); the other tables show the JSON records as they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.diff.findings.records import BugRecord, CellRow, FindingRecord, bugs_of
from harness.report.html import Html, escape, link, page, records, table
from harness.results import Status

_INTRO = (
    "<p>Vocabularies {vocabs}; corpus {sets}. Every engine's mask and accepting\n"
    "status compared with the naive reference at each state reached; a state counts once per\n"
    "engine. A difference is a <b>policy</b> when a declared rule of the engine explains all\n"
    "of it, otherwise a <b>bug</b>; each bug is minimized to the fewest tokens and shortest\n"
    "prefix that still show it, and its repro script (engine package and numpy only) was run "
    "on\nits own: <i>reproduces</i> says whether it did.</p>"
)
_INSTANCES = (
    "<p>Engines with their own JSON grammar, the reference over the run's converted regex\n"
    '("naive": its failures are that converter\'s) and, where the run converts with ours,\n'
    "outlines-core's own converter (outlines-core-converter). valid/invalid: labelled instances\n"
    "checked (compact JSON, real encoder); samples: completions drawn from the engine's own\n"
    "masks; disputed: labelled invalid but valid per jsonschema (not counted); policy:\n"
    "json-escapes.</p>"
)


_BUGS = (
    "<p>A bug is one engine, one signature and one minimized regex; its witnesses are the\n"
    "(spec, vocabulary) cells where it showed. Its repro is that of its best finding (one\n"
    "that reproduces, with the fewest tokens).</p>"
)


def _bug_shown(bug: BugRecord) -> dict[str, Any]:
    """A bug as the page's bugs table shows it."""
    shown = ", ".join(f"{w.spec} ({w.vocab})" for w in bug.witnesses[:6])
    more = len(bug.witnesses) - 6
    return {
        "id": bug.id,
        "engine": f"{bug.engine} {bug.version}",
        "signature": bug.signature,
        "regex": bug.regex,
        "witnesses": bug.witness_count,
        "witnessed on": shown + (f" and {more} more" if more > 0 else ""),
        "findings": len(bug.findings),
        "reproduces": bug.reproduces,
        "repro": f"findings/{bug.repro}" if bug.repro else "",
        "explanation": bug.explanation,
    }


def _shown(finding: FindingRecord) -> dict[str, Any]:
    """A finding as the page's findings table shows it."""
    return {
        "id": finding.id,
        "engine": f"{finding.engine} {finding.version}",
        "signature": finding.signature,
        "occurrences": finding.occurrences,
        "tokens": finding.minimal_tokens,
        "prefix": finding.minimal_prefix,
        "reproduces": finding.reproduces,
        "repro": f"findings/{finding.repro}" if finding.repro else "",
        "explanation": finding.explanation,
    }


def diff_page(data: dict[str, Any], run: str) -> str:
    """The HTML document of a diff run from its `diff.json` dict: per-engine state counts,
    findings with their repros, JSON-schema instance checks, cells not compared."""
    options = data.get("options", {})
    failed = [c for c in data.get("cells", []) if CellRow.from_json(c).status != Status.OK]
    findings = [FindingRecord.from_json(f) for f in data.get("findings", [])]
    intro = _INTRO.format(vocabs=escape(options.get("vocab")), sets=escape(options.get("corpus")))
    parts = [
        f"<h1>Differential test: {escape(run)}</h1>",
        Html(intro),
        "<h2>Per engine</h2>",
        records(data.get("summary", [])),
        *_bugs_part(data),
        "<h2>Findings</h2>",
        records([_shown(f) for f in findings], link_key="repro"),
        "<h2>JSON schemas on instances (MaskBench's invalidation errors)</h2>",
        _INSTANCES,
        records(data.get("instances", [])),
        "<h3>Repros (one per engine, kind and schema; text shrunk on a byte-level vocabulary)</h3>",
        records(data.get("instance_repros", []), link_key="repro"),
        "<h3>Failures</h3>",
        records(data.get("instance_failures", [])[:300]),
        "<h2>Cells not compared</h2>",
        records(failed),
    ]
    return page(f"tokensieve diff {run}", parts)


def _bugs_part(data: dict[str, Any]) -> list[Any]:
    """The bugs section (absent from a diff.json written before bugs were grouped)."""
    if "bugs" not in data:
        return []
    rows = [_bug_shown(BugRecord.from_json(b)) for b in data["bugs"]]
    return ["<h2>Bugs</h2>", Html(_BUGS), records(rows, link_key="repro")]


def _repro(bug: BugRecord) -> Html | str:
    """The section's repro cell: the script's link and whether it reproduced."""
    name = bug.repro
    if not name:
        return "not minimized"
    verdict = "reproduces" if bug.reproduces else "does not reproduce"
    return Html(f"{link(f'findings/{name}', name)} ({verdict})")


def diff_section(out: Path) -> list[str]:
    """The findings of `tokensieve diff --run RUN` on the bench run's page, when it wrote
    `out/diff.json`; else a note saying how to add them."""
    source = out / "diff.json"
    if not source.exists():
        return [
            "<h2>Differential test</h2>",
            '<p class="note">Not run for this run: '
            "<code>tokensieve diff --run RUN</code> adds it.</p>",
        ]
    data = json.loads(source.read_text())
    findings = data.get("findings", [])
    # a diff.json written before bugs were grouped: one bug per finding
    bugs = bugs_of(data) or []
    rows = [
        [
            f"{b.engine} {b.version}",
            b.signature,
            b.witness_count,
            ", ".join(w.spec for w in b.witnesses[:3]),
            _repro(b),
            b.explanation,
        ]
        for b in bugs
    ]
    header = ["engine", "signature", "witnesses", "specs", "repro", "explanation"]
    return [
        "<h2>Differential test</h2>",
        table(header, rows, left=len(header)),
        f'<p class="note">{len(bugs)} bugs ({len(findings)} findings); per-engine state '
        f"counts, policies and cells not compared: {link('diff.html')}, data: "
        f"{link('diff.json')}</p>",
    ]
