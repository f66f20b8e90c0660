"""A serving-protocol finding (`harness.diff.walk.serving`) shrunk to a few operations on
a tiny vocabulary.

The finding's history replays the protocol bug on a new matcher (`serving.replay`):
after it, the matcher answers otherwise than a new matcher holding the same tokens, or
it broke the protocol on the way (took a refused token, miscounted a draft, filled a
batch row wrong). Here the case is rebuilt on a tiny vocabulary of the history's tokens
and a few witnesses of each side, and delta debugging drops the operations (a draft's
check with its tokens is one) and then the witnesses it does not need, keeping the case
holding at each step (a shrinker under `harness.diff.shrink.contract`). The repro script
replays the shrunk history (`HISTORY`) through the engine's own API and holds the
matcher to a new one walking `PREFIX`, the tokens the history leaves it holding.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.diff.shrink.contract import Keeps
from harness.diff.shrink.ddmin import ddmin
from harness.diff.shrink.minimal import Minimal
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.diff.shrink.replayed import compile_case, replayed_minimal
from harness.diff.walk.disagreement import Disagreement
from harness.diff.walk.history import held_after, map_tokens, tokens_of, units
from harness.diff.walk.protocol_replay import fresh_answer, replay
from harness.engines.base import Engine
from harness.spec import Spec
from harness.vocab import Vocabulary

WITNESSES = 8


@dataclass(frozen=True)
class ProtocolCase:
    """What `shrink_protocol` shrinks: the history's operations (ids of the real
    vocabulary) and the witness tokens the tiny vocabulary holds besides theirs."""

    ops: tuple[tuple[int, ...], ...]
    witnesses: tuple[bytes, ...]


def shrink_protocol(
    start: ProtocolCase, keeps: Keeps[ProtocolCase], deadline: float
) -> ProtocolCase:
    """Delta debugging over the operations, then over the witnesses."""
    ops = ddmin(list(start.ops), lambda o: keeps(ProtocolCase(tuple(o), start.witnesses)), deadline)
    kept = ddmin(
        list(start.witnesses), lambda w: keeps(ProtocolCase(tuple(ops), tuple(w))), deadline
    )
    return ProtocolCase(tuple(ops), tuple(kept))


@dataclass
class _Shown:
    vocab: Vocabulary
    ops: list[int]
    held: list[int]
    answer: tuple[np.ndarray, bool]
    broken: list[str]


def minimize_protocol(
    d: Disagreement,
    engine: Engine,
    voc: Vocabulary,
    budget_s: float,
    schema: str = "",
    grammar: Spec | None = None,
) -> Minimal | None:
    """The smallest case found of protocol finding `d`, or None when its history does
    not show it on a tiny vocabulary (the adapter of `shrink_protocol`)."""
    deadline = time.monotonic() + budget_s
    sides = [voc.tokens[i] for i in (*d.engine_only[:WITNESSES], *d.reference_only[:WITNESSES])]
    witnesses = tuple(t for t in dict.fromkeys(sides) if t)

    def holds(case: ProtocolCase) -> bool:
        flat = [op for unit in case.ops for op in unit]
        return _case(d, engine, voc, schema, grammar, flat, case.witnesses) is not None

    start = ProtocolCase(tuple(tuple(u) for u in units(d.history)), witnesses)
    if not start.ops or not holds(start):
        return None
    shrunk = shrink_protocol(start, holds, deadline)
    flat = [op for unit in shrunk.ops for op in unit]
    shown = _case(d, engine, voc, schema, grammar, flat, shrunk.witnesses)
    assert shown is not None  # each step kept the case holding
    return replayed_minimal(
        d,
        engine,
        shown.vocab,
        shown.held,
        shown.answer,
        shown.ops,
        what=d.what,
        schema=schema,
        grammar=grammar,
    )


def _case(
    d: Disagreement,
    engine: Engine,
    voc: Vocabulary,
    schema: str,
    grammar: Spec | None,
    ops: Sequence[int],
    witnesses: Sequence[bytes],
) -> _Shown | None:
    """The case on a tiny vocabulary of the tokens `ops` names and `witnesses`, when
    replaying `ops` there still shows a protocol bug; else None."""
    held = held_after(ops)
    if held is None:
        return None
    used = [voc.tokens[t] for t in tokens_of(ops)]
    vocab = tiny_vocabulary(list(dict.fromkeys([*used, *(w for w in witnesses if w not in used)])))
    index = {t: i for i, t in enumerate(vocab.tokens) if i != vocab.eos_id}
    tiny_ops = map_tokens(ops, {t: index[voc.tokens[t]] for t in tokens_of(ops)})
    tiny_held = [index[voc.tokens[t]] for t in held]
    compiled = compile_case(d, engine, vocab, schema, grammar, "protocol")
    if compiled is None:
        return None
    done = replay(engine, compiled, tiny_ops, vocab.mask_words)
    if done.answer is None:
        return None
    fresh = fresh_answer(compiled, tiny_held, vocab.mask_words)
    if fresh is None:
        return None
    same = fresh[1] == done.answer[1] and np.array_equal(fresh[0], done.answer[0])
    if same and not done.broken:
        return None
    return _Shown(vocab, tiny_ops, tiny_held, done.answer, done.broken)
