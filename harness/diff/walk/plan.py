"""Where the differ walks: the plan of one cell's walks (`WalkPlan`), the breadth-first
cover of the reference's states (`cover`), and the next token of a random walk
(`choose`).

The differ (`harness.diff.walk.differ`) compares engines with the reference along these
paths; what it compares does not depend on how they were chosen. The choices are
deterministic for a plan's seed, the spec and the vocabulary, so a resumed or repeated
run walks the same paths.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from harness.diff.walk.lanes import set_bit, token_facts
from harness.diff.walk.references import NaiveIndex
from harness.engines.base import allowed_ids
from harness.vocab import Vocabulary

# Long tokens tried per state when covering reference states.
COVER_SAMPLE = 256


@dataclass(frozen=True)
class WalkPlan:
    """Which walks to take: a shortest path to each of up to `cover_states` reference
    states (to every state when the index has at most `full_cover_limit`), the given
    token paths, and `random_walks` walks of at most `max_steps` tokens drawn with
    `seed`: a `non_ascii_share` of them leaning on tokens with non-ASCII bytes, a
    `short_share` on the shortest tokens (deep paths: a fault after six tokens shows only
    on a walk that long), the rest mixing short and long tokens. `every_step` compares
    at each step of paths and walks (else once per state). `protocol_walks` walks of
    `protocol_steps` operations each drive every engine through the serving protocol
    (`harness.diff.walk.serving`; 0 turns them off)."""

    paths: tuple[tuple[int, ...], ...] = ()
    cover_states: int = 200
    random_walks: int = 8
    max_steps: int = 48
    seed: int = 0
    eos_probability: float = 0.25
    # Seconds one engine may spend filling masks in one cell; a slow engine (xgrammar
    # takes 0.3 s per mask on some regexes) then covers fewer states instead of stalling.
    engine_budget_s: float = 30.0
    full_cover_limit: int = 2048
    non_ascii_share: float = 0.375
    short_share: float = 0.25
    every_step: bool = True
    protocol_walks: int = 0
    protocol_steps: int = 12

    def to_json(self) -> dict[str, Any]:
        """Every field by name (the paths as lists), as the worker's request carries it."""
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> WalkPlan:
        return WalkPlan(**{**data, "paths": tuple(tuple(p) for p in data["paths"])})


def leanings(plan: WalkPlan) -> list[str]:
    """How each random walk picks its tokens: "non-ascii", "short" or "mixed"."""
    non_ascii = round(plan.random_walks * plan.non_ascii_share)
    short = round(plan.random_walks * plan.short_share)
    mixed = max(0, plan.random_walks - non_ascii - short)
    return (["non-ascii"] * non_ascii + ["short"] * short + ["mixed"] * mixed)[: plan.random_walks]


def cover(naive: NaiveIndex, vocab: Vocabulary, plan: WalkPlan, spec_id: str) -> list[list[int]]:
    """Shortest token paths to reference states, breadth first. From each state only
    the short tokens (at most 2 bytes) and a seeded sample of the others are tried:
    short tokens reach the fine-grained states, and trying all 128k tokens of a real
    vocabulary at every state would cost more than the comparisons themselves."""
    target = plan.cover_states
    if int(naive.num_states) <= plan.full_cover_limit:
        target = max(target, int(naive.num_states))
    rng = random.Random(f"cover:{plan.seed}:{spec_id}")
    found: dict[int, list[int]] = {naive.initial_state: []}
    order = [naive.initial_state]
    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    for state in order:
        if len(found) >= target:
            break
        naive.fill_mask(state, mask)
        allowed = [int(t) for t in allowed_ids(mask, vocab.size) if t != vocab.eos_id]
        short = [t for t in allowed if len(vocab.tokens[t]) <= 2]
        rest = [t for t in allowed if len(vocab.tokens[t]) > 2]
        tried = short + (rng.sample(rest, COVER_SAMPLE) if len(rest) > COVER_SAMPLE else rest)
        for token in tried:
            nxt = naive.next_state(state, token)
            if nxt is not None and nxt not in found:
                found[nxt] = [*found[state], token]
                order.append(nxt)
                if len(found) >= target:
                    break
    return [found[s] for s in order[1:]]


def choose(
    rng: random.Random,
    vocab: Vocabulary,
    allowed: np.ndarray,
    lane_masks: Sequence[np.ndarray],
    accepting: bool,
    plan: WalkPlan,
    lean: str,
) -> int | None:
    """The next token of a random walk at a state where the reference's mask is
    `allowed` and the live engines' masks (filled at this state) are `lane_masks`; None
    when the walk ends here (EOS, or nothing to take)."""
    if accepting and rng.random() < plan.eos_probability:
        return None  # EOS: the walk ends here
    # Prefer tokens every live engine also allows, so the lanes stay together (a bitwise
    # AND of the masks; an engine that allows none of them is not followed).
    shared_mask = allowed.copy()
    set_bit(shared_mask, vocab.eos_id, False)
    for mask in lane_masks:
        both = shared_mask & mask
        if both.any():
            shared_mask = both
    shared = allowed_ids(shared_mask, vocab.size)
    if shared.size == 0:
        return None
    lengths, high = token_facts(vocab)
    if lean == "non-ascii" and rng.random() < 0.7:
        leaning = shared[high[shared]]
        if leaning.size:
            shared = leaning
    if lean == "short" and rng.random() < 0.7:
        sizes = lengths[shared]
        shared = shared[sizes == sizes.min()]
    if rng.random() < 0.5 or lean == "short":
        return int(shared[rng.randrange(shared.size)])
    # a long token: the longest of a small sample
    sample = [int(shared[rng.randrange(shared.size)]) for _ in range(16)]
    return max(sample, key=lambda t: (len(vocab.tokens[t]), t))
