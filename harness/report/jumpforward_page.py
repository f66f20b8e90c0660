"""The jump-forward study's HTML: its own page `RUN/jumpforward.html` (`jumpforward_page`)
and its summary on the bench run's page (`jumpforward_section`), both from the dict
`tokensieve jumpforward` dumps as `RUN/jumpforward.json`.

Both use the shared page shell and table helper; shares are percentages shown with one
decimal, and every string of the JSON is escaped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.report.html import escape, lines, link, one_decimal, page, records

_INTRO = (
    "<p>forced_single: share of tokens that were the only token allowed. forced_text: share "
    "of\ntokens lying inside the text the grammar forces. saved_*: decode steps saved by\n"
    "jump-forward against decoding the canonical tokenization token by token, appending the\n"
    "forced text's tokens (naive) or re-tokenizing the output after each jump (retok).\n"
    "boundary_differs: jumps whose two token sequences differ.</p>"
)


def _verdicts(disagreement: dict[str, Any]) -> dict[str, Any]:
    """A forced-text disagreement as a table row: where, then each engine's forced text
    with its verdict."""
    forced, verdicts = disagreement.get("forced", {}), disagreement.get("verdicts", {})
    return {
        "spec": disagreement.get("spec_id"),
        "vocab": disagreement.get("vocab"),
        "step": disagreement.get("step"),
        "prefix": (disagreement.get("prefix") or "")[-60:],
        **{name: f"{text!r} ({verdicts.get(name)})" for name, text in forced.items()},
    }


def jumpforward_page(data: dict[str, Any]) -> str:
    """The HTML document of a jump-forward run from its `jumpforward.json` dict: shares
    per set, engine and vocabulary, MaskBench beside its published share, forced texts
    compared across engines (at most 200), and what was skipped (at most 200)."""
    disagreements = data.get("forced_text_disagreements", [])
    parts = [
        "<h1>Jump-forward</h1>",
        _INTRO,
        "<h2>Per set, engine and vocabulary</h2>",
        records(data.get("summary", []), show=one_decimal),
        "<h2>MaskBench (llama3): ours beside the published fast-forward share</h2>",
        records(data.get("maskbench", []), show=one_decimal),
        "<h2>Forced text compared across engines</h2>",
        f"<p>{escape(data.get('states_compared', 0))} states compared, "
        f"{len(disagreements)} differing.</p>",
        records([_verdicts(d) for d in disagreements[:200]], show=one_decimal),
        "<h2>Skipped</h2>",
        lines(data.get("skipped", [])[:200]),
    ]
    return page("tokensieve jump-forward", parts)


def jumpforward_section(out: Path) -> list[str]:
    """The summary of `tokensieve jumpforward --run RUN` on the bench run's page, when it
    wrote `out/jumpforward.json`; else a note saying how to add it."""
    source = out / "jumpforward.json"
    if not source.exists():
        return [
            "<h2>Jump-forward</h2>",
            '<p class="note">Not measured for this run: '
            "<code>tokensieve jumpforward --run RUN</code> adds it.</p>",
        ]
    data = json.loads(source.read_text())
    parts = ["<h2>Jump-forward</h2>"]
    for title, rows in (
        ("Forced tokens and decode steps saved (%)", data.get("summary", [])),
        (
            "MaskBench, llama3: ours beside the published fast-forward share (%)",
            data.get("maskbench", []),
        ),
    ):
        if rows:
            parts.append(f"<h3>{escape(title)}</h3>{records(rows, show=one_decimal, left=0)}")
    parts.append(
        f'<p class="note">{escape(data.get("states_compared", 0))} states compared across '
        f"engines, {len(data.get('forced_text_disagreements', []))} with differing forced "
        f"text; details: {link('jumpforward.html')}</p>"
    )
    return parts
