"""From raw disagreements to findings and bugs.

Policy disagreements are kept as counts per engine and rule (they are the engine behaving
as documented); bugs become findings. Two bugs with the same minimal form (engine, regex,
tokens, prefix, differing tokens) are one finding with several occurrences, each with its
repro script, explanation, and whether the repro reproduces when run on its own; a bug
the minimizer could not shrink stays its own finding, with its full-vocabulary details.

Findings then group into *bugs*: one per (engine, signature, minimized regex), since the
minimizer shrinks the regex too, one upstream bug seen on 78 corpus regexes is one bug
with 78 witnesses (every spec and vocabulary where it showed), not 78 findings. Reports
and `diff.json` lead with bugs, then findings, as the records of
`harness.diff.findings.records` (`Finding.record`, `Bug.record`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.diff.findings import instance_repro, repro
from harness.diff.findings.records import (
    BugRecord,
    FindingRecord,
    InstanceReproRecord,
    Witness,
)
from harness.diff.judge.instances import (
    FALSE_ACCEPTANCE,
    FALSE_REJECTION,
    INVALID_OUTPUT,
    InstanceCounts,
    InstanceFailure,
)
from harness.diff.judge.triage import VerdictKind
from harness.diff.shrink.minimal import Minimal
from harness.diff.walk.disagreement import Disagreement
from harness.diff.walk.serving import PROTOCOL_RULES
from harness.embed import markdown_text

INSTANCE_BUGS = (FALSE_REJECTION, FALSE_ACCEPTANCE, INVALID_OUTPUT)
# Instance repros written per run: each shrinks its text with up to a few hundred compiles.
MAX_INSTANCE_REPROS = 60


@dataclass(frozen=True)
class Occurrence:
    """One bug disagreement a finding stands for: its cell and the end of its prefix."""

    spec: str
    vocab: str
    prefix: str  # its last 80 characters


@dataclass
class Finding:
    id: str
    engine: str
    version: str
    rule: str
    minimal: Minimal | None
    example: dict[str, Any]  # the first disagreement, as found on the real vocabulary
    occurrences: list[Occurrence] = field(default_factory=list)
    explanation: str = ""
    repro: str | None = None  # file name, relative to the findings directory
    reproduces: bool | None = None
    repro_output: str = ""

    def record(self) -> FindingRecord:
        """The finding as diff.json lists it."""
        m = self.minimal
        return FindingRecord(
            id=self.id,
            engine=self.engine,
            version=self.version,
            signature=self.rule,
            occurrences=len(self.occurrences),
            specs=tuple(sorted({o.spec for o in self.occurrences})),
            vocabs=tuple(sorted({o.vocab for o in self.occurrences})),
            minimal_tokens=None if m is None else len(m.tokens),
            minimal_prefix=None if m is None else m.prefix.decode("utf-8", "backslashreplace"),
            regex=(m.regex if m else self.example["regex"])[:300],
            schema=m.schema[:300] if m and m.schema else None,
            explanation=self.explanation,
            repro=self.repro,
            reproduces=self.reproduces,
            repro_output=self.repro_output,
            example=self.example,
        )

    def row(self) -> dict[str, Any]:
        """`record()` as JSON."""
        return self.record().to_json()


@dataclass
class Bug:
    """Findings of one engine with one signature on one minimized regex."""

    id: str
    engine: str
    version: str
    signature: str
    regex: str
    findings: list[Finding] = field(default_factory=list)

    def witnesses(self) -> list[Witness]:
        """Every cell one of its findings showed on, sorted."""
        cells = sorted({(o.spec, o.vocab) for f in self.findings for o in f.occurrences})
        return [Witness(s, v) for s, v in cells]

    def record(self) -> BugRecord:
        """The bug as diff.json lists it, with its best finding's repro."""
        witnesses = self.witnesses()
        best = self.representative()
        return BugRecord(
            id=self.id,
            engine=self.engine,
            version=self.version,
            signature=self.signature,
            regex=self.regex[:300],
            findings=tuple(f.id for f in self.findings),
            witnesses=tuple(witnesses),
            witness_count=len(witnesses),
            occurrences=sum(len(f.occurrences) for f in self.findings),
            minimized=best.minimal is not None,
            repro=best.repro,
            reproduces=best.reproduces,
            explanation=best.explanation,
        )

    def row(self) -> dict[str, Any]:
        """`record()` as JSON."""
        return self.record().to_json()

    def representative(self) -> Finding:
        """The finding that shows the bug best: a reproducing repro, fewest tokens."""

        def rank(f: Finding) -> tuple[int, int, int]:
            tokens = len(f.minimal.tokens) if f.minimal is not None else 1 << 30
            return (0 if f.reproduces else 1, 0 if f.minimal else 1, tokens)

        return min(self.findings, key=rank)


