"""The report's first section: the verdict (`harness.report.verdict`) said in sentences,
one list per corpus set and vocabulary, each sentence one claim with its figure.

Every sentence is `harness.report.html.markup` of a literal template of this module with
escaped values (engine, corpus and vocabulary names, signatures come from data); the
figures are formatted from the numbers `verdict.csv` holds.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from harness.figures import fmt_bytes, fmt_ns
from harness.report.data import RunData
from harness.report.html import Html, link, markup
from harness.report.verdict import (
    ALL_SETS,
    CLEAR_RATIO,
    MASK_P99,
    MEMORY,
    MIN_RATIO,
    SIGN_LEVEL,
    TTFM,
    Claim,
    EngineBugs,
    Figure,
    Group,
    load_diff,
    verdicts,
    write_verdict_csv,
)

_INTRO = (
    '<p class="note">Per corpus set and vocabulary: the fastest engine at time to first mask '
    "(compile + first matcher + first mask: what a request waits before its first token) and "
    "at mask p99 (the slow steps of decoding), the smallest compiled spec, and the engines "
    "the differential test found bugs in. Only <code>ok</code> cells count: an engine ok on "
    "fewer than half of a group's specs is left out, and the figures pool the specs every "
    "ranked engine ran ok. Two engines tie unless the best is ahead beyond the spread of "
    "their cells: by {min_ratio} or more, and by {clear_ratio} on every spec or on enough "
    "specs for a sign test at {level}. {csv} holds every figure.</p>"
)

_CLAIMS = {
    TTFM: (
        "<b>{engine}</b> has the fastest time to first mask: {figure} median over {pooled}, "
        "{compared} {runner} ({other})."
    ),
    MASK_P99: (
        "<b>{engine}</b> has the fastest mask at p99: {figure} over {pooled}, {compared} "
        "{runner} ({other})."
    ),
    MEMORY: (
        "<b>{engine}</b> compiles these specs smallest: {figure} median ({kind}), {compared} "
        "{runner} ({other})."
    ),
}
_ALONE = {
    TTFM: "<b>{engine}</b> is the only engine ranked: time to first mask {figure} median over "
    "{pooled}.",
    MASK_P99: "<b>{engine}</b> alone has a mask p99: {figure} over {pooled}.",
    MEMORY: "<b>{engine}</b> alone reports memory: {figure} median ({kind}).",
}
# The reference's instance failures on schemas are those of the one schema-to-regex
# converter every regex engine compiles through (see docs/guides/diff.md).
REFERENCE = "naive"
_TIED = {
    TTFM: "<b>{engine}</b> and <b>{runner}</b> tie for the fastest time to first mask: "
    "{figure} median over {pooled}{spread}.",
    MASK_P99: "<b>{engine}</b> and <b>{runner}</b> tie for the fastest mask at p99: {figure} "
    "over {pooled}{spread}.",
    MEMORY: "<b>{engine}</b> and <b>{runner}</b> tie for the smallest: {figure} median "
    "({kind}){spread}.",
}
# Why two figures that print apart tie (the rule of harness.report.verdict).
_SPREAD = (
    ", within the spread of their cells ({times} apart; {engine} ahead on {ahead} of "
    "{specs}, by {clear_ratio} or more on {clear})"
)
_BETTER = {TTFM: "faster than", MASK_P99: "faster than", MEMORY: "smaller than"}
_KINDS = {"engine": "its own figure", "rss": "the worker's RSS growth"}


def _times(ratio: float) -> str:
    """A ratio as the sentences say it: 1.04x, 3.1x, 230x."""
    if ratio < 2:
        return f"{ratio:.2f}x"
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:,.0f}x"


def _count(n: int, what: str) -> str:
    """ "1 spec", "1,234 masks"."""
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def _figure(measure: str, value: float) -> str:
    return fmt_bytes(value) if measure == MEMORY else fmt_ns(value)


def _tie(claim: Claim, runner: Figure, values: dict[str, str]) -> Html:
    """Two engines tied: one figure when both print the same, else both and why they tie
    (the counts the rule read)."""
    other = _figure(claim.measure, runner.value)
    spread = Html("")
    if other != values["figure"]:
        values = {**values, "figure": f"{values['figure']} and {other}"}
        spread = markup(
            _SPREAD,
            times="∞x" if claim.ratio is None else _times(claim.ratio),
            engine=claim.best.engine,
            ahead=claim.paired.ahead,
            specs=_count(claim.paired.specs, "spec"),
            clear_ratio=_times(CLEAR_RATIO),
            clear=claim.paired.clear,
        )
    return markup(_TIED[claim.measure], **values, runner=runner.engine, spread=spread)


def claim_sentence(claim: Claim) -> Html:
    """One claim: the engine, its figure and what it pools, the runner-up and the ratio;
    a tie (`Claim.tie`: not beyond the spread of their cells, or the two figures print
    the same) names both engines."""
    best, runner = claim.best, claim.runner_up
    values = {
        "engine": best.engine,
        "figure": _figure(claim.measure, best.value),
        "pooled": _count(best.n, "mask" if claim.measure == MASK_P99 else "spec"),
        "kind": _KINDS.get(best.kind, best.kind),
    }
    if runner is None:
        return markup(_ALONE[claim.measure], **values)
    other = _figure(claim.measure, runner.value)
    if claim.tie or other == values["figure"]:
        return _tie(claim, runner, values)
    better = _BETTER[claim.measure]
    compared = better if claim.ratio is None else f"{_times(claim.ratio)} {better}"
    return markup(
        _CLAIMS[claim.measure], **values, compared=compared, runner=runner.engine, other=other
    )


def _engine_bugs(found: EngineBugs) -> Html:
    """ "<b>outlines-core</b> (3 bugs: final-state-exit ×2, unclassified; 2 instance
    failures: invalid-output ×2)"."""

    def listed(counter: Counter[str]) -> str:
        return ", ".join(k if n == 1 else f"{k} ×{n}" for k, n in sorted(counter.items()))

    what = []
    if found.signatures:
        what.append(f"{_count(len(found.signatures), 'bug')}: {listed(Counter(found.signatures))}")
    if found.instances:
        total = sum(found.instances.values())
        what.append(f"{_count(total, 'instance failure')}: {listed(Counter(found.instances))}")
    if found.engine == REFERENCE:
        return markup(
            "<b>the run's schema-to-regex converter</b> every regex engine compiles through "
            "(seen on the {engine} reference: {what})",
            engine=found.engine,
            what="; ".join(what),
        )
    return markup("<b>{engine}</b> ({what})", engine=found.engine, what="; ".join(what))


