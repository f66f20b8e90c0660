"""Shrink the regex of a bug while the bug still shows: the regex minimizer.

One outlines-core bug used to appear as 78 findings, one per corpus regex it showed on.
Shrinking each regex to the few pieces the bug needs (`a(\\.a)*` out of a 300-character
date pattern) makes those findings one bug. The search is greedy over the syntax tree
(`harness.language.regex_tree`): try every tree one cut away, largest cuts first; keep the
first lighter pattern (shorter, or as long with smaller repetition counts) on which the
bug still shows (the caller's `keeps`), and
start again from it; stop when no cut keeps the bug, after `max_probes` tries, or at the
deadline. Every pattern tried is checked by the reference and the engine themselves, so
a cut that changes the meaning is fine as long as the same bug still shows. It follows the
shrinker contract (`harness.diff.shrink.contract`): `shrink_regex(start, keeps,
deadline)`.
"""

from __future__ import annotations

import time

from harness.diff.shrink.contract import Keeps
from harness.language import regex_tree

MAX_PROBES = 800


def shrink_regex(
    start: str, keeps: Keeps[str], deadline: float, max_probes: int = MAX_PROBES
) -> str:
    """The shortest pattern found, by one cut at a time, on which `keeps` holds (`start`
    itself when none is, or when the parser cannot read it)."""
    try:
        tree = regex_tree.parse(start)
    except (ValueError, RecursionError):
        return start
    current = start
    best = regex_tree.weight(tree)
    tried: set[str] = {start}
    probes = 0
    improved = True
    while improved:
        improved = False
        for candidate in regex_tree.variants(tree):
            if time.monotonic() >= deadline or probes >= max_probes:
                return current
            pattern = regex_tree.text(candidate)
            if regex_tree.weight(candidate) >= best or pattern in tried:
                continue
            if _unreadable(pattern):
                continue
            tried.add(pattern)
            probes += 1
            if not keeps(pattern):
                continue
            try:
                tree = regex_tree.parse(pattern)
            except (ValueError, RecursionError):
                continue
            current, best, improved = pattern, regex_tree.weight(tree), True
            break
    return current


def _unreadable(pattern: str) -> bool:
    """A candidate not worth a probe: one the parser cannot read back, or one that
    stacks repetitions (what unwrapping `(a*)?` gives)."""
    try:
        return regex_tree.stacked_repeat(regex_tree.parse(pattern))
    except (ValueError, RecursionError):
        return True
