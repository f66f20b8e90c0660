"""What the judge sees of one disagreement (`StateView`): both masks, both accepting
statuses, the reference's automata at that state and the references of the engine's
policies. Triage and the bug signatures read it; neither builds it (the walk does)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from harness.engines.base import Engine
from harness.vocab import Vocabulary


class ByteDfa(Protocol):
    """A byte automaton of a regex (`tokensdfa.ByteDfa`), as the judge reads it."""

    @property
    def initial_state(self) -> int: ...

    def walk(self, state: int, data: bytes) -> int | None: ...

    def is_accepting(self, state: int) -> bool: ...


# (allowed ids, accepting) of some reference at a state; None: it has no state there.
Answer = tuple[frozenset[int], bool]


class Explains(Protocol):
    """A semantics model a signature compares the engine with (`LeftmostFirst`): the
    reason when the engine's answer at the view's state is the model's, else None."""

    def explains(self, view: StateView) -> str | None: ...


@dataclass(frozen=True)
class Models:
    """What some rules compare the engine with besides the reference, built by the walk
    on demand: leftmost-first matching of the regex (`harness.diff.judge.leftmost`, the
    `leftmost-first` signature), for a schema compared in an engine's JSON dialect the
    reference nested k levels deeper at this state (`deeper(k)`, the
    `values-nested-deeper` policy), and the spec's sentences and viable prefixes over
    bytes (`sentence`, `viable`: a grammar has no byte DFA to walk)."""

    leftmost_first: Explains | None = None
    deeper: Callable[[int], Answer | None] | None = None
    # the spec read on bytes, for texts that are no token path: whether a text is a
    # sentence, and whether some continuation makes it one (None: the reference ran out
    # of budget, and a signature needing the answer does not hold)
    sentence: Callable[[bytes], bool | None] | None = None
    viable: Callable[[bytes], bool | None] | None = None


@dataclass
class StateView:
    """What triage sees of one disagreement.

    `expected` / `actual` are token ids (EOS excluded: EOS is the accepting status, and
    `eos_bit_actual` is the EOS bit of the engine's mask). `policy_reference` holds, per
    policy or signature that needs one, the (allowed ids, accepting) of the reference run
    on the regex as read under it, at the same tokens, or None when that reference has no
    state there (the path left its language). `vocab` gives the encoder `canonical-forced`
    needs; `special` are the vocabulary's special ids besides EOS (padding included),
    which no engine may allow.
    """

    engine: Engine
    tokens: list[bytes]
    prefix: bytes
    expected: frozenset[int]
    actual: frozenset[int]
    accepting_expected: bool
    accepting_actual: bool
    forced: bytes  # bytes the reference forces from here ("" if none)
    dfa: ByteDfa | None  # of the reference regex (None for a grammar: no byte DFA)
    # the same regex with `.` matching newline too, or None where it cannot be built
    dotall_dfa: ByteDfa | None
    policy_reference: dict[str, Answer | None]
    eos_bit_actual: bool | None = None  # None: as `accepting_actual` (no separate bit)
    special: frozenset[int] = frozenset()
    vocab: Vocabulary | None = None
    regex: str = ""
    last_token: bytes = b""  # the bytes of the path's last token (b"" at the start)
    # semantics models rules may consult (leftmost-first, the deeper reference)
    models: Models = field(default_factory=Models)

    @property
    def reference_only(self) -> frozenset[int]:
        return self.expected - self.actual

    @property
    def engine_only(self) -> frozenset[int]:
        return self.actual - self.expected

    @property
    def eos_consistent(self) -> bool:
        """The engine's EOS bit says what its accepting status says."""
        return self.eos_bit_actual is None or self.eos_bit_actual == self.accepting_actual
