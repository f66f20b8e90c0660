"""Shrink a JSON instance on its structure, keeping a document a user could have written.

Deleting characters from `{"name":"x","age":5}` while a failure shows gives texts like
`{"":5,"":5}`: well-formed by accident, duplicate keys, nothing a user would write. Here
the text is parsed and shrunk as a value instead: members and elements dropped, objects
and arrays emptied, strings and numbers shortened, subtrees replaced by simpler values
(`null`, `0`, `""`, `true`, `{}`, `[]`), each candidate serialized in the text's own layout
(compact, spaced or indented) and kept when the caller's `keeps` still holds. Every
candidate is a well-formed document with unique keys. A text that is not such a document
is shrunk as text (`harness.diff.shrink.text_shrink`). It follows the shrinker contract
(`harness.diff.shrink.contract`): `shrink_json(start, keeps, deadline)`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from harness.corpora.paths import Layout, serialize
from harness.diff.shrink.contract import Keeps
from harness.diff.shrink.text_shrink import MAX_CHECKS, shrink_text

# The simplest values a subtree is replaced by, tried in this order.
SIMPLE: tuple[Any, ...] = (None, 0, "", True, {}, [])


def layout_of(text: str) -> Layout:
    """The layout a JSON text was written in (as `harness.corpora.paths.serialize`)."""
    if "\n" in text:
        return "pretty"
    if ", " in text or ": " in text:
        return "spaced"
    return "compact"


def parse_strict(text: str) -> tuple[bool, Any]:
    """(True, value) when `text` is JSON with unique keys, else (False, None)."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate key")
        return dict(pairs)

    try:
        return True, json.loads(text, object_pairs_hook=unique)
    except (ValueError, RecursionError):
        return False, None


def _smaller_here(value: Any) -> Iterator[Any]:
    """Replacements of `value` itself, largest cuts first."""
    if isinstance(value, dict):
        if value:
            yield {}
        for key in value:
            yield {k: v for k, v in value.items() if k != key}
    elif isinstance(value, list):
        if value:
            yield []
        for i in range(len(value)):
            yield value[:i] + value[i + 1 :]
    elif isinstance(value, str):
        if value:
            yield ""
            yield value[: len(value) // 2]
            yield value[:-1]
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, (int, float)):
        for smaller in (0, 1, int(value), int(value) // 10):
            if smaller != value:
                yield smaller
    for simple in SIMPLE:
        if type(simple) is not type(value) or simple != value:
            yield simple


def candidates(value: Any) -> Iterator[Any]:
    """Every value one edit away from `value`: at the root first, then inside."""
    yield from _smaller_here(value)
    if isinstance(value, dict):
        for key, item in value.items():
            for smaller in candidates(item):
                yield {**value, key: smaller}
    elif isinstance(value, list):
        for i, item in enumerate(value):
            for smaller in candidates(item):
                yield [*value[:i], smaller, *value[i + 1 :]]


def shrink_json(
    start: str, keeps: Keeps[str], deadline: float, *, max_checks: int = MAX_CHECKS
) -> str:
    """The shortest serialization found, one edit at a time, on which `keeps` holds;
    when none does, `start`'s value serialized in its layout (`start` itself where it
    was written so). A `start` that is not JSON with unique keys is shrunk as text."""
    parsed, value = parse_strict(start)
    if not parsed:
        return shrink_text(start, keeps, deadline, max_checks=max_checks)
    layout = layout_of(start)
    current = serialize(value, layout)
    checks = 0
    improved = True
    while improved:
        improved = False
        for candidate in candidates(value):
            if checks >= max_checks or time.monotonic() > deadline:
                return current
            text = serialize(candidate, layout)
            if len(text) >= len(current):
                continue
            checks += 1
            if keeps(text):
                value, current, improved = candidate, text, True
                break
    return current
