"""Formatron: grammars built by its front ends (a regex extractor, a JSON-schema
converter) and run by `kbnf`, an Earley recognizer over raw bytes with regexes compiled
to DFAs (Rust).

Driven here through `kbnf.InternalEngine` (what Formatron's `Formatter` wraps) over a
`kbnf.Vocabulary` of raw token bytes, with the grammar Formatron itself writes:
`RegexExtractor(regex).kbnf_definition`, or its `JsonExtractor` of
`formatron.schemas.json_schema.create_schema(schema)`, under `start ::= <nonterminal>;`,
exactly what `FormatterBuilder` builds for one extractor. Quirks of formatron 0.5.0 /
kbnf 0.4.2, normalized or declared here:
- KBNF "ends eagerly" (documented): the engine is finished, and takes no further token,
  at the first token boundary where the start rule is complete, and the empty text is
  never complete. There is no EOS in its grammar: Formatron's integrations allow EOS
  alone once it is finished. So where the text so far is a complete, non-empty match,
  only EOS is allowed, even if the pattern could go on (`[0-9]+` ends after its first
  token); a token may still pass through a complete match within its own bytes. Declared
  as `eager_end`. A JSON object or array ends at its closing bracket anyway. Bug of
  kbnf 0.4.2: a token that passes through a complete match inside its bytes also ends
  the text, where its last byte leaves none (`a(bc)?` with the token "ab": finished at
  "ab"); left visible.
- EOS, special ids and empty tokens are left out of its vocabulary (so a special id's
  name is never text); EOS is set in the mask exactly when it is finished.
- Its mask comes from `fill_torch_bitmask`, which copies its 64-bit bitset (sized by
  the largest id it knows) over the buffer: it writes up to one int32 word past
  `ceil(V / 32)` words, so it writes into the caller's buffer only when that fits, and
  otherwise into a scratch buffer that is then copied.
- A refused token raises ValueError, documented to leave the state unchanged; it does
  not (kbnf 0.4.2 bug): when the token's first bytes fit, the engine stays as if they had
  been consumed (`[a-z]{2,5}@...` after "r": refusing "bssmbhbrej" makes it allow "@").
  So `advance` first checks the token against the mask of the current state (computing
  it if no fill did, `check_if_token_is_allowed` reads the last one), as llguidance's
  adapter does; a token the mask allows is then accepted. Ids it does not know (EOS,
  specials) are refused the same way.
- Regexes are first compiled by Python's `re` (Formatron keeps it to extract captures),
  so Rust-only syntax such as `\\p{L}` or `\\z` is refused there; then by the Rust regex
  crate, with Unicode `\\d \\w \\s`, no look-arounds or back-references, and no Unicode
  `\\b`.
- JSON (`create_schema`): the root must be an object or array; `$id` and `$schema` are
  required, so the adapter adds, when absent, `$id` (a fixed URI) and the 2020-12
  `$schema` it validates against (the reference's default draft too). Object keys come
  in the schema's order, extra keys are never allowed (it assumes `additionalProperties:
  false`), whitespace is `[ \\t\\n]*` before each token (no `\\r`, nothing after the
  value), and `\\/` is not among its string escapes. Bug of formatron 0.5.0: a property
  name or enum string holding `'` or `\\` gives a grammar kbnf cannot read (it quotes
  with `repr` inside `#'...'`), reported as UnsupportedSpec since the schema is valid.
- formatron 0.5.0 (and every release before it) does `from pydantic import typing`
  meaning the standard `typing` module, which is what that import gave up to pydantic
  2.11; from 2.12 it gives pydantic's v1 backport module, which lacks `Type`, and
  importing its JSON front end fails (Dan-wanna-M/formatron#35, open). The shared
  environment needs pydantic >= 2.12 (mistral-common), so `pydantic_compat` restores
  the old binding (`pydantic.typing` = the standard module) before formatron is
  imported; nothing else is changed, and the regex front end never needed it.
- kbnf logs warnings (bytes no token covers, duplicate tokens) through `logging`; the
  `kbnf` logger is set to ERROR in `prepare` so they do not flood a worker's stderr.
"""

from __future__ import annotations

