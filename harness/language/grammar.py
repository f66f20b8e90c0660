"""Grammars, in one place: their notations, the rule of a readable grammar, the reference
index of a grammar over a vocabulary, and the writers between notations.

Every grammar question goes to the front ends of this project's Rust crate
(`tokensdfa-grammar`, through the `tokensdfa` extension): GBNF, Lark and the
llama.cpp-style EBNF are read into one context-free grammar over bytes. The reference
(`tokensdfa.NaiveGrammarIndex`) is an Earley recognizer walked over the vocabulary's token
trie, with the regex reference's semantics: at prefix p a token t is allowed iff some s
makes p·t·s a sentence; EOS iff p is one. A Lark grammar is read scannerless, as Lark's
Earley parser reads it with `lexer="dynamic_complete"`: terminals are regular
sub-languages matched with no maximal munch (Lark's `dynamic` lexer and llguidance take
each terminal's longest match instead: a declared policy of theirs), and `%ignore`d text
may come before, between and after terminals.

A state of the reference costs Earley items (its budget, `ITEM_BUDGET`, is per call):
past it the call raises `WorkBudget`, which a cell records as `timeout`, never a hang.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from harness.errors import SpecError, UnsupportedSpec, WorkBudget
from harness.spec import NOTATIONS, Notation, Spec

if TYPE_CHECKING:
    import tokensdfa as tdfa

# A grammar file's notation by its suffix.
SUFFIXES: dict[str, Notation] = {".gbnf": "gbnf", ".lark": "lark", ".ebnf": "ebnf"}
# The largest grammar text read (the front ends refuse more, this says so first).
MAX_GRAMMAR_BYTES = 4 << 20
# Earley items one call of the reference may create (a mask or a step): on llama3, a
# state of the JSON grammar costs about (see docs/guides/grammars.md).
ITEM_BUDGET = 50_000_000
NAME = "tokensdfa-naive-grammar"


def module() -> Any:
    """The tokensdfa extension (EngineUnavailable when it is not built)."""
    from harness.language.reference import tokensdfa

    return tokensdfa()


def notation_of(path: Path) -> Notation | None:
    """The notation a file's suffix names, or None."""
    return SUFFIXES.get(path.suffix.lower())


def check_notation(notation: str) -> Notation:
    """`notation` as a Notation (ValueError naming the known ones when it is none)."""
    if notation not in NOTATIONS:
        raise ValueError(f"unknown grammar notation {notation!r}; known: {', '.join(NOTATIONS)}")
    return notation


