"""The results store: one SQLite database per reports directory, written as each cell
finishes (`db`), owned by one controller per run at a time (`lock`), readable while
written and from read-only media, its failures one line each (`sqlite`), its rows typed
(`rows`)."""

from harness.store.db import DEFAULT_PATH, REPORTS_DIR, Store, check_run_name, opened
from harness.store.lock import RunLock
from harness.store.rows import Cell, DiffCell, Preparation, Run, Session

__all__ = [
    "DEFAULT_PATH",
    "REPORTS_DIR",
    "Cell",
    "DiffCell",
    "Preparation",
    "Run",
    "RunLock",
    "Session",
    "Store",
    "check_run_name",
    "opened",
]
