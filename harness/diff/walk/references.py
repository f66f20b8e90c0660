"""The reference indexes of one regex (or one grammar) over one vocabulary, as the
differ needs them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from harness.diff.judge.view import Answer, ByteDfa
from harness.engines.base import Engine, Policy
from harness.errors import TokensieveError
from harness.language import grammar as language_grammar
from harness.language import reference
from harness.language.regex_syntax import (
    ascii_classes,
    pieces,
    regex_features,
    uses_class_escapes,
)
from harness.spec import Spec
from harness.vocab import Vocabulary


class TokenIndex(Protocol):
    """A token-level index of a regex over a vocabulary (TokensDFA's `NaiveIndex`,
    `Index` or `LazyIndex`), as the differ walks it: states are ints, a refused token
    has no next state."""

    @property
    def initial_state(self) -> int: ...

    def fill_mask(self, state: int, out: np.ndarray) -> None: ...

    def next_state(self, state: int, token: int) -> int | None: ...

    def is_accepting(self, state: int) -> bool: ...

    def allowed(self, state: int) -> list[int]: ...


class ExactIndex(TokenIndex, Protocol):
    """TokensDFA exact (`Index`): also the text it forces from a state."""

    def forced_bytes(self, state: int) -> bytes: ...


class NaiveIndex(TokenIndex, Protocol):
    """The naive reference index: also how many states it has."""

    @property
    def num_states(self) -> int: ...


# The reference of a JSON schema in an engine's dialect, nested k levels deeper
# (`values-nested-deeper`): its regex, or None where it cannot be written.
Deeper = Callable[[int], str | None]
# A schema read another way (`allof-widened`): its regex, or None where nothing changes.
Reading = Callable[[], str | None]


class References:
    """The reference indexes of one regex over one vocabulary: naive (the definition),
    TokensDFA exact (checked against it, and the source of forced text), the byte DFA (for
    triage), and the reference under each policy an engine declares or each reading a
    signature compares with (`anchors-removed`, and a schema's `readings`), built on
    demand."""

    def __init__(
        self,
        regex: str,
        vocab: Vocabulary,
        spec_id: str = "<regex>",
        deeper: Deeper | None = None,
        readings: dict[str, Reading] | None = None,
        grammar: Spec | None = None,
    ) -> None:
        """Raises SpecError or UnsupportedSpec (naming the reference) when the reference
        cannot read or build `regex`: there is then no language to compare with.
        `deeper`, for a schema converted in an engine's dialect, gives the same schema's
        regex with unconstrained values and recursive `$ref`s nested k levels deeper, or
        None where it cannot be written (`values-nested-deeper`). `readings`, for such a
        schema, give by name the regex of the schema read another way that a signature
        compares with (`allof-widened`), or None where that reading changes nothing.

        With `grammar` (a grammar spec; `regex` is then empty) the reference is the
        grammar's Earley index (`harness.language.grammar.build`), which also stands in
        for TokensDFA exact (nothing to check it against) and forces no text; there is
        no byte DFA, so the signatures that read one do not apply."""
        tokensdfa = reference.tokensdfa()
        self.regex = regex
        self.vocab = vocab
        self.native_vocab = reference.native_vocabulary(vocab)
        self.grammar = grammar
        self.dfa: ByteDfa | None
        self.naive: NaiveIndex
        # TokensDFA exact (its forced text read by triage), or a grammar's reference
        self.exact: ExactIndex | NaiveIndex
        if grammar is not None:
            index = language_grammar.build(grammar, self.native_vocab)
            self.naive = index
            self.exact = index
            self.dfa = None
        else:
            self.naive = reference.build(regex, self.native_vocab, reference.NAME, spec_id)
            self.exact = tokensdfa.Index(regex, self.native_vocab)
            self.dfa = tokensdfa.ByteDfa(regex)
        self.deeper = deeper
        self.readings = dict(readings or {})
        self._deeper: dict[int, TokenIndex | None] = {}
        self._policy: dict[str, TokenIndex | None] = {}
        self._dotall: ByteDfa | None = None
        self._dotall_built = False

    def sentence(self, text: bytes) -> bool | None:
        """Whether `text` is a sentence of the spec (None past a grammar's budget)."""
        if self.dfa is None:
            return self._grammar_answer("accepts", text)
        state = self.dfa.walk(self.dfa.initial_state, text)
        return state is not None and bool(self.dfa.is_accepting(state))

    def viable(self, text: bytes) -> bool | None:
        """Whether some continuation makes `text` a sentence (None past the budget)."""
        if self.dfa is None:
            return self._grammar_answer("viable", text)
        return self.dfa.walk(self.dfa.initial_state, text) is not None

    def _grammar_answer(self, question: str, text: bytes) -> bool | None:
        try:
            return bool(getattr(self.naive, question)(text))
        except ValueError:  # the reference's BudgetError
            return None

    @property
    def dotall_dfa(self) -> ByteDfa | None:
        """The byte DFA of the regex with `.` matching newline (for triage)."""
        tokensdfa = reference.tokensdfa()
        if not self._dotall_built and self.grammar is None:
            self._dotall_built = True
            try:
                self._dotall = tokensdfa.ByteDfa(f"(?s:{self.regex})")
            except ValueError:
                self._dotall = None
        return self._dotall

    def policy_index(self, name: str, engine: Engine) -> TokenIndex | None:
        """The naive index of the regex as `engine` reads it under policy or reading
        `name`, or None when that reading does not change the regex."""
        tokensdfa = reference.tokensdfa()
        if name in GRAMMAR_READINGS:
            return self._grammar_reading(Policy(name), engine)
        table = engine.policies.class_table if name == Policy.ASCII_CLASSES else ()
        key = f"{name}:{table}"
        if key not in self._policy:
            pattern = None
            if name == Policy.ASCII_CLASSES and uses_class_escapes(self.regex):
                try:
                    pattern = ascii_classes(self.regex, dict(table))
                except ValueError:
                    pattern = None  # no ASCII spelling (negated escape in a class)
            elif name == "anchors-removed" and "anchors" in regex_features(self.regex):
                pattern = without_anchors(self.regex)
            elif name in self.readings:
                pattern = self.readings[name]()
            elif name == Policy.CANONICAL_LITERALS:
                self._policy[key] = self._canonical_index()
                return self._policy[key]
            index = None
            if pattern is not None and pattern != self.regex:
                try:
                    index = tokensdfa.NaiveIndex(pattern, self.native_vocab)
                except ValueError:
                    index = None
            self._policy[key] = index
        return self._policy[key]

    def deeper_answer(self, ids: tuple[int, ...], levels: int) -> Answer | None:
        """(allowed ids, accepting) after `ids` of the schema's reference `levels` deeper
        (see `deeper`), or None: no deeper regex, or the path leaves its language. The
        deeper regexes are large and read at a few states: TokensDFA's lazy index (exact
        against the naive one by its tests), built on first use for each depth."""
        if self.deeper is None:
            return None
        if levels not in self._deeper:
            pattern = self.deeper(levels)
            index = None
            if pattern is not None:
                try:
                    index = reference.tokensdfa().LazyIndex(pattern, self.native_vocab)
                except ValueError:
                    index = None
            self._deeper[levels] = index
        index = self._deeper[levels]
        if index is None:
            return None
        state = reference.walk(index, ids)
        if state is None:
            return None
        allowed = frozenset(int(t) for t in index.allowed(state)) - {self.vocab.eos_id}
        return allowed, bool(index.is_accepting(state))

    def _grammar_reading(self, policy: Policy, engine: Engine) -> TokenIndex | None:
        """The grammar's reference as `engine`'s lexer reads it under `policy`
        (`GRAMMAR_READINGS`), on the grammar its lexer reads (`Engine.lexer_reading`);
        None for a regex, or where the front end cannot read that grammar."""
        if self.grammar is None:
            return None
        key = f"{policy}:{engine.name}"
        if key not in self._policy:
            try:
                text, notation = engine.lexer_reading(self.grammar)
                lexing, leading, trailing = GRAMMAR_READINGS[policy]
                self._policy[key] = reference.tokensdfa().NaiveGrammarIndex(
                    text,
                    self.native_vocab,
                    notation,
                    lexing=lexing,
                    leading_ignore=leading,
                    trailing_ignore=trailing,
                )
            except (ValueError, TokensieveError):
                self._policy[key] = None
        return self._policy[key]

    def _canonical_index(self) -> TokenIndex | None:
        """TokensDFA in canonical_literals mode: what that policy prescribes."""
        try:
            return reference.tokensdfa().Index(
                self.regex, self.native_vocab, mode="canonical_literals"
            )
        except ValueError:
            return None


def without_anchors(regex: str) -> str:
    """`regex` with its anchors `^ $ \\A \\z` (outside bracket classes) removed."""
    kept = []
    for piece in pieces(regex):
        anchor = (piece.kind == "char" and piece.text in "^$") or (
            piece.kind == "escape" and piece.text in ("\\A", "\\z")
        )
        if piece.in_class or not anchor:
            kept.append(piece.text)
    return "".join(kept)


# The lexing policies, each a reading of the grammar by the reference: (lexing, whether
# ignored text may come before the first terminal, where it may come after the last).
GRAMMAR_READINGS: dict[Policy, tuple[str, bool, str]] = {
    Policy.GREEDY_LEXEMES: ("greedy", False, "where-a-lexeme-may-follow"),
    Policy.NO_LEADING_IGNORE: ("scannerless", False, "always"),
}


def policies_needing_reference(engine: Engine) -> list[Policy]:
    """The policies of `engine` whose rule compares with a reference of their own."""
    own = (Policy.ASCII_CLASSES, Policy.CANONICAL_LITERALS, *GRAMMAR_READINGS)
    return [p for p in own if engine.policies.follows(p)]
