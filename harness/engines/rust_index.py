"""Adapters over the indexes of this project's own Rust crate (`tokensdfa`): the naive
reference and TokensDFA. Both index types share one surface (`initial_state`,
`num_states`, `memory_bytes`, `next_state`, `fill_mask`, `is_accepting`), so one matcher
and one compiled type serve both; a subclass only says how to build its index.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.engines.base import (
    Capabilities,
    Compiled,
    Engine,
    Matcher,
    Policies,
    SchemaPolicy,
    Sequences,
)
from harness.engines.support import check_features, check_regex_size
from harness.errors import EngineError, SpecError, UnsupportedSpec, WorkBudget
from harness.language import reference
from harness.language.converter import schema_to_regex
from harness.language.reference import EAGER_REGEX_LIMIT
from harness.spec import Spec
from harness.vocab import Vocabulary

if TYPE_CHECKING:  # the extension is imported when an engine is built (`reference.tokensdfa`)
    import tokensdfa
    from harness.language.reference import TokenIndex


@dataclass(frozen=True)
class RustVocab:
    vocab: Vocabulary
    native: tokensdfa.Vocabulary  # with its token trie already built
    prepare_seconds: float


class IndexMatcher(Matcher):
    """A state id walking one index; the index itself is immutable and shared."""

    __slots__ = ("_eos_id", "_index", "_initial", "_name", "_past", "_spec_id", "_state")

    def __init__(self, index: TokenIndex, eos_id: int, name: str, spec_id: str) -> None:
        self._index = index
        self._initial: int = index.initial_state
        self._state = self._initial
        self._past: list[int] = []  # the states before each token taken (for rollback)
        self._eos_id = eos_id
        self._name = name
        self._spec_id = spec_id

    @property
    def state(self) -> int:
        """The index's id of the current state (benchmarks tell first visits by it)."""
        return int(self._state)

    @property
    def index(self) -> TokenIndex:
        """The shared index this matcher walks (a batch step hands it to the extension)."""
        return self._index

    def fill_mask(self, out: np.ndarray) -> None:
        try:
            self._index.fill_mask(self._state, out)
        except (TypeError, ValueError) as exc:
            raise self._failure(exc) from exc

    def advance(self, token_id: int) -> bool:
        # EOS ends the output; the index has no state after it, so it is refused here as in
        # every adapter (is_accepting says whether it may be emitted).
        if token_id == self._eos_id:
            return False
        try:
            nxt = self._index.next_state(self._state, token_id)
        except (TypeError, ValueError, OverflowError) as exc:
            raise self._failure(exc) from exc
        if nxt is None:
            return False
        self._past.append(self._state)
        self._state = nxt
        return True

    def is_accepting(self) -> bool:
        return bool(self._index.is_accepting(self._state))

    def _failure(self, exc: Exception) -> EngineError:
        """The error of a failed call: past the grammar reference's work budget it is
        WorkBudget (the cell's `timeout`), otherwise the index's message."""
        if isinstance(exc, reference.tokensdfa().BudgetError):
            return WorkBudget(self._name, self._spec_id, " ".join(str(exc).split()))
        return EngineError(self._name, self._spec_id, str(exc))

    def reset(self) -> None:
        self._state = self._initial
        self._past.clear()

    def validate(self, tokens: Sequence[int]) -> int | None:
        """The tokens' states followed from here without moving (EOS has none)."""
        state: int | None = self._state
        for taken, token in enumerate(tokens):
            if token == self._eos_id or state is None:
                return taken
            state = self._index.next_state(state, token)
            if state is None:
                return taken
        return len(tokens)

    def rollback(self, count: int) -> bool:
        """The state `count` tokens back: the index is immutable, so the states passed
        are kept and rolling back is taking one again."""
        if count < 0 or count > len(self._past):
            return False
        if count:
            self._state = self._past[-count]
            del self._past[-count:]
        return True

    @property
    def eos_id(self) -> int:
        return self._eos_id

    @staticmethod
    def columns(
        name: str, matchers: Sequence[Matcher]
    ) -> tuple[list[TokenIndex], list[int], list[int]]:
        """The indexes, states and EOS ids of a batch of these matchers, in one pass (a
        batch step runs it for every row: its cost is the step's serial part)."""
        indexes: list[TokenIndex] = []
        states: list[int] = []
        eos: list[int] = []
        for m in matchers:
            if not isinstance(m, IndexMatcher):
                raise EngineError(name, "<batch>", "a batch of matchers this engine did not make")
            indexes.append(m._index)
            states.append(m._state)
            eos.append(m._eos_id)
        return indexes, states, eos

    @staticmethod
    def move_all(
        matchers: Sequence[Matcher], rows: Sequence[int], states: Sequence[int | None], size: int
    ) -> list[bool]:
        """Move matcher `rows[i]` to `states[i]` (None: it refused its token, and stays);
        which of the `size` matchers moved (`advance_index_batch`)."""
        took = [False] * size
        for i, state in zip(rows, states, strict=True):
            if state is not None:
                m = matchers[i]
                assert isinstance(m, IndexMatcher)
                m._past.append(m._state)
                m._state = state
                took[i] = True
        return took

    def forced_text(self) -> bytes | None:
        # TokensDFA computes forced runs; the naive reference does not
        forced = getattr(self._index, "forced_bytes", None)
        return None if forced is None else bytes(forced(self._state))


class IndexCompiled(Compiled):
    def __init__(self, index: TokenIndex, eos_id: int, name: str, spec_id: str) -> None:
        self.index = index
        self._eos_id = eos_id
        self._name = name
        self._spec_id = spec_id

    def matcher(self) -> Matcher:
        return IndexMatcher(self.index, self._eos_id, self._name, self._spec_id)

    def memory_bytes(self) -> int | None:
        return int(self.index.memory_bytes)

    def num_states(self) -> int | None:
        return int(self.index.num_states)


