"""What the tests of lm-format-enforcer and Formatron share (tests/test_new_engine*.py):
their names, the upstream bugs of the pinned releases (each shown minimally by a strict
xfail in tests/test_new_engine_bugs.py), the schemas their instance checks use, and the
helpers that compile a spec over a tiny vocabulary and read masks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_engines import VOCAB, _allowed, _available, _prepared

from harness.corpora.paths import POLICY_LAYOUTS
from harness.diff.judge.instances import InstanceCounts, check_instances
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.engines.base import Engine
from harness.spec import Spec
from harness.vocab import Vocabulary

tokensdfa = pytest.importorskip("tokensdfa")

LMFE = "lm-format-enforcer"
FORMATRON = "formatron"
NEW_ENGINES = (LMFE, FORMATRON)

# Upstream bugs of the pinned releases, each shown minimally by a strict xfail in
# tests/test_new_engine_bugs.py.
LMFE_ALPHABET = (
    "lm-format-enforcer 0.11.3 reads `.` and negated classes as the characters that start "
    "some token (its tokenizer alphabet): a token holding a character that starts no token "
    "is refused"
)
LMFE_JSON_STRING_POPS = (
    "lm-format-enforcer 0.11.3 allows, inside a JSON string, a token holding a character "
    "outside its alphabet (its free-text shortcut), then no parser takes that character: "
    "the whole object is popped and EOS is allowed inside the open string"
)
LMFE_RAW_CONTROL = (
    "lm-format-enforcer 0.11.3 lets a raw control character (a tab) into a JSON string, "
    "which JSON requires escaped"
)
KBNF_FINISHED_MID_TOKEN = (
    "kbnf 0.4.2 (Formatron 0.5.0) reports Finished after a token that passes through a "
    "complete match inside its bytes: with `a(bc)?` the token 'ab' ends the text at 'ab'"
)
LMFE_LITERAL_ITEMS = (
    "lm-format-enforcer 0.11.3 caps an array of booleans or nulls at 11 items, where its "
    "limit (20 without maxItems) holds for numbers and strings"
)
KBNF_REFUSAL_MOVES_STATE = (
    "kbnf 0.4.2 (Formatron 0.5.0): a refused token whose first bytes fit leaves the engine "
    "as if they had been consumed, though documented to leave it unchanged"
)
FORMATRON_QUOTING = (
    "formatron 0.5.0 quotes a property name or enum string with Python's repr inside a "
    "single-quoted KBNF regex: one holding ' or \\ gives a grammar kbnf cannot read"
)


def native_vocabulary(vocab: Vocabulary) -> Any:
    return tokensdfa.Vocabulary(vocab.tokens, vocab.eos_id, sorted(vocab.special_ids))


def tiny_matcher(engine: Engine, tokens: list[bytes], spec: Spec) -> tuple[Vocabulary, Any]:
    vocab = tiny_vocabulary(tokens)  # EOS is id 0, tokens from id 1
    return vocab, engine.compile(engine.prepare(vocab), spec).matcher()


def mask_of(matcher: Any, vocab: Vocabulary) -> set[int]:
    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    matcher.fill_mask(mask)
    return _allowed(mask, vocab)


def reference_mask(regex: str, vocab: Vocabulary, path: tuple[int, ...] = ()) -> set[int]:
    ref = tokensdfa.NaiveIndex(regex, native_vocabulary(vocab))
    state = ref.initial_state
    for t in path:
        state = ref.next_state(state, t)
    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    ref.fill_mask(state, mask)
    return _allowed(mask, vocab)


NESTED_SCHEMA = {
    "type": "object",
    "properties": {
        "s": {"type": "string"},
        "n": {"type": "number"},
        "a": {"type": "array", "items": {"type": "boolean"}},
    },
    "required": ["s", "n", "a"],
    "additionalProperties": False,
}
NESTED_VALID = [
    {"s": "hello, world", "n": 1.5e3, "a": [True, False]},
    {"s": 'a"b\\c\nd/e', "n": -0.25, "a": []},
    {"s": "", "n": 0, "a": [True] * 3},
]
NESTED_INVALID = [
    {"s": 1, "n": 1, "a": []},
    {"s": "x", "n": "1", "a": []},
    {"s": "x", "n": 1, "a": [1]},
    {"s": "x", "n": 1},
]


def schema_instances(
    name: str, schema: dict[str, Any], valid: list[Any], invalid: list[Any], samples: int
) -> InstanceCounts:
    """`name`'s instance checks of `schema` over VOCAB, in every layout its whitespace
    policy promises."""
    engine = _available(name)
    spec = Spec.schema("test/schema", schema)
    compiled = engine.compile(_prepared(engine), spec)
    return check_instances(
        name,
        compiled,
        schema,
        spec.id,
        VOCAB,
        valid,
        invalid,
        samples=samples,
        layouts=POLICY_LAYOUTS[engine.policies.json_whitespace],
    )
