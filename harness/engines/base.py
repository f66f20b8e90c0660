"""The one interface every engine is driven through.

An `Engine` prepares a vocabulary once (`prepare`), compiles a `Spec` against it
(`compile`), and hands out `Matcher`s that walk one token path: `fill_mask` writes the
int32 bitmask (bit i % 32 of word i // 32 is token i) into the caller's buffer in place,
`advance` consumes one token, `is_accepting` says whether EOS may end the output here.
A decoding step for a whole batch of matchers goes through `Engine.fill_batch` and
`Engine.advance_batch`: the engine's own batch API on a thread pool where it has one,
else the loop a server runs over its matchers. A server's standing batch is
`Engine.sequences`: by default those two over a matcher per sequence; an engine that
keeps a whole batch itself does the step with no per-sequence work in Python.
Runner, differ and report only ever see this interface, never an engine's own API.
"""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

import numpy as np

from harness.spec import Notation, Spec
from harness.vocab import Vocabulary


def allowed_ids(mask: np.ndarray, size: int) -> np.ndarray:
    """The token ids a mask allows, ascending (bits past `size` ignored)."""
    return np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little")[:size])


def is_allowed(mask: np.ndarray, token: int) -> bool:
    """Whether the mask allows `token`: bit token % 32 of word token // 32."""
    return bool((int(mask[token >> 5]) >> (token & 31)) & 1)


@dataclass(frozen=True)
class Capabilities:
    regex: bool
    json_schema: Literal["native", "via-regex", "no"]
    # regex features (see Spec.features) the engine cannot compile
    unsupported_features: frozenset[str] = frozenset()
    # the longest regex (characters) it is given; None: no limit. Engines that build a
    # whole automaton up front set one: larger regexes are beyond any compile budget
    max_regex_chars: int | None = None
    # the grammar notations it reads (a grammar in another one reaches it through this
    # project's writers, `harness.language.grammar.convert`); empty: no grammars at all
    grammars: tuple[Notation, ...] = ()


class Policy(StrEnum):
    """The name of a mask policy: a documented way an engine's masks differ from the
    reference's on purpose. Declared here once: an engine lists the ones it follows in
    `Policies.mask`, and triage (`harness.diff.judge.triage.POLICY_RULES`) holds exactly
    one rule per name, which must explain the whole difference at a state. The value is
    the name diff.json, the store and the pages have always shown."""

    # \d \w \s are ASCII (or what `Policies.class_table` says), not Unicode
    ASCII_CLASSES = "ascii-classes"
    # forced text is allowed only in its canonical tokenization
    CANONICAL_FORCED = "canonical-forced"
    # every literal run of the regex only in its minimal tokenization (TokensDFA's mode)
    CANONICAL_LITERALS = "canonical-literals"
    # a token that is not valid UTF-8 on its own is never allowed (engines that work on
    # decoded strings, like lm-format-enforcer)
    UTF8_TOKENS_ONLY = "utf8-tokens-only"
    # not declared by an engine: it applies to every engine compared in its own JSON
    # dialect (`harness.diff.walk.dialects`), where the reference must bound nesting
    VALUES_NESTED_DEEPER = "values-nested-deeper"
    # once the text is a complete non-empty match only EOS is allowed, even where the
    # language goes on (kbnf's "ends eagerly", Formatron)
    EAGER_END = "eager-end"
    # a grammar's terminals are lexed greedily: a lexeme ends only where no lexeme the
    # parser allows at its start can take the next byte (maximal munch over the allowed
    # set, llguidance's lexer); ignored text comes neither before the first lexeme nor
    # after the last, except where another lexeme may follow; masks say "not failed yet"
    # (`Engine.lexer_reading` names the grammar the lexer reads)
    GREEDY_LEXEMES = "greedy-lexemes"
    # a grammar is read scannerless, but no `%ignore`d text may come before its first
    # terminal (xgrammar's Lark reader)
    NO_LEADING_IGNORE = "no-leading-ignore"


