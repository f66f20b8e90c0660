"""The serving protocol at random: a hypothesis state machine drives one engine's matcher
through what a server does (take a token its mask allows, roll back a few where the
engine can, reset, fill one mask or a batch of one) and checks after every step that
the matcher answers as a new matcher replaying the tokens it holds: the same mask bit
for bit, the same accepting status, and a batch fill equal to the single fill. It runs
for every engine, bounded under `make test` (the `ci` profile), far longer under
`make fuzz`. The reference comparison is the differ's; this checks the protocol. Three
seeded faults (`tests.mutation.protocol_faults`: a rollback that keeps one stale state,
a batch fill that copies a neighbour's row, a draft check that commits the refused
token) must make it fail."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from test_engines import _available

from harness import engines
from harness import vocab as vocabularies
from harness.engines.base import Compiled, Engine, Matcher, allowed_ids
from harness.spec import Spec
from tests.mutation.protocol_faults import (
    CommitsRefusedEngine,
    NeighbourRowEngine,
    StaleRollbackEngine,
)

pytest.importorskip("tokensdfa")

VOCAB = vocabularies.load("gpt2")
REGEX = Spec.regex(
    "protocol/kv", r'\{"[a-z]{1,6}": ([0-9]{1,3}|"[a-z ]{0,8}")(, "[a-z]{1,6}": [0-9]{1,3}){0,2}\}'
)
GRAMMAR = Spec.grammar(
    "protocol/nest", 'root ::= "[" (item ("," item)*)? "]"\nitem ::= [0-9]{1,2} | root', "gbnf"
)
_COMPILED: dict[str, Compiled] = {}


def _compiled(engine: Engine) -> Compiled:
    if engine.name not in _COMPILED:
        spec = REGEX if engine.capabilities.regex else GRAMMAR
        _COMPILED[engine.name] = engine.compile(engine.prepare(VOCAB), spec)
    return _COMPILED[engine.name]


def _answer(m: Matcher) -> tuple[bytes, bool]:
    out = np.zeros(VOCAB.mask_words, dtype=np.int32)
    m.fill_mask(out)
    return out.tobytes(), m.is_accepting()


def _allowed(m: Matcher) -> list[int]:
    """The text tokens `m`'s mask allows (EOS left out)."""
    mask, _ = _answer(m)
    ids = allowed_ids(np.frombuffer(mask, dtype=np.int32), VOCAB.size)
    return [int(t) for t in ids if int(t) != VOCAB.eos_id]


def _refused(m: Matcher) -> int | None:
    """A text token `m`'s mask refuses (the smallest id), or None."""
    allowed = set(_allowed(m))
    return next((t for t in range(VOCAB.size) if t not in allowed and t != VOCAB.eos_id), None)


