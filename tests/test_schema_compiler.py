"""The Rust core's JSON-schema compiler through the binding (`tokensdfa.schema_to_regex`):
its language agrees with `jsonschema` on hand-picked instances of schemas the
outlines-core converter gets wrong, in each whitespace dialect, and every refusal is one
line of the right kind. (The official JSON-Schema-Test-Suite runs in `cargo test`:
engines/schema/tests/suite.rs.)"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

import tokensdfa

# (schema, instances): instances valid and invalid, judged by jsonschema.
CASES: list[tuple[dict[str, Any], list[Any]]] = [
    (  # the converter drops minimum/maximum on integers
        {
            "type": "object",
            "properties": {"days": {"type": "integer", "minimum": 1, "maximum": 14}},
            "required": ["days"],
        },
        [{"days": 1}, {"days": 14}, {"days": 15}, {"days": 0}, {"days": -1}, {}],
    ),
    (  # an unconstrained property: any JSON value, never a bare null for the object
        {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
        [{"a": True}, {"a": [1, {"b": None}]}, {}, None, {"b": 1}],
    ),
    (  # a type list, grouped
        {"type": ["string", "null"], "maxLength": 3},
        ["abc", "abcd", None, 1, ""],
    ),
    (  # exclusiveMinimum inside anyOf
        {"anyOf": [{"type": "number", "exclusiveMinimum": 2.5}, {"const": "x"}]},
        [2.5, 2.51, 3, "x", "y", 2],
    ),
    (  # format: date, ASCII digits only
        {"type": "string", "format": "date"},
        ["2024-02-29", "2024-13-01", "２０２４-01-01", "2024-1-01"],
    ),
    (  # pattern is unanchored: "contains"
        {"type": "string", "pattern": "ab+"},
        ["xabbby", "ab", "a", ""],
    ),
    (  # strings may hold U+007F-U+009F raw
        {"type": "string"},
        ["\x7f\x85\x9f", "tab\tinside", 'quote"inside'],
    ),
    (  # a present trigger requires its dependents
        {"type": "object", "dependentRequired": {"a": ["b"]}},
        [{"a": 1}, {"a": 1, "b": 2}, {"b": 2}, {}],
    ),
    (  # at least one item meets `contains`
        {"type": "array", "contains": {"type": "string"}},
        [[1, "a"], [1, 2], [], ["x"]],
    ),
    (  # a look-ahead at the start of an anchored pattern: a reserved prefix
        {"type": "string", "pattern": "^(?!org\\.bukkit\\.)([a-z]+\\.)*[a-z]+$"},
        ["org.x", "org.bukkit.x", "a.b", "a.", "", "org.bukkit"],
    ),
    (  # an anchor inside a group that is a whole alternative
        {"type": "string", "pattern": "^([^,]|$)"},
        ["", "a", "ab,", ",", ",a"],
    ),
    (  # oneOf with overlapping branches
        {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
        [1, 2, 2.5, 1.5, "a"],
    ),
    (  # the complement of multipleOf
        {"type": "number", "not": {"multipleOf": 3}},
        [3, 4, 9.5, 0, -6],
    ),
    (  # minProperties 1 over optional keys
        {"type": "object", "properties": {"a": {}, "b": {}}, "minProperties": 1},
        [{}, {"a": 1}, {"c": 1}, {"a": 1, "b": 2}],
    ),
    (  # the complement of key rules: some undeclared key breaks them
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "not": {"patternProperties": {"^x": {"type": "string"}}, "additionalProperties": False},
        },
        [{}, {"a": 1}, {"xa": "s"}, {"xa": 1}, {"a": 1, "b": None}, {"b": 2}, {"a": "s"}],
    ),
    (  # overlapping objects in oneOf, told apart by complements of key rules
        {
            "oneOf": [
                {"type": "object", "properties": {"k": {"enum": ["p"]}, "v": {"type": "integer"}}},
                {"type": "object", "additionalProperties": {"type": "integer"}},
            ]
        },
        [{"k": "p"}, {"v": 1}, {"k": "q"}, {"k": "p", "v": 2}, {}, {"v": "s"}, {"w": 1}],
    ),
    (  # overlapping arrays in oneOf, told apart by an item outside `items`
        {
            "oneOf": [
                {"type": "array", "items": {"type": "integer"}},
                {"type": "array", "maxItems": 1},
            ]
        },
        [[1, 2], ["a"], [], [1], ["a", "b"], [1, "b", 3]],
    ),
    (  # contains beside item counts
        {"type": "array", "contains": {"const": 1}, "minItems": 2, "maxItems": 3},
        [[1, 2], [2, 1], [2, 2], [1], [2, 2, 1], [1, 1, 1, 1]],
    ),
    (  # key rules of two merged schemas, both applied
        {
            "allOf": [
                {
                    "type": "object",
                    "patternProperties": {"^a": {"type": "integer"}},
                    "additionalProperties": False,
                },
                {"type": "object", "additionalProperties": {"minimum": 5}},
            ]
        },
        [{}, {"a1": 7}, {"a1": 3}, {"b": 7}, {"a1": "x"}],
    ),
    (  # the complement of a complement that asks for a key: a key rule
        {
            "type": "object",
            "not": {
                "allOf": [
                    {"not": {"additionalProperties": {"type": "integer"}}},
                    {"required": ["a"]},
                ]
            },
        },
        [{}, {"b": "s"}, {"a": 1}, {"a": 1, "b": 2}, {"a": "s"}, {"a": 1, "b": "s"}],
    ),
    (  # three overlapping object branches: witnesses another implies are dropped
        {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}},
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {"b": {"type": "integer"}},
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {"c": {}},
                    "not": {"patternProperties": {"^t": {"type": "string"}}},
                },
            ]
        },
        [
            {},
            {"a": 1},
            {"b": 2},
            {"t": 1},
            {"t": "s"},
            {"a": 1, "t": 2},
            {"c": 1, "t": 3},
            {"a": "x"},
            {"x": 1},
        ],
    ),
    (  # a negated negation
        {"type": "object", "not": {"not": {"enum": [{"a": True}]}}},
        [{"a": True}, {"a": False}, {}],
    ),
]

DIALECTS = {
    "none": {"separators": (",", ":")},
    "optional-space": {"separators": (", ", ": ")},
    "any": {"indent": 2},
}


def _full_match(dfa: Any, text: str) -> bool:
    state = dfa.walk(dfa.initial_state, text.encode("utf-8"))
    return state is not None and bool(dfa.is_accepting(state))


@pytest.mark.parametrize("whitespace", list(DIALECTS))
@pytest.mark.parametrize(("schema", "instances"), CASES)
def test_language_agrees_with_jsonschema(
    schema: dict[str, Any], instances: list[Any], whitespace: str
) -> None:
    regex = tokensdfa.schema_to_regex(json.dumps(schema), whitespace=whitespace)
    dfa = tokensdfa.ByteDfa(regex)
    for value in instances:
        text = json.dumps(value, ensure_ascii=False, **DIALECTS[whitespace])
        valid = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        ).is_valid(value)
        assert _full_match(dfa, text) == valid, (schema, text)


@pytest.mark.parametrize(
    ("schema", "kind", "words"),
    [
        ("{", tokensdfa.PatternError, "not JSON"),
        (
            '{"type": "array", "contains": {}, "maxContains": 2}',
            tokensdfa.UnsupportedPatternError,
            "contains",
        ),
        (
            '{"type": "array", "uniqueItems": true}',
            tokensdfa.UnsupportedPatternError,
            "uniqueItems",
        ),
    ],
)
def test_refusals_are_one_line_of_their_kind(schema: str, kind: type, words: str) -> None:
    with pytest.raises(kind) as info:
        tokensdfa.schema_to_regex(schema)
    assert words in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "option",
    ["whitespace", "escapes", "numbers", "integers", "negative_zero", "keys", "undeclared_keys"],
)
def test_unknown_dialect_name_is_value_error(option: str) -> None:
    with pytest.raises(ValueError, match=f'{option} "tabs" is not one of'):
        tokensdfa.schema_to_regex("{}", **{option: "tabs"})


def test_engine_dialects_name_only_known_options() -> None:
    """Every engine's declared JSON dialect converts a schema (a misspelt option or value
    would make every one of its dialect lanes skip)."""
    from harness import engines

    declared = [engines.get(n).policies.json_dialect for n in ("llguidance", "xgrammar")]
    for dialect in declared:
        assert dialect
        assert tokensdfa.schema_to_regex('{"type": "object"}', **dict(dialect))


def test_the_lazy_index_takes_as_a_tree_what_is_too_long_as_text() -> None:
    """`LazyIndex.from_schema` is limited by the compiled tree, not by its text: a schema
    whose regex passes `max_regex_bytes` (one definition used in eight places) is refused
    by `schema_to_regex` and served by the lazy index; its language still agrees with
    jsonschema, walked byte by byte."""
    point = {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0}}}
    schema = {
        "$defs": {"p": point},
        "type": "object",
        "properties": {k: {"$ref": "#/$defs/p"} for k in "abcdefgh"},
        "required": ["a"],
    }
    text = json.dumps(schema)
    cap = {"max_regex_bytes": 300}
    with pytest.raises(tokensdfa.LimitError, match="bytes long"):
        tokensdfa.schema_to_regex(text, **cap)
    vocab = tokensdfa.Vocabulary([bytes([b]) for b in range(256)] + [b""], 256, [256])
    index = tokensdfa.LazyIndex.from_schema(text, vocab, cap)
    for value in [{"a": {"x": 1}}, {"a": {}, "h": {"x": 0}}, {"a": {"x": -1}}, {"b": {}}]:
        state = index.initial_state
        for byte in json.dumps(value, separators=(",", ":")).encode():
            state = index.next_state(state, byte) if state is not None else None
        accepted = state is not None and bool(index.is_accepting(state))
        assert accepted == jsonschema.Draft202012Validator(schema).is_valid(value), value
