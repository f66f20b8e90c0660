"""Every engine's masks against the reference, state by state, along token paths.

For one spec and vocabulary, the differ walks the naive reference index, TokensDFA exact,
and one matcher per engine in lockstep, along three kinds of paths:
- a breadth-first *cover*: a shortest token path to each reference state (every state
  when the index has at most `full_cover_limit`, else `cover_states` of them), so rare
  states, a UTF-8 lead byte say, are checked whatever the random walks pick; each state
  is compared once there;
- the corpus token paths (the real encoder's tokens);
- seeded random walks that sample each next token from the reference's mask (mixing
  short and long tokens, some walks leaning on tokens with non-ASCII bytes, stopping
  with EOS where the text may end).
Along corpus paths and random walks every step is compared, not once per reference
state: a fault that depends on the path, or on an engine state finer than the
reference's (a stack or an Earley chart), shows only on the path that crosses it. The
same wrong answer at the same reference state is recorded once.

At each compared step an engine's full mask (its EOS bit included) and accepting status
are compared with the reference's; bits past the vocabulary are never tokens and are
cleared first. Each disagreement is triaged (`harness.diff.judge.triage`) into a policy or a
bug. A state counts once per engine in `states`; `steps` counts every comparison.

Which engines face which specs:
- regexes: every engine;
- JSON schemas: the engines that compile the converted regex (outlines-core, TokensDFA),
  which then share the reference's language exactly. Engines with their own JSON grammar
  speak a different (valid) language, whitespace and escapes included: one that declares
  its dialect is walked by a Differ of its own against our converter's regex in that
  dialect (`harness.diff.walk.dialects`); every one is checked on instances
  (`harness.diff.judge.instances`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Hashable
from functools import cached_property, partial
from typing import TypedDict

import numpy as np

from harness.diff.judge.leftmost import LeftmostFirst
from harness.diff.judge.triage import Verdict, VerdictKind, triage
from harness.diff.judge.view import Answer, Models, StateView
from harness.diff.walk.disagreement import Disagreement, SpecDiff
from harness.diff.walk.history import FILL, RESET
from harness.diff.walk.lanes import Lane
from harness.diff.walk.plan import WalkPlan, choose, cover, leanings
from harness.diff.walk.references import References, TokenIndex
from harness.diff.walk.serving import ProtocolWalker
from harness.engines.base import Compiled, Engine, allowed_ids, is_allowed
from harness.engines.support import tail_mask
from harness.errors import EngineError, TokensieveError
from harness.language import reference
from harness.vocab import Vocabulary

__all__ = ["Differ"]

# How many token ids of each side a disagreement keeps (the full counts are kept too).
KEEP_IDS = 64


class _Where(TypedDict):
    """The fields of a `Disagreement` that say where it is (`Differ._at`)."""

    engine: str
    version: str
    spec_id: str
    vocab: str
    regex: str
    prefix_ids: tuple[int, ...]
    prefix: bytes


# A refused advance is checked against the engine's own mask (filled anew where the walk
# did not compare that state) only for engines this fast per mask on average.
REFILL_MAX_S = 0.01


class Differ:
    """Walks one regex over one vocabulary for a set of compiled engines."""

    def __init__(
        self,
        spec_id: str,
        regex: str,
        vocab: Vocabulary,
        compiled: dict[str, tuple[Engine, Compiled]],
        refs: References | None = None,
        *,
        check_exact: bool = True,
    ) -> None:
        self.spec_id = spec_id
        self.vocab = vocab
        self.refs = refs or References(regex, vocab)
        self.result = SpecDiff(spec_id, vocab.name, regex)
        self.lanes = [Lane(e, c, self.refs) for e, c in compiled.values()]
        # per engine, the states compared (`Lane.key`)
        self.seen: dict[str, set[tuple[Hashable, ...]]] = {
            lane.engine.name: set() for lane in self.lanes
        }
        self.check_exact = check_exact
        self.ref_mask = np.zeros(vocab.mask_words, dtype=np.int32)
        self.exact_mask = np.zeros(vocab.mask_words, dtype=np.int32)
        self.tail = tail_mask(vocab.size)
        self.special = frozenset(vocab.special_ids - {vocab.eos_id})
        self.plan = WalkPlan()

    def run(self, plan: WalkPlan) -> SpecDiff:
        """Every walk of `plan`; the cell's result, with each engine's states and steps."""
        self.plan = plan
        for path in cover(self.refs.naive, self.vocab, plan, self.spec_id):
            self._walk(path, None, plan, every_step=False)
        for given in plan.paths:
            self._walk(list(given), None, plan, every_step=plan.every_step)
        rng = random.Random(f"{plan.seed}:{self.spec_id}:{self.vocab.name}")
        for lean in leanings(plan):
            self._walk(None, rng, plan, every_step=plan.every_step, lean=lean)
        for lane in self.lanes:
            self.result.states[lane.engine.name] = len(self.seen[lane.engine.name])
            self.result.steps[lane.engine.name] = lane.steps
        if plan.protocol_walks:
            self._protocol(plan)
        return self.result

    def _protocol(self, plan: WalkPlan) -> None:
        """The serving-protocol walks of every engine still within its mask budget
        (`harness.diff.walk.serving`); what they find joins the disagreements."""
        for lane in self.lanes:
            left = plan.engine_budget_s - lane.fill_seconds
            if left <= 0:
                continue
            walker = ProtocolWalker(self.spec_id, self.refs, self.vocab, self.tail, left)
            walker.run(lane.engine, lane.compiled, plan)
            name = lane.engine.name
            self.result.disagreements += walker.found
            self.result.protocol_walks[name] = walker.walks
            self.result.protocol_ops[name] = walker.ops

    # --- one walk --------------------------------------------------------------------------

    def _walk(
        self,
        fixed: list[int] | None,
        rng: random.Random | None,
        plan: WalkPlan,
        *,
        every_step: bool,
        lean: str = "mixed",
    ) -> None:
        naive = self.refs.naive
        state = naive.initial_state
        exact_state = self.refs.exact.initial_state
        for lane in self.lanes:
            lane.reset()
        ids: list[int] = []
        steps = len(fixed) if fixed is not None else plan.max_steps
        for step in range(steps + 1):
            naive.fill_mask(state, self.ref_mask)
            accepting = bool(naive.is_accepting(state))
            self.refs.exact.fill_mask(exact_state, self.exact_mask)
            if self.check_exact and not np.array_equal(self.ref_mask, self.exact_mask):
                self._exact_disagrees(ids, state, exact_state)
            for lane in self.lanes:
                if lane.live:
                    self._compare(lane, ids, state, exact_state, accepting, every_step)
            if step == steps:
                break
            if fixed is not None:
                token = fixed[step]
            else:
                assert rng is not None
                fresh = [lane.mask for lane in self.lanes if lane.live and lane.fresh]
                chosen = choose(rng, self.vocab, self.ref_mask, fresh, accepting, plan, lean)
                if chosen is None:
                    break
                token = chosen
            nxt = naive.next_state(state, token)
            if nxt is None:  # a corpus path the reference refuses: walk no further
                break
            state = nxt
            exact_next = self.refs.exact.next_state(exact_state, token)
            for lane in self.lanes:
                if lane.live:
                    self._advance(lane, ids, token)
            ids.append(token)
            if exact_next is None:
                break
            exact_state = exact_next

    # --- comparing one state -----------------------------------------------------------

    def _fill(self, lane: Lane) -> bool | None:
        """The engine's mask into `lane.mask` (tail bits cleared) and its accepting
        status; None when it failed or spent its budget (the lane is then dropped)."""
        if lane.fill_seconds > self.plan.engine_budget_s:
            self.result.skipped.setdefault(
                lane.engine.name,
                f"mask time budget ({self.plan.engine_budget_s:.0f}s) spent after "
                f"{len(self.seen[lane.engine.name])} states",
            )
            lane.live = False
            return None
        try:
            lane.mask.fill(0)
            started = time.perf_counter()
            lane.matcher.fill_mask(lane.mask)
            lane.note(FILL)
            lane.fill_seconds += time.perf_counter() - started
            accepting = bool(lane.matcher.is_accepting())
        except (EngineError, TokensieveError) as exc:
            self.result.skipped.setdefault(lane.engine.name, f"runtime error: {exc}")
            lane.live = False
            return None
        if self.tail is not None:
            lane.mask[-1] &= self.tail
        return accepting

    def _compare(
        self,
        lane: Lane,
        ids: list[int],
        state: int,
        exact_state: int,
        accepting: bool,
        every_step: bool,
    ) -> None:
        lane.fresh = False
        key = lane.key(state)
        seen = self.seen[lane.engine.name]
        if key in seen and not every_step:
            return
        engine_accepting = self._fill(lane)
        if engine_accepting is None:
            return
        lane.fresh = True
        lane.steps += 1
        seen.add(key)
        if np.array_equal(lane.mask, self.ref_mask) and engine_accepting == accepting:
            return
        answer = (key, engine_accepting, hash(lane.mask.tobytes()))
        if answer in lane.recorded:
            return  # this wrong answer at this state is on record already
        lane.recorded.add(answer)
        view = self._view(lane, ids, exact_state, accepting, engine_accepting)
        verdict = triage(view)
        history: tuple[int, ...] = ()
        if verdict.kind == VerdictKind.BUG and lane.log.count(RESET) > 1:
            verdict, history = lane.stale(ids, engine_accepting, self.tail, verdict)
        self._record(lane, ids, view, verdict, "mask", history)

    def _view(
        self, lane: Lane, ids: list[int], exact_state: int, accepting: bool, engine_acc: bool
    ) -> StateView:
        expected = self._ids(self.ref_mask)
        actual = self._ids(lane.mask)
        extra = list(actual - expected)[:KEEP_IDS]
        return StateView(
            engine=lane.engine,
            tokens=self.vocab.tokens,
            prefix=self.vocab.decode(ids),
            expected=expected,
            actual=actual,
            accepting_expected=accepting,
            accepting_actual=engine_acc,
            forced=self._forced(exact_state),
            dfa=self.refs.dfa,
            dotall_dfa=self.refs.dotall_dfa
            if b"\n" in b"".join(self.vocab.tokens[t] for t in extra)
            else None,
            policy_reference=self._policy_views(lane, ids),
            eos_bit_actual=is_allowed(lane.mask, self.vocab.eos_id),
            special=self.special,
            vocab=self.vocab,
            regex=self.refs.regex,
            last_token=self.vocab.tokens[ids[-1]] if ids else b"",
            models=self._models_at(ids),
        )

    def _forced(self, exact_state: int) -> bytes:
        """The text the reference forces from here (TokensDFA exact's; a grammar's
        reference computes none: empty)."""
        forced = getattr(self.refs.exact, "forced_bytes", None)
        return b"" if forced is None else bytes(forced(exact_state))

    def _models_at(self, ids: list[int]) -> Models:
        """The leftmost-first model (built on the first disagreement), and for a schema
        in an engine's dialect the deeper references' answers at this state
        (`values-nested-deeper`)."""
        deeper = None
        if self.refs.deeper is not None:
            deeper = partial(self.refs.deeper_answer, tuple(ids))
        return Models(
            leftmost_first=self._leftmost,
            deeper=deeper,
            sentence=self.refs.sentence,
            viable=self.refs.viable,
        )

    @cached_property
    def _leftmost(self) -> LeftmostFirst | None:
        if self.refs.grammar is not None:
            return None  # leftmost-first is a regex engine's reading
        return LeftmostFirst.build(self.refs.regex)

    def _policy_views(self, lane: Lane, ids: list[int]) -> dict[str, Answer | None]:
        """(allowed ids, accepting) of each policy's reference at this state, and of the
        regex without anchors (for `anchors-ignored`) and of the schema's other readings
        (`References.readings`), walked along `ids` on demand."""
        states: dict[str, int | None] = {n: s for n, s in lane.policy_states.items()}
        indexes: dict[str, TokenIndex | None] = {n: i for n, i in lane.policies.items()}
        for name in ("anchors-removed", *self.refs.readings):
            other = self.refs.policy_index(name, lane.engine)
            if other is None:
                continue
            state: int | None = other.initial_state
            for token in ids:
                state = None if state is None else other.next_state(state, token)
            indexes[name], states[name] = other, state
        out: dict[str, Answer | None] = {}
        buf = np.zeros(self.vocab.mask_words, dtype=np.int32)
        for name, index in indexes.items():
            pstate = states[name]
            if index is None or pstate is None:
                out[name] = None
                continue
            index.fill_mask(pstate, buf)
            out[name] = (self._ids(buf), bool(index.is_accepting(pstate)))
        return out

    def _ids(self, mask: np.ndarray) -> frozenset[int]:
        ids = allowed_ids(mask, self.vocab.size)
        return frozenset(ids[ids != self.vocab.eos_id].tolist())

    def _advance(self, lane: Lane, ids: list[int], token: int) -> None:
        """Advance the engine by `token`; a refusal ends its walk, and is a bug when its
        own mask here allows the token (filled now if this state was not compared)."""
        try:
            took = lane.matcher.advance(token)
        except (EngineError, TokensieveError) as exc:
            self.result.skipped.setdefault(lane.engine.name, f"runtime error: {exc}")
            lane.live = False
            return
        lane.advance_policy(token)
        if took:
            lane.note(token)
            return
        if not lane.fresh and lane.fill_seconds <= REFILL_MAX_S * max(1, lane.steps):
            # a refused advance leaves the state as it was: its mask there decides
            lane.fresh = self._fill(lane) is not None
        lane.live = False
        allowed_here = lane.fresh and is_allowed(lane.mask, token)
        if not allowed_here or ("advance", len(ids), token) in lane.recorded:
            return
        lane.recorded.add(("advance", len(ids), token))
        why = f"advance refused token {token} ({self.vocab.tokens[token]!r}) its own mask allows"
        self.result.disagreements.append(
            Disagreement(
                **self._at(lane.engine.name, lane.version, ids, self.vocab.decode(ids)),
                reference_only=(token,),
                engine_only=(),
                n_reference_only=1,
                n_engine_only=0,
                accepting_expected=False,
                accepting_actual=False,
                verdict=VerdictKind.BUG,
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
            Disagreement(
                **self._at("tokensdfa", reference.version(), ids, self.vocab.decode(ids)),
                reference_only=tuple(ref_only[:KEEP_IDS]),
                engine_only=tuple(eng_only[:KEEP_IDS]),
                n_reference_only=len(ref_only),
                n_engine_only=len(eng_only),
                accepting_expected=accepting,
                accepting_actual=bool(self.refs.exact.is_accepting(exact_state)),
                verdict=VerdictKind.BUG,
                rule="unclassified",
                why="TokensDFA exact differs from the naive index it must equal",
                agrees_with_tokensdfa=False,
            )
        )

    def _at(self, engine: str, version: str, ids: list[int], prefix: bytes) -> _Where:
        """Where a disagreement of `engine` is: the state after `ids` of this walk's spec
        and vocabulary."""
        return _Where(
            engine=engine,
            version=version,
            spec_id=self.spec_id,
            vocab=self.vocab.name,
            regex=self.refs.regex,
            prefix_ids=tuple(ids),
            prefix=prefix,
        )

    def _record(
        self,
        lane: Lane,
        ids: list[int],
        view: StateView,
        verdict: Verdict,
        what: str,
        history: tuple[int, ...] = (),
    ) -> None:
        ref_only = sorted(view.reference_only, key=lambda t: (len(self.vocab.tokens[t]), t))
        eng_only = sorted(view.engine_only, key=lambda t: (len(self.vocab.tokens[t]), t))
        self.result.disagreements.append(
            Disagreement(
                **self._at(lane.engine.name, lane.version, ids, view.prefix),
                reference_only=tuple(ref_only[:KEEP_IDS]),
                engine_only=tuple(eng_only[:KEEP_IDS]),
                n_reference_only=len(ref_only),
                n_engine_only=len(eng_only),
                accepting_expected=view.accepting_expected,
                accepting_actual=view.accepting_actual,
                verdict=verdict.kind,
                rule=verdict.rule,
                why=verdict.why,
                agrees_with_tokensdfa=view.actual == self._ids(self.exact_mask),
                what=what,
                eos_bit_actual=view.eos_bit_actual,
                history=history,
            )
        )
