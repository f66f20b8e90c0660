"""What makes findings small and few: the regex tree and its shrinker, delta debugging,
the minimizer's starts (an engine that refuses tiny vocabularies, a bug at the initial
state), grouping findings into bugs, JSON-structure shrinking of instances, and the
declared JSON-schema policies."""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness import engines
from harness.diff.findings import repro
from harness.diff.findings.collector import Collector
from harness.diff.judge import schema_policies
from harness.diff.judge.instances import check_instances
from harness.diff.shrink import SHRINKERS, json_shrink
from harness.diff.shrink.ddmin import ddmin
from harness.diff.shrink.grammar_shrink import shrink_grammar
from harness.diff.shrink.minimize import (
    TinyCase,
    minimize,
    needed_bytes,
    shrink_case,
    tiny_vocabulary,
)
from harness.diff.shrink.path import shrink_path
from harness.diff.shrink.protocol_shrink import ProtocolCase, shrink_protocol
from harness.diff.shrink.regex_shrink import shrink_regex
from harness.diff.shrink.stale import StaleCase, shrink_history
from harness.diff.shrink.text_shrink import shrink_text
from harness.diff.walk.differ import Differ
from harness.diff.walk.history import validate_op
from harness.diff.walk.plan import WalkPlan
from harness.errors import UnsupportedSpec
from harness.language import grammar, regex_tree
from harness.spec import Spec
from harness.vocab import synthetic
from tests.mutation import suite as mutation
from tests.mutation.mutants import mutant_class

pytest.importorskip("tokensdfa")

