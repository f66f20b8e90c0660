"""`tokensieve check`, for a user's own CI and notebooks: which engine handles MY specs
with MY tokenizer, how fast, and is any of them wrong?

- `run.check(specs, vocab, ...)` -> `model.CheckResult`: a bench run and a diff run of
  the specs in the results store, folded into one result per (spec, engine): status,
  compile, time to first mask, mask latency, memory, mask disagreements with the
  reference (policy or bug, with minimized repros), instance checks; one verdict per spec
  naming the fastest correct engine; `run.resume(reports_dir, run)` continues an
  interrupted check with its stored specs and options;
- `model`: the result types and the outcome rule a CI fails on (`--fail-on`);
- `output`: table, Markdown, JSON and JUnit XML.
"""

from harness.check.model import CheckResult, EngineResult, SpecResult
from harness.check.run import check, resume

__all__ = ["CheckResult", "EngineResult", "SpecResult", "check", "resume"]
