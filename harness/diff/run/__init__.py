"""Stage *run* of the differ: how cells are planned, executed and kept.

- `controller`: `DiffOptions`, `DiffRun` (one run: its cells, in the results store as
  they finish, resumable; findings and repros written at the end);
- `protocol`: the typed worker protocol (`DiffSetup`, `CellRequest`, `CellOutcome`,
  `CellItem`, `CellReply`, `StoredCell`), JSON across processes and in the store;
- `service`: `DiffService`, the worker side (one part of a cell per request:
  the reference's checks, one engine's walk, one dialect, instance checks);
- `cell`: `run_cell`, one cell's parts asked of a worker (here or on a Dask worker).
"""

from harness.diff.run import cell, controller, protocol, service

__all__ = ["cell", "controller", "protocol", "service"]
