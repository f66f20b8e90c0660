"""Delta debugging: the smallest sublist of a list for which a test still holds.

Zeller's ddmin: split the list in n chunks; keep a chunk alone if the test holds on it,
else drop a chunk if the test holds without it, else split finer; stop at single items.
The minimizer runs it over token lists (each test rebuilds a tiny vocabulary, compiles
and walks it), so results are cached by sublist and a deadline ends it early with the
smallest list found so far, on which the test held. It follows the shrinker contract
(`harness.diff.shrink.contract`): `ddmin(start, keeps, deadline)`.
"""

from __future__ import annotations

import time
from typing import TypeVar

from harness.diff.shrink.contract import Keeps

T = TypeVar("T")


def ddmin(start: list[T], keeps: Keeps[list[T]], deadline: float) -> list[T]:
    """A 1-minimal sublist of `start` (order kept) on which `keeps` holds, assuming it
    holds on `start`; or, past `deadline` (a `time.monotonic()` value), the smallest
    found by then. The empty list is tried last, from a single item."""
    current = list(start)
    n = 2
    while len(current) >= 2 and time.monotonic() < deadline:
        chunks = _split(current, n)
        reduced = next((c for c in chunks if len(chunks) > 1 and keeps(c)), None)
        if reduced is not None:
            current, n = reduced, 2
            continue
        for k in range(len(chunks)):
            if time.monotonic() >= deadline:
                return current
            rest = [x for j, c in enumerate(chunks) if j != k for x in c]
            if rest and keeps(rest):
                current, n = rest, max(n - 1, 2)
                break
        else:
            if n >= len(current):
                break
            n = min(len(current), 2 * n)
    if len(current) == 1 and time.monotonic() < deadline and keeps([]):
        return []
    return current


def _split(items: list[T], n: int) -> list[list[T]]:
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for k in range(n):
        end = start + size + (1 if k < extra else 0)
        if end > start:
            out.append(items[start:end])
        start = end
    return out