class RustIndexEngine(Engine):
    """An engine built from the project's own Rust crate; subclasses build the index."""

    rollback = True  # its matchers keep the states they passed

    capabilities = Capabilities(
        regex=True,
        json_schema="via-regex",
        unsupported_features=frozenset({"lookaround", "backreference"}),
        max_regex_chars=EAGER_REGEX_LIMIT,
    )
    # The reference defines the language: Unicode classes, the schema converter's
    # whitespace, every tokenization of every string.
    policies = Policies(
        json_whitespace="regex-builder",
        # both converters' regexes fix the schema's key order
        json_schema=(SchemaPolicy.KEYS_IN_SCHEMA_ORDER,),
    )
    repro_package = "tokensdfa (this repository's engines/)"

    def version(self) -> str:
        return str(reference.tokensdfa().__version__)

    def prepare(self, vocab: Vocabulary) -> RustVocab:
        native = reference.tokensdfa().Vocabulary(
            list(vocab.tokens), vocab.eos_id, sorted(vocab.special_ids)
        )
        # Build the token trie now so that the first compile is not charged for it.
        seconds = float(native.prepare())
        return RustVocab(vocab=vocab, native=native, prepare_seconds=seconds)

    def compile(self, prepared: RustVocab, spec: Spec) -> IndexCompiled:
        check_features(self, spec)
        return self.compile_regex(prepared, spec, schema_to_regex(spec, self.name))

    def compile_regex(self, prepared: RustVocab, spec: Spec, regex: str) -> IndexCompiled:
        """The index of `regex`, the regex of `spec`; its failures as the spec's."""
        check_regex_size(self, spec, regex)
        module = reference.tokensdfa()
        try:
            index = self.build_index(regex, prepared.native)
        except module.PatternError as exc:
            raise SpecError(self.name, spec.id, " ".join(str(exc).split())) from exc
        except (module.UnsupportedPatternError, module.LimitError, MemoryError) as exc:
            raise UnsupportedSpec(self.name, spec.id, " ".join(str(exc).split())) from exc
        return IndexCompiled(index, prepared.vocab.eos_id, self.name, spec.id)

    @abstractmethod
    def build_index(self, regex: str, native_vocab: tokensdfa.Vocabulary) -> TokenIndex:
        """The index for `regex`; raises tokensdfa's PatternError, UnsupportedPatternError
        or LimitError when it cannot."""


def fill_index_batch(name: str, matchers: Sequence[Matcher], out: np.ndarray, threads: int) -> None:
    """`Engine.fill_batch` for TokensDFA's matchers: one `tokensdfa.fill_masks` call, the
    GIL released, the rows filled on `threads` threads by the extension's pool."""
    indexes, states, _ = IndexMatcher.columns(name, matchers)
    try:
        reference.tokensdfa().fill_masks(indexes, states, out, threads)
    except (TypeError, ValueError) as exc:
        raise EngineError(name, "<batch>", " ".join(str(exc).split())) from exc


def advance_index_batch(
    name: str, matchers: Sequence[Matcher], tokens: Sequence[int], threads: int
) -> list[bool]:
    """`Engine.advance_batch` for TokensDFA's matchers: one `tokensdfa.next_states` call
    for the tokens that are not EOS (which no index has a state after, as `advance`)."""
    if len(tokens) != len(matchers):
        raise EngineError(name, "<batch>", f"{len(tokens)} tokens for a batch of {len(matchers)}")
    indexes, states, eos = IndexMatcher.columns(name, matchers)
    moving: Sequence[int] = range(len(matchers))
    at_eos = [i for i, (e, t) in enumerate(zip(eos, tokens, strict=True)) if t == e]
    if at_eos:
        skip = set(at_eos)
        moving = [i for i in moving if i not in skip]
        indexes, states = [indexes[i] for i in moving], [states[i] for i in moving]
        tokens = [tokens[i] for i in moving]
    try:
        nxt = reference.tokensdfa().next_states(indexes, states, tokens, threads)
    except (TypeError, ValueError, OverflowError) as exc:
        raise EngineError(name, "<batch>", " ".join(str(exc).split())) from exc
    return IndexMatcher.move_all(matchers, moving, nxt, len(matchers))


class IndexSequences(Sequences):
    """`Engine.sequences` for TokensDFA: a `tokensdfa.Batch` over the compiled indexes,
    which keeps every sequence's state in the extension; a step is one call, the GIL
    released, with no per-sequence work in Python."""

    def __init__(self, name: str, compiled: Sequence[Compiled]) -> None:
        indexes = []
        for c in compiled:
            if not isinstance(c, IndexCompiled):
                raise EngineError(name, "<batch>", "a batch of specs this engine did not compile")
            indexes.append(c.index)
        self._name = name
        try:
            self._batch = reference.tokensdfa().Batch(indexes)
        except (TypeError, ValueError) as exc:
            raise EngineError(name, "<batch>", " ".join(str(exc).split())) from exc

    def step(self, tokens: Sequence[int] | None, out: np.ndarray, threads: int) -> list[bool]:
        try:
            return self._batch.step(tokens, out, threads)
        except (TypeError, ValueError, OverflowError) as exc:
            raise EngineError(self._name, "<batch>", " ".join(str(exc).split())) from exc

    def reset(self, rows: Sequence[int]) -> None:
        try:
            self._batch.reset(rows)
        except (TypeError, ValueError, OverflowError) as exc:
            raise EngineError(self._name, "<batch>", " ".join(str(exc).split())) from exc
