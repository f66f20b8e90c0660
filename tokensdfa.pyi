# Type stub of the `tokensdfa` extension (engines/python/src/*.rs). maturin ships this
# file, found beside pyproject.toml, in the wheel as tokensdfa/__init__.pyi with py.typed.
# Keep it in step with the #[pyfunction], #[pyclass] and #[pymethods] items there.

from collections.abc import Sequence
from typing import Final, Literal, Self, TypedDict

import numpy as np
import numpy.typing as npt

__version__: Final[str]
JSON_SLICES: Final[list[str]]

class PatternError(ValueError): ...
class UnsupportedPatternError(ValueError): ...
class LimitError(ValueError): ...
class GrammarError(ValueError): ...
class UnsupportedGrammarError(GrammarError): ...
class BudgetError(LimitError): ...

_Mode = Literal["exact", "canonical_literals"]
_Notation = Literal["gbnf", "lark", "ebnf"]
_Lexing = Literal["scannerless", "greedy"]
_TrailingIgnore = bool | Literal["always", "never", "where-a-lexeme-may-follow"]
_Whitespace = Literal["none", "optional-space", "any"]
_Draft = Literal["2020-12", "draft-07", "7"]
_Formats = Literal["assert", "annotate"]
_Escapes = Literal["all", "required", "minimal", "raw", "free-strings-only", "minimal-unicode"]
_Numbers = Literal["decimal", "exponent-where-exact", "exponent-when-unbounded"]
_Integers = Literal["decimal", "no-fraction"]
_NegativeZero = Literal["allowed", "unbounded-only", "with-fraction-when-bounded"]
_Keys = Literal["as-strings", "canonical", "canonical-del-escaped"]
_UndeclaredKeys = Literal["as-strings", "minimal-unicode"]

class _IndexStats(TypedDict):
    mode: _Mode
    threads: int
    dead_bytes: int
    byte_classes: int
    text_tokens: int
    tokens_dropped: int
    token_classes: int
    vocab_trie_nodes: int
    class_trie_nodes: int
    dfa_states: int
    states: int
    distinct_masks: int
    transitions_stored: int
    muted_literals: int
    ghosts: int
    work: int
    slice_hits: int
    slice_skips: int
    vocab_prepare_s: float
    dfa_s: float
    mute_s: float
    classes_s: float
    walk_s: float
    masks_s: float
    total_s: float

class _LazyIndexStats(TypedDict):
    mode: Literal["exact"]
    states: int
    dfa_states: int
    lazy_dfa: bool
    nfa_states: int
    byte_classes: int
    masks_computed: int
    helpers: int  # helper engines made for first visits on several threads
    helper_masks: int  # masks they computed
    trie_walks: int
    nodes_visited: int
    slice_tests: int
    slice_hits: int
    product_pairs: int
    run_verdicts: int
    pruned_masks: int
    kept_subtrees: int
    survived_subtrees: int
    cache_bytes: int
    cached_masks: int
    evictions: int
    dfa_bytes: int
    build_s: float
    fast_parse: bool
    parse_s: float
    compile_s: float
    transitions_computed: int
    determinize_s: float
    walk_s: float
    slice_s: float
    mask_s: float

def check_pattern(regex: str) -> None: ...
def schema_to_regex(
    schema: str,
    whitespace: _Whitespace = ...,
    max_whitespace_run: int | None = ...,
    draft: _Draft = ...,
    formats: _Formats = ...,
    escapes: _Escapes = ...,
    numbers: _Numbers = ...,
    max_regex_bytes: int | None = ...,
    any_depth: int | None = ...,
    integers: _Integers = ...,
    negative_zero: _NegativeZero = ...,
    max_recursion: int | None = ...,
    keys: _Keys = ...,
    undeclared_keys: _UndeclaredKeys = ...,
) -> str: ...

class _GrammarSummary(TypedDict):
    rules: int
    terminals: int
    ignore: int
    start: str

class _FillStats(TypedDict):
    items: int
    nodes_visited: int
    nodes_live: int
    seconds: float

def grammar_to_lark(text: str, notation: _Notation = ...) -> str: ...
def grammar_to_gbnf(text: str, notation: _Notation = ...) -> str: ...
def grammar_to_lark_scannerless(text: str, notation: _Notation = ...) -> str: ...
def grammar_to_kbnf(text: str, notation: _Notation = ...) -> str: ...
def grammar_summary(text: str, notation: _Notation = ...) -> _GrammarSummary: ...
def grammar_reductions(text: str, notation: _Notation = ...) -> list[str]: ...
def grammar_accepts(
    text: str,
    notation: _Notation,
    sentences: Sequence[bytes],
    item_budget: int | None = ...,
    lexing: _Lexing = ...,
    leading_ignore: bool = ...,
    trailing_ignore: _TrailingIgnore = ...,
) -> list[bool]: ...
def grammar_samples(text: str, notation: _Notation, count: int, seed: int = ...) -> list[bytes]: ...
def schema_grammar(schema: str, dialect: dict[str, str | int] | None = ...) -> str | None: ...

class Vocabulary:
    def __new__(
        cls,
        tokens: Sequence[bytes],
        eos_id: int,
        special_ids: Sequence[int],
        slices: Sequence[str] | None = ...,
    ) -> Self: ...
    def __len__(self) -> int: ...
    @property
    def eos_id(self) -> int: ...
    @property
    def mask_words(self) -> int: ...
    def prepare(self) -> float: ...
    @property
    def slices(self) -> list[str]: ...
    @property
    def memory_bytes(self) -> int: ...

