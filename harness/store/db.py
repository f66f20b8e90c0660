"""The results database: one SQLite file (`reports/results.sqlite` by default), written as
each cell finishes.

Tables, per kind of run (`RunKind`; callers name the kind, never a table):
- `runs` / `diff_runs` / `jumpforward_runs`: one row per bench / diff / jump-forward run,
  its metadata as JSON (`RunMeta`: options, machine, commit, engine versions, spec ids).
- `sessions`: each time a controller worked on a run (`kind` bench, diff or jumpforward):
  when, how many cells at once, how it ended (`running` while it works, then `complete`,
  `interrupted` or `failed` with the reason). How many cells a session measured is never
  stored: it is counted from the cells, so a killed session still shows what it did.
- `cells`: one row per (run, engine, spec_id, vocab) with its status, message, metrics
  JSON and session. A cell is inserted once: inserting it again is an error, so a
  resumed run can never measure a cell twice without it showing.
- `preparations`: each worker's vocabulary preparation.
- `diff_cells` / `jumpforward_cells`: one row per (run, spec_id, vocab) of a diff / a
  jump-forward run, with the cell's whole outcome as JSON, so `--resume` rebuilds the
  findings (the figures) of the cells already done. Inserted once, like `cells`.

Only a controller writes, and one at a time per run (`lock`, a `flock` that dies with its
holder; `harness.store.session` holds it for a run's whole life); WAL mode lets
`tokensieve report` read a run while it is being written. Every insert is committed at
once, so a killed controller loses nothing that had finished. `report` and `compare` open
the file read-only, so they work on read-only media.

SQLite's failures become one-line project errors (`harness.store.sqlite`); the rows come
back typed (`harness.store.rows`).
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from harness.errors import BadInput, EnvironmentFailure, UnknownName
from harness.project import PROJECT_ROOT
from harness.results.metrics import CellMetrics, CellResult, PrepareMetrics
from harness.store.kinds import RunKind
from harness.store.lock import RunLock
from harness.store.meta import RunMeta
from harness.store.rows import Cell, OutcomeCell, Preparation, Run, Session
from harness.store.sqlite import TABLES, create, failure, open_readonly

REPORTS_DIR = PROJECT_ROOT / "reports"
DEFAULT_PATH = REPORTS_DIR / "results.sqlite"
RUN_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$")

T = TypeVar("T")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_run_name(name: str) -> str:
    """`name` if it is a valid run name (letters, digits, `._-`, no leading dot, at most
    128 characters: it becomes a directory name), else BadInput."""
    if not RUN_NAME.match(name):
        raise BadInput(
            f"run name {name!r} is not allowed: use letters, digits, '.', '_' and '-' "
            "(not starting with '.'), at most 128 characters"
        )
    return name


class Store:
    """The database at `path`: created with its tables on first use, or (`readonly`)
    opened for reading only, which never writes a byte (report, compare)."""

    def __init__(self, path: str | Path = DEFAULT_PATH, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        if self.readonly:
            return open_readonly(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EnvironmentFailure(
                f"cannot create {self.path.parent}: {exc.strerror}; pass --reports-dir DIR "
                "to write results elsewhere"
            ) from None
        db = self._guard(lambda: sqlite3.connect(self.path, timeout=30.0))
        self._guard(lambda: create(db))
        return db

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _guard(self, work: Callable[[], T]) -> T:
        """`work()`, with SQLite's failures turned into one-line project errors."""
        try:
            return work()
        except sqlite3.IntegrityError:
            raise  # a constraint broken by our own code (a cell stored twice): a bug
        except sqlite3.Error as exc:
            raise failure(self.path, exc) from None

    def _write(self, sql: str, args: tuple[Any, ...]) -> None:
        def go() -> None:
            self._db.execute(sql, args)
            self._db.commit()

        self._guard(go)

    def _rows(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._guard(lambda: self._db.execute(sql, args).fetchall())

    def _has(self, table: str, column: str | None = None) -> bool:
        """Whether `table` (and `column`) exist: a database written by an older
        tokensieve and opened read-only has not been given the newer ones."""
        columns = {r[1] for r in self._rows(f"PRAGMA table_info({table})", ())}
        return bool(columns) and (column is None or column in columns)

    # --- runs ----------------------------------------------------------------------------

    def lock(self, run: str, kind: RunKind = RunKind.BENCH) -> RunLock:
        """The lock that makes one controller the owner of `run` (see `RunLock`)."""
        check_run_name(run)
        return RunLock(self.path.parent / ".locks" / f"{RunKind(kind).value}-{run}.lock", run)

    def create_run(
        self, name: str, meta: RunMeta | Mapping[str, Any], kind: RunKind = RunKind.BENCH
    ) -> Run:
        """A new run of `kind` (IntegrityError if the name is taken: callers check first,
        holding the run's lock). `meta` as a mapping is stored as given."""
        check_run_name(name)
        data = meta.to_json() if isinstance(meta, RunMeta) else dict(meta)
        created = now()
        self._write(
            f"INSERT INTO {_runs(kind)} (run, created, meta) VALUES (?, ?, ?)",
            (name, created, json.dumps(data)),
        )
        return Run(name, created, data)

    def find_run(self, name: str, kind: RunKind = RunKind.BENCH) -> Run | None:
        if not self._has(_runs(kind)):
            return None
        rows = self._rows(f"SELECT run, created, meta FROM {_runs(kind)} WHERE run = ?", (name,))
        return None if not rows else Run(rows[0][0], rows[0][1], json.loads(rows[0][2]))

    def run(self, name: str, kind: RunKind = RunKind.BENCH) -> Run:
        """The run called `name`; UnknownName listing the recorded runs otherwise."""
        found = self.find_run(name, kind)
        if found is None:
            known = [r.name for r in self.runs(kind)]
            raise UnknownName(f"run (in {self.path})", name, known)
        return found

    def runs(self, kind: RunKind = RunKind.BENCH) -> list[Run]:
        """Every run of `kind`, oldest first."""
        if not self._has(_runs(kind)):
            return []
        rows = self._rows(f"SELECT run, created, meta FROM {_runs(kind)} ORDER BY created, run", ())
        return [Run(r[0], r[1], json.loads(r[2])) for r in rows]

    def update_meta(
        self, name: str, meta: RunMeta | Mapping[str, Any], kind: RunKind = RunKind.BENCH
    ) -> None:
        data = meta.to_json() if isinstance(meta, RunMeta) else dict(meta)
        self._write(f"UPDATE {_runs(kind)} SET meta = ? WHERE run = ?", (json.dumps(data), name))

    # --- sessions ------------------------------------------------------------------------

    def start_session(self, run: str, kind: RunKind, jobs: int, pid: int) -> int:
        """A new session of `run`, by a caller holding the run's lock: any earlier session
        still marked `running` lost its controller without saying how it ended (killed,
        or its disk was full), and is marked `killed`."""
        kind = RunKind(kind)
        self._write(
            "UPDATE sessions SET status = 'killed', reason = ? WHERE run = ? AND kind = ?"
            " AND status = 'running'",
            (
                "its controller ended without recording how (killed, or no disk space left)",
                run,
                kind.value,
            ),
        )
        rows = self._rows(
            "SELECT COALESCE(MAX(number), 0) FROM sessions WHERE run = ? AND kind = ?",
            (run, kind.value),
        )
        number = int(rows[0][0]) + 1
        stamp = time.time()
        self._write(
            "INSERT INTO sessions (run, kind, number, started, updated, finished, status,"
            " reason, jobs, pid) VALUES (?, ?, ?, ?, ?, NULL, 'running', NULL, ?, ?)",
            (run, kind.value, number, stamp, stamp, jobs, pid),
        )
        return number

    def touch_session(self, run: str, kind: RunKind, number: int) -> None:
        """Record that the session is still working (a killed one keeps its last touch)."""
        self._write(
            "UPDATE sessions SET updated = ? WHERE run = ? AND kind = ? AND number = ?",
            (time.time(), run, RunKind(kind).value, number),
        )

    def finish_session(
        self, run: str, kind: RunKind, number: int, status: str, reason: str | None = None
    ) -> None:
        stamp = time.time()
        self._write(
            "UPDATE sessions SET updated = ?, finished = ?, status = ?, reason = ?"
            " WHERE run = ? AND kind = ? AND number = ?",
            (stamp, stamp, status, reason, run, RunKind(kind).value, number),
        )

    def stored_in_session(self, run: str, kind: RunKind, number: int) -> int:
        """How many cells session `number` of `run` stored."""
        table = _cells(kind)
        if not self._has(table, "session"):
            return 0
        rows = self._rows(
            f"SELECT COUNT(*) FROM {table} WHERE run = ? AND session = ?", (run, number)
        )
        return int(rows[0][0])

    def sessions(self, run: str, kind: RunKind = RunKind.BENCH) -> list[Session]:
        """Every session of `run`, oldest first, with the cells each stored."""
        kind, table = RunKind(kind), _cells(kind)
        if not self._has("sessions") or not self._has(table, "session"):
            return []
        counts = dict(
            self._rows(
                f"SELECT session, COUNT(*) FROM {table} WHERE run = ? GROUP BY session", (run,)
            )
        )
        rows = self._rows(
            "SELECT number, started, updated, finished, status, reason, jobs, pid"
            " FROM sessions WHERE run = ? AND kind = ? ORDER BY number",
            (run, kind.value),
        )
        held = self.lock(run, kind).held_by() if rows and rows[-1][4] == "running" else None
        out = []
        for number, started, updated, finished, status, reason, jobs, pid in rows:
            killed = status == "killed" or (status == "running" and held != pid)
            out.append(
                Session(
                    number,
                    started,
                    updated,
                    finished,
                    status,
                    reason,
                    jobs,
                    pid,
                    int(counts.get(number, 0)),
                    killed,
                )
            )
        return out

    # --- cells ---------------------------------------------------------------------------

    def add_cell(
        self,
        run: str,
        key: tuple[str, str, str, str],
        result: CellResult,
        session: int | None = None,
    ) -> None:
        """Store the result of cell (engine, spec_id, vocab, study)."""
        engine, spec_id, vocab, study = key
        self._write(
            "INSERT INTO cells (run, engine, spec_id, vocab, study, status, message, metrics,"
            " finished, session) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run,
                engine,
                spec_id,
                vocab,
                study,
                result.status.value,
                result.message,
                json.dumps(result.metrics.to_json()),
                now(),
                session,
            ),
        )

    def finished_keys(self, run: str) -> set[tuple[str, str, str]]:
        rows = self._rows("SELECT engine, spec_id, vocab FROM cells WHERE run = ?", (run,))
        return {(r[0], r[1], r[2]) for r in rows}

    def cells(self, run: str) -> list[Cell]:
        return list(self._iter_cells(run))

    def _iter_cells(self, run: str) -> Iterator[Cell]:
        session = "session" if self._has("cells", "session") else "NULL"
        rows = self._rows(
            "SELECT engine, spec_id, vocab, study, status, message, metrics, finished,"
            f" {session} FROM cells WHERE run = ? ORDER BY rowid",
            (run,),
        )
        for r in rows:
            metrics = CellMetrics.from_json(json.loads(r[6]))
            yield Cell(run, r[0], r[1], r[2], r[3], r[4], r[5], metrics, r[7], r[8])

    # --- preparations --------------------------------------------------------------------

    def add_preparation(
        self,
        run: str,
        engine: str,
        vocab: str,
        status: str,
        message: str | None,
        metrics: PrepareMetrics,
    ) -> None:
        self._write(
            "INSERT INTO preparations (run, engine, vocab, status, message, metrics, finished)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run, engine, vocab, status, message, json.dumps(metrics.to_json()), now()),
        )

    def preparations(self, run: str) -> list[Preparation]:
        rows = self._rows(
            "SELECT engine, vocab, status, message, metrics, finished FROM preparations"
            " WHERE run = ? ORDER BY rowid",
            (run,),
        )
        return [
            Preparation(r[0], r[1], r[2], r[3], PrepareMetrics.from_json(json.loads(r[4])), r[5])
            for r in rows
        ]

    # --- cells stored whole (diff, jump-forward) -------------------------------------------

    def add_outcome_cell(
        self,
        kind: RunKind,
        run: str,
        key: tuple[str, str],
        status: str,
        outcome: dict[str, Any],
        session: int | None,
    ) -> None:
        """Store the outcome of cell (spec_id, vocab) of a diff or jump-forward run."""
        if RunKind(kind) is RunKind.BENCH:
            raise ValueError("a bench cell is stored with add_cell")
        spec_id, vocab = key
        self._write(
            f"INSERT INTO {_cells(kind)} (run, spec_id, vocab, status, outcome, session,"
            " finished) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run, spec_id, vocab, status, json.dumps(outcome), session, now()),
        )

    def outcome_cells(self, kind: RunKind, run: str) -> list[OutcomeCell]:
        """The cells of a diff or jump-forward run, in the order they were stored."""
        if RunKind(kind) is RunKind.BENCH:
            raise ValueError("bench cells are read with cells()")
        table = _cells(kind)
        if not self._has(table):
            return []
        rows = self._rows(
            f"SELECT spec_id, vocab, status, outcome, session, finished FROM {table}"
            " WHERE run = ? ORDER BY rowid",
            (run,),
        )
        return [OutcomeCell(r[0], r[1], r[2], json.loads(r[3]), r[4], r[5]) for r in rows]

    def add_diff_cell(
        self,
        run: str,
        spec_id: str,
        vocab: str,
        status: str,
        outcome: dict[str, Any],
        session: int | None,
    ) -> None:
        self.add_outcome_cell(RunKind.DIFF, run, (spec_id, vocab), status, outcome, session)

    def diff_cells(self, run: str) -> list[OutcomeCell]:
        return self.outcome_cells(RunKind.DIFF, run)


def _runs(kind: RunKind) -> str:
    """The runs table of `kind` (ValueError for anything that is not a RunKind's value)."""
    return TABLES[RunKind(kind)][0]


def _cells(kind: RunKind) -> str:
    return TABLES[RunKind(kind)][1]


@contextmanager
def opened(reports_dir: Path, *, readonly: bool = False, resuming: bool = False) -> Iterator[Store]:
    """The store of a reports directory, closed afterwards. `resuming`: the store must
    exist already (BadInput otherwise), so `--resume` with a mistyped directory never
    leaves a new directory and an empty database behind."""
    path = reports_dir / "results.sqlite"
    if resuming and not path.is_file():
        raise BadInput(f"--resume: no results database at {path}; nothing to resume")
    store = Store(reports_dir / "results.sqlite", readonly=readonly)
    try:
        yield store
    finally:
        store.close()
