"""Instance checks of JSON-schema engines: false rejections, false acceptances, invalid
outputs, the json-escapes policy; outlines-core's converter's bugs seen through its
subject, and our converter's language free of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import engines
from harness.corpora.judge import validate
from harness.diff.findings import instance_repro, repro
from harness.diff.judge.instances import (
    FALSE_ACCEPTANCE,
    FALSE_REJECTION,
    INVALID_OUTPUT,
    LABEL_DISPUTED,
    InstanceFailure,
    check_instances,
)
from harness.engines.base import Engine
from harness.engines.converter_subject import NAME as SUBJECT
from harness.language import converter
from harness.spec import Spec
from harness.vocab import synthetic

pytest.importorskip("tokensdfa")

VOCAB = synthetic(1000, seed=7)
SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "tag": {"enum": ["x", "y"]}},
    "required": ["id", "tag"],
    "additionalProperties": False,
}
VALID = [{"id": 1, "tag": "x"}, {"id": -20, "tag": "y"}]
INVALID = [{"id": "1", "tag": "x"}, {"id": 1}, {"id": 1, "tag": "z"}]


def _available(name: str) -> Engine:
    engine = engines.get(name)
    ok, why = engine.available()
    if not ok:
        pytest.skip(f"{name} unavailable: {why}")
    return engine


def _check(name: str, schema: dict, valid: list, invalid: list, samples: int = 3, seed: int = 0):  # type: ignore[no-untyped-def]
    engine = _available(name)
    spec = Spec.schema("test/schema", schema)
    compiled = engine.compile(engine.prepare(VOCAB), spec)
    return check_instances(
        name, compiled, schema, spec.id, VOCAB, valid, invalid, samples=samples, seed=seed
    )


@pytest.mark.parametrize("name", ["llguidance", "xgrammar", "naive"])
def test_correct_engine_has_no_invalidation_errors(name: str) -> None:
    counts = _check(name, SCHEMA, VALID, INVALID)
    assert (counts.valid, counts.invalid, counts.samples) == (2, 3, 3)
    assert counts.false_rejections == 0, counts.failures
    assert counts.false_acceptances == 0, counts.failures
    assert counts.invalid_outputs == 0, counts.failures


def test_sampling_is_deterministic_per_seed() -> None:
    a = _check("llguidance", SCHEMA, [], [], samples=4, seed=3)
    b = _check("llguidance", SCHEMA, [], [], samples=4, seed=3)
    assert a.row() == b.row()


def test_outlines_converter_any_value_bug_is_a_false_acceptance() -> None:
    """outlines-core's converter (the subject outlines-core-converter) writes an
    unconstrained property (`{}`) as ungrouped alternatives,
    `...:[ ]?((true|false))|(null)|...`, so the top-level `|` splits the whole regex:
    the reference walking it accepts a bare `null` and refuses `{"a":true}` (seen on
    maskbench/BFCL_java_13)."""
    schema = {"type": "object", "properties": {"a": {}}, "required": ["a"]}
    assert validate(schema, None) is not None
    counts = _check(SUBJECT, schema, [{"a": True}], [None], samples=0)
    # and `{"a":true}` is refused: the first alternative ends before the closing brace
    assert [f.kind for f in counts.failures] == [FALSE_REJECTION, FALSE_ACCEPTANCE]
    assert counts.false_rejections == 1 and counts.false_acceptances == 1
    # llguidance compiles the schema itself and refuses it
    assert _check("llguidance", schema, [{"a": True}], [None], samples=0).failures == []


STRING_SCHEMA = {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}


def test_outlines_converter_refuses_raw_and_escaped_c1_characters() -> None:
    """outlines-core's string regex excludes raw U+007F-U+009F and has no \\u escapes,
    so no spelling of a string holding U+0085 is accepted: a false rejection, not the
    json-escapes policy."""
    counts = _check(SUBJECT, STRING_SCHEMA, [{"s": "a\x85b"}], [], samples=0)
    assert counts.false_rejections == 1 and counts.policy == 0


@pytest.mark.parametrize(
    ("schema", "valid", "invalid"),
    [
        ({"type": "object", "properties": {"a": {}}, "required": ["a"]}, [{"a": True}], [None]),
        (STRING_SCHEMA, [{"s": "a\x85b"}], []),
        (  # outlines-core drops minimum/maximum on integers
            {"type": "object", "properties": {"d": {"type": "integer", "minimum": 1}}},
            [{"d": 1}, {}],
            [{"d": 0}, {"d": -1}],
        ),
    ],
)
def test_our_converter_gets_outlines_converter_bugs_right(
    schema: dict, valid: list, invalid: list
) -> None:
    """With our converter (the default) the reference's language is the schema's: the
    instances outlines-core's converter gets wrong are all judged right."""
    assert converter.current() == converter.OURS
    counts = _check("naive", schema, valid, invalid, samples=2)
    assert counts.failures == [], counts.failures
    assert _check(SUBJECT, schema, valid, invalid, samples=0).failures


