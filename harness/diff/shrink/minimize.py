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
(`harness.diff.shrink.regex_shrink`), then the tokens once more (`shrink_case`). The
shortest prefix comes for free: on a tiny vocabulary the differ reaches every reference
state by a shortest path; the path the bug was found on is shrunk first where the bug
shows only on it (`harness.diff.shrink.path`).

Each shrinking step follows the shrinker contract (`harness.diff.shrink.contract`):
`minimize` is the adapter that binds the engine, the vocabulary and the bug to keep
into `keeps` (`_Probe`), and builds the `Minimal` of what is left.

A native JSON engine's finding on a schema (`harness.diff.walk.dialects`) keeps its schema,
which the engine compiles, and the regex of that schema in the engine's dialect, which
the reference reads: only the tokens shrink. A finding on a grammar keeps its grammar,
which both the engine and the reference (the Earley index) read: the tokens shrink,
then the grammar (`harness.diff.shrink.grammar_shrink`: rules, alternatives and symbols
dropped while the bug shows), then the tokens again.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from harness.diff.judge.triage import VerdictKind
from harness.diff.shrink.contract import Keeps
from harness.diff.shrink.ddmin import ddmin
from harness.diff.shrink.grammar_shrink import shrink_grammar
from harness.diff.shrink.minimal import Minimal, minimal_form, with_grammar
from harness.diff.shrink.path import shortcuts, shrink_path, spelled
from harness.diff.shrink.regex_shrink import shrink_regex
from harness.diff.walk.differ import Differ
from harness.diff.walk.disagreement import Disagreement
from harness.diff.walk.plan import WalkPlan
from harness.diff.walk.references import Deeper, Reading, References
from harness.engines.base import Engine
from harness.errors import TokensieveError
from harness.language import reference
from harness.spec import Spec
from harness.vocab import GreedyEncoder, Vocabulary

EOS_BYTES = b"<eos>"
# The largest start tried (tokens); the aim is 10 tokens or fewer after shrinking.
MAX_START_TOKENS = 600
# Reference-allowed tokens added to start 3, shortest first.
CONTEXT_TOKENS = 48
SMALL_PLAN = WalkPlan(cover_states=400, random_walks=6, max_steps=12, seed=0)
# Seconds one finding may take to shrink (tokens, regex, grammar); past it, the smallest
# case found so far is kept (it still shows the bug).
BUDGET_S = 40.0


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


@dataclass(frozen=True)
class TinyCase:
    """What the minimizer shrinks: a regex and the tokens of a tiny vocabulary (EOS and
    the specials besides), on which the bug shows."""

    regex: str
    tokens: tuple[bytes, ...]


def shrink_case(
    start: TinyCase, keeps: Keeps[TinyCase], deadline: float, *, fixed_regex: bool = False
) -> TinyCase:
    """The shrinker contract over a tiny case: delta debugging drops tokens, then the
    regex is cut (`shrink_regex`; not with `fixed_regex`: the regex of a schema in an
    engine's dialect stays whole), then the tokens are dropped again where the regex
    changed (a lighter regex needs fewer of them)."""
    tokens = ddmin(list(start.tokens), lambda ts: keeps(TinyCase(start.regex, tuple(ts))), deadline)
    regex = start.regex
    if not fixed_regex:
        regex = shrink_regex(regex, lambda r: keeps(TinyCase(r, tuple(tokens))), deadline)
    if regex != start.regex:
        tokens = ddmin(tokens, lambda ts: keeps(TinyCase(regex, tuple(ts))), deadline)
    return TinyCase(regex, tuple(tokens))


# A probe's cache key: the regex, the tokens, the path, the grammar's text ("" for none).
_ProbeKey = tuple[str, tuple[bytes, ...], tuple[bytes, ...], str]


