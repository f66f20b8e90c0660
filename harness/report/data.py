"""What a bench report is made from: a run's cells, preparations and sessions read from the
store (`RunData`), and the per-(engine, vocabulary) figures every table and the console
summary show (`Summary`), and the run's sessions added up (`SessionTotals`).

Definitions: percentiles are by nearest rank over the `ok` cells; mask latency pools
every timed step of every `ok` cell; memory is `CellMetrics.memory` (the engine's own
figure, else the worker's resident-set growth), and a summary's memory kind is "engine"
or "rss" when all its cells agree, else "mixed".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.figures import percentile, summarize
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


def summarize_cells(engine: str, vocab: str, cells: Sequence[Cell]) -> Summary:
    good = ok(cells)
    memories = [c.metrics.memory for c in good]
    measured = [(m, kind) for m, kind in memories if m is not None]
    kinds = {kind for _, kind in measured}
    compiles = known(c.metrics.compile_ns for c in good)
    return Summary(
        engine=engine,
        vocab=vocab,
        specs=len(cells),
        counts={s: sum(1 for c in cells if c.status == s) for s in STATUSES},
        compile_p50=p(compiles, 0.5),
        compile_p99=p(compiles, 0.99),
        ttfm_p50=p(known(c.metrics.ttfm_ns for c in good), 0.5),
        mask=summarize(fills(good)),
        advance_p50=p([v for c in good for v in c.metrics.advance_ns], 0.5),
        memory=p([m for m, _ in measured], 0.5),
        memory_kind="engine" if kinds == {"engine"} else "rss" if kinds == {"rss"} else "mixed",
        states_p50=p(known(c.metrics.num_states for c in good), 0.5),
        truncated=sum(1 for c in good if c.metrics.truncated),
        refused_paths=sum(int(c.metrics.refused_paths or 0) for c in good),
    )


def summaries(data: RunData, cells: Sequence[Cell] | None = None) -> list[Summary]:
    """One summary per (engine, vocabulary) of `cells` (default: the main study), by
    vocabulary then engine, in run order."""
    cells = data.main if cells is None else cells
    by_key: dict[tuple[str, str], list[Cell]] = defaultdict(list)
    for c in cells:
        by_key[(c.engine, c.vocab)].append(c)
    return [
        summarize_cells(e, v, by_key[(e, v)])
        for v in data.vocabs
        for e in data.engines
        if (e, v) in by_key
    ]
