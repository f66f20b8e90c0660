"""The records `RUN/diff.json` lists, typed: a bug (`BugRecord`, with its `Witness`es),
a finding (`FindingRecord`), a cell (`CellRow`, also stored with the cell for
`diff --resume`) and, as far as the report reads it, an instance failure (`FailureRow`).

One class per record is both ends of it: the collector and the controller write a
record with `to_json`, and the pages, `check` and `findings recheck` read it back with
`from_json` and use its attributes, so a renamed field is renamed for writer and readers
at once (and mypy finds a reader left behind) instead of rendering as a blank. The JSON
keys are the field names, in the order diff.json has always listed them. `from_json`
requires the fields that name a record (a finding's id and engine, a bug's engine,
signature and witnesses, a cell's spec and vocabulary: a file without them is not
diff.json) and gives the others their defaults, for a diff.json written before they
existed (`vocabs`, `schema`, a bug's `minimized`) and rows that list only what a reader
needs.
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any

from harness.results import Status


def _known(record: type, data: dict[str, Any]) -> dict[str, Any]:
    """The keys of `data` that are fields of `record` (a dataclass); KeyError naming a
    field with no default that `data` lacks."""
    out = {}
    for f in fields(record):
        if f.name in data:
            out[f.name] = data[f.name]
        elif f.default is MISSING and f.default_factory is MISSING:
            raise KeyError(f.name)
    return out


@dataclass(frozen=True)
class Witness:
    """A cell a bug showed on; `vocab` is None for a finding of a diff.json written
    before bugs were grouped (it listed specs only)."""

    spec: str
    vocab: str | None

    @staticmethod
    def from_json(data: dict[str, Any]) -> Witness:
        return Witness(data["spec"], data.get("vocab"))


@dataclass(frozen=True, kw_only=True)
class FindingRecord:
    """A finding (`harness.diff.findings.collector.Finding`) as diff.json lists it: its
    minimal form in figures (`minimal_tokens`, `minimal_prefix`; None where it was not
    minimized), the specs and vocabularies of its occurrences, its repro script (a file
    name in `findings/`) and whether that reproduced on its own, and the first
    disagreement as found (`example`, for people)."""

    id: str
    engine: str
    version: str = ""
    signature: str = ""
    occurrences: int = 0
    specs: tuple[str, ...] = ()
    vocabs: tuple[str, ...] = ()
    minimal_tokens: int | None = None
    minimal_prefix: str | None = None
    regex: str = ""
    # a native JSON engine's finding on a schema: the schema (its regex: the schema's
    # texts in the engine's dialect, harness.diff.walk.dialects)
    schema: str | None = None
    explanation: str = ""
    repro: str | None = None
    reproduces: bool | None = None
    repro_output: str = ""
    example: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(specs=list(self.specs), vocabs=list(self.vocabs))
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> FindingRecord:
        known = _known(FindingRecord, data)
        known.update(specs=tuple(data.get("specs", ())), vocabs=tuple(data.get("vocabs", ())))
        return FindingRecord(**known)


@dataclass(frozen=True, kw_only=True)
class BugRecord:
    """A bug (`harness.diff.findings.collector.Bug`: one engine, signature and minimized
    regex) as diff.json lists it: the findings it groups (ids), the cells it showed on,
    and the repro and explanation of its best finding."""

    id: str = ""
    engine: str
    version: str = ""
    signature: str
    regex: str = ""
    findings: tuple[str, ...] = ()
    witnesses: tuple[Witness, ...]
    witness_count: int = 0
    occurrences: int = 0
    minimized: bool = False
    repro: str | None = None
    reproduces: bool | None = None
    explanation: str = ""

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(findings=list(self.findings), witnesses=[asdict(w) for w in self.witnesses])
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> BugRecord:
        known = _known(BugRecord, data)
        witnesses = tuple(Witness.from_json(w) for w in data["witnesses"])
        known.update(
            findings=tuple(data.get("findings", ())),
            witnesses=witnesses,
            witness_count=data.get("witness_count", len(witnesses)),
        )
        return BugRecord(**known)

    @staticmethod
    def of_finding(f: FindingRecord) -> BugRecord:
        """The bug a finding stood for in a diff.json written before bugs were grouped:
        one per finding, witnessed on its specs (vocabularies unknown)."""
        return BugRecord(
            id=f.id,
            engine=f.engine,
            version=f.version,
            signature=f.signature,
            regex=f.regex,
            findings=(f.id,),
            witnesses=tuple(Witness(s, None) for s in f.specs),
            witness_count=len(f.specs),
            occurrences=f.occurrences,
            minimized=f.minimal_tokens is not None,
            repro=f.repro,
            reproduces=f.reproduces,
            explanation=f.explanation,
        )


def bugs_of(data: dict[str, Any]) -> list[BugRecord] | None:
    """The bugs of a diff.json dict; for one written before bugs were grouped, one per
    finding (`BugRecord.of_finding`); None when it has neither."""
    if "bugs" in data:
        return [BugRecord.from_json(b) for b in data["bugs"]]
    if "findings" in data:
        return [BugRecord.of_finding(FindingRecord.from_json(f)) for f in data["findings"]]
    return None


@dataclass(frozen=True, kw_only=True)
class InstanceReproRecord:
    """The repro of one (engine, kind, spec) instance failure as diff.json lists it
    (`instance_repros`): its script (`findings/NAME.py`) with the shrunk text and
    whether it reproduced on its own, or, with no script (`repro` None), why not in the
    explanation."""

    engine: str
    kind: str
    spec: str
    repro: str | None = None
    text: str = ""
    explanation: str = ""
    reproduces: bool | None = None
    repro_output: str = ""

    def to_json(self) -> dict[str, Any]:
        """Every field; without a script only engine, kind, spec, repro and explanation
        (what diff.json has always listed for it)."""
        if self.repro is None:
            return {
                "engine": self.engine,
                "kind": self.kind,
                "spec": self.spec,
                "repro": None,
                "explanation": self.explanation,
            }
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> InstanceReproRecord:
        return InstanceReproRecord(**_known(InstanceReproRecord, data))


@dataclass(frozen=True, kw_only=True)
class FailureRow:
    """An instance failure (`harness.diff.judge.instances.InstanceFailure.row`) as far
    as the report reads it: whose, of what kind, on which cell (None: not listed, so in
    no group), and the policy that explains it (None: not explained, a bug when its kind
    is one)."""

    engine: str
    kind: str
    spec_id: str | None = None
    vocab: str | None = None
    policy: str | None = None

    @staticmethod
    def from_json(data: dict[str, Any]) -> FailureRow:
        return FailureRow(**_known(FailureRow, data))


@dataclass(frozen=True)
class CellCounts:
    """What a compared cell found: states per engine, disagreeing states (in all, bugs,
    and per engine by verdict), and the engines not compared with why."""

    states: dict[str, int]
    disagreements: int
    bugs: int
    by_engine: dict[str, dict[str, int]]
    skipped: dict[str, str]


@dataclass
class CellRow:
    """One (spec, vocabulary) cell as diff.json lists it (`cells`) and the store keeps
    it: planned with `note` (why there is no mask diff: the schema has no regex) and
    `paths` (why there are no corpus paths) where they apply, then finished with the
    worker's time and host and either `counts` (status ok) or `failure` (the message of
    a failed status, when it has one).

    In the JSON, `detail` is the failure's message, else the note; it stands where it
    was first set (before the timings when there was a note), as it always has, and
    `from_json` reads that place back (a failed cell's note is then its message)."""

    spec: str
    vocab: str
    note: str | None = None
    paths: str | None = None
    seconds: float | None = None
    host: str | None = None
    status: Status | None = None
    failure: str | None = None
    counts: CellCounts | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"spec": self.spec, "vocab": self.vocab}
        if self.note is not None:
            out["detail"] = self.note
        if self.paths is not None:
            out["paths"] = self.paths
        if self.seconds is not None:
            out.update(seconds=self.seconds, host=self.host)
        if self.status is not None:
            out["status"] = self.status
        if self.status is not None and self.status != Status.OK:
            out["detail"] = self.failure
        if self.counts is not None:
            out.update(asdict(self.counts))
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> CellRow:
        status = Status(data["status"]) if "status" in data else None
        failed = status is not None and status != Status.OK
        counts = None
        if status == Status.OK and "states" in data:
            counts = CellCounts(
                data["states"],
                data["disagreements"],
                data["bugs"],
                data["by_engine"],
                data["skipped"],
            )
        keys = list(data)
        noted = "detail" in data and (
            "seconds" not in data or keys.index("detail") < keys.index("seconds")
        )
        return CellRow(
            spec=data["spec"],
            vocab=data["vocab"],
            note=data["detail"] if noted else None,
            paths=data.get("paths"),
            seconds=data.get("seconds"),
            host=data.get("host"),
            status=status,
            failure=data.get("detail") if failed else None,
            counts=counts,
        )
