"""Shrink a bug found on a real vocabulary to a few tokens, the shortest prefix and a
small regex.

A disagreement on a 128k-token vocabulary after a 40-token prefix is hard to read and to
report upstream. The minimizer rebuilds the case on a tiny vocabulary that is a subset of
the real one and checks that the same engine still shows a bug there (`probe`), trying
starts from small to large:
1. the prefix's tokens and one witness token of each side;
2. the prefix's single bytes and the witnesses;
3. the prefix's tokens, every differing token kept and the reference's allowed tokens at
   the failing state (a bug that needs a third token: a lead-byte token, a token the
   reference allows beside the witness);
4. all of that plus every single-byte token (the fallback, never no repro).
An engine that refuses a tiny vocabulary (outlines-core wants a token out of every
reachable state) gets the single-byte tokens the regex can use added to the start.
From the first start that shows the bug, delta debugging drops tokens while the bug
still shows with the same signature (or, when the start already shows another
signature, with that one: a different shape, still a bug); then the regex is shrunk
(`harness.diff.shrink.regex_shrink`), then the tokens once more. The shortest prefix comes for
free: on a tiny vocabulary the differ reaches every reference state by a shortest path.

A native JSON engine's finding on a schema (`harness.diff.walk.dialects`) keeps its schema,
which the engine compiles, and the regex of that schema in the engine's dialect, which
the reference reads: only the tokens shrink.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.diff.shrink.ddmin import ddmin
from harness.diff.walk.differ import Differ, WalkPlan
from harness.diff.walk.disagreement import Disagreement
from harness.diff.walk.references import References
from harness.engines.base import Engine
from harness.errors import TokensieveError
from harness.spec import Spec
from harness.vocab import GreedyEncoder, Vocabulary

EOS_BYTES = b"<eos>"
# The largest start tried (tokens); the aim is 10 tokens or fewer after shrinking.
MAX_START_TOKENS = 600
# Reference-allowed tokens added to start 3, shortest first.
CONTEXT_TOKENS = 48
# Reference states the search for shorter paths to the found path's states visits.
MAX_SHORTCUT_STATES = 20_000
SMALL_PLAN = WalkPlan(cover_states=400, random_walks=6, max_steps=12, seed=0)
# Seconds one finding may take to shrink (tokens and regex); past it, the smallest case
# found so far is kept (it still shows the bug).
BUDGET_S = 40.0


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
    # for `what == "advance"`: allowed ids after the prefix and the advanced token
    next_expected: tuple[int, ...] = ()
    source_regex: str = ""  # the regex the bug was found on, before shrinking
    eos_bit_actual: bool | None = None
    # the JSON schema the engine compiled, when `regex` is that schema's language in the
    # engine's dialect (`harness.diff.walk.dialects`); "" when the engine compiled `regex`
    schema: str = ""
    # walked, its mask filled, and the matcher reset before `prefix_ids`
    # (`stale-after-reset`, `harness.diff.shrink.stale`); () for a fresh matcher
    history: tuple[int, ...] = ()

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


def tiny_vocabulary(tokens: Sequence[bytes], specials: Sequence[bytes] = ()) -> Vocabulary:
    """EOS (id 0, special) followed by `tokens`, then `specials` (special ids), with a
    greedy longest-match encoder."""
    all_tokens = [EOS_BYTES, *tokens, *specials]
    special = frozenset({0, *range(1 + len(tokens), len(all_tokens))})
    return Vocabulary(
        name=f"minimal-{len(all_tokens)}",
        tokens=all_tokens,
        eos_id=0,
        special_ids=special,
        encoder_factory=functools.partial(GreedyEncoder, all_tokens, special),
    )


@dataclass
class _Case:
    """What a probe needs besides the tokens: the bug to keep showing."""

    engine: Engine
    spec_id: str
    rule: str
    what: str
    specials: tuple[bytes, ...]
    schema: str = ""  # the schema the engine compiles, if not the regex
    # the schema's regex some levels deeper (References.deeper)
    deeper: Callable[[int], str | None] | None = None
    # the schema's other readings (References.readings)
    readings: dict[str, Callable[[], str | None]] = field(default_factory=dict)
    # the tokens of the path the bug was found on, walked first on each tiny vocabulary
    # that spells it (`_path`)
    path: tuple[bytes, ...] = ()
    probes: int = 0
    cache: dict[tuple[str, tuple[bytes, ...], tuple[bytes, ...]], list[Disagreement] | None] = (
        field(default_factory=dict)
    )

    def probe(
        self, regex: str, tokens: Sequence[bytes], rule: str | None = None
    ) -> Disagreement | None:
        """The shortest-prefix bug of the engine with this rule (any rule when `rule` is
        "*") on a tiny vocabulary of `tokens`, or None if it does not show there."""
        key = (regex, tuple(tokens), self.path)
        if key not in self.cache:
            self.probes += 1
            self.cache[key] = _bugs(self, regex, tokens)
        found = self.cache[key]
        want = rule or self.rule
        if found is None:
            return None
        same = [d for d in found if d.what == self.what and want in ("*", d.rule)]
        return min(same, key=lambda d: (len(d.prefix), len(d.prefix_ids))) if same else None


def _bugs(case: _Case, regex: str, tokens: Sequence[bytes]) -> list[Disagreement] | None:
    vocab = tiny_vocabulary(tokens, case.specials)
    engine = case.engine
    spec_id = f"{case.spec_id}#min"
    spec = Spec.schema(spec_id, case.schema) if case.schema else Spec.regex(spec_id, regex)
    try:
        refs = References(regex, vocab, deeper=case.deeper, readings=case.readings)
        compiled = engine.compile(engine.prepare(vocab), spec)
        plans = [SMALL_PLAN]
        path = _path(vocab, case.path)
        if path:
            plans.append(replace(SMALL_PLAN, paths=(path,)))
        found: list[Disagreement] = []
        for plan in plans:  # the found path only where the small plan misses the rule
            result = Differ(
                case.spec_id,
                regex,
                vocab,
                {engine.name: (engine, compiled)},
                refs,
                check_exact=False,
            ).run(plan)
            found += [
                d for d in result.disagreements if d.engine == engine.name and d.verdict == "bug"
            ]
            if any(d.rule == case.rule for d in found):
                break
    except (TokensieveError, ValueError):
        return None
    return found


def _path(vocab: Vocabulary, tokens: Sequence[bytes]) -> tuple[int, ...]:
    """The path the bug was found on, in the ids of a tiny vocabulary: its own tokens
    where the vocabulary holds them all, else its bytes one by one where it holds those,
    else () (not walked). The cover walks reach each reference state once, by a
    shortest path; an engine whose state is finer than the reference's (llguidance
    will not end `0.50` under exclusive bounds, where `0.5` reaches the same reference
    state) shows its bug only on the path that crosses it."""
    index = {t: i for i, t in enumerate(vocab.tokens) if i not in vocab.special_ids}
    if all(t in index for t in tokens):
        return tuple(index[t] for t in tokens)
    data = b"".join(tokens)
    if all(data[i : i + 1] in index for i in range(len(data))):
        return tuple(index[data[i : i + 1]] for i in range(len(data)))
    return ()


def _shorten_path(case: _Case, regex: str, tokens: list[bytes], deadline: float) -> None:
    """Shortens `case.path` where the bug shows only on it (`_path`) on the tiny
    vocabulary of `tokens`. The vocabulary must spell the whole path, so a path of 120
    JSON tokens kept 120 tokens that had nothing to do with the bug, and dropping
    vocabulary tokens first spent the whole budget failing to drop path tokens (741
    probes). Two steps, each keeping the bug with the same rule:
    - the path's head replaced by a shortest path to the reference state it reaches,
      the longest such head first (the engine's finer state lies near the end: the
      `0.50` of a number, not the members before it);
    - delta debugging drops the remaining tokens (a dropped token that breaks the
      text ends the walk there, so such cuts fail harmlessly).
    The vocabulary is shrunk after, freed of what the path no longer needs."""
    full = case.path
    if not full:
        return
    case.path = ()
    alone = case.probe(regex, tokens) is not None
    case.path = full
    if alone:
        return

    def holds(path: Sequence[bytes]) -> bool:
        case.path = tuple(path)
        shown = case.probe(regex, tokens) is not None
        case.path = full
        return shown

    for shorter in _shortcuts(regex, tiny_vocabulary(tokens, case.specials), full):
        if time.monotonic() >= deadline:
            return
        if holds(shorter):
            full = case.path = shorter
            break
    case.path = tuple(ddmin(list(full), holds, deadline))


def _shortcuts(regex: str, vocab: Vocabulary, path: Sequence[bytes]) -> list[tuple[bytes, ...]]:
    """`path` (as `_path` spells it in the tiny `vocab`) with its first `i` tokens
    replaced by a shortest path to the reference state they reach, wherever that is
    shorter, the largest `i` first; none where the reference cannot be built there
    (a probe on the same vocabulary would have failed too)."""
    ids = _path(vocab, path)
    try:
        naive = References(regex, vocab).naive
    except (TokensieveError, ValueError):
        return []
    states = [naive.initial_state]
    for t in ids:
        nxt = naive.next_state(states[-1], t)
        if nxt is None:
            break
        states.append(nxt)
    wanted = set(states)
    shortest: dict[int, tuple[int, ...]] = {naive.initial_state: ()}
    queue = [naive.initial_state]
    for state in queue:  # breadth first, until every state on the path is reached
        if wanted <= shortest.keys() or len(shortest) > MAX_SHORTCUT_STATES:
            break
        for t in naive.allowed(state):
            t = int(t)
            nxt = naive.next_state(state, t) if t not in vocab.special_ids else None
            if nxt is not None and nxt not in shortest:
                shortest[nxt] = (*shortest[state], t)
                queue.append(nxt)
    out = []
    for i in range(len(states) - 1, 0, -1):
        head = shortest.get(states[i])
        if head is not None and len(head) < i:
            out.append(tuple(vocab.tokens[t] for t in (*head, *ids[i:])))
    return out


def _dedupe(tokens: Sequence[bytes], specials: Sequence[bytes] = ()) -> list[bytes]:
    drop = {EOS_BYTES, b"", *specials}
    return [t for t in dict.fromkeys(tokens) if t not in drop]


def needed_bytes(regex: str, vocab: Vocabulary, limit: int = 4000) -> list[bytes]:
    """The single-byte tokens of `vocab` for every byte the regex's DFA can read (an
    engine that wants a token out of every reachable state takes a vocabulary with
    these)."""
    from harness.language import reference

    dfa = reference.tokensdfa().ByteDfa(regex)
    present = set(vocab.tokens) - {vocab.tokens[i] for i in vocab.special_ids}
    used: set[int] = set()
    seen = {dfa.initial_state}
    order = [dfa.initial_state]
    for state in order:
        for b in range(256):
            nxt = dfa.walk(state, bytes([b]))
            if nxt is None:
                continue
            used.add(b)
            if nxt not in seen and len(seen) < limit:
                seen.add(nxt)
                order.append(nxt)
    return [bytes([b]) for b in sorted(used) if bytes([b]) in present]


def _starts(d: Disagreement, vocab: Vocabulary, context: Sequence[int]) -> list[list[bytes]]:
    """Candidate starting vocabularies, smallest first, all subsets of `vocab`."""
    tokens = vocab.tokens
    hidden = vocab.special_ids
    witness = [tokens[i] for i in (*d.reference_only[:1], *d.engine_only[:1]) if i not in hidden]
    prefix_tokens = [tokens[i] for i in d.prefix_ids]
    present = set(tokens)
    singles = [bytes([b]) for b in dict.fromkeys(d.prefix)]
    by_byte = singles + witness if all(s in present for s in singles) else []
    differing = [tokens[i] for i in (*d.reference_only, *d.engine_only) if i not in hidden]
    shortest = sorted(context, key=lambda i: (len(tokens[i]), i))[:CONTEXT_TOKENS]
    wide = prefix_tokens + differing + [tokens[i] for i in shortest]
    all_bytes = [bytes([b]) for b in range(256) if bytes([b]) in present]
    starts = [prefix_tokens + witness, by_byte, wide, wide + all_bytes]
    out: list[list[bytes]] = []
    for s in starts:
        s = _dedupe(s)
        if len(s) <= MAX_START_TOKENS and s not in out and (s or not d.prefix_ids):
            out.append(s)
    return out


def _specials(d: Disagreement, vocab: Vocabulary) -> tuple[bytes, ...]:
    """Special ids the bug shows on (an engine allowing padding), as tiny-vocabulary
    specials: `<special:N>` stands for the Nth (their bytes are never text)."""
    ids = [i for i in d.engine_only if i in vocab.special_ids and i != vocab.eos_id]
    return tuple(f"<special:{k}>".encode() for k in range(min(2, len(ids))))


def minimize(
    d: Disagreement,
    engine: Engine,
    vocab: Vocabulary,
    log: Callable[[str], None] = lambda _: None,
    *,
    context: Sequence[int] = (),
    budget_s: float = BUDGET_S,
    schema: str = "",
    deeper: Callable[[int], str | None] | None = None,
    readings: dict[str, Callable[[], str | None]] | None = None,
) -> Minimal | None:
    """The minimal form of bug `d`, or None when no subset of the vocabulary tried shows
    it. `context`: the reference's allowed ids at the failing state (start 3). With
    `schema`, the engine compiles that schema and `d.regex` (its language in the
    engine's dialect; `deeper`, it nested deeper) stays whole."""
    deadline = time.monotonic() + budget_s
    case = _Case(engine, d.spec_id, d.rule, d.what, _specials(d, vocab), schema, deeper)
    case.readings = dict(readings or {})
    case.path = tuple(vocab.tokens[i] for i in d.prefix_ids)
    start, found = _first_start(case, d, vocab, context)
    if found is None:
        log(f"{engine.name} {d.spec_id}: no subset of the vocabulary tried shows {d.rule}")
        return None
    case.rule = found.rule
    regex = d.regex
    _shorten_path(case, regex, start, deadline)
    tokens = ddmin(start, lambda ts: case.probe(regex, ts) is not None, deadline)
    from harness.diff.shrink.regex_shrink import shrink_regex

    if not schema:
        regex = shrink_regex(regex, lambda r: case.probe(r, tokens) is not None, deadline)
    if regex != d.regex:
        tokens = ddmin(tokens, lambda ts: case.probe(regex, ts) is not None, deadline)
    best = case.probe(regex, tokens)
    assert best is not None  # every step above kept the bug showing
    log(f"{engine.name} {d.spec_id}: {len(tokens)} tokens, {case.probes} probes")
    return as_minimal(best, tokens, engine, case.specials, d.regex, schema)


def _first_start(
    case: _Case, d: Disagreement, vocab: Vocabulary, context: Sequence[int]
) -> tuple[list[bytes], Disagreement | None]:
    """The first start showing a bug of the case's rule (else of any rule), with the
    engine's needed single bytes added where it refuses the bare start."""
    extra = None
    for rule in (d.rule, "*"):
        for start in _starts(d, vocab, context):
            found = case.probe(d.regex, start, rule)
            if found is None:
                if extra is None:
                    try:
                        extra = needed_bytes(d.regex, vocab)
                    except ValueError:
                        extra = []
                start = _dedupe(start + extra)
                found = case.probe(d.regex, start, rule)
            if found is not None:
                return start, found
    return [], None


def as_minimal(
    d: Disagreement,
    tokens: Sequence[bytes],
    engine: Engine,
    specials: Sequence[bytes] = (),
    source_regex: str = "",
    schema: str = "",
) -> Minimal:
    """The Minimal of a disagreement found on the tiny vocabulary of `tokens`."""
    vocab = tiny_vocabulary(tokens, specials)
    refs = References(d.regex, vocab)
    state = refs.naive.initial_state
    for t in d.prefix_ids:
        state = refs.naive.next_state(state, t)
    expected = tuple(int(t) for t in refs.naive.allowed(state))
    differing = set(d.reference_only) ^ set(d.engine_only)
    actual_set = (set(expected) - {0}) ^ differing
    if d.accepting_actual:
        actual_set.add(0)
    next_expected: tuple[int, ...] = ()
    if d.what == "advance" and d.reference_only:
        after = refs.naive.next_state(state, d.reference_only[0])
        if after is not None:
            next_expected = tuple(int(t) for t in refs.naive.allowed(after))
    return minimal_form(
        d,
        engine,
        vocab,
        prefix_ids=d.prefix_ids,
        expected=expected,
        actual=tuple(sorted(actual_set)),
        accepting_expected=d.accepting_expected,
        accepting_actual=d.accepting_actual,
        what=d.what,
        next_expected=next_expected,
        source_regex=source_regex or d.regex,
        eos_bit_actual=d.eos_bit_actual,
        schema=schema,
    )


def minimal_form(d: Disagreement, engine: Engine, vocab: Vocabulary, **state: Any) -> Minimal:
    """The Minimal of bug `d` of `engine` on the tiny `vocab`, with `state` (the prefix,
    both sides' masks, and what the case needs besides): the engine, its version, the
    regex and the rule come from `d`, the tokens and the special ids from `vocab`, the
    same for every way a case is shrunk (`as_minimal`, `harness.diff.shrink.stale`)."""
    return Minimal(
        engine=engine.name,
        version=d.version,
        regex=d.regex,
        rule=d.rule,
        tokens=tuple(vocab.tokens),
        special=tuple(sorted(vocab.special_ids - {0})),
        **state,
    )
