"""Shrink a text by deleting chunks of characters: halves, then quarters, down to single
characters, each deletion kept while the caller's `keeps` still holds.

The fallback for an instance failure whose text is not a JSON document with unique keys
(`harness.diff.shrink.json_shrink` shrinks the rest on their structure). The empty text
is never tried. It follows the shrinker contract (`harness.diff.shrink.contract`):
`shrink_text(start, keeps, deadline)`, with at most `max_checks` calls of `keeps`.
"""

from __future__ import annotations

import time

from harness.diff.shrink.contract import Keeps

MAX_CHECKS = 400


def shrink_text(
    start: str, keeps: Keeps[str], deadline: float, *, max_checks: int = MAX_CHECKS
) -> str:
    """The shortest text found on which `keeps` holds (`start` when none)."""
    text = start
    checks = 0
    size = max(1, len(text) // 2)
    while size >= 1 and checks < max_checks and time.monotonic() < deadline:
        i = 0
        shrunk = False
        while i < len(text) and checks < max_checks and time.monotonic() < deadline:
            candidate = text[:i] + text[i + size :]
            checks += 1
            if candidate and keeps(candidate):
                text = candidate
                shrunk = True
            else:
                i += size
        if not shrunk:
            size //= 2
    return text
