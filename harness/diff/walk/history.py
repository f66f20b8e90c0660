"""A matcher's history: what it did since it was made, replayable on a new matcher.

The differ resets and reuses each engine's matcher between walks. An engine whose answer
depends on what its matcher did before a reset (`stale-after-reset`) is shown by
replaying that history on a new matcher, so the history is kept as one list of ints: a
token id the matcher took, `FILL` (its mask was filled) or `RESET`. The same encoding is
a finding's `history` and its repro script's `HISTORY`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.engines.base import Compiled, Matcher
from harness.errors import EngineError, TokensieveError

FILL = -1
RESET = -2


def replay(matcher: Matcher, ops: Sequence[int], mask: np.ndarray) -> bool:
    """Apply `ops` to `matcher` (masks filled into `mask`); False if it refuses a token."""
    for op in ops:
        if op == FILL:
            matcher.fill_mask(mask)
        elif op == RESET:
            matcher.reset()
        elif not matcher.advance(op):
            return False
    return True


def answer_after(
    compiled: Compiled, history: Sequence[int], ids: Sequence[int], words: int
) -> tuple[np.ndarray, bool] | None:
    """The mask and accepting status of a new matcher that replays `history`, is reset
    (when there is a history) and walks `ids` with no mask filled on the way; None when
    it refuses a token or fails."""
    mask = np.zeros(words, dtype=np.int32)
    try:
        matcher = compiled.matcher()
        if history:
            if not replay(matcher, history, mask):
                return None
            matcher.reset()
            mask.fill(0)
        if not replay(matcher, ids, mask):
            return None
        matcher.fill_mask(mask)
        return mask, bool(matcher.is_accepting())
    except (EngineError, TokensieveError):
        return None


def walks(ops: Sequence[int]) -> list[list[int]]:
    """`ops` split at its resets (the resets dropped): one list per walk."""
    out: list[list[int]] = [[]]
    for op in ops:
        if op == RESET:
            out.append([])
        else:
            out[-1].append(op)
    return [w for w in out if w]


def joined(parts: Sequence[Sequence[int]]) -> list[int]:
    """Walks back into one history, a reset between each two."""
    out: list[int] = []
    for i, w in enumerate(parts):
        out += ([RESET] if i else []) + list(w)
    return out


def describe(ops: Sequence[int], tokens: Sequence[bytes]) -> str:
    """The walks' texts, for people: each walk's bytes, walks joined by ` | reset | `."""
    return " | reset | ".join(
        b"".join(tokens[t] for t in w if t >= 0).decode("utf-8", "backslashreplace")
        for w in walks(ops)
    )
