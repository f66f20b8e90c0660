"""The differ's serving-protocol walks (`harness.diff.walk.serving`): the history encoding,
the seeded protocol faults caught as bugs and shrunk to a few operations, correct
engines left without a protocol bug, and the repro script replaying a history through
the engine's own calls (FIXED on the real engine, REPRODUCED once the script's rollback
is the faulty one)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_engines import _available

from harness.diff.findings import repro
from harness.diff.judge.triage import VerdictKind
from harness.diff.shrink.protocol_shrink import minimize_protocol
from harness.diff.walk.differ import Differ
from harness.diff.walk.history import (
    FILL,
    RESET,
    held_after,
    map_tokens,
    refuse_op,
    rollback_op,
    tokens_of,
    units,
    validate_op,
)
from harness.diff.walk.plan import WalkPlan
from harness.diff.walk.serving import PROTOCOL_RULES
from harness.spec import Spec
from tests.mutation import suite
from tests.mutation.protocol_faults import StaleRollbackEngine

pytest.importorskip("tokensdfa")

PROTOCOL_ONLY = WalkPlan(cover_states=0, full_cover_limit=0, random_walks=0, protocol_walks=4)


def test_a_history_says_what_the_matcher_holds() -> None:
    ops = [5, FILL, 6, 7, rollback_op(2), validate_op(2), 8, 9, refuse_op(4), 8, RESET, 3]
    assert [u[0] for u in units(ops)][5:7] == [validate_op(2), refuse_op(4)]
    assert held_after(ops) == [3]
    assert held_after(ops[:-2]) == [5, 8]
    assert held_after([5, rollback_op(2)]) is None  # more rolled back than held
    assert tokens_of(ops) == [5, 6, 7, 8, 9, 4, 8, 3]
    renamed = map_tokens(ops, {t: t + 100 for t in tokens_of(ops)})
    assert held_after(renamed) == [103] and refuse_op(104) in renamed


def test_every_protocol_fault_is_caught_and_shrunk() -> None:
    outcomes = suite.run_protocol_faults()
    expected = {
        "stale-rollback": "rollback-stale",
        "neighbour-row": "batch-row-mismatch",
        "commits-refused": "draft-miscounted",
    }
    for kind, rule in expected.items():
        mine = [o for o in outcomes if o.kind == kind]
        caught = [o for o in mine if o.rules]
        # a stale state the string's loop leads back to has no effect: caught elsewhere
        assert len(caught) >= len(mine) - 1, mine
        for o in caught:
            assert o.rules == [rule], o
            assert o.shrunk_ops is not None and o.shrunk_ops <= 6, o


@pytest.mark.parametrize("name", ["tokensdfa", "tokensdfa-lazy", "llguidance", "xgrammar"])
def test_correct_engines_have_no_protocol_bug(name: str) -> None:
    engine = _available(name)
    vocab = suite.suite_vocabulary()
    regex = r"(cat|car)s? [a-z]{2,4}!"
    spec = Spec.regex("protocol/clean", regex)
    compiled = engine.compile(engine.prepare(vocab), spec)
    plan = WalkPlan(cover_states=0, full_cover_limit=0, random_walks=0, protocol_walks=12)
    result = Differ(spec.id, regex, vocab, {name: (engine, compiled)}).run(plan)
    assert result.protocol_walks[name] == 12 and result.protocol_ops[name] > 12 * 4
    assert not [d for d in result.disagreements if d.rule in PROTOCOL_RULES]


def test_the_repro_replays_the_history_through_the_engines_own_calls(tmp_path: Path) -> None:
    engine = StaleRollbackEngine()
    vocab = suite.suite_vocabulary()
    regex = r"(cat|car)s? [a-z]{2,4}!"
    spec = Spec.regex("protocol/stale", regex)
    compiled = engine.compile(engine.prepare(vocab), spec)
    result = Differ(spec.id, regex, vocab, {engine.name: (engine, compiled)}).run(PROTOCOL_ONLY)
    bug = next(d for d in result.disagreements if d.verdict == VerdictKind.BUG)
    m = minimize_protocol(bug, engine, vocab, budget_s=30.0)
    assert m is not None and m.what == "protocol" and m.rule == "rollback-stale"
    # the repro runs TokensDFA's own package, where rollback is right: FIXED
    m = replace(m, engine="tokensdfa")
    found = repro.witnesses(m)
    text = repro.explanation(m, found)
    assert "rolled back" in text
    script = repro.script(m, found, "protocol", text)
    path = tmp_path / "fixed.py"
    path.write_text(script, encoding="utf-8")
    fixed = subprocess.run([sys.executable, "-I", path.name], cwd=tmp_path, capture_output=True)
    assert fixed.returncode == 0 and b"FIXED" in fixed.stdout
    # the same script with the fault's rollback (one token too few) reproduces it
    faulty = script.replace(
        "    def rollback(self, count):\n        if count:",
        "    def rollback(self, count):\n        count = count - 1 if count > 1 else count\n"
        "        if count:",
    )
    assert faulty != script
    path.write_text(faulty, encoding="utf-8")
    reproduced, output = repro.run(path)
    assert reproduced, output
