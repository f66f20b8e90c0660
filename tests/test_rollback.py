"""Rollback, as speculative decoding drives it: a matcher takes tokens, gives back the
last k (`Matcher.rollback`, through the engine's own API: llguidance's and xgrammar's
`rollback`, TokensDFA's kept states) and goes on. After each rollback its mask and
accepting status must equal a new matcher's after the tokens kept, and going on must
take the same tokens again; a rollback past what was taken is refused with no change.
Engines without a rollback say so (`Engine.rollback` false, `rollback` returns False)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_engines import _available

from harness import engines
from harness import vocab as vocabularies
from harness.engines.base import Compiled, Engine
from harness.spec import Spec

pytest.importorskip("tokensdfa")

VOCAB = vocabularies.load("gpt2")
SPECS = (
    (
        Spec.regex("rollback/object", r'\{"k": "[a-z ]{0,20}", "n": [0-9]{1,4}\}'),
        '{"k": "some words here", "n": 1234}',
    ),
    (
        Spec.grammar(
            "rollback/list",
            'root ::= "[" item ("," item)* "]"\nitem ::= [0-9]+ | "[" item "]"',
            "gbnf",
        ),
        "[1,[22],[[3]],44]",
    ),
)
ROLLING = [n for n in engines.ENGINE_NAMES if engines.get(n).rollback]


def _answer(compiled: Compiled, ids: list[int]) -> tuple[bytes, bool]:
    m = compiled.matcher()
    for t in ids:
        assert m.advance(t)
    out = np.zeros(VOCAB.mask_words, dtype=np.int32)
    m.fill_mask(out)
    return out.tobytes(), m.is_accepting()


def _specs(engine: Engine) -> list[tuple[Spec, str]]:
    return [(s, t) for s, t in SPECS if s.kind != "regex" or engine.capabilities.regex]


@pytest.mark.parametrize("name", ROLLING)
def test_rollback_equals_a_fresh_replay(name: str) -> None:
    engine = _available(name)
    prepared = engine.prepare(VOCAB)
    rng = random.Random(0)
    checked = 0
    for spec, text in _specs(engine):
        if spec.kind == "grammar" and not engine.capabilities.grammars:
            continue
        compiled = engine.compile(prepared, spec)
        path = VOCAB.encode(text)
        m = compiled.matcher()
        out = np.zeros(VOCAB.mask_words, dtype=np.int32)
        at = 0
        while at < len(path):
            m.fill_mask(out)
            if not m.advance(path[at]):
                # a policy's refusal (canonical tokenization, an eager end): the walk
                # ends here, what it took still checked below
                path = path[:at]
                break
            at += 1
            if rng.random() < 0.5:
                back = rng.randint(1, at)
                assert m.rollback(back)
                at -= back
                m.fill_mask(out)
                assert (out.tobytes(), m.is_accepting()) == _answer(compiled, path[:at]), (
                    name,
                    spec.id,
                    at,
                )
                checked += 1
        assert not m.rollback(len(path) + 1)  # more than was taken: refused, no change
        m.fill_mask(out)
        assert (out.tobytes(), m.is_accepting()) == _answer(compiled, path)
        m.reset()
        assert not m.rollback(1)
    assert checked > 5


def test_an_engine_without_rollback_refuses_it() -> None:
    names = [n for n in engines.ENGINE_NAMES if not engines.get(n).rollback]
    assert "outlines-core" in names and "tokensdfa" not in names
    engine = _available("outlines-core")
    compiled = engine.compile(engine.prepare(VOCAB), SPECS[0][0])
    m = compiled.matcher()
    assert m.advance(VOCAB.encode("{")[0])
    assert not m.rollback(1)
