"""What a bench report is made from: a run's cells, preparations and sessions read from the
store (`RunData`), and the per-(engine, vocabulary) figures every table and the console
summary show (`Summary`), and the run's sessions added up (`SessionTotals`).

Definitions (`harness.frames.groups`, the one place they are computed): percentiles are
by nearest rank over the `ok` cells; mask latency pools every timed step of every `ok`
cell; memory is `CellMetrics.memory` (the engine's own figure, else the worker's
resident-set growth), and a summary's memory kind is "engine" or "rss" when all its
cells agree, else "mixed".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.figures import percentile
from harness.frames import cells_of, engine_summary, steps_of
from harness.results.status import FAILED, STATUSES
from harness.store import Cell, Preparation, Run, Session, Store


@dataclass
class RunData:
    """One run as stored. Engines and vocabularies in the run's option order, then any
    others its cells hold, sorted."""

    run: Run
    cells: list[Cell]
    preparations: list[Preparation]
    sessions: list[Session]

    @property
    def options(self) -> dict:
        return self.run.meta.get("options", {})

    @property
    def engines(self) -> list[str]:
        order = list(self.options.get("engines", []))
        seen = {c.engine for c in self.cells}
        return [e for e in order if e in seen] + sorted(seen - set(order))

    @property
    def vocabs(self) -> list[str]:
        order = list(self.options.get("vocabs", []))
        seen = {c.vocab for c in self.main}
        return [v for v in order if v in seen] + sorted(seen - set(order))

    @property
    def main(self) -> list[Cell]:
        return [c for c in self.cells if c.study == "main"]

    @property
    def scaling(self) -> list[Cell]:
        return [c for c in self.cells if c.study == "scaling"]

    @property
    def batch(self) -> list[Cell]:
        """The batch cells (`bench --batch`, `harness.bench.batch`)."""
        return [c for c in self.cells if c.study == "batch"]


def load(store: Store, name: str) -> RunData:
    """Run `name` of `store` (UnknownName when there is none)."""
    run = store.run(name)
    return RunData(run, store.cells(name), store.preparations(name), store.sessions(name))


@dataclass(frozen=True)
class SessionTotals:
    """The run's sessions added up: wall time, the distinct `jobs` settings, how many
    were killed (their controller died while they ran)."""

    count: int
    wall_s: float
    jobs: list[int]
    killed: int

    @staticmethod
    def of(sessions: Sequence[Session]) -> SessionTotals:
        return SessionTotals(
            count=len(sessions),
            wall_s=sum(s.wall_s for s in sessions),
            jobs=sorted({s.jobs for s in sessions}),
            killed=sum(1 for s in sessions if s.killed),
        )

    @property
    def jobs_text(self) -> str:
        """The cells measured at once, per session setting: "1", "4" or "1/4"."""
        return "/".join(map(str, self.jobs)) or "1"


def ok(cells: Iterable[Cell]) -> list[Cell]:
    return [c for c in cells if c.status == "ok"]


def known(values: Iterable[float | None]) -> list[float]:
    """The values that were measured (not None)."""
    return [v for v in values if v is not None]


def p(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile `q` of `values`; None when there are none."""
    return percentile(values, q) if values else None


def fills(cells: Iterable[Cell]) -> list[int]:
    """Every timed mask fill of the cells, pooled."""
    return [v for c in cells for v in c.metrics.fill_ns]


@dataclass
class Summary:
    """One engine on one vocabulary (see the module's definitions)."""

    engine: str
    vocab: str
    specs: int
    counts: dict[str, int]
    compile_p50: float | None
    compile_p99: float | None
    ttfm_p50: float | None
    mask: dict[str, float]
    advance_p50: float | None
    memory: float | None
    memory_kind: str
    states_p50: float | None
    truncated: int
    refused_paths: int

    @property
    def failed(self) -> int:
        return sum(self.counts.get(s, 0) for s in FAILED)


def summaries(data: RunData, cells: Sequence[Cell] | None = None) -> list[Summary]:
    """One summary per (engine, vocabulary) of `cells` (default: the main study), by
    vocabulary then engine, in run order: `harness.frames.engine_summary` of their
    frames, the one definition a notebook computes too."""
    cells = data.main if cells is None else cells
    frame = engine_summary(cells_of(cells), steps_of(cells))
    return [
        _summary(e, v, frame.loc[(e, v)])
        for v in data.vocabs
        for e in data.engines
        if (e, v) in frame.index
    ]


def _known(value: object) -> float | None:
    """A figure of the summary frame as Python has it (an int stays an int), None where
    it is missing (NaN in the frame)."""
    if value is None or pd.isna(value):
        return None
    return value.item() if isinstance(value, np.generic) else value  # type: ignore[return-value]


def _summary(engine: str, vocab: str, row: pd.Series) -> Summary:
    return Summary(
        engine=engine,
        vocab=vocab,
        specs=int(row["specs"]),
        counts={s: int(row[s]) for s in STATUSES},
        compile_p50=_known(row["compile_p50"]),
        compile_p99=_known(row["compile_p99"]),
        ttfm_p50=_known(row["ttfm_p50"]),
        mask=row["mask"],
        advance_p50=_known(row["advance_p50"]),
        memory=_known(row["memory"]),
        memory_kind=str(row["memory_kind"]),
        states_p50=_known(row["states_p50"]),
        truncated=int(row["truncated"]),
        refused_paths=int(row["refused_paths"]),
    )
