"""Triage of one mask disagreement: a declared policy of the engine, or a bug.

Every rule is explicit and must explain the *whole* difference at the state (every token
allowed by one side only, and the accepting status); a difference no policy explains is a
bug. Bugs are further labelled with a *signature* when they have the shape of a known
finding, so a report can group them and a hypothesis test can name them; a bug with no
known shape is still a bug ("unclassified"), never dropped.

Policies (each engine declares which apply in `Engine.policies`):
- `ascii-classes`: `\\d \\w \\s` are ASCII (or, per class, what the engine's declared
  `class_table` says). Explained iff the engine's mask and accepting status equal those
  of the reference run on the regex with those classes, walked along the same tokens.
- `canonical-forced`: where the next text is forced, only its canonical tokenization is
  allowed. Explained iff the reference forces at least one byte here, the engine allows
  a non-empty subset of the reference's tokens and nothing else, and agrees on accepting.
- `canonical-literals` (TokensDFA's canonical_literals mode): every literal run only in
  its minimal tokenization. Explained iff the engine allows a non-empty subset of the
  reference's tokens and agrees on accepting; that every string stays producible is a
  global property, checked by the hypothesis suite, not per state.

Bug signatures:
- `final-state-exit`: the engine only drops tokens, and every dropped token passes
  through a full match before its last byte (outlines-core's finish-and-continue bug and
  its leftmost-first alternation are both of this shape).
- `utf8-surrogate`: the engine only adds tokens, and each one spells a UTF-8-encoded
  surrogate (ED A0-BF), which is not UTF-8 and so matches no regex over text.
- `utf8-overapproximation`: the engine only adds tokens, and each one stops inside a
  multi-byte UTF-8 character that the regex cannot complete (a byte-range approximation
  of a Unicode class).
- `dot-matches-newline`: the engine only adds tokens, each holding a newline, and each
  fits the regex read with `.` matching newline (outside `(?s)`, `.` excludes it).
- `accepting-only`: the masks agree but the accepting status does not.
- `unclassified`: anything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from harness.engines.base import Engine

POLICY = "policy"
BUG = "bug"


@dataclass
class StateView:
    """What triage sees of one disagreement.

    `reference_only` / `engine_only` are token ids (EOS excluded: EOS is the accepting
    status). `policy_reference` holds, per policy that needs one, the (allowed ids,
    accepting) of the reference run under that policy at the same tokens, or None when
    that reference has no state there (the path left its language).
    """

    engine: Engine
    tokens: list[bytes]
    prefix: bytes
    expected: frozenset[int]
    actual: frozenset[int]
    accepting_expected: bool
    accepting_actual: bool
    forced: bytes  # bytes the reference forces from here ("" if none)
    dfa: Any  # tokensdfa.ByteDfa of the reference regex
    # the same regex with `.` matching newline too, or None where it cannot be built
    dotall_dfa: Any | None
    policy_reference: dict[str, tuple[frozenset[int], bool] | None]

    @property
    def reference_only(self) -> frozenset[int]:
        return self.expected - self.actual

    @property
    def engine_only(self) -> frozenset[int]:
        return self.actual - self.expected


@dataclass(frozen=True)
class Verdict:
    kind: str  # POLICY or BUG
    rule: str  # policy name or bug signature
    why: str  # one line


Rule = Callable[[StateView], str | None]


def _ascii_rule(view: StateView) -> str | None:
    if view.engine.policies.unicode_classes or "ascii-classes" not in view.policy_reference:
        return None
    under_policy = view.policy_reference["ascii-classes"]
    if under_policy is None:
        return None
    allowed, accepting = under_policy
    if allowed == view.actual and accepting == view.accepting_actual:
        return "mask equals the reference's with ASCII \\d \\w \\s"
    return None


def _subset_nonempty(view: StateView) -> bool:
    return (
        not view.engine_only
        and bool(view.actual)
        and view.accepting_actual == view.accepting_expected
    )


def _canonical_forced_rule(view: StateView) -> str | None:
    if not view.engine.policies.canonical_forced or not view.forced:
        return None
    if _subset_nonempty(view):
        return (
            f"text {view.forced[:40]!r} is forced; the engine keeps {len(view.actual)} of "
            f"the reference's {len(view.expected)} spellings"
        )
    return None


def _canonical_literals_rule(view: StateView) -> str | None:
    if not view.engine.policies.canonical_literals:
        return None
    if _subset_nonempty(view):
        return (
            f"literal runs only in their minimal tokenization: {len(view.actual)} of "
            f"{len(view.expected)} tokens kept"
        )
    return None


POLICY_RULES: dict[str, Rule] = {
    "ascii-classes": _ascii_rule,
    "canonical-forced": _canonical_forced_rule,
    "canonical-literals": _canonical_literals_rule,
}


def passes_through_match(dfa: Any, prefix: bytes, token: bytes) -> bool:
    """True if `prefix` + some proper prefix of `token` (possibly empty) fully matches."""
    state = dfa.walk(dfa.initial_state, prefix)
    if state is None:
        return False
    for byte in token[:-1] if token else b"":
        if dfa.is_accepting(state):
            return True
        state = dfa.walk(state, bytes([byte]))
        if state is None:
            return False
    return bool(dfa.is_accepting(state)) and len(token) > 0


_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")


def spells_surrogate(prefix: bytes, token: bytes) -> bool:
    """True if `token`, written after `prefix`, completes or contains the two leading
    bytes of a UTF-8-encoded surrogate."""
    joined = prefix[-1:] + token
    return _SURROGATE.search(joined) is not None


def _final_state_exit(view: StateView) -> str | None:
    if view.engine_only or not view.reference_only:
        return None
    if all(
        passes_through_match(view.dfa, view.prefix, view.tokens[t]) for t in view.reference_only
    ):
        return (
            f"every one of the {len(view.reference_only)} dropped tokens passes through a "
            "full match before its last byte"
        )
    return None


def _utf8_surrogate(view: StateView) -> str | None:
    if view.reference_only or not view.engine_only:
        return None
    if all(spells_surrogate(view.prefix, view.tokens[t]) for t in view.engine_only):
        return (
            f"every one of the {len(view.engine_only)} extra tokens spells a surrogate (ED A0-BF)"
        )
    return None


def ends_mid_character(data: bytes) -> bool:
    """True if `data` ends inside a multi-byte UTF-8 sequence (a lead byte followed by
    fewer continuation bytes than it announces)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: keep looking for the lead
        need = (
            2
            if byte >> 5 == 0b110
            else 3
            if byte >> 4 == 0b1110
            else 4
            if byte >> 3 == 0b11110
            else 1
        )
        return back < need
    return False


