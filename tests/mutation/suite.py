"""The mutation suite: does the differ catch seeded faults, and do their repros reproduce?

For each fault kind (`tests.mutation.faults`) and regex, the mutant (`tests.mutation.mutants`)
is first checked for an *effect*, independently of the differ: along every token path of
up to `EFFECT_DEPTH` tokens and along seeded random paths (another seed than the
differ's), its mask, accepting status or advance must differ somewhere from the engine it
mutates (TokensDFA exact, or TokensDFA canonical for the canonical variant). Every
mutant with an effect must then be *caught*: the differ, with the walk plan `tokensieve
diff` uses, records a bug (a policy verdict does not count) for it. The first bug of
each caught mutant is minimized and its repro script run on its own; it must print
REPRODUCED. The faults on TokensDFA canonical, which declares the canonical policies,
must be caught too: no fault may hide behind a policy.

`tests/test_mutations.py` runs it; `python -m tests.mutation.suite` prints the score.
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness import engines
from harness.diff.findings import repro
from harness.diff.judge.triage import VerdictKind
from harness.diff.run.controller import DiffOptions
from harness.diff.shrink.minimize import minimize, tiny_vocabulary
from harness.diff.shrink.protocol_shrink import minimize_protocol
from harness.diff.walk.differ import Differ
from harness.diff.walk.history import units
from harness.diff.walk.plan import WalkPlan
from harness.engines.base import Engine, Matcher
from harness.spec import Spec
from harness.vocab import Vocabulary
from harness.vocab.resolve import pad
from tests.mutation import mutants
from tests.mutation.faults import FAULTS
from tests.mutation.protocol_faults import PROTOCOL_FAULTS

REGEXES = (r"a(\.a)*", r"-?\d+(\.\d+)?", '"[^"]*"', r"(cat|car)s? [a-z]{2,4}!")
EFFECT_DEPTH = 3
EFFECT_NODES = 3000
EFFECT_WALKS = 120
EFFECT_STEPS = 14
# the protocol walks `tokensieve diff` takes by default (its --protocol-walks)
DIFF_PROTOCOL_WALKS = DiffOptions.__dataclass_fields__["protocol_walks"].default


def suite_vocabulary() -> Vocabulary:
    """A small vocabulary with what the faults need: single bytes, multi-byte tokens,
    non-ASCII digits and letters, UTF-8 fragments, a special id and padding."""
    singles = [c.encode() for c in 'abcdefghijklmnorst0123456789.-"! ']
    longer = [b"ca", b"car", b"cat", b"cats", b".a", b"a.a", b"12", b"3.14", b'"a', b'a"']
    longer += [b"rs", b"s ", b"ab!", b'""']
    unicode = ["é", "中", "٣", "５", "a中"]
    fragments = [b"\xc3", "中".encode()[:2], b"a\xe4", "🙂".encode()[:3]]
    tokens = singles + longer + [u.encode() for u in unicode] + fragments
    base = tiny_vocabulary(tokens, [b"<pad>"])
    return pad(base, base.size + 3)


@dataclass
class Outcome:
    """One (mutant, regex): effect, caught (as a bug), the rules seen, repro result."""

    kind: str
    canonical: bool
    regex: str
    effect: bool
    caught: bool = False
    rules: list[str] = field(default_factory=list)
    policies: list[str] = field(default_factory=list)
    reproduced: bool | None = None
    repro_output: str = ""


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """Every mutant reachable by name (`engines.get`) while inside."""
    old = os.environ.get(engines.EXTRA_ENGINES_ENV)
    extra = mutants.registry()
    os.environ[engines.EXTRA_ENGINES_ENV] = f"{old},{extra}" if old else extra
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(engines.EXTRA_ENGINES_ENV, None)
        else:
            os.environ[engines.EXTRA_ENGINES_ENV] = old


def _state(m: Matcher, words: int) -> tuple[bytes, bool]:
    mask = np.zeros(words, dtype=np.int32)
    m.fill_mask(mask)
    return mask.tobytes(), m.is_accepting()


def has_effect(mutant: Engine, exact: Engine, vocab: Vocabulary, regex: str) -> bool:
    """Whether the mutant differs from the engine it mutates (`exact`) on some path of
    that engine's language: all paths of up to EFFECT_DEPTH tokens, then seeded random
    ones."""
    spec = Spec.regex("mutation/effect", regex)
    mine = mutant.compile(mutant.prepare(vocab), spec).matcher()
    theirs = exact.compile(exact.prepare(vocab), spec).matcher()
    words = vocab.mask_words

    def differs(path: Sequence[int]) -> bool | None:
        """True if they differ after `path` or on its last step; None if the path
        leaves the language."""
        mine.reset()
        theirs.reset()
        for t in path:
            took = theirs.advance(t)
            if mine.advance(t) != took:
                return True
            if not took:
                return None
        return _state(mine, words) != _state(theirs, words)

    queue: list[list[int]] = [[]]
    for i in range(EFFECT_NODES):  # breadth first: the queue grows while it is read
        if i >= len(queue):
            break
        path = queue[i]
        verdict = differs(path)
        if verdict:
            return True
        if verdict is not None and len(path) < EFFECT_DEPTH and len(queue) < EFFECT_NODES:
            queue += [[*path, t] for t in _allowed(theirs, words, vocab)]
    rng = random.Random(f"effect:{regex}")
    for _ in range(EFFECT_WALKS):
        path: list[int] = []
        for _ in range(EFFECT_STEPS):
            if differs(path):
                return True
            options = _allowed(theirs, words, vocab)
            if not options:
                break
            path.append(rng.choice(options))
    return False


def _allowed(m: Matcher, words: int, vocab: Vocabulary) -> list[int]:
    mask = np.zeros(words, dtype=np.int32)
    m.fill_mask(mask)
    bits = np.unpackbits(mask.view(np.uint8), bitorder="little")[: vocab.size]
    return [int(t) for t in np.flatnonzero(bits) if int(t) != vocab.eos_id]


def run_one(
    kind: str,
    canonical: bool,
    regex: str,
    vocab: Vocabulary,
    repro_dir: Path | None,
    plan: WalkPlan | None = None,
) -> Outcome:
    """One mutant on one regex: effect, caught (by the differ walking `plan`, default
    the command's), and (when `repro_dir` is given and it is caught) its first bug
    minimized and its repro run."""
    mutant = engines.get(mutants.engine_name(kind, canonical))
    exact = engines.get("tokensdfa-canonical" if canonical else "tokensdfa")
    out = Outcome(kind, canonical, regex, has_effect(mutant, exact, vocab, regex))
    spec = Spec.regex(f"mutation/{kind}", regex)
    compiled = mutant.compile(mutant.prepare(vocab), spec)
    result = Differ(spec.id, regex, vocab, {mutant.name: (mutant, compiled)}).run(
        plan or WalkPlan()
    )
    bugs = [d for d in result.disagreements if d.verdict == VerdictKind.BUG]
    out.caught = bool(bugs)
    out.rules = sorted({d.rule for d in bugs})
    out.policies = sorted({d.rule for d in result.disagreements if d.verdict == VerdictKind.POLICY})
    if bugs and repro_dir is not None:
        first = min(bugs, key=lambda d: len(d.prefix_ids))
        m = minimize(first, mutant, vocab)
        if m is None:
            out.reproduced, out.repro_output = False, "not minimized"
            return out
        found = repro.witnesses(m)
        path = repro_dir / f"{mutant.name}.py"
        text = repro.explanation(m, found)
        path.write_text(repro.script(m, found, f"mutant {mutant.name}", text), encoding="utf-8")
        out.reproduced, out.repro_output = repro.run(path)
    return out


def run_suite(
    kinds: Sequence[str] = tuple(FAULTS),
    regexes: Sequence[str] = REGEXES,
    variants: Sequence[bool] = (False, True),
    plan: WalkPlan | None = None,
    repros: bool = True,
) -> list[Outcome]:
    """Every (kind, variant, regex); one repro per (kind, variant), on the first regex
    where the mutant is caught (none without `repros`)."""
    vocab = suite_vocabulary()
    out = []
    with registered(), tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            for canonical in variants:
                need_repro = repros
                for regex in regexes:
                    where = Path(tmp) if need_repro else None
                    done = run_one(kind, canonical, regex, vocab, where, plan)
                    need_repro = need_repro and done.reproduced is None
                    out.append(done)
    return out


def score(outcomes: Sequence[Outcome]) -> dict[str, int]:
    """Counts for the report: pairs, with an effect, caught, repros run and reproduced."""
    effect = [o for o in outcomes if o.effect]
    repros = [o for o in outcomes if o.reproduced is not None]
    return {
        "pairs": len(outcomes),
        "kinds": len({o.kind for o in outcomes}),
        "with_effect": len(effect),
        "caught": sum(o.caught for o in effect),
        "caught_without_effect": sum(o.caught for o in outcomes if not o.effect),
        "repros": len(repros),
        "reproduced": sum(bool(o.reproduced) for o in repros),
    }


@dataclass
class ProtocolOutcome:
    """One protocol fault (`tests.mutation.protocol_faults`) on one regex: the protocol
    signatures of the bugs the differ's protocol walks recorded, and whether the first
    one's history, shrunk, still replays the fault on a new matcher."""

    kind: str
    regex: str
    rules: list[str] = field(default_factory=list)
    shrunk_ops: int | None = None


def run_protocol_faults(
    regexes: Sequence[str] = REGEXES, plan: WalkPlan | None = None
) -> list[ProtocolOutcome]:
    """Every protocol fault on every regex, walked as `tokensieve diff` walks (its
    default protocol walks; no lockstep walks, which these faults never touch)."""
    vocab = suite_vocabulary()
    walk = plan or WalkPlan(
        cover_states=0, full_cover_limit=0, random_walks=0, protocol_walks=DIFF_PROTOCOL_WALKS
    )
    out = []
    for kind, engine_class in PROTOCOL_FAULTS.items():
        engine = engine_class()
        for regex in regexes:
            spec = Spec.regex(f"mutation/{kind}", regex)
            compiled = engine.compile(engine.prepare(vocab), spec)
            result = Differ(spec.id, regex, vocab, {engine.name: (engine, compiled)}).run(walk)
            bugs = [d for d in result.disagreements if d.verdict == VerdictKind.BUG]
            done = ProtocolOutcome(kind, regex, sorted({d.rule for d in bugs}))
            if bugs:
                m = minimize_protocol(bugs[0], engine, vocab, budget_s=30.0)
                done.shrunk_ops = None if m is None else len(units(m.history))
            out.append(done)
    return out


# The walk before issue 18: once per reference state everywhere, 200 states covered,
# every random walk mixing short and long tokens.
BLIND_PLAN = WalkPlan(every_step=False, full_cover_limit=0, non_ascii_share=0, short_share=0)


def main() -> None:
    import sys

    outcomes = run_suite(plan=BLIND_PLAN if "--blind" in sys.argv else None)
    for o in outcomes:
        variant = "canonical" if o.canonical else "exact"
        print(
            f"{o.kind:<16} {variant:<9} {o.regex:<26} effect={o.effect!s:<5} "
            f"caught={o.caught!s:<5} rules={','.join(o.rules) or '-'} "
            f"policies={','.join(o.policies) or '-'} repro={o.reproduced}"
        )
    for variant in (False, True):
        part = [o for o in outcomes if o.canonical == variant]
        print("canonical" if variant else "exact", score(part))


if __name__ == "__main__":
    main()
