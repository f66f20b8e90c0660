"""`stale-after-reset`: a wrong answer that a reused (reset) matcher gives and a new one
walking the same tokens does not (`harness.diff.walk.lanes.Lane.stale`), shrunk on a tiny
vocabulary with its history (`harness.diff.shrink.stale`) into a repro that replays it.

llguidance 1.9.1 is such an engine: on the schema `{}`, after walking `[["` and filling
its mask, then resetting and walking `[{"` with no mask filled on the way, it returns the
mask of the string it was in before the reset (`",` allowed, `":` refused) where a new
matcher is inside an object key. (With a mask filled at `[` after the reset it is right.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import engines
from harness.diff.findings import repro
from harness.diff.run.service import dialect_part
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.diff.walk.history import FILL
from harness.diff.walk.lanes import STALE_AFTER_RESET
from harness.diff.walk.plan import WalkPlan
from harness.spec import Spec

pytest.importorskip("tokensdfa")

TOKENS = [b"[", b'["', b'{"', b'",', b'":']
VOCAB = tiny_vocabulary(TOKENS)
PREFIX = (1, 3)  # [ {"


def _run(engine_name: str, tmp_path: Path) -> tuple[list, list]:
    engine = engines.get(engine_name)
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"{engine_name} unavailable: {why}")
    # the paths in this order, each state compared once (so the second path fills no
    # mask before its last state, as the cover walks do); no other walks between
    plan = WalkPlan(
        paths=((1, 2), PREFIX),
        cover_states=0,
        random_walks=0,
        full_cover_limit=0,
        every_step=False,
    )
    spec = Spec.schema("test/any", json.dumps({}))
    prepared = {engine.name: engine.prepare(VOCAB)}
    outcome = dialect_part(spec, VOCAB, engine, prepared, plan, True, 30.0)
    bugs = [d for d in outcome.diff.disagreements if d.verdict == "bug"]
    return bugs, [m for m in outcome.minimal.values() if m is not None]


def test_a_reused_matchers_stale_answer_is_a_finding_that_replays(tmp_path: Path) -> None:
    bugs, minimal = _run("llguidance", tmp_path)
    stale = [d for d in bugs if d.rule == STALE_AFTER_RESET]
    assert stale, [(d.prefix, d.rule, d.why) for d in bugs]
    d = stale[0]
    # the first walk, a mask at each state it reached (then the reset before the second)
    history = (FILL, 1, FILL, 2, FILL)
    assert d.prefix_ids == PREFIX and d.history == history, (d.prefix_ids, d.history)
    assert "replaying the 1 walk before the reset brings the wrong answer back" in d.why
    assert not [b for b in bugs if b.rule != STALE_AFTER_RESET]  # nothing else is wrong
    m = next(m for m in minimal if m.rule == STALE_AFTER_RESET)
    assert m.history and len(m.tokens) <= len(TOKENS) + 1
    found = repro.witnesses(m)
    text = repro.explanation(m, found)
    assert "and a reset of the matcher, then after the prefix" in text, text
    path = tmp_path / "stale.py"
    path.write_text(repro.script(m, found, "llguidance stale after reset", text))
    reproduced, output = repro.run(path)
    assert reproduced, output
    # without the history the same script walks a new matcher, which is right
    path.write_text(path.read_text().replace(f"HISTORY = {list(m.history)}", "HISTORY = []"))
    reproduced, output = repro.run(path)
    assert not reproduced and "FIXED" in output, output


def test_an_engine_without_history_gives_no_stale_finding(tmp_path: Path) -> None:
    """xgrammar answers the same walks alike before and after its reset: whatever else
    it gets wrong here, none of it is put down to history."""
    bugs, _ = _run("xgrammar", tmp_path)
    assert not [d for d in bugs if d.rule == STALE_AFTER_RESET], [(d.prefix, d.why) for d in bugs]


def test_a_grammar_stale_answer_shrinks_to_a_repro_of_its_grammar(tmp_path: Path) -> None:
    """llguidance 1.9.1 on balanced brackets: after `(()` and a mask, a reset and
    `(((`, it refuses `))` (`((()))` is a sentence), where a new matcher allows it. The
    tiny case compiles the grammar (not the finding's empty regex), and its repro
    carries the grammar and replays the history."""
    from harness.diff.judge.triage import VerdictKind
    from harness.diff.shrink.stale import minimize_stale
    from harness.diff.walk.disagreement import Disagreement

    engine = engines.get("llguidance")
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"llguidance unavailable: {why}")
    tokens = [b"(", b")", b"()", b"))", b"(()", b"(((", b")))", b"))(", b"())))"]
    vocab = tiny_vocabulary(tokens)
    ids = {t: i for i, t in enumerate(vocab.tokens)}
    grammar = Spec.grammar("test/balanced", 'root ::= ("(" root ")")*', "gbnf")
    d = Disagreement(
        engine="llguidance",
        version=engine.version(),
        spec_id=grammar.id,
        vocab=vocab.name,
        regex="",
        prefix_ids=(ids[b"((("],),
        prefix=b"(((",
        reference_only=(ids[b"))"], ids[b")))"]),
        engine_only=(),
        n_reference_only=2,
        n_engine_only=0,
        accepting_expected=False,
        accepting_actual=False,
        verdict=VerdictKind.BUG,
        rule=STALE_AFTER_RESET,
        why="",
        agrees_with_tokensdfa=False,
        history=(ids[b"(()"], FILL),
    )
    m = minimize_stale(d, engine, vocab, 30.0, grammar=grammar)
    assert m is not None and m.grammar == grammar.text and m.notation == "gbnf"
    assert m.history and len(m.tokens) <= 5, m.tokens
    found = repro.witnesses(m)
    path = tmp_path / "stale_grammar.py"
    text = repro.explanation(m, found)
    path.write_text(repro.script(m, found, "llguidance stale after reset", text))
    reproduced, output = repro.run(path)
    assert reproduced, output