def _utf8_overapproximation(view: StateView) -> str | None:
    if view.reference_only or not view.engine_only:
        return None
    if all(ends_mid_character(view.prefix + view.tokens[t]) for t in view.engine_only):
        return (
            f"every one of the {len(view.engine_only)} extra tokens stops inside a UTF-8 "
            "character that no completion can finish within the regex"
        )
    return None


def _dot_matches_newline(view: StateView) -> str | None:
    if view.reference_only or not view.engine_only or view.dotall_dfa is None:
        return None
    dfa = view.dotall_dfa
    for t in view.engine_only:
        token = view.tokens[t]
        if b"\n" not in token or dfa.walk(dfa.initial_state, view.prefix + token) is None:
            return None
    return (
        f"every one of the {len(view.engine_only)} extra tokens holds a newline and fits "
        "the regex when `.` matches newline"
    )


def _accepting_only(view: StateView) -> str | None:
    if view.expected == view.actual and view.accepting_expected != view.accepting_actual:
        want = "accepting" if view.accepting_expected else "not accepting"
        return f"masks agree, but the text so far is {want} and the engine says otherwise"
    return None


BUG_SIGNATURES: dict[str, Rule] = {
    "final-state-exit": _final_state_exit,
    "utf8-surrogate": _utf8_surrogate,
    "utf8-overapproximation": _utf8_overapproximation,
    "dot-matches-newline": _dot_matches_newline,
    "accepting-only": _accepting_only,
}


def triage(view: StateView, policies: Collection[str] | None = None) -> Verdict:
    """The verdict on one disagreement: the first policy that explains all of it, else a
    bug with the first matching signature, else an unclassified bug."""
    for name, rule in POLICY_RULES.items():
        if policies is not None and name not in policies:
            continue
        why = rule(view)
        if why:
            return Verdict(POLICY, name, why)
    for name, rule in BUG_SIGNATURES.items():
        why = rule(view)
        if why:
            return Verdict(BUG, name, why)
    parts = []
    if view.reference_only:
        parts.append(f"{len(view.reference_only)} tokens allowed only by the reference")
    if view.engine_only:
        parts.append(f"{len(view.engine_only)} only by the engine")
    if view.accepting_expected != view.accepting_actual:
        parts.append("accepting status differs")
    return Verdict(BUG, "unclassified", "; ".join(parts) or "no difference")
