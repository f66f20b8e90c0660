"""The minimal form of a bug: what a finding keeps of it once shrunk, and what its
standalone repro script embeds (`harness.diff.findings.repro`): the tiny vocabulary,
the prefix, both sides' masks and accepting status, and what the case needs besides (the
history of a reused matcher, a grammar and what the engine compiles of it, the token of a
refused advance). The shrinkers build it (`harness.diff.shrink.minimize.as_minimal`,
`harness.diff.shrink.stale`)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from harness.diff.walk.disagreement import Disagreement
from harness.engines.base import Engine
from harness.spec import Spec
from harness.vocab import Vocabulary


@dataclass(frozen=True)
class Minimal:
    """The smallest case found. Token 0 is EOS (special); ids index `tokens`; `special`
    are the other special ids (padding), which no engine may allow."""

    engine: str
    version: str
    regex: str
    rule: str
    tokens: tuple[bytes, ...]
    prefix_ids: tuple[int, ...]
    expected: tuple[int, ...]  # allowed ids after the prefix, EOS included when accepting
    actual: tuple[int, ...]
    accepting_expected: bool
    accepting_actual: bool
    what: str
    special: tuple[int, ...] = ()
    # for `what == "advance"`: the token whose advance failed though the engine's own
    # mask allows it, and the allowed ids after the prefix and that token
    advance_token: int | None = None
    next_expected: tuple[int, ...] = ()
    source_regex: str = ""  # the regex the bug was found on, before shrinking
    eos_bit_actual: bool | None = None
    # the JSON schema the engine compiled, when `regex` is that schema's language in the
    # engine's dialect (`harness.diff.walk.dialects`); "" when the engine compiled `regex`
    schema: str = ""
    # walked, its mask filled, and the matcher reset before `prefix_ids`
    # (`stale-after-reset`, `harness.diff.shrink.stale`); () for a fresh matcher
    history: tuple[int, ...] = ()
    # for a grammar: its text and notation, which the reference read; "" otherwise
    grammar: str = ""
    notation: str = ""
    # what the engine compiles of it (`Engine.grammar_read`), where that differs: the
    # grammar after a conversion the engine needs; "" when it compiles `grammar` itself
    engine_grammar: str = ""
    engine_notation: str = ""

    @property
    def prefix(self) -> bytes:
        return b"".join(self.tokens[i] for i in self.prefix_ids)

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["tokens"] = [t.hex() for t in self.tokens]
        return out

    @staticmethod
    def from_json(data: dict[str, Any]) -> Minimal:
        fields = dict(data)
        fields["tokens"] = tuple(bytes.fromhex(t) for t in fields["tokens"])
        for key in ("prefix_ids", "expected", "actual", "special", "next_expected", "history"):
            if key in fields:
                fields[key] = tuple(fields[key])
        return Minimal(**fields)

    def key(self) -> tuple[Hashable, ...]:
        """Two findings with equal keys have the same minimal form."""
        return (
            self.engine,
            self.regex,
            self.rule,
            tuple(sorted(self.tokens)),
            self.prefix,
            tuple(sorted(self.tokens[i] for i in set(self.expected) ^ set(self.actual))),
        )


def with_grammar(minimal: Minimal, engine: Engine, grammar: Spec | None) -> Minimal:
    """`minimal` with its grammar fields: the grammar, and what `engine` compiles of it
    where that differs."""
    if grammar is None:
        return minimal
    assert grammar.notation is not None
    minimal = replace(minimal, grammar=grammar.text, notation=grammar.notation)
    text, notation = engine.grammar_read(grammar)
    if (text, notation) == (grammar.text, grammar.notation):
        return minimal
    return replace(minimal, engine_grammar=text, engine_notation=notation)


class MinimalOf(TypedDict):
    """The fields of a `Minimal` that come from the bug and the tiny vocabulary
    (`minimal_form`), whichever way the case was shrunk."""

    engine: str
    version: str
    regex: str
    rule: str
    tokens: tuple[bytes, ...]
    special: tuple[int, ...]


def minimal_form(d: Disagreement, engine: Engine, vocab: Vocabulary) -> MinimalOf:
    """The fields of the Minimal of bug `d` of `engine` on the tiny `vocab` that do not
    depend on how it was shrunk: the engine, its version, the regex and the rule from
    `d`, the tokens and the special ids from `vocab`; the caller adds the state (the
    prefix, both sides' masks, what the case needs besides: `as_minimal`,
    `harness.diff.shrink.stale`)."""
    return MinimalOf(
        engine=engine.name,
        version=d.version,
        regex=d.regex,
        rule=d.rule,
        tokens=tuple(vocab.tokens),
        special=tuple(sorted(vocab.special_ids - {0})),
    )
