"""What every adapter shares: the caller's mask buffer, engines' messages on one line,
and the one rule that tells an unsupported spec from an invalid one.

That rule never reads an engine's message. A spec is *valid* when the reference's parser
reads it (`harness.language.reference.spec_is_valid`). An engine failing on a valid spec
lacks something (`UnsupportedSpec`); an engine failing on an invalid one is right to
(`SpecError`). Our
own Rust engines say which by the class of the exception they raise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from harness.errors import EngineError, SpecError, TokensieveError, UnsupportedSpec
from harness.language import grammar
from harness.language.reference import spec_is_valid
from harness.spec import Notation, Spec

# xgrammar prefixes its messages with "[hh:mm:ss] /path/file.cc:NN: ", noise in a report.
_LOG_PREFIX = re.compile(r"^\[\d\d:\d\d:\d\d\] \S+:\d+: ")


def clean_message(message: str) -> str:
    """An engine's error message on one line (at most 500 characters), log prefixes cut."""
    lines = [_LOG_PREFIX.sub("", line).strip() for line in str(message).splitlines()]
    return " | ".join(line for line in lines if line)[:500] or "(no message)"


def check_features(engine: Any, spec: Spec) -> None:
    """Refuse, before compiling, a spec that is not text, a spec of a kind the engine
    does not read, or a spec declaring a feature the engine cannot handle.

    Some engines do not fail on such specs but silently ignore the feature (xgrammar drops
    a look-ahead inside a JSON-schema pattern), which would make a wrong language look
    like a successful compile. A spec holding a lone surrogate (not encodable as UTF-8,
    so no engine can read it) is invalid for every engine.
    """
    try:
        spec.text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SpecError(
            engine.name, spec.id, f"not valid Unicode text ({exc.reason} at {exc.start})"
        ) from None
    if spec.kind == "grammar" and not engine.capabilities.grammars:
        raise UnsupportedSpec(engine.name, spec.id, "this engine reads no grammars")
    if spec.kind == "regex" and not engine.capabilities.regex:
        raise UnsupportedSpec(engine.name, spec.id, "this engine reads no regexes")
    if spec.kind == "json_schema" and engine.capabilities.json_schema == "no":
        raise UnsupportedSpec(engine.name, spec.id, "this engine reads no JSON schemas")
    missing = spec.features & engine.capabilities.unsupported_features
    if missing:
        raise UnsupportedSpec(engine.name, spec.id, f"uses {', '.join(sorted(missing))}")


def check_regex_size(engine: Any, spec: Spec, regex: str) -> None:
    """UnsupportedSpec when `regex` is longer than the engine takes."""
    limit = engine.capabilities.max_regex_chars
    if limit is not None and len(regex) > limit:
        raise UnsupportedSpec(
            engine.name,
            spec.id,
            f"regex of {len(regex):,} characters exceeds this engine's {limit:,}-character limit",
        )


def grammar_in(engine: Any, spec: Spec, target: Notation) -> str:
    """The text of grammar `spec` in `target`, a notation the engine reads: the spec's
    own where it reads that (GBNF and EBNF are one family: an EBNF reader takes GBNF),
    else what this project's writers make of it. A grammar the writers cannot say in
    `target` is unsupported for the engine."""
    assert spec.notation is not None
    family = {"gbnf": "gbnf", "ebnf": "gbnf", "lark": "lark"}
    if family[spec.notation] == family[target]:
        return spec.text
    try:
        return grammar.convert(spec.text, spec.notation, target)
    except ValueError as exc:  # the extension's GrammarError or LimitError
        raise UnsupportedSpec(
            engine.name, spec.id, f"tokensieve's {target} writer: {clean_message(str(exc))}"
        ) from exc


def compile_failure(engine: Any, spec: Spec, message: str) -> TokensieveError:
    """The project's error for an engine that failed to compile `spec`: UnsupportedSpec
    when the spec is valid, SpecError when it is not. The message is kept, never read."""
    text = clean_message(message)
    if spec_is_valid(spec):
        return UnsupportedSpec(engine.name, spec.id, text)
    return SpecError(engine.name, spec.id, text)


class MaskBuffer:
    """Validates the caller's mask buffer once and remembers its address.

    Engines that write through a raw pointer (outlines-core, llguidance) would scribble
    past a short or non-contiguous array; checking on every fill would put numpy attribute
    lookups into the timed path. The buffer is checked the first time it is seen, and its
    address is cached with a reference to the array, which stops numpy from resizing
    (and so moving) it while cached.
    """

    __slots__ = ("_array", "_engine", "_pointer", "_spec_id", "_words")

    def __init__(self, engine: str, spec_id: str, words: int) -> None:
        self._engine = engine
        self._spec_id = spec_id
        self._words = words
        self._array: np.ndarray | None = None
        self._pointer = 0

    def pointer(self, out: np.ndarray) -> int:
        if out is not self._array:
            self.check(out)
            self._array = out
            self._pointer = out.ctypes.data
        return self._pointer

    def check(self, out: Any) -> None:
        ok = (
            isinstance(out, np.ndarray)
            and out.dtype == np.int32
            and out.ndim == 1
            and out.shape[0] == self._words
            and out.flags.c_contiguous
            and out.flags.writeable
        )
        if not ok:
            raise EngineError(
                self._engine,
                self._spec_id,
                f"mask buffer must be a writable contiguous int32 array of {self._words} "
                f"words, got {_describe_array(out)}",
            )


def _describe_array(out: Any) -> str:
    if isinstance(out, np.ndarray):
        return f"{out.dtype} array of shape {out.shape}"
    return type(out).__name__


def tail_mask(vocab_size: int) -> int | None:
    """Value keeping only the real-token bits of the last mask word (at most 31 bits, so
    a positive int32), or None when the vocabulary fills that word exactly."""
    used = vocab_size % 32
    return (1 << used) - 1 if used else None


def check_batch_buffer(engine: str, out: Any, rows: int, words: int) -> None:
    """The buffer of a batch step: a writable C-contiguous int32 array of `rows` rows
    of `words` words (an engine writing through a raw pointer would scribble past a
    smaller one)."""
    ok = (
        isinstance(out, np.ndarray)
        and out.dtype == np.int32
        and out.shape == (rows, words)
        and out.flags.c_contiguous
        and out.flags.writeable
    )
    if not ok:
        raise EngineError(
            engine,
            "<batch>",
            f"a batch's mask buffer must be a writable C-contiguous int32 array of shape "
            f"({rows}, {words}), got {_describe_array(out)}",
        )


def per_process(cache: dict[tuple[int, int], Any], threads: int, make: Callable[[int], Any]) -> Any:
    """The engine's thread pool object of `threads` threads for this process, built on
    first use. Keyed by process id as well: a pool made before a fork has no threads in
    the child, and work sent to it there would wait forever."""
    key = (os.getpid(), threads)
    found = cache.get(key)
    if found is None:
        found = cache[key] = make(threads)
    return found