PATTERNS = [
    r"a(\.a)*",
    r"[]a-z]+\]?",
    r"[^\]\\]{2,}?x",
    r"\x{1F600}\p{Greek}\pL(?P<y>\d{4})-(?<m>\d\d)",
    r"(?i)abc(?-i:D)|(?s:.)",
    r"[[:alpha:][^x]]&&",
    r"a{2}b{3,}c{1,4}?(|x)",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_regex_tree_prints_back_and_its_cuts_are_shorter(pattern: str) -> None:
    tree = regex_tree.parse(pattern)
    assert regex_tree.text(tree) == pattern
    for variant in regex_tree.variants(tree):
        assert regex_tree.weight(variant) < regex_tree.weight(tree)


def test_regex_tree_refuses_what_it_cannot_read() -> None:
    for bad in ("(ab", "ab)", "[ab", "a\\", "*a"):
        with pytest.raises(ValueError):
            regex_tree.parse(bad)
    assert regex_tree.stacked_repeat(regex_tree.parse("a{2}{3}"))
    assert not regex_tree.stacked_repeat(regex_tree.parse("(a{2}){3}"))


def test_ddmin_finds_a_one_minimal_sublist() -> None:
    calls = []

    def test(items: list[int]) -> bool:
        calls.append(items)
        return 3 in items and 7 in items

    assert ddmin(list(range(20)), test, time.monotonic() + 10) == [3, 7]
    assert ddmin([1, 2], lambda xs: True, time.monotonic() + 10) == []


# Each shrinker of the stage with a start and a predicate that holds on it: (shrinker,
# start, keeps, what it shrinks to with time enough).
CONTRACT_CASES: list[tuple[Any, Any, Any, Any]] = [
    (ddmin, list(range(10)), lambda xs: 3 in xs and 7 in xs, [3, 7]),
    (shrink_regex, "x(ab|cd)+y", lambda r: "cd" in r, "cd"),
    (
        json_shrink.shrink_json,
        '{"a":[1,2],"b":"xyz"}',
        lambda t: '"b"' in t,
        '{"b":0}',
    ),
    (shrink_text, "not json at all", lambda t: "j" in t, "j"),
    (shrink_path, (b"a", b"b", b"c"), lambda p: b"b" in p, (b"b",)),
    (
        shrink_case,
        TinyCase("ab|cd", (b"a", b"b", b"c", b"d")),
        lambda c: "c" in c.regex and b"c" in c.tokens,
        TinyCase("c", (b"c",)),
    ),
    (
        shrink_grammar,
        Spec.grammar("t/g", 'root ::= "a" | "b" x\nx ::= "c" | "d"\n', "gbnf"),
        lambda g: grammar.accepts(g.text, "gbnf", ["bd"])[0],
        Spec.grammar(
            "t/g", 'root ::= r0-root\nr0-root ::= t0-b t1-d\nt0-b ::= "b"\nt1-d ::= "d"\n', "gbnf"
        ),
    ),
    (
        shrink_history,
        StaleCase(((1, 2), (3,), (4, 5)), (b"x", b"y")),
        lambda c: any(3 in w for w in c.walks) and b"y" in c.witnesses,
        StaleCase(((3,),), (b"y",)),
    ),
    (
        shrink_protocol,
        ProtocolCase(((1,), (validate_op(2), 2, 3), (4,)), (b"x", b"y")),
        lambda c: (validate_op(2), 2, 3) in c.ops and b"y" in c.witnesses,
        ProtocolCase(((validate_op(2), 2, 3),), (b"y",)),
    ),
]


def test_every_shrinker_is_tested_for_the_contract() -> None:
    assert {c[0] for c in CONTRACT_CASES} == set(SHRINKERS)


@pytest.mark.parametrize(
    ("shrink", "start", "keeps", "smallest"),
    CONTRACT_CASES,
    ids=[c[0].__name__ for c in CONTRACT_CASES],
)
def test_every_shrinker_follows_the_one_contract(
    shrink: Any, start: Any, keeps: Any, smallest: Any
) -> None:
    """`shrink(start, keeps, deadline)` for every shrinker of the stage (`SHRINKERS`):
    with time enough, the smallest value on which `keeps` holds; past the deadline,
    `start` itself, without asking `keeps` anything."""
    assert list(inspect.signature(shrink).parameters)[:3] == ["start", "keeps", "deadline"]
    assert keeps(start)
    found = shrink(start, keeps, time.monotonic() + 30)
    assert found == smallest and keeps(found)
    asked: list[Any] = []

    def recorded(value: Any) -> bool:
        asked.append(value)
        return bool(keeps(value))

    assert shrink(start, recorded, time.monotonic() - 1) == start
    assert asked == []


def test_shrink_regex_keeps_what_the_bug_needs() -> None:
    regex = r"(?:x[0-9]{2,4}|y)-(a|b+c)\.d"
    found = shrink_regex(regex, lambda r: "b+" in r, time.monotonic() + 10)
    assert found == "b+"
    assert shrink_regex("(ab", lambda r: True, time.monotonic() + 10) == "(ab"


SUITE = mutation.suite_vocabulary()


class PickyMutant(mutant_class("drop-token", False)):  # type: ignore[misc]
    """A mutant that, like outlines-core, refuses a vocabulary without every single byte
    (of the suite's) its regex can read."""

    def compile(self, prepared: Any, spec: Spec) -> Any:
        have = set(prepared.vocab.tokens)
        if any(b not in have for b in needed_bytes(spec.text, SUITE)):
            raise UnsupportedSpec(self.name, spec.id, "vocabulary provided is incompatible")
        return super().compile(prepared, spec)


def test_minimizer_adds_the_bytes_an_engine_needs() -> None:
    vocab = mutation.suite_vocabulary()
    engine = PickyMutant()
    regex = r"(cat|car)s? [a-z]{2,4}!"
    compiled = engine.compile(engine.prepare(vocab), Spec.regex("t/picky", regex))
    result = Differ("t/picky", regex, vocab, {engine.name: (engine, compiled)}).run(WalkPlan())
    bug = min((d for d in result.disagreements if d.verdict == "bug"), key=lambda d: d.prefix)
    bare = tiny_vocabulary([vocab.tokens[i] for i in (*bug.prefix_ids, *bug.reference_only[:1])])
    with pytest.raises(UnsupportedSpec):
        engine.compile(engine.prepare(bare), Spec.regex("t/picky", regex))
    m = minimize(bug, engine, vocab)
    assert m is not None and set(m.expected) != set(m.actual)


def test_minimizer_handles_a_bug_at_the_initial_state_with_no_witness(tmp_path: Path) -> None:
    vocab = mutation.suite_vocabulary()
    with mutation.registered():
        engine = engines.get("mutant-allow-eos")
        regex = "ab"
        compiled = engine.compile(engine.prepare(vocab), Spec.regex("t/eos", regex))
        result = Differ("t/eos", regex, vocab, {engine.name: (engine, compiled)}).run(WalkPlan())
        first = next(d for d in result.disagreements if not d.prefix_ids)
        assert first.reference_only == () and first.engine_only == ()
        m = minimize(first, engine, vocab)
        assert m is not None and m.rule == "eos-allowed-before-match"
        path = tmp_path / "eos.py"
        path.write_text(repro.script(m, {}, "t", repro.explanation(m, {})))
        assert repro.run(path)[0]


def test_findings_group_into_bugs_with_witnesses() -> None:
    vocab = mutation.suite_vocabulary()
    collector = Collector()
    with mutation.registered():
        engine = engines.get("mutant-refuse-eos")
        for spec_id, regex in (("t/one", "c(ab)*"), ("t/two", "(ab)*d|(ab)*")):
            compiled = engine.compile(engine.prepare(vocab), Spec.regex(spec_id, regex))
            found = Differ(spec_id, regex, vocab, {engine.name: (engine, compiled)}).run(WalkPlan())
            d = found.disagreements[0]
            collector.add(d, minimize(d, engine, vocab), vocab.tokens)
    bugs = collector.bugs()
    assert len(bugs) == 1, [b.row() for b in bugs]
    row = bugs[0].row()
    assert row["witness_count"] == 2 and row["signature"] == "eos-refused-at-match"
    assert len(row["regex"]) <= 4


def test_json_shrink_keeps_a_document_a_user_could_write() -> None:
    value = {"name": "a long name", "tags": ["x", "y", "z"], "age": 1234, "extra": {"k": [1]}}
    kept: list[str] = []

    def keeps(text: str) -> bool:
        ok, parsed = json_shrink.parse_strict(text)
        kept.append(text)
        return ok and isinstance(parsed, dict) and isinstance(parsed.get("tags"), list)

    start = json.dumps(value, separators=(",", ":"))
    assert json_shrink.shrink_json(start, keeps, time.monotonic() + 60) == '{"tags":[]}'
    assert json_shrink.layout_of('{"a": 1}') == "spaced"
    assert json_shrink.parse_strict('{"a":1,"a":2}') == (False, None)


DECLARED = ("additional-properties-false", "oneof-as-anyof", "length-ignored-with-pattern")


@pytest.mark.parametrize(
    ("schema", "valid", "invalid", "policy"),
    [
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, [{"a": 1, "b": 2}], [],
         "additional-properties-false"),
        ({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}, [], [5],
         "oneof-as-anyof"),
        ({"type": "string", "pattern": "^[a-z]+$", "maxLength": 3}, [], ["abcdef"],
         "length-ignored-with-pattern"),
    ],
)  # fmt: skip
def test_xgrammar_json_schema_policies(
    schema: dict[str, Any], valid: list[Any], invalid: list[Any], policy: str
) -> None:
    engine = engines.get("xgrammar")
    ok, why = engine.available()
    if not ok:
        pytest.skip(why)
    vocab = synthetic(1000, seed=7)
    compiled = engine.compile(engine.prepare(vocab), Spec.schema("t/s", schema))

    def run(declared: tuple[str, ...]) -> Any:
        return check_instances(
            "xgrammar", compiled, schema, "t/s", vocab, valid, invalid, samples=0,
            schema_policies=declared,
        )  # fmt: skip

    undeclared = run(())
    assert undeclared.policy == 0 and undeclared.row()["maskbench_errors"] == 1
    counts = run(DECLARED)
    assert counts.policy == 1 and counts.row()["maskbench_errors"] == 1
    assert counts.false_rejections + counts.false_acceptances == 0
    assert [f.policy for f in counts.failures] == [policy]


