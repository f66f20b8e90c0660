"""lm-format-enforcer: character-level parsers walked against a prefix tree of the
vocabulary's decoded token strings (pure Python; a vLLM backend).

It never sees bytes. Its tokenizer data is a list of (token id, decoded text, word-start
flag) built here from the canonical vocabulary, and every step it walks the prefix tree
of those texts with the parser, returning a Python list of allowed ids (EOS included
when the parser can end). Quirks of 0.11.3, normalized or declared here:
- Tokens that are not valid UTF-8 on their own (byte fragments of a character: 1,352 of
  llama3's ordinary tokens, 1,435 of tekken's, 344 of gpt2's) have no text to put in its
  tree, so they are left out of its vocabulary: it never allows them (declared
  `utf8_tokens_only`; the reference allows a fragment wherever some continuation
  completes a match). Its own Hugging Face glue decodes them to U+FFFD instead, which
  makes them look like a real character wherever the pattern allows one; leaving them
  out is the exact reading of its design. Every kept token is a word start, so the text
  consumed is exactly the token's bytes.
- Special ids and empty tokens are left out too; EOS is its `eos_token_id`. A vocabulary
  with no token it can put inside a JSON string (only ever a tiny one) makes it assert
  while building its tokenizer data: EngineError from `prepare`.
- The int32 bitmask is built from its allowed-id list at every fill (what its vLLM
  glue does with the list every step); its own bitmask mode needs torch.
- Its API is `get_allowed_tokens(token_sequence)`: the first sequence it is asked about
  is taken for the prompt and each later one must extend a sequence it has seen, so a
  matcher asks about every prefix in turn (each `advance` checks the token against the
  current mask first).
- Within one matcher it caches the allowed list per token prefix and per parser state,
  so a second fill at a state costs nothing; a matcher (and `reset`) starts a fresh
  `TokenEnforcer`, so nothing an earlier walk computed is reused.
- `is_accepting` is "EOS is in its allowed list": where a parser error makes it give up,
  it logs the traceback and allows EOS alone, and that is what a model would see.
- A refused token is checked against the mask before it reaches the engine: fed a
  character its parser refuses, it switches to a parser that accepts EOS at once.
- Regexes go through `interegular`: `\\d \\w \\s` are ASCII classes (`\\s` is
  `[ \\t\\n\\r\\f\\v]`, the default ASCII table); anchors, `\\b`, `\\p{..}`, back-references
  are refused at compile; look-arounds compile but mean something else, so the adapter
  refuses them first.
- JSON: its defaults are pinned (they are otherwise read from `LMFE_*` environment
  variables): at most 12 consecutive whitespace characters of `[ \\t\\n\\r]` between
  tokens, arrays without `maxItems` capped at 20 items, object keys in any order.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
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
from harness.engines.support import MaskBuffer, check_features, compile_failure
from harness.errors import EngineError
from harness.spec import Spec
from harness.vocab import Vocabulary

NAME = "lm-format-enforcer"
DISTRIBUTION = "lm-format-enforcer"

# Its JSON defaults (lmformatenforcer.consts), pinned so that no LMFE_* environment
# variable of a worker changes the language compared.
MAX_CONSECUTIVE_WHITESPACES = 12
MAX_JSON_ARRAY_LENGTH = 20
FORCE_JSON_FIELD_ORDER = False


def _text(token: bytes) -> str | None:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        return None


def utf8_token_ids(vocab: Vocabulary) -> list[int]:
    """The ids handed to the engine: ordinary, non-empty and valid UTF-8 on their own."""
    hidden = vocab.special_ids | {vocab.eos_id}
    return [i for i, t in enumerate(vocab.tokens) if i not in hidden and t and _text(t) is not None]


@dataclass(frozen=True)
class LMFEVocab:
    vocab: Vocabulary
    data: Any  # lmformatenforcer.TokenEnforcerTokenizerData


class LMFEMatcher(Matcher):
    __slots__ = (
        "_bits",
        "_buffer",
        "_enforcer",
        "_eos_id",
        "_new_enforcer",
        "_spec_id",
        "_tokens",
        "_words",
    )

    def __init__(self, new_enforcer: Callable[[], Any], vocab: Vocabulary, spec_id: str):
        self._new_enforcer = new_enforcer
        self._enforcer = new_enforcer()
        self._eos_id = vocab.eos_id
        self._spec_id = spec_id
        self._buffer = MaskBuffer(NAME, spec_id, vocab.mask_words)
        self._bits = np.zeros(vocab.mask_words * 32, dtype=np.bool_)
        self._tokens: list[int] = []
        self._words: np.ndarray | None = None  # the mask at the current state, once built

    def _mask(self) -> np.ndarray:
        if self._words is None:
            try:
                allowed = self._enforcer.get_allowed_tokens(self._tokens).allowed_tokens
            except Exception as exc:  # its LMFormatEnforcerException, a schema it chokes on
                raise EngineError(NAME, self._spec_id, f"{type(exc).__name__}: {exc}") from exc
            bits = self._bits
            bits.fill(False)
            bits[np.fromiter(allowed, dtype=np.intp, count=len(allowed))] = True
            self._words = np.packbits(bits, bitorder="little").view(np.int32)
        return self._words

    def fill_mask(self, out: np.ndarray) -> None:
        self._buffer.pointer(out)  # validated once per buffer
        out[:] = self._mask()

    def advance(self, token_id: int) -> bool:
        if token_id == self._eos_id or not 0 <= token_id < self._bits.size:
            return False
        words = self._mask()
        if not (int(words[token_id >> 5]) >> (token_id & 31)) & 1:
            return False
        self._tokens.append(token_id)
        self._words = None
        return True

    def is_accepting(self) -> bool:
        eos = self._eos_id
        return bool((int(self._mask()[eos >> 5]) >> (eos & 31)) & 1)

    def reset(self) -> None:
        # A fresh enforcer, as a new request gets: nothing of the last walk is reused.
        self._enforcer = self._new_enforcer()
        self._tokens = []
        self._words = None


class LMFECompiled(Compiled):
    """The parsed spec (an interegular FSM, or a validated schema model) shared by every
    matcher, each of which gets its own `TokenEnforcer` and so its own caches."""

    def __init__(self, prepared: LMFEVocab, new_parser: Callable[[], Any], spec_id: str):
        self._prepared = prepared
        self._new_parser = new_parser
        self._spec_id = spec_id

    def _enforcer(self) -> Any:
        from lmformatenforcer import CharacterLevelParserConfig, TokenEnforcer

        data = self._prepared.data
        parser = self._new_parser()
        enforcer = TokenEnforcer(data, parser)
        # TokenEnforcer sets a config with the vocabulary's alphabet and every other field
        # read from LMFE_* variables; the same alphabet with pinned values instead.
        parser.config = CharacterLevelParserConfig(
            alphabet=data.tokenizer_alphabet,
            max_consecutive_whitespaces=MAX_CONSECUTIVE_WHITESPACES,
            force_json_field_order=FORCE_JSON_FIELD_ORDER,
            max_json_array_length=MAX_JSON_ARRAY_LENGTH,
        )
        return enforcer

    def matcher(self) -> Matcher:
        return LMFEMatcher(self._enforcer, self._prepared.vocab, self._spec_id)


# Its part of a mask repro script (harness.diff.findings.repro): its package and numpy only.
MASK_REPRO = """
def _enforcer():
    import lmformatenforcer as lmfe

    regular = []
    for i, t in enumerate(TOKENS):
        try:
            text = t.decode("utf-8")
        except UnicodeDecodeError:
            continue  # no text of its own: not in its prefix tree
        if i not in SPECIAL and text:
            regular.append((i, text, True))
    data = lmfe.TokenEnforcerTokenizerData(
        regular, lambda ids: b"".join(TOKENS[i] for i in ids).decode("utf-8", "replace"),
        EOS, False, len(TOKENS),
    )
    return lmfe.TokenEnforcer(data, lmfe.RegexParser(REGEX))


