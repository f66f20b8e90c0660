"""Shrink the grammar of a bug while the bug still shows: the grammar minimizer.

A bug found on a 60-rule JSON or C grammar needs a few of its rules. The search is
greedy over the grammar's one-step reductions (`tokensdfa.grammar_reductions`, the Rust
crate's `Grammar::reductions`: an `%ignore` terminal, an alternative, or one symbol of an
alternative dropped, then trimmed), largest cuts first: keep the first reduction on
which the bug still shows (the caller's `keeps`, which compiles the engine and walks the
reference on it) and start again from it; stop when none keeps the bug, after
`max_probes` tries, or at the deadline. Every reduction is written by this project's
writers in the grammar's own family (Lark for Lark, GBNF for GBNF and EBNF); a bug that
needs the grammar's own spelling (a lexer reading its terminals as written) shows on no
reduction, and the grammar is kept as it was. It follows the shrinker contract
(`harness.diff.shrink.contract`): `shrink_grammar(start, keeps, deadline)`.
"""

from __future__ import annotations

import time
from dataclasses import replace

from harness.diff.shrink.contract import Keeps
from harness.language import grammar
from harness.spec import Spec

MAX_PROBES = 400


def shrink_grammar(
    start: Spec, keeps: Keeps[Spec], deadline: float, max_probes: int = MAX_PROBES
) -> Spec:
    """The smallest grammar found, one reduction at a time, on which `keeps` holds
    (`start` itself when none does, or when the front end cannot read it)."""
    notation = start.notation
    assert notation is not None, "a grammar spec names its notation"
    current = start
    tried: set[str] = {start.text}
    probes = 0
    improved = True
    while improved:
        improved = False
        for text in grammar.reductions(current.text, notation):
            if time.monotonic() >= deadline or probes >= max_probes:
                return current
            if text in tried:
                continue
            tried.add(text)
            probes += 1
            candidate = replace(current, text=text)
            if keeps(candidate):
                current, improved = candidate, True
                break
    return current
