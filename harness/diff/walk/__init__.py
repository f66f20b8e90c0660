"""Stage *walk* of the differ: engines beside the reference, state by state.

- `differ`: `Differ` (one spec on one vocabulary: every engine's masks compared with the
  reference's along the plan's paths, each difference judged);
- `plan`: `WalkPlan`, and where the walks go (the cover of the reference's states, the
  next token of a random walk);
- `lanes`: one `Lane` per engine (matcher, mask, policy references);
- `references`: the reference indexes of one regex over one vocabulary;
- `history`: a matcher's history, replayable on a new matcher;
- `disagreement`: `Disagreement` and `SpecDiff`, what the walk records;
- `dialects`: native JSON engines compared in their own JSON dialect.
"""

from harness.diff.walk import dialects, differ, disagreement, history, lanes, plan, references

__all__ = ["dialects", "differ", "disagreement", "history", "lanes", "plan", "references"]
