"""What the differ keeps per engine and per vocabulary while it walks: one `Lane` per
engine (its matcher, mask, the states of its policies' references, what it has already
recorded), and the per-token facts random walks lean on (`token_facts`)."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from harness.diff.references import References, policies_needing_reference
from harness.engines.base import Compiled, Engine, Matcher
from harness.vocab import Vocabulary

_token_facts: weakref.WeakKeyDictionary[Vocabulary, tuple[np.ndarray, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def token_facts(vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray]:
    """Per token id: its length, and whether it holds a byte >= 0x80 (computed once per
    vocabulary: the walks lean on them)."""
    found = _token_facts.get(vocab)
    if found is None:
        lengths = np.fromiter((len(t) for t in vocab.tokens), dtype=np.int64, count=vocab.size)
        high = np.fromiter(
            (bool(t) and max(t) >= 0x80 for t in vocab.tokens), dtype=bool, count=vocab.size
        )
        found = _token_facts[vocab] = (lengths, high)
    return found


def set_bit(mask: np.ndarray, token: int, on: bool) -> None:
    """Set or clear bit `token` of an int32 mask in place."""
    word = mask[token >> 5 : (token >> 5) + 1].view(np.uint32)
    bit = np.uint32(1 << (token & 31))
    word[0] = (word[0] | bit) if on else (word[0] & ~bit)


class Lane:
    """One engine walking alongside the reference; dropped from a walk once it refuses."""

    def __init__(self, engine: Engine, compiled: Compiled, refs: References) -> None:
        self.engine = engine
        self.version = engine.version()
        self.matcher: Matcher = compiled.matcher()
        self.mask = np.zeros(refs.vocab.mask_words, dtype=np.int32)
        self.policies = {
            name: refs.policy_index(name, engine) for name in policies_needing_reference(engine)
        }
        self.policy_states: dict[str, int | None] = {}
        self.live = True
        self.fresh = False  # `mask` holds the current state's mask
        self.fill_seconds = 0.0
        self.steps = 0
        # (state key, digest of the wrong answer) already recorded
        self.recorded: set[tuple[Any, ...]] = set()
        self.reset()

    def reset(self) -> None:
        self.matcher.reset()
        self.live = True
        self.fresh = False
        self.policy_states = {
            name: (index.initial_state if index is not None else None)
            for name, index in self.policies.items()
        }

    def key(self, ref_state: int) -> tuple[Any, ...]:
        return (ref_state, *self.policy_states.values())

    def advance_policy(self, token: int) -> None:
        for name, index in self.policies.items():
            state = self.policy_states[name]
            self.policy_states[name] = None if state is None else index.next_state(state, token)
