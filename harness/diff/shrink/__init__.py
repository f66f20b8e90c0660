"""Stage *shrink* of the differ: a bug made small while it still shows.

Every shrinker follows one contract (`contract`): `shrink(start, keeps, deadline)`, the
value the failure shows on, the predicate that must keep holding, a `time.monotonic()`
deadline; it returns the smallest value found on which `keeps` held. Context a shrinker
needs besides is bound into `keeps` beforehand by an adapter.

- `contract`: the contract (`Shrinker`, `Keeps`);
- `ddmin`: delta debugging over a list (`ddmin`);
- `regex_shrink`: the regex of a bug, cut on its syntax tree (`shrink_regex`);
- `grammar_shrink`: the grammar of a bug, one rule, alternative or symbol at a time
  (`shrink_grammar`);
- `json_shrink`: a JSON instance, shrunk on its structure (`shrink_json`);
- `text_shrink`: any text, by deleting chunks of characters (`shrink_text`);
- `path`: the path a mask bug was found on (`shrink_path`);
- `minimal`: `Minimal`, the minimal form of a bug that a finding keeps and its repro
  embeds;
- `minimize`: a mask bug on a real vocabulary rebuilt on a tiny one (`shrink_case` over
  regex and tokens; `minimize`, its adapter; `tiny_vocabulary`);
- `stale`: a stale-after-reset finding, its history shrunk (`shrink_history`;
  `minimize_stale`, its adapter);
- `protocol_shrink`: a serving-protocol finding, its operations shrunk
  (`shrink_protocol`; `minimize_protocol`, its adapter);
- `replayed`: what those two share (the tiny case's compile, the minimal form after a
  replayed history).
"""

from typing import Any

from harness.diff.shrink import (
    contract,
    ddmin,
    grammar_shrink,
    json_shrink,
    minimal,
    minimize,
    path,
    protocol_shrink,
    regex_shrink,
    replayed,
    stale,
    text_shrink,
)
from harness.diff.shrink.contract import Shrinker

# Every shrinker of the stage, as the contract types them (mypy checks that each fits).
SHRINKERS: tuple[Shrinker[Any], ...] = (
    ddmin.ddmin,
    regex_shrink.shrink_regex,
    grammar_shrink.shrink_grammar,
    json_shrink.shrink_json,
    text_shrink.shrink_text,
    path.shrink_path,
    minimize.shrink_case,
    stale.shrink_history,
    protocol_shrink.shrink_protocol,
)

__all__ = [
    "SHRINKERS",
    "contract",
    "ddmin",
    "grammar_shrink",
    "json_shrink",
    "minimal",
    "minimize",
    "path",
    "protocol_shrink",
    "regex_shrink",
    "replayed",
    "stale",
    "text_shrink",
]
