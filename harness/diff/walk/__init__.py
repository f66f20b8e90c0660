"""Stage *walk* of the differ: engines beside the reference, state by state.

- `differ`: `Differ` and `WalkPlan` (cover, corpus paths, random walks);
- `lanes`: one `Lane` per engine (matcher, mask, policy references);
- `references`: the reference indexes of one regex over one vocabulary;
- `history`: a matcher's history, replayable on a new matcher;
- `disagreement`: `Disagreement` and `SpecDiff`, what the walk records;
- `dialects`: native JSON engines compared in their own JSON dialect.
"""

from harness.diff.walk import dialects, differ, disagreement, history, lanes, references

__all__ = ["dialects", "differ", "disagreement", "history", "lanes", "references"]
