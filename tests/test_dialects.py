"""Native JSON engines compared on schemas state by state in their own JSON dialect
(`harness.diff.walk.dialects`): the declared dialect is what llguidance writes, the
nesting bound is a policy decided by the deeper reference, and what is left is a
minimized finding whose repro compiles the schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import engines
from harness.diff.findings import repro
from harness.diff.run.service import CellOutcome, dialect_part
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.diff.walk.dialects import (
    ANY_DEPTH,
    MAX_RECURSION,
    compared_in_dialect,
    dialect_lane,
    read_by,
)
from harness.diff.walk.plan import WalkPlan
from harness.engines.base import Engine
from harness.language import converter
from harness.spec import Spec
from harness.vocab import synthetic

tokensdfa = pytest.importorskip("tokensdfa")

VOCAB = synthetic(1000, seed=7)
PLAN = WalkPlan(cover_states=400, random_walks=12, max_steps=64, seed=3)


def _llguidance() -> Engine:
    engine = engines.get("llguidance")
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"llguidance unavailable: {why}")
    return engine


def _lane(engine: Engine, schema: dict[str, object]) -> CellOutcome:
    spec = Spec.schema("test/dialect", json.dumps(schema))
    prepared = {engine.name: engine.prepare(VOCAB)}
    result, refs = dialect_lane(spec, VOCAB, engine, prepared, PLAN)
    assert refs is not None, result.skipped
    return CellOutcome(result)


def test_llguidance_writes_its_declared_dialect() -> None:
    """Escapes (U+007F escaped, `"` only as `\\"`), numbers (exponents only unbounded, no
    `3.0` integers, no `-0` at or above zero) and whitespace: one difference in any of
    them makes a bug here (before the dialect knobs: hundreds)."""
    engine = _llguidance()
    assert compared_in_dialect(engine)
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "number", "minimum": 0, "maximum": 10},
            "x": {"type": "number"},
            "s": {"type": "string", "maxLength": 3},
            "i": {"type": "integer"},
            "e": {"enum": ["a\u007fb", 'q"']},
        },
        "required": ["n", "x", "s", "i", "e"],
        "additionalProperties": False,
    }
    outcome = _lane(engine, schema)
    assert outcome.diff.states["llguidance"] > 20
    bugs = [d for d in outcome.diff.disagreements if d.verdict == "bug"]
    assert bugs == [], [(d.prefix, d.why) for d in bugs[:3]]


def test_xgrammar_writes_its_declared_dialect_under_its_schema_readings() -> None:
    """Canonical keys, raw constrained strings, no bare `-0` on bounded numbers and
    integers, its undeclared keys forbidden (`additional-properties-false` applied to the
    reference's schema): no bug on a schema without free strings."""
    engine = engines.get("xgrammar")
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"xgrammar unavailable: {why}")
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "number", "maximum": 0},
            "i": {"type": "integer"},
            "k\n": {"enum": ["ab", "c"]},
            "p": {"type": "string", "pattern": "^[a-z]{1,3}$"},
        },
        "required": ["n", "i", "k\n", "p"],
    }
    outcome = _lane(engine, schema)
    assert outcome.diff.states["xgrammar"] > 20
    bugs = [d for d in outcome.diff.disagreements if d.verdict == "bug"]
    assert bugs == [], [(d.prefix, d.why) for d in bugs[:3]]


def test_values_nested_past_the_reference_are_a_policy() -> None:
    """An unconstrained value: llguidance nests it to any depth, the reference two
    levels; only the deeper reference's tokens are excused."""
    engine = _llguidance()
    schema = {
        "type": "object",
        "properties": {"a": {}},
        "required": ["a"],
        "additionalProperties": False,
    }
    outcome = _lane(engine, schema)
    rules = {(d.verdict, d.rule) for d in outcome.diff.disagreements}
    assert ("policy", "values-nested-deeper") in rules
    assert not any(verdict == "bug" for verdict, _ in rules), rules