import copy
import json
import logging
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from harness.engines.base import (
    Capabilities,
    Compiled,
    Engine,
    Matcher,
    Policies,
    Policy,
    SchemaPolicy,
)
from harness.engines.support import MaskBuffer, check_features, clean_message, compile_failure
from harness.errors import EngineError, UnsupportedSpec
from harness.language import grammar as language_grammar
from harness.spec import Spec
from harness.vocab import Vocabulary

NAME = "formatron"
DISTRIBUTION = "formatron"
NONTERMINAL = "__tokensieve_0"
# What `create_schema` needs and a corpus schema may lack.
SCHEMA_ID = "https://tokensieve.invalid/schema.json"
DEFAULT_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def pydantic_compat() -> None:
    """Make `from pydantic import typing` give the standard `typing` module again, as it
    did up to pydantic 2.11, where formatron relies on it (see the module doc)."""
    import typing

    import pydantic

    bound: ModuleType | None
    try:
        from pydantic import typing as bound
    except ImportError:
        bound = None
    if bound is not typing and not hasattr(bound, "Type"):
        pydantic.typing = typing


def grammar(spec: Spec) -> str:
    """The KBNF grammar Formatron writes for `spec` (raises what its front ends raise)."""
    if spec.kind == "regex":
        from formatron.formats.regex import RegexExtractor

        with warnings.catch_warnings():  # `re`'s FutureWarning on `[[`: noise, not an error
            warnings.simplefilter("ignore")
            extractor: Any = RegexExtractor(spec.text, None, NONTERMINAL)
    else:
        pydantic_compat()
        from formatron.formats.json import JsonExtractor
        from formatron.schemas.json_schema import create_schema

        schema = json.loads(spec.text)
        if not isinstance(schema, dict):
            raise ValueError(f"a schema must be a JSON object, got {type(schema).__name__}")
        schema = {"$id": SCHEMA_ID, "$schema": DEFAULT_DRAFT, **schema}
        extractor = JsonExtractor(NONTERMINAL, None, create_schema(schema), lambda s: s)
    return f"{extractor.kbnf_definition}\nstart ::= {extractor.nonterminal};"


@dataclass(frozen=True)
class FormatronVocab:
    vocab: Vocabulary
    native: Any  # kbnf.Vocabulary
    known_words: int  # int32 words fill_torch_bitmask writes: 2 * ceil((max id + 1) / 64)


