"""Every engine's batch step (`Engine.fill_batch`, `Engine.advance_batch`, and a standing
batch, `Engine.sequences`) against its single-sequence surface: sequences of two specs at
different depths in one batch; each row of the batch fill must equal that matcher's own
`fill_mask` bit for bit, at one thread and at two (the engine's batch API where it has
one: TokensDFA's `fill_masks` and `Batch`, llguidance's executor, xgrammar's
BatchGrammarMatcher; the loop elsewhere), and a batch advance must take and refuse what
single advances do."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_engines import _available

from harness import engines
from harness import vocab as vocabularies
from harness.engines.base import Engine, Matcher
from harness.spec import Spec

pytest.importorskip("tokensdfa")

VOCAB = vocabularies.load("gpt2")
REGEX_SPECS = (
    (Spec.regex("batch/words", "[a-z]{2,8}( [a-z]{2,8}){0,3}"), "hello world again"),
    (Spec.regex("batch/object", r'\{"k": [0-9]{1,5}\}'), '{"k": 12345}'),
)
GRAMMAR_SPECS = (
    (Spec.grammar("batch/call", 'root ::= "f(" [a-z]+ ")"', "gbnf"), "f(abc)"),
    (Spec.grammar("batch/list", 'root ::= "[" [0-9]+ ("," [0-9]+)* "]"', "gbnf"), "[1,22,3]"),
)


def _specs(engine: Engine) -> tuple[tuple[Spec, str], ...]:
    return REGEX_SPECS if engine.capabilities.regex else GRAMMAR_SPECS


def _batch(engine: Engine, prepared: Any) -> tuple[list[Matcher], list[list[int]]]:
    """Six matchers, three per spec, advanced up to 0, 1 and 2 tokens along the spec's
    text (an engine may end early: Formatron takes only EOS once the text is a match);
    with each, the rest of its path."""
    matchers, rests = [], []
    for spec, text in _specs(engine):
        compiled = engine.compile(prepared, spec)
        path = VOCAB.encode(text)
        for depth in range(3):
            m = compiled.matcher()
            taken = 0
            while taken < depth and m.advance(path[taken]):
                taken += 1
            matchers.append(m)
            rests.append(path[taken:])
    return matchers, rests


@pytest.mark.parametrize("name", engines.ENGINE_NAMES)
def test_batch_step_equals_single_steps(name: str) -> None:
    engine = _available(name)
    prepared = engine.prepare(VOCAB)
    words = VOCAB.mask_words
    for threads in (1, 2):
        matchers, rests = _batch(engine, prepared)
        out = np.full((len(matchers), words), -1, dtype=np.int32)
        engine.fill_batch(matchers, out, threads)
        single = np.zeros(words, dtype=np.int32)
        for row, m in enumerate(matchers):
            m.fill_mask(single)
            assert np.array_equal(out[row], single), (name, threads, row)
        # the next token of each path, and EOS for the last matcher (refused by all)
        tokens = [rest[0] for rest in rests[:-1]] + [VOCAB.eos_id]
        twins, _ = _batch(engine, prepared)
        assert engine.advance_batch(matchers, tokens, threads) == [
            twin.advance(t) for twin, t in zip(twins, tokens, strict=True)
        ]
        engine.fill_batch(matchers, out, threads)
        for row, twin in enumerate(twins):
            twin.fill_mask(single)
            assert np.array_equal(out[row], single), (name, threads, "after advance", row)


@pytest.mark.parametrize("name", engines.ENGINE_NAMES)
def test_standing_batch_steps_equal_matcher_steps(name: str) -> None:
    """`Engine.sequences` over both specs, three sequences each, stepped along their
    texts (a fresh sequence takes no token; EOS at the end is refused by all), and two
    of them reset half way: after every step each row equals the mask of a matcher that
    took the same tokens, and each sequence moved where that matcher did."""
    engine = _available(name)
    prepared = engine.prepare(VOCAB)
    pairs = [(engine.compile(prepared, spec), VOCAB.encode(text)) for spec, text in _specs(engine)]
    rows = [pairs[i % 2] for i in range(6)]
    for threads in (1, 2):
        seqs = engine.sequences([c for c, _ in rows])
        twins = [c.matcher() for c, _ in rows]
        out = np.full((len(rows), VOCAB.mask_words), -1, dtype=np.int32)
        single = np.zeros(VOCAB.mask_words, dtype=np.int32)
        longest = max(len(path) for _, path in rows)
        plans: list[list[int] | None] = [None]
        plans += [[path[k] if k < len(path) else -1 for _, path in rows] for k in range(longest)]
        plans.append([VOCAB.eos_id] * len(rows))
        for k, plan in enumerate(plans):
            if k == 3:
                seqs.reset([1, 4])
                twins[1].reset()
                twins[4].reset()
            took = seqs.step(plan, out, threads)
            for row, twin in enumerate(twins):
                expected = plan is not None and plan[row] >= 0 and twin.advance(plan[row])
                assert bool(took[row]) == expected, (name, threads, k, row)
                twin.fill_mask(single)
                assert np.array_equal(out[row], single), (name, threads, k, row)


@pytest.mark.parametrize("name", ["tokensdfa", "llguidance", "xgrammar"])
def test_a_wrong_batch_buffer_is_an_engine_error(name: str) -> None:
    from harness.errors import EngineError

    engine = _available(name)
    matchers, _ = _batch(engine, engine.prepare(VOCAB))
    with pytest.raises(EngineError):
        engine.fill_batch(matchers, np.zeros((len(matchers) - 1, VOCAB.mask_words), np.int32))