class SchemaPolicy(StrEnum):
    """The name of a JSON-schema policy: a documented way an engine reads a schema
    differently from the standard. Declared here once: an engine lists the ones it
    follows in `Policies.json_schema`, and `harness.diff.judge.schema_policies` holds the
    rule of each (what it must explain of an instance failure)."""

    ADDITIONAL_PROPERTIES_FALSE = "additional-properties-false"
    ONEOF_AS_ANYOF = "oneof-as-anyof"
    LENGTH_IGNORED_WITH_PATTERN = "length-ignored-with-pattern"
    KEYS_IN_SCHEMA_ORDER = "keys-in-schema-order"
    ARRAY_ITEMS_AT_MOST_20 = "array-items-at-most-20"
    WHITESPACE_RUNS_AT_MOST_12 = "whitespace-runs-at-most-12"
    # not declared by an engine: every engine fed our converter's language follows it
    # while ours is the converter in use (`harness.diff.run.service`)
    UNCONSTRAINED_VALUES_AT_MOST_ANY_DEPTH = "unconstrained-values-at-most-any-depth"


@dataclass(frozen=True)
class Policies:
    """Documented behaviours that make an engine differ from the reference on purpose:
    the mask policies it follows (`mask`), how its JSON is laid out and read, and the
    facts its policies need (`class_table`, `json_dialect`). The one-question properties
    (`unicode_classes`, `canonical_forced`, ...) read `mask`; they declare nothing."""

    json_whitespace: str  # "regex-builder" (outlines' pattern), "flexible", "none"
    mask: tuple[Policy, ...] = ()
    # Documented ways the engine reads a JSON schema differently from the standard (rules
    # in harness/diff/judge/schema_policies.py); the differ counts instance failures
    # these explain as policy, not bugs.
    json_schema: tuple[SchemaPolicy, ...] = ()
    # With Policy.ASCII_CLASSES: the class each of d, w, s stands for (bracket-class
    # body), where it is not plain ASCII; measured, and checked by tests/test_engines.py.
    class_table: tuple[tuple[str, str], ...] = ()
    # The JSON text dialect the engine's own schema compiler writes, as parameters of
    # our converter (`tokensdfa.schema_to_regex`: whitespace, escapes, numbers,
    # integers), measured on its pinned release. With it, the differ compares the
    # engine's masks on schemas state by state against our converter's regex in that
    # dialect (`harness.diff.walk.dialects`); without it, the engine's schemas are checked on
    # instances only.
    json_dialect: tuple[tuple[str, str], ...] = ()

    def follows(self, policy: Policy) -> bool:
        return policy in self.mask

    @property
    def unicode_classes(self) -> bool:
        """\\d \\w \\s are Unicode (no `ascii-classes`)."""
        return Policy.ASCII_CLASSES not in self.mask

    @property
    def canonical_forced(self) -> bool:
        return Policy.CANONICAL_FORCED in self.mask

    @property
    def canonical_literals(self) -> bool:
        return Policy.CANONICAL_LITERALS in self.mask

    @property
    def utf8_tokens_only(self) -> bool:
        return Policy.UTF8_TOKENS_ONLY in self.mask

    @property
    def eager_end(self) -> bool:
        return Policy.EAGER_END in self.mask


class Matcher(ABC):
    """State of one decoding: created at the spec's initial state."""

    @abstractmethod
    def fill_mask(self, out: np.ndarray) -> None:
        """Write the allowed-token bitmask into `out` (int32, vocab.mask_words long)."""

    @abstractmethod
    def advance(self, token_id: int) -> bool:
        """Consume one token; False (and no state change) if the engine refuses it."""

    @abstractmethod
    def is_accepting(self) -> bool:
        """True iff the text consumed so far is a complete match (EOS allowed)."""

    @abstractmethod
    def reset(self) -> None:
        """Back to the initial state."""

    def forced_text(self) -> bytes | None:
        """The text the grammar forces from here (jump-forward), or None where the engine
        exposes no such thing. Empty where two continuations (or EOS) are possible."""
        return None

    def validate(self, tokens: Sequence[int]) -> int | None:
        """How many of `tokens`, from the first on, this matcher would take, without
        taking any (speculative decoding's check of a draft), through the engine's own
        call where it has one (llguidance's `validate_tokens`); None where it has none."""
        return None

    def rollback(self, count: int) -> bool:
        """Undo the last `count` tokens taken (speculative decoding's rollback of a
        draft's refused suffix), through the engine's own rollback where it has one
        (`Engine.rollback`); False, with no change, where it has none or fewer than
        `count` tokens were taken since the start or the last reset."""
        return False


