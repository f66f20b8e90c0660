"""A `stale-after-reset` finding (`harness.diff.lanes.Lane.stale`) shrunk to a few tokens.

The minimizer's probes walk new matchers, so a wrong answer that only a reused matcher
gives never shows there. Here the case is rebuilt directly on a tiny vocabulary of the
history's tokens, the prefix's and a few witnesses of each side: one matcher walks the
history, fills its mask and is reset before walking the prefix; a new matcher walks the
prefix alone. While their answers differ the case holds, and delta debugging drops the
witnesses it does not need. The repro script replays the same history (`HISTORY`) before
`PREFIX`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from harness.diff.ddmin import ddmin
from harness.diff.disagreement import Disagreement
from harness.diff.minimize import Minimal, tiny_vocabulary
from harness.diff.references import References
from harness.engines.base import Engine, Matcher, allowed_ids
from harness.errors import TokensieveError
from harness.spec import Spec
from harness.vocab import Vocabulary

# Witness tokens of each side (engine only, reference only) the search starts with.
WITNESSES = 8


def minimize_stale(
    d: Disagreement, engine: Engine, voc: Vocabulary, budget_s: float, schema: str = ""
) -> Minimal | None:
    """The smallest case found of `d` (a `stale-after-reset` disagreement with its
    history), or None when the tiny vocabulary does not show it."""
    deadline = time.monotonic() + budget_s
    words = [voc.tokens[i] for i in (*d.history, *d.prefix_ids)]
    core = list(dict.fromkeys(words))
    sides = [voc.tokens[i] for i in (*d.engine_only[:WITNESSES], *d.reference_only[:WITNESSES])]
    witnesses = [t for t in dict.fromkeys(sides) if t not in core and t]
    if _case(d, engine, voc, schema, core + witnesses) is None:
        return None
    witnesses = ddmin(
        witnesses, lambda ws: _case(d, engine, voc, schema, core + ws) is not None, deadline
    )
    found = _case(d, engine, voc, schema, core + witnesses)
    assert found is not None  # ddmin keeps the case holding
    vocab, history, prefix, (mask, accepting) = found
    refs = References(d.regex, vocab)
    state = refs.naive.initial_state
    for t in prefix:
        state = refs.naive.next_state(state, t)
    allowed = {int(t) for t in allowed_ids(mask, vocab.size)}
    actual = allowed - {vocab.eos_id}
    return Minimal(
        engine=engine.name,
        version=d.version,
        regex=d.regex,
        rule=d.rule,
        tokens=tuple(vocab.tokens),
        prefix_ids=tuple(prefix),
        expected=tuple(int(t) for t in refs.naive.allowed(state)),
        actual=tuple(sorted(actual | ({vocab.eos_id} if accepting else set()))),
        accepting_expected=bool(refs.naive.is_accepting(state)),
        accepting_actual=accepting,
        what="mask",
        source_regex=d.regex,
        eos_bit_actual=vocab.eos_id in allowed,
        schema=schema,
        history=tuple(history),
    )


def _case(
    d: Disagreement, engine: Engine, voc: Vocabulary, schema: str, tokens: Sequence[bytes]
) -> tuple[Vocabulary, list[int], list[int], tuple[np.ndarray, bool]] | None:
    """(vocabulary, history ids, prefix ids, the reused matcher's answer) on the tiny
    vocabulary of `tokens`, when that answer differs from a new matcher's; else None."""
    vocab = tiny_vocabulary(tokens)
    index = {t: i for i, t in enumerate(vocab.tokens) if i != vocab.eos_id}
    history = [index[voc.tokens[i]] for i in d.history]
    prefix = [index[voc.tokens[i]] for i in d.prefix_ids]
    spec_id = f"{d.spec_id}#stale"
    spec = Spec.schema(spec_id, schema) if schema else Spec.regex(spec_id, d.regex)
    try:
        compiled = engine.compile(engine.prepare(vocab), spec)
        reused = compiled.matcher()
        if _answer(reused, history, vocab) is None:
            return None
        reused.reset()
        stale = _answer(reused, prefix, vocab)
        fresh = _answer(compiled.matcher(), prefix, vocab)
    except TokensieveError:
        return None
    if stale is None or fresh is None:
        return None
    if stale[1] == fresh[1] and np.array_equal(stale[0], fresh[0]):
        return None
    return vocab, history, prefix, stale


def _answer(
    matcher: Matcher, ids: Sequence[int], vocab: Vocabulary
) -> tuple[np.ndarray, bool] | None:
    """The mask and accepting status after walking `ids`; None if a token is refused."""
    if not all(matcher.advance(t) for t in ids):
        return None
    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    matcher.fill_mask(mask)
    return mask, bool(matcher.is_accepting())
