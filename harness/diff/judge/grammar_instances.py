"""Grammar engines judged on instances, as schema engines are (`instances`): end to end,
what a user sees, beside the mask-by-mask walk.

For each engine that compiled the grammar, on the cell's vocabulary:
- every valid instance (a labelled text of the corpus: hand-written, derived from the
  grammar, or real files), tokenized with the vocabulary's encoder, is accepted through
  to EOS, else a *false rejection*;
- every invalid instance is refused at some step, else a *false acceptance*;
- completions sampled from the engine's own masks are sentences, else an *invalid
  output* (one that does not end within `max_tokens` is `unfinished`, not judged).
The judge of a text is the exact reference (`tokensdfa.grammar_accepts`), which agrees
with Lark's Earley parser on every labelled instance of the corpus
(tests/test_grammar_reference.py); an instance label it contradicts is *disputed*, not
counted.

A failure is then explained the way the mask diff explains a state, by the caller's
`explain` (`harness.diff.run.service`: the differ walks the failure's token path with
that engine alone, the cell's references and their policy readings included): it counts
as `policy` when every disagreement on the path is a declared policy of the engine (say
`greedy-lexemes` or `canonical-forced`; the failure names them), as a bug otherwise. A
failure with no disagreement on its path at all (the masks agree, yet the engine
refused) is a bug too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np

from harness.diff.judge.instances import (
    FALSE_ACCEPTANCE,
    FALSE_REJECTION,
    INVALID_OUTPUT,
    MASK_ADVANCE,
    UNVERIFIABLE,
    InstanceCounts,
    InstanceFailure,
    walk,
)
from harness.engines.base import Compiled, allowed_ids
from harness.errors import EngineError, TokensieveError
from harness.language import grammar
from harness.spec import Spec
from harness.vocab import Vocabulary

# The policies that explain a failure on a token path (comma-joined), or None for a bug.
Explain = Callable[[Sequence[int]], str | None]
# The chance a sampled completion takes EOS where it is allowed (else a random token).
EOS_CHANCE = 0.3


class GrammarInstances:
    """One engine's instance checks on one grammar and vocabulary."""

    def __init__(
        self, engine: str, compiled: Compiled, spec: Spec, voc: Vocabulary, explain: Explain
    ) -> None:
        assert spec.notation is not None
        self.spec = spec
        self.voc = voc
        self.explain = explain
        self.matcher = compiled.matcher()
        self.counts = InstanceCounts(engine, spec.id, voc.name)

    def sentence(self, data: bytes) -> bool:
        """The judge: whether the reference reads `data` as a sentence."""
        assert self.spec.notation is not None
        return grammar.accepts_bytes(self.spec.text, self.spec.notation, [data])[0]

    def record(self, kind: str, why: str) -> None:
        """A failure that stopped the checks (not counted as an instance's)."""
        c = self.counts
        c.failures.append(InstanceFailure(kind, c.engine, c.spec_id, c.vocab, "", None, why[:300]))

    def fail(self, kind: str, text: str, ids: Sequence[int], step: int | None, why: str) -> None:
        policy = self.explain(ids)
        c = self.counts
        if policy is not None:
            c.policy += 1
        elif kind == FALSE_REJECTION:
            c.false_rejections += 1
        elif kind == FALSE_ACCEPTANCE:
            c.false_acceptances += 1
        else:  # an invalid output, or a token its mask allowed then refused
            c.invalid_outputs += 1
        c.failures.append(
            InstanceFailure(kind, c.engine, c.spec_id, c.vocab, text, step, why, policy)
        )

    def check_valid(self, text: str) -> None:
        self.counts.valid += 1
        ids = self.voc.encode(text)
        ok, step, why = walk(self.matcher, self.voc, ids)
        if ok:
            return
        if not self.sentence(text.encode()):
            self.counts.disputed += 1
            return
        self.fail(FALSE_REJECTION, text, ids if step is None else ids[: step + 1], step, why)

    def check_invalid(self, text: str) -> None:
        self.counts.invalid += 1
        ids = self.voc.encode(text)
        if not walk(self.matcher, self.voc, ids)[0]:
            return
        if self.sentence(text.encode()):
            self.counts.disputed += 1
            return
        self.fail(FALSE_ACCEPTANCE, text, ids, None, "accepted through to EOS")

    def sample(self, rng: random.Random, max_tokens: int) -> None:
        """One completion from the engine's masks, judged by the reference."""
        self.counts.samples += 1
        m = self.matcher
        m.reset()
        mask = np.zeros(self.voc.mask_words, dtype=np.int32)
        ids: list[int] = []
        eos = self.voc.eos_id
        for _ in range(max_tokens):
            m.fill_mask(mask)
            allowed = [int(t) for t in allowed_ids(mask, self.voc.size)]
            text_ids = [t for t in allowed if t != eos]
            if eos in allowed and (not text_ids or rng.random() < EOS_CHANCE):
                break
            if not text_ids:
                self.counts.empty += 1
                return
            token = rng.choice(text_ids)
            if not m.advance(token):
                why = f"token {token} in the mask refused"
                self.fail(MASK_ADVANCE, self._shown(ids), [*ids, token], len(ids), why)
                return
            ids.append(token)
        else:
            self.counts.unfinished += 1
            return
        if not self.sentence(b"".join(self.voc.tokens[t] for t in ids)):
            self.fail(
                INVALID_OUTPUT, self._shown(ids), ids, None, "a completion that is no sentence"
            )

    def _shown(self, ids: Sequence[int]) -> str:
        """The text of `ids` for a failure record (bytes that are no UTF-8 replaced)."""
        return b"".join(self.voc.tokens[t] for t in ids).decode("utf-8", "replace")


def check_grammar_instances(
    engine: str,
    compiled: Compiled,
    spec: Spec,
    voc: Vocabulary,
    explain: Explain,
    valid: Sequence[str],
    invalid: Sequence[str],
    *,
    samples: int = 4,
    seed: int = 0,
    max_tokens: int = 64,
) -> InstanceCounts:
    """The checks above for one engine that compiled `spec`."""
    checker = GrammarInstances(engine, compiled, spec, voc, explain)
    rng = random.Random(f"{seed}:{spec.id}:{engine}:{voc.name}")
    try:
        for text in valid:
            checker.check_valid(text)
        for text in invalid:
            checker.check_invalid(text)
        for _ in range(samples):
            checker.sample(rng, max_tokens)
    except EngineError as exc:
        checker.record("engine-error", str(exc))
    except (TokensieveError, ValueError) as exc:  # the reference's item budget
        checker.record(UNVERIFIABLE, f"{type(exc).__name__}: {exc}")
    return checker.counts