@dataclass
class _Probe:
    """What a probe needs besides the regex and the tokens: the bug to keep showing, and
    how to build the engine and the reference on a tiny vocabulary."""

    engine: Engine
    spec_id: str
    rule: str
    what: str
    specials: tuple[bytes, ...]
    schema: str = ""  # the schema the engine compiles, if not the regex
    # the grammar both the engine and the reference read, if not the regex
    grammar: Spec | None = None
    # the schema's regex some levels deeper (References.deeper)
    deeper: Deeper | None = None
    # the schema's other readings (References.readings)
    readings: dict[str, Reading] = field(default_factory=dict)
    # the tokens of the path the bug was found on, walked first on each tiny vocabulary
    # that spells it (`harness.diff.shrink.path`)
    path: tuple[bytes, ...] = ()
    probes: int = 0
    cache: dict[_ProbeKey, list[Disagreement] | None] = field(default_factory=dict)

    def find(
        self,
        regex: str,
        tokens: Sequence[bytes],
        rule: str | None = None,
        path: tuple[bytes, ...] | None = None,
    ) -> Disagreement | None:
        """The shortest-prefix bug of the engine with this rule (any rule when `rule` is
        "*") on a tiny vocabulary of `tokens`, walking `path` (default: the probe's), or
        None if it does not show there."""
        path = self.path if path is None else path
        key = (regex, tuple(tokens), path, self.grammar.text if self.grammar else "")
        if key not in self.cache:
            self.probes += 1
            self.cache[key] = _bugs(self, regex, tokens, path)
        found = self.cache[key]
        want = rule or self.rule
        if found is None:
            return None
        same = [d for d in found if d.what == self.what and want in ("*", d.rule)]
        return min(same, key=lambda d: (len(d.prefix), len(d.prefix_ids))) if same else None

    def shows(self, case: TinyCase) -> bool:
        """`keeps` of `shrink_case`: the bug shows on the case."""
        return self.find(case.regex, case.tokens) is not None


def _bugs(
    probe: _Probe, regex: str, tokens: Sequence[bytes], path: tuple[bytes, ...]
) -> list[Disagreement] | None:
    vocab = tiny_vocabulary(tokens, probe.specials)
    engine = probe.engine
    spec_id = f"{probe.spec_id}#min"
    if probe.grammar is not None:
        spec = replace(probe.grammar, id=spec_id)
    elif probe.schema:
        spec = Spec.schema(spec_id, probe.schema)
    else:
        spec = Spec.regex(spec_id, regex)
    try:
        refs = References(
            regex, vocab, deeper=probe.deeper, readings=probe.readings, grammar=probe.grammar
        )
        compiled = engine.compile(engine.prepare(vocab), spec)
        plans = [SMALL_PLAN]
        ids = spelled(vocab, path)
        if ids:
            plans.append(replace(SMALL_PLAN, paths=(ids,)))
        found: list[Disagreement] = []
        for plan in plans:  # the found path only where the small plan misses the rule
            result = Differ(
                probe.spec_id,
                regex,
                vocab,
                {engine.name: (engine, compiled)},
                refs,
                check_exact=False,
            ).run(plan)
            found += [
                d
                for d in result.disagreements
                if d.engine == engine.name and d.verdict == VerdictKind.BUG
            ]
            if any(d.rule == probe.rule for d in found):
                break
    except (TokensieveError, ValueError):
        return None
    return found


def _shorten_path(probe: _Probe, regex: str, tokens: Sequence[bytes], deadline: float) -> None:
    """Shortens `probe.path` where the bug shows only on it, on the tiny vocabulary of
    `tokens` (`shrink_path`: dropping vocabulary tokens first spent the whole budget
    failing to drop path tokens, 741 probes); a bug that shows without the path keeps
    it as it is."""
    full = probe.path
    if not full or probe.find(regex, tokens, path=()) is not None:
        return
    found = shortcuts(regex, tiny_vocabulary(tokens, probe.specials), full)

    def keeps(path: tuple[bytes, ...]) -> bool:
        return probe.find(regex, tokens, path=path) is not None

    probe.path = shrink_path(full, keeps, deadline, shortcuts=found)


def _dedupe(tokens: Sequence[bytes], specials: Sequence[bytes] = ()) -> list[bytes]:
    drop = {EOS_BYTES, b"", *specials}
    return [t for t in dict.fromkeys(tokens) if t not in drop]


