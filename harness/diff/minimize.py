"""Shrink a bug found on a real vocabulary to a few tokens and the shortest prefix.

A disagreement on a 128k-token vocabulary after a 40-token prefix is hard to read and to
report upstream. The minimizer rebuilds the case on a tiny vocabulary that is a subset of
the real one (EOS plus the tokens of the prefix and one witness token, or the prefix's
single bytes), checks that the same engine still shows a bug with the same signature,
then drops tokens one at a time while it keeps doing so. The shortest prefix comes for
free: on a tiny vocabulary the differ reaches every reference state by a shortest path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.diff.differ import Differ, WalkPlan
from harness.diff.disagreement import Disagreement
from harness.diff.references import References
from harness.engines.base import Engine
from harness.errors import TokensieveError
from harness.vocab import GreedyEncoder, Vocabulary

EOS_BYTES = b"<eos>"
# The aim is 10 tokens or fewer; past this many, minimizing is not attempted token by token.
MAX_START_TOKENS = 24
SMALL_PLAN = WalkPlan(cover_states=400, random_walks=6, max_steps=12, seed=0)


@dataclass(frozen=True)
class Minimal:
    """The smallest case found. Token 0 is EOS (special); ids index `tokens`."""

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
        for key in ("prefix_ids", "expected", "actual"):
            fields[key] = tuple(fields[key])
        return Minimal(**fields)

    def key(self) -> tuple[Any, ...]:
        """Two findings with equal keys have the same minimal form."""
        return (
            self.engine,
            self.regex,
            self.rule,
            tuple(sorted(self.tokens)),
            self.prefix,
            tuple(sorted(self.tokens[i] for i in set(self.expected) ^ set(self.actual))),
        )


def tiny_vocabulary(tokens: Sequence[bytes]) -> Vocabulary:
    """EOS (id 0, special) followed by `tokens`, with a greedy longest-match encoder."""
    all_tokens = [EOS_BYTES, *tokens]
    special = frozenset({0})
    return Vocabulary(
        name=f"minimal-{len(all_tokens)}",
        tokens=all_tokens,
        eos_id=0,
        special_ids=special,
        encoder_factory=functools.partial(GreedyEncoder, all_tokens, special),
    )


def _probe(
    engine: Engine, regex: str, spec_id: str, tokens: Sequence[bytes], rule: str, what: str
) -> Disagreement | None:
    """The shortest-prefix bug of `engine` with signature `rule` on a tiny vocabulary of
    `tokens`, or None if it does not show there."""
    vocab = tiny_vocabulary(tokens)
    try:
        refs = References(regex, vocab)
        compiled = engine.compile(engine.prepare(vocab), _regex_spec(spec_id, regex))
    except (TokensieveError, ValueError):
        return None
    result = Differ(spec_id, regex, vocab, {engine.name: (engine, compiled)}, refs).run(SMALL_PLAN)
    same = [
        d
        for d in result.disagreements
        if d.engine == engine.name and d.verdict == "bug" and d.rule == rule and d.what == what
    ]
    return min(same, key=lambda d: (len(d.prefix), len(d.prefix_ids))) if same else None


def _regex_spec(spec_id: str, regex: str) -> Any:
    from harness.spec import Spec

    return Spec.regex(f"{spec_id}#minimal", regex)


def _witness(d: Disagreement, vocab: Vocabulary) -> list[bytes]:
    ids = list(d.reference_only[:1]) + list(d.engine_only[:1])
    return [vocab.tokens[i] for i in ids]


def _starts(d: Disagreement, vocab: Vocabulary) -> list[list[bytes]]:
    """Candidate starting vocabularies, smallest first, all subsets of `vocab`."""
    witness = _witness(d, vocab)
    by_token = _dedupe([vocab.tokens[i] for i in d.prefix_ids] + witness)
    present = set(vocab.tokens)
    singles = [bytes([b]) for b in dict.fromkeys(d.prefix)]
    by_byte = _dedupe(singles + witness) if all(s in present for s in singles) else []
    starts = [by_token, by_byte, _dedupe(by_token + by_byte)]
    return [s for s in starts if s and len(s) <= MAX_START_TOKENS]


def _dedupe(tokens: list[bytes]) -> list[bytes]:
    return [t for t in dict.fromkeys(tokens) if t and t != EOS_BYTES]


def minimize(
    d: Disagreement,
    engine: Engine,
    vocab: Vocabulary,
    log: Callable[[str], None] = lambda _: None,
) -> Minimal | None:
    """The minimal form of bug `d`, or None when no small subset of the vocabulary shows
    it (the bug then needs tokens the minimizer did not try)."""
    found: Disagreement | None = None
    tokens: list[bytes] = []
    for start in _starts(d, vocab):
        found = _probe(engine, d.regex, d.spec_id, start, d.rule, d.what)
        if found is not None:
            tokens = start
            break
    if found is None:
        log(f"{engine.name} {d.spec_id}: no small vocabulary reproduces {d.rule}")
        return None
    # Drop tokens, longest first, while the bug still shows.
    for token in sorted(tokens, key=lambda t: (-len(t), t)):
        if len(tokens) == 1:
            break
        fewer = [t for t in tokens if t != token]
        smaller = _probe(engine, d.regex, d.spec_id, fewer, d.rule, d.what)
        if smaller is not None:
            tokens, found = fewer, smaller
    return _as_minimal(found, tokens, engine)


def _as_minimal(d: Disagreement, tokens: list[bytes], engine: Engine) -> Minimal:
    vocab = tiny_vocabulary(tokens)
    refs = References(d.regex, vocab)
    state = refs.naive.initial_state
    for t in d.prefix_ids:
        state = refs.naive.next_state(state, t)
    expected = tuple(refs.naive.allowed(state))
    differing = set(d.reference_only) ^ set(d.engine_only)
    actual_set = (set(expected) - {0}) ^ differing
    if d.accepting_actual:
        actual_set.add(0)
    return Minimal(
        engine=engine.name,
        version=d.version,
        regex=d.regex,
        rule=d.rule,
        tokens=tuple(vocab.tokens),
        prefix_ids=d.prefix_ids,
        expected=expected,
        actual=tuple(sorted(actual_set)),
        accepting_expected=d.accepting_expected,
        accepting_actual=d.accepting_actual,
        what=d.what,
    )