def test_json_escapes_policy() -> None:
    """An engine whose strings are ASCII only (here the reference on such a regex) refuses
    the raw character but takes its escape: the json-escapes policy, not a rejection."""
    engine = _available("naive")
    ascii_only = Spec.regex("test/ascii-json", r'\{"s":"([ !#-\[\]-~]|\\u[0-9a-f]{4})*"\}')
    compiled = engine.compile(engine.prepare(VOCAB), ascii_only)
    counts = check_instances(
        "naive", compiled, STRING_SCHEMA, "test/ascii-json", VOCAB, [{"s": "é"}], [], samples=0
    )
    assert counts.false_rejections == 0
    assert counts.policy == 1
    assert [(f.kind, f.policy) for f in counts.failures] == [(FALSE_REJECTION, "json-escapes")]


def test_label_disputed_is_not_counted() -> None:
    counts = _check("llguidance", SCHEMA, [], [{"id": 3, "tag": "y"}], samples=0)
    assert counts.false_acceptances == 0 and counts.disputed == 1


def test_validate_explains_in_one_line() -> None:
    why = validate(SCHEMA, {"id": 1})
    assert why is not None and "tag" in why and "\n" not in why
    assert json.dumps(validate(SCHEMA, VALID[0])) == "null"


@pytest.mark.parametrize(
    ("engine", "schema", "text", "kind"),
    [
        # xgrammar lets a raw tab into a length-bounded string (seen on
        # handwritten/function-search); JSON requires it escaped
        (
            "xgrammar",
            {"type": "object", "properties": {"q": {"type": "string", "maxLength": 9}}},
            '{"q":"a\tb"}',
            INVALID_OUTPUT,
        ),
        # llguidance lets a hostname pass 253 characters, xgrammar a label pass 63 (seen
        # on a stranger's upstream-server schema); shrinking meets llguidance's runtime
        # errors on tiny vocabularies, which must not end the run
        (
            "llguidance",
            {"type": "object", "properties": {"host": {"type": "string", "format": "hostname"}}},
            '{"host": "' + "ab." * 100 + 'com"}',
            INVALID_OUTPUT,
        ),
        (
            "xgrammar",
            {"type": "string", "format": "hostname"},
            '"' + "b" * 64 + '"',
            INVALID_OUTPUT,
        ),
        # outlines-core's converter takes a bare null for an object with a `{}` property
        (
            SUBJECT,
            {"type": "object", "properties": {"a": {}}, "required": ["a"]},
            "null",
            FALSE_ACCEPTANCE,
        ),
    ],
)
def test_instance_repro_shrinks_and_reproduces(
    engine: str, schema: dict, text: str, kind: str, tmp_path: Path
) -> None:
    _available(engine)
    failure = InstanceFailure(kind, engine, "test/s", "synthetic", text, None, "found")
    found = instance_repro.shrink_in_worker(failure, schema)
    assert isinstance(found, instance_repro.InstanceRepro) and len(found.text) <= len(text)
    path = tmp_path / "repro.py"
    path.write_text(instance_repro.script(found, "t", instance_repro.explanation(found, failure)))
    reproduced, output = repro.run(path)
    assert reproduced, output
    assert "harness" not in path.read_text()


# xgrammar takes this oneOf as anyOf (an integer is valid under both branches, so invalid)
# and warns from C++ on file descriptor 2 at each of the compiles a shrink makes.
OVERLAPPING_ONE_OF = {"type": "object", "properties": {"n": {"oneOf": [{"type": "integer"}, {}]}}}


