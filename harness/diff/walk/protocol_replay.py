"""Replaying a serving-protocol history (`harness.diff.walk.history`) on a new matcher,
and the answers it is held to: a new matcher that took the same tokens
(`fresh_answer`), and a batch of two whose rows must be the single fills
(`batch_rows_wrong`). The protocol walks (`harness.diff.walk.serving`) check with these
as they go; the protocol shrinker (`harness.diff.shrink.protocol_shrink`) replays its
candidate histories with `replay`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from harness.diff.walk.history import decode, hold, units
from harness.engines.base import Compiled, Engine, Matcher
from harness.errors import EngineError, TokensieveError

Answer = tuple[np.ndarray, bool]


def clean(answer: Answer, tail: int | None) -> Answer:
    """`answer` with the bits past the vocabulary cleared (never tokens)."""
    if tail is not None:
        answer[0][-1] &= tail
    return answer


def _holding(compiled: Compiled, held: Sequence[int]) -> Matcher | None:
    """A new matcher that took `held`; None if it refuses one of them."""
    matcher = compiled.matcher()
    return matcher if all(matcher.advance(t) for t in held) else None


def fresh_answer(compiled: Compiled, held: Sequence[int], words: int) -> Answer | None:
    """The mask and accepting status of a new matcher that took `held`; None if it
    refuses one of them or fails."""
    try:
        matcher = _holding(compiled, held)
        if matcher is None:
            return None
        mask = np.zeros(words, dtype=np.int32)
        matcher.fill_mask(mask)
        return mask, bool(matcher.is_accepting())
    except (EngineError, TokensieveError):
        return None


def takes(compiled: Compiled, held: Sequence[int], draft: Sequence[int]) -> int | None:
    """How many of `draft` a new matcher holding `held` takes, from the first on."""
    try:
        matcher = _holding(compiled, held)
        if matcher is None:
            return None
        return next((i for i, t in enumerate(draft) if not matcher.advance(t)), len(draft))
    except (EngineError, TokensieveError):
        return None


@dataclass
class Replayed:
    """What replaying a protocol history gave: the matcher's answer at the end (None if
    it failed), and the protocol broken on the way (one line each)."""

    answer: Answer | None
    broken: list[str] = field(default_factory=list)


def replay(engine: Engine, compiled: Compiled, ops: Sequence[int], words: int) -> Replayed:
    """Apply `ops` to a new matcher of `compiled`, as the walk did: a token it refuses
    that a new matcher holding the same tokens takes, a token it takes that such a
    matcher refuses, a draft it miscounts, a rollback it refuses are noted in `broken`;
    the answer is its mask after the last op. No answer (None) when `ops` is no case: a
    token it refuses (or takes) as a new matcher would."""
    out = Replayed(None)
    scratch = np.zeros(words, dtype=np.int32)
    try:
        matcher = compiled.matcher()
        held: list[int] = []  # as the protocol says (`history.hold`)
        for unit in units(ops):
            kind, n = decode(unit[0])
            if kind == "fill":
                matcher.fill_mask(scratch)
            elif kind == "batch":
                wrong = batch_rows_wrong(engine, compiled, matcher, words, None)
                if wrong is not None:
                    out.broken.append(f"batch row {wrong[0]} differs from its single fill")
            elif kind == "reset":
                matcher.reset()
            elif kind == "rollback" and not matcher.rollback(n):
                out.broken.append(f"rollback({n}) refused")
            elif kind == "refuse" and matcher.advance(n):
                if takes(compiled, held, [n]) != 0:
                    return Replayed(None)  # a new matcher takes it too: no case
                out.broken.append(f"took token {n}, which a new matcher refuses")
            elif kind == "validate":
                counted, want = matcher.validate(unit[1:]), takes(compiled, held, unit[1:])
                if counted is not None and want is not None and counted != want:
                    out.broken.append(f"counted {counted} of a draft it takes {want} of")
            elif kind == "token" and not matcher.advance(n):
                if takes(compiled, held, [n]) != 1:
                    return Replayed(None)  # a new matcher refuses it too: no case
                out.broken.append(f"refused token {n}, which a new matcher takes")
            hold(held, unit)
        mask = np.zeros(words, dtype=np.int32)
        matcher.fill_mask(mask)
        out.answer = (mask, bool(matcher.is_accepting()))
    except (EngineError, TokensieveError) as exc:
        out.broken.append(f"failed: {exc}")
    return out


def batch_rows_wrong(
    engine: Engine,
    compiled: Compiled,
    matcher: Matcher,
    words: int,
    tail: int | None,
    single: np.ndarray | None = None,
) -> tuple[int, np.ndarray, np.ndarray] | None:
    """`matcher` beside a new matcher in a batch of two (`Engine.fill_batch`, two
    threads): None when each row is its matcher's single fill (`single`, when the
    caller has `matcher`'s already), bits past the vocabulary (`tail`) left aside; else
    (row, single fill, batch row) of the first that is not."""
    start = compiled.matcher()
    rows = np.zeros((2, words), dtype=np.int32)
    engine.fill_batch([matcher, start], rows, 2)
    for row, m in enumerate((matcher, start)):
        if row == 0 and single is not None:
            alone = single.copy()
        else:
            alone = np.zeros(words, dtype=np.int32)
            m.fill_mask(alone)
        got = rows[row].copy()
        if tail is not None:
            alone[-1] &= tail
            got[-1] &= tail
        if not np.array_equal(alone, got):
            return row, alone, got
    return None
