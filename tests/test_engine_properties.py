"""Third-party engines against the reference on random regexes of the shared dialect and
random small vocabularies (hypothesis; `ci` profile bounded, `make fuzz` far longer).

Every disagreement the differ finds must be a declared policy of the engine or a bug of a
known signature; anything else fails the test with the state that shows it. Known bugs
found this way end the test as an xfail naming the finding, never a silent pass.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import event, given
from strategies import regexes, vocabularies

from harness import engines
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.diff.walk.differ import Differ
from harness.diff.walk.plan import WalkPlan
from harness.engines.base import Engine
from harness.errors import TokensieveError
from harness.spec import Spec

pytest.importorskip("tokensdfa")

# (engine, signature) -> the finding, as the closing notes and reports name it
KNOWN_FINDINGS: dict[tuple[str, str], str] = {
    ("outlines-core", "final-state-exit"): "outlines-core 0.2.14 drops tokens that leave a "
    "full match at their last byte (finish-and-continue)",
    ("outlines-core", "leftmost-first"): "outlines-core 0.2.14 keeps only what leftmost-first "
    "matching keeps ('(a|ab)' never allows 'ab')",
    ("outlines-core", "eos-refused-at-match"): "outlines-core 0.2.14 refuses EOS at a full "
    "match leftmost-first matching abandoned",
    ("xgrammar", "utf8-surrogate"): "xgrammar 0.2.8 lets a negated class continue lead byte "
    "ED with A0-BF (UTF-8-encoded surrogates)",
    ("xgrammar", "dot-matches-newline"): "xgrammar 0.2.8's `.` matches a newline",
    ("xgrammar", "utf8-overapproximation"): "xgrammar 0.2.8 allows a token ending in a lead "
    "byte (' \\xe0') where no character of the regex can follow",
    ("llguidance", "utf8-overapproximation"): "llguidance 1.9.1 allows bytes inside a "
    "multi-byte character that cannot complete a character of the class (e.g. \\d after "
    "F0 9F allows B8)",
    ("llguidance", "stale-after-reset"): "llguidance 1.9.1, reset and walked with no mask on "
    "the way, may answer with a mask of its earlier walk (tests/test_stale.py)",
}
# Documented compile refusals: not a mask difference, so the example is not compared (and
# hypothesis reports how often it happened as an event).
REFUSALS: dict[str, re.Pattern[str]] = {
    # outlines-core refuses a vocabulary that leaves a reachable DFA state with no token
    # (here: Unicode \d needs digits of other scripts than the vocabulary spells)
    "outlines-core": re.compile(r"vocabulary provided is incompatible with the regex"),
}
PLAN = WalkPlan(cover_states=60, random_walks=4, max_steps=10, seed=0)


def _available(name: str) -> Engine:
    engine = engines.get(name)
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"{name} unavailable: {why}")
    return engine


def disagreements(engine: Engine, pattern: str, tokens: list[bytes]) -> list[Any]:
    vocab = tiny_vocabulary(tokens[1:])
    spec = Spec.regex("hypothesis/regex", pattern)
    try:
        compiled = engine.compile(engine.prepare(vocab), spec)
    except TokensieveError as exc:
        refusal = REFUSALS.get(engine.name)
        if refusal is not None and refusal.search(str(exc)):
            event(f"{engine.name}: documented refusal of an incomplete vocabulary")
            return []
        pytest.fail(f"{engine.name} refused {pattern!r} of the shared dialect: {exc}")
    result = Differ(spec.id, pattern, vocab, {engine.name: (engine, compiled)}).run(PLAN)
    return result.disagreements


@pytest.mark.parametrize("name", ["outlines-core", "llguidance", "xgrammar", "tokensdfa"])
def test_engine_agrees_with_reference_up_to_policies(name: str) -> None:
    engine = _available(name)
    known: Counter[str] = Counter()

    @given(regexes(), vocabularies())
    def prop(pattern: str, tokens: list[bytes]) -> None:
        for d in disagreements(engine, pattern, tokens):
            if d.verdict == "policy":
                continue
            where = (
                f"{pattern!r}, tokens {tokens}, after {d.prefix!r}: reference only "
                f"{[tokens[i] for i in d.reference_only]}, engine only "
                f"{[tokens[i] for i in d.engine_only]} ({d.rule}: {d.why})"
            )
            assert (name, d.rule) in KNOWN_FINDINGS, f"new {name} bug: {where}"
            known[d.rule] += 1

    prop()
    if known:
        pytest.xfail(
            "; ".join(f"{KNOWN_FINDINGS[(name, r)]} [{n} states]" for r, n in known.items())
        )
