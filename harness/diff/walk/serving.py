"""The serving protocol, walked: each engine's matcher driven as a server drives it, and
held at every step to a new matcher that holds the same tokens.

The lockstep walks (`harness.diff.walk.differ`) take one token after another. A server
also rolls tokens back, checks speculative drafts, consumes jump-forward text as tokens
with no mask between, resets and reuses matchers, and fills masks in batches; bugs there
(a stale state after a rollback, a draft's refused token committed, a neighbour's row
in a batch) are among those users report most, and a lockstep walk never meets them.

A protocol walk, per engine, keeps one matcher for the cell (reset and reused between
walks) and draws `WalkPlan.protocol_steps` operations at random (seeded by the plan, the
spec, the vocabulary and the engine), the tokens always from the reference's masks:
- take: fill the mask, take one token;
- forced: the text the reference forces from here (TokensDFA exact's `forced_bytes`),
  else two or three tokens, consumed as tokens with no mask filled between;
- draft: up to three tokens with a refused one planted after them; `validate` (where the
  engine has it) must count the allowed ones, each allowed one is taken, the planted one
  must be refused, and a random part of the taken ones is rolled back (where it can);
- rollback: up to four tokens (engines with `Engine.rollback`);
- reset.
After each operation the matcher's mask and accepting status must equal those of a new
matcher that took the tokens the protocol says it holds (`held_after`); every other check,
a batch of two (the matcher beside a new one, on two threads) whose rows must equal the
single fills. What the reference says of those tokens is the lockstep walks' business:
here the engine is held to itself, so a policy never explains a difference.

A difference is a bug whose `history` (`harness.diff.walk.history`) replays it on a new
matcher (`protocol_replay.replay`); a walk ends at its first finding. Each (engine,
signature) is kept once per cell. The walks share what is left of the engine's mask
budget (`WalkPlan.engine_budget_s`) after the lockstep walks: past it they stop after
the operation under way, so a slow engine walks fewer of them.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

import numpy as np

from harness.diff.judge.triage import VerdictKind
from harness.diff.walk.disagreement import Disagreement
from harness.diff.walk.history import (
    BATCH,
    FILL,
    RESET,
    decode,
    refuse_op,
    rollback_op,
    units,
    validate_op,
)
from harness.diff.walk.lanes import tokens_by_bytes
from harness.diff.walk.plan import WalkPlan, choose
from harness.diff.walk.protocol_replay import (
    Answer,
    batch_rows_wrong,
    clean,
    fresh_answer,
    takes,
)
from harness.diff.walk.references import References
from harness.engines.base import Compiled, Engine, allowed_ids, is_allowed
from harness.errors import EngineError, TokensieveError
from harness.vocab import Vocabulary

# The signatures of protocol bugs, by the operation that preceded the wrong answer.
SIGNATURES = {
    "rollback": "rollback-stale",
    "validate": "draft-check-moved",
    "refuse": "refused-token-taken",
    "token": "protocol-history",
    "forced": "forced-tokens-stale",
    "fill": "protocol-history",
    "reset": "stale-after-reset",
    "batch": "batch-row-mismatch",
}
# `Disagreement.what` of a protocol finding: a wrong answer after its history, or a
# batch row unlike its single fill
PROTOCOL_WHATS = ("protocol", "batch")
PROTOCOL_RULES = frozenset(SIGNATURES.values()) - {"stale-after-reset"} | {"draft-miscounted"}
_WEIGHTS = {"take": 5, "forced": 2, "draft": 2, "rollback": 2, "reset": 1}


class ProtocolWalker:
    """The protocol walks of one engine on one cell (one spec, one vocabulary): what
    they found, how many walks were taken and how many operations they did."""

    def __init__(
        self, spec_id: str, refs: References, vocab: Vocabulary, tail: int | None, budget_s: float
    ) -> None:
        self.spec_id = spec_id
        self.refs = refs
        self.vocab = vocab
        self.tail = tail
        self.budget_s = budget_s
        self.words = vocab.mask_words
        self.found: list[Disagreement] = []
        self.walks = 0
        self.ops = 0

    def run(self, engine: Engine, compiled: Compiled, plan: WalkPlan) -> None:
        """`plan.protocol_walks` walks of `engine` (one matcher, reset between walks)."""
        deadline = time.perf_counter() + self.budget_s
        walk = _Walk(self, engine, compiled, deadline)
        for k in range(plan.protocol_walks):
            if time.perf_counter() > deadline:
                break
            seed = f"protocol:{plan.seed}:{self.spec_id}:{self.vocab.name}:{engine.name}:{k}"
            if not walk.run(random.Random(seed), plan, first=k == 0):
                break
            self.walks += 1
        self.ops = walk.steps


class _Walk:
    """One engine's matcher on protocol walks, and the reference beside it."""

    def __init__(
        self,
        owner: ProtocolWalker,
        engine: Engine,
        compiled: Compiled,
        deadline: float,
    ) -> None:
        self.o = owner
        # past it (`time.perf_counter()`) the walk stops after its current operation: a
        # slow engine's masks (seconds each) must not run its cell past its timeout
        self.deadline = deadline
        self.engine = engine
        self.compiled = compiled
        self.recorded: set[str] = set()  # the signatures found (each kept once)
        self.matcher = compiled.matcher()
        self.ops: list[int] = []
        self.held: list[int] = []
        self.states: list[int] = []
        self.exact: list[int | None] = []
        self.steps = 0
        self.checks = 0
        self.ref_mask = np.zeros(owner.words, dtype=np.int32)
        self.mine = np.zeros(owner.words, dtype=np.int32)
        self.no_eos = WalkPlan(eos_probability=0.0)

    def run(self, rng: random.Random, plan: WalkPlan, *, first: bool) -> bool:
        """One walk; False when the engine failed or the time is spent (no further
        walks)."""
        try:
            if not first:
                self.matcher.reset()
                self.ops.append(RESET)
            self._restart()
            for _ in range(plan.protocol_steps):
                if time.perf_counter() > self.deadline:
                    return False
                if not self._check():
                    return True
                op = rng.choices(list(_WEIGHTS), weights=list(_WEIGHTS.values()))[0]
                if op == "rollback" and not (self.engine.rollback and self.held):
                    op = "take"
                self.steps += 1
                if not getattr(self, f"_{op}")(rng, plan):
                    return True
            self._check()
            return True
        except (EngineError, TokensieveError):
            return False

    def _restart(self) -> None:
        self.held = []
        self.states = [self.o.refs.naive.initial_state]
        exact = self.o.refs.exact
        self.exact = [exact.initial_state if hasattr(exact, "forced_bytes") else None]

    # --- the reference beside the matcher ---------------------------------------------

    def _ref_allowed(self) -> tuple[np.ndarray, bool]:
        naive = self.o.refs.naive
        naive.fill_mask(self.states[-1], self.ref_mask)
        return self.ref_mask, bool(naive.is_accepting(self.states[-1]))

    def _push(self, token: int) -> bool:
        """The reference takes `token` beside the matcher; False if it refuses it."""
        nxt = self.o.refs.naive.next_state(self.states[-1], token)
        if nxt is None:
            return False
        self.states.append(nxt)
        ex = self.exact[-1]
        self.exact.append(None if ex is None else self.o.refs.exact.next_state(ex, token))
        return True

    def _pick(self, rng: random.Random, plan: WalkPlan) -> int | None:
        mask, accepting = self._ref_allowed()
        # never EOS: a protocol walk ends at its step count
        return choose(rng, self.o.vocab, mask, [], accepting, self.no_eos, "mixed")

    def _refused(self, rng: random.Random, held: Sequence[int]) -> int | None:
        """A text token that both the reference here and a new matcher holding `held`
        refuse (an engine's own language may differ from the reference's by a policy);
        None if none is found."""
        mask, _ = self._ref_allowed()
        theirs = fresh_answer(self.compiled, held, self.o.words)
        if theirs is None:
            return None
        special = self.o.vocab.special_ids
        for _ in range(64):
            t = rng.randrange(self.o.vocab.size)
            if t not in special and not is_allowed(mask, t) and not is_allowed(theirs[0], t):
                return t
        return None

    # --- operations ---------------------------------------------------------------------

    def _take(self, rng: random.Random, plan: WalkPlan) -> bool:
        token = self._pick(rng, plan)
        return token is not None and self._advance(token)

    def _advance(self, token: int) -> bool:
        """Take `token` (the reference allows it); False ends the walk: a refusal is a
        bug when a new matcher holding the same tokens takes it."""
        self.ops.append(token)
        if self.matcher.advance(token):
            self.held.append(token)
            return self._push(token)
        if fresh_answer(self.compiled, [*self.held, token], self.o.words) is not None:
            self._record("protocol-history", f"refused token {token}, which a new matcher takes")
        return False

    def _forced(self, rng: random.Random, plan: WalkPlan) -> bool:
        ex = self.exact[-1]
        forced = getattr(self.o.refs.exact, "forced_bytes", None)
        text = bytes(forced(ex)) if ex is not None and forced is not None else b""
        run = self._cover(text) if text else []
        if not run:
            for _ in range(rng.randint(2, 3)):
                token = self._pick(rng, plan)
                if token is None or not self._push(token):
                    break
                run.append(token)
            del self.states[len(self.states) - len(run) :]
            del self.exact[len(self.exact) - len(run) :]
        for token in run:
            if not self._advance(token):
                return False
        return bool(run)

    def _cover(self, text: bytes) -> list[int]:
        """Tokens spelling a prefix of forced `text`, the longest allowed token first
        (looked up by their bytes: a mask fill's neighbour, no pass over the ids)."""
        by_bytes, lengths = tokens_by_bytes(self.o.vocab)
        out: list[int] = []
        at = 0
        states = len(self.states)
        while at < len(text):
            mask, _ = self._ref_allowed()
            best = next(
                (
                    t
                    for n in lengths
                    if n <= len(text) - at
                    for t in by_bytes.get(text[at : at + n], ())
                    if is_allowed(mask, t)
                ),
                None,
            )
            if best is None:
                break
            self._push(best)
            out.append(best)
            at += len(self.o.vocab.tokens[best])
        del self.states[states:]
        del self.exact[states:]
        return out

    def _draft(self, rng: random.Random, plan: WalkPlan) -> bool:
        depth = len(self.states)
        good: list[int] = []
        for _ in range(rng.randint(0, 3)):
            token = self._pick(rng, plan)
            if token is None or not self._push(token):
                break
            good.append(token)
        bad = self._refused(rng, [*self.held, *good])
        del self.states[depth:]
        del self.exact[depth:]
        if bad is None:
            return bool(good) and all(self._advance(t) for t in good)
        draft = [*good, bad]
        counted = self.matcher.validate(draft)
        if counted is not None:
            self.ops += [validate_op(len(draft)), *draft]
            want = takes(self.compiled, self.held, draft)
            if want is not None and counted != want:
                why = f"validate counted {counted} of a draft a new matcher takes {want} of"
                self._record("draft-miscounted", why)
                return False
            if not self._check():
                return False
        if not all(self._advance(t) for t in good):
            return False
        self.ops.append(refuse_op(bad))
        if self.matcher.advance(bad):
            self._record(SIGNATURES["refuse"], f"took token {bad}, which the reference refuses")
            return False
        if self.engine.rollback and good:
            back = rng.randint(0, len(good))
            return back == 0 or self._rollback_by(back)
        return True

    def _rollback(self, rng: random.Random, plan: WalkPlan) -> bool:
        return self._rollback_by(rng.randint(1, min(4, len(self.held))))

    def _rollback_by(self, count: int) -> bool:
        self.ops.append(rollback_op(count))
        if not self.matcher.rollback(count):
            self._record(SIGNATURES["rollback"], f"rollback({count}) refused after {count}+ taken")
            return False
        del self.held[len(self.held) - count :]
        del self.states[len(self.states) - count :]
        del self.exact[len(self.exact) - count :]
        return True

    def _reset(self, rng: random.Random, plan: WalkPlan) -> bool:
        self.matcher.reset()
        self.ops.append(RESET)
        self._restart()
        return True

    # --- the check ------------------------------------------------------------------------

    def _check(self) -> bool:
        """The matcher against a new one holding the same tokens (and, every other check,
        a batch of two against single fills); False after recording a difference."""
        self.checks += 1
        last = self._last_operation()
        self.mine.fill(0)
        self.matcher.fill_mask(self.mine)
        self.ops.append(FILL)
        mine = clean((self.mine, bool(self.matcher.is_accepting())), self.o.tail)
        fresh = fresh_answer(self.compiled, self.held, self.o.words)
        if fresh is None:
            return False  # a new matcher refuses what this one took: the lockstep's to judge
        fresh = clean(fresh, self.o.tail)
        if not _same(mine, fresh):
            self._record(
                SIGNATURES[last],
                "a new matcher holding the same tokens answers otherwise",
                fresh,
                mine,
            )
            return False
        if self.checks % 2 == 0:
            return self._check_batch(mine)
        return True

    def _last_operation(self) -> str:
        """What the matcher did since its last check: "forced" for two or more tokens
        with no mask between, else the kind of its last operation."""
        kinds = [decode(u[0])[0] for u in units(self.ops)]
        while kinds and kinds[-1] in ("fill", "batch"):
            kinds.pop()
        run = 0
        while run < len(kinds) and kinds[len(kinds) - 1 - run] == "token":
            run += 1
        if run >= 2:
            return "forced"
        return kinds[-1] if kinds else "fill"

    def _check_batch(self, mine: Answer) -> bool:
        """The matcher beside a new one in a batch of two, on two threads: each row must
        be its own matcher's single fill (`mine` is this matcher's)."""
        self.ops.append(BATCH)
        wrong = batch_rows_wrong(
            self.engine, self.compiled, self.matcher, self.o.words, self.o.tail, mine[0]
        )
        if wrong is None:
            return True
        row, single, got = wrong
        whose = "this matcher's" if row == 0 else "a new matcher's (beside it)"
        why = f"row {row} of a batch of two differs from {whose} single fill"
        self._record(SIGNATURES["batch"], why, (single, mine[1]), (got, mine[1]))
        return False

    def _record(
        self, rule: str, why: str, expected: Answer | None = None, actual: Answer | None = None
    ) -> None:
        """A protocol bug of this engine at the held tokens, with the history so far."""
        if rule in self.recorded:
            return
        self.recorded.add(rule)
        if expected is None or actual is None:
            fresh = fresh_answer(self.compiled, self.held, self.o.words)
            expected = (
                clean(fresh, self.o.tail)
                if fresh is not None
                else (np.zeros(self.o.words, dtype=np.int32), False)
            )
            actual = expected
        vocab = self.o.vocab
        want = set(_ids(expected[0], vocab))
        got = set(_ids(actual[0], vocab))
        ref_only, eng_only = sorted(want - got), sorted(got - want)
        self.o.found.append(
            Disagreement(
                engine=self.engine.name,
                version=self.engine.version(),
                spec_id=self.o.spec_id,
                vocab=vocab.name,
                regex=self.o.refs.regex,
                prefix_ids=tuple(self.held),
                prefix=vocab.decode(self.held),
                reference_only=tuple(ref_only[:64]),
                engine_only=tuple(eng_only[:64]),
                n_reference_only=len(ref_only),
                n_engine_only=len(eng_only),
                accepting_expected=expected[1],
                accepting_actual=actual[1],
                verdict=VerdictKind.BUG,
                rule=rule,
                why=f"{why} (serving protocol: {len(units(self.ops))} operations)",
                agrees_with_tokensdfa=False,
                what="batch" if rule == SIGNATURES["batch"] else "protocol",
                history=tuple(self.ops),
            )
        )


def _same(a: Answer, b: Answer) -> bool:
    return a[1] == b[1] and np.array_equal(a[0], b[0])


def _ids(mask: np.ndarray, vocab: Vocabulary) -> list[int]:
    return [int(t) for t in allowed_ids(mask, vocab.size) if int(t) != vocab.eos_id]
