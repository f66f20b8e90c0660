"""The differential test: every engine's masks against the exact reference, each
difference judged a declared policy or a bug, every bug shrunk to a standalone repro.

The stages, each a subpackage that imports only the stages below it (the layer contract
in `.importlinter` checks it):

- `run`: the controller (`DiffRun`: cells planned, run here or on Dask, stored, resumed),
  the worker service (`DiffService`: one cell's parts) and the cell function;
- `findings`: raw disagreements and instance failures gathered into findings and bugs,
  repro scripts and their explanations, recheck against releases;
- `shrink`: the shrinkers, each under one contract (a start value, the predicate that
  must keep holding, a deadline): the token minimizer, delta debugging, regexes, JSON
  instances, stale-after-reset histories;
- `walk`: the differ (engines beside the reference along token paths), its lanes, the
  reference indexes, matcher histories, the disagreement record, native JSON dialects;
- `judge`: triage of one disagreement (policy or bug), bug signatures, the policy
  models (canonical, leftmost-first, JSON-schema readings) and instance checks.

The mutation suite that scores this package (seeded faults it must catch) is test
machinery: `tests/mutation/`, `python -m tests.mutation`.
"""

__all__ = ["findings", "judge", "run", "shrink", "walk"]
