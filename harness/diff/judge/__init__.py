"""Stage *judge* of the differ: is a difference a declared policy or a bug, and of which
known shape?

- `view`: `StateView`, what the judge sees of one disagreement;
- `triage`: one disagreement judged (`triage`, `Verdict`);
- `signatures`: the known shapes of bugs, each a test that can fail;
- `canonical`, `leftmost`: models the canonical-forced and leftmost-first rules check
  against;
- `schema_policies`: the declared ways an engine reads a JSON schema differently;
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
