"""The grammar corpus (set `grammars`): context-free grammars in the three notations,
each with labelled instances, a public counterpart to MaskBench for grammars.

Three sources, each entry tagged with its notation and source:
- `grammars/edge-NAME`: the grammars of `corpora/grammars/` (written for tokensieve: a
  lexer collision, nullable rules, left recursion, Unicode classes, tokens spanning
  terminals, `%ignore` around terminals, unbounded nesting, ambiguity), with the
  hand-labelled texts of `corpora/grammars/instances.json`;
- `grammars/NOTATION-NAME`: the public grammars of `../shared/corpora/grammars` (GBNF
  from llama.cpp, Lark from SynCode and llguidance, EBNF from transformers-CFG), read by
  path, never copied; absent, they are skipped with one warning;
- `grammars/lark-package-NAME`: the grammars the installed `lark` package ships (its
  libraries `common` and `unicode`, which have no start rule, left out).

Instances: the hand-labelled ones, and for every grammar sentences derived from it at
random (`tokensdfa.grammar_samples`, valid by construction) with near-miss mutations of
them (one character dropped, doubled or replaced), each mutation labelled by a judge:
`lark` (Earley, `dynamic_complete` lexer: an independent parser) for Lark grammars it reads,
else the
reference itself; the entry's `judge:` tag names which. Derived instances are drawn with a
fixed seed, so the corpus is the same on every machine with the same packages.
"""

from __future__ import annotations

import importlib.resources
import json
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from harness.corpora.entry import Entry, unique
from harness.corpora.grammar_judge import Judge
from harness.errors import MissingData
from harness.language import grammar
from harness.project import CORPORA_DIR, PROJECT_ROOT
from harness.spec import Notation, Spec

SET = "grammars"
EDGE_DIR = CORPORA_DIR / "grammars"
SHARED_DIR = PROJECT_ROOT.parent / "shared" / "corpora" / "grammars"
# Lark's libraries: terminals to import, no start rule.
LARK_LIBRARIES = frozenset({"common", "unicode"})
# Derived sentences per grammar, and the seed they are drawn with.
SAMPLES = 4
SEED = 0
# A derived sentence longer than this is not kept (texts walk token by token).
MAX_SAMPLE_BYTES = 1000


@cache
def entries() -> tuple[Entry, ...]:
    """Every grammar of the three sources with its instances."""
    found = _edge()
    try:
        found += _shared(SHARED_DIR)
    except MissingData as exc:
        print(f"tokensieve: warning: {exc}", file=sys.stderr)
    found += _lark_package()
    return unique(found)


def _edge() -> list[Entry]:
    labelled = json.loads((EDGE_DIR / "instances.json").read_text(encoding="utf-8"))
    out = []
    for path in sorted(EDGE_DIR.iterdir()):
        notation = grammar.notation_of(path)
        if notation is None:
            continue
        given = labelled.get(path.stem, {})
        out.append(
            _entry(
                f"{SET}/edge-{path.stem}",
                path.read_text(encoding="utf-8"),
                notation,
                "tokensieve (handwritten)",
                ("handwritten",),
                tuple(given.get("valid", ())),
                tuple(given.get("invalid", ())),
            )
        )
    return out


def _shared(folder: Path) -> list[Entry]:
    if not folder.is_dir():
        raise MissingData(f"the public grammars are not at {folder}: the grammar set has none")
    out = []
    for sub in ("gbnf", "lark", "ebnf"):
        for path in sorted((folder / sub).glob(f"*.{sub}")):
            notation = grammar.notation_of(path)
            assert notation is not None
            text = path.read_text(encoding="utf-8")
            source = f"shared corpora: grammars/{sub}/{path.name}"
            out.append(_entry(f"{SET}/{sub}-{path.stem}", text, notation, source, ("public",)))
    return out


def _lark_package() -> list[Entry]:
    try:
        root = importlib.resources.files("lark") / "grammars"
        import lark
    except ModuleNotFoundError:
        return []
    out = []
    for item in sorted(root.iterdir(), key=lambda p: p.name):
        name = item.name
        if not name.endswith(".lark") or name[: -len(".lark")] in LARK_LIBRARIES:
            continue
        stem = name[: -len(".lark")]
        out.append(
            _entry(
                f"{SET}/lark-package-{stem}",
                item.read_text(encoding="utf-8"),
                "lark",
                f"lark {lark.__version__}: lark/grammars/{name}",
                ("lark-package",),
            )
        )
    return out


def _entry(
    spec_id: str,
    text: str,
    notation: Notation,
    source: str,
    tags: tuple[str, ...],
    valid: tuple[str, ...] = (),
    invalid: tuple[str, ...] = (),
) -> Entry:
    """The entry of one grammar: its given instances, then derived ones and their
    mutations, labelled by the judge its tag names."""
    judge = Judge(text, notation)
    # derived sentences are valid by construction (kept where the judge can tell: where
    # it disagrees, the corpus test fails and shows which of the two is wrong)
    derived = tuple(_labelled(judge, _derived(text, notation))[0])
    near = [m for m in _mutations(derived) if m not in valid and m not in invalid]
    texts, labels = _labelled(judge, near)
    more_valid = [m for m, ok in zip(texts, labels, strict=True) if ok]
    more_invalid = [m for m, ok in zip(texts, labels, strict=True) if not ok]
    all_valid = tuple(dict.fromkeys((*valid, *derived, *more_valid)))
    spec = Spec.grammar(spec_id, text, notation, examples=tuple(dict.fromkeys((*valid, *derived))))
    return Entry(
        spec,
        source=source,
        tags=(notation, *tags, f"judge:{judge.name}"),
        valid=all_valid,
        invalid=tuple(dict.fromkeys((*invalid, *more_invalid))),
    )


def _labelled(judge: Judge, texts: Sequence[str]) -> tuple[list[str], list[bool]]:
    """`texts` the judge labels, with their labels (those it cannot tell dropped)."""
    labels = judge.accepts(list(texts)) if texts else []
    kept = [(t, ok) for t, ok in zip(texts, labels, strict=True) if ok is not None]
    return [t for t, _ in kept], [bool(ok) for _, ok in kept]


def _derived(text: str, notation: Notation) -> tuple[str, ...]:
    """Up to SAMPLES distinct short sentences drawn from the grammar (none when the
    front end cannot read it)."""
    drawn = grammar.samples(text, notation, SAMPLES * 3, SEED)
    short = [s for s in dict.fromkeys(drawn) if len(s.encode("utf-8")) <= MAX_SAMPLE_BYTES]
    return tuple(short[:SAMPLES])


def _mutations(texts: tuple[str, ...]) -> list[str]:
    """One near miss of each text, deterministic: the middle character dropped, doubled
    or replaced by a quote, in turn."""
    out = []
    for n, t in enumerate(texts):
        if not t:
            continue
        i = len(t) // 2
        edits = (t[:i] + t[i + 1 :], t[:i] + t[i] + t[i:], t[:i] + '"' + t[i + 1 :])
        out.append(edits[n % 3])
    return list(dict.fromkeys(out))
