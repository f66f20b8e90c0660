"""The differ's types: the policy names declared once (`Policy`, `SchemaPolicy`) and one
triage rule per mask policy; the worker protocol (`harness.diff.run.protocol`) and the
records of diff.json (`harness.diff.findings.records`) read back as written, in the
JSON the store and diff.json have always held."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import engines
from harness.diff.findings.records import (
    BugRecord,
    CellCounts,
    CellRow,
    FindingRecord,
    Witness,
    bugs_of,
)
from harness.diff.judge import schema_policies
from harness.diff.judge.triage import POLICY_RULES, VerdictKind
from harness.diff.run.protocol import (
    CellOutcome,
    CellRequest,
    DiffSetup,
    InstancePlan,
    StoredCell,
)
from harness.diff.walk.disagreement import Disagreement, SpecDiff
from harness.diff.walk.plan import WalkPlan
from harness.engines.base import Policy, SchemaPolicy
from harness.results import Status
from harness.spec import Spec


def test_every_mask_policy_has_one_rule_and_every_declared_name_is_known() -> None:
    assert set(POLICY_RULES) == set(Policy)
    assert set(schema_policies.KNOWN) == set(SchemaPolicy)
    for engine in engines.all_engines():
        assert all(isinstance(p, Policy) for p in engine.policies.mask), engine.name
        assert all(isinstance(p, SchemaPolicy) for p in engine.policies.json_schema)
    xgrammar = engines.get("xgrammar").policies
    assert not xgrammar.unicode_classes and xgrammar.follows(Policy.ASCII_CLASSES)
    assert engines.get("llguidance").policies.canonical_forced


def test_names_are_the_strings_stored_and_shown() -> None:
    """A `StrEnum` member is its string wherever it is written: JSON, f-strings, joins."""
    shown = {Policy.CANONICAL_FORCED: VerdictKind.POLICY}
    assert json.dumps(shown) == '{"canonical-forced": "policy"}'
    assert f"{Policy.EAGER_END} {VerdictKind.BUG}" == "eager-end bug"
    both = "+".join([SchemaPolicy.ONEOF_AS_ANYOF, SchemaPolicy.LENGTH_IGNORED_WITH_PATTERN])
    assert both == "oneof-as-anyof+length-ignored-with-pattern"


def _disagreement() -> Disagreement:
    return Disagreement(
        engine="e",
        version="1",
        spec_id="s/a",
        vocab="v",
        regex="ab",
        prefix_ids=(1,),
        prefix=b"a",
        reference_only=(2,),
        engine_only=(),
        n_reference_only=1,
        n_engine_only=0,
        accepting_expected=False,
        accepting_actual=False,
        verdict=VerdictKind.BUG,
        rule="unclassified",
        why="x",
        agrees_with_tokensdfa=True,
    )


def test_worker_protocol_crosses_as_json_and_back() -> None:
    spec = Spec.schema("s/a", {"type": "integer"}, converted="-?[0-9]+")
    request = CellRequest(
        spec=spec,
        regex="-?[0-9]+",
        plan=WalkPlan(paths=((1, 2), (3,)), random_walks=2),
        minimize=True,
        minimize_budget_s=3.5,
        instances=InstancePlan(({"a": 1},), (None,), 2, 0),
    )
    part = request.part(("xgrammar",), check_exact=False, reference_instances=False)
    for asked in (request, part, part.part((), check_exact=True, reference_instances=True)):
        assert CellRequest.from_json(json.loads(json.dumps(asked.to_json()))) == asked
    assert part.engines == ("xgrammar",) and not part.dialect_lane
    setup = DiffSetup("gpt2", ("a", "b"))
    assert setup.to_json() == {"vocab": "gpt2", "engines": ["a", "b"]}
    assert DiffSetup.from_json(setup.to_json()) == setup
    outcome = CellOutcome(SpecDiff("s/a", "v", "ab", {"e": 3}, [_disagreement()]))
    again = CellOutcome.from_json(json.loads(json.dumps(outcome.to_json())))
    assert again == outcome and again.diff.disagreements[0].verdict is VerdictKind.BUG
    assert json.loads(json.dumps(outcome.to_json()))["diff"]["disagreements"][0]["verdict"] == "bug"


COUNTS = CellCounts({"e": 3}, 1, 1, {"e": {"policy": 0, "bug": 1}}, {})
OK, TIMEOUT, CRASH = Status.OK, Status.TIMEOUT, Status.CRASH
ROWS = [  # every layout a cell's row has had: ok, no regex, failed, both
    CellRow("s/a", "v", seconds=1.5, host="h", status=OK, counts=COUNTS),
    CellRow("s/a", "v", note="no mask diff", seconds=1.5, host="h", status=OK, counts=COUNTS),
    CellRow("s/a", "v", paths="no paths", seconds=2, host="h", status=TIMEOUT, failure="t"),
    CellRow("s/a", "v", note="t", seconds=2, host="h", status=CRASH, failure="t"),
]


@pytest.mark.parametrize("row", ROWS)
def test_cell_rows_keep_their_keys_in_place(row: CellRow) -> None:
    data = json.loads(json.dumps(row.to_json()))
    again = CellRow.from_json(data)
    assert again == row and list(again.to_json()) == list(data)
    stored = StoredCell(row, None).to_json()
    assert StoredCell.from_json(json.loads(json.dumps(stored))) == StoredCell(row, None)
    # "detail" stands before the timings where there was a note, after the status if not
    order = list(data)
    assert ("detail" in data) == (row.note is not None or row.failure is not None)
    if "detail" in data:
        assert (order.index("detail") < order.index("seconds")) == (row.note is not None)


def test_a_row_as_a_failed_cell_was_stored_before_these_types() -> None:
    """The dict the controller built: the note first, a failure's message over it."""
    old: dict[str, Any] = {"spec": "s/a", "vocab": "v", "detail": "no mask diff: x"}
    old.update(seconds=2.0, host="h")
    old.update(status="timeout", detail="timed out")
    row = CellRow.from_json(json.loads(json.dumps(old)))
    assert row.status is Status.TIMEOUT and row.failure == "timed out" and row.counts is None
    assert list(row.to_json().items()) == list(old.items())


def test_records_need_what_names_them_and_read_old_diff_json() -> None:
    finding = {"id": "f1", "engine": "e", "signature": "s", "specs": ["a/x", "a/y"]}
    record = FindingRecord.from_json(finding)
    assert record.specs == ("a/x", "a/y") and record.schema is None and record.vocabs == ()
    with pytest.raises(KeyError):
        FindingRecord.from_json({"id": "f1", "engin": "e"})
    with pytest.raises(KeyError):
        BugRecord.from_json({"engine": "e", "signature": "s"})
    bug = BugRecord.from_json({"engine": "e", "signature": "s", "witnesses": [{"spec": "a"}]})
    assert bug.witnesses == (Witness("a", None),) and bug.witness_count == 1
    # a diff.json from before bugs were grouped: one bug per finding, on its specs
    (legacy,) = bugs_of({"findings": [finding]}) or []
    assert legacy.witnesses == (Witness("a/x", None), Witness("a/y", None))
    assert (legacy.id, legacy.findings, legacy.witness_count) == ("f1", ("f1",), 2)
    assert bugs_of({"cells": []}) is None