def bug_key(f: Finding) -> tuple[str, str, str]:
    """(engine, signature, regex): the regex minimized where the finding was. A finding
    on a schema in the engine's dialect keeps its whole regex (only tokens shrink), so
    there the tokens its minimal form disagrees on stand in for the regex: one fault of
    the engine's JSON compiler seen on many schemas is one bug."""
    m = f.minimal
    if m is not None and m.schema:
        differing = sorted({m.tokens[i] for i in set(m.expected) ^ set(m.actual)})
        shown = ", ".join(t.decode("utf-8", "backslashreplace") for t in differing)
        return (f.engine, f.rule, f"JSON schemas, disagreeing on tokens: {shown}")
    regex = m.regex if m is not None else str(f.example["regex"])
    return (f.engine, f.rule, regex)


def _finding_id(engine: str, rule: str, key: tuple[Hashable, ...]) -> str:
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:8]
    return f"{engine}-{rule}-{digest}"


class Collector:
    """Accumulates the differ's output across cells."""

    def __init__(self) -> None:
        # by the minimal form's key, or (engine, spec, vocab, rule) where there is none
        self.findings: dict[tuple[Hashable, ...], Finding] = {}
        self.policy_counts: Counter[tuple[str, str]] = Counter()
        self.bug_states: Counter[str] = Counter()
        self.states: Counter[tuple[str, str]] = Counter()  # (engine, vocab) -> states
        self.steps: Counter[tuple[str, str]] = Counter()  # (engine, vocab) -> comparisons
        # (engine, vocab) -> serving-protocol walks, and operations in them
        self.protocol_walks: Counter[tuple[str, str]] = Counter()
        self.protocol_ops: Counter[tuple[str, str]] = Counter()
        self.instance_counts: list[InstanceCounts] = []
        self.instance_failures: list[InstanceFailure] = []
        self.instance_schemas: dict[tuple[str, str, str], tuple[InstanceFailure, Any]] = {}
        # `InstanceReproRecord`s as diff.json lists them
        self.instance_repros: list[dict[str, Any]] = []

    def add_instances(self, counts: InstanceCounts, schema: Any) -> None:
        """A cell's instance checks; `schema` None (a grammar's) writes no instance
        repros: its failures' bugs are mask findings of the cell."""
        self.instance_counts.append(counts)
        self.instance_failures.extend(counts.failures)
        for f in counts.failures if schema is not None else ():
            if f.kind in INSTANCE_BUGS and f.policy is None:
                self.instance_schemas.setdefault((f.engine, f.kind, f.spec_id), (f, schema))

    def write_instance_repros(self, directory: Path, limit: int = MAX_INSTANCE_REPROS) -> None:
        """One shrunk repro per (engine, kind, spec) instance failure, each run on its own."""
        directory.mkdir(parents=True, exist_ok=True)
        try:
            self._write_instance_repros(directory, limit)
        finally:
            instance_repro.stop_shrinking()

    def _write_instance_repros(self, directory: Path, limit: int) -> None:
        for (engine, kind, spec_id), (failure, schema) in list(self.instance_schemas.items())[
            :limit
        ]:
            found = instance_repro.shrink_in_worker(failure, schema)
            if not isinstance(found, instance_repro.InstanceRepro):
                why = found or "does not show on a byte-level vocabulary"
                explained = f"{failure.detail} ({why}; see instance_failures for the full text)"
                row = InstanceReproRecord(
                    engine=engine, kind=kind, spec=spec_id, explanation=explained
                )
                self.instance_repros.append(row.to_json())
                continue
            digest = hashlib.sha256(repr((engine, kind, spec_id)).encode()).hexdigest()[:8]
            name = f"{engine}-{kind}-{digest}"
            text = instance_repro.explanation(found, failure)
            path = directory / f"{name}.py"
            path.write_text(
                instance_repro.script(found, f"tokensieve finding {name}: {kind}", text),
                encoding="utf-8",
            )
            path.chmod(0o755)
            (directory / f"{name}.md").write_text(
                f"# {name}\n\n{markdown_text(text)}\n\nRepro: `python {name}.py`\n",
                encoding="utf-8",
            )
            reproduced, output = repro.run(path)
            row = InstanceReproRecord(
                engine=engine,
                kind=kind,
                spec=spec_id,
                repro=f"findings/{path.name}",
                text=found.text,
                explanation=text,
                reproduces=reproduced,
                repro_output=output,
            )
            self.instance_repros.append(row.to_json())

    def instance_summary(self) -> list[dict[str, Any]]:
        """Per engine and vocabulary: instance checks and their failures, summed."""
        totals: dict[tuple[str, str], Counter[str]] = {}
        for c in self.instance_counts:
            row = totals.setdefault((c.engine, c.vocab), Counter())
            row["schemas"] += 1
            for k, v in c.row().items():
                if isinstance(v, int) and not isinstance(v, bool):
                    row[k] += v
        keys = (
            "schemas",
            "valid",
            "invalid",
            "samples",
            "unfinished",
            "empty",
            "repeated_keys",
            "false_rejections",
            "false_acceptances",
            "invalid_outputs",
            "policy",
            "disputed",
            "maskbench_errors",
        )
        return [
            {"engine": e, "vocab": v, **{k: row.get(k, 0) for k in keys}}
            for (e, v), row in sorted(totals.items())
        ]

    def add(
        self,
        d: Disagreement,
        minimal: Minimal | None,
        tokens: list[bytes],
    ) -> None:
        if d.verdict == VerdictKind.POLICY:
            self.policy_counts[(d.engine, d.rule)] += 1
            return
        self.bug_states[d.engine] += 1
        key = minimal.key() if minimal is not None else (d.engine, d.spec_id, d.vocab, d.rule)
        finding = self.findings.get(key)
        if finding is None:
            rule = minimal.rule if minimal is not None else d.rule
            finding = Finding(
                id=_finding_id(d.engine, rule, key),
                engine=d.engine,
                version=d.version,
                rule=rule,
                minimal=minimal,
                example=d.example(tokens),
            )
            self.findings[key] = finding
        finding.occurrences.append(
            Occurrence(d.spec_id, d.vocab, d.prefix.decode("utf-8", "backslashreplace")[-80:])
        )

    def write_repros(self, directory: Path, run: bool = True) -> None:
        """A script and an explanation per minimized finding; each script run on its own."""
        directory.mkdir(parents=True, exist_ok=True)
        for f in self.findings.values():
            if f.minimal is None:
                f.explanation = (
                    f"{f.engine} {f.version}: {f.example['why']} (not reduced to a small "
                    "vocabulary; see the example for the full-vocabulary state)."
                )
                continue
            witnesses = repro.witnesses(f.minimal)
            f.explanation = repro.explanation(f.minimal, witnesses)
            title = f"tokensieve finding {f.id}: {f.engine} {f.version}, signature {f.rule}"
            path = directory / f"{f.id}.py"
            path.write_text(
                repro.script(f.minimal, witnesses, title, f.explanation), encoding="utf-8"
            )
            path.chmod(0o755)
            example = f"{f.occurrences[0].spec} on {f.occurrences[0].vocab}"
            (directory / f"{f.id}.md").write_text(
                f"# {f.id}\n\n{markdown_text(f.explanation)}\n\nRepro: `python {f.id}.py` "
                f"(occurrences: {len(f.occurrences)}, e.g. {markdown_text(example)}).\n",
                encoding="utf-8",
            )
            f.repro = path.name
            if run:
                f.reproduces, f.repro_output = repro.run(path)

    def bugs(self) -> list[Bug]:
        """The findings grouped into bugs, most witnesses first."""
        grouped: dict[tuple[str, str, str], Bug] = {}
        for f in self.findings.values():
            key = bug_key(f)
            bug = grouped.get(key)
            if bug is None:
                bug = grouped[key] = Bug(
                    _finding_id(f.engine, f.rule, key), f.engine, f.version, f.rule, key[2]
                )
            bug.findings.append(f)
        return sorted(grouped.values(), key=lambda b: (b.engine, -len(b.witnesses())))

    def summary(self) -> list[dict[str, Any]]:
        """Per engine: states compared, disagreeing states by verdict, distinct bugs and
        findings."""
        engines = sorted({e for e, _ in self.states} | set(self.bug_states))
        bugs = self.bugs()
        out = []
        for e in engines:
            policies = {r: n for (en, r), n in self.policy_counts.items() if en == e}
            found = [f for f in self.findings.values() if f.engine == e]
            out.append(
                {
                    "engine": e,
                    "states": sum(n for (en, _), n in self.states.items() if en == e),
                    "steps": sum(n for (en, _), n in self.steps.items() if en == e),
                    "protocol_walks": sum(
                        n for (en, _), n in self.protocol_walks.items() if en == e
                    ),
                    "protocol_ops": sum(n for (en, _), n in self.protocol_ops.items() if en == e),
                    "protocol_bugs": sum(
                        1 for b in bugs if b.engine == e and b.signature in PROTOCOL_RULES
                    ),
                    "policy_states": sum(policies.values()),
                    "policies": ", ".join(f"{r} {n}" for r, n in sorted(policies.items())),
                    "bug_states": self.bug_states.get(e, 0),
                    "bugs": sum(1 for b in bugs if b.engine == e),
                    "findings": len(found),
                    "minimized": sum(1 for f in found if f.minimal is not None),
                    "reproducing": sum(1 for f in found if f.reproduces),
                }
            )
        return out