def bugs_sentence(group: Group) -> Html | None:
    """Whom the differential test found bugs in, linking its page; None without one."""
    if group.bugs is None:
        return None
    findings = link("diff.html", "The differential test")
    if not group.bugs:
        return markup("{diff} found no bug on these specs.", diff=findings)
    named = [_engine_bugs(b) for b in group.bugs]
    listed = Html(", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0])
    return markup("{diff} found bugs in {engines}.", diff=findings, engines=listed)


def standing_sentences(group: Group) -> list[Html]:
    """Engines left out of the ranking with why, failures of the ranked ones, and how
    many specs the figures compare when not all."""
    out = []
    ranked = set(group.ranked)
    for s in group.standings:
        if s.engine not in ranked:
            out.append(
                markup(
                    "<b>{engine}</b> is left out: ok on {ok} of {specs} specs ({outcomes}).",
                    engine=s.engine,
                    ok=s.ok,
                    specs=s.specs,
                    outcomes=s.outcomes() or "no ok cell",
                )
            )
        elif s.failed:
            out.append(
                markup(
                    "<b>{engine}</b> failed on {failed} of {specs} specs ({outcomes}).",
                    engine=s.engine,
                    failed=s.failed,
                    specs=s.specs,
                    outcomes=s.outcomes(failed_only=True),
                )
            )
    if group.unranked_memory:
        out.append(
            markup(
                "Memory not ranked for {engines}: no size of their own for every spec compared "
                "(the worker's RSS growth is not comparable).",
                engines=", ".join(group.unranked_memory),
            )
        )
    if group.ranked and len(group.compared) < group.specs:
        out.append(
            markup(
                "Figures compare the {n} of {specs} specs every ranked engine ran ok.",
                n=len(group.compared),
                specs=group.specs,
            )
        )
    return out


def group_html(group: Group) -> Html:
    """One group: its heading and its sentences as a list."""
    corpus = "All sets" if group.corpus == ALL_SETS else group.corpus
    heading = markup(
        '<h3>{corpus} · {vocab} <span class="note">({specs}, {engines} ranked)</span></h3>',
        corpus=corpus,
        vocab=group.vocab,
        specs=_count(group.specs, "spec"),
        engines=_count(len(group.ranked), "engine"),
    )
    sentences = [claim_sentence(c) for c in group.claims]
    if not group.ranked:
        sentences.append(Html("No engine was ok on half of these specs."))
    bugs = bugs_sentence(group)
    if bugs is not None:
        sentences.append(bugs)
    sentences.extend(standing_sentences(group))
    items = "".join(f"<li>{s}</li>" for s in sentences)
    return Html(f"{heading}<ul>{items}</ul>")


def section(data: RunData, out: Path) -> list[str]:
    """The verdict section (writing `verdict.csv`), or a note when the run has no cell."""
    diff = load_diff(out)
    groups = verdicts(data, diff)
    parts: list[str] = ['<h2 id="verdict">Verdict</h2>']
    if not groups:
        parts.append('<p class="note">No cell measured in this run yet.</p>')
        return parts
    name = write_verdict_csv(groups, out)
    parts.append(
        markup(
            _INTRO,
            csv=link(name),
            min_ratio=_times(MIN_RATIO),
            clear_ratio=_times(CLEAR_RATIO),
            level=f"{SIGN_LEVEL:.0%}",
        )
    )
    blocks = "".join(group_html(g) for g in groups)
    parts.append(Html(f'<div class="verdict">{blocks}</div>'))
    if diff is None:
        parts.append(
            markup(
                '<p class="note">No differential test for this run: <code>tokensieve diff '
                "--run {run}</code> (same corpus and vocabularies) adds the bugs found.</p>",
                run=data.run.name,
            )
        )
    return parts
