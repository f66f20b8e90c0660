"""The database file itself: its tables (created, or brought up to date, on first write),
opening it without writing anything, and SQLite's failures as one-line project errors,
told apart by SQLite's error code (never its message): a full disk or a read-only
directory is an EnvironmentFailure (exit 1), a file that is not a database is BadInput
naming it and saying to move it aside (exit 2)."""

from __future__ import annotations

import sqlite3
import urllib.parse
from pathlib import Path

from harness.errors import BadInput, EnvironmentFailure
from harness.results.status import STATUSES
from harness.store.kinds import RunKind

# kind -> (its runs table, its cells table); the only place table names come from.
TABLES: dict[RunKind, tuple[str, str]] = {
    RunKind.BENCH: ("runs", "cells"),
    RunKind.DIFF: ("diff_runs", "diff_cells"),
    RunKind.JUMPFORWARD: ("jumpforward_runs", "jumpforward_cells"),
}

SCHEMA = f"""
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
    status TEXT NOT NULL CHECK (status IN ({", ".join(f"'{s}'" for s in STATUSES)})),
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
CREATE TABLE IF NOT EXISTS sessions (
    run TEXT NOT NULL,
    kind TEXT NOT NULL,
    number INTEGER NOT NULL,
    started REAL NOT NULL,
    updated REAL NOT NULL,
    finished REAL,
    status TEXT NOT NULL,
    reason TEXT,
    jobs INTEGER NOT NULL,
    pid INTEGER NOT NULL,
    PRIMARY KEY (run, kind, number)
);
"""


def _outcome_tables(kind: RunKind) -> str:
    """The tables of a kind whose cells are stored whole, as one JSON outcome per (spec,
    vocabulary): diff and jump-forward, alike but for their names (from TABLES)."""
    runs, cells = TABLES[kind]
    return f"""
CREATE TABLE IF NOT EXISTS {runs} (
    run TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    meta TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {cells} (
    run TEXT NOT NULL REFERENCES {runs}(run),
    spec_id TEXT NOT NULL,
    vocab TEXT NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT NOT NULL,
    session INTEGER,
    finished TEXT NOT NULL,
    PRIMARY KEY (run, spec_id, vocab)
);
"""


SCHEMA += _outcome_tables(RunKind.DIFF) + _outcome_tables(RunKind.JUMPFORWARD)


def create(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(SCHEMA)
    columns = {row[1] for row in db.execute("PRAGMA table_info(cells)")}
    if "session" not in columns:  # a database written before sessions had their table
        db.execute("ALTER TABLE cells ADD COLUMN session INTEGER")
    db.commit()


def open_readonly(path: Path) -> sqlite3.Connection:
    """`path` opened without writing anything: `mode=ro`, or where that cannot work (a
    WAL database on a read-only medium, which cannot create its shared-memory file)
    `immutable=1`. BadInput when there is no database, or it is not one."""
    if not path.is_file():
        raise BadInput(f"no results database at {path}; run `tokensieve bench` first")
    uri = "file:" + urllib.parse.quote(str(path.resolve()))
    last: sqlite3.Error | None = None
    for mode in ("mode=ro", "immutable=1"):
        try:
            db = sqlite3.connect(f"{uri}?{mode}", uri=True)
            db.execute("SELECT COUNT(*) FROM runs").fetchone()
            return db
        except sqlite3.Error as exc:
            last = exc
            if getattr(exc, "sqlite_errorcode", None) in (
                sqlite3.SQLITE_NOTADB,
                sqlite3.SQLITE_CORRUPT,
            ):
                break
    assert last is not None
    raise failure(path, last)


def failure(path: Path, exc: sqlite3.Error) -> Exception:
    """The project's error for a SQLite failure on `path`, by SQLite's (primary) code."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    what = " ".join(str(exc).split())
    if code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
        return BadInput(
            f"results database {path} is damaged ({what}); move it aside "
            f"(mv {path} {path}.damaged) and run again"
        )
    if code == sqlite3.SQLITE_FULL:
        return EnvironmentFailure(f"disk full writing {path} ({what}); results so far are kept")
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM):
        return EnvironmentFailure(
            f"cannot write the results database {path} ({what}); pass --reports-dir DIR "
            "to write elsewhere"
        )
    if code == sqlite3.SQLITE_IOERR:
        return EnvironmentFailure(f"I/O error on {path} ({what})")
    return EnvironmentFailure(f"results database {path}: {what}")
