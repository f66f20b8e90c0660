"""outlines-core: builds the whole token-level automaton at compile time (`Index`).

Named `outlines`, not `outlines_core`, so that it can never shadow the package it wraps.

Quirks of 0.2.14 (see /work/shared/notes/engines.md), normalized here:
- Its `Vocabulary` must not contain EOS or special ids, and wants all ids of one byte
  string in one list; it never learns the vocabulary size, so it zeroes and fills exactly
  the `numel` words it is given, which are always `vocab.mask_words` here.
- `Guide.advance` raises ValueError on a refused token; the interface returns False.
- At a final state it lists EOS among the allowed tokens and keeps an EOS self-loop; the
  interface never advances EOS (it only reports accepting), like the reference.
- `is_finished()` is `Index.is_final_state(current state)`: exactly "EOS allowed here".
- No figure for the index's memory, so `memory_bytes` is None.
- Leftmost-first alternation and a dropped finish-and-continue token are upstream bugs,
  not policies: they stay visible as differences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.engines.base import Capabilities, Compiled, Engine, Matcher, Policies, SchemaPolicy
from harness.engines.support import (
    MaskBuffer,
    check_features,
    check_regex_size,
    compile_failure,
)
from harness.errors import EngineError
from harness.language.converter import schema_to_regex
from harness.language.reference import EAGER_REGEX_LIMIT
from harness.spec import Spec
from harness.vocab import Vocabulary

NAME = "outlines-core"


@dataclass(frozen=True)
class OutlinesVocab:
    vocab: Vocabulary
    native: Any  # outlines_core.Vocabulary


class OutlinesMatcher(Matcher):
    __slots__ = ("_buffer", "_eos_id", "_guide", "_spec_id", "_words")

    def __init__(self, guide: Any, vocab: Vocabulary, spec_id: str) -> None:
        self._guide = guide
        self._eos_id = vocab.eos_id
        self._words = vocab.mask_words
        self._spec_id = spec_id
        self._buffer = MaskBuffer(NAME, spec_id, vocab.mask_words)

    def fill_mask(self, out: np.ndarray) -> None:
        pointer = self._buffer.pointer(out)
        try:
            self._guide.write_mask_into(pointer, self._words, 4)
        except (ValueError, RuntimeError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc

    def advance(self, token_id: int) -> bool:
        if token_id == self._eos_id:
            return False
        try:
            self._guide.advance(token_id, return_tokens=False)
        except ValueError:
            # Raised only for a token with no transition; the guide keeps its state.
            return False
        except (TypeError, OverflowError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc
        return True

    def is_accepting(self) -> bool:
        return bool(self._guide.is_finished())

    def reset(self) -> None:
        self._guide.reset()


class OutlinesCompiled(Compiled):
    def __init__(self, index: Any, vocab: Vocabulary, spec_id: str) -> None:
        self.index = index
        self._vocab = vocab
        self._spec_id = spec_id
        self._num_states: int | None = None

    def matcher(self) -> Matcher:
        from outlines_core import Guide

        return OutlinesMatcher(Guide(self.index), self._vocab, self._spec_id)

    def num_states(self) -> int | None:
        # Every live state has an outgoing transition (final ones at least EOS), so the
        # transition table's keys are the states. Building that dict is costly on big
        # vocabularies, hence computed on request only.
        if self._num_states is None:
            self._num_states = len(self.index.get_transitions())
        return self._num_states


# Its part of a mask repro script (harness.diff.findings.repro): its package and numpy only.
MASK_REPRO = """
def engine_mask():
    from outlines_core import Guide, Index, Vocabulary

    by_bytes = {}
    for i, t in enumerate(TOKENS):
        if i not in SPECIAL:
            by_bytes.setdefault(t, []).append(i)
    guide = Guide(Index(REGEX, Vocabulary(EOS, by_bytes)))
    for t in PREFIX:
        guide.advance(t, return_tokens=False)
    mask = np.zeros((len(TOKENS) + 31) // 32, dtype=np.int32)
    guide.write_mask_into(mask.ctypes.data, mask.size, 4)
    return mask, guide.is_finished(), None


def engine_advance(token):
    from outlines_core import Guide, Index, Vocabulary

    by_bytes = {}
    for i, t in enumerate(TOKENS):
        if i not in SPECIAL:
            by_bytes.setdefault(t, []).append(i)
    guide = Guide(Index(REGEX, Vocabulary(EOS, by_bytes)))
    for t in PREFIX:
        guide.advance(t, return_tokens=False)
    try:
        guide.advance(token, return_tokens=False)
    except ValueError:
        return False
    return True
"""


class OutlinesCoreEngine(Engine):
    name = NAME
    extra = "outlines"
    module = "outlines_core"
    capabilities = Capabilities(
        regex=True,
        json_schema="via-regex",
        # Its regex-automata DFA has no look-around or back-references. Anchors are left
        # to it: `ab$` compiles, `^ab$` fails ("anchored universal start state doesn't
        # exist"), which compile_failure reports as unsupported for a declared feature.
        unsupported_features=frozenset({"lookaround", "backreference"}),
        max_regex_chars=EAGER_REGEX_LIMIT,
    )
    policies = Policies(
        json_whitespace="regex-builder",
        # both converters' regexes fix the schema's key order
        json_schema=(SchemaPolicy.KEYS_IN_SCHEMA_ORDER,),
    )

    repro_package = "outlines-core"
    mask_repro = MASK_REPRO

    def version(self) -> str:
        from importlib.metadata import version

        import outlines_core  # noqa: F401  (version() must fail when the import does)

        return version("outlines_core")

    def prepare(self, vocab: Vocabulary) -> OutlinesVocab:
        from outlines_core import Vocabulary as OCVocabulary

        by_bytes: dict[bytes, list[int]] = {}
        for token_id, token in enumerate(vocab.tokens):
            # An empty token matches nothing and would only confuse its trie.
            if token_id == vocab.eos_id or token_id in vocab.special_ids or not token:
                continue
            by_bytes.setdefault(token, []).append(token_id)
        return OutlinesVocab(vocab=vocab, native=OCVocabulary(vocab.eos_id, by_bytes))

    def compile(self, prepared: OutlinesVocab, spec: Spec) -> OutlinesCompiled:
        from outlines_core import Index

        check_features(self, spec)
        regex = schema_to_regex(spec, self.name)
        check_regex_size(self, spec, regex)
        try:
            index = Index(regex, prepared.native)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # pyo3 panics derive from BaseException
            raise compile_failure(self, spec, f"{exc}") from exc
        return OutlinesCompiled(index, prepared.vocab, spec.id)