class Protocol(RuleBasedStateMachine):
    engine_name = ""

    def __init__(self) -> None:
        super().__init__()
        self.engine = _available(self.engine_name)
        self.compiled = _compiled(self.engine)
        self.matcher = self.compiled.matcher()
        self.held: list[int] = []  # the tokens the matcher holds since its last reset

    @rule(data=st.data())
    def take(self, data: Any) -> None:
        allowed = _allowed(self.matcher)
        if not allowed:
            return
        token = data.draw(st.sampled_from(allowed[:2000]), label="token")
        if self.matcher.advance(token):
            self.held.append(token)
        else:  # the mask allowed it: advancing must not fail
            raise AssertionError(f"{self.engine_name} refused token {token} its mask allows")

    @precondition(lambda self: self.engine.rollback and self.held)
    @rule(data=st.data())
    def roll_back(self, data: Any) -> None:
        back = data.draw(st.integers(1, len(self.held)), label="rollback")
        assert self.matcher.rollback(back)
        del self.held[-back:]

    @rule(data=st.data())
    def draft(self, data: Any) -> None:
        """Speculative decoding: a draft of tokens the masks allow with a refused one
        planted at a random depth. `validate` (where the engine has it) counts the
        allowed ones; advancing takes them and refuses the planted one; then the target
        keeps a prefix of them and the rest is rolled back (where the engine can)."""
        helper = self._replayed()
        good: list[int] = []
        for _ in range(data.draw(st.integers(0, 3), label="draft")):
            allowed = _allowed(helper)
            if not allowed:
                break
            good.append(data.draw(st.sampled_from(allowed[:2000]), label="drafted"))
            assert helper.advance(good[-1])
        refused = _refused(helper)
        if refused is None:
            return
        draft = [*good, refused]
        counted = self.matcher.validate(draft)
        assert counted in (None, len(good)), (counted, len(good))
        taken = 0
        while taken < len(draft) and self.matcher.advance(draft[taken]):
            taken += 1
        assert taken == len(good), (taken, len(good))
        self.held += good
        if self.engine.rollback and good:
            back = data.draw(st.integers(0, len(good)), label="rejected")
            assert self.matcher.rollback(back)
            del self.held[len(self.held) - back :]

    def _replayed(self) -> Matcher:
        fresh = self.compiled.matcher()
        for token in self.held:
            assert fresh.advance(token)
        return fresh

    @rule()
    def reset(self) -> None:
        self.matcher.reset()
        self.held.clear()

    @invariant()
    def answers_as_a_new_matcher(self) -> None:
        fresh = self._replayed()
        assert _answer(self.matcher) == _answer(fresh), (self.engine_name, self.held)

    @invariant()
    def a_batch_holds_each_matchers_single_fill(self) -> None:
        """The matcher beside a new one (at the start) in a batch of two: each row is
        its own matcher's single fill."""
        start = self.compiled.matcher()
        batch = np.zeros((2, VOCAB.mask_words), dtype=np.int32)
        self.engine.fill_batch([self.matcher, start], batch, 2)
        assert batch[0].tobytes() == _answer(self.matcher)[0], self.held
        assert batch[1].tobytes() == _answer(start)[0], self.held


# A quarter of the profile's examples, ten steps each: every step replays the held
# tokens on a new matcher, and ten engines run (`make fuzz` raises the profile).
RUNS = settings(
    max_examples=max(10, settings.default.max_examples // 4),
    stateful_step_count=10,
    deadline=None,  # an example is ten steps, each replaying on a new matcher
)


def _test_case(name: str) -> type:
    machine = type(f"Protocol_{name.replace('-', '_')}", (Protocol,), {"engine_name": name})
    case = machine.TestCase
    case.settings = RUNS
    return case


for _name in engines.ENGINE_NAMES:
    globals()[f"TestProtocol_{_name.replace('-', '_')}"] = _test_case(_name)


@pytest.mark.parametrize(
    ("faulty", "check"),
    [
        (StaleRollbackEngine, "answers_as_a_new_matcher"),
        (NeighbourRowEngine, "a_batch_holds_each_matchers_single_fill"),
        (CommitsRefusedEngine, "draft"),
    ],
)
def test_the_machine_catches_protocol_faults(
    faulty: type[Engine], check: str, monkeypatch: Any
) -> None:
    from hypothesis.stateful import run_state_machine_as_test

    machine = type("Faulty", (Protocol,), {"engine_name": "tokensdfa"})
    monkeypatch.setattr(engines, "get", lambda name: faulty())
    _COMPILED.pop("tokensdfa", None)
    try:
        # generation only, no example database: a fault is found within a few steps,
        # and shrinking its example (each step replays on new matchers) costs minutes
        found = settings(RUNS, max_examples=200, phases=[Phase.generate], database=None)
        with pytest.raises(AssertionError) as info:
            run_state_machine_as_test(machine, settings=found)
        assert any(entry.name == check for entry in info.traceback), info.traceback
    finally:
        _COMPILED.pop("tokensdfa", None)