def test_escaped_declared_key_is_a_finding_with_a_schema_repro(tmp_path: Path) -> None:
    """llguidance 1.9 takes `{"\\u0061": ...}` as an undeclared key although it spells
    the declared `a` (so `{"\\u0061": "x"}` passes where `a` must be an integer): a bug,
    minimized with the schema kept, whose repro compiles that schema with llguidance
    alone."""
    engine = _llguidance()
    spec = Spec.schema(
        "test/open-object",
        json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}}),
    )
    prepared = {engine.name: engine.prepare(VOCAB)}
    outcome = dialect_part(spec, VOCAB, engine, prepared, PLAN, True, 60.0)
    bugs = [i for i, d in enumerate(outcome.diff.disagreements) if d.verdict == "bug"]
    assert bugs, "llguidance no longer takes an escaped declared key as undeclared"
    for i in bugs:
        d = outcome.diff.disagreements[i]
        assert not d.reference_only and d.engine_only  # it only adds
    minimal = [m for m in outcome.minimal.values() if m is not None]
    assert minimal
    m = minimal[0]
    assert m.schema == spec.text and m.regex == outcome.diff.lane_regex["llguidance"]
    assert len(m.tokens) <= 16
    found = repro.witnesses(m)
    text = repro.explanation(m, found)
    assert "JSON schema" in text
    path = tmp_path / "repro.py"
    path.write_text(repro.script(m, found, "llguidance key escapes", text))
    reproduced, output = repro.run(path)
    assert reproduced, output
    # the lane's regex survives the store's round trip with its disagreements
    again = CellOutcome.from_json(json.loads(json.dumps(outcome.to_json())))
    assert again.diff.disagreements[bugs[0]].regex == m.regex


def test_one_json_compiler_fault_on_two_schemas_is_one_bug() -> None:
    """Findings on schemas group by the tokens their minimal forms disagree on, not by
    their (whole, per-schema) regexes."""
    from harness.diff.findings.collector import Collector

    engine = _llguidance()
    prepared = {engine.name: engine.prepare(VOCAB)}
    collector = Collector()
    for i, key in enumerate(("a", "bc")):
        schema = {"type": "object", "properties": {key: {"type": "integer"}}}
        spec = Spec.schema(f"test/open-{i}", json.dumps(schema))
        outcome = dialect_part(spec, VOCAB, engine, prepared, PLAN, True, 60.0)
        for d, m in outcome.grouped():
            collector.add(d, m, VOCAB.tokens)
    (bug,) = [b for b in collector.bugs() if b.engine == "llguidance"]
    assert bug.row()["witness_count"] == 2, bug.row()


def test_lazy_engine_compiles_schemas_itself_with_the_converters_language() -> None:
    """tokensdfa-lazy builds a schema's index straight from the compiler's tree (no regex
    text) when our converter is in use: no disagreement with the naive index of the
    converted regex on the handwritten schemas, and the converter's time is not added to
    its time to first mask."""
    from harness import corpora
    from harness.diff.walk.differ import Differ
    from harness.diff.walk.references import References
    from harness.language import converter

    engine = engines.get("tokensdfa-lazy")
    assert converter.current() == converter.OURS and engine.compiles_schemas_itself()
    prepared = engine.prepare(VOCAB)
    specs = [e.spec for e in corpora.entries("handwritten") if e.spec.kind == "json_schema"]
    assert len(specs) >= 10
    for spec in specs:
        regex = converter.schema_to_regex(spec)
        compiled = engine.compile(prepared, spec)
        refs = References(regex, VOCAB, spec.id)
        result = Differ(spec.id, regex, VOCAB, {engine.name: (engine, compiled)}, refs).run(PLAN)
        assert result.states[engine.name] > 5, spec.id
        assert result.disagreements == [], spec.id


def test_xgrammar_schema_finding_repro_compiles_the_schema(tmp_path: Path) -> None:
    """xgrammar 0.2.8 lets a raw control character into a length-bounded string
    (`raw-control-in-string`): a bug of its JSON-schema compiler, whose repro must
    compile SCHEMA as the harness does (it used to compile the lane's regex with
    xgrammar's regex compiler instead, another engine path)."""
    engine = engines.get("xgrammar")
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"xgrammar unavailable: {why}")
    schema = {"type": "object", "properties": {"t": {"type": "string", "maxLength": 8}}}
    spec = Spec.schema("test/xgrammar-length", json.dumps({**schema, "required": ["t"]}))
    prepared = {engine.name: engine.prepare(VOCAB)}
    outcome = dialect_part(spec, VOCAB, engine, prepared, PLAN, True, 60.0)
    rules = {d.rule for d in outcome.diff.disagreements if d.verdict == "bug"}
    assert "raw-control-in-string" in rules, rules
    m = next(m for m in outcome.minimal.values() if m is not None)
    assert m.schema == spec.text
    found = repro.witnesses(m)
    script = repro.script(m, found, "xgrammar schema finding", repro.explanation(m, found))
    assert "compile_json_schema(SCHEMA" in script
    path = tmp_path / "repro.py"
    path.write_text(script)
    reproduced, output = repro.run(path)
    assert reproduced, output


