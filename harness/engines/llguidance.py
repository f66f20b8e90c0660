"""llguidance: a lazy Earley parser over a lexer; masks are computed on demand per state.

Quirks of 1.9.1, normalized here:
- Nothing raises on a bad grammar or a refused token: the matcher enters a permanent error
  state (even `reset()` does not leave it). Compile checks `is_error()`; `advance` asks
  `validate_tokens` first, so a refused token returns False and leaves the state as it
  was, as the interface requires.
- Compile is lazy (about 1 ms); the real work happens at the first mask of each state, and
  a second fill at the same state is served from a cache. That is why the bench times
  exactly one fill per step.
- Its tokenizer callback receives bytes (its `TokenizerWrapper` encodes a Python str as
  UTF-8) and must return the canonical tokenization: text the grammar forces is allowed
  only in that tokenization (policy `canonical_forced`). It gets the vocabulary's real
  encoder, or the greedy longest-match one for a vocabulary without one.
- It writes no bits past the vocabulary, sets EOS when accepting, and its `is_accepting`
  is valid without a fill.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.engines.base import Capabilities, Compiled, Engine, Matcher, Policies, Policy
from harness.engines.support import (
    MaskBuffer,
    check_batch_buffer,
    check_features,
    clean_message,
    compile_failure,
    per_process,
)
from harness.errors import EngineError
from harness.spec import Spec
from harness.vocab import GreedyEncoder, Vocabulary

if TYPE_CHECKING:  # llguidance itself is imported only inside the methods
    from llguidance._lib import JsonCompileOptions

NAME = "llguidance"

# Whitespace between JSON tokens: any run of JSON whitespace (its default, made explicit
# so that a change of default upstream cannot silently change the language compared).
JSON_OPTIONS: JsonCompileOptions = {"whitespace_flexible": True}
# The JSON text its schemas compile to (measured on 1.9.1 with a one-byte vocabulary):
# that whitespace; strings escaping exactly `"`, `\\`, U+0000-U+001F and U+007F (`"` and
# `\\` only in short form); declared keys in one spelling (as json.dumps writes them);
# an exponent only on numbers without bounds or multipleOf; integers never with a
# fraction; zero never with a minus sign on a bounded number; keys an object does not
# declare take every `\\uXXXX` escape (its general Unicode escapes, which its
# documentation says are off by default). Left for the differ to report: such an
# escaped key that spells a declared one (`{"\\u0061": "x"}` where `a` must be an
# integer) is taken as undeclared, so an invalid instance gets through.
JSON_DIALECT = (
    ("whitespace", "any"),
    ("escapes", "minimal"),
    ("numbers", "exponent-when-unbounded"),
    ("integers", "no-fraction"),
    ("negative_zero", "unbounded-only"),
    ("keys", "canonical"),
    ("undeclared_keys", "minimal-unicode"),
)


class TokenizerSource:
    """The object llguidance's `TokenizerWrapper` reads its vocabulary and encoder from."""

    def __init__(self, vocab: Vocabulary) -> None:
        self.eos_token_id = vocab.eos_id
        self.bos_token_id = None
        self.tokens = list(vocab.tokens)
        # Empty tokens are never text in the reference; marking them special keeps them
        # out of every mask here too.
        empty = {i for i, t in enumerate(vocab.tokens) if not t}
        self.special_token_ids = sorted(vocab.special_ids | empty | {vocab.eos_id})
        self._encode: Callable[[str], list[int]] = (
            vocab.encode
            if vocab.encoder_factory is not None
            else GreedyEncoder(vocab.tokens, frozenset(self.special_token_ids))
        )

    def __call__(self, data: bytes | str) -> list[int]:
        # `TokenizerWrapper` passes a Python str encoded as UTF-8 (so strict decoding
        # cannot fail), or the str itself if a probe call with bytes raised. If the encoder
        # raises, llguidance catches it and enters its error state, which the matcher
        # reports as an EngineError: nothing is papered over.
        text = data if isinstance(data, str) else data.decode("utf-8")
        return list(self._encode(text))


@dataclass(frozen=True)
class LLGuidanceVocab:
    vocab: Vocabulary
    tokenizer: Any  # llguidance.LLTokenizer


