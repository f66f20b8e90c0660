"""The worker side of a diff: one (spec, vocabulary) cell at a time, in a worker process
(`harness.process`) that prepared the vocabulary for every engine once.

A cell compiles the spec for every engine, walks them beside the reference
(`harness.diff.differ`), minimizes the first bug of each (engine, signature), and for a
JSON schema checks the engines with their own JSON grammar (and the reference, whose
language is the converter's) on labelled and sampled instances
(`harness.diff.instances`). Its outcome crosses back to the controller as JSON
(`CellOutcome.to_json`), the same form the store keeps for `diff --resume`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from harness import engines, vocab
from harness.corpora.paths import POLICY_LAYOUTS
from harness.diff.differ import Differ, WalkPlan
from harness.diff.disagreement import Disagreement, SpecDiff
from harness.diff.instances import InstanceCounts, check_instances
from harness.diff.minimize import Minimal, minimize
from harness.diff.references import References
from harness.engines.base import Engine
from harness.errors import TokensieveError
from harness.spec import Spec
from harness.vocab import Vocabulary

# Bugs minimized per (engine, signature) in one cell; the rest count as occurrences.
MINIMIZE_PER_GROUP = 1


@dataclass(frozen=True)
class InstancePlan:
    valid: tuple[Any, ...]
    invalid: tuple[Any, ...]
    samples: int
    seed: int


@dataclass
class CellOutcome:
    diff: SpecDiff
    minimal: dict[int, Minimal | None] = field(default_factory=dict)  # by disagreement index
    instances: list[InstanceCounts] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "diff": self.diff.to_json(),
            "minimal": [
                [i, None if m is None else m.to_json()] for i, m in sorted(self.minimal.items())
            ],
            "instances": [c.to_json() for c in self.instances],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> CellOutcome:
        return CellOutcome(
            SpecDiff.from_json(data["diff"]),
            {int(i): None if m is None else Minimal.from_json(m) for i, m in data["minimal"]},
            [InstanceCounts.from_json(c) for c in data["instances"]],
        )

    def grouped(self) -> list[tuple[Disagreement, Minimal | None]]:
        """Each disagreement with the minimal form of its (engine, signature) group."""
        by_group: dict[tuple[str, str], Minimal | None] = {}
        for i, m in self.minimal.items():
            d = self.diff.disagreements[i]
            by_group[(d.engine, d.rule)] = m
        return [(d, by_group.get((d.engine, d.rule))) for d in self.diff.disagreements]


class DiffService:
    """Built once per vocabulary: every engine prepared; answers one cell per request."""

    def __init__(self, setup: dict[str, Any]) -> None:
        self.vocab = vocab.load(setup["vocab"])
        self.engines = [engines.get(name) for name in setup["engines"]]
        self.prepared = {e.name: e.prepare(self.vocab) for e in self.engines}
        self.ready = {e.name: e.version() for e in self.engines}

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        plan = request["plan"]
        walk = WalkPlan(**{**plan, "paths": tuple(tuple(p) for p in plan["paths"])})
        checks = request.get("instances")
        outcome = diff_cell(
            Spec.from_json(request["spec"]),
            request.get("regex"),
            self.vocab,
            self.engines,
            self.prepared,
            walk,
            bool(request["minimize"]),
            None if checks is None else InstancePlan(**checks),
        )
        return outcome.to_json()


def diff_cell(
    spec: Spec,
    regex: str | None,
    voc: Vocabulary,
    chosen: list[Engine],
    prepared: dict[str, Any],
    plan: WalkPlan,
    do_minimize: bool,
    instances: InstancePlan | None = None,
) -> CellOutcome:
    """Compile, walk, and minimize the first bug of each signature. `regex` is None for a
    schema the converter cannot turn into a regex: there is no reference language then,
    and only the native engines' instance checks run. Raises SpecError or UnsupportedSpec
    when the reference cannot build the regex."""
    if regex is None:
        outcome = CellOutcome(SpecDiff(spec.id, voc.name, ""))
        outcome.diff.skipped = {e.name: "no converted regex: instances only" for e in chosen}
        if instances is not None:
            native = [e for e in chosen if e.capabilities.json_schema == "native"]
            outcome.instances = instance_checks(spec, voc, native, prepared, instances, None)
        return outcome
    refs = References(regex, voc, spec.id)
    skipped: dict[str, str] = {}
    compiled = _compile_all(chosen, prepared, spec, skipped)
    result = Differ(spec.id, regex, voc, compiled, refs).run(plan)
    result.skipped.update(skipped)
    outcome = CellOutcome(result)
    if instances is not None and spec.kind == "json_schema":
        reference = engines.get("naive")
        with_ref = {**prepared, "naive": prepared.get("naive") or reference.prepare(voc)}
        outcome.instances = instance_checks(spec, voc, chosen, with_ref, instances, reference)
    if do_minimize:
        outcome.minimal = _minimize_first(result, {e.name: e for e in chosen}, voc)
    return outcome


def _minimize_first(
    result: SpecDiff, by_engine: dict[str, Engine], voc: Vocabulary
) -> dict[int, Minimal | None]:
    """The minimal form of the shortest-prefix bug of each (engine, signature)."""
    out: dict[int, Minimal | None] = {}
    done: dict[tuple[str, str], int] = {}
    order = sorted(
        range(len(result.disagreements)),
        key=lambda i: len(result.disagreements[i].prefix_ids),
    )
    for i in order:
        d = result.disagreements[i]
        if d.verdict != "bug" or d.engine not in by_engine:
            continue
        group = (d.engine, d.rule)
        if done.get(group, 0) >= MINIMIZE_PER_GROUP:
            continue
        done[group] = done.get(group, 0) + 1
        out[i] = minimize(d, by_engine[d.engine], voc)
    return out


def instance_checks(
    spec: Spec,
    voc: Vocabulary,
    chosen: list[Engine],
    prepared: dict[str, Any],
    plan: InstancePlan,
    reference: Engine | None,
) -> list[InstanceCounts]:
    """Native JSON engines and the reference (the converter's language) on instances."""
    schema = json.loads(spec.text)
    out = []
    judged = [e for e in chosen if e.capabilities.json_schema == "native"]
    judged += [reference] if reference is not None else []
    for e in judged:
        try:
            compiled = e.compile(prepared[e.name], spec)
        except TokensieveError:
            continue  # the mask diff's compile already recorded why
        out.append(
            check_instances(
                e.name,
                compiled,
                schema,
                spec.id,
                voc,
                plan.valid,
                plan.invalid,
                samples=plan.samples,
                seed=plan.seed,
                layouts=POLICY_LAYOUTS[e.policies.json_whitespace],
            )
        )
    return out


def _compile_all(
    chosen: list[Engine], prepared: dict[str, Any], spec: Spec, skipped: dict[str, str]
) -> dict[str, tuple[Engine, Any]]:
    compiled = {}
    for e in chosen:
        if spec.kind == "json_schema" and e.capabilities.json_schema != "via-regex":
            # its own JSON grammar: a different language than the converted regex
            skipped[e.name] = "native JSON grammar: checked on instances, not masks"
            continue
        try:
            compiled[e.name] = (e, e.compile(prepared[e.name], spec))
        except TokensieveError as exc:
            skipped[e.name] = f"{type(exc).__name__}: {exc}"
    return compiled