def _allowed():
    # It must see every prefix in turn: the first sequence it is asked about is taken
    # for the prompt, and each later one is the previous one plus a token.
    enforcer = _enforcer()
    for i in range(len(PREFIX) + 1):
        allowed = enforcer.get_allowed_tokens(list(PREFIX[:i])).allowed_tokens
        if i < len(PREFIX):
            assert PREFIX[i] in allowed, f"token {PREFIX[i]} of the prefix is refused"
    return allowed


def engine_mask():
    allowed = _allowed()
    bits = np.zeros(len(TOKENS), dtype=bool)
    bits[list(allowed)] = True
    mask = np.packbits(bits, bitorder="little")
    mask = np.concatenate([mask, np.zeros((-len(mask)) % 4, dtype=np.uint8)]).view(np.int32)
    return mask, bool(bits[EOS]), None


def engine_advance(token):
    return token != EOS and token in _allowed()
"""

# The engine's part of an instance repro script (harness.diff.findings.instance_repro).
INSTANCE_REPRO = """
def accepts(text):
    import lmformatenforcer as lmfe

    # One token per character (a byte of a multi-byte character has no text of its own
    # for it); id 0 is EOS, never text.
    chars = sorted(set(text))
    regular = [(i + 1, c, True) for i, c in enumerate(chars)]
    tok_data = lmfe.TokenEnforcerTokenizerData(
        regular, lambda ids: "".join(chars[i - 1] for i in ids if i), 0, False, len(chars) + 1
    )
    config = lmfe.CharacterLevelParserConfig(
        alphabet=tok_data.tokenizer_alphabet, max_consecutive_whitespaces=12,
        force_json_field_order=False, max_json_array_length=20,
    )
    parser = lmfe.JsonSchemaParser(SCHEMA)
    enforcer = lmfe.TokenEnforcer(tok_data, parser)
    parser.config = config
    ids = []
    for c in text:
        t = chars.index(c) + 1
        if t not in enforcer.get_allowed_tokens(ids).allowed_tokens:
            return False
        ids.append(t)
    return 0 in enforcer.get_allowed_tokens(ids).allowed_tokens