def test_xgrammar_reading_several_all_of_subschemas_as_any_value_is_named() -> None:
    """xgrammar 0.2.8 reads a subschema holding an `allOf` of two subschemas as any JSON
    value, its `type: object` included (it only logs a warning): at the first state it
    allows a string, which the schema refuses. Triage names it `allof-widened` against
    the schema so read (`dialects.allof_widened`); the same schema with one subschema in
    its `allOf`, which xgrammar reads, shows no such bug."""
    from harness.diff.walk.dialects import allof_widened

    engine = engines.get("xgrammar")
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"xgrammar unavailable: {why}")
    parts = [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {}}}]
    schema = {"type": "object", "allOf": parts, "required": ["a"]}
    assert allof_widened({"properties": {"x": schema}}) == {"properties": {"x": {}}}
    outcome = _lane(engine, schema)
    rules = {d.rule for d in outcome.diff.disagreements if d.verdict == "bug"}
    assert "allof-widened" in rules, rules
    single = {"type": "object", "allOf": parts[:1], "required": ["a"]}
    rules = {d.rule for d in _lane(engine, single).diff.disagreements if d.verdict == "bug"}
    assert "allof-widened" not in rules, rules


# --- listed strings (`enum`, `const`) in each declared dialect ---------------------------

# Listed strings holding what a JSON text may have to escape: `"`, `\`, control characters
# (short forms and not), U+007F, `/`, non-ASCII (two-byte, astral, C1 and U+2028).
LISTED = (
    '"""\nx',
    'a"b',
    "a\\b",
    "t\tn\nr\rb\bf\f",
    "a\x00\x01\x1fb",
    "a\x7fb",
    "é/ü",
    "😀",
    "\x85\u2028",
)
SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# One token per byte (and EOS): the engine reads each candidate text byte by byte.
BYTES = tiny_vocabulary([bytes([b]) for b in range(256)])


def _u(c: str, upper: bool = False) -> str:
    """`c` as `\\uXXXX` (a surrogate pair above the BMP)."""
    n = ord(c)
    units = [n] if n < 0x10000 else [0xD800 + ((n - 0x10000) >> 10), 0xDC00 + (n & 0x3FF)]
    return "".join(("\\u%04X" if upper else "\\u%04x") % u for u in units)


def _least(c: str, escape_del: bool = False, upper: bool = False) -> str:
    """`c` escaped only where it must be (and U+007F with `escape_del`): short forms, else
    `\\u00xx`."""
    if c in SHORT:
        return SHORT[c]
    return _u(c, upper) if ord(c) < 0x20 or (escape_del and c == "\x7f") else c


def _spellings(value: str) -> list[str]:
    """Quoted spellings of the string `value`, each of which JSON allows (but the last,
    everything raw): escapes where they must be, U+007F escaped or not, `\\u` escapes in
    either case instead of the short forms, every non-ASCII or every character escaped,
    `/` as `\\/`."""
    spellers = [
        _least,
        lambda c: _least(c, True),
        lambda c: _least(c, True, True),
        lambda c: _u(c) if c in SHORT or ord(c) < 0x20 or c == "\x7f" else c,
        lambda c: _u(c, True) if c in SHORT or ord(c) < 0x20 or c == "\x7f" else c,
        lambda c: _least(c, True) if ord(c) < 0x80 else _u(c),
        _u,
        lambda c: "\\/" if c == "/" else _least(c, True),
        lambda c: c,
    ]
    return sorted({'"' + "".join(map(f, value)) + '"' for f in spellers})


def _engine_accepts(compiled: Any, text: str) -> bool:
    m = compiled.matcher()
    return all(m.advance(b + 1) for b in text.encode()) and bool(m.is_accepting())


def _reference_accepts(dfa: Any, text: str) -> bool:
    state = dfa.walk(dfa.initial_state, text.encode())
    return state is not None and bool(dfa.is_accepting(state))


