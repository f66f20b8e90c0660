"""TokensDFA, the project's own engine, in its four forms.

`tokensdfa` is exact and eager: the whole token automaton is built at compile time, so
every mask is a copy; its masks must equal the naive reference's. Neither exact form has a
regex size limit (each stops at its own budgets with a LimitError). `tokensdfa-canonical`
builds with `mode="canonical_literals"`: literal runs of the regex are allowed only in
their minimal tokenization, a declared policy (`canonical_literals`), so its masks are
subsets of the reference's. `tokensdfa-lazy` is exact and lazy (`tokensdfa.LazyIndex`):
compiling only parses the regex, and a state's mask is computed on its first visit and
memoized, so the first mask comes in microseconds even for multi-megabyte schema regexes;
its masks must equal the reference's too. With our
converter in use it compiles a schema straight into its regex tree
(`LazyIndex.from_schema`, our converter's dialect): the converter's language, with no
multi-megabyte regex text printed and parsed again. `tokensdfa-pushdown`
(`tokensdfa.PushdownIndex`) serves grammars, and schemas through our compiler's grammar
mode, where unconstrained values and recursive `$ref`s nest without bound; exact against
the grammar reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from harness.engines.base import Capabilities, Compiled, Matcher, Policies, Policy, Sequences
from harness.engines.rust_index import (
    IndexCompiled,
    IndexSequences,
    RustIndexEngine,
    RustVocab,
    advance_index_batch,
    fill_index_batch,
)
from harness.engines.support import check_features
from harness.errors import SpecError, UnsupportedSpec
from harness.language import converter, grammar, reference
from harness.spec import NOTATIONS, Spec

if TYPE_CHECKING:  # the extension is imported when an engine is built (`reference.tokensdfa`)
    import tokensdfa

# How a repro script builds the engine's index (`_build`): from REGEX in a mode, or, in
# the pushdown mode, from GRAMMAR in NOTATION or from SCHEMA in the harness's dialect.
BUILD_FROM_REGEX = """
MODE = MODE_NAME
KIND = KIND_NAME


def _build(vocab):
    import tokensdfa

    return getattr(tokensdfa, KIND)(REGEX, vocab, mode=MODE)
"""

BUILD_PUSHDOWN = """
DIALECT = DIALECT_VALUE


def _build(vocab):
    import tokensdfa

    if GRAMMAR is None:
        return tokensdfa.PushdownIndex.from_schema(SCHEMA, vocab, DIALECT)
    return tokensdfa.PushdownIndex.from_grammar(GRAMMAR, vocab, NOTATION)
"""

# The engine's part of a mask repro script (harness.diff.findings.repro), after `_build`:
# needs only tokensdfa.
MASK_REPRO = """

def _index():
    import tokensdfa

    index = _build(tokensdfa.Vocabulary(TOKENS, EOS, SPECIAL))
    state = index.initial_state
    for t in PREFIX:
        state = index.next_state(state, t)
        assert state is not None
    return index, state


