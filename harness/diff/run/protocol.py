"""The diff worker's protocol, typed end to end: what the controller plans and asks,
what comes back, and what the store keeps of a finished cell.

- `DiffSetup`: how a vocabulary's worker builds its `DiffService`;
- `CellRequest`: one part of one cell asked of the service (`DiffService.handle`), with
  its `WalkPlan` and, for a schema, its `InstancePlan`;
- `CellOutcome`: the service's answer, and a whole cell's once its parts are merged;
- `CellItem`: a cell as the cluster runs it (`harness.diff.run.cell.run_cell`): its
  planned row (`harness.diff.findings.records.CellRow`), its request, the run's engines
  and the timeout of each part;
- `CellReply`: what `run_cell` gives back: the outcome or the failure (`CellFailure`),
  lines to log, the releases the worker imported, its host and time;
- `StoredCell`: a finished cell as the store keeps it (`diff_cells.outcome`), which
  `diff --resume` replays.

Setups, requests and outcomes cross process boundaries as JSON (`to_json`/`from_json`);
items and replies travel as they are (pickled to a Dask worker and back); a stored cell
is JSON in SQLite. The JSON keys are those the diff has always written, so a run stored
before these types resumes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from harness.diff.findings.records import CellRow
from harness.diff.judge.instances import InstanceCounts
from harness.diff.shrink.minimal import Minimal
from harness.diff.walk.disagreement import Disagreement, SpecDiff
from harness.diff.walk.plan import WalkPlan
from harness.results import Status
from harness.spec import Spec


@dataclass(frozen=True)
class DiffSetup:
    """A worker's service: the vocabulary it prepares once, for every engine named."""

    vocab: str
    engines: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"vocab": self.vocab, "engines": list(self.engines)}

    @staticmethod
    def from_json(data: dict[str, Any]) -> DiffSetup:
        return DiffSetup(data["vocab"], tuple(data["engines"]))


