"""The judge of the grammar corpus's instances: `lark`'s Earley parser, an independent
parser, reading the grammar exactly as the reference defines it.

Lark's own lexers read a grammar otherwise than the reference: `dynamic` takes each
terminal's longest match, and even `dynamic_complete` matches a terminal with Python's
`re.match` (leftmost-first alternation, lazy quantifiers giving the shortest match) and
matches `%ignore`d text greedily. So the judge does not give Lark the grammar's text but
its *scannerless rendering* (`tokensdfa.grammar_to_lark_scannerless`): `%ignore` made
explicit and every terminal written as rules over single characters, so that Lark's
`dynamic_complete` lexer only ever matches one character and its Earley parser decides
membership as a context-free grammar over characters, the reference's reading. The
front end that reads the notation is ours (there is no other GBNF or EBNF reader here);
the parser, and the lexing, are Lark's.

Lark's Earley parser is cubic and in Python: each text gets `PARSE_BUDGET_S` (an
interval timer, on the main thread); a text it cannot finish in time, or one on which
it fails with an internal error, gets no label. Labels are cached on disk by the
grammar, the texts and both packages' versions.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from harness.cache import cache_dir, read_json, write_json_atomic
from harness.corpora.texts import OverBudget, digest, within
from harness.language import grammar
from harness.language.reference import version as tokensdfa_version
from harness.spec import Notation

NAME = "lark-earley-scannerless"
# Seconds Lark may take on one text.
PARSE_BUDGET_S = 10.0


def lark_version() -> str | None:
    try:
        return importlib.metadata.version("lark")
    except importlib.metadata.PackageNotFoundError:
        return None


class Judge:
    """Labels texts of one grammar (`accepts`): Lark over the scannerless rendering
    where lark is installed and the rendering exists, otherwise the reference itself
    (`name` says which)."""

    def __init__(self, text: str, notation: Notation) -> None:
        self.text = text
        self.notation = notation
        self.parser = _parser(text, notation)
        self.name = NAME if self.parser is not None else grammar.NAME

    def accepts(self, texts: list[str]) -> list[bool | None]:
        """Each text's label; None where the judge cannot tell (over its budget, or an
        internal error of Lark's): such a text is not labelled."""
        if self.parser is None:
            return list(grammar.accepts(self.text, self.notation, texts))
        key = digest(
            {
                "judge": NAME,
                "grammar": self.text,
                "notation": self.notation,
                "texts": texts,
                "lark": lark_version(),
                "tokensdfa": tokensdfa_version(),
            }
        )
        path = cache_dir("grammar-labels") / f"{key[:32]}.json"
        hit = read_json(path)
        if isinstance(hit, list) and len(hit) == len(texts):
            return [None if v is None else bool(v) for v in hit]
        labels = [self._label(t) for t in texts]
        write_json_atomic(path, labels)
        return labels

    def _label(self, text: str) -> bool | None:
        import lark

        try:
            within(PARSE_BUDGET_S, lambda: self.parser.parse(text))
        except lark.exceptions.LarkError:
            return False
        except (OverBudget, RuntimeError, RecursionError):
            return None  # no label (see the module doc)
        return True


def _parser(text: str, notation: Notation) -> Any:
    """Lark's Earley parser of the grammar's scannerless rendering, or None where lark
    is not installed or the rendering cannot be written."""
    try:
        import lark
    except ModuleNotFoundError:
        return None
    module = grammar.module()
    try:
        rendering = module.grammar_to_lark_scannerless(text, notation)
    except ValueError:  # a construct the front end or the writer lacks
        return None
    try:
        return lark.Lark(rendering, parser="earley", lexer="dynamic_complete", start="start")
    except Exception:  # lark's GrammarError on a rendering it refuses: no judge then
        return None