def engine_mask():
    index, state = _index()
    mask = np.zeros((len(TOKENS) + 31) // 32, dtype=np.int32)
    index.fill_mask(state, mask)
    return mask, index.is_accepting(state), None


def engine_advance(token):
    index, state = _index()
    return token != EOS and index.next_state(state, token) is not None
"""


# Its part of a protocol repro script (harness.diff.findings.repro): a matcher over the
# index as a server keeps one (the states it passed, for rollback), and the batch fill.
PROTOCOL_REPRO = """

class _New:
    def __init__(self):
        import tokensdfa

        self.index = _build(tokensdfa.Vocabulary(TOKENS, EOS, SPECIAL))
        self.reset()

    def reset(self):
        self.state, self.past = self.index.initial_state, []

    def take(self, t):
        nxt = None if t == EOS else self.index.next_state(self.state, t)
        if nxt is None:
            return False
        self.past.append(self.state)
        self.state = nxt
        return True

    def fill(self, mask):
        self.index.fill_mask(self.state, mask)

    def accepting(self):
        return self.index.is_accepting(self.state)

    def rollback(self, count):
        if count:
            self.state = self.past[-count]
            del self.past[-count:]
        return True

    def validate(self, draft):
        state = self.state
        for i, t in enumerate(draft):
            state = None if t == EOS else self.index.next_state(state, t)
            if state is None:
                return i
        return len(draft)

    def batch(self, other, rows):
        import tokensdfa

        tokensdfa.fill_masks([self.index, other.index], [self.state, other.state], rows, 2)


_new = _New
"""


class TokensDFAEngine(RustIndexEngine):
    name = "tokensdfa"
    jump_forward = True
    mode = "exact"
    kind = "Index"  # the tokensdfa class that builds the index
    # Exact mode determinizes with its own hash-consed NFA (a 26 MB schema regex in about
    # a second) and stops at its determinization budget with a LimitError, so no regex
    # size limit of its own; canonical mode goes through regex-automata and keeps it.
    capabilities = replace(RustIndexEngine.capabilities, max_regex_chars=None)

    @property
    def mask_repro(self) -> str:  # type: ignore[override]
        build = BUILD_FROM_REGEX.replace("MODE_NAME", repr(self.mode))
        return build.replace("KIND_NAME", repr(self.kind)) + MASK_REPRO

    batch_api = "tokensdfa.fill_masks"
    protocol_repro = PROTOCOL_REPRO

    def fill_batch(self, matchers: Sequence[Matcher], out: np.ndarray, threads: int = 1) -> None:
        fill_index_batch(self.name, matchers, out, threads)

    def advance_batch(
        self, matchers: Sequence[Matcher], tokens: Sequence[int], threads: int = 1
    ) -> list[bool]:
        return advance_index_batch(self.name, matchers, tokens, threads)

    def sequences(self, compiled: Sequence[Compiled]) -> Sequences:
        return IndexSequences(self.name, compiled)

    def build_index(
        self, regex: str, native_vocab: tokensdfa.Vocabulary
    ) -> tokensdfa.Index | tokensdfa.LazyIndex:  # (the lazy form's, below)
        return reference.tokensdfa().Index(regex, native_vocab, mode=self.mode)


class TokensDFACanonicalEngine(TokensDFAEngine):
    name = "tokensdfa-canonical"
    mode = "canonical_literals"
    capabilities = RustIndexEngine.capabilities
    policies = Policies(
        mask=(Policy.CANONICAL_FORCED, Policy.CANONICAL_LITERALS),
        json_whitespace="regex-builder",
    )


class TokensDFALazyEngine(TokensDFAEngine):
    name = "tokensdfa-lazy"
    kind = "LazyIndex"

    def build_index(self, regex: str, native_vocab: tokensdfa.Vocabulary) -> tokensdfa.LazyIndex:
        return reference.tokensdfa().LazyIndex(regex, native_vocab, mode=self.mode)

    def compiles_schemas_itself(self) -> bool:
        return converter.current() == converter.OURS

    def compile(self, prepared: RustVocab, spec: Spec) -> IndexCompiled:
        if spec.kind != "json_schema" or not self.compiles_schemas_itself():
            return super().compile(prepared, spec)
        check_features(self, spec)
        module = reference.tokensdfa()
        try:
            index = module.LazyIndex.from_schema(spec.text, prepared.native, converter.OURS_DIALECT)
        except module.PatternError as exc:
            raise SpecError(self.name, spec.id, " ".join(str(exc).split())) from exc
        except (module.UnsupportedPatternError, module.LimitError, MemoryError) as exc:
            raise UnsupportedSpec(self.name, spec.id, " ".join(str(exc).split())) from exc
        return IndexCompiled(index, prepared.vocab.eos_id, self.name, spec.id)


# The harness dialect's options the pushdown mode reads (`any_depth` and `max_recursion`
# do not apply to it, and the regex-size cap is for printed regexes).
PUSHDOWN_DIALECT = ("whitespace", "escapes")


class TokensDFAPushdownEngine(TokensDFALazyEngine):
    """TokensDFA's pushdown mode (`tokensdfa.PushdownIndex`): a grammar's Earley sets,
    hash-consed, as the states of a lazy index's automaton; exact, so its masks must
    equal the grammar reference's (read the default way: scannerless, `%ignore` text
    anywhere). Grammars in every notation this project reads, and JSON schemas through
    our compiler's grammar mode (`PushdownIndex.from_schema`): the harness's dialect
    with unconstrained values and recursive `$ref`s nesting without bound, so it is
    compared in that dialect as a native engine is, and values deeper than the
    reference's `any_depth` or `max_recursion` are decided by the deeper reference
    (`values-nested-deeper`)."""

    name = "tokensdfa-pushdown"
    capabilities = Capabilities(regex=False, json_schema="native", grammars=NOTATIONS)
    # our compiler's policies (schema key order, the layouts of `optional-space`)
    policies = replace(
        RustIndexEngine.policies,
        json_dialect=tuple(
            (k, str(v)) for k, v in converter.OURS_DIALECT.items() if k in PUSHDOWN_DIALECT
        ),
    )

    @property
    def mask_repro(self) -> str:  # type: ignore[override]
        return BUILD_PUSHDOWN.replace("DIALECT_VALUE", repr(pushdown_dialect())) + MASK_REPRO

    def compiles_schemas_itself(self) -> bool:
        return True

    def compile(self, prepared: RustVocab, spec: Spec) -> IndexCompiled:
        check_features(self, spec)  # a regex is unsupported
        if spec.kind == "json_schema":
            index = self._from_schema(prepared, spec)
        else:
            index = grammar.build_pushdown(spec, prepared.native, self.name)
        return IndexCompiled(index, prepared.vocab.eos_id, self.name, spec.id)

    def _from_schema(self, prepared: RustVocab, spec: Spec) -> tokensdfa.PushdownIndex:
        module = reference.tokensdfa()
        try:
            return module.PushdownIndex.from_schema(spec.text, prepared.native, pushdown_dialect())
        except module.PatternError as exc:
            raise SpecError(self.name, spec.id, " ".join(str(exc).split())) from exc
        except (
            module.UnsupportedPatternError,
            module.LimitError,
            module.GrammarError,
            MemoryError,
        ) as exc:
            raise UnsupportedSpec(self.name, spec.id, " ".join(str(exc).split())) from exc


def pushdown_dialect() -> dict[str, str]:
    """`PushdownIndex.from_schema`'s dialect: the harness's, as the engine declares it."""
    return dict(TokensDFAPushdownEngine.policies.json_dialect)
