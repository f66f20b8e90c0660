"""lm-format-enforcer and Formatron against the reference, their declared policies, their
known upstream bugs, their errors and their standalone repro snippets.

As in tests/test_engines.py, each regex is checked over a synthetic vocabulary at a
shortest path to every reference state and along random walks: at every step the
adapter's full mask, accepting status and refusals must equal the reference's, after
the reference is read through the engine's declared policies:
- lm-format-enforcer: ASCII `\\d \\w \\s` (`unicode_classes=False`), and no token that is
  not valid UTF-8 on its own (`utf8_tokens_only`);
- Formatron: once the text is a complete non-empty match, EOS alone (`eager_end`), and
  the empty text never ends.
Each policy also has a test on a tiny vocabulary showing it is real, and each known
upstream bug a strict xfail naming it (a fix upstream makes the test fail, so the entry
gets removed). Tests skip, with the reason, when an engine's package is absent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_engines import (
    VOCAB,
    Walk,
    _allowed,
    _available,
    _policy_regex,
    _prepared,
    compare_with_reference,
)

from harness import engines
from harness.corpora.paths import POLICY_LAYOUTS
from harness.diff.findings import instance_repro, repro
from harness.diff.judge.instances import FALSE_REJECTION, check_instances
from harness.diff.judge.triage import declared_answer
from harness.diff.shrink.minimize import Minimal, tiny_vocabulary
from harness.engines.base import Engine
from harness.errors import EngineError, SpecError, UnsupportedSpec
from harness.spec import Spec
from harness.vocab import Vocabulary

tokensdfa = pytest.importorskip("tokensdfa")

LMFE = "lm-format-enforcer"
FORMATRON = "formatron"
NEW_ENGINES = (LMFE, FORMATRON)

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

# Upstream bugs of the pinned releases, each shown minimally by a strict xfail below.
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
KNOWN_BUGS: dict[tuple[str, str], str] = {
    (LMFE, '"[^"]*"'): LMFE_ALPHABET,
    (LMFE, ".{0,5}x"): LMFE_ALPHABET,
}


def _native(vocab: Vocabulary) -> Any:
    return tokensdfa.Vocabulary(vocab.tokens, vocab.eos_id, sorted(vocab.special_ids))


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


# --- the declared policies, each shown on a tiny vocabulary -------------------------------


def _tiny(engine: Engine, tokens: list[bytes], spec: Spec) -> tuple[Vocabulary, Any]:
    vocab = tiny_vocabulary(tokens)  # EOS is id 0, tokens from id 1
    return vocab, engine.compile(engine.prepare(vocab), spec).matcher()


def _mask_of(matcher: Any, vocab: Vocabulary) -> set[int]:
    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    matcher.fill_mask(mask)
    return _allowed(mask, vocab)


def _reference_mask(regex: str, vocab: Vocabulary, path: tuple[int, ...] = ()) -> set[int]:
    ref = tokensdfa.NaiveIndex(regex, _native(vocab))
    state = ref.initial_state
    for t in path:
        state = ref.next_state(state, t)
    mask = np.zeros(vocab.mask_words, dtype=np.int32)
    ref.fill_mask(state, mask)
    return _allowed(mask, vocab)


def test_lmfe_policy_utf8_tokens_only() -> None:
    """A byte fragment of a character is never allowed, though the reference allows it
    wherever a continuation completes the character; whole characters are."""
    engine = _available(LMFE)
    zhong = "中".encode()
    tokens = [zhong[:1], zhong[1:], zhong, b"a"]
    vocab, matcher = _tiny(engine, tokens, Spec.regex("t/zh", "中+a"))
    assert _reference_mask("中+a", vocab) == {1, 3}
    assert _mask_of(matcher, vocab) == {3}
    assert not matcher.advance(1)
    assert matcher.advance(3)
    assert _mask_of(matcher, vocab) == {3, 4}


def test_lmfe_policy_ascii_classes() -> None:
    """`\\d` and `\\s` are ASCII: the reference (Unicode) allows the Arabic-Indic three
    and the no-break space, the engine neither; the ASCII reading gives its mask."""
    engine = _available(LMFE)
    tokens = ["٣".encode(), b"3", "\u00a0".encode(), b" ", b"\x1c"]
    # (\x1c is whitespace to neither: Rust's `\s` is the White_Space property)
    for regex, unicode_only in ((r"\d", {1}), (r"\s", {3})):
        vocab, matcher = _tiny(engine, tokens, Spec.regex("t/cls", regex))
        full = _reference_mask(regex, vocab)
        assert unicode_only <= full
        assert _mask_of(matcher, vocab) == full - unicode_only
        assert _mask_of(matcher, vocab) == _reference_mask(_policy_regex(engine, regex), vocab)


FLAT_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "tag": {"enum": ["x", "y"]}},
    "required": ["id", "tag"],
    "additionalProperties": False,
}
FLAT_VALID = [{"id": 1, "tag": "x"}, {"id": -20, "tag": "y"}]
FLAT_INVALID = [{"id": "1", "tag": "x"}, {"id": 1}, {"id": 1, "tag": "z"}]
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


def _instances(name: str, schema: dict, valid: list, invalid: list, samples: int):  # type: ignore[no-untyped-def]
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


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_schema_instances_flat(name: str) -> None:
    """Valid instances in every layout its whitespace policy promises (compact, spaced,
    indented) are accepted, invalid ones refused, sampled outputs valid."""
    counts = _instances(name, FLAT_SCHEMA, FLAT_VALID, FLAT_INVALID, samples=8)
    assert (counts.valid, counts.invalid, counts.samples) == (2, 3, 8)
    assert counts.false_rejections == 0, counts.failures
    assert counts.false_acceptances == 0, counts.failures
    assert counts.invalid_outputs == 0, counts.failures


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_schema_instances_strings_numbers_arrays(name: str) -> None:
    counts = _instances(name, NESTED_SCHEMA, NESTED_VALID, NESTED_INVALID, samples=0)
    assert counts.false_rejections == 0, counts.failures
    assert counts.false_acceptances == 0, counts.failures


def test_formatron_schema_samples_are_valid() -> None:
    counts = _instances(FORMATRON, NESTED_SCHEMA, [], [], samples=12)
    assert counts.invalid_outputs == 0, counts.failures


@pytest.mark.xfail(reason=f"{LMFE_JSON_STRING_POPS}; {LMFE_RAW_CONTROL}", strict=True)
def test_lmfe_schema_samples_are_valid() -> None:
    counts = _instances(LMFE, NESTED_SCHEMA, [], [], samples=12)
    assert counts.invalid_outputs == 0, counts.failures


def test_lmfe_policy_json_limits() -> None:
    """Its pinned JSON defaults: at most 12 consecutive whitespace characters, and at
    most 20 items in an array without `maxItems` (jsonschema takes both texts)."""
    engine = _available(LMFE)
    schema = {"type": "object", "properties": {"a": {"type": "array"}}, "required": ["a"]}
    compiled = engine.compile(_prepared(engine), Spec.schema("test/limits", schema))
    counts = check_instances(
        LMFE, compiled, schema, "t", VOCAB, [{"a": [1] * 20}, {"a": [1] * 21}], [], samples=0
    )
    assert [(f.kind, f.text.count("1")) for f in counts.failures] == [(FALSE_REJECTION, 21)]
    assert counts.false_rejections == 1 and counts.policy == 0  # not declared here
    declared = engine.policies.json_schema
    counts = check_instances(
        LMFE,
        compiled,
        schema,
        "t",
        VOCAB,
        [{"a": [1] * 21}],
        [],
        samples=0,
        schema_policies=declared,
    )
    assert (counts.false_rejections, counts.policy) == (0, 1), counts.failures
    assert counts.failures[0].policy == "array-items-at-most-20"
    # indented seven levels deep: a run of 15 spaces, refused, explained by the cap
    deep: Any = [1]
    for _ in range(6):
        deep = [deep]
    counts = check_instances(
        LMFE,
        compiled,
        schema,
        "t",
        VOCAB,
        [{"a": deep}],
        [],
        samples=0,
        layouts=("compact", "pretty"),
        schema_policies=declared,
    )
    assert (counts.false_rejections, counts.policy) == (0, 1), counts.failures
    assert counts.failures[0].policy == "whitespace-runs-at-most-12"
    for run, ok in ((12, True), (13, False)):
        text = "{" + " " * run + '"a":[]}'
        matcher = compiled.matcher()
        took = all(matcher.advance(VOCAB.tokens.index(bytes([b]))) for b in text.encode())
        assert took == ok and (not ok or matcher.is_accepting()), run


def test_formatron_policy_eager_end() -> None:
    """Once the text is a complete non-empty match, EOS alone is allowed, though the
    pattern could go on; the empty text never ends, though it matches."""
    engine = _available(FORMATRON)
    vocab, matcher = _tiny(engine, [b"1", b"2", b"12", b"a"], Spec.regex("t/d", "[0-9]*"))
    assert _reference_mask("[0-9]*", vocab) == {0, 1, 2, 3}
    assert _mask_of(matcher, vocab) == {1, 2, 3} and not matcher.is_accepting()
    assert matcher.advance(1)
    assert _reference_mask("[0-9]*", vocab, (1,)) == {0, 1, 2, 3}
    assert _mask_of(matcher, vocab) == {0} and matcher.is_accepting()
    assert not matcher.advance(2)
    matcher.reset()
    assert _mask_of(matcher, vocab) == {1, 2, 3} and not matcher.is_accepting()


def test_formatron_policy_unicode_classes() -> None:
    engine = _available(FORMATRON)
    tokens = ["٣".encode(), b"3", "\u00a0".encode(), b" ", b"x"]
    for regex in (r"\d", r"\s"):
        vocab, matcher = _tiny(engine, tokens, Spec.regex("t/cls", regex))
        assert _mask_of(matcher, vocab) == _reference_mask(regex, vocab) - {0}


def test_formatron_policy_json_layout() -> None:
    """Whitespace `[ \\t\\n]*` before each JSON token (so no `\\r`), keys in the schema's
    order, no key the schema does not list, no `\\/` escape."""
    engine = _available(FORMATRON)
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["a", "b"],
    }
    compiled = engine.compile(_prepared(engine), Spec.schema("test/layout", schema))

    def takes(text: str) -> bool:
        matcher = compiled.matcher()
        ok = all(matcher.advance(VOCAB.tokens.index(bytes([b]))) for b in text.encode())
        return ok and matcher.is_accepting()

    assert takes('{\n\t "a" : 1 ,\n  "b":"x"}')
    assert not takes('{"a":1,\r"b":"x"}')
    assert not takes('{"b":"x","a":1}')
    assert not takes('{"a":1,"b":"x","c":2}')
    assert takes('{"a":1,"b":"\\u002f"}') and not takes('{"a":1,"b":"\\/"}')
    # the differ counts those refusals as its declared policies, each named
    valid = [{"b": "x", "a": 1}, {"a": 1, "b": "x", "c": 2}, {"c": 2, "b": "x", "a": 1}]
    counts = check_instances(
        FORMATRON,
        compiled,
        schema,
        "t",
        VOCAB,
        valid,
        [],
        samples=0,
        schema_policies=engine.policies.json_schema,
    )
    assert (counts.false_rejections, counts.policy) == (0, 3), counts.failures
    assert [f.policy for f in counts.failures] == [
        "keys-in-schema-order",
        "additional-properties-false",
        "additional-properties-false+keys-in-schema-order",
    ]


# --- known upstream bugs, minimal --------------------------------------------------------


@pytest.mark.xfail(reason=LMFE_ALPHABET, strict=True)
def test_lmfe_bug_alphabet() -> None:
    engine = _available(LMFE)
    # "中" only ever follows another character in a token: it starts none
    vocab, matcher = _tiny(engine, [b'"', b"x", "x中".encode()], Spec.regex("t/s", '"[^"]*"'))
    assert matcher.advance(1)
    assert _mask_of(matcher, vocab) == _reference_mask('"[^"]*"', vocab, (1,)) == {1, 2, 3}


@pytest.mark.xfail(reason=LMFE_JSON_STRING_POPS, strict=True)
def test_lmfe_bug_json_string_pops_the_object() -> None:
    engine = _available(LMFE)
    schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    tokens = [b'{"s":"', "x中".encode(), b'"}', b"x"]
    vocab, matcher = _tiny(engine, tokens, Spec.schema("t/s", schema))
    assert matcher.advance(1)
    if matcher.advance(2):  # allowed, as the free-text shortcut says: then it must go on
        assert not matcher.is_accepting()
        assert 3 in _mask_of(matcher, vocab)


@pytest.mark.xfail(reason=LMFE_RAW_CONTROL, strict=True)
def test_lmfe_bug_raw_control_character() -> None:
    engine = _available(LMFE)
    schema = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}
    vocab, matcher = _tiny(engine, [b'{"s":"', b"\t", b'"}'], Spec.schema("t/s", schema))
    assert matcher.advance(1)
    assert 2 not in _mask_of(matcher, vocab)


@pytest.mark.xfail(reason=LMFE_LITERAL_ITEMS, strict=True)
def test_lmfe_bug_array_of_literals() -> None:
    engine = _available(LMFE)
    takes = {}
    for item, typ in (("1", "integer"), ("true", "boolean")):
        schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": typ}}}}
        compiled = engine.compile(_prepared(engine), Spec.schema(f"t/{typ}", schema))
        text = '{"a":[' + ",".join([item] * 12) + "]}"
        matcher = compiled.matcher()
        ok = all(matcher.advance(VOCAB.tokens.index(bytes([b]))) for b in text.encode())
        takes[typ] = ok and matcher.is_accepting()
    assert takes == {"integer": True, "boolean": True}


@pytest.mark.xfail(reason=KBNF_FINISHED_MID_TOKEN, strict=True)
def test_formatron_bug_finished_mid_token() -> None:
    engine = _available(FORMATRON)
    vocab, matcher = _tiny(engine, [b"a", b"ab", b"c", b"b"], Spec.regex("t/abc", "a(bc)?"))
    assert _mask_of(matcher, vocab) == {1, 2}
    assert matcher.advance(2)
    assert not matcher.is_accepting()  # "ab" is no match of a(bc)?
    assert _mask_of(matcher, vocab) == {3}


@pytest.mark.xfail(reason=FORMATRON_QUOTING, strict=True, raises=UnsupportedSpec)
@pytest.mark.parametrize("text", ["it's", "a\\b"])
def test_formatron_bug_quoting(text: str) -> None:
    engine = _available(FORMATRON)
    schema = {"type": "object", "properties": {"k": {"enum": [text]}}, "required": ["k"]}
    engine.compile(_prepared(engine), Spec.schema("t/quote", schema))


@pytest.mark.xfail(reason=KBNF_REFUSAL_MOVES_STATE, strict=True)
def test_kbnf_bug_refusal_moves_state() -> None:
    """Driven directly (the adapter checks the mask first, so its `advance` keeps the
    state, as the comparisons above show)."""
    _available(FORMATRON)
    import kbnf

    tokens = {1: b"r", 2: b"bssmbhbrej", 3: b"@", 4: b"a"}
    vocab = kbnf.Vocabulary(
        {i: kbnf.Token(t) for i, t in tokens.items()}, {i: t.decode() for i, t in tokens.items()}
    )
    engine = kbnf.InternalEngine("start ::= #'[a-z]{2,5}@[a-z]+';", vocab, None)
    engine.try_accept_new_token(1)
    with pytest.raises(ValueError):
        engine.try_accept_new_token(2)
    engine.compute_allowed_token_ids()
    assert engine.get_allowed_token_ids_from_last_computation() == [4]  # "r@" is no match


def test_lmfe_vocabulary_it_cannot_build_is_engine_error() -> None:
    """It asserts that some token fits inside a JSON string; a tiny vocabulary (as the
    minimizer builds) may have none: a project error, not an AssertionError."""
    engine = _available(LMFE)
    for tokens in ([b'"x'], ["中".encode()[:1]]):
        with pytest.raises(EngineError) as info:
            engine.prepare(tiny_vocabulary(tokens))
        assert info.value.engine == LMFE


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
    before = _mask_of(matcher, VOCAB)
    assert VOCAB.tokens.index(b"<s>") not in before
    for token in (*sorted(VOCAB.special_ids), VOCAB.size, VOCAB.size + 1000):
        assert not matcher.advance(token)
    assert _mask_of(matcher, VOCAB) == before


def test_version_and_availability() -> None:
    for name in NEW_ENGINES:
        engine = engines.get(name)
        ok, why = engine.available()
        assert ok or why  # never raises; says why not
        if ok:
            assert engine.version()[0].isdigit()


# --- standalone repro snippets -----------------------------------------------------------


def _minimal(
    name: str, engine: Engine, regex: str, tokens: list[bytes], prefix: tuple[int, ...]
) -> Minimal:
    """The engine's own mask after `prefix` as `actual`, and a wrong `expected`, so the
    script must report REPRODUCED (it compares the engine with EXPECTED)."""
    vocab, matcher = _tiny(engine, tokens, Spec.regex("t/r", regex))
    for t in prefix:
        assert matcher.advance(t)
    actual = sorted(_mask_of(matcher, vocab))
    return Minimal(
        engine=name,
        version=engine.version(),
        regex=regex,
        rule="unclassified",
        tokens=tuple(vocab.tokens),
        prefix_ids=prefix,
        expected=tuple(sorted(set(actual) ^ {1})),
        actual=tuple(actual),
        accepting_expected=False,
        accepting_actual=matcher.is_accepting(),
        what="mask",
    )


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_mask_repro_runs_standalone(name: str, tmp_path: Path) -> None:
    engine = _available(name)
    tokens = [b"a", b"b", b"ab", "é".encode(), "é".encode()[:1], b"\xff"]
    m = _minimal(name, engine, "(a|é)+b", tokens, prefix=(1, 4))
    assert 2 in m.actual and 0 not in m.actual  # "aé" goes on with "b"
    path = tmp_path / "repro.py"
    path.write_text(repro.script(m, {}, f"{name} test", "a test"))
    reproduced, output = repro.run(path)
    assert reproduced, output
    fixed = tmp_path / "fixed.py"
    fixed.write_text(repro.script(Minimal(**{**m.__dict__, "expected": m.actual}), {}, "t", "t"))
    reproduced, output = repro.run(fixed)
    assert not reproduced and "FIXED" in output, output
    assert "harness" not in path.read_text()
    # the advance half of the script: the advance taken, the state after it as expected
    vocab, matcher = _tiny(engine, tokens, Spec.regex("t/r", "(a|é)+b"))
    for t in (1, 4, 1):
        assert matcher.advance(t)
    after = tuple(sorted(_mask_of(matcher, vocab)))
    took = Minimal(**{**m.__dict__, "what": "advance", "expected": (1,), "next_expected": after})
    adv = tmp_path / "advance.py"
    adv.write_text(repro.script(took, {}, "t", "t"))
    done = subprocess.run([sys.executable, "-I", adv.name], cwd=tmp_path, capture_output=True)
    output = done.stdout.decode(errors="replace")
    assert done.returncode == 0 and "advance returned True" in output, output
    assert output.rstrip().endswith("FIXED"), output


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_instance_repro_runs_standalone(name: str, tmp_path: Path) -> None:
    _available(name)
    schema = NESTED_SCHEMA
    good = json.dumps({"s": 'é"x', "n": 2, "a": [True]}, ensure_ascii=False)
    bad = json.dumps({"s": "x", "n": 2, "a": ["no"]})
    for text, expect in ((good, "FIXED"), (bad, "FIXED")):
        kind = FALSE_REJECTION if text == good else "false-acceptance"
        r = instance_repro.InstanceRepro(name, name, kind, schema, text, why="test")
        path = tmp_path / f"{kind}.py"
        path.write_text(instance_repro.script(r, "t", "t"))
        done = subprocess.run(
            [sys.executable, "-I", path.name], cwd=tmp_path, capture_output=True, text=True
        )
        assert expect in done.stdout, done.stdout + done.stderr
        assert "harness" not in path.read_text()
