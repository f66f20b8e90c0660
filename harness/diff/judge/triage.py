"""Triage of one mask disagreement: a declared policy of the engine, or a bug.

Every rule is explicit and must explain the *whole* difference at the state (every token
allowed by one side only, the accepting status, and the EOS bit of the engine's mask); a
difference no policy explains is a bug. Bugs are further labelled with a *signature*
(`harness.diff.judge.signatures`) when they have the shape of a known finding, so a report can
group them and a hypothesis test can name them; a bug with no known shape is still a bug
("unclassified"), never dropped.

Policies (each engine declares which apply in `Engine.policies`):
- `ascii-classes`: `\\d \\w \\s` are ASCII (or, per class, what the engine's declared
  `class_table` says). Explained iff the engine's mask and accepting status equal those
  of the reference run on the regex with those classes, walked along the same tokens.
- `canonical-forced` (llguidance): where the reference forces text F, the engine keeps
  exactly the first token of F as the vocabulary's encoder spells it (every id with
  those bytes; where the encoder cannot spell F, one token that is a prefix of F), with
  the reference's accepting status (`harness.diff.judge.canonical`).
- `canonical-literals` (TokensDFA's canonical_literals mode): every literal run only in
  its minimal tokenization. Explained iff the engine's mask and accepting status equal
  those of TokensDFA in that mode walked along the same tokens, and that mask is a
  non-empty subset of the reference's: a dropped token the mode keeps is a bug, and so
  is anything the mode itself gets wrong against the reference. That every string stays
  producible is a global property, checked by the hypothesis suite, not per state.
- `utf8-tokens-only` (lm-format-enforcer): a token that is not valid UTF-8 on its own is
  never allowed. Explained iff the engine's mask is the reference's (read under its
  class policy) without exactly those tokens, with the same accepting status.
- `values-nested-deeper` (engines compared in their JSON dialect, `harness.diff.walk.dialects`):
  the reference nests a value the schema leaves unconstrained, and a recursive `$ref`,
  at most a few levels deep (neither is regular). Explained iff the engine refuses
  nothing the reference allows, has its accepting status, and every token it adds is
  allowed by the reference converted k levels deeper (k: the most `[` and `{` one of
  those tokens holds, 1 to MAX_DEEPER), walked along the same tokens.
- `eager-end` (Formatron): once the text is a complete non-empty match, EOS alone; at
  the empty text, never EOS. Explained iff the engine's mask is exactly that.
`declared_answer` reads the reference through these last two, for tests as well.
A policy must explain the whole difference, so it never explains a mask whose EOS bit
disagrees with the engine's own accepting status.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum

from harness.diff.judge.canonical import encoder_first
from harness.diff.judge.signatures import BUG_SIGNATURES
from harness.diff.judge.view import StateView
from harness.engines.base import Engine, Policy
from harness.vocab.model import is_utf8


class VerdictKind(StrEnum):
    """What a disagreement is: the engine following a declared policy, or a bug. The
    value is what diff.json, the store and the pages show."""

    POLICY = "policy"
    BUG = "bug"


@dataclass(frozen=True)
class Verdict:
    """The judgement of one disagreement: its kind, the rule that decided it (a
    `Policy` for a policy; a bug signature of `harness.diff.judge.signatures`, or
    "unclassified", for a bug) and why, in one line."""

    kind: VerdictKind
    rule: str
    why: str


Rule = Callable[[StateView], str | None]


def _reading_rule(view: StateView, policy: Policy, why: str) -> str | None:
    """`why` when the engine follows `policy` and its mask and accepting status are the
    reference's under that policy's own reading (`References.policy_index`: the regex
    with ASCII classes, a grammar lexed as the engine lexes it)."""
    if not view.engine.policies.follows(policy):
        return None
    under = view.policy_reference.get(policy)
    if under is None:
        return None
    allowed, accepting = under
    if allowed == view.actual and accepting == view.accepting_actual:
        return why
    return None


def _ascii_rule(view: StateView) -> str | None:
    return _reading_rule(
        view, Policy.ASCII_CLASSES, "mask equals the reference's with ASCII \\d \\w \\s"
    )


def _subset_nonempty(view: StateView) -> bool:
    return (
        not view.engine_only
        and bool(view.actual)
        and view.accepting_actual == view.accepting_expected
    )


def _canonical_forced_rule(view: StateView) -> str | None:
    if not view.engine.policies.follows(Policy.CANONICAL_FORCED) or not view.forced:
        return None
    if not _subset_nonempty(view) or view.vocab is None:
        return None
    first = encoder_first(view.vocab, view.forced)
    kept = {view.tokens[t] for t in view.actual}
    if first is not None and kept != {first}:
        return None
    if first is None and (len(kept) != 1 or not view.forced.startswith(next(iter(kept)))):
        return None
    return (
        f"text {view.forced[:40]!r} is forced; the engine keeps only its canonical first "
        f"token ({len(view.actual)} of the reference's {len(view.expected)} ids)"
    )


def _canonical_literals_rule(view: StateView) -> str | None:
    if not view.engine.policies.follows(Policy.CANONICAL_LITERALS) or not _subset_nonempty(view):
        return None
    under_policy = view.policy_reference.get(Policy.CANONICAL_LITERALS)
    if under_policy is None:
        return None
    allowed, accepting = under_policy
    if allowed == view.actual and accepting == view.accepting_actual:
        return (
            f"literal runs only in their minimal tokenization: the mask equals TokensDFA "
            f"canonical's ({len(view.actual)} of {len(view.expected)} tokens kept)"
        )
    return None


def declared_answer(
    engine: Engine, tokens: list[bytes], allowed: Collection[int], accepting: bool, at_start: bool
) -> tuple[frozenset[int], bool]:
    """The (text ids allowed, accepting) an engine owes under `utf8_tokens_only` and
    `eager_end`, from the reference's `allowed` (EOS excluded) and `accepting` at a state
    reached by some text (`at_start`: by none)."""
    found = frozenset(allowed)
    if engine.policies.follows(Policy.UTF8_TOKENS_ONLY):
        found = frozenset(t for t in found if is_utf8(tokens[t]))
    if engine.policies.follows(Policy.EAGER_END) and accepting:
        return (found, False) if at_start else (frozenset(), True)
    return found, accepting


def _base(view: StateView) -> tuple[frozenset[int], bool] | None:
    """The reference's answer read under the engine's class policy (None: that reference
    has no state here)."""
    if (
        not view.engine.policies.follows(Policy.ASCII_CLASSES)
        or Policy.ASCII_CLASSES not in view.policy_reference
    ):
        return view.expected, view.accepting_expected
    return view.policy_reference[Policy.ASCII_CLASSES]


def _declared_rule(view: StateView, policy: Policy) -> str | None:
    """`utf8-tokens-only` or `eager-end`, when the engine follows `policy`: its answer is
    `declared_answer`'s, which differs from the reference's."""
    base = _base(view)
    if not view.engine.policies.follows(policy) or base is None:
        return None
    allowed, accepting = declared_answer(
        view.engine, view.tokens, base[0], base[1], at_start=not view.prefix
    )
    if (allowed, accepting) == base or (allowed, accepting) != (
        view.actual,
        view.accepting_actual,
    ):
        return None
    if policy == Policy.EAGER_END:
        return "the text is a complete match: the engine ends there (EOS alone)"
    return f"{len(base[0] - allowed)} tokens that are not valid UTF-8 on their own dropped"


def _utf8_rule(view: StateView) -> str | None:
    return _declared_rule(view, Policy.UTF8_TOKENS_ONLY)


# The most levels a deeper reference adds (each multiplies its regex's size).
MAX_DEEPER = 4


def _deeper_rule(view: StateView) -> str | None:
    answer_at = view.models.deeper
    if answer_at is None or view.reference_only or not view.engine_only:
        return None
    if view.accepting_actual != view.accepting_expected:
        return None
    opened = max(view.tokens[t].count(b"[") + view.tokens[t].count(b"{") for t in view.engine_only)
    levels = min(MAX_DEEPER, max(1, opened))
    answer = answer_at(levels)
    if answer is None or not view.engine_only <= answer[0]:
        return None
    return (
        "every token only the engine allows is allowed by the reference with unconstrained "
        f"values and recursive $refs nested {levels} level(s) deeper"
    )


def _eager_end_rule(view: StateView) -> str | None:
    return _declared_rule(view, Policy.EAGER_END)


def _greedy_lexemes_rule(view: StateView) -> str | None:
    return _reading_rule(
        view,
        Policy.GREEDY_LEXEMES,
        "mask and accepting status equal the grammar's with greedy lexemes and ignored "
        "text only before a lexeme (or where one may follow)",
    )


def _no_leading_ignore_rule(view: StateView) -> str | None:
    return _reading_rule(
        view,
        Policy.NO_LEADING_IGNORE,
        "mask and accepting status equal the grammar's with no ignored text before the "
        "first terminal",
    )


# One rule per policy, tried in this order (a test checks every `Policy` has one).
POLICY_RULES: dict[Policy, Rule] = {
    Policy.ASCII_CLASSES: _ascii_rule,
    Policy.CANONICAL_FORCED: _canonical_forced_rule,
    Policy.CANONICAL_LITERALS: _canonical_literals_rule,
    Policy.UTF8_TOKENS_ONLY: _utf8_rule,
    Policy.VALUES_NESTED_DEEPER: _deeper_rule,
    Policy.EAGER_END: _eager_end_rule,
    Policy.GREEDY_LEXEMES: _greedy_lexemes_rule,
    Policy.NO_LEADING_IGNORE: _no_leading_ignore_rule,
}


# Policies whose reading is a reference of its own (`StateView.policy_reference`).
READING_POLICIES = (Policy.ASCII_CLASSES, Policy.GREEDY_LEXEMES, Policy.NO_LEADING_IGNORE)


def _policy_readings(view: StateView) -> list[tuple[Policy, StateView]]:
    """The state seen against the reference read under each policy the engine follows
    that has a reading: where an engine both follows a policy and has a known bug at
    one state (llguidance refusing leading whitespace, its policy, and letting a raw
    newline into a string), the bug's signature holds against that reading and names
    it, though no rule explains the whole difference from the plain reference."""
    found = []
    for policy in READING_POLICIES:
        under = view.policy_reference.get(policy)
        if under is None or not view.engine.policies.follows(policy):
            continue
        allowed, accepting = under
        found.append(
            (policy, dataclasses.replace(view, expected=allowed, accepting_expected=accepting))
        )
    return found


def triage(view: StateView) -> Verdict:
    """The verdict on one disagreement: the first policy that explains all of it, else a
    bug with the first matching signature (against the plain reference, else against
    the reading of a policy the engine follows), else an unclassified bug."""
    if view.eos_consistent:
        for policy, rule in POLICY_RULES.items():
            why = rule(view)
            if why:
                return Verdict(VerdictKind.POLICY, policy, why)
    for name, signature in BUG_SIGNATURES.items():
        why = signature(view)
        if why:
            return Verdict(VerdictKind.BUG, name, why)
    for policy, read in _policy_readings(view):
        for name, signature in BUG_SIGNATURES.items():
            why = signature(read)
            if why:
                return Verdict(VerdictKind.BUG, name, f"{why}, beside its {policy} reading")
    parts = []
    if view.reference_only:
        parts.append(f"{len(view.reference_only)} tokens allowed only by the reference")
    if view.engine_only:
        parts.append(f"{len(view.engine_only)} only by the engine")
    if view.accepting_expected != view.accepting_actual:
        parts.append("accepting status differs")
    if not view.eos_consistent:
        parts.append("the EOS bit contradicts the engine's accepting status")
    return Verdict(VerdictKind.BUG, "unclassified", "; ".join(parts) or "no difference")
