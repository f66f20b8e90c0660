"""What `tokensieve check` finds, per spec and engine: typed, with the one rule that turns
a result into an outcome a user's CI can fail on.

A spec's verdict names the fastest correct engine by time to first mask only when it is
beyond noise: the next correct engine's TTFM is at least `CLEAR_RATIO` (1.25) times its
own. A TTFM is one shot per cell (compile, the median of up to 5 samples when fast, then
the first matcher and its first fill), so the cell measures no spread of it (its fills'
spread is that of the masks after, not of the TTFM); the margin is then the one
`tokensieve compare` uses for one cell's figure by default, and the one the report's
verdict asks of each spec's cells (`harness.report.verdict.CLEAR_RATIO`, kept equal by
tests). Correct engines within the margin of the fastest tie and are named together.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from harness.bench.batch_summary import BatchRow, verdict

# Outcomes, worst first where one result has several (a crash hides everything else).
OUTCOMES = ("crash", "oom", "timeout", "error", "bug", "unsupported", "ok")
DEFAULT_FAIL_ON = ("bug", "error", "timeout", "oom", "crash")
# How many times the fastest correct engine's TTFM the next one's must be (module doc).
CLEAR_RATIO = 1.25


@dataclass
class Finding:
    """A bug the differ found for this engine on this spec, with its standalone repro."""

    id: str
    signature: str
    explanation: str
    repro: str | None  # path of the repro script, when one was written
    reproduces: bool | None


@dataclass
class InstanceTally:
    """The engine (or, for regex-only engines, the reference over the converter's regex)
    on the spec's labelled and sampled instances."""

    valid: int = 0
    invalid: int = 0
    samples: int = 0
    false_rejections: int = 0
    false_acceptances: int = 0
    invalid_outputs: int = 0

    @property
    def failures(self) -> int:
        return self.false_rejections + self.false_acceptances + self.invalid_outputs


@dataclass
class EngineResult:
    engine: str
    status: str  # the bench cell's: ok, unsupported, error, timeout, oom, crash
    message: str | None = None
    version: str | None = None
    compile_ns: int | None = None
    ttfm_ns: int | None = None
    mask_p50_ns: float | None = None
    mask_p99_ns: float | None = None
    memory_bytes: float | None = None
    memory_kind: str = ""
    states: int = 0  # states whose masks were compared with the reference
    policy_states: int = 0
    bug_states: int = 0
    diff_note: str | None = None  # why masks were not compared, when they were not
    findings: list[Finding] = field(default_factory=list)
    instances: InstanceTally | None = None

    @property
    def outcome(self) -> str:
        """ok, unsupported, bug (a mask or instance disagreement triaged as a bug), or the
        failure status of the cell."""
        if self.status != "ok":
            return self.status
        failures = self.instances.failures if self.instances else 0
        return "bug" if self.bug_states or failures or self.findings else "ok"

    @property
    def checked(self) -> bool:
        """Whether the diff held this engine to the reference at all: masks compared at
        some state, or instances judged. A diff cell that timed out or failed checks
        nothing, and an engine it did not check is never called correct."""
        judged = self.instances is not None and (
            self.instances.valid + self.instances.invalid + self.instances.samples > 0
        )
        return self.states > 0 or judged

    @property
    def correct(self) -> bool:
        return self.outcome == "ok" and self.checked


@dataclass
class SpecResult:
    spec_id: str
    kind: str
    source: str
    engines: list[EngineResult] = field(default_factory=list)

    def _correct_by_speed(self) -> list[EngineResult]:
        """The correct engines with a time to first mask, shortest first (ties: mask p50)."""
        correct = [e for e in self.engines if e.correct and e.ttfm_ns is not None]
        return sorted(correct, key=lambda e: (e.ttfm_ns or 0, e.mask_p50_ns or 0))

    @property
    def fastest_correct(self) -> EngineResult | None:
        """The correct engine with the shortest time to first mask (ties: mask p50)."""
        correct = self._correct_by_speed()
        return correct[0] if correct else None

    @property
    def tied_fastest(self) -> list[EngineResult]:
        """The fastest correct engine and every correct engine that ties with it: a time
        to first mask under `CLEAR_RATIO` times its own (the module's rule); fastest
        first, empty without a correct engine."""
        correct = self._correct_by_speed()
        if not correct:
            return []
        limit = (correct[0].ttfm_ns or 0) * CLEAR_RATIO
        return correct[:1] + [e for e in correct[1:] if (e.ttfm_ns or 0) < limit]

    def _fastest(self) -> str:
        tied = [e.engine for e in self.tied_fastest]
        if not tied:
            unchecked = [e for e in self.engines if e.outcome == "ok" and not e.checked]
            if unchecked:
                why = unchecked[0].diff_note or "not compared"
                return f"no engine checked against the reference ({why})"
            return "no correct engine"
        if len(tied) == 1:
            return f"fastest correct: {tied[0]}"
        names = ", ".join(tied[:-1]) + " and " + tied[-1]
        return f"fastest correct: tie of {names} (time to first mask within {CLEAR_RATIO}x)"

    @property
    def verdict(self) -> str:
        """The fastest correct engine (or the engines tied for it), then the engines that
        were wrong and those that failed."""
        wrong = [e.engine for e in self.engines if e.outcome == "bug"]
        failed = [e.engine for e in self.engines if e.outcome not in ("ok", "bug", "unsupported")]
        parts = [self._fastest()]
        if wrong:
            parts.append(f"wrong: {', '.join(wrong)}")
        if failed:
            parts.append(f"failed: {', '.join(failed)}")
        return f"{self.spec_id}: " + "; ".join(parts)


@dataclass
class CheckResult:
    vocab: str
    run: str
    reports_dir: str
    specs: list[SpecResult] = field(default_factory=list)
    # engines asked for that could not run here -> why (with the command that installs
    # an engine whose package is absent)
    unavailable: dict[str, str] = field(default_factory=dict)
    # batch steps (`check --batch`): one row per (engine, threads, batch size), and the
    # step budget their verdict reads them against
    batches: list[BatchRow] = field(default_factory=list)
    step_budget_ms: float = 10.0

    def batch_verdict(self) -> str:
        """How many sequences each engine serves within the step budget ("" without
        batch cells)."""
        return verdict(self.batches, self.step_budget_ms) if self.batches else ""

    def outcomes(self) -> list[tuple[str, str, str]]:
        """(spec id, engine, outcome) for every result."""
        return [(s.spec_id, e.engine, e.outcome) for s in self.specs for e in s.engines]

    def failing(self, fail_on: tuple[str, ...]) -> list[tuple[str, str, str]]:
        return [o for o in self.outcomes() if o[2] in fail_on]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["batch_verdict"] = self.batch_verdict()
        for spec_out, spec in zip(out["specs"], self.specs, strict=True):
            spec_out["verdict"] = spec.verdict
            for engine_out, engine in zip(spec_out["engines"], spec.engines, strict=True):
                engine_out["outcome"] = engine.outcome
        return out
