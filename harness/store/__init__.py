"""The results store: one SQLite database per reports directory, written as each cell
finishes (`db`), its tables per kind of run (`kinds.RunKind`: bench, diff, jump-forward;
callers name the kind, never a table), a run's typed metadata (`meta.RunMeta`), the life
of a run the same for every kind (`session.RunSession`: its lock, created or resumed,
sessions and how each ended, SIGTERM as an interruption), one controller per run at a
time (`lock`), readable while written and from read-only media, its failures one line
each (`sqlite`), its rows typed (`rows`)."""

from harness.store.db import DEFAULT_PATH, REPORTS_DIR, Store, check_run_name, opened
from harness.store.kinds import RunKind
from harness.store.lock import RunLock
from harness.store.meta import RunMeta
from harness.store.rows import Cell, OutcomeCell, Preparation, Run, Session
from harness.store.session import RunSession, pick_name

__all__ = [
    "DEFAULT_PATH",
    "REPORTS_DIR",
    "Cell",
    "OutcomeCell",
    "Preparation",
    "Run",
    "RunKind",
    "RunLock",
    "RunMeta",
    "RunSession",
    "Session",
    "Store",
    "check_run_name",
    "opened",
    "pick_name",
]
