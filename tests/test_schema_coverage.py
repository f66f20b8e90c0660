"""The schema coverage benchmark's tallies (`benchmarks.schema_coverage` and
`benchmarks.engine_coverage`), on schemas
written here: an engine's refusal is tallied without counts, a schema taken counts its
instances and its own completions, and ours judges its completions against the
schema."""

from __future__ import annotations

import pytest

from benchmarks import engine_coverage, schema_coverage
from harness.corpora.entry import Entry
from harness.engines.base import Matcher
from harness.errors import EngineError
from harness.language import converter
from harness.spec import Spec

# llguidance refuses a look-ahead; ours reads it at the start of an anchored pattern
LOOKAHEAD = {"type": "string", "pattern": "^(?!internal-)[a-z]+$"}
POINT = {
    "type": "object",
    "properties": {"x": {"type": "integer", "minimum": 0}, "y": {"enum": ["a", "b"]}},
    "required": ["x"],
    "additionalProperties": False,
}


def _entries() -> list[Entry]:
    return [
        Entry(Spec.schema("t/lookahead", LOOKAHEAD), "test", (), ("ab",), ("internal-x", "A")),
        Entry(Spec.schema("t/point", POINT), "test", (), ({"x": 1, "y": "a"},), ({"x": -1},)),
    ]


def test_an_engine_refusal_is_tallied_and_a_taken_schema_counted() -> None:
    pytest.importorskip("llguidance")
    tally, counts, shown = engine_coverage.coverage("llguidance", _entries(), 60.0, outputs=3)
    assert tally["ok"] == 1 and sum(tally.values()) == 2, tally
    assert counts["valid"] == 1 and counts["invalid"] == 1
    assert counts["samples"] == 3
    assert counts["exact"] == 1 and shown == [], counts


def test_our_row_checks_instances_and_its_own_outputs() -> None:
    walker = schema_coverage.ByteLanguage()
    row = schema_coverage._converter_row(converter.OURS, _entries(), walker, {}, outputs=4)
    assert row["taken"] == 2
    assert row["checked"] == 2 * 5  # five instances, compact and spaced
    assert row["fr"] == row["fa"] == 0
    assert row["outputs"] == 8 and row["invalid_outputs"] == 0
    assert row["exact"] == 2


def test_outputs_wider_than_the_schema_are_invalid() -> None:
    """outlines-core's converter reads `\\w` as Unicode word characters, where the judge
    (ECMA-262) takes ASCII ones only: completions drawn from its masks show it."""
    pytest.importorskip("outlines_core")
    word = {"type": "string", "pattern": "^\\w{3}$"}
    entries = [Entry(Spec.schema("t/word", word), "test", (), ("abc",), ("ab",))]
    walker = schema_coverage.ByteLanguage()
    theirs = schema_coverage._converter_row("outlines-core", entries, walker, {}, outputs=8)
    assert theirs["invalid_outputs"] > 0 and theirs["exact"] == 0, theirs
    ours = schema_coverage._converter_row(converter.OURS, entries, walker, {}, outputs=8)
    assert ours["invalid_outputs"] == 0 and ours["exact"] == 1, ours


def test_a_schema_nothing_satisfies_has_no_outputs_and_no_invalid_ones() -> None:
    """MaskBench's Glaiveai2K calculate_area schemas require all five keys beside a
    `oneOf` of three `required` lists, so every object meets all three branches and
    none is valid: an exact subject allows nothing, and writes no completion."""
    unsatisfiable = {
        "type": "object",
        "required": ["a", "b"],
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
    }
    entries = [Entry(Spec.schema("t/none", unsatisfiable), "test", (), (), ({"a": 1, "b": 2},))]
    walker = schema_coverage.ByteLanguage()
    row = schema_coverage._converter_row(converter.OURS, entries, walker, {}, outputs=2)
    assert row["taken"] == 1 and row["fa"] == 0
    assert row["empty"] == 2 and row["invalid_outputs"] == 0 and row["exact"] == 1, row


def test_an_output_that_repeats_a_name_is_counted_apart_not_judged() -> None:
    """Only the name "a", at least two members: every object our language (members
    counted, names not kept distinct) writes repeats it. json.loads would keep one
    member and call the text invalid; parsers differ on which member wins."""
    repeats = {"type": "object", "propertyNames": {"const": "a"}, "minProperties": 2}
    entries = [Entry(Spec.schema("t/repeats", repeats), "test", (), (), ({"a": 1},))]
    walker = schema_coverage.ByteLanguage()
    row = schema_coverage._converter_row(converter.OURS, entries, walker, {}, outputs=3)
    assert row["repeated_keys"] + row["unfinished"] == 3 and row["repeated_keys"] >= 1, row
    assert row["invalid_outputs"] == 0, row


def test_an_index_that_breaks_mid_walk_is_counted_and_the_run_goes_on() -> None:
    """The lazy index raises once a walk passes its limit (LimitError, an EngineError
    through the adapter): that schema is counted broken and not exact, the next one is
    judged as usual. The break is injected where the walker reads the index."""

    class Breaking(schema_coverage.ByteLanguage):
        def accepts(self, matcher: Matcher, text: str) -> bool:
            if '"x"' in text:  # the point's instances
                raise EngineError("tokensdfa-lazy", "t/point", "walk limit")
            return super().accepts(matcher, text)

    row = schema_coverage._converter_row(converter.OURS, _entries(), Breaking(), {}, outputs=2)
    assert row["taken"] == 2 and row["broken"] == 1
    assert row["exact"] == 1 and row["fr"] == row["fa"] == 0
    assert row["broken_examples"][0][0] == "t/point"
