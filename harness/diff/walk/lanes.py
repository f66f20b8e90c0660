"""What the differ keeps per engine and per vocabulary while it walks: one `Lane` per
engine (its matcher, mask, the states of its policies' references, what it has already
recorded), and the per-token facts random walks lean on (`token_facts`)."""

from __future__ import annotations

import time
import weakref
from collections.abc import Hashable

import numpy as np

from harness.diff.judge.triage import Verdict, VerdictKind
from harness.diff.walk.history import RESET, answer_after, walks
from harness.diff.walk.references import References, TokenIndex, policies_needing_reference
from harness.engines.base import Compiled, Engine, Matcher, Policy
from harness.vocab import Vocabulary

# The signature of a wrong answer that depends on the matcher's history (`Lane.stale`).
STALE_AFTER_RESET = "stale-after-reset"
# Entries of a matcher's history kept (`Lane.note`).
MAX_LOG = 20_000

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


_by_bytes: weakref.WeakKeyDictionary[Vocabulary, tuple[dict[bytes, list[int]], list[int]]] = (
    weakref.WeakKeyDictionary()
)


def tokens_by_bytes(vocab: Vocabulary) -> tuple[dict[bytes, list[int]], list[int]]:
    """The text ids of each token's bytes, and the token lengths longest first (computed
    once per vocabulary): which tokens spell a given piece of text, without a pass over
    the vocabulary."""
    found = _by_bytes.get(vocab)
    if found is None:
        ids: dict[bytes, list[int]] = {}
        for t, data in enumerate(vocab.tokens):
            if data and t not in vocab.special_ids:
                ids.setdefault(data, []).append(t)
        found = _by_bytes[vocab] = (ids, sorted({len(d) for d in ids}, reverse=True))
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
        # what the matcher did since it was made (`harness.diff.walk.history`): a wrong mask
        # that a new matcher does not give came from there
        self.log: list[int] = []
        self.mask = np.zeros(refs.vocab.mask_words, dtype=np.int32)
        self.policies: dict[Policy, TokenIndex | None] = {
            name: refs.policy_index(name, engine) for name in policies_needing_reference(engine)
        }
        self.policy_states: dict[Policy, int | None] = {}
        self.live = True
        self.fresh = False  # `mask` holds the current state's mask
        self.fill_seconds = 0.0
        self.steps = 0
        # (state key, digest of the wrong answer) already recorded
        self.recorded: set[tuple[Hashable, ...]] = set()
        self.reset()

    def reset(self) -> None:
        self.matcher.reset()
        self.note(RESET)
        self.live = True
        self.fresh = False
        self.policy_states = {
            name: (index.initial_state if index is not None else None)
            for name, index in self.policies.items()
        }

    def note(self, op: int) -> None:
        """Record what the matcher did (`harness.diff.walk.history`), keeping at most
        `MAX_LOG` entries: past it the oldest walks are dropped (the log then starts at a
        reset, and replaying it checks whether what is kept suffices)."""
        self.log.append(op)
        if len(self.log) > MAX_LOG:
            cut = len(self.log) - MAX_LOG
            while cut < len(self.log) and self.log[cut] != RESET:
                cut += 1
            del self.log[:cut]

    def stale(
        self,
        ids: list[int],
        engine_accepting: bool,
        tail: int | None,
        verdict: Verdict,
    ) -> tuple[Verdict, tuple[int, ...]]:
        """`stale-after-reset` for a bug (`verdict`, on the answer in `mask` and
        `engine_accepting` after `ids`) that a new matcher walking the same tokens does
        not repeat: the same tokens get two answers, and the reused matcher's came from
        what it did before its last reset (llguidance 1.9.1 keeps the mask of an earlier
        walk). Whether the new matcher's answer is right (it may differ from the
        reference by a policy, or by another bug) is asked of the same state on the next
        walk that reaches it. With it, the history that brings the wrong answer back on
        a new matcher: the walk before the reset alone, else the whole log before it.
        The time spent counts against the engine's mask budget."""
        started = time.perf_counter()
        words = self.mask.shape[0]
        wrong = (self.mask.copy(), engine_accepting)

        def same(answer: tuple[np.ndarray, bool] | None) -> bool:
            if answer is None:
                return False
            if tail is not None:
                answer[0][-1] &= tail
            return answer[1] == wrong[1] and np.array_equal(answer[0], wrong[0])

        fresh = answer_after(self.compiled, (), ids, words)
        if fresh is None or same(fresh):
            self.fill_seconds += time.perf_counter() - started
            return verdict, ()
        before = self.log[: len(self.log) - self.log[::-1].index(RESET) - 1]
        last = before[len(before) - before[::-1].index(RESET) :] if RESET in before else before
        found: tuple[int, ...] = ()
        for history in (last, before) if len(last) < len(before) else (before,):
            if history and same(answer_after(self.compiled, history, ids, words)):
                found = tuple(history)
                break
        self.fill_seconds += time.perf_counter() - started
        n = len(walks(found))
        why = "a new matcher walking the same tokens answers otherwise; " + (
            f"replaying the {n} walk{'s' if n > 1 else ''} before the reset brings the wrong "
            "answer back"
            if found
            else f"replaying the {len(walks(before))} walks kept before the reset does not"
        )
        return Verdict(VerdictKind.BUG, STALE_AFTER_RESET, why), found

    def key(self, ref_state: int) -> tuple[int | None, ...]:
        """The state as this lane tells states apart: the reference's, and each of its
        policies' references' (a policy reference may be finer)."""
        return (ref_state, *self.policy_states.values())

    def advance_policy(self, token: int) -> None:
        for name, index in self.policies.items():
            state = self.policy_states[name]
            if state is not None and index is not None:
                self.policy_states[name] = index.next_state(state, token)
