"""The path a mask bug was found on, shrunk on a tiny vocabulary.

The minimizer's probes walk a tiny vocabulary's cover and random walks, and also the
path the bug was found on where the vocabulary spells it (`spelled`): an engine whose
state is finer than the reference's (llguidance will not end `0.50` under exclusive
bounds, where `0.5` reaches the same reference state) shows its bug only on the path
that crosses it. Such a path must be spelled by the vocabulary whole, so a path of 120
JSON tokens would keep 120 tokens that have nothing to do with the bug; it is shrunk
first (`shrink_path`), and the vocabulary after, freed of what the path no longer needs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from harness.diff.shrink.contract import Keeps
from harness.diff.shrink.ddmin import ddmin
from harness.diff.walk.references import References
from harness.errors import TokensieveError
from harness.vocab import Vocabulary

# Reference states the search for shorter paths to the found path's states visits.
MAX_SHORTCUT_STATES = 20_000


def spelled(vocab: Vocabulary, tokens: Sequence[bytes]) -> tuple[int, ...]:
    """The path of `tokens` in the ids of a tiny vocabulary: its own tokens where the
    vocabulary holds them all, else its bytes one by one where it holds those, else ()
    (not walked)."""
    index = {t: i for i, t in enumerate(vocab.tokens) if i not in vocab.special_ids}
    if all(t in index for t in tokens):
        return tuple(index[t] for t in tokens)
    data = b"".join(tokens)
    if all(data[i : i + 1] in index for i in range(len(data))):
        return tuple(index[data[i : i + 1]] for i in range(len(data)))
    return ()


def shrink_path(
    start: tuple[bytes, ...],
    keeps: Keeps[tuple[bytes, ...]],
    deadline: float,
    *,
    shortcuts: Sequence[tuple[bytes, ...]] = (),
) -> tuple[bytes, ...]:
    """The shrinker contract over a path's tokens, in two steps, each keeping the bug:
    - the first of `shortcuts` (shorter paths to where `start` leads, `shortcuts`
      gives them longest head first: the engine's finer state lies near the end, the
      `0.50` of a number, not the members before it) on which `keeps` holds;
    - delta debugging drops the remaining tokens (a dropped token that breaks the text
      ends the walk there, so such cuts fail harmlessly)."""
    path = start
    for shorter in shortcuts:
        if time.monotonic() >= deadline:
            return start
        if keeps(shorter):
            path = shorter
            break
    return tuple(ddmin(list(path), lambda p: keeps(tuple(p)), deadline))


def shortcuts(regex: str, vocab: Vocabulary, path: Sequence[bytes]) -> list[tuple[bytes, ...]]:
    """`path` (as `spelled` spells it in the tiny `vocab`) with its first `i` tokens
    replaced by a shortest path to the reference state they reach, wherever that is
    shorter, the largest `i` first; none where the reference cannot be built there
    (a probe on the same vocabulary would have failed too)."""
    ids = spelled(vocab, path)
    try:
        naive = References(regex, vocab).naive
    except (TokensieveError, ValueError):
        return []
    states = [naive.initial_state]
    for t in ids:
        nxt = naive.next_state(states[-1], t)
        if nxt is None:
            break
        states.append(nxt)
    wanted = set(states)
    shortest: dict[int, tuple[int, ...]] = {naive.initial_state: ()}
    queue = [naive.initial_state]
    for state in queue:  # breadth first, until every state on the path is reached
        if wanted <= shortest.keys() or len(shortest) > MAX_SHORTCUT_STATES:
            break
        for t in naive.allowed(state):
            t = int(t)
            nxt = naive.next_state(state, t) if t not in vocab.special_ids else None
            if nxt is not None and nxt not in shortest:
                shortest[nxt] = (*shortest[state], t)
                queue.append(nxt)
    out = []
    for i in range(len(states) - 1, 0, -1):
        head = shortest.get(states[i])
        if head is not None and len(head) < i:
            out.append(tuple(vocab.tokens[t] for t in (*head, *ids[i:])))
    return out