def test_shrinking_runs_in_a_worker_whose_output_stays_there(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """The worker keeps xgrammar's warnings off the terminal; the failure still shrinks."""
    _available("xgrammar")
    text = '{"n": 4000}'
    failure = InstanceFailure(FALSE_ACCEPTANCE, "xgrammar", "test/s", "synthetic", text, None, "")
    found = instance_repro.shrink_in_worker(failure, OVERLAPPING_ONE_OF)
    assert isinstance(found, instance_repro.InstanceRepro), found
    assert len(found.text) < len(text)
    assert "Warning" not in capfd.readouterr().err


def test_a_shrink_past_its_time_is_recorded_and_the_next_one_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shrink that outlives its timeout in the worker is one line saying so, not a
    hang or a traceback; the worker starts again for the next failure."""
    _available("xgrammar")
    text = '{"n": ' + "4" * 60 + "}"
    failure = InstanceFailure(FALSE_ACCEPTANCE, "xgrammar", "test/s", "synthetic", text, None, "")
    warm = instance_repro.shrink_in_worker(failure, OVERLAPPING_ONE_OF)
    assert isinstance(warm, instance_repro.InstanceRepro), warm
    monkeypatch.setattr(instance_repro, "SHRINK_BUDGET_S", 0.0)
    monkeypatch.setattr(instance_repro, "SHRINK_SLACK_S", 0.0)
    ended = instance_repro.shrink_in_worker(failure, OVERLAPPING_ONE_OF)
    assert isinstance(ended, str) and "timeout" in ended, ended
    monkeypatch.undo()
    again = instance_repro.shrink_in_worker(failure, OVERLAPPING_ONE_OF)
    assert again == warm


def test_whitespace_layouts_follow_each_policy() -> None:
    """Flexible whitespace takes all three layouts; outlines' `[ ]?` takes compact and
    spaced but not indented text, which the checker then reports with its layout."""
    from harness.corpora.paths import POLICY_LAYOUTS

    for name in ("llguidance", "xgrammar", "naive"):
        engine = _available(name)
        spec = Spec.schema("test/schema", SCHEMA)
        compiled = engine.compile(engine.prepare(VOCAB), spec)
        layouts = POLICY_LAYOUTS[engine.policies.json_whitespace]
        counts = check_instances(
            name, compiled, SCHEMA, spec.id, VOCAB, VALID, [], samples=0, layouts=layouts
        )
        assert counts.false_rejections == 0, (name, counts.failures)
    engine = _available("naive")
    compiled = engine.compile(engine.prepare(VOCAB), Spec.schema("test/schema", SCHEMA))
    counts = check_instances(
        "naive",
        compiled,
        SCHEMA,
        "test/schema",
        VOCAB,
        VALID[:1],
        [],
        samples=0,
        layouts=("compact", "pretty"),
    )
    assert counts.false_rejections == 1 and "[pretty layout]" in counts.failures[0].detail


def test_patterns_are_judged_as_ecma_262() -> None:
    """Labels made with Python's reading of `\\d` (MaskBench's) do not count against an
    engine that reads it as ECMA-262 does: a refused instance labelled valid whose
    digits are not ASCII is disputed, and one labelled invalid for the same reason is
    refused as it should be, with no false acceptance."""
    schema = {
        "type": "object",
        "properties": {"n": {"type": "string", "pattern": "^\\d+$"}},
        "required": ["n"],
    }
    arabic = {"n": "\u0661\u0662"}
    counts = _check("naive", schema, [arabic, {"n": "12"}], [{"n": "1a"}], samples=2)
    assert (counts.false_rejections, counts.false_acceptances) == (0, 0), counts.failures
    assert counts.disputed == 1
    assert [f.kind for f in counts.failures] == [LABEL_DISPUTED]


def test_our_converters_depth_bound_is_a_policy_not_a_bug() -> None:
    """A value the schema leaves unconstrained nests at most `OURS_ANY_DEPTH` deep in our
    converter's language: a valid instance refused for that alone is a policy failure of
    every engine fed that language, and no other refusal is."""
    from harness.diff.run.service import declared_schema_policies
    from harness.engines.base import SchemaPolicy

    ANY_DEPTH = SchemaPolicy.UNCONSTRAINED_VALUES_AT_MOST_ANY_DEPTH

    engine = _available("tokensdfa-lazy")
    declared = declared_schema_policies(engine)
    assert ANY_DEPTH in declared and ANY_DEPTH not in declared_schema_policies(_available(SUBJECT))
    free = {"type": "object", "properties": {"meta": {}}}
    deep = {"meta": [[[1]]]}

    def check(compiled_from: dict, judged: dict, policies: tuple[str, ...]):  # type: ignore[no-untyped-def]
        compiled = engine.compile(engine.prepare(VOCAB), Spec.schema("t/depth", compiled_from))
        return check_instances(
            engine.name,
            compiled,
            judged,
            "t",
            VOCAB,
            [deep],
            [],
            samples=0,
            schema_policies=policies,
        )

    counts = check(free, free, declared)
    assert (counts.false_rejections, counts.policy) == (0, 1), counts.failures
    assert counts.failures[0].policy == ANY_DEPTH
    assert check(free, free, ()).false_rejections == 1  # undeclared: a bug
    # an engine that refuses what its language holds is not excused: the converter's
    # language of the judged schema (arrays three deep, all constrained) accepts the
    # instance at the default depth
    narrow = {"type": "object", "properties": {"meta": {"items": {"items": {"maxItems": 0}}}}}
    three = {"type": "object", "properties": {"meta": {"items": {"items": {"type": "array"}}}}}
    counts = check(narrow, three, declared)
    assert (counts.false_rejections, counts.policy) == (1, 0), counts.failures
