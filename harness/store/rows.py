"""The rows the store hands back: runs, sessions, cells, preparations, and the cells
stored whole as their outcome (diff and jump-forward cells)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.results.metrics import CellMetrics, PrepareMetrics


@dataclass(frozen=True)
class Cell:
    run: str
    engine: str
    spec_id: str
    vocab: str
    study: str  # "main" or "scaling"
    status: str
    message: str | None
    metrics: CellMetrics
    finished: str
    session: int | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.engine, self.spec_id, self.vocab)


@dataclass(frozen=True)
class Preparation:
    engine: str
    vocab: str
    status: str
    message: str | None
    metrics: PrepareMetrics
    finished: str


@dataclass(frozen=True)
class Run:
    name: str
    created: str
    meta: dict[str, Any]


@dataclass(frozen=True)
class Session:
    """One controller's work on a run: `status` is running, complete, interrupted, failed
    (with `reason`) or killed (its controller ended without recording how; a session
    still `running` whose controller is gone is `killed` too). `measured` is counted from
    the cells it stored."""

    number: int
    started: float
    updated: float
    finished: float | None
    status: str
    reason: str | None
    jobs: int
    pid: int
    measured: int
    killed: bool

    @property
    def wall_s(self) -> float:
        return (self.finished or self.updated) - self.started


@dataclass(frozen=True)
class OutcomeCell:
    """A diff or jump-forward cell, one per (run, spec, vocabulary): its whole outcome as
    JSON, so a resumed run rebuilds what the cells already done found."""

    spec_id: str
    vocab: str
    status: str
    outcome: dict[str, Any]
    session: int | None
    finished: str
