"""What `tokensieve check` finds, per spec and engine: typed, with the one rule that turns
a result into an outcome a user's CI can fail on."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Outcomes, worst first where one result has several (a crash hides everything else).
OUTCOMES = ("crash", "oom", "timeout", "error", "bug", "unsupported", "ok")
DEFAULT_FAIL_ON = ("bug", "error", "timeout", "oom", "crash")


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
    def correct(self) -> bool:
        return self.outcome == "ok"


@dataclass
class SpecResult:
    spec_id: str
    kind: str
    source: str
    engines: list[EngineResult] = field(default_factory=list)

    @property
    def fastest_correct(self) -> EngineResult | None:
        """The correct engine with the shortest time to first mask (ties: mask p50)."""
        correct = [e for e in self.engines if e.correct and e.ttfm_ns is not None]
        if not correct:
            return None
        return min(correct, key=lambda e: (e.ttfm_ns or 0, e.mask_p50_ns or 0))

    @property
    def verdict(self) -> str:
        best = self.fastest_correct
        wrong = [e.engine for e in self.engines if e.outcome == "bug"]
        failed = [e.engine for e in self.engines if e.outcome not in ("ok", "bug", "unsupported")]
        parts = [f"fastest correct: {best.engine}" if best else "no correct engine"]
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

    def outcomes(self) -> list[tuple[str, str, str]]:
        """(spec id, engine, outcome) for every result."""
        return [(s.spec_id, e.engine, e.outcome) for s in self.specs for e in s.engines]

    def failing(self, fail_on: tuple[str, ...]) -> list[tuple[str, str, str]]:
        return [o for o in self.outcomes() if o[2] in fail_on]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for spec_out, spec in zip(out["specs"], self.specs, strict=True):
            spec_out["verdict"] = spec.verdict
            for engine_out, engine in zip(spec_out["engines"], spec.engines, strict=True):
                engine_out["outcome"] = engine.outcome
        return out
