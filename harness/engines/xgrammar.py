"""xgrammar: a pushdown automaton with a per-rule-position token cache built at compile.

Quirks of 0.2.8, normalized here:
- `TokenizerInfo` treats only EMPTY strings as special; every special id (and EOS, which
  it knows as the stop token) is given as b"" so `<s>`, `[INST]`... are never text.
- Its mask can set the bits past the last token in the final word (it fills with ones and
  clears refused tokens); those bits are cleared after each fill when the vocabulary does
  not fill the last word exactly (never for Llama-3's 128,256 ids).
- `is_completed()` means "the root rule is matched, EOS allowed" (`is_terminated()` means
  EOS was consumed); EOS is set in the mask whenever `is_completed()`.
- Importing it imports torch (seconds), hence imports inside methods only.
- Compiled with `max_threads=1`: the other engines compile on one thread, and on a
  two-core machine xgrammar's default pool (8) would measure the machine, not the engine.
  The compiler's cache is off so a repeated spec is compiled again, not looked up.
- `\\d \\w \\s` are ASCII classes (policy `unicode_classes=False`); `\\p{..}`, inline
  flags, look-around, back-references and `\\b` are refused at compile. A `^` inside a
  pattern is ignored (`a^b` allows "ab"), a difference the differ reports.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from harness.engines.support import (
    MaskBuffer,
    check_batch_buffer,
    check_features,
    compile_failure,
    per_process,
    tail_mask,
)
from harness.errors import EngineError
from harness.spec import Spec
from harness.vocab import Vocabulary

NAME = "xgrammar"
COMPILE_THREADS = 1
# Any run of JSON whitespace between tokens, the same language as llguidance's
# "flexible" whitespace; False would allow none at all.
ANY_WHITESPACE = True
# The JSON text its schemas compile to (measured on 0.2.8 with a one-byte vocabulary):
# any JSON whitespace; every escape in strings the schema leaves unconstrained and none
# in constrained ones (pattern, format, length; undeclared keys a patternProperties or
# propertyNames language limits, which take no escape); enum and const strings, like
# declared keys, in one spelling (`"` `\\` `\\n`... short, other control characters and
# U+007F as \\u00xx, the rest raw); an exponent only on numbers without bounds or
# multipleOf; integers never with a fraction; never a bare `-0` on integers or bounded
# numbers. Its documented schema readings (`json_schema` below) rewrite the reference's
# schema too.
# Left for the differ to report: lone surrogate escapes in strings and undeclared keys,
# raw control characters in strings with a length or a pattern (not JSON).
JSON_DIALECT = (
    ("whitespace", "any"),
    ("escapes", "free-strings-only"),
    ("numbers", "exponent-when-unbounded"),
    ("integers", "no-fraction"),
    ("negative_zero", "with-fraction-when-bounded"),
    ("keys", "canonical-del-escaped"),
)
# Its `\\s`: ASCII whitespace plus U+00A0 (no other Unicode space), as measured on 0.2.8.
SPACE_CLASS = "\\t\\n\\x0B\\x0C\\r \\xA0"


@dataclass(frozen=True)
class XGrammarVocab:
    vocab: Vocabulary
    compiler: Any  # xgrammar.GrammarCompiler over this vocabulary's TokenizerInfo


class XGrammarMatcher(Matcher):
    __slots__ = (
        "_buffer",
        "_eos_id",
        "_matcher",
        "_out",
        "_spec_id",
        "_tail",
        "_taken",
        "_view",
        "vocab_size",
    )

    def __init__(self, matcher: Any, vocab: Vocabulary, spec_id: str) -> None:
        self._matcher = matcher
        self._eos_id = vocab.eos_id
        self._spec_id = spec_id
        self._tail = tail_mask(vocab.size)
        self.vocab_size = vocab.size
        self._buffer = MaskBuffer(NAME, spec_id, vocab.mask_words)
        self._out: np.ndarray | None = None
        self._view: np.ndarray | None = None
        self._taken = 0  # tokens taken since the start or the last reset

    def fill_mask(self, out: np.ndarray) -> None:
        if out is not self._out:
            # xgrammar wants a 2-D batch; a 1 x W view of the caller's array writes in place.
            self._buffer.check(out)
            self._out = out
            self._view = out.reshape(1, -1)
        try:
            self._matcher.fill_next_token_bitmask(self._view)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc
        if self._tail is not None:
            out[-1] &= self._tail

    def advance(self, token_id: int) -> bool:
        if token_id == self._eos_id:
            return False
        try:
            # False (and no state change) for a refused token.
            took = bool(self._matcher.accept_token(token_id))
        except (RuntimeError, ValueError, TypeError, OverflowError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc
        self.note_taken(took)
        return took

    def note_taken(self, took: bool) -> None:
        """Count a token a batch step took for this matcher (`rollback` bounds on it)."""
        self._taken += took

    def rollback(self, count: int) -> bool:
        """Through `GrammarMatcher.rollback`, as a speculative decoder calls it."""
        if count < 0 or count > self._taken:
            return False
        try:
            self._matcher.rollback(count)
        except (RuntimeError, ValueError, TypeError, OverflowError) as exc:
            raise EngineError(NAME, self._spec_id, str(exc)) from exc
        self._taken -= count
        return True

    def is_accepting(self) -> bool:
        return bool(self._matcher.is_completed())

    @property
    def native(self) -> Any:
        """The GrammarMatcher (a batch step hands it to BatchGrammarMatcher)."""
        return self._matcher

    @property
    def eos_id(self) -> int:
        return self._eos_id

    def reset(self) -> None:
        self._matcher.reset()
        self._taken = 0

    def forced_text(self) -> bytes | None:
        # xgrammar returns str; a forced run that ends inside a character cannot be given
        return str(self._matcher.find_jump_forward_string()).encode()


class XGrammarCompiled(Compiled):
    def __init__(self, compiled: Any, vocab: Vocabulary, spec_id: str) -> None:
        self.compiled = compiled
        self._vocab = vocab
        self._spec_id = spec_id

    def matcher(self) -> Matcher:
        from xgrammar import GrammarMatcher

        return XGrammarMatcher(GrammarMatcher(self.compiled), self._vocab, self._spec_id)

    def memory_bytes(self) -> int | None:
        return int(self.compiled.memory_size_bytes)


# Its part of a mask repro script (harness.diff.findings.repro): its package and numpy only.
# A finding on a schema (its dialect lane) compiles SCHEMA as the harness does, not the
# regex that stands for its language.
MASK_REPRO = (
    (
        "\n# the whitespace option schemas are compiled with\nANY_WHITESPACE = "
        + repr(ANY_WHITESPACE)
        + "\n"
    )
    + """
