"""Every engine's masks against the reference, state by state, along token paths.

For one spec and vocabulary, the differ walks the naive reference index, TokensDFA exact,
and one matcher per engine in lockstep: along the corpus token paths (the real encoder's
tokens) and along seeded random walks that sample each next token from the reference's
mask (mixing short and long tokens, stopping with EOS where the text may end). At every
state it compares each engine's full mask and accepting status with the reference's; a
state counts once per engine, however many tokens differ, and each disagreement is
triaged (`harness.diff.triage`) into a policy or a bug.

Which engines face which specs:
- regexes: every engine;
- JSON schemas: the engines that compile the converted regex (outlines-core, TokensDFA),
  which then share the reference's language exactly. Engines with their own JSON grammar
  speak a different (valid) language, whitespace and escapes included, so their check is
  the instance one (`harness.diff.instances`), not a mask comparison.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.diff.disagreement import Disagreement, SpecDiff
from harness.diff.references import References, policies_needing_reference
from harness.diff.triage import StateView, Verdict, triage
from harness.engines import reference
from harness.engines.base import Compiled, Engine, Matcher, allowed_ids, is_allowed
from harness.errors import EngineError, TokensieveError
from harness.vocab import Vocabulary

# How many token ids of each side a disagreement keeps (the full counts are kept too).
KEEP_IDS = 64
# Long tokens tried per state when covering reference states.
COVER_SAMPLE = 256


@dataclass(frozen=True)
class WalkPlan:
    """Which walks to take: a shortest path to each of up to `cover_states` reference
    states (so rare states, a UTF-8 lead byte say, are checked whatever the random walks
    pick), the given token paths, and `random_walks` walks of at most `max_steps` tokens
    drawn with `seed`."""

    paths: tuple[tuple[int, ...], ...] = ()
    cover_states: int = 200
    random_walks: int = 8
    max_steps: int = 48
    seed: int = 0
    eos_probability: float = 0.25
    # Seconds one engine may spend filling masks in one cell; a slow engine (xgrammar
    # takes 0.3 s per mask on some regexes) then covers fewer states instead of stalling.
    engine_budget_s: float = 30.0


class _Lane:
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


class Differ:
    """Walks one regex over one vocabulary for a set of compiled engines."""

    def __init__(
        self,
        spec_id: str,
        regex: str,
        vocab: Vocabulary,
        compiled: dict[str, tuple[Engine, Compiled]],
        refs: References | None = None,
    ) -> None:
        self.spec_id = spec_id
        self.vocab = vocab
        self.refs = refs or References(regex, vocab)
        self.result = SpecDiff(spec_id, vocab.name, regex)
        self.lanes = [_Lane(e, c, self.refs) for e, c in compiled.values()]
        self.seen: dict[str, set[tuple[Any, ...]]] = {
            lane.engine.name: set() for lane in self.lanes
        }
        self.ref_mask = np.zeros(vocab.mask_words, dtype=np.int32)
        self.exact_mask = np.zeros(vocab.mask_words, dtype=np.int32)
        self.plan = WalkPlan()

    def run(self, plan: WalkPlan) -> SpecDiff:
        self.plan = plan
        for path in self._cover(plan):
            self._walk(path, None, plan)
        for path in plan.paths:
            self._walk(list(path), None, plan)
        rng = random.Random(f"{plan.seed}:{self.spec_id}:{self.vocab.name}")
        for _ in range(plan.random_walks):
            self._walk(None, rng, plan)
        for lane in self.lanes:
            self.result.states[lane.engine.name] = len(self.seen[lane.engine.name])
        return self.result

    def _cover(self, plan: WalkPlan) -> list[list[int]]:
        """Shortest token paths to reference states, breadth first. From each state only
        the short tokens (at most 2 bytes) and a seeded sample of the others are tried:
        short tokens reach the fine-grained states, and trying all 128k tokens of a real
        vocabulary at every state would cost more than the comparisons themselves."""
        naive = self.refs.naive
        rng = random.Random(f"cover:{plan.seed}:{self.spec_id}")
        found: dict[int, list[int]] = {naive.initial_state: []}
        order = [naive.initial_state]
        mask = np.zeros(self.vocab.mask_words, dtype=np.int32)
        for state in order:
            if len(found) >= plan.cover_states:
                break
            naive.fill_mask(state, mask)
            allowed = [int(t) for t in allowed_ids(mask, self.vocab.size) if t != self.vocab.eos_id]
            short = [t for t in allowed if len(self.vocab.tokens[t]) <= 2]
            rest = [t for t in allowed if len(self.vocab.tokens[t]) > 2]
            tried = short + (rng.sample(rest, COVER_SAMPLE) if len(rest) > COVER_SAMPLE else rest)
            for token in tried:
                nxt = naive.next_state(state, token)
                if nxt is not None and nxt not in found:
                    found[nxt] = [*found[state], token]
                    order.append(nxt)
                    if len(found) >= plan.cover_states:
                        break
        return [found[s] for s in order[1:]]

    # --- one walk --------------------------------------------------------------------------

    def _walk(self, fixed: list[int] | None, rng: random.Random | None, plan: WalkPlan) -> None:
        naive = self.refs.naive
        state = naive.initial_state
        exact_state = self.refs.exact.initial_state
        for lane in self.lanes:
            lane.reset()
        ids: list[int] = []
        steps = len(fixed) if fixed is not None else plan.max_steps
        for step in range(steps + 1):
            naive.fill_mask(state, self.ref_mask)
            self.refs.exact.fill_mask(exact_state, self.exact_mask)
            accepting = bool(naive.is_accepting(state))
            if not np.array_equal(self.ref_mask, self.exact_mask):
                self._exact_disagrees(ids, state, exact_state)
            for lane in self.lanes:
                if lane.live:
                    self._compare(lane, ids, state, exact_state, accepting)
            if step == steps:
                break
            if fixed is not None:
                token = fixed[step]
            else:
                assert rng is not None
                chosen = self._choose(rng, accepting, plan)
                if chosen is None:
                    break
                token = chosen
            nxt = naive.next_state(state, token)
            if nxt is None:  # a corpus path the reference refuses: walk no further
                break
            state = nxt
            exact_state = self.refs.exact.next_state(exact_state, token)
            for lane in self.lanes:
                if lane.live:
                    self._advance(lane, ids, token)
            ids.append(token)
            if exact_state is None:
                break

    def _choose(self, rng: random.Random, accepting: bool, plan: WalkPlan) -> int | None:
        if accepting and rng.random() < plan.eos_probability:
            return None  # EOS: the walk ends here
        allowed = allowed_ids(self.ref_mask, self.vocab.size)
        allowed = allowed[allowed != self.vocab.eos_id]
        # Prefer tokens every live engine also allows, so the lanes stay together.
        shared = allowed
        for lane in self.lanes:
            if lane.live and lane.fresh:
                theirs = allowed_ids(lane.mask, self.vocab.size)
                both = np.intersect1d(shared, theirs, assume_unique=True)
                if both.size:
                    shared = both
        if shared.size == 0:
            return None
        if rng.random() < 0.5:
            return int(shared[rng.randrange(shared.size)])
        # a long token: the longest of a small sample
        sample = [int(shared[rng.randrange(shared.size)]) for _ in range(16)]
        return max(sample, key=lambda t: (len(self.vocab.tokens[t]), t))

    def _compare(
        self, lane: _Lane, ids: list[int], state: int, exact_state: int, accepting: bool
    ) -> None:
        lane.fresh = False
        key = lane.key(state)
        seen = self.seen[lane.engine.name]
        if key in seen:
            return
        if lane.fill_seconds > self.plan.engine_budget_s:
            self.result.skipped.setdefault(
                lane.engine.name,
                f"mask time budget ({self.plan.engine_budget_s:.0f}s) spent after "
                f"{len(seen)} states",
            )
            lane.live = False
            return
        try:
            lane.mask.fill(0)
            started = time.perf_counter()
            lane.matcher.fill_mask(lane.mask)
            lane.fill_seconds += time.perf_counter() - started
            engine_accepting = bool(lane.matcher.is_accepting())
        except (EngineError, TokensieveError) as exc:
            self.result.skipped.setdefault(lane.engine.name, f"runtime error: {exc}")
            lane.live = False
            return
        lane.fresh = True
        seen.add(key)
        if np.array_equal(lane.mask, self.ref_mask) and engine_accepting == accepting:
            return
        expected = self._ids(self.ref_mask)
        actual = self._ids(lane.mask)
        prefix = self.vocab.decode(ids)
        view = StateView(
            engine=lane.engine,
            tokens=self.vocab.tokens,
            prefix=prefix,
            expected=expected,
            actual=actual,
            accepting_expected=accepting,
            accepting_actual=engine_accepting,
            forced=bytes(self.refs.exact.forced_bytes(exact_state)),
            dfa=self.refs.dfa,
            dotall_dfa=self.refs.dotall_dfa
            if b"\n" in b"".join(self.vocab.tokens[t] for t in list(actual - expected)[:KEEP_IDS])
            else None,
            policy_reference=self._policy_views(lane),
        )
        verdict = triage(view)
        self._record(lane, ids, prefix, view, verdict, "mask")

    def _policy_views(self, lane: _Lane) -> dict[str, tuple[frozenset[int], bool] | None]:
        out: dict[str, tuple[frozenset[int], bool] | None] = {}
        buf = np.zeros(self.vocab.mask_words, dtype=np.int32)
        for name, index in lane.policies.items():
            pstate = lane.policy_states[name]
            if index is None or pstate is None:
                out[name] = None
                continue
            index.fill_mask(pstate, buf)
            out[name] = (self._ids(buf), bool(index.is_accepting(pstate)))
        return out

    def _ids(self, mask: np.ndarray) -> frozenset[int]:
        ids = allowed_ids(mask, self.vocab.size)
        return frozenset(int(i) for i in ids if i != self.vocab.eos_id)

    def _advance(self, lane: _Lane, ids: list[int], token: int) -> None:
        allowed_here = lane.fresh and is_allowed(lane.mask, token)
        try:
            took = lane.matcher.advance(token)
        except (EngineError, TokensieveError) as exc:
            self.result.skipped.setdefault(lane.engine.name, f"runtime error: {exc}")
            lane.live = False
            return
        lane.advance_policy(token)
        if took:
            return
        lane.live = False
        if allowed_here:
            prefix = self.vocab.decode(ids)
            why = (
                f"advance refused token {token} ({self.vocab.tokens[token]!r}) its own mask allows"
            )
            self.result.disagreements.append(
                self._disagreement(
                    lane.engine.name,
                    lane.version,
                    ids,
                    prefix,
                    reference_only=(token,),
                    engine_only=(),
                    n_reference_only=1,
                    n_engine_only=0,
                    accepting_expected=False,
                    accepting_actual=False,
                    verdict="bug",
                    rule="mask-advance-mismatch",
                    why=why,
                    agrees_with_tokensdfa=True,
                    what="advance",
                )
            )

    def _exact_disagrees(self, ids: list[int], state: int, exact_state: int) -> None:
        """TokensDFA exact must equal the naive index everywhere: any difference is its bug."""
        key = ("tokensdfa-exact-check", state)
        seen = self.seen.setdefault("tokensdfa (internal)", set())
        if key in seen:
            return
        seen.add(key)
        expected = self._ids(self.ref_mask)
        actual = self._ids(self.exact_mask)
        accepting = bool(self.refs.naive.is_accepting(state))
        ref_only = sorted(expected - actual)
        eng_only = sorted(actual - expected)
        self.result.disagreements.append(
            self._disagreement(
                "tokensdfa",
                reference.version(),
                ids,
                self.vocab.decode(ids),
                reference_only=tuple(ref_only[:KEEP_IDS]),
                engine_only=tuple(eng_only[:KEEP_IDS]),
                n_reference_only=len(ref_only),
                n_engine_only=len(eng_only),
                accepting_expected=accepting,
                accepting_actual=bool(self.refs.exact.is_accepting(exact_state)),
                verdict="bug",
                rule="unclassified",
                why="TokensDFA exact differs from the naive index it must equal",
                agrees_with_tokensdfa=False,
            )
        )

    def _disagreement(
        self, engine: str, version: str, ids: list[int], prefix: bytes, **rest: Any
    ) -> Disagreement:
        """A disagreement at the state after `ids` of this walk's spec and vocabulary."""
        return Disagreement(
            engine=engine,
            version=version,
            spec_id=self.spec_id,
            vocab=self.vocab.name,
            regex=self.refs.regex,
            prefix_ids=tuple(ids),
            prefix=prefix,
            **rest,
        )

    def _record(
        self,
        lane: _Lane,
        ids: list[int],
        prefix: bytes,
        view: StateView,
        verdict: Verdict,
        what: str,
    ) -> None:
        ref_only = sorted(view.reference_only, key=lambda t: (len(self.vocab.tokens[t]), t))
        eng_only = sorted(view.engine_only, key=lambda t: (len(self.vocab.tokens[t]), t))
        exact = self._ids(self.exact_mask)
        self.result.disagreements.append(
            self._disagreement(
                lane.engine.name,
                lane.version,
                ids,
                prefix,
                reference_only=tuple(ref_only[:KEEP_IDS]),
                engine_only=tuple(eng_only[:KEEP_IDS]),
                n_reference_only=len(ref_only),
                n_engine_only=len(eng_only),
                accepting_expected=view.accepting_expected,
                accepting_actual=view.accepting_actual,
                verdict=verdict.kind,
                rule=verdict.rule,
                why=verdict.why,
                agrees_with_tokensdfa=view.actual == exact,
                what=what,
            )
        )
