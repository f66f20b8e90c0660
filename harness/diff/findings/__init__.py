"""Stage *findings* of the differ: what a run reports.

- `collector`: `Collector` (disagreements and instance failures into findings, findings
  into bugs), `Finding`, `Bug`, `dump` (diff.json);
- `repro`: standalone repro scripts and explanations of mask bugs;
- `instance_repro`: the same for instance failures (texts shrunk on a byte vocabulary);
- `recheck`: every repro run against other releases of its engine.
"""

from harness.diff.findings import collector, instance_repro, recheck, repro

__all__ = ["collector", "instance_repro", "recheck", "repro"]
