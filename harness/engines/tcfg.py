"""transformers-CFG: llama.cpp-style EBNF recognized by a stack-based (pushdown) matcher
in pure Python, its masks found by walking a byte trie of the vocabulary.

Driven here through `transformers_cfg.grammar_utils.IncrementalGrammarConstraint` (what its
`GrammarConstrainedLogitsProcessor` wraps): `filter_vocab(state, device)` is the mask the
processor applies, `_update_state_with_token_id` is the step its
`update_state_with_batch_token_seqs` takes per generated token. Quirks of 0.2.7, normalized
or declared here:
- It reads token bytes through a "middle mapping" of a Hugging Face fast tokenizer, which
  for byte-level tokenizers first loads the *slow* tokenizer of the same name from the
  hub (`ByteProxyMapping`). No hub here: the constraint's own parameters `homomorphism`
  (token id -> bytes) and `trie` (its `ByteTrie`, filled with `insert` in id order as its
  `from_tokenizer` does) are given the vocabulary's bytes, which are what its mappings
  give for byte-level and SentencePiece vocabularies. The tokenizer it is handed is a
  real `PreTrainedTokenizerFast` built from the vocabulary (byte-level pieces, so any
  token bytes survive), used for its EOS id and `decode`.
- Special ids and EOS are left out of the trie (never text), as its tokenizer classes
  exclude special ids; EOS is allowed by the mask where some stack is empty.
- Two tokens with the same bytes share one trie node, which keeps the last id inserted:
  the earlier ids are never allowed (its `ByteTrie.insert`); left visible.
- `AcceptState.can_stop()` looks at one stack only (the first its set yields), so whether
  EOS is accepted (`is_accepting`, and the processor's step on EOS) can disagree with the
  mask's EOS bit (any empty stack); left visible.
- Grammars are read by its own parser (start rule `root`); a Lark grammar reaches it
  through this project's GBNF writer. Its parser logs a syntax error as a warning and
  returns an empty grammar; the adapter reads the log and reports the error. Left
  recursion, and a rule that can reach itself without consuming a byte, recurse without
  bound in its stack expansion: the RecursionError is reported as unsupported (compile)
  or as an engine error (a step).
- Pure Python: compiles in about half a second and fills a mask in milliseconds to
  seconds (a cache per stack, `lru_cache`, keeps every mask computed). Its caches are
  class-wide and keep every constraint alive; each compile here empties them first.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.engines.base import Capabilities, Compiled, Engine, Matcher, Policies
from harness.engines.support import MaskBuffer, check_features, compile_failure
from harness.errors import EngineError, UnsupportedSpec
from harness.spec import Spec
from harness.vocab import Vocabulary

NAME = "transformers-cfg"
START_RULE = "root"
# Its stack expansion recurses once per nested rule reference; a grammar whose expansion
# needs more than this is refused rather than allowed to exhaust the interpreter's stack.
RECURSION_LIMIT = 10_000


def byte_level_chars() -> dict[int, str]:
    """Byte -> the printable character byte-level BPE (GPT-2) writes it as."""
    kept = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars = {b: chr(b) for b in kept}
    shifted = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + shifted)
            shifted += 1
    return chars


def tokenizer_of(vocab: Vocabulary) -> Any:
    """A real `PreTrainedTokenizerFast` over the vocabulary's bytes (byte-level pieces,
    no merges), with each special id a named added token and EOS its eos token. Tokens
    whose bytes repeat an earlier token's keep the first id (a vocabulary maps pieces to
    one id): the tokenizer is only asked for EOS and to decode."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = byte_level_chars()
    pieces: dict[str, int] = {}
    for i, token in enumerate(vocab.tokens):
        piece = f"<|special:{i}|>" if i in vocab.special_ids or i == vocab.eos_id else None
        pieces.setdefault(piece or "".join(chars[b] for b in token), i)
    backend = Tokenizer(models.BPE(vocab=pieces, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token=f"<|special:{vocab.eos_id}|>"
    )


def homomorphism_of(vocab: Vocabulary) -> Any:
    """Its `TokenizerMiddleMapping` over the vocabulary's bytes: `map(id)` is the token's
    bytes (b"" for special ids and EOS, as its mappings give), `len` the vocabulary size."""
    from transformers_cfg.tokenization.middle.TokenizerMiddleMapping import (
        TokenizerMiddleMapping,
    )

    hidden = frozenset(vocab.special_ids | {vocab.eos_id})
    tokens = vocab.tokens

    class VocabularyMapping(TokenizerMiddleMapping):
        def __init__(self) -> None:  # its base reads a tokenizer; this reads the vocabulary
            self.eos_token_id = vocab.eos_id
            self.bos_token_id = None
            self.special = sorted(hidden)
            self._length = vocab.size

        def map(self, token_id: int, verbose: bool = False) -> bytes:
            return b"" if token_id in hidden else tokens[int(token_id)]

    return VocabularyMapping()


def trie_of(vocab: Vocabulary) -> Any:
    """Its `ByteTrie` of the vocabulary, filled as `ByteTrie.from_tokenizer` fills it:
    every id but the special ones, in id order, through `insert`."""
    from transformers_cfg.tokenization.byte_trie import ByteTrie

    trie = ByteTrie()
    hidden = vocab.special_ids | {vocab.eos_id}
    for i, token in enumerate(vocab.tokens):
        if i not in hidden:
            trie.insert(token, i)
    trie.vocab_size = vocab.size
    return trie


@dataclass(frozen=True)
class TCFGVocab:
    vocab: Vocabulary
    tokenizer: Any
    homomorphism: Any
    trie: Any


class TCFGMatcher(Matcher):
    """One decoding: the constraint's current parse state. Its states are immutable, so
    a refused token leaves the matcher as it was, and a reset is the initial one again."""

    def __init__(self, constraint: Any, vocab: Vocabulary, spec_id: str) -> None:
        self._constraint = constraint
        self._vocab = vocab
        self._spec_id = spec_id
        self._buffer = MaskBuffer(NAME, spec_id, vocab.mask_words)
        self._initial = constraint.string_recognizer.get_initial_parsing_state()
        self._state = self._initial
        # the mask's bytes, filled in place at each fill (no array made per mask)
        self._bytes = np.zeros(vocab.mask_words * 4, dtype=np.uint8)
        self._device: Any = None

    def _guarded(self, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except RecursionError as exc:
            raise EngineError(NAME, self._spec_id, "recursion without bound") from exc
        except (RuntimeError, TypeError, KeyError, IndexError, AssertionError) as exc:
            raise EngineError(NAME, self._spec_id, f"{type(exc).__name__}: {exc}") from exc

    def fill_mask(self, out: np.ndarray) -> None:
        if self._device is None:
            import torch

            self._device = torch.device("cpu")
        self._buffer.check(out)
        allowed = self._guarded(self._constraint.filter_vocab, self._state, self._device)
        bits = np.packbits(allowed.numpy(), bitorder="little")
        self._bytes[: bits.size] = bits  # the tail past the vocabulary stays zero
        out[:] = self._bytes.view(np.int32)

    def advance(self, token_id: int) -> bool:
        if token_id == self._vocab.eos_id or token_id in self._vocab.special_ids:
            return False
        if not 0 <= token_id < self._vocab.size or self._state.must_stop():
            return False  # it raises ValueError for any token but EOS once it must stop
        step = self._constraint._update_state_with_token_id
        state = self._guarded(step, token_id, self._state)
        if not state.stacks:  # no stack survived: the token is refused
            return False
        self._state = state
        return True

    def is_accepting(self) -> bool:
        return bool(self._state.can_stop())

    def reset(self) -> None:
        self._state = self._initial


class TCFGCompiled(Compiled):
    def __init__(self, constraint: Any, vocab: Vocabulary, spec_id: str) -> None:
        self._constraint = constraint
        self._vocab = vocab
        self._spec_id = spec_id

    def matcher(self) -> Matcher:
        return TCFGMatcher(self._constraint, self._vocab, self._spec_id)


# Its part of a mask repro script (harness.diff.findings.repro): its package, numpy, torch.
MASK_REPRO = """
def _constraint():
    import sys

    from transformers_cfg.grammar_utils import IncrementalGrammarConstraint
    from transformers_cfg.tokenization.byte_trie import ByteTrie
    from transformers_cfg.tokenization.middle.TokenizerMiddleMapping import (
        TokenizerMiddleMapping,
    )

    hidden = set(SPECIAL) | {EOS}

    class Mapping(TokenizerMiddleMapping):  # token bytes, with no hub download
        def __init__(self):
            self.eos_token_id, self.bos_token_id = EOS, None
            self.special, self._length = sorted(hidden), len(TOKENS)

        def map(self, token_id, verbose=False):
            return b"" if token_id in hidden else TOKENS[int(token_id)]

    class Tokenizer:  # what the constraint reads of a tokenizer, given a trie and mapping
        eos_token_id = EOS

    trie = ByteTrie()
    for i, t in enumerate(TOKENS):
        if i not in hidden:
            trie.insert(t, i)
    trie.vocab_size = len(TOKENS)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    return IncrementalGrammarConstraint(
        GRAMMAR, "root", Tokenizer(), trie=trie, homomorphism=Mapping()
    )


def _state(constraint):
    state = constraint.string_recognizer.get_initial_parsing_state()
    for t in PREFIX:
        state = constraint._update_state_with_token_id(t, state)
        assert state.stacks
    return state


def engine_mask():
    import torch

    constraint = _constraint()
    state = _state(constraint)
    allowed = constraint.filter_vocab(state, torch.device("cpu")).numpy()
    bits = np.packbits(allowed, bitorder="little")
    words = np.zeros(((len(TOKENS) + 31) // 32) * 4, dtype=np.uint8)
    words[: bits.size] = bits
    return words.view(np.int32), bool(state.can_stop()), None


def engine_advance(token):
    constraint = _constraint()
    state = _state(constraint)
    if token == EOS or token in SPECIAL or state.must_stop():
        return False
    return bool(constraint._update_state_with_token_id(token, state).stacks)
"""


class TCFGEngine(Engine):
    name = NAME
    extra = "transformers-cfg"
    module = "transformers_cfg"
    capabilities = Capabilities(
        regex=False,
        json_schema="no",
        # its "EBNF" is llama.cpp's GBNF (root rule `root`); Lark through our GBNF writer
        grammars=("gbnf", "ebnf"),
    )
    policies = Policies(json_whitespace="none")

    repro_package = "transformers-cfg"
    mask_repro = MASK_REPRO

    def version(self) -> str:
        from importlib.metadata import version

        import transformers_cfg  # noqa: F401  (version() must fail when the import does)

        return version("transformers-cfg")

    def prepare(self, vocab: Vocabulary) -> TCFGVocab:
        if sys.getrecursionlimit() < RECURSION_LIMIT:
            sys.setrecursionlimit(RECURSION_LIMIT)
        return TCFGVocab(vocab, tokenizer_of(vocab), homomorphism_of(vocab), trie_of(vocab))

    def compile(self, prepared: TCFGVocab, spec: Spec) -> TCFGCompiled:
        check_features(self, spec)
        from transformers_cfg.grammar_utils import IncrementalGrammarConstraint

        text, _ = self.grammar_read(spec)
        clear_caches()
        errors = ParseErrors()
        parser_log = logging.getLogger("transformers_cfg.parser")
        parser_log.addHandler(errors)
        try:
            constraint = IncrementalGrammarConstraint(
                text,
                START_RULE,
                prepared.tokenizer,
                trie=prepared.trie,
                homomorphism=prepared.homomorphism,
            )
            if errors.messages:  # its parser logged the error and went on with nothing
                raise RuntimeError(errors.messages[0])
        except RecursionError as exc:
            raise UnsupportedSpec(
                NAME, spec.id, "its stack expansion recurses without bound (left recursion?)"
            ) from exc
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # its parser raises RuntimeError, KeyError, AssertionError...
            message = errors.messages[0] if errors.messages else f"{type(exc).__name__}: {exc}"
            raise compile_failure(self, spec, message) from exc
        finally:
            parser_log.removeHandler(errors)
        return TCFGCompiled(constraint, prepared.vocab, spec.id)


def clear_caches() -> None:
    """Empty transformers-CFG's method caches (`functools.lru_cache` on its classes,
    keyed by instance, so they keep every constraint a process ever compiled and its
    masks, up to 32,768 of them): a compile starts from none, as in a fresh process, and
    one cell's masks neither speed up nor weigh on the next."""
    from transformers_cfg.recognizer import StringRecognizer
    from transformers_cfg.token_grammar_recognizer import IncrementalTokenRecognizer

    for cls in (StringRecognizer, IncrementalTokenRecognizer):
        for attr in vars(cls).values():
            if callable(getattr(attr, "cache_clear", None)):
                attr.cache_clear()


class ParseErrors(logging.Handler):
    """The errors transformers-CFG's parser logs: `parse_ebnf` catches its own
    RuntimeError, logs it as a warning and returns an empty grammar, which the
    constraint then fails on with an unrelated TypeError (or, had the start rule been
    read before the error, would compile a truncated grammar)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        self.messages.append(" ".join([str(record.msg), *map(str, args)]))
