"""Engine registry and the helpers every adapter shares.

Adapter modules are imported only when an engine is asked for by name, and each adapter
imports its engine's package only inside its methods: a missing or broken package then
costs nothing but that engine's availability, and torch is loaded only when xgrammar is
actually used.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import numpy as np

from harness.engines.base import Engine
from harness.errors import SpecError, TokensieveError, UnknownName, UnsupportedSpec
from harness.spec import Spec

# name -> (module, class); the reference comes first, so reports list it first.
_ADAPTERS: dict[str, tuple[str, str]] = {
    "naive": ("harness.engines.naive", "NaiveEngine"),
    "outlines-core": ("harness.engines.outlines", "OutlinesCoreEngine"),
    "llguidance": ("harness.engines.llguidance", "LLGuidanceEngine"),
    "xgrammar": ("harness.engines.xgrammar", "XGrammarEngine"),
    "tokensdfa": ("harness.engines.tokensdfa", "TokensDFAEngine"),
    "tokensdfa-canonical": ("harness.engines.tokensdfa", "TokensDFACanonicalEngine"),
}
ENGINE_NAMES: tuple[str, ...] = tuple(_ADAPTERS)


class EngineError(TokensieveError):
    """An engine failed while running a compiled spec (filling a mask, advancing)."""

    def __init__(self, engine: str, spec_id: str, message: str) -> None:
        self.engine = engine
        self.spec_id = spec_id
        self.message = message
        super().__init__(f"{engine}: runtime error on {spec_id}: {message}")


def get(name: str) -> Engine:
    """A fresh adapter for `name`; raises UnknownName for a name not in ENGINE_NAMES."""
    try:
        module_name, class_name = _ADAPTERS[name]
    except KeyError:
        raise UnknownName("engine", name, list(ENGINE_NAMES)) from None
    engine: Engine = getattr(importlib.import_module(module_name), class_name)()
    return engine


def all_engines() -> list[Engine]:
    """One adapter per registered engine, available or not (ask `available()`)."""
    return [get(name) for name in ENGINE_NAMES]


# Words in engines' messages that mean "valid, but not something I implement".
_UNSUPPORTED_WORDS = re.compile(
    r"not supported|unsupported|not implemented|unimplemented|recursion limit|incompatible"
    r"|unknown format",
    re.IGNORECASE,
)
# xgrammar prefixes its messages with "[hh:mm:ss] /path/file.cc:NN: ", noise in a report.
_LOG_PREFIX = re.compile(r"^\[\d\d:\d\d:\d\d\] \S+:\d+: ")


def clean_message(message: str) -> str:
    """An engine's error message on one line (at most 500 characters), log prefixes cut."""
    lines = [_LOG_PREFIX.sub("", line).strip() for line in str(message).splitlines()]
    return " | ".join(line for line in lines if line)[:500] or "(no message)"


def check_features(engine: Engine, spec: Spec) -> None:
    """Refuse before compiling a spec that declares a feature the engine cannot handle.

    Some engines do not fail on such specs but silently ignore the feature (xgrammar drops
    a look-ahead inside a JSON-schema pattern), which would make a wrong language look
    like a successful compile.
    """
    missing = spec.features & engine.capabilities.unsupported_features
    if missing:
        raise UnsupportedSpec(engine.name, spec.id, f"uses {', '.join(sorted(missing))}")


def compile_failure(engine: Engine, spec: Spec, message: str) -> TokensieveError:
    """The project's error for a failed compile.

    UnsupportedSpec when the engine's message says so, or when the spec declares an
    optional regex feature (anchors, inline flags, ...): a corpus spec is valid by
    construction, so an engine failing on one with such a feature lacks the feature.
    SpecError otherwise: the spec itself is wrong.
    """
    text = clean_message(message)
    if spec.features or _UNSUPPORTED_WORDS.search(text):
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