def test_schema_policy_rules_must_explain_the_whole_failure() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]}
    valid = schema_policies.explain_acceptance
    from harness.corpora.judge import is_valid as _is_valid

    assert valid(DECLARED, schema, 5.5, _is_valid) is None  # matches no branch at all
    assert valid(DECLARED, schema, "ab", _is_valid) is None  # no pattern beside maxLength
    with_pattern = {"type": "string", "pattern": "^a", "maxLength": 1}
    assert valid(DECLARED, with_pattern, "ab", _is_valid) == "length-ignored-with-pattern"
    assert valid(DECLARED, with_pattern, "b", _is_valid) is None
    engine = SimpleNamespace(
        policies=SimpleNamespace(json_schema=DECLARED),
        capabilities=SimpleNamespace(json_schema="native"),
    )
    from harness.diff.run.service import declared_schema_policies

    assert declared_schema_policies(engine) == DECLARED  # type: ignore[arg-type]


def test_the_found_path_is_spelled_in_the_tiny_vocabulary() -> None:
    """The path a bug was found on is walked on a tiny vocabulary that spells it: with
    its own tokens, else byte by byte, else not at all (`path.spelled`)."""
    from harness.diff.shrink.path import spelled

    path = (b'{"c', b'":0.5', b"0")
    whole = tiny_vocabulary([b"0", b'{"c', b'":0.5', b"x"])
    assert spelled(whole, path) == (2, 3, 1)
    singles = tiny_vocabulary([bytes([b]) for b in sorted(set(b"".join(path)))])
    assert b"".join(singles.tokens[i] for i in spelled(singles, path)) == b'{"c":0.50'
    assert spelled(tiny_vocabulary([b'{"c', b"0"]), path) == ()


def test_a_found_path_is_cut_short_where_the_reference_state_allows() -> None:
    """The found path's head is replaced by a shortest path to the reference state it
    reaches, the longest head first (`path.shortcuts`): the first candidate for
    `{"a":"xxx","c":0.50` is `{"a":"","c":0.5`, whose state equals that after `0.50`
    for the reference but not for an engine with a finer one, so the next keeps the
    trailing `0`; no candidate is as long as the path."""
    from harness.diff.shrink.path import shortcuts

    # `5` before `0`: breadth first, the shortest fraction found is `0.5`
    vocab = tiny_vocabulary([b'{"a":"', b"x", b'","c":', b"5", b".", b"0", b"}"])
    regex = r'\{"a":"x*","c":0\.[0-9]+\}'
    path = (b'{"a":"', b"x", b"x", b"x", b'","c":', b"0", b".", b"5", b"0")
    cuts = shortcuts(regex, vocab, path)
    assert [b"".join(c) for c in cuts[:2]] == [b'{"a":"","c":0.5', b'{"a":"","c":0.50']
    assert all(len(c) < len(path) for c in cuts)
    assert cuts[1][-1] == b"0"