def problem(text: str, notation: Notation) -> str | None:
    """Why `text` is no grammar (one line: `line N: ...`): it does not parse, names an
    unknown rule, has an empty language, or passes a bound of the front end (its size,
    its nesting). None when the front end reads it, and when it refuses only a construct
    it does not implement (the notation has it: engines may read it, and the reference
    says so per cell as `unsupported`)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_GRAMMAR_BYTES:
        return f"{size:,} bytes, more than the {MAX_GRAMMAR_BYTES:,} a grammar may have"
    ext = module()
    try:
        ext.grammar_summary(text, notation)
    except ext.UnsupportedGrammarError:
        return None
    except ext.GrammarError as exc:
        return _one_line(exc)
    except ValueError as exc:  # LimitError: a bound of the front end
        return _one_line(exc)
    return None


def accepts(text: str, notation: Notation, sentences: list[str]) -> list[bool]:
    """Whether each of `sentences` is a sentence of the grammar as the reference reads
    it (its Earley recognizer over the text's bytes)."""
    return accepts_bytes(text, notation, [s.encode("utf-8", "surrogatepass") for s in sentences])


def accepts_bytes(text: str, notation: Notation, sentences: list[bytes]) -> list[bool]:
    """`accepts` for byte strings (a completion need not be UTF-8). Raises the
    extension's BudgetError (a ValueError) past the reference's item budget."""
    return [bool(ok) for ok in module().grammar_accepts(text, notation, sentences)]


def samples(text: str, notation: Notation, count: int, seed: int) -> list[str]:
    """Up to `count` sentences derived from the grammar at random (`seed` fixes them);
    none when the front end cannot read it."""
    ext = module()
    try:
        drawn = ext.grammar_samples(text, notation, count, seed)
    except ValueError:
        return []
    return [bytes(s).decode("utf-8") for s in drawn]


def rejected(text: str, notation: Notation, sentences: list[str]) -> str | None:
    """The first of `sentences` the grammar does not derive (as the reference reads it),
    or None; None too when the front end cannot read the grammar (its cells say why)."""
    try:
        found = accepts(text, notation, sentences)
    except ValueError:
        return None
    for sentence, ok in zip(sentences, found, strict=True):
        if not ok:
            return sentence
    return None


def convert(text: str, notation: Notation, target: Notation) -> str:
    """`text` written in `target` by this project's writers (GBNF serves EBNF readers
    too). Raises the extension's GrammarError where the target cannot say it."""
    if target == notation:
        return text
    ext = module()
    if target == "lark":
        return str(ext.grammar_to_lark(text, notation))
    return str(ext.grammar_to_gbnf(text, notation))


def reductions(text: str, notation: Notation) -> list[str]:
    """The one-step smaller grammars of `text` (an `%ignore` terminal, an alternative or
    a symbol dropped, then trimmed), largest cut first, in `notation`'s family: what the
    differ's grammar minimizer tries. Empty when the front end cannot read `text`."""
    ext = module()
    try:
        return list(ext.grammar_reductions(text, notation))
    except ValueError:  # GrammarError, LimitError: nothing to reduce
        return []


def to_kbnf(text: str, notation: str) -> str:
    """The grammar as KBNF (kbnf's notation, Formatron's engine), by this project's
    writer: scannerless, `%ignore` made explicit, start rule `start`."""
    return str(module().grammar_to_kbnf(text, notation))


_Index = TypeVar("_Index")


def build(
    spec: Spec, native: tdfa.Vocabulary, who: str = NAME, budget: int = ITEM_BUDGET
) -> tdfa.NaiveGrammarIndex:
    """The reference index of grammar `spec` over a `tokensdfa.Vocabulary`: a grammar
    the front end refuses is a SpecError, one whose construct it lacks UnsupportedSpec."""
    ext = module()
    assert spec.notation is not None, "a grammar spec names its notation"
    notation = spec.notation
    return _built(spec, who, lambda: ext.NaiveGrammarIndex(spec.text, native, notation, budget))


def build_pushdown(
    spec: Spec, native: tdfa.Vocabulary, who: str, budget: int = ITEM_BUDGET
) -> tdfa.PushdownIndex:
    """TokensDFA's pushdown-mode index of grammar `spec` (`tokensdfa.PushdownIndex`),
    read as the reference reads it; errors as `build`'s."""
    ext = module()
    assert spec.notation is not None, "a grammar spec names its notation"
    notation = spec.notation
    return _built(
        spec, who, lambda: ext.PushdownIndex.from_grammar(spec.text, native, notation, budget)
    )


def _built(spec: Spec, who: str, make: Callable[[], _Index]) -> _Index:
    """`make()`, its grammar errors as the harness's: a grammar the front end refuses is
    a SpecError, one whose construct it lacks UnsupportedSpec, past the item budget
    WorkBudget, past a size bound UnsupportedSpec."""
    ext = module()
    try:
        return make()
    except ext.UnsupportedGrammarError as exc:
        raise UnsupportedSpec(who, spec.id, _one_line(exc)) from exc
    except ext.GrammarError as exc:
        raise SpecError(who, spec.id, _one_line(exc)) from exc
    except ext.BudgetError as exc:
        raise WorkBudget(who, spec.id, _one_line(exc)) from exc
    except (ext.LimitError, MemoryError) as exc:
        raise UnsupportedSpec(who, spec.id, _one_line(exc)) from exc


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
