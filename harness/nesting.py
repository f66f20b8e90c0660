"""Deeply nested input, read without overflowing Python's recursion.

JSON files, schemas and regexes are trees, and the libraries that read them (the `json`
module, jsonschema's `check_schema`, `re`, our own scanners) recurse once or more per
level. Python's default limit (1,000 frames on an 8 MiB stack) fails at a schema nested
about 120 deep, and a RecursionError would reach the user as a traceback. So:

- `MAX_DEPTH` is the stated bound: a JSON document (a spec file, an entry, a schema)
  nests at most this many arrays and objects. `json_depth` measures a text without
  parsing it (linear, no recursion); `loads` refuses a deeper one with one line naming
  it.
- `deep_call` runs a reader that recurses per level (the `json` parser, jsonschema's
  checks, our scanners) in a thread with a 256 MiB stack and a recursion limit that
  `MAX_DEPTH` levels of them fit in, so every document within the bound is read whole; a
  RecursionError that escapes anyway is BadInput naming the input, never a traceback.
- `retrying` calls a reader as usual and only on a RecursionError again through
  `deep_call`, so the common, shallow input pays nothing.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from harness.errors import BadInput

MAX_DEPTH = 1_000
# Frames per level of the deepest reader (jsonschema's check_schema takes about 8) with
# room to spare, and a stack those frames fit in (a Python frame costs well under 1 KiB
# of C stack when a C call sits between frames).
_RECURSION_LIMIT = 40 * MAX_DEPTH
_STACK_BYTES = 256 << 20
_OPENERS, _CLOSERS = frozenset(b"[{"), frozenset(b"]}")

T = TypeVar("T")


def json_depth(text: str | bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets inside strings do
    not count); the text need not be valid JSON."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif byte in _CLOSERS:
            depth -= 1
    return deepest


def loads(text: str | bytes, where: str, **options: Any) -> Any:
    """`json.loads(text, **options)` for any depth up to `MAX_DEPTH`; a deeper text is
    BadInput naming `where` (json's own errors go on as they are)."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        pass
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise BadInput(
            f"{where}: JSON nested {depth:,} levels deep; tokensieve reads at most "
            f"{MAX_DEPTH:,} levels"
        )
    return deep_call(where, lambda: json.loads(text, **options))


def retrying(where: str, call: Callable[[], T]) -> T:
    """`call()`, and on a RecursionError `call()` again through `deep_call`."""
    try:
        return call()
    except RecursionError:
        return deep_call(where, call)


def deep_call(where: str, call: Callable[[], T]) -> T:
    """`call()` in a thread whose stack and recursion limit fit `MAX_DEPTH` levels of a
    recursive reader; its exceptions are raised here, a RecursionError as BadInput naming
    `where`. The recursion limit is the interpreter's, raised while the call runs (the
    calling thread waits meanwhile) and restored after."""
    result: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(call())
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    previous_limit = sys.getrecursionlimit()
    previous_stack = threading.stack_size(_STACK_BYTES)
    try:
        sys.setrecursionlimit(max(previous_limit, _RECURSION_LIMIT))
        worker = threading.Thread(target=target, name="tokensieve-deep-read", daemon=True)
        worker.start()
        worker.join()
    finally:
        threading.stack_size(previous_stack)
        sys.setrecursionlimit(previous_limit)
    if failure:
        if isinstance(failure[0], RecursionError):
            raise BadInput(f"{where}: nested too deeply to read") from None
        raise failure[0]
    return result[0]