class LLGuidanceMatcher(Matcher):
    __slots__ = ("_buffer", "_eos_id", "_matcher", "_nbytes", "_spec_id", "_taken")

    def __init__(self, matcher: Any, vocab: Vocabulary, spec_id: str) -> None:
        self._matcher = matcher
        self._eos_id = vocab.eos_id
        self._nbytes = vocab.mask_words * 4
        self._spec_id = spec_id
        self._buffer = MaskBuffer(NAME, spec_id, vocab.mask_words)
        self._taken = 0  # tokens taken since the start or the last reset

    def fill_mask(self, out: np.ndarray) -> None:
        pointer = self._buffer.pointer(out)
        try:
            self._matcher.unsafe_compute_mask_ptr(pointer, self._nbytes)
        except (ValueError, RuntimeError, TypeError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc
        self.check_error()

    @property
    def native(self) -> Any:
        """The LLMatcher (a batch step hands it to llguidance's executor)."""
        return self._matcher

    def check_error(self) -> None:
        """A resource limit hit while computing the mask leaves an error state and a mask
        that is not the grammar's: report it instead of returning a wrong answer."""
        if self._matcher.is_error():
            raise EngineError(NAME, self._spec_id, clean_message(self._matcher.get_error()))

    def advance(self, token_id: int) -> bool:
        if token_id == self._eos_id:
            return False
        try:
            if self._matcher.validate_tokens([token_id]) != 1:
                return False
            consumed = self._matcher.consume_token(token_id)
        except (ValueError, OverflowError, TypeError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc
        if not consumed:
            raise EngineError(NAME, self._spec_id, clean_message(self._matcher.get_error()))
        self._taken += 1
        return True

    def validate(self, tokens: Sequence[int]) -> int | None:
        """Through `LLMatcher.validate_tokens`, as a speculative decoder checks a draft."""
        try:
            return int(self._matcher.validate_tokens(list(tokens)))
        except (ValueError, OverflowError, TypeError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc

    def rollback(self, count: int) -> bool:
        """Through `LLMatcher.rollback`, as a speculative decoder calls it."""
        if count < 0 or count > self._taken:
            return False
        try:
            ok = bool(self._matcher.rollback(count))
        except (ValueError, OverflowError, TypeError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc
        if not ok:
            raise EngineError(NAME, self._spec_id, clean_message(self._matcher.get_error()))
        self._taken -= count
        return True

    def is_accepting(self) -> bool:
        return bool(self._matcher.is_accepting())

    def reset(self) -> None:
        self._matcher.reset()
        self._taken = 0

    def forced_text(self) -> bytes | None:
        return bytes(self._matcher.compute_ff_bytes())


class LLGuidanceCompiled(Compiled):
    """The grammar plus one matcher built at compile time (that build is the compile)."""

    def __init__(self, prepared: LLGuidanceVocab, grammar: str, first: Any, spec_id: str):
        self._prepared = prepared
        self._grammar = grammar
        self._unused: Any | None = first
        self._spec_id = spec_id

    def matcher(self) -> Matcher:
        # Each matcher gets its own LLMatcher, so no lazily computed mask of an earlier
        # matcher can make a later one look fast.
        native = self._unused
        self._unused = None
        if native is None:
            from llguidance import LLMatcher

            native = LLMatcher(self._prepared.tokenizer, self._grammar, log_level=0)
        return LLGuidanceMatcher(native, self._prepared.vocab, self._spec_id)


# Its part of a mask repro script (harness.diff.findings.repro): its package and numpy only.
MASK_REPRO = (
    (
        "\n# the options the harness compiles schemas with\nJSON_OPTIONS = "
        + repr(JSON_OPTIONS)
        + "\n"
    )
    + """
def _greedy(data):
    # longest match, the tokenization this tiny vocabulary has
    if isinstance(data, str):
        data = data.encode()
    out, i = [], 0
    while i < len(data):
        best = max(
            (j for j, t in enumerate(TOKENS) if j not in SPECIAL and t and data.startswith(t, i)),
            key=lambda j: len(TOKENS[j]),
        )
        out.append(best)
        i += len(TOKENS[best])
    return out


class _Source:
    eos_token_id = EOS
    bos_token_id = None
    tokens = TOKENS
    special_token_ids = SPECIAL

    def __call__(self, data):
        return _greedy(data)


def _matcher():
    import llguidance

    tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Source()), n_vocab=len(TOKENS))
    if GRAMMAR is not None:
        # as the harness compiles a grammar: Lark as it is, GBNF and EBNF through
        # llguidance's own converter
        grammar = llguidance.grammar_from("lark" if NOTATION == "lark" else "gbnf", GRAMMAR)
    elif SCHEMA is None:
        grammar = llguidance.LLMatcher.grammar_from_regex(REGEX)
    else:
        grammar = llguidance.LLMatcher.grammar_from_json_schema(SCHEMA, overrides=JSON_OPTIONS)
    matcher = llguidance.LLMatcher(tokenizer, grammar, log_level=0)
    if HISTORY:
        # what the matcher did before the reset the bug needs
        scratch = np.zeros((len(TOKENS) + 31) // 32, dtype=np.int32)
        for op in HISTORY:
            if op == FILL:
                matcher.unsafe_compute_mask_ptr(scratch.ctypes.data, scratch.nbytes)
            elif op == RESET:
                matcher.reset()
            else:
                assert matcher.consume_token(op), matcher.get_error()
        matcher.reset()
    for t in PREFIX:
        assert matcher.consume_token(t), matcher.get_error()
    return matcher


def engine_mask():
    matcher = _matcher()
    mask = np.zeros((len(TOKENS) + 31) // 32, dtype=np.int32)
    matcher.unsafe_compute_mask_ptr(mask.ctypes.data, mask.nbytes)
    return mask, matcher.is_accepting(), None


def engine_advance(token):
    return _matcher().validate_tokens([token]) == 1
"""
)

# Its part of a protocol repro script (harness.diff.findings.repro): the matcher as a
# server drives it, through llguidance's own calls.
PROTOCOL_REPRO = """

class _New:
    def __init__(self):
        self.m = _bare(_matcher)

    def take(self, t):
        return t != EOS and self.m.validate_tokens([t]) == 1 and self.m.consume_token(t)

    def fill(self, mask):
        self.m.unsafe_compute_mask_ptr(mask.ctypes.data, mask.nbytes)

    def accepting(self):
        return self.m.is_accepting()

    def reset(self):
        self.m.reset()

    def rollback(self, count):
        return self.m.rollback(count)

    def validate(self, draft):
        return self.m.validate_tokens(list(draft))

    def batch(self, other, rows):
        import llguidance

        executor = llguidance.LLExecutor(num_threads=2)
        pairs = [(self.m, 0), (other.m, 1)]
        executor.unsafe_compute_mask_ptr(pairs, rows.ctypes.data, rows.shape[1] * 4, 2)


_new = _New
"""

# The engine's part of an instance repro script (harness.diff.findings.instance_repro).
INSTANCE_REPRO = """
def accepts(text):
    import llguidance

    data = text.encode()
    tokens = [b"<eos>"] + sorted({bytes([b]) for b in data})

    class Source:
        eos_token_id = 0
        bos_token_id = None
        special_token_ids = [0]

        def __init__(self):
            self.tokens = tokens

        def __call__(self, s):
            s = s.encode() if isinstance(s, str) else s
            return [tokens.index(bytes([b])) for b in s]

    tok = llguidance.LLTokenizer(llguidance.TokenizerWrapper(Source()), n_vocab=len(tokens))
    grammar = llguidance.LLMatcher.grammar_from_json_schema(
        json.dumps(SCHEMA), overrides={"whitespace_flexible": True}
    )
    m = llguidance.LLMatcher(tok, grammar, log_level=0)
    for b in data:
        t = tokens.index(bytes([b]))
        if m.validate_tokens([t]) != 1 or not m.consume_token(t):
            return False
    return bool(m.is_accepting())
"""


class LLGuidanceEngine(Engine):
    name = NAME
    extra = "llguidance"
    module = "llguidance"
    jump_forward = True
    capabilities = Capabilities(
        regex=True,
        json_schema="native",
        unsupported_features=frozenset({"lookaround", "backreference"}),
        # Lark (its dialect); GBNF and EBNF through its own converter (`gbnf_to_lark`)
        grammars=("lark", "gbnf", "ebnf"),
    )
    policies = Policies(
        mask=(Policy.CANONICAL_FORCED, Policy.GREEDY_LEXEMES),
        json_whitespace="flexible",
        json_dialect=JSON_DIALECT,
    )

    repro_package = "llguidance"
    mask_repro = MASK_REPRO
    protocol_repro = PROTOCOL_REPRO
    instance_repro = INSTANCE_REPRO
    instance_repro_target = "llguidance"
    instance_repro_package = "llguidance"

    batch_api = "llguidance LLExecutor.unsafe_compute_mask_ptr (fill_next_token_bitmask_par)"
    rollback = True

    def version(self) -> str:
        import llguidance

        return str(llguidance.__version__)

    def fill_batch(self, matchers: Sequence[Matcher], out: np.ndarray, threads: int = 1) -> None:
        """Through llguidance's executor of `threads` threads, as vLLM and SGLang call it
        (`fill_next_token_bitmask_par`): one call for the batch, rows by index."""
        batch = [m for m in matchers if isinstance(m, LLGuidanceMatcher)]
        if len(batch) != len(matchers):
            raise EngineError(NAME, "<batch>", "a batch of matchers this engine did not make")
        words = out.shape[-1] if isinstance(out, np.ndarray) else 0
        check_batch_buffer(NAME, out, len(batch), words)
        executor = per_process(_EXECUTORS, threads, _executor)
        pairs = [(m.native, row) for row, m in enumerate(batch)]
        try:
            executor.unsafe_compute_mask_ptr(pairs, out.ctypes.data, words * 4, len(batch))
        except (ValueError, RuntimeError, TypeError) as exc:
            raise EngineError(NAME, "<batch>", str(exc)) from exc
        for m in batch:
            m.check_error()

    def prepare(self, vocab: Vocabulary) -> LLGuidanceVocab:
        from llguidance import LLTokenizer, TokenizerWrapper

        tokenizer = LLTokenizer(TokenizerWrapper(TokenizerSource(vocab)), n_vocab=vocab.size)
        return LLGuidanceVocab(vocab=vocab, tokenizer=tokenizer)

    def lexer_reading(self, spec: Spec) -> tuple[str, str]:
        """A GBNF or EBNF grammar is lexed as llguidance's own converter writes it in
        Lark (`grammar_from("gbnf", ...)`: rules of terminals only become lexemes)."""
        if spec.notation == "lark":
            return spec.text, "lark"
        return _grammar(self, spec), "lark"

    def compile(self, prepared: LLGuidanceVocab, spec: Spec) -> LLGuidanceCompiled:
        from llguidance import LLMatcher

        check_features(self, spec)
        if spec.kind == "regex":
            grammar = LLMatcher.grammar_from_regex(spec.text)
        elif spec.kind == "grammar":
            grammar = _grammar(self, spec)
        else:
            try:
                grammar = LLMatcher.grammar_from_json_schema(spec.text, overrides=JSON_OPTIONS)
            except (ValueError, TypeError) as exc:  # the text is not a JSON object
                raise compile_failure(self, spec, str(exc)) from exc
        try:
            native = LLMatcher(prepared.tokenizer, grammar, log_level=0)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # documented never to raise; a panic still might
            raise compile_failure(self, spec, f"{type(exc).__name__}: {exc}") from exc
        if native.is_error():
            raise compile_failure(self, spec, native.get_error())
        return LLGuidanceCompiled(prepared, grammar, native, spec.id)


# llguidance's executors (thread pools) of this process, by (pid, threads)
_EXECUTORS: dict[tuple[int, int], Any] = {}


def _executor(threads: int) -> Any:
    from llguidance import LLExecutor

    return LLExecutor(num_threads=threads)


def _grammar(engine: Engine, spec: Spec) -> str:
    """llguidance's grammar of a grammar spec: Lark as given, GBNF and EBNF through
    llguidance's own converter (`llguidance.grammar_from`, which reads either), whose
    failures are the engine's."""
    from llguidance import LLMatcher, grammar_from

    try:
        if spec.notation == "lark":
            return str(LLMatcher.grammar_from_lark(spec.text))
        return str(grammar_from("gbnf", spec.text))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # its converter's ValueError, a panic
        raise compile_failure(engine, spec, f"{type(exc).__name__}: {exc}") from exc
