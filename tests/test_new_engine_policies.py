"""The declared policies of lm-format-enforcer and Formatron, each shown real on a tiny
vocabulary (the reference allows what the engine refuses, and the policy's reading of
the reference gives the engine's mask), and their JSON-schema instance checks.
"""

from __future__ import annotations

from typing import Any

import pytest
from new_engine_helpers import (
    FORMATRON,
    LMFE,
    LMFE_JSON_STRING_POPS,
    LMFE_RAW_CONTROL,
    NESTED_INVALID,
    NESTED_SCHEMA,
    NESTED_VALID,
    NEW_ENGINES,
    mask_of,
    reference_mask,
    schema_instances,
    tiny_matcher,
)
from test_engines import VOCAB, _available, _policy_regex, _prepared

from harness.diff.judge.instances import FALSE_REJECTION, check_instances
from harness.spec import Spec


def test_lmfe_policy_utf8_tokens_only() -> None:
    """A byte fragment of a character is never allowed, though the reference allows it
    wherever a continuation completes the character; whole characters are."""
    engine = _available(LMFE)
    zhong = "中".encode()
    tokens = [zhong[:1], zhong[1:], zhong, b"a"]
    vocab, matcher = tiny_matcher(engine, tokens, Spec.regex("t/zh", "中+a"))
    assert reference_mask("中+a", vocab) == {1, 3}
    assert mask_of(matcher, vocab) == {3}
    assert not matcher.advance(1)
    assert matcher.advance(3)
    assert mask_of(matcher, vocab) == {3, 4}


def test_lmfe_policy_ascii_classes() -> None:
    """`\\d` and `\\s` are ASCII: the reference (Unicode) allows the Arabic-Indic three
    and the no-break space, the engine neither; the ASCII reading gives its mask."""
    engine = _available(LMFE)
    tokens = ["٣".encode(), b"3", "\u00a0".encode(), b" ", b"\x1c"]
    # (\x1c is whitespace to neither: Rust's `\s` is the White_Space property)
    for regex, unicode_only in ((r"\d", {1}), (r"\s", {3})):
        vocab, matcher = tiny_matcher(engine, tokens, Spec.regex("t/cls", regex))
        full = reference_mask(regex, vocab)
        assert unicode_only <= full
        assert mask_of(matcher, vocab) == full - unicode_only
        assert mask_of(matcher, vocab) == reference_mask(_policy_regex(engine, regex), vocab)


FLAT_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "tag": {"enum": ["x", "y"]}},
    "required": ["id", "tag"],
    "additionalProperties": False,
}
FLAT_VALID = [{"id": 1, "tag": "x"}, {"id": -20, "tag": "y"}]
FLAT_INVALID = [{"id": "1", "tag": "x"}, {"id": 1}, {"id": 1, "tag": "z"}]


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_schema_instances_flat(name: str) -> None:
    """Valid instances in every layout its whitespace policy promises (compact, spaced,
    indented) are accepted, invalid ones refused, sampled outputs valid."""
    counts = schema_instances(name, FLAT_SCHEMA, FLAT_VALID, FLAT_INVALID, samples=8)
    assert (counts.valid, counts.invalid, counts.samples) == (2, 3, 8)
    assert counts.false_rejections == 0, counts.failures
    assert counts.false_acceptances == 0, counts.failures
    assert counts.invalid_outputs == 0, counts.failures


@pytest.mark.parametrize("name", NEW_ENGINES)
def test_schema_instances_strings_numbers_arrays(name: str) -> None:
    counts = schema_instances(name, NESTED_SCHEMA, NESTED_VALID, NESTED_INVALID, samples=0)
    assert counts.false_rejections == 0, counts.failures
    assert counts.false_acceptances == 0, counts.failures


def test_formatron_schema_samples_are_valid() -> None:
    counts = schema_instances(FORMATRON, NESTED_SCHEMA, [], [], samples=12)
    assert counts.invalid_outputs == 0, counts.failures


@pytest.mark.xfail(reason=f"{LMFE_JSON_STRING_POPS}; {LMFE_RAW_CONTROL}", strict=True)
def test_lmfe_schema_samples_are_valid() -> None:
    counts = schema_instances(LMFE, NESTED_SCHEMA, [], [], samples=12)
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
    vocab, matcher = tiny_matcher(engine, [b"1", b"2", b"12", b"a"], Spec.regex("t/d", "[0-9]*"))
    assert reference_mask("[0-9]*", vocab) == {0, 1, 2, 3}
    assert mask_of(matcher, vocab) == {1, 2, 3} and not matcher.is_accepting()
    assert matcher.advance(1)
    assert reference_mask("[0-9]*", vocab, (1,)) == {0, 1, 2, 3}
    assert mask_of(matcher, vocab) == {0} and matcher.is_accepting()
    assert not matcher.advance(2)
    matcher.reset()
    assert mask_of(matcher, vocab) == {1, 2, 3} and not matcher.is_accepting()


def test_formatron_policy_unicode_classes() -> None:
    engine = _available(FORMATRON)
    tokens = ["٣".encode(), b"3", "\u00a0".encode(), b" ", b"x"]
    for regex in (r"\d", r"\s"):
        vocab, matcher = tiny_matcher(engine, tokens, Spec.regex("t/cls", regex))
        assert mask_of(matcher, vocab) == reference_mask(regex, vocab) - {0}


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