def needed_bytes(regex: str, vocab: Vocabulary, limit: int = 4000) -> list[bytes]:
    """The single-byte tokens of `vocab` for every byte the regex's DFA can read (an
    engine that wants a token out of every reachable state takes a vocabulary with
    these)."""
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
    deeper: Deeper | None = None,
    readings: dict[str, Reading] | None = None,
    grammar: Spec | None = None,
) -> Minimal | None:
    """The minimal form of bug `d`, or None when no subset of the vocabulary tried shows
    it. `context`: the reference's allowed ids at the failing state (start 3). With
    `schema`, the engine compiles that schema and `d.regex` (its language in the
    engine's dialect; `deeper`, it nested deeper) stays whole; with `grammar`, the
    engine and the reference read that grammar, which is shrunk after the tokens."""
    deadline = time.monotonic() + budget_s
    probe = _Probe(engine, d.spec_id, d.rule, d.what, _specials(d, vocab), schema, grammar)
    probe.deeper = deeper
    probe.readings = dict(readings or {})
    probe.path = tuple(vocab.tokens[i] for i in d.prefix_ids)
    start, found = _first_start(probe, d, vocab, context)
    if found is None:
        log(f"{engine.name} {d.spec_id}: no subset of the vocabulary tried shows {d.rule}")
        return None
    probe.rule = found.rule
    _shorten_path(probe, d.regex, start, deadline)
    fixed = bool(schema) or grammar is not None
    case = shrink_case(TinyCase(d.regex, tuple(start)), probe.shows, deadline, fixed_regex=fixed)
    if grammar is not None:
        case = _shrink_grammar(probe, case, deadline)
    best = probe.find(case.regex, case.tokens)
    assert best is not None  # every step above kept the bug showing
    log(f"{engine.name} {d.spec_id}: {len(case.tokens)} tokens, {probe.probes} probes")
    return as_minimal(best, case.tokens, engine, probe.specials, d.regex, schema, probe.grammar)


def _shrink_grammar(probe: _Probe, case: TinyCase, deadline: float) -> TinyCase:
    """The grammar shrunk on the case's tokens (left in `probe.grammar`), then the
    tokens again where it changed (a smaller grammar needs fewer of them)."""
    start = probe.grammar
    assert start is not None

    def keeps(g: Spec) -> bool:
        probe.grammar = g
        found = probe.find(case.regex, case.tokens) is not None
        probe.grammar = start
        return found

    probe.grammar = shrink_grammar(start, keeps, deadline)
    changed = probe.grammar != start
    return shrink_case(case, probe.shows, deadline, fixed_regex=True) if changed else case


def _first_start(
    probe: _Probe, d: Disagreement, vocab: Vocabulary, context: Sequence[int]
) -> tuple[list[bytes], Disagreement | None]:
    """The first start showing a bug of the case's rule (else of any rule), with the
    engine's needed single bytes added where it refuses the bare start."""
    extra = None
    for rule in (d.rule, "*"):
        for start in _starts(d, vocab, context):
            found = probe.find(d.regex, start, rule)
            if found is None:
                if extra is None:
                    try:
                        # a grammar has no byte DFA to say which bytes it needs
                        extra = [] if probe.grammar is not None else needed_bytes(d.regex, vocab)
                    except ValueError:
                        extra = []
                start = _dedupe(start + extra)
                found = probe.find(d.regex, start, rule)
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
    grammar: Spec | None = None,
) -> Minimal:
    """The Minimal of a disagreement found on the tiny vocabulary of `tokens`."""
    vocab = tiny_vocabulary(tokens, specials)
    refs = References(d.regex, vocab, grammar=grammar)
    state = reference.walk(refs.naive, d.prefix_ids)
    assert state is not None  # the differ found `d` on this vocabulary, after this prefix
    expected = tuple(int(t) for t in refs.naive.allowed(state))
    differing = set(d.reference_only) ^ set(d.engine_only)
    actual_set = (set(expected) - {0}) ^ differing
    if d.accepting_actual:
        actual_set.add(0)
    next_expected: tuple[int, ...] = ()
    advance_token = None
    if d.what == "advance" and d.reference_only:
        advance_token = d.reference_only[0]
        after = refs.naive.next_state(state, advance_token)
        if after is not None:
            next_expected = tuple(int(t) for t in refs.naive.allowed(after))
    minimal = Minimal(
        **minimal_form(d, engine, vocab),
        prefix_ids=d.prefix_ids,
        expected=expected,
        actual=tuple(sorted(actual_set)),
        accepting_expected=d.accepting_expected,
        accepting_actual=d.accepting_actual,
        what=d.what,
        advance_token=advance_token,
        next_expected=next_expected,
        source_regex=source_regex or d.regex,
        eos_bit_actual=d.eos_bit_actual,
        schema=schema,
    )
    return with_grammar(minimal, engine, grammar)