def _matcher():
    import xgrammar as xgr

    encoded = [b"" if i in SPECIAL else t for i, t in enumerate(TOKENS)]
    info = xgr.TokenizerInfo(
        encoded, xgr.VocabType.RAW, vocab_size=len(TOKENS), stop_token_ids=[EOS]
    )
    compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
    if GRAMMAR is not None and NOTATION == "lark":
        compiled = compiler.compile_grammar(xgr.Grammar.from_lark(GRAMMAR))
    elif GRAMMAR is not None:
        compiled = compiler.compile_grammar(GRAMMAR, root_rule_name="root")
    elif SCHEMA is None:
        compiled = compiler.compile_regex(REGEX)
    else:
        compiled = compiler.compile_json_schema(SCHEMA, any_whitespace=ANY_WHITESPACE)
    matcher = xgr.GrammarMatcher(compiled)
    if HISTORY:
        # what the matcher did before the reset the bug needs
        scratch = np.zeros((1, (len(TOKENS) + 31) // 32), dtype=np.int32)
        for op in HISTORY:
            if op == FILL:
                matcher.fill_next_token_bitmask(scratch)
            elif op == RESET:
                matcher.reset()
            else:
                assert matcher.accept_token(op)
        matcher.reset()
    for t in PREFIX:
        assert matcher.accept_token(t)
    return matcher


def engine_mask():
    matcher = _matcher()
    mask = np.zeros((1, (len(TOKENS) + 31) // 32), dtype=np.int32)
    matcher.fill_next_token_bitmask(mask)
    return mask[0], matcher.is_completed(), None


def engine_advance(token):
    return bool(_matcher().accept_token(token))
"""
)

# The engine's part of an instance repro script (harness.diff.findings.instance_repro).
# Its part of a protocol repro script (harness.diff.findings.repro): the matcher as a
# server drives it, through xgrammar's own calls (it has no draft check: validate is
# never asked of it).
PROTOCOL_REPRO = """

class _New:
    def __init__(self):
        self.m = _bare(_matcher)

    def take(self, t):
        return t != EOS and self.m.accept_token(t)

    def fill(self, mask):
        rows = np.zeros((1, mask.shape[0]), dtype=np.int32)
        self.m.fill_next_token_bitmask(rows)
        mask[:] = rows[0]

    def accepting(self):
        return self.m.is_completed()

    def reset(self):
        self.m.reset()

    def rollback(self, count):
        self.m.rollback(count)
        return True

    def validate(self, draft):
        return None

    def batch(self, other, rows):
        import xgrammar as xgr

        xgr.BatchGrammarMatcher(max_threads=2).batch_fill_next_token_bitmask(
            [self.m, other.m], rows
        )


_new = _New
"""

INSTANCE_REPRO = """
def accepts(text):
    import xgrammar as xgr

    data = text.encode()
    tokens = [b""] + sorted({bytes([b]) for b in data})  # id 0: EOS, never text
    info = xgr.TokenizerInfo(tokens, xgr.VocabType.RAW, vocab_size=len(tokens), stop_token_ids=[0])
    compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
    m = xgr.GrammarMatcher(compiler.compile_json_schema(json.dumps(SCHEMA), any_whitespace=True))
    for b in data:
        if not m.accept_token(tokens.index(bytes([b]))):
            return False
    return bool(m.is_completed())
"""


class XGrammarEngine(Engine):
    name = NAME
    extra = "xgrammar"
    module = "xgrammar"
    jump_forward = True
    capabilities = Capabilities(
        regex=True,
        json_schema="native",
        # \d \w \s ("unicode-classes" in the corpus) compile, as ASCII classes: a policy.
        unsupported_features=frozenset({"lookaround", "backreference", "inline-flags"}),
        # its EBNF is llama.cpp's GBNF with extensions; Lark through its own Lark reader
        # (`Grammar.from_lark`, new in 0.2)
        grammars=("gbnf", "ebnf", "lark"),
    )
    policies = Policies(
        mask=(Policy.ASCII_CLASSES, Policy.NO_LEADING_IGNORE),
        json_whitespace="flexible",
        class_table=(("s", SPACE_CLASS),),
        # xgrammar's documented defaults (its JSON-schema converter's `strict_mode`, and
        # measured on 0.2.8 too): see harness/diff/judge/schema_policies.py.
        json_schema=(
            SchemaPolicy.ADDITIONAL_PROPERTIES_FALSE,
            SchemaPolicy.ONEOF_AS_ANYOF,
            SchemaPolicy.LENGTH_IGNORED_WITH_PATTERN,
        ),
        json_dialect=JSON_DIALECT,
    )

    repro_package = "xgrammar"
    mask_repro = MASK_REPRO
    protocol_repro = PROTOCOL_REPRO
    instance_repro = INSTANCE_REPRO
    instance_repro_target = "xgrammar"
    instance_repro_package = "xgrammar"

    def version(self) -> str:
        from importlib.metadata import version

        import xgrammar  # noqa: F401  (version() must fail when the import does)

        return version("xgrammar")

    batch_api = "xgrammar BatchGrammarMatcher.batch_fill_next_token_bitmask"
    rollback = True

    def fill_batch(self, matchers: Sequence[Matcher], out: np.ndarray, threads: int = 1) -> None:
        """Through xgrammar's BatchGrammarMatcher of `threads` threads: one call for the
        batch; padding bits past the vocabulary cleared as a single fill clears them."""
        batch = _own(matchers)
        words = out.shape[-1] if isinstance(out, np.ndarray) else 0
        check_batch_buffer(NAME, out, len(batch), words)
        batcher = per_process(_BATCHERS, threads, _batcher)
        try:
            batcher.batch_fill_next_token_bitmask([m.native for m in batch], out)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise EngineError(NAME, "<batch>", str(exc)) from exc
        tail = tail_mask(batch[0].vocab_size) if batch else None
        if tail is not None:
            out[:, -1] &= tail

    def advance_batch(
        self, matchers: Sequence[Matcher], tokens: Sequence[int], threads: int = 1
    ) -> list[bool]:
        """Through `BatchGrammarMatcher.batch_accept_token` (EOS refused, as `advance`)."""
        from xgrammar import BatchGrammarMatcher

        batch = _own(matchers)
        if len(tokens) != len(batch):
            raise EngineError(NAME, "<batch>", f"{len(tokens)} tokens for {len(batch)} matchers")
        moving = [i for i, (m, t) in enumerate(zip(batch, tokens, strict=True)) if t != m.eos_id]
        try:
            took = BatchGrammarMatcher.batch_accept_token(
                [batch[i].native for i in moving], [tokens[i] for i in moving]
            )
        except (RuntimeError, ValueError, TypeError, OverflowError) as exc:
            raise EngineError(NAME, "<batch>", str(exc)) from exc
        result = [False] * len(batch)
        for i, ok in zip(moving, took, strict=True):
            result[i] = bool(ok)
            batch[i].note_taken(result[i])
        return result

    def prepare(self, vocab: Vocabulary) -> XGrammarVocab:
        from xgrammar import GrammarCompiler, TokenizerInfo, VocabType

        hidden = vocab.special_ids | {vocab.eos_id}
        encoded = [b"" if i in hidden else t for i, t in enumerate(vocab.tokens)]
        info = TokenizerInfo(
            encoded, VocabType.RAW, vocab_size=vocab.size, stop_token_ids=[vocab.eos_id]
        )
        compiler = GrammarCompiler(info, max_threads=COMPILE_THREADS, cache_enabled=False)
        return XGrammarVocab(vocab=vocab, compiler=compiler)

    def compile(self, prepared: XGrammarVocab, spec: Spec) -> XGrammarCompiled:
        import xgrammar as xgr

        check_features(self, spec)
        try:
            if spec.kind == "regex":
                compiled = prepared.compiler.compile_regex(spec.text)
            elif spec.kind == "grammar" and spec.notation == "lark":
                compiled = prepared.compiler.compile_grammar(xgr.Grammar.from_lark(spec.text))
            elif spec.kind == "grammar":
                compiled = prepared.compiler.compile_grammar(spec.text, root_rule_name="root")
            else:
                compiled = prepared.compiler.compile_json_schema(
                    spec.text, any_whitespace=ANY_WHITESPACE
                )
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # RuntimeError from C++, InvalidJSONError, ...
            raise compile_failure(self, spec, str(exc)) from exc
        return XGrammarCompiled(compiled, prepared.vocab, spec.id)


# xgrammar's batch matchers (thread pools) of this process, by (pid, threads)
_BATCHERS: dict[tuple[int, int], Any] = {}


def _batcher(threads: int) -> Any:
    from xgrammar import BatchGrammarMatcher

    return BatchGrammarMatcher(max_threads=threads)


def _own(matchers: Sequence[Matcher]) -> list[XGrammarMatcher]:
    found = [m for m in matchers if isinstance(m, XGrammarMatcher)]
    if len(found) != len(matchers):
        raise EngineError(NAME, "<batch>", "a batch of matchers this engine did not make")
    return found