class FormatronMatcher(Matcher):
    __slots__ = (
        "_buffer",
        "_computed",
        "_direct",
        "_engine",
        "_eos_id",
        "_eos_word",
        "_finished",
        "_known",
        "_scratch",
        "_size",
        "_spec_id",
        "_words",
    )

    def __init__(self, engine: Any, prepared: FormatronVocab, spec_id: str) -> None:
        vocab = prepared.vocab
        self._engine = engine
        self._eos_id = vocab.eos_id
        bit = 1 << (vocab.eos_id & 31)
        self._eos_word = bit - (1 << 32) if bit >= 1 << 31 else bit  # as an int32
        self._spec_id = spec_id
        self._words = vocab.mask_words
        self._buffer = MaskBuffer(NAME, spec_id, vocab.mask_words)
        self._known = prepared.known_words
        self._direct = prepared.known_words <= vocab.mask_words
        self._scratch = None if self._direct else np.zeros(prepared.known_words, dtype=np.int32)
        self._finished = bool(engine.is_finished())
        self._size = vocab.size
        self._computed = False  # whether its last computed mask is this state's

    def fill_mask(self, out: np.ndarray) -> None:
        pointer = self._buffer.pointer(out)
        if self._finished:
            out.fill(0)
            out[self._eos_id >> 5] = self._eos_word
            return
        engine = self._engine
        try:
            engine.compute_allowed_token_ids()
            self._computed = True
            if self._direct:
                engine.fill_torch_bitmask(pointer)
                if self._known < self._words:
                    out[self._known :] = 0  # ids past the largest it knows: never written
            else:
                scratch = self._scratch
                assert scratch is not None
                engine.fill_torch_bitmask(scratch.ctypes.data)
                out[:] = scratch[: self._words]
        except (ValueError, RuntimeError, TypeError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc

    def advance(self, token_id: int) -> bool:
        if token_id == self._eos_id or self._finished or not 0 <= token_id < self._size:
            return False
        engine = self._engine
        try:
            if not self._computed:
                engine.compute_allowed_token_ids()
                self._computed = True
            # A refused token must never reach try_accept_new_token (see the module doc).
            if not engine.check_if_token_is_allowed(token_id):
                return False
            result = engine.try_accept_new_token(token_id)
        except ValueError:
            # Its mask allows the token but it refuses it: the differ's mask-advance
            # mismatch (its state may have moved, as with any refusal).
            return False
        except (TypeError, OverflowError, RuntimeError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc
        import kbnf

        self._computed = False
        self._finished = result == kbnf.AcceptTokenResult.Finished
        return True

    def is_accepting(self) -> bool:
        return self._finished

    def reset(self) -> None:
        self._engine.reset()  # its caches survive a reset, by design
        self._finished = bool(self._engine.is_finished())
        self._computed = False


class FormatronCompiled(Compiled):
    """The grammar and the engine built from it at compile time (that build is the
    compile), never driven itself: each matcher drives a copy."""

    def __init__(self, prepared: FormatronVocab, grammar_text: str, engine: Any, spec_id: str):
        self.grammar = grammar_text
        self._prepared = prepared
        self._pristine = engine
        self._spec_id = spec_id

    def matcher(self) -> Matcher:
        # A copy (`InternalEngine.__copy__`, a Rust clone: about 50 us where a new engine
        # takes 0.1-1 s on a 128k vocabulary) shares the compiled grammar and its regex
        # tables, and gets its own state and its own, empty, mask cache: no cache of an
        # earlier walk can make a later one look fast.
        return FormatronMatcher(copy.copy(self._pristine), self._prepared, self._spec_id)


# The engine's part of a mask repro script (harness.diff.findings.repro): its packages and numpy.
MASK_REPRO = """
def _engine():
    import kbnf
    from formatron.formats.regex import RegexExtractor

    ids = [i for i, t in enumerate(TOKENS) if i not in SPECIAL and t]
    vocab = kbnf.Vocabulary(
        {i: kbnf.Token(TOKENS[i]) for i in ids},
        {i: TOKENS[i].decode("utf-8", "replace") for i in ids},
    )
    if GRAMMAR is not None:
        grammar = GRAMMAR  # the KBNF tokensieve wrote of the grammar
    else:
        extractor = RegexExtractor(REGEX, None, "__regex_0")
        grammar = extractor.kbnf_definition + "\\nstart ::= " + extractor.nonterminal + ";"
    engine = kbnf.InternalEngine(grammar, vocab, None)
    finished = False
    for t in PREFIX:
        finished = engine.try_accept_new_token(t) == kbnf.AcceptTokenResult.Finished
    return engine, finished


def engine_mask():
    engine, finished = _engine()
    mask = np.zeros(((len(TOKENS) + 63) // 64) * 2, dtype=np.int32)
    if finished:  # its integrations then allow EOS alone
        mask[EOS // 32] |= 1 << (EOS % 32)
    else:
        engine.compute_allowed_token_ids()
        engine.fill_torch_bitmask(mask.ctypes.data)
    return mask[: (len(TOKENS) + 31) // 32], finished, None


def engine_advance(token):
    engine, finished = _engine()
    if finished:
        return False
    try:
        engine.try_accept_new_token(token)
    except ValueError:
        return False
    return True
"""

# The engine's part of an instance repro script (harness.diff.findings.instance_repro).
INSTANCE_REPRO = """
def accepts(text):
    import typing

    import pydantic

    try:
        from pydantic import typing as bound
    except ImportError:
        bound = None
    if bound is not typing and not hasattr(bound, "Type"):
        pydantic.typing = typing  # formatron means the standard module (formatron#35)
    import kbnf
    from formatron.formats.json import JsonExtractor
    from formatron.schemas.json_schema import create_schema

    data = text.encode()
    tokens = sorted({bytes([b]) for b in data})  # ids from 1; EOS (id 0) is never text
    vocab = kbnf.Vocabulary(
        {i + 1: kbnf.Token(t) for i, t in enumerate(tokens)},
        {i + 1: t.decode("latin-1") for i, t in enumerate(tokens)},
    )
    schema = {
        "$id": "https://tokensieve.invalid/schema.json",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **SCHEMA,
    }
    try:
        extractor = JsonExtractor("__json_0", None, create_schema(schema), lambda s: s)
        grammar = extractor.kbnf_definition + "\\nstart ::= " + extractor.nonterminal + ";"
        engine = kbnf.InternalEngine(grammar, vocab, None)
    except Exception as exc:  # no grammar: it takes no text at all
        print("formatron cannot build this schema:", repr(f"{type(exc).__name__}: {exc}"[:200]))
        return False
    finished = False
    for b in data:
        if finished:
            return False
        try:
            result = engine.try_accept_new_token(tokens.index(bytes([b])) + 1)
        except ValueError:
            return False
        finished = result == kbnf.AcceptTokenResult.Finished
    return finished
"""


class FormatronEngine(Engine):
    name = NAME
    extra = "formatron"
    module = "formatron"
    capabilities = Capabilities(
        regex=True,
        json_schema="native",
        # The Rust regex crate has neither; Python's `re` would take both first.
        unsupported_features=frozenset({"lookaround", "backreference"}),
        # every notation, as the KBNF tokensieve writes of it (`grammar_read`): kbnf reads
        # KBNF only, and Formatron has no grammar front end of its own
        grammars=("gbnf", "lark", "ebnf"),
    )
    policies = Policies(
        mask=(Policy.EAGER_END,),
        json_whitespace="flexible",
        # keys in the schema's order, no undeclared keys (see the module doc)
        json_schema=(SchemaPolicy.ADDITIONAL_PROPERTIES_FALSE, SchemaPolicy.KEYS_IN_SCHEMA_ORDER),
    )
    # Only EOS once the text is a complete non-empty match (see the module doc).

    repro_package = "formatron (with kbnf)"
    mask_repro = MASK_REPRO
    instance_repro = INSTANCE_REPRO
    instance_repro_target = NAME
    instance_repro_package = "formatron"

    def version(self) -> str:
        from importlib.metadata import version

        pydantic_compat()
        import formatron.formatter  # noqa: F401  (imports kbnf too: fail when either does)

        return f"{version(DISTRIBUTION)} (kbnf {version('kbnf')})"

    def prepare(self, vocab: Vocabulary) -> FormatronVocab:
        import kbnf

        logging.getLogger("kbnf").setLevel(logging.ERROR)
        hidden = vocab.special_ids | {vocab.eos_id}
        ids = [i for i, t in enumerate(vocab.tokens) if i not in hidden and t]
        native = kbnf.Vocabulary(
            {i: kbnf.Token(vocab.tokens[i]) for i in ids},
            {i: vocab.tokens[i].decode("utf-8", "replace") for i in ids},
        )
        known = max(ids, default=-1) + 1
        return FormatronVocab(vocab=vocab, native=native, known_words=2 * ((known + 63) // 64))

    def grammar_read(self, spec: Spec) -> tuple[str, str]:
        """The KBNF tokensieve's writer makes of grammar `spec` (scannerless like the
        reference; `%ignore` made explicit). A grammar it cannot write is unsupported."""
        try:
            return language_grammar.to_kbnf(spec.text, str(spec.notation)), "kbnf"
        except ValueError as exc:  # the extension's GrammarError or LimitError
            raise UnsupportedSpec(
                self.name, spec.id, f"tokensieve's KBNF writer: {clean_message(str(exc))}"
            ) from exc

    def compile(self, prepared: FormatronVocab, spec: Spec) -> FormatronCompiled:
        import kbnf

        check_features(self, spec)
        try:
            text = self.grammar_read(spec)[0] if spec.kind == "grammar" else grammar(spec)
            engine = kbnf.InternalEngine(text, prepared.native, None)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # re.error, jsonschema errors, kbnf's ValueError, panics
            raise compile_failure(self, spec, f"{type(exc).__name__}: {exc}") from exc
        return FormatronCompiled(prepared, text, engine, spec.id)
