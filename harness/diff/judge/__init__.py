"""Stage *judge* of the differ: is a difference a declared policy or a bug, and of which
known shape?

- `view`: `StateView`, what the judge sees of one disagreement (and the `Models` it may
  compare with);
- `triage`: one disagreement judged (`triage`, `Verdict`, `VerdictKind`), one rule per
  `harness.engines.base.Policy` (`POLICY_RULES`);
- `signatures`: the known shapes of bugs, each a test that can fail;
- `canonical`, `leftmost`: models the canonical-forced and leftmost-first rules check
  against;
- `schema_policies`: the rules of the declared ways an engine reads a JSON schema
  differently (`harness.engines.base.SchemaPolicy`);
- `instances`: JSON-schema engines judged on labelled and sampled instances.
"""

from harness.diff.judge import (
    canonical,
    instances,
    leftmost,
    schema_policies,
    signatures,
    triage,
    view,
)

__all__ = ["canonical", "instances", "leftmost", "schema_policies", "signatures", "triage", "view"]