# Every registered adapter that declares its JSON dialect.
DIALECT_ENGINES = [e.name for e in engines.all_engines() if compared_in_dialect(e)]


def test_every_engine_with_a_dialect_is_checked_on_listed_strings() -> None:
    assert {"llguidance", "xgrammar"} <= set(DIALECT_ENGINES)


@pytest.mark.parametrize("name", DIALECT_ENGINES)
def test_listed_strings_are_spelled_as_the_engine_writes_them(name: str) -> None:
    """An `enum` or `const` string that needs escapes: the reference regex of the engine's
    dialect (the differ's, over the schema as the engine reads it) takes exactly the
    spellings the engine's matcher takes, and the engine takes one at least. xgrammar
    0.2.8 writes one (`"` `\\` `\\n`... short, other control characters and U+007F as
    `\\u00xx`); free-strings-only once wrote none for it, so the differ called the
    engine's escapes there unclassified bugs."""
    engine = engines.get(name)
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"{name} unavailable: {why}")
    prepared = engine.prepare(BYTES)
    wrong = []
    for keyword in ("enum", "const"):
        for value in LISTED:
            listed = [value, "z"] if keyword == "enum" else value
            schema = {
                "type": "object",
                "properties": {"e": {keyword: listed}},
                "required": ["e"],
                "additionalProperties": False,
            }
            text = json.dumps(schema)
            compiled = engine.compile(prepared, Spec.schema(f"test/listed-{keyword}", text))
            dialect = engine.policies.json_dialect
            regex = converter.in_dialect(read_by(engine, text), dialect, ANY_DEPTH, MAX_RECURSION)
            dfa = tokensdfa.ByteDfa(regex)
            taken = []
            for spelled in _spellings(value):
                instance = '{"e":' + spelled + "}"
                theirs = _engine_accepts(compiled, instance)
                taken += [spelled] if theirs else []
                if theirs != _reference_accepts(dfa, instance):
                    wrong.append((keyword, value, spelled, f"{name}: {theirs}"))
            assert taken, f"{name} writes {keyword} {value!r} in none of {_spellings(value)}"
    assert wrong == [], wrong


def test_xgrammar_escaped_listed_strings_are_no_finding() -> None:
    """The issue's schema: an `enum` whose strings hold `"`, `\\`, control characters and
    U+007F after a free string (and an optional `const`). The reference in xgrammar's
    dialect once had no alternative for them, and the differ reported xgrammar's
    `{"k":"","e":"\\` as `unclassified`. What remains are the free string's lone
    surrogates, known bugs."""
    engine = engines.get("xgrammar")
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"xgrammar unavailable: {why}")
    schema: dict[str, object] = {
        "type": "object",
        "properties": {
            "k": {"type": "string"},
            "e": {"enum": ['"""\nx', "b\\c", "t\tu\x01\x7f", "é😀"]},
            "c": {"const": 'q"\x7f'},
        },
        "required": ["k", "e"],
    }
    outcome = _lane(engine, schema)
    rules = {d.rule for d in outcome.diff.disagreements if d.verdict == "bug"}
    assert rules <= {"lone-surrogate-escape", "utf8-surrogate"}, rules
    assert outcome.diff.states["xgrammar"] > 40


# --- listed arrays and objects (`enum`, `const`) in xgrammar's dialect -------------------

