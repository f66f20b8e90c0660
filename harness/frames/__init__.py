"""Results as pandas DataFrames: the public API for notebooks and `tokensieve export`,
and the one definition of the groupings the report, the console summary, `compare` and
the gate compute.

- `tables`: `runs(reports_dir)` (every run of every kind), `cells(reports_dir, run)`
  (one row per bench cell: keys, release, corpus set, spec features, status, timings,
  memory, states, host, session), `steps(reports_dir, run)` (one row per timed fill or
  advance); `cells_of` and `steps_of` build them from cells already read;
- `diffs`: `findings(reports_dir, run)` and `bugs(reports_dir, run)`, from the run's
  `diff.json`;
- `groups`: `percentile` (nearest rank: numpy's `inverted_cdf`), `pooled`,
  `geometric_mean` and `engine_summary`, the per-engine figures of every page;
- `export`: `export(reports_dir, run, table, fmt, out)`, `tokensieve export`.

It sits above the controllers (it reads their stored rows and the differ's records) and
below `report` in the layers of `.importlinter`.
"""

from harness.frames.diffs import bugs, findings
from harness.frames.export import FORMATS, TABLES, export
from harness.frames.groups import engine_summary, geometric_mean, percentile, pooled
from harness.frames.tables import cells, cells_of, runs, steps, steps_of

__all__ = [
    "FORMATS",
    "TABLES",
    "bugs",
    "cells",
    "cells_of",
    "engine_summary",
    "export",
    "findings",
    "geometric_mean",
    "percentile",
    "pooled",
    "runs",
    "steps",
    "steps_of",
]
