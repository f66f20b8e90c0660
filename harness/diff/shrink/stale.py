"""A `stale-after-reset` finding (`harness.diff.walk.lanes.Lane.stale`) shrunk to a few tokens.

The minimizer's probes walk new matchers, so a wrong answer that only a reused matcher
gives never shows there. Here the case is rebuilt directly on a tiny vocabulary of the
history's tokens, the prefix's and a few witnesses of each side: one matcher replays the
history (`harness.diff.walk.history`) and is reset before walking the prefix; a new matcher
walks the prefix alone. While their answers differ the case holds, and delta debugging
drops the history's walks, then the witnesses, it does not need (`shrink_history`, a
shrinker under the contract of `harness.diff.shrink.contract`; `minimize_stale` is its
adapter). The tiny case compiles the finding's own spec: its regex, its schema or its
grammar. The repro script replays the same history (`HISTORY`) before `PREFIX`.
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
from harness.diff.walk.history import answer_after, joined, walks
from harness.engines.base import Engine
from harness.spec import Spec
from harness.vocab import Vocabulary

# Witness tokens of each side (engine only, reference only) the search starts with.
WITNESSES = 8
# The latest walks of a history tried alone before delta debugging over all of them.
SINGLE_WALKS = 64


@dataclass(frozen=True)
class StaleCase:
    """What `shrink_history` shrinks: the walks of the history replayed before the
    reset (token ids and `FILL`s of the real vocabulary, `harness.diff.walk.history`),
    and the witness tokens the tiny vocabulary holds besides the history's and the
    prefix's."""

    walks: tuple[tuple[int, ...], ...]
    witnesses: tuple[bytes, ...]


def shrink_history(start: StaleCase, keeps: Keeps[StaleCase], deadline: float) -> StaleCase:
    """The shrinker contract over a stale case: one earlier walk often suffices, so the
    latest walks are tried alone first; then delta debugging drops walks (never all of
    them), then witnesses."""
    parts = list(start.walks)
    witnesses = start.witnesses
    for part in parts[::-1][:SINGLE_WALKS]:
        if time.monotonic() > deadline:
            break
        if keeps(StaleCase((part,), witnesses)):
            parts = [part]
            break
    parts = ddmin(parts, lambda ps: bool(ps) and keeps(StaleCase(tuple(ps), witnesses)), deadline)
    kept = ddmin(list(witnesses), lambda ws: keeps(StaleCase(tuple(parts), tuple(ws))), deadline)
    return StaleCase(tuple(parts), tuple(kept))


def minimize_stale(
    d: Disagreement,
    engine: Engine,
    voc: Vocabulary,
    budget_s: float,
    schema: str = "",
    grammar: Spec | None = None,
) -> Minimal | None:
    """The smallest case found of `d` (a `stale-after-reset` disagreement with its
    history), or None when the tiny vocabulary does not show it: the adapter of
    `shrink_history`, whose `keeps` rebuilds the case on a tiny vocabulary (`_case`).
    `grammar`: the grammar spec `d` was found on, which the tiny case compiles (a
    regex, or `schema`, otherwise)."""
    deadline = time.monotonic() + budget_s
    sides = [voc.tokens[i] for i in (*d.engine_only[:WITNESSES], *d.reference_only[:WITNESSES])]
    witnesses = tuple(t for t in dict.fromkeys(sides) if t)

    def holds(case: StaleCase) -> bool:
        ops = joined(case.walks)
        return _case(d, engine, voc, schema, grammar, ops, case.witnesses) is not None

    start = StaleCase(tuple(tuple(w) for w in walks(d.history)), witnesses)
    if not start.walks or not holds(start):
        return None
    shrunk = shrink_history(start, holds, deadline)
    found = _case(d, engine, voc, schema, grammar, joined(shrunk.walks), shrunk.witnesses)
    assert found is not None  # each step kept the case holding
    vocab, history, prefix, (mask, accepting) = found
    return replayed_minimal(
        d,
        engine,
        vocab,
        prefix,
        (mask, accepting),
        history,
        what="mask",
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
) -> tuple[Vocabulary, list[int], list[int], tuple[np.ndarray, bool]] | None:
    """(vocabulary, history, prefix ids, the answer after the history) on a tiny
    vocabulary of the tokens of history `ops` (ids of `voc`), of the prefix and of
    `witnesses`, when that answer differs from a new matcher's; else None."""
    used = [voc.tokens[t] for t in (*ops, *d.prefix_ids) if t >= 0]
    vocab = tiny_vocabulary(list(dict.fromkeys([*used, *(w for w in witnesses if w not in used)])))
    index = {t: i for i, t in enumerate(vocab.tokens) if i != vocab.eos_id}
    history = [index[voc.tokens[t]] if t >= 0 else t for t in ops]
    prefix = [index[voc.tokens[i]] for i in d.prefix_ids]
    compiled = compile_case(d, engine, vocab, schema, grammar, "stale")
    if compiled is None:
        return None
    stale = answer_after(compiled, history, prefix, vocab.mask_words)
    fresh = answer_after(compiled, (), prefix, vocab.mask_words)
    if stale is None or fresh is None:
        return None
    if stale[1] == fresh[1] and np.array_equal(stale[0], fresh[0]):
        return None
    return vocab, history, prefix, stale
