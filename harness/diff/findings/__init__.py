"""Stage *findings* of the differ: what a run reports.

- `collector`: `Collector` (disagreements and instance failures into findings, findings
  into bugs), `Finding`, `Bug`;
- `records`: the records diff.json lists (`BugRecord`, `FindingRecord`, `CellRow`, ...),
  written by the collector and the controller, read back as attributes by the pages,
  `check` and `recheck`;
- `repro`: standalone repro scripts and explanations of mask bugs;
- `instance_repro`: the same for instance failures (texts shrunk on a byte vocabulary);
- `recheck`: every repro run against other releases of its engine.
"""

from harness.diff.findings import collector, instance_repro, recheck, records, repro

__all__ = ["collector", "instance_repro", "recheck", "records", "repro"]
