"""lm-format-enforcer and Formatron against the reference, their errors and versions.

As in tests/test_engines.py, each regex is checked over a synthetic vocabulary at a
shortest path to every reference state and along random walks: at every step the
adapter's full mask, accepting status and refusals must equal the reference's, after
the reference is read through the engine's declared policies:
- lm-format-enforcer: ASCII `\\d \\w \\s` (`unicode_classes=False`), and no token that is
  not valid UTF-8 on its own (`utf8_tokens_only`);
- Formatron: once the text is a complete non-empty match, EOS alone (`eager_end`), and
  the empty text never ends.
Each policy also has a test on a tiny vocabulary showing it is real
(tests/test_new_engine_policies.py), and each known upstream bug a strict xfail naming it
(tests/test_new_engine_bugs.py: a fix upstream makes the test fail, so the entry gets
removed); their repro snippets run standalone (tests/test_new_engine_repros.py). Here: the
agreement with the reference, the errors, the versions. Tests skip, with the reason, when
an engine's package is absent.
"""

from __future__ import annotations

import numpy as np
import pytest
from new_engine_helpers import FORMATRON, LMFE, LMFE_ALPHABET, NEW_ENGINES, mask_of
from test_engines import VOCAB, Walk, _available, _prepared, compare_with_reference

from harness import engines
from harness.diff.judge.triage import declared_answer
from harness.engines.base import Engine
from harness.errors import EngineError, SpecError, UnsupportedSpec
from harness.spec import Spec
from harness.vocab import Vocabulary

# 1000 is not a multiple of 32: bits past the last token must stay clear.

REGEXES = [
    "[0-9]{1,3}",
    "(ab|cd)+e?",
    r"a(\.a)*",
    "(a|ab)c?",
    "[a-z]{2,5}@[a-z]+\\.(com|org)",
    '"[^"]*"',
    "(true|false|null)",
    r"-?\d+(\.\d+)?",
    r"[\x00-\x7f]*",
    ".{0,5}x",
    "[α-ω]+",
    "(中文)+|é",
    r"\w{2}\s\d",
]

KNOWN_BUGS: dict[tuple[str, str], str] = {
    (LMFE, '"[^"]*"'): LMFE_ALPHABET,
    (LMFE, ".{0,5}x"): LMFE_ALPHABET,
}


def expected(
    engine: Engine, vocab: Vocabulary, allowed: set[int], accepting: bool, path: list[int]
) -> tuple[set[int], bool]:
    """The reference's (allowed, accepting) read through the engine's declared policies
    (the rule the differ's triage applies: `declared_answer`)."""
    text, accepting = declared_answer(
        engine, vocab.tokens, allowed - {vocab.eos_id}, accepting, at_start=not path
    )
    return set(text) | ({vocab.eos_id} if accepting else set()), accepting


class PolicyWalk(Walk):
    """The lockstep walk of tests/test_engines.py, the reference read through the
    engine's declared policies."""

    def expectation(self, allowed: set[int], accepting: bool) -> tuple[set[int], bool]:
        return expected(self.engine, VOCAB, allowed, accepting, self.path)


@pytest.mark.parametrize("regex", REGEXES)
@pytest.mark.parametrize("name", NEW_ENGINES)
def test_agrees_with_reference(name: str, regex: str, request: pytest.FixtureRequest) -> None:
    reason = KNOWN_BUGS.get((name, regex))
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True, raises=AssertionError))
    compare_with_reference(_available(name), regex, PolicyWalk)


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_bad_regex_and_schema_are_spec_errors(name: str) -> None:
    engine = _available(name)
    for spec in (
        Spec.regex("test/unclosed", "("),
        Spec.regex("test/bounds", "a{2,1}"),
        Spec.schema("test/broken", "{"),
        Spec.schema("test/meta", {"type": "object", "required": 3}),
    ):
        with pytest.raises(SpecError) as info:
            engine.compile(_prepared(engine), spec)
        assert (info.value.engine, info.value.spec_id) == (name, spec.id)
        assert name in str(info.value) and spec.id in str(info.value)


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        (LMFE, Spec.regex("t/la", "a(?=b)", features=frozenset({"lookaround"}))),
        (LMFE, Spec.regex("t/anchor", "^ab$", features=frozenset({"anchors"}))),
        (LMFE, Spec.regex("t/prop", r"\p{L}+", features=frozenset({"unicode-classes"}))),
        (LMFE, Spec.regex("t/wb", r"\bab", features=frozenset({"anchors"}))),
        (FORMATRON, Spec.regex("t/la", "a(?=b)", features=frozenset({"lookaround"}))),
        (FORMATRON, Spec.regex("t/br", r"(a)\1", features=frozenset({"backreference"}))),
        (FORMATRON, Spec.regex("t/prop", r"\p{L}+", features=frozenset({"unicode-classes"}))),
        (FORMATRON, Spec.regex("t/wb", r"\bab", features=frozenset({"anchors"}))),
        (FORMATRON, Spec.schema("t/root", {"type": "integer"})),
    ],
    ids=lambda v: v.id if isinstance(v, Spec) else v,
)
def test_valid_spec_it_cannot_handle_is_unsupported(name: str, spec: Spec) -> None:
    engine = _available(name)
    with pytest.raises(UnsupportedSpec) as info:
        engine.compile(_prepared(engine), spec)
    assert (info.value.engine, info.value.spec_id) == (name, spec.id)


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_wrong_mask_buffer_is_engine_error(name: str) -> None:
    engine = _available(name)
    compiled = engine.compile(_prepared(engine), Spec.regex("test/digits", "[0-9]+"))
    for bad in (
        np.zeros(VOCAB.mask_words - 1, dtype=np.int32),
        np.zeros(VOCAB.mask_words, dtype=np.int64),
        np.zeros((2, VOCAB.mask_words), dtype=np.int32)[:, 0],
    ):
        with pytest.raises(EngineError) as info:
            compiled.matcher().fill_mask(bad)
        assert info.value.engine == name


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_ids_it_never_knows_are_refused(name: str) -> None:
    """Specials, EOS, out-of-range ids: False, no state change (never a raw error)."""
    engine = _available(name)
    matcher = engine.compile(_prepared(engine), Spec.regex("t/x", "<s>|x")).matcher()
    before = mask_of(matcher, VOCAB)
    assert VOCAB.tokens.index(b"<s>") not in before
    for token in (*sorted(VOCAB.special_ids), VOCAB.size, VOCAB.size + 1000):
        assert not matcher.advance(token)
    assert mask_of(matcher, VOCAB) == before


def test_version_and_availability() -> None:
    for name in NEW_ENGINES:
        engine = engines.get(name)
        ok, why = engine.available()
        assert ok or why  # never raises; says why not
        if ok:
            assert engine.version()[0].isdigit()
