"""What the shrinkers of history-dependent findings share (a stale-after-reset history,
`stale`; a serving-protocol history, `protocol_shrink`): the finding's spec compiled for
a tiny vocabulary (`compile_case`), and the finding's minimal form once its history has
been replayed there (`replayed_minimal`): the reference's answer after the tokens the
matcher holds beside the answer the replay gave."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from harness.diff.shrink.minimal import Minimal, minimal_form, with_grammar
from harness.diff.walk.disagreement import Disagreement
from harness.diff.walk.references import References
from harness.engines.base import Compiled, Engine, allowed_ids
from harness.errors import TokensieveError
from harness.language import reference
from harness.spec import Spec
from harness.vocab import Vocabulary


def compile_case(
    d: Disagreement,
    engine: Engine,
    vocab: Vocabulary,
    schema: str,
    grammar: Spec | None,
    tag: str,
) -> Compiled | None:
    """`d`'s spec (its grammar, else `schema`, else its regex) compiled by `engine` for
    `vocab`, under the id `SPEC#tag`; None where the engine refuses it there."""
    spec_id = f"{d.spec_id}#{tag}"
    if grammar is not None:
        spec = replace(grammar, id=spec_id)
    else:
        spec = Spec.schema(spec_id, schema) if schema else Spec.regex(spec_id, d.regex)
    try:
        return engine.compile(engine.prepare(vocab), spec)
    except TokensieveError:
        return None


def replayed_minimal(
    d: Disagreement,
    engine: Engine,
    vocab: Vocabulary,
    held: Sequence[int],
    answer: tuple[np.ndarray, bool],
    history: Sequence[int],
    *,
    what: str,
    schema: str,
    grammar: Spec | None,
) -> Minimal | None:
    """The minimal form of `d` on tiny `vocab`: after `history` the matcher holds `held`
    and gave `answer` (mask, accepting); expected is the reference's answer after
    `held`. None when the reference refuses `held` on this vocabulary."""
    refs = References(d.regex, vocab, grammar=grammar)
    state = reference.walk(refs.naive, held)
    if state is None:
        return None
    mask, accepting = answer
    allowed = {int(t) for t in allowed_ids(mask, vocab.size)}
    eos = vocab.eos_id
    minimal = Minimal(
        **minimal_form(d, engine, vocab),
        prefix_ids=tuple(held),
        expected=tuple(int(t) for t in refs.naive.allowed(state)),
        actual=tuple(sorted((allowed - {eos}) | ({eos} if accepting else set()))),
        accepting_expected=bool(refs.naive.is_accepting(state)),
        accepting_actual=accepting,
        what=what,
        source_regex=d.regex,
        eos_bit_actual=eos in allowed,
        schema=schema,
        history=tuple(history),
    )
    return with_grammar(minimal, engine, grammar)