# Listed containers, each with texts of its value: compact, with whitespace inside
# (anywhere, nested too) and around, reordered keys, strings spelled otherwise.
LISTED_CONTAINERS: tuple[tuple[object, tuple[str, ...]], ...] = (
    ([1, 2], ("[1,2]", "[1, 2]", "[ 1,2]", "[1,2 ]", "[\n1,2]", " [1,2] ", "[2,1]")),
    (
        {"a": 1, "b": "x"},
        (
            '{"a":1,"b":"x"}',
            '{"a": 1,"b":"x"}',
            '{ "a":1,"b":"x"}',
            '{"a":1 ,"b":"x"}',
            '{"a":1,"b":"x" }',
            ' {"a":1,"b":"x"}\t',
            '{"b":"x","a":1}',
        ),
    ),
    (
        [{"a": [1, {"b": None}]}, [], {}, True],
        (
            '[{"a":[1,{"b":null}]},[],{},true]',
            '[{"a":[1,{"b":null}]},[ ],{},true]',
            '[{"a":[1,{"b":null}]},[],{ },true]',
            '[{"a":[1, {"b":null}]},[],{},true]',
            '[{"a" :[1,{"b":null}]},[],{},true]',
            '[{"a":[1,{"b":null}]},[],{},\ttrue]',
        ),
    ),
    (
        ['a"b\n\x7f/é'],
        (
            '["a\\"b\\n\\u007f/é"]',
            '["a\\"b\\n\x7f/é"]',
            '["a\\"b\\n\\u007F/é"]',
            '["a\\u0022b\\n\\u007f/é"]',
            '[ "a\\"b\\n\\u007f/é"]',
        ),
    ),
    (
        {'k"\n': "v"},
        ('{"k\\"\\n":"v"}', '{"k\\u0022\\n":"v"}', '{"k\\"\\u000a":"v"}', '{"k\\"\\n": "v"}'),
    ),
)


def test_xgrammar_listed_containers_are_written_as_xgrammar_writes_them() -> None:
    """An `enum` or `const` array or object: xgrammar 0.2.8 writes one compact literal
    (no whitespace anywhere inside, nested containers included; keys in schema order;
    strings in their one spelling), whitespace around it allowed. The reference in its
    dialect once took the dialect's whitespace inside them, and the differ reported
    xgrammar's refusal of `[1, 2]` as a bug. Each text is checked in a property and at
    the root, under `enum` and `const`."""
    engine = engines.get("xgrammar")
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"xgrammar unavailable: {why}")
    prepared = engine.prepare(BYTES)
    dialect = engine.policies.json_dialect
    wrong = []
    for value, texts in LISTED_CONTAINERS:
        for keyword, listed in (("enum", [value, "z"]), ("const", value)):
            inner = {keyword: listed}
            wrapped = {
                "type": "object",
                "properties": {"e": inner},
                "required": ["e"],
                "additionalProperties": False,
            }
            for schema, frame in ((wrapped, '{"e":%s}'), (inner, "%s")):
                text = json.dumps(schema)
                compiled = engine.compile(prepared, Spec.schema("test/listed-container", text))
                regex = converter.in_dialect(
                    read_by(engine, text), dialect, ANY_DEPTH, MAX_RECURSION
                )
                dfa = tokensdfa.ByteDfa(regex)
                for t in texts:
                    instance = frame % t
                    theirs = _engine_accepts(compiled, instance)
                    if theirs != _reference_accepts(dfa, instance):
                        wrong.append((text, instance, f"xgrammar: {theirs}"))
                assert _engine_accepts(compiled, frame % texts[0]), (text, texts[0])
    assert wrong == [], wrong


def test_xgrammar_keys_a_property_names_lists_are_spelled_as_listed_strings() -> None:
    """`propertyNames: {"enum": [...]}` (or `const`): xgrammar 0.2.8 writes each key as
    a JSON literal (`root_name ::= ("\\"k\\\\\\"\\\\n\\\\u007f\\"")`), in the one spelling
    of listed strings. The reference once spelled them as keys a language limits, with
    no escape, and left out the keys that need one."""
    engine = engines.get("xgrammar")
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"xgrammar unavailable: {why}")
    prepared = engine.prepare(BYTES)
    wrong = []
    for keyword in ("enum", "const"):
        for value in LISTED:
            listed = [value, "z"] if keyword == "enum" else value
            schema = {"type": "object", "propertyNames": {keyword: listed}}
            text = json.dumps(schema)
            compiled = engine.compile(prepared, Spec.schema("test/listed-names", text))
            dialect = engine.policies.json_dialect
            regex = converter.in_dialect(read_by(engine, text), dialect, ANY_DEPTH, MAX_RECURSION)
            dfa = tokensdfa.ByteDfa(regex)
            taken = []
            for spelled in _spellings(value):
                for instance in ("{" + spelled + ":1}", "{ " + spelled + " :[]}"):
                    theirs = _engine_accepts(compiled, instance)
                    taken += [spelled] if theirs else []
                    if theirs != _reference_accepts(dfa, instance):
                        wrong.append((keyword, value, instance, f"xgrammar: {theirs}"))
            assert taken, f"xgrammar writes key {value!r} in none of {_spellings(value)}"
    assert wrong == [], wrong
