"""What the differ keeps per engine and per vocabulary while it walks: one `Lane` per
engine (its matcher, mask, the states of its policies' references, what it has already
recorded), and the per-token facts random walks lean on (`token_facts`)."""

from __future__ import annotations

import time
import weakref
from typing import Any

import numpy as np

from harness.diff.references import References, policies_needing_reference
from harness.diff.triage import BUG, Verdict
from harness.engines.base import Compiled, Engine, Matcher
from harness.errors import EngineError, TokensieveError
from harness.vocab import Vocabulary

# The signature of a wrong answer that depends on the matcher's history (`Lane.stale`).
STALE_AFTER_RESET = "stale-after-reset"

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
        self.compiled = compiled
        self.matcher: Matcher = compiled.matcher()
        # the tokens this matcher took in the current walk, and in the walk before its
        # last reset: a wrong mask a fresh matcher does not give came from that history
        self.walked: list[int] = []
        self.previous: tuple[int, ...] = ()
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
        self.previous, self.walked = tuple(self.walked), []
        self.live = True
        self.fresh = False
        self.policy_states = {
            name: (index.initial_state if index is not None else None)
            for name, index in self.policies.items()
        }

    def fresh_answer(
        self, ids: list[int], history: tuple[int, ...], tail: Any
    ) -> tuple[np.ndarray, bool] | None:
        """The mask and accepting status a new matcher gives after `ids`, having first
        walked `history`, filled its mask there and been reset (no history: straight
        from the start); None when it refuses a token or fails on the way."""
        mask = np.zeros_like(self.mask)
        try:
            matcher = self.compiled.matcher()
            if history:
                if not all(matcher.advance(t) for t in history):
                    return None
                matcher.fill_mask(mask)
                matcher.reset()
                mask.fill(0)
            if not all(matcher.advance(t) for t in ids):
                return None
            matcher.fill_mask(mask)
            accepting = bool(matcher.is_accepting())
        except (EngineError, TokensieveError):
            return None
        if tail is not None:
            mask[-1] &= tail
        return mask, accepting

    def stale(
        self,
        ids: list[int],
        engine_accepting: bool,
        tail: Any,
        verdict: Verdict,
    ) -> tuple[Verdict, tuple[int, ...]]:
        """`stale-after-reset` for a bug (`verdict`, on the answer in `mask` and
        `engine_accepting` after `ids`) that a new matcher walking the same tokens does
        not repeat: the same tokens get two answers, and the reused matcher's came from
        what it did before its last reset (llguidance 1.9.1 keeps the mask of the
        previous walk's last state). Whether the new matcher's answer is right (it may
        differ from the reference by a policy, or by another bug) is the next walk's
        question, asked of the same state again. With it, the previous walk as history
        when replaying that walk before a reset brings the wrong answer back. The time
        spent counts against the engine's mask budget."""
        started = time.perf_counter()
        wrong = (self.mask.copy(), engine_accepting)
        fresh = self.fresh_answer(ids, (), tail)
        if fresh is None or (fresh[1] == wrong[1] and np.array_equal(fresh[0], wrong[0])):
            self.fill_seconds += time.perf_counter() - started
            return verdict, ()
        replay = self.fresh_answer(ids, self.previous, tail)
        self.fill_seconds += time.perf_counter() - started
        back = replay is not None and replay[1] == wrong[1] and np.array_equal(replay[0], wrong[0])
        why = (
            "a new matcher walking the same tokens answers otherwise; this one "
            f"was reset after a walk of {len(self.previous)} tokens, and replaying that walk "
            + ("before the reset brings the wrong answer back" if back else "alone does not")
        )
        return Verdict(BUG, STALE_AFTER_RESET, why), (self.previous if back else ())

    def key(self, ref_state: int) -> tuple[Any, ...]:
        return (ref_state, *self.policy_states.values())

    def advance_policy(self, token: int) -> None:
        for name, index in self.policies.items():
            state = self.policy_states[name]
            self.policy_states[name] = None if state is None else index.next_state(state, token)