@dataclass(frozen=True)
class InstancePlan:
    """A schema's instance checks: its labelled instances (JSON values), how many
    completions to sample, with which seed."""

    valid: tuple[Any, ...]
    invalid: tuple[Any, ...]
    samples: int
    seed: int

    def to_json(self) -> dict[str, Any]:
        return {
            "valid": list(self.valid),
            "invalid": list(self.invalid),
            "samples": self.samples,
            "seed": self.seed,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> InstancePlan:
        return InstancePlan(
            tuple(data["valid"]), tuple(data["invalid"]), data["samples"], data["seed"]
        )


@dataclass(frozen=True)
class CellRequest:
    """One part of a cell: `spec` (carrying its converted regex, so a worker never
    converts) and `regex` (None: the schema has no regex, only instance checks run),
    walked by `plan`, bugs minimized within `minimize_budget_s` when `minimize`, a
    schema's instances checked by `instances`. The part: the engines `engines` (None:
    every engine of the worker), TokensDFA exact against the naive index
    (`check_exact`), the reference on instances (`reference_instances`), or, with
    `dialect_lane`, those engines' masks in their own JSON dialect."""

    spec: Spec
    regex: str | None
    plan: WalkPlan
    minimize: bool
    minimize_budget_s: float
    instances: InstancePlan | None
    engines: tuple[str, ...] | None = None
    check_exact: bool = True
    reference_instances: bool = True
    dialect_lane: bool = False

    def part(
        self,
        engines: tuple[str, ...],
        *,
        check_exact: bool,
        reference_instances: bool,
        dialect_lane: bool = False,
    ) -> CellRequest:
        """The request of one part of this cell."""
        return replace(
            self,
            engines=engines,
            check_exact=check_exact,
            reference_instances=reference_instances,
            dialect_lane=dialect_lane,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": self.spec.to_json(),
            "regex": self.regex,
            "plan": self.plan.to_json(),
            "minimize": self.minimize,
            "minimize_budget_s": self.minimize_budget_s,
            "instances": None if self.instances is None else self.instances.to_json(),
            "engines": None if self.engines is None else list(self.engines),
            "check_exact": self.check_exact,
            "reference_instances": self.reference_instances,
            "dialect_lane": self.dialect_lane,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> CellRequest:
        instances, engines = data["instances"], data["engines"]
        return CellRequest(
            spec=Spec.from_json(data["spec"]),
            regex=data["regex"],
            plan=WalkPlan.from_json(data["plan"]),
            minimize=bool(data["minimize"]),
            minimize_budget_s=float(data["minimize_budget_s"]),
            instances=None if instances is None else InstancePlan.from_json(instances),
            engines=None if engines is None else tuple(engines),
            check_exact=bool(data["check_exact"]),
            reference_instances=bool(data["reference_instances"]),
            dialect_lane=bool(data["dialect_lane"]),
        )


@dataclass
class CellOutcome:
    """What a cell (or one part of it) found: its `SpecDiff`, the minimal form of the
    first bug of each (engine, signature), by disagreement index, and the instance
    checks of a schema."""

    diff: SpecDiff
    minimal: dict[int, Minimal | None] = field(default_factory=dict)
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

    def merge(self, other: CellOutcome) -> None:
        """Add the outcome of another part of the same cell (another engine's)."""
        offset = len(self.diff.disagreements)
        self.diff.disagreements += other.diff.disagreements
        self.diff.states.update(other.diff.states)
        self.diff.steps.update(other.diff.steps)
        self.diff.skipped.update(other.diff.skipped)
        self.diff.lane_regex.update(other.diff.lane_regex)
        self.diff.protocol_walks.update(other.diff.protocol_walks)
        self.diff.protocol_ops.update(other.diff.protocol_ops)
        self.minimal.update({i + offset: m for i, m in other.minimal.items()})
        self.instances += other.instances

    def grouped(self) -> list[tuple[Disagreement, Minimal | None]]:
        """Each disagreement with the minimal form of its (engine, signature) group."""
        by_group: dict[tuple[str, str], Minimal | None] = {}
        for i, m in self.minimal.items():
            d = self.diff.disagreements[i]
            by_group[(d.engine, d.rule)] = m
        return [(d, by_group.get((d.engine, d.rule))) for d in self.diff.disagreements]


@dataclass(frozen=True)
class CellItem:
    """A cell as the cluster runs it: `row` as planned, `request` (the whole cell's;
    `run_cell` asks it part by part), the run's `engines`, and the seconds each part
    may take."""

    row: CellRow
    request: CellRequest
    engines: tuple[str, ...]
    timeout: float


@dataclass(frozen=True)
class CellFailure:
    """Why a cell has no outcome: the reference's own part failed (the reference could
    not build the spec, or its worker timed out, crashed, ran out of memory)."""

    status: Status
    message: str | None


@dataclass
class CellReply:
    """What `run_cell` gives back: the merged `outcome`, or the `failure` that left the
    cell without one; `notes` to log (parts that failed), the releases the worker
    imported (`versions`, when it started during the cell), its `host`, and the cell's
    wall time in `seconds`."""

    outcome: CellOutcome | None
    failure: CellFailure | None
    notes: list[str]
    versions: dict[str, str]
    host: str
    seconds: float


@dataclass
class StoredCell:
    """A finished cell in the store: its row as diff.json lists it and its outcome as
    JSON (None for a failed cell), as `diff --resume` replays them."""

    row: CellRow
    outcome: CellOutcome | None

    def to_json(self) -> dict[str, Any]:
        outcome = None if self.outcome is None else self.outcome.to_json()
        return {"row": self.row.to_json(), "outcome": outcome}

    @staticmethod
    def from_json(data: dict[str, Any]) -> StoredCell:
        outcome = data.get("outcome")
        return StoredCell(
            CellRow.from_json(data["row"]),
            None if outcome is None else CellOutcome.from_json(outcome),
        )
