"""Stage *shrink* of the differ: a bug made small while it still shows.

- `minimize`: a mask bug on a real vocabulary rebuilt on a tiny one (`minimize`,
  `tiny_vocabulary`, `Minimal`);
- `ddmin`: delta debugging over a list;
- `regex_shrink`: the regex of a bug, cut on its syntax tree;
- `json_shrink`: a JSON instance, shrunk on its structure;
- `stale`: a stale-after-reset finding, its history shrunk.
"""

from harness.diff.shrink import ddmin, json_shrink, minimize, regex_shrink, stale

__all__ = ["ddmin", "json_shrink", "minimize", "regex_shrink", "stale"]
