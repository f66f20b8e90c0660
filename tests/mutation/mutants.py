"""Mutants of TokensDFA exact for the mutation suite: one engine per seeded fault.

`mutant-KIND` drives TokensDFA exact's index through a fault of `tests.mutation.faults`,
declaring the exact engine's policies; `mutant-KIND-canonical` is the same fault on
TokensDFA canonical's index, declaring its canonical policies, so the suite can check
that no fault hides behind them. Each mutant carries its own repro code (the fault functions' source
and the kind as a literal), so a finding on it gets a standalone repro like any engine.

They are ordinary adapters reached by name through `TOKENSIEVE_EXTRA_ENGINES`
(`registry()` gives the value, `tests.mutation.suite` sets it), never in the registry.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from harness.engines.base import Compiled, Matcher, Policies, Policy
from harness.engines.rust_index import RustIndexEngine, RustVocab
from harness.language import reference
from harness.spec import Spec
from tests.mutation import faults

PREFIX = "mutant-"
_SHARED = (
    faults._bits,
    faults._set_bit,
    faults._text_ids,
    faults._visited_before,
    faults._refused,
    faults._mid_char,
    faults.fault_mask,
    faults.fault_next,
)

_WALK = """

def _walk():
    import tokensdfa

    vocab = tokensdfa.Vocabulary(TOKENS, EOS, SPECIAL)
    index = tokensdfa.Index(REGEX, vocab, mode=MUTANT_MODE)
    state = index.initial_state
    path = []
    for t in PREFIX:
        state = fault_next(MUTANT_KIND, index, state, path, t, TOKENS)
        assert state is not None
        path.append(t)
    return index, state, path


def engine_mask():
    index, state, path = _walk()
    mask = np.zeros((len(TOKENS) + 31) // 32, dtype=np.int32)
    accepting = fault_mask(MUTANT_KIND, index, state, path, TOKENS, EOS, set(SPECIAL), mask)
    return mask, accepting, None


def engine_advance(token):
    index, state, path = _walk()
    return token != EOS and fault_next(MUTANT_KIND, index, state, path, token, TOKENS) is not None
"""


def repro_code(kind: str, mode: str) -> str:
    """The mutant's part of a repro script: the fault functions, the kind, the mode."""
    functions = "\n\n".join(inspect.getsource(f) for f in _SHARED)
    return f"\nMUTANT_KIND = {kind!r}\nMUTANT_MODE = {mode!r}\n\n\n{functions}{_WALK}"


class MutantMatcher(Matcher):
    """TokensDFA exact's index walked through one fault."""

    def __init__(self, index: Any, kind: str, vocab: Any) -> None:
        self._index = index
        self._kind = kind
        self._tokens = vocab.tokens
        self._eos = vocab.eos_id
        self._specials = set(vocab.special_ids) | {vocab.eos_id}
        self._scratch = np.zeros(vocab.mask_words, dtype=np.int32)
        self._state = index.initial_state
        self._path: list[int] = []

    def fill_mask(self, out: np.ndarray) -> None:
        self._fill(out)

    def _fill(self, out: np.ndarray) -> bool:
        return bool(
            faults.fault_mask(
                self._kind,
                self._index,
                self._state,
                self._path,
                self._tokens,
                self._eos,
                self._specials,
                out,
            )
        )

    def is_accepting(self) -> bool:
        return self._fill(self._scratch)

    def advance(self, token_id: int) -> bool:
        if token_id == self._eos:
            return False
        nxt = faults.fault_next(
            self._kind, self._index, self._state, self._path, token_id, self._tokens
        )
        if nxt is None:
            return False
        self._state = nxt
        self._path.append(token_id)
        return True

    def reset(self) -> None:
        self._state = self._index.initial_state
        self._path = []


class _MutantCompiled(Compiled):
    def __init__(self, index: Any, kind: str, vocab: Any) -> None:
        self._index = index
        self._kind = kind
        self._vocab = vocab

    def matcher(self) -> Matcher:
        return MutantMatcher(self._index, self._kind, self._vocab)


class MutantEngine(RustIndexEngine):
    """A mutant; subclasses (made by `mutant_class`) fix `kind` and the policies."""

    kind = "drop-token"
    mode = "exact"
    repro_package = "tokensdfa (this repository's engines/)"

    @property
    def mask_repro(self) -> str:  # type: ignore[override]
        return repro_code(self.kind, self.mode)

    def build_index(self, regex: str, native_vocab: Any) -> Any:
        return reference.tokensdfa().Index(regex, native_vocab, mode=self.mode)

    def compile(self, prepared: RustVocab, spec: Spec) -> Compiled:
        compiled = super().compile(prepared, spec)
        return _MutantCompiled(compiled.index, self.kind, prepared.vocab)


_CANONICAL = Policies(
    mask=(Policy.CANONICAL_FORCED, Policy.CANONICAL_LITERALS),
    json_whitespace="regex-builder",
)
_classes: dict[str, type[MutantEngine]] = {}


def class_name(kind: str, canonical: bool) -> str:
    words = "".join(w.capitalize() for w in kind.split("-"))
    return f"Mutant{words}{'Canonical' if canonical else ''}"


def engine_name(kind: str, canonical: bool) -> str:
    return f"{PREFIX}{kind}{'-canonical' if canonical else ''}"


def mutant_class(kind: str, canonical: bool) -> type[MutantEngine]:
    """The adapter class of one mutant (made once)."""
    name = class_name(kind, canonical)
    if name not in _classes:
        attrs: dict[str, Any] = {"name": engine_name(kind, canonical), "kind": kind}
        if canonical:
            attrs.update(policies=_CANONICAL, mode="canonical_literals")
        _classes[name] = type(name, (MutantEngine,), attrs)
    return _classes[name]


def __getattr__(name: str) -> Any:
    """Mutant classes by name (`engines.get` imports `tests.mutation.mutants:Class`)."""
    for kind in faults.FAULTS:
        for canonical in (False, True):
            if class_name(kind, canonical) == name:
                return mutant_class(kind, canonical)
    raise AttributeError(name)


def registry(canonical: bool | None = None) -> str:
    """The `TOKENSIEVE_EXTRA_ENGINES` value naming every mutant (or one variant)."""
    variants = (False, True) if canonical is None else (canonical,)
    return ",".join(
        f"{engine_name(k, c)}={__name__}:{class_name(k, c)}"
        for k in faults.FAULTS
        for c in variants
    )