class NaiveIndex:
    def __new__(cls, regex: str, vocab: Vocabulary) -> Self: ...
    def fill_mask(self, state: int, out: npt.NDArray[np.int32]) -> None: ...
    def allowed(self, state: int) -> list[int]: ...
    @property
    def initial_state(self) -> int: ...
    @property
    def num_states(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    def next_state(self, state: int, token: int) -> int | None: ...
    def is_accepting(self, state: int) -> bool: ...

class Index:
    def __new__(
        cls,
        regex: str,
        vocab: Vocabulary,
        mode: _Mode = ...,
        threads: int | None = ...,
        max_work: int | None = ...,
        max_dfa_bytes: int | None = ...,
        max_mask_bytes: int | None = ...,
    ) -> Self: ...
    def mask_view(self, state: int) -> npt.NDArray[np.int32]: ...
    def forced_bytes(self, state: int) -> bytes: ...
    def stats(self) -> _IndexStats: ...
    def fill_mask(self, state: int, out: npt.NDArray[np.int32]) -> None: ...
    def allowed(self, state: int) -> list[int]: ...
    @property
    def initial_state(self) -> int: ...
    @property
    def num_states(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    def next_state(self, state: int, token: int) -> int | None: ...
    def is_accepting(self, state: int) -> bool: ...

class LazyIndex:
    def __new__(
        cls,
        regex: str,
        vocab: Vocabulary,
        mode: Literal["exact"] = ...,
        slices: bool = ...,
        cache_limit_bytes: int | None = ...,
    ) -> Self: ...
    @staticmethod
    def from_schema(
        schema: str,
        vocab: Vocabulary,
        dialect: dict[str, str | int] | None = ...,
        cache_limit_bytes: int | None = ...,
    ) -> LazyIndex: ...
    def fill_mask(self, state: int, out: npt.NDArray[np.int32]) -> None: ...
    def allowed(self, state: int) -> list[int]: ...
    def forced_bytes(self, state: int) -> bytes: ...
    def stats(self) -> _LazyIndexStats: ...
    @property
    def initial_state(self) -> int: ...
    @property
    def num_states(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    def next_state(self, state: int, token: int) -> int | None: ...
    def is_accepting(self, state: int) -> bool: ...

class PushdownIndex(LazyIndex):
    """TokensDFA's pushdown mode: a lazy index whose automaton is a grammar's Earley
    sets, hash-consed and computed on demand; exact (the reference's masks, read the
    default way). JSON schemas through the compiler's grammar mode, where unconstrained
    values nest without bound (`schema_grammar` shows the grammar). Every LazyIndex
    call applies."""

    @staticmethod
    def from_grammar(
        text: str,
        vocab: Vocabulary,
        notation: _Notation = ...,
        item_budget: int | None = ...,
        cache_limit_bytes: int | None = ...,
    ) -> PushdownIndex: ...
    @staticmethod
    def from_schema(
        schema: str,
        vocab: Vocabulary,
        dialect: dict[str, str | int] | None = ...,
        cache_limit_bytes: int | None = ...,
        item_budget: int | None = ...,
    ) -> PushdownIndex: ...

class ByteDfa:
    def __new__(cls, regex: str) -> Self: ...
    @property
    def initial_state(self) -> int: ...
    @property
    def num_states(self) -> int: ...
    def walk(self, state: int, data: bytes) -> int | None: ...
    def is_accepting(self, state: int) -> bool: ...

class NaiveGrammarIndex:
    def __new__(
        cls,
        text: str,
        vocab: Vocabulary,
        notation: _Notation = ...,
        item_budget: int | None = ...,
        lexing: _Lexing = ...,
        leading_ignore: bool = ...,
        trailing_ignore: _TrailingIgnore = ...,
    ) -> Self: ...
    def fill_mask(self, state: int, out: npt.NDArray[np.int32]) -> None: ...
    def allowed(self, state: int) -> list[int]: ...
    def fill_stats(self, state: int) -> _FillStats | None: ...
    @property
    def initial_state(self) -> int: ...
    @property
    def num_states(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    def next_state(self, state: int, token: int) -> int | None: ...
    def is_accepting(self, state: int) -> bool: ...
    def forced_bytes(self, state: int, limit: int = 256) -> bytes: ...
    def accepts(self, text: bytes) -> bool: ...
    def viable(self, text: bytes) -> bool: ...

# A decoding step for a batch: sequence i is (indexes[i], states[i]); the indexes may
# differ (specs mixed in one batch) but share one vocabulary width.
class Batch:
    """A server's batch of sequences, each an index and its state, kept in the extension
    (an index may repeat); every sequence starts at its index's start."""

    def __init__(self, indexes: Sequence[Index | LazyIndex | NaiveIndex]) -> None: ...
    def __len__(self) -> int: ...
    @property
    def states(self) -> list[int]:
        """Each sequence's state now."""
    def step(
        self, tokens: Sequence[int] | None, out: npt.NDArray[np.int32], threads: int = 1
    ) -> list[bool]:
        """One decoding step: sequence i takes tokens[i] where its index allows it (a
        negative token, or tokens None: none), then row i of `out` (C-contiguous, shape
        (len, mask words)) gets its mask, on `threads` threads with the GIL released.
        Which sequences moved."""
    def reset(self, rows: Sequence[int]) -> None:
        """Put the sequences of `rows` back at their start."""

def fill_masks(
    indexes: Sequence[Index | LazyIndex | NaiveIndex],
    states: Sequence[int],
    out: npt.NDArray[np.int32],
    threads: int = 1,
) -> None: ...
def next_states(
    indexes: Sequence[Index | LazyIndex | NaiveIndex],
    states: Sequence[int],
    tokens: Sequence[int],
    threads: int = 1,
) -> list[int | None]: ...
