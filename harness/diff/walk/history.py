"""A matcher's history: what it did since it was made, replayable on a new matcher.

The differ resets and reuses each engine's matcher between walks. An engine whose answer
depends on what its matcher did before a reset (`stale-after-reset`) is shown by
replaying that history on a new matcher, so the history is kept as one list of ints: a
token id the matcher took, `FILL` (its mask was filled) or `RESET`. The serving
protocol's walks (`harness.diff.walk.serving`) add the operations of speculative
decoding, each one int (bands far below any token id):
- `rollback_op(k)`: the last k tokens taken are rolled back;
- `validate_op(n)` followed by the n tokens of a draft: the draft is checked
  (`Matcher.validate`) and nothing taken;
- `refuse_op(t)`: token t is offered where it must be refused (a draft's planted token);
- `BATCH`: the mask filled as row 0 of a batch of two beside a new matcher.
The same encoding is a finding's `history` and its repro script's `HISTORY`;
`held_after` gives the tokens a matcher holds after a history, as the protocol says.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.engines.base import Compiled, Matcher
from harness.errors import EngineError, TokensieveError

FILL = -1
RESET = -2
BATCH = -3
_BAND = 1 << 24
ROLLBACK = -_BAND  # rollback_op(k) = ROLLBACK - k
VALIDATE = -2 * _BAND  # validate_op(n) = VALIDATE - n, then the n tokens
REFUSE = -3 * _BAND  # refuse_op(t) = REFUSE - t


def rollback_op(count: int) -> int:
    return ROLLBACK - count


def validate_op(count: int) -> int:
    return VALIDATE - count


def refuse_op(token: int) -> int:
    return REFUSE - token


def decode(op: int) -> tuple[str, int]:
    """(kind, operand) of one op: ("token", id), ("fill", 0), ("reset", 0), ("batch",
    0), ("rollback", k), ("validate", n) or ("refuse", id)."""
    if op >= 0:
        return "token", op
    if op in (FILL, RESET, BATCH):
        return {FILL: "fill", RESET: "reset", BATCH: "batch"}[op], 0
    if op > VALIDATE:
        return "rollback", ROLLBACK - op
    if op > REFUSE:
        return "validate", VALIDATE - op
    return "refuse", REFUSE - op


def units(ops: Sequence[int]) -> list[list[int]]:
    """`ops` cut into operations: a validation with its draft's tokens is one."""
    out: list[list[int]] = []
    i = 0
    while i < len(ops):
        kind, n = decode(ops[i])
        size = 1 + (n if kind == "validate" else 0)
        out.append(list(ops[i : i + size]))
        i += size
    return out


def hold(held: list[int], unit: Sequence[int]) -> bool:
    """Apply one operation (`units`) to `held`, the tokens a matcher holds as the
    protocol says (tokens taken, rolled back, reset; a draft's check and a refused token
    take nothing); False, `held` unchanged, when it rolls back more than is held."""
    kind, n = decode(unit[0])
    if kind == "token":
        held.append(n)
    elif kind == "reset":
        held.clear()
    elif kind == "rollback":
        if n > len(held):
            return False
        del held[len(held) - n :]
    return True


def held_after(ops: Sequence[int]) -> list[int] | None:
    """The tokens a matcher holds after `ops` (`hold`); None when `ops` rolls back more
    than it holds."""
    held: list[int] = []
    return held if all(hold(held, unit) for unit in units(ops)) else None


def tokens_of(ops: Sequence[int]) -> list[int]:
    """Every token id `ops` names: taken, drafted or refused."""
    out: list[int] = []
    for unit in units(ops):
        kind, n = decode(unit[0])
        if kind in ("token", "refuse"):
            out.append(n)
        elif kind == "validate":
            out += unit[1:]
    return out


def map_tokens(ops: Sequence[int], new_id: dict[int, int]) -> list[int]:
    """`ops` with every token id renamed by `new_id` (to a tiny vocabulary's ids)."""
    out: list[int] = []
    for unit in units(ops):
        kind, n = decode(unit[0])
        if kind == "token":
            out.append(new_id[n])
        elif kind == "refuse":
            out.append(refuse_op(new_id[n]))
        elif kind == "validate":
            out += [unit[0], *(new_id[t] for t in unit[1:])]
        else:
            out.append(unit[0])
    return out


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


def narrate(ops: Sequence[int], tokens: Sequence[bytes]) -> str:
    """A protocol history for people: "took 'a', filled, rolled back 2, ..."."""

    def text(t: int) -> str:
        return repr(tokens[t].decode("utf-8", "backslashreplace"))

    said = []
    for unit in units(ops):
        kind, n = decode(unit[0])
        if kind == "token":
            said.append(f"took {text(n)}")
        elif kind == "refuse":
            said.append(f"was offered {text(n)} (to be refused)")
        elif kind == "rollback":
            said.append(f"rolled back {n}")
        elif kind == "validate":
            said.append("checked the draft [" + ", ".join(map(text, unit[1:])) + "]")
        else:
            said.append(
                {"fill": "filled its mask", "reset": "reset", "batch": "filled a batch"}[kind]
            )
    return ", ".join(said)


def describe(ops: Sequence[int], tokens: Sequence[bytes]) -> str:
    """The walks' texts, for people: each walk's bytes, walks joined by ` | reset | `."""
    return " | reset | ".join(
        b"".join(tokens[t] for t in w if t >= 0).decode("utf-8", "backslashreplace")
        for w in walks(ops)
    )