class Compiled(ABC):
    """A spec compiled for one prepared vocabulary."""

    @abstractmethod
    def matcher(self) -> Matcher: ...

    def memory_bytes(self) -> int | None:
        """The engine's own figure for the compiled index, where it has one."""
        return None

    def num_states(self) -> int | None:
        return None


class Sequences(ABC):
    """A server's batch of sequences, each at the start of its spec when made. A decoding
    step is one call, `step`: sequence i takes tokens[i] if its spec allows it (a
    negative token, or tokens None: it takes none, as a new request), then row i of
    `out` gets its mask; a finished sequence is `reset` to start over as the next
    request. Rows equal what a matcher of the same spec, taking the same tokens, takes
    and fills (EOS is never taken: a caller asks `is_accepting`)."""

    @abstractmethod
    def step(self, tokens: Sequence[int] | None, out: np.ndarray, threads: int) -> list[bool]:
        """Which sequences took their token."""

    @abstractmethod
    def reset(self, rows: Sequence[int]) -> None: ...


class MatcherSequences(Sequences):
    """A matcher per sequence, stepped by the engine's `advance_batch` and `fill_batch`:
    what a server does with an engine that has no batch object of its own."""

    def __init__(self, engine: Engine, compiled: Sequence[Compiled]) -> None:
        self._engine = engine
        self.matchers = [c.matcher() for c in compiled]

    def step(self, tokens: Sequence[int] | None, out: np.ndarray, threads: int) -> list[bool]:
        took = [False] * len(self.matchers)
        if tokens is not None:
            if len(tokens) != len(self.matchers):
                raise ValueError(f"{len(tokens)} tokens for a batch of {len(self.matchers)}")
            rows = [i for i, t in enumerate(tokens) if t >= 0]
            moved = self._engine.advance_batch(
                [self.matchers[i] for i in rows], [tokens[i] for i in rows], threads
            )
            for i, ok in zip(rows, moved, strict=True):
                took[i] = ok
        self._engine.fill_batch(self.matchers, out, threads)
        return took

    def reset(self, rows: Sequence[int]) -> None:
        for row in rows:
            self.matchers[row].reset()


