"""The grammar reference (`tokensdfa.NaiveGrammarIndex`) against brute force: random
finite GBNF grammars whose languages are enumerated exactly in Python, over small awkward
vocabularies (tokens that span several terminals, tokens that split a UTF-8 character),
and the hand-labelled instances of the grammar corpus's edge cases, judged both by the
reference and, where it is installed, by `lark` (Earley, `dynamic_complete`)."""

from __future__ import annotations

import json
from itertools import product

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.corpora import grammar_judge, grammars
from harness.language import grammar
from harness.project import CORPORA_DIR

tokensdfa = pytest.importorskip("tokensdfa")

# Literals the grammars are made of: ASCII, a two-byte and a three-byte character.
PIECES = ["", "a", "b", "ab", "é", "中", "bé"]
EOS = b"<eos>"


@st.composite
def finite_grammars(draw: st.DrawFn) -> tuple[str, set[bytes]]:
    """A GBNF grammar of up to four rules, rule i referring only to rules after it (so
    its language is finite), with its language enumerated by expansion."""
    count = draw(st.integers(1, 4))
    bodies: list[list[list[str | int]]] = []
    for i in range(count):
        alternatives = []
        for _ in range(draw(st.integers(1, 3))):
            length = draw(st.integers(0, 3))
            symbols: list[str | int] = []
            for _ in range(length):
                if i + 1 < count and draw(st.booleans()):
                    symbols.append(draw(st.integers(i + 1, count - 1)))
                else:
                    symbols.append(draw(st.sampled_from(PIECES)))
            alternatives.append(symbols)
        bodies.append(alternatives)
    languages: list[set[bytes]] = [set() for _ in range(count)]
    for i in reversed(range(count)):
        for symbols in bodies[i]:
            parts = [languages[s] if isinstance(s, int) else {s.encode("utf-8")} for s in symbols]
            languages[i] |= {b"".join(p) for p in product(*parts)}
    lines = []
    for i, alternatives in enumerate(bodies):
        name = "root" if i == 0 else f"r{i}"
        written = [
            " ".join(f"r{s}" if isinstance(s, int) else json.dumps(s) for s in symbols) or '""'
            for symbols in alternatives
        ]
        lines.append(f"{name} ::= {' | '.join(written)}")
    return "\n".join(lines) + "\n", languages[0]


@st.composite
def vocabularies(draw: st.DrawFn) -> list[bytes]:
    """EOS, every single byte the pieces need, and random byte strings cut from the
    pieces' UTF-8 (some ending inside a character)."""
    alphabet = sorted({b for p in PIECES for b in p.encode("utf-8")})
    text = "".join(PIECES).encode("utf-8")
    extra = draw(
        st.lists(
            st.tuples(st.integers(0, len(text) - 1), st.integers(1, 4)).map(
                lambda t: text[t[0] : t[0] + t[1]]
            ),
            max_size=12,
        )
    )
    tokens = [EOS, *(bytes([b]) for b in alphabet)]
    tokens += [t for t in dict.fromkeys(extra) if t and t not in tokens]
    return tokens


def expected(language: set[bytes], prefix: bytes, tokens: list[bytes]) -> set[int]:
    allowed = {
        i for i, t in enumerate(tokens) if i > 0 and any(s.startswith(prefix + t) for s in language)
    }
    if prefix in language:
        allowed.add(0)
    return allowed


def allowed_by(index: object, state: int, words: int) -> set[int]:
    mask = np.zeros(words, dtype=np.int32)
    index.fill_mask(state, mask)  # type: ignore[attr-defined]
    bits = np.unpackbits(mask.view(np.uint8), bitorder="little")
    return {int(i) for i in np.flatnonzero(bits)}


@given(finite_grammars(), vocabularies())
def test_reference_masks_equal_brute_force_on_finite_grammars(
    case: tuple[str, set[bytes]], tokens: list[bytes]
) -> None:
    text, language = case
    if not language:
        with pytest.raises(tokensdfa.GrammarError):
            tokensdfa.NaiveGrammarIndex(text, tokensdfa.Vocabulary(tokens, 0, []), "gbnf")
        return
    vocab = tokensdfa.Vocabulary(tokens, 0, [])
    index = tokensdfa.NaiveGrammarIndex(text, vocab, "gbnf")
    words = (len(tokens) + 31) // 32
    todo = [(index.initial_state, b"")]
    seen = 0
    while todo and seen < 40:
        state, prefix = todo.pop()
        seen += 1
        want = expected(language, prefix, tokens)
        assert allowed_by(index, state, words) == want, (text, prefix)
        assert index.is_accepting(state) == (prefix in language)
        for t in sorted(want - {0}):
            following = index.next_state(state, t)
            assert following is not None, (text, prefix, tokens[t])
            todo.append((following, prefix + tokens[t]))
        refused = [t for t in range(1, len(tokens)) if t not in want]
        for t in refused[:3]:
            assert index.next_state(state, t) is None


def _edge_cases() -> list[tuple[str, str, bool]]:
    labelled = json.loads((CORPORA_DIR / "grammars" / "instances.json").read_text("utf-8"))
    out = []
    for stem, given_ in labelled.items():
        for text in given_["valid"]:
            out.append((stem, text, True))
        for text in given_["invalid"]:
            out.append((stem, text, False))
    return out


def _edge_grammar(stem: str) -> tuple[str, grammar.Notation]:
    for path in (CORPORA_DIR / "grammars").iterdir():
        if path.stem == stem and grammar.notation_of(path) is not None:
            notation = grammar.notation_of(path)
            assert notation is not None
            return path.read_text("utf-8"), notation
    raise AssertionError(f"no grammar file for {stem}")


@pytest.mark.parametrize(("stem", "text", "valid"), _edge_cases())
def test_edge_instances_are_labelled_as_the_reference_reads_them(
    stem: str, text: str, valid: bool
) -> None:
    source, notation = _edge_grammar(stem)
    assert grammar.accepts(source, notation, [text]) == [valid]


def test_reference_agrees_with_lark_on_every_labelled_instance_of_the_corpus() -> None:
    """Every labelled instance of every grammar of the corpus that Lark judges (Earley
    over the scannerless rendering, `harness.corpora.grammar_judge`): the reference's
    verdict is the label. Hand labels (the edge cases) are checked the same way."""
    pytest.importorskip("lark")
    judged = 0
    for entry in grammars.entries():
        spec = entry.spec
        assert spec.notation is not None
        if f"judge:{grammar_judge.NAME}" not in entry.tags:
            continue
        texts = [*entry.valid, *entry.invalid]
        labels = [True] * len(entry.valid) + [False] * len(entry.invalid)
        assert grammar.accepts(spec.text, spec.notation, list(texts)) == labels, spec.id
        judged += len(texts)
    assert judged > 300
