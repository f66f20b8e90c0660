"""Results: what store, bench, diff, check, jump-forward and report share about a unit of
work, typed once so that the worker that records it and the page that shows it cannot
drift apart on a key.

- `status`: `Status`, the one vocabulary for how a unit ended (ok, unsupported, error,
  timeout, oom, crash), and `FAILED`, the statuses that are failures;
- `metrics`: what a bench cell (`CellMetrics`, `CellResult`) and a vocabulary's
  preparation (`PrepareMetrics`) record, with their JSON forms;
- `provenance`: where and on what a run was measured (`git_commit`, `machine`).

A leaf above `errors` and `figures`: it imports no other layer of the harness.
"""

from harness.results.metrics import CellMetrics, CellResult, PrepareMetrics
from harness.results.provenance import git_commit, machine
from harness.results.status import FAILED, STATUSES, Status

__all__ = [
    "FAILED",
    "STATUSES",
    "CellMetrics",
    "CellResult",
    "PrepareMetrics",
    "Status",
    "git_commit",
    "machine",
]
