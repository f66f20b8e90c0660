"""Seeded faults in the serving protocol, on TokensDFA exact: a rollback that keeps one
stale state, a batch fill that gives each row its neighbour's mask, a draft check that
counts its refused last token (committing it). The hypothesis state machine
(`tests/test_protocol_machine.py`) and the differ's protocol walks
(`harness.diff.walk.serving`, scored in `tests/test_protocol_walks.py`) must catch each.
The faults live in the adapter (the matcher's protocol calls), not in the index, so a
standalone repro (the engine's own package) never shows them: what is checked of their
findings is that the shrunk history replays the fault on a new matcher."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.engines.base import Compiled, Matcher
from harness.engines.rust_index import IndexCompiled, IndexMatcher
from harness.engines.tokensdfa import TokensDFAEngine
from harness.spec import Spec


class _StaleRollbackMatcher(IndexMatcher):
    """Rolls back one token too few when asked for more than one: a stale state kept."""

    def rollback(self, count: int) -> bool:
        return super().rollback(count - 1 if count > 1 else count)


class _CommitsRefusedMatcher(IndexMatcher):
    """Counts a draft's refused token as valid when it is the last: the draft commits it."""

    def validate(self, tokens: Sequence[int]) -> int | None:
        counted = super().validate(tokens)
        return len(tokens) if counted == len(tokens) - 1 else counted


class _FaultyMatchers(TokensDFAEngine):
    """TokensDFA exact whose matchers are `matcher_class`."""

    matcher_class: type[IndexMatcher] = IndexMatcher

    def compile(self, prepared: Any, spec: Spec) -> Compiled:
        inner = super().compile(prepared, spec)
        assert isinstance(inner, IndexCompiled)
        index, eos = inner.index, inner.matcher().eos_id
        made = self.matcher_class

        class _Compiled(IndexCompiled):
            def matcher(self) -> Matcher:
                return made(index, eos, "faulty", spec.id)

        return _Compiled(index, eos, "faulty", spec.id)


class StaleRollbackEngine(_FaultyMatchers):
    name = "tokensdfa-stale-rollback"
    matcher_class = _StaleRollbackMatcher


class CommitsRefusedEngine(_FaultyMatchers):
    name = "tokensdfa-commits-refused"
    matcher_class = _CommitsRefusedMatcher


class NeighbourRowEngine(TokensDFAEngine):
    name = "tokensdfa-neighbour-row"

    def fill_batch(self, matchers: Sequence[Matcher], out: np.ndarray, threads: int = 1) -> None:
        super().fill_batch(matchers, out, threads)
        out[1:] = out[:-1].copy()  # each row gets its neighbour's mask


PROTOCOL_FAULTS: dict[str, type[TokensDFAEngine]] = {
    "stale-rollback": StaleRollbackEngine,
    "neighbour-row": NeighbourRowEngine,
    "commits-refused": CommitsRefusedEngine,
}