class Engine(ABC):
    """An adapter. Besides driving its engine it owns what the rest of tokensieve must
    know about it: `capabilities`, declared `policies`, and the engine-specific part of
    the standalone repro scripts the differ writes (`mask_repro`, `instance_repro`: code
    that needs only the engine's package), with the package they need."""

    name: str
    capabilities: Capabilities
    policies: Policies
    repro_package: str = ""
    mask_repro: str | None = None
    # the part of a repro script of a serving-protocol finding: `_new()`, a new matcher
    # with take, fill, accepting, reset, rollback, validate and batch through the
    # engine's own calls (`harness.diff.findings.repro`); None where there is none
    protocol_repro: str | None = None
    instance_repro: str | None = None
    # the name an instance repro goes by (the naive engine's failures are its converter's)
    instance_repro_target: str | None = None
    instance_repro_package: str | None = None
    # whether its matchers say what text the spec forces (`Matcher.forced_text` answers
    # bytes, never None): the engines `tokensieve jumpforward` measures
    jump_forward: bool = False
    # the extra of the tokensieve package that installs its package (`pip install
    # 'tokensieve[EXTRA]'`) and the module it imports; None for the engines built into
    # tokensieve
    extra: str | None = None
    module: str | None = None
    # whether its matchers roll back (`Matcher.rollback`) through the engine's own API
    # (llguidance's and xgrammar's `rollback`; TokensDFA keeps its states)
    rollback: bool = False
    # the engine's own batch entry point `fill_batch` goes through (named in reports),
    # or None where a server loops over the engine's matchers (vLLM for such engines)
    batch_api: str | None = None

    @abstractmethod
    def version(self) -> str: ...

    def compiles_schemas_itself(self) -> bool:
        """A regex engine (`json_schema == "via-regex"`) that compiles a schema straight
        from the schema in use's converter, with no regex text in between (the same
        language as the converted regex): the converter's time is then not added to its
        time to first mask, since its own compile includes the schema's."""
        return False

    def grammar_read(self, spec: Spec) -> tuple[str, str]:
        """The text and notation this engine compiles for grammar `spec`: its own, or what
        this project's writers make of it in a notation the engine reads (KBNF for
        kbnf, which is no notation a spec is written in). A repro script embeds these, so
        that it needs only the engine's package."""
        from harness.engines.support import grammar_in

        assert spec.notation is not None
        if spec.notation in self.capabilities.grammars:
            return spec.text, spec.notation
        target = self.capabilities.grammars[0]
        return grammar_in(self, spec, target), target

    def lexer_reading(self, spec: Spec) -> tuple[str, str]:
        """The grammar text and notation this engine's lexing policy applies to: what it
        compiles (`grammar_read`), unless its own converter rewrites the grammar first
        (llguidance's GBNF to Lark)."""
        return self.grammar_read(spec)

    def available(self) -> tuple[bool, str]:
        """(True, "") or (False, why not) — never raises. An engine whose package is not
        installed says so with the one command that installs it."""
        missing = self.not_installed()
        if missing is not None:
            return False, missing
        try:
            self.version()
        except ImportError as exc:
            return False, self.missing(exc)
        except Exception as exc:  # an absent package must not break `tokensieve engines`
            return False, f"{type(exc).__name__}: {exc}"
        return True, ""

    def not_installed(self) -> str | None:
        """Why the engine cannot run when its package is not installed (with the command
        that installs it), else None; asks the import system without importing, so a
        controller can tell at once without paying for the package (xgrammar's torch)."""
        if self.module is None or importlib.util.find_spec(self.module) is not None:
            return None
        return self.missing(ModuleNotFoundError(name=self.module))

    def missing(self, exc: ImportError) -> str:
        """Why the engine cannot run when importing its package failed, and the command
        that installs it."""
        what = f"{exc.name} is not installed" if exc.name else " ".join(str(exc).split())
        if self.extra is None:
            return what
        return f"{what}; install it with: pip install 'tokensieve[{self.extra}]'"

    def fill_batch(self, matchers: Sequence[Matcher], out: np.ndarray, threads: int = 1) -> None:
        """Row i of `out` (int32, C-contiguous, one row of mask words per matcher) gets
        matchers[i]'s mask: one decoding step's mask work for a batch, through the
        engine's batch API on `threads` threads where it has one (`batch_api`), else the
        loop a server runs (one matcher after another; `threads` then changes nothing).
        Every matcher was made by this engine; the rows must equal their single fills."""
        for row, matcher in zip(out, matchers, strict=True):
            matcher.fill_mask(row)

    def advance_batch(
        self, matchers: Sequence[Matcher], tokens: Sequence[int], threads: int = 1
    ) -> list[bool]:
        """Advance matchers[i] by tokens[i]; whether each took its token (as `advance`)."""
        return [m.advance(t) for m, t in zip(matchers, tokens, strict=True)]

    def sequences(self, compiled: Sequence[Compiled]) -> Sequences:
        """A batch of one sequence per entry of `compiled` (a spec may repeat), each made
        by this engine's `compile`."""
        return MatcherSequences(self, compiled)

    @abstractmethod
    def prepare(self, vocab: Vocabulary) -> Any:
        """Build the engine's vocabulary object once; reused by every compile."""

    @abstractmethod
    def compile(self, prepared: Any, spec: Spec) -> Compiled:
        """Raise SpecError / UnsupportedSpec (naming engine and spec), never a raw error."""