"""


class LMFormatEnforcerEngine(Engine):
    name = NAME
    extra = "lm-format-enforcer"
    module = "lmformatenforcer"
    capabilities = Capabilities(
        regex=True,
        json_schema="native",
        # interegular refuses anchors, \\b, \\p{..} and back-references at compile; its
        # look-arounds compile with another meaning, so they are refused before it.
        unsupported_features=frozenset({"lookaround", "backreference", "anchors"}),
    )
    policies = Policies(
        mask=(Policy.ASCII_CLASSES, Policy.UTF8_TOKENS_ONLY),
        json_whitespace="flexible",
        # its pinned JSON caps, MAX_JSON_ARRAY_LENGTH and MAX_CONSECUTIVE_WHITESPACES
        json_schema=(SchemaPolicy.ARRAY_ITEMS_AT_MOST_20, SchemaPolicy.WHITESPACE_RUNS_AT_MOST_12),
    )
    # Tokens that are not valid UTF-8 on their own are never allowed (see the module doc).

    repro_package = DISTRIBUTION
    mask_repro = MASK_REPRO
    instance_repro = INSTANCE_REPRO
    instance_repro_target = NAME
    instance_repro_package = DISTRIBUTION

    def version(self) -> str:
        from importlib.metadata import version

        import lmformatenforcer  # noqa: F401  (version() must fail when the import does)

        return version(DISTRIBUTION)

    def prepare(self, vocab: Vocabulary) -> LMFEVocab:
        from lmformatenforcer import TokenEnforcerTokenizerData

        tokens = vocab.tokens
        regular = [(i, tokens[i].decode("utf-8"), True) for i in utf8_token_ids(vocab)]

        def decode(ids: list[int]) -> str:  # used by it only in error messages
            return vocab.decode(ids).decode("utf-8", "replace")

        try:
            data = TokenEnforcerTokenizerData(regular, decode, vocab.eos_id, False, vocab.size)
        except AssertionError as exc:
            # It asserts that some token can sit inside a JSON string; every real
            # vocabulary has one, a tiny one built by the minimizer may not.
            raise EngineError(
                NAME, f"<vocabulary {vocab.name}>", f"cannot build its tokenizer data: {exc}"
            ) from exc
        return LMFEVocab(vocab=vocab, data=data)

    def compile(self, prepared: LMFEVocab, spec: Spec) -> LMFECompiled:
        from lmformatenforcer import JsonSchemaParser, RegexParser

        check_features(self, spec)
        try:
            if spec.kind == "regex":
                first = RegexParser(spec.text)
                context = first.context

                def regex_parser() -> Any:
                    return RegexParser(context)

                new_parser = regex_parser
            else:
                schema = json.loads(spec.text)
                if not isinstance(schema, dict):
                    raise ValueError(f"a schema must be a JSON object, got {type(schema).__name__}")
                first = JsonSchemaParser(schema)
                json_context = first.context

                def json_parser() -> Any:
                    return JsonSchemaParser(json_context)

                new_parser = json_parser
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # interegular's InvalidSyntax / Unsupported, pydantic
            raise compile_failure(self, spec, f"{type(exc).__name__}: {exc}") from exc
        return LMFECompiled(prepared, new_parser, spec.id)
