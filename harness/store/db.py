"""The results database: one SQLite file under `reports/`, written as each cell finishes.

Tables:
- `runs`: one row per run, its metadata as JSON (options, machine, commit, engine
  versions, sessions with their wall time and number of parallel workers).
- `cells`: one row per (run, engine, spec_id, vocab) with its status, message and metrics
  JSON. A cell is inserted once: inserting it again is an error, so a resumed run can
  never measure a cell twice without it showing.
- `preparations`: each worker's vocabulary preparation (a worker prepares once and then
  measures many cells; a worker restarted after a crash prepares again).

Only the controller writes (workers report over pipes); WAL mode lets `tokensieve report`
read a run while it is still being written. Every insert is committed at once, so a
killed controller loses nothing that had finished.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.corpus import PROJECT_ROOT
from harness.errors import UnknownName

REPORTS_DIR = PROJECT_ROOT / "reports"
DEFAULT_PATH = REPORTS_DIR / "results.sqlite"

STATUSES = ("ok", "unsupported", "error", "timeout", "oom", "crash")
FAILED = frozenset({"error", "timeout", "oom", "crash"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    meta TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cells (
    run TEXT NOT NULL REFERENCES runs(run),
    engine TEXT NOT NULL,
    spec_id TEXT NOT NULL,
    vocab TEXT NOT NULL,
    study TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok','unsupported','error','timeout','oom','crash')),
    message TEXT,
    metrics TEXT NOT NULL,
    finished TEXT NOT NULL,
    PRIMARY KEY (run, engine, spec_id, vocab)
);
CREATE TABLE IF NOT EXISTS preparations (
    run TEXT NOT NULL REFERENCES runs(run),
    engine TEXT NOT NULL,
    vocab TEXT NOT NULL,
    status TEXT NOT NULL,
    message TEXT,
    metrics TEXT NOT NULL,
    finished TEXT NOT NULL
);
"""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Cell:
    run: str
    engine: str
    spec_id: str
    vocab: str
    study: str  # "main" or "scaling"
    status: str
    message: str | None
    metrics: dict[str, Any]
    finished: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.engine, self.spec_id, self.vocab)


@dataclass(frozen=True)
class Preparation:
    engine: str
    vocab: str
    status: str
    message: str | None
    metrics: dict[str, Any]
    finished: str


@dataclass(frozen=True)
class Run:
    name: str
    created: str
    meta: dict[str, Any]


class Store:
    """The database at `path` (created with its tables on first use)."""

    def __init__(self, path: str | Path = DEFAULT_PATH) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- runs ----------------------------------------------------------------------------

    def create_run(self, name: str, meta: dict[str, Any]) -> Run:
        created = now()
        self._db.execute(
            "INSERT INTO runs (run, created, meta) VALUES (?, ?, ?)",
            (name, created, json.dumps(meta)),
        )
        self._db.commit()
        return Run(name, created, meta)

    def find_run(self, name: str) -> Run | None:
        row = self._db.execute(
            "SELECT run, created, meta FROM runs WHERE run = ?", (name,)
        ).fetchone()
        return None if row is None else Run(row[0], row[1], json.loads(row[2]))

    def run(self, name: str) -> Run:
        """The run called `name`; UnknownName listing the recorded runs otherwise."""
        found = self.find_run(name)
        if found is None:
            raise UnknownName(f"run (in {self.path})", name, [r.name for r in self.runs()])
        return found

    def runs(self) -> list[Run]:
        rows = self._db.execute("SELECT run, created, meta FROM runs ORDER BY created, run")
        return [Run(r[0], r[1], json.loads(r[2])) for r in rows]

    def update_meta(self, name: str, meta: dict[str, Any]) -> None:
        self._db.execute("UPDATE runs SET meta = ? WHERE run = ?", (json.dumps(meta), name))
        self._db.commit()

    # --- cells ---------------------------------------------------------------------------

    def add_cell(
        self,
        run: str,
        engine: str,
        spec_id: str,
        vocab: str,
        study: str,
        status: str,
        message: str | None,
        metrics: dict[str, Any],
    ) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown cell status {status!r}; known: {', '.join(STATUSES)}")
        self._db.execute(
            "INSERT INTO cells (run, engine, spec_id, vocab, study, status, message, metrics,"
            " finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run, engine, spec_id, vocab, study, status, message, json.dumps(metrics), now()),
        )
        self._db.commit()

    def finished_keys(self, run: str) -> set[tuple[str, str, str]]:
        rows = self._db.execute("SELECT engine, spec_id, vocab FROM cells WHERE run = ?", (run,))
        return {(r[0], r[1], r[2]) for r in rows}

    def cells(self, run: str) -> list[Cell]:
        return list(self._iter_cells(run))

    def _iter_cells(self, run: str) -> Iterator[Cell]:
        rows = self._db.execute(
            "SELECT engine, spec_id, vocab, study, status, message, metrics, finished"
            " FROM cells WHERE run = ? ORDER BY rowid",
            (run,),
        )
        for r in rows:
            yield Cell(run, r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7])

    # --- preparations --------------------------------------------------------------------

    def add_preparation(
        self,
        run: str,
        engine: str,
        vocab: str,
        status: str,
        message: str | None,
        metrics: dict[str, Any],
    ) -> None:
        self._db.execute(
            "INSERT INTO preparations (run, engine, vocab, status, message, metrics, finished)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run, engine, vocab, status, message, json.dumps(metrics), now()),
        )
        self._db.commit()

    def preparations(self, run: str) -> list[Preparation]:
        rows = self._db.execute(
            "SELECT engine, vocab, status, message, metrics, finished FROM preparations"
            " WHERE run = ? ORDER BY rowid",
            (run,),
        )
        return [Preparation(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows]
