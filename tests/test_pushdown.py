"""TokensDFA's pushdown mode from Python (`tokensdfa.PushdownIndex`): a grammar in each
notation over llama3 gives the grammar reference's mask, acceptance and steps at every
token of texts nesting deeper than any regex unrolling; it is a `LazyIndex` in every
call (a batch takes it); a grammar it cannot read is one clear error."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from harness import vocab as vocabularies
from harness.diff.shrink.minimize import tiny_vocabulary
from harness.language import reference

tokensdfa = pytest.importorskip("tokensdfa")

JSON_GBNF = r"""
root ::= value
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"
array ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
string ::= "\"" ( [^"\\] | "\\" ["\\/bfnrt] )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )?
ws ::= [ \t\n]*
"""

CALL_LARK = r"""
start: call
call: NAME "(" [arg ("," arg)*] ")"
arg: NAME "=" (NUMBER | call | list)
list: "[" [arg ("," arg)*] "]"
NAME: /[a-z_]+/
NUMBER: /[0-9]+/
%ignore " "
"""

LIST_EBNF = r"""
root ::= "(" items? ")"
items ::= item ("," item)*
item ::= [a-z]+ | root
"""

CASES = (
    (JSON_GBNF, "gbnf", '{"a": [1, {"b": [[{"c": "x y"}]]}, -2.5], "d": null}'),
    (CALL_LARK, "lark", "f(a = g(b = [c = 1, d = h(e = 22)]), x = 3)"),
    (LIST_EBNF, "ebnf", "(ab,((c,(d)),e))"),
)


@pytest.fixture(scope="module")
def llama3() -> tuple[vocabularies.Vocabulary, object]:
    vocab = vocabularies.load("llama3")
    return vocab, reference.native_vocabulary(vocab)


@pytest.mark.parametrize(("text", "notation", "sentence"), CASES)
def test_masks_equal_the_references_along_a_nested_text(
    llama3: tuple[vocabularies.Vocabulary, object], text: str, notation: str, sentence: str
) -> None:
    vocab, native = llama3
    pushdown = tokensdfa.PushdownIndex.from_grammar(text, native, notation)
    naive = tokensdfa.NaiveGrammarIndex(text, native, notation)
    _walk_in_lockstep(pushdown, naive, vocab, sentence)


def _walk_in_lockstep(
    pushdown: Any,
    naive: Any,
    vocab: vocabularies.Vocabulary,
    sentence: str,
) -> None:
    """At every token of `sentence`, the same mask and acceptance; both take it whole."""
    got = np.zeros(vocab.mask_words, dtype=np.int32)
    want = np.zeros(vocab.mask_words, dtype=np.int32)
    p, n = pushdown.initial_state, naive.initial_state
    for k, token in enumerate(vocab.encode(sentence)):
        pushdown.fill_mask(p, got)
        naive.fill_mask(n, want)
        assert np.array_equal(got, want), (sentence, k)
        assert pushdown.is_accepting(p) == naive.is_accepting(n), (sentence, k)
        p, n = pushdown.next_state(p, token), naive.next_state(n, token)
        assert p is not None and n is not None, (sentence, k)
    assert pushdown.is_accepting(p) and naive.is_accepting(n)


def test_it_is_a_lazy_index_a_batch_takes(llama3: tuple[vocabularies.Vocabulary, object]) -> None:
    vocab, native = llama3
    index = tokensdfa.PushdownIndex.from_grammar(JSON_GBNF, native, "gbnf")
    assert isinstance(index, tokensdfa.LazyIndex)
    tokens = vocab.encode("[1, [2]]")
    batch = tokensdfa.Batch([index, index])
    out = np.zeros((2, vocab.mask_words), dtype=np.int32)
    batch.step(None, out, 2)
    assert batch.step([tokens[0], -1], out, 2) == [True, False]
    single = np.zeros(vocab.mask_words, dtype=np.int32)
    index.fill_mask(index.next_state(index.initial_state, tokens[0]), single)
    assert np.array_equal(out[0], single)
    assert index.stats()["states"] >= 2


@pytest.mark.parametrize(
    ("text", "notation", "error", "match"),
    [
        ('root ::= "a', "gbnf", "GrammarError", "line"),
        ("root ::= x\nx ::= x", "gbnf", "GrammarError", "empty"),
        ('root ::= "a"', "bnf", "ValueError", "notation"),
    ],
)
def test_a_grammar_it_cannot_read_is_one_clear_error(
    llama3: tuple[vocabularies.Vocabulary, object], text: str, notation: str, error: str, match: str
) -> None:
    _, native = llama3
    kind = getattr(tokensdfa, error, None) or ValueError
    with pytest.raises(kind, match=match):
        tokensdfa.PushdownIndex.from_grammar(text, native, notation)


# Members hold unconstrained values ("meta" has no schema; "tags" items neither).
OPEN_SCHEMA = (
    '{"type": "object", "properties": {"id": {"type": "integer"}, "meta": {},'
    ' "tags": {"type": "array"}}, "required": ["id"], "additionalProperties": false}'
)
DIALECT = {"whitespace": "optional-space", "escapes": "required"}


def test_a_schema_nests_unconstrained_values_without_bound(
    llama3: tuple[vocabularies.Vocabulary, object],
) -> None:
    """Along an instance nesting 9 levels (the regex modes stop at `any_depth` 2), the
    schema's pushdown index holds the masks of the reference over the grammar
    `schema_grammar` writes; the lazy index of the bounded regex refuses the text."""
    vocab, native = llama3
    grammar = tokensdfa.schema_grammar(OPEN_SCHEMA, DIALECT)
    assert grammar is not None and grammar.startswith("start:")
    pushdown = tokensdfa.PushdownIndex.from_schema(OPEN_SCHEMA, native, DIALECT)
    naive = tokensdfa.NaiveGrammarIndex(grammar, native, "lark")
    deep = '{"id": 7, "meta": ' + '[{"k": ' * 4 + "null" + "}]" * 4 + ', "tags": [[["x"]]]}'
    _walk_in_lockstep(pushdown, naive, vocab, deep)
    bounded = tokensdfa.LazyIndex.from_schema(OPEN_SCHEMA, native, DIALECT)
    state: int | None = bounded.initial_state
    for token in vocab.encode(deep):
        state = None if state is None else bounded.next_state(state, token)
    assert state is None or not bounded.is_accepting(state)


def test_a_string_automaton_beside_an_unconstrained_value_is_one_tree_terminal() -> None:
    """A name whose pattern under a length bound has no regex short enough (a counted
    automaton in the tree) beside an unconstrained value: the grammar's text refuses it,
    the pushdown mode's own reading keeps it as one terminal. Along an instance, over a
    byte vocabulary (a token opens at most one level), its masks are those of the lazy
    index of the schema read with values nested two levels deeper than the instance."""
    schema = json.dumps(
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": "^([a-z]+-)*[a-z]+$", "maxLength": 63},
                "extra": {},
            },
            "required": ["name"],
        }
    )
    with pytest.raises(tokensdfa.LimitError, match="counted automaton"):
        tokensdfa.schema_grammar(schema, DIALECT)
    vocab = tiny_vocabulary([bytes([b]) for b in range(256)])
    native = reference.native_vocabulary(vocab)
    pushdown = tokensdfa.PushdownIndex.from_schema(schema, native, DIALECT)
    deeper = tokensdfa.LazyIndex.from_schema(schema, native, {**DIALECT, "any_depth": 4})
    instance = '{"name": "ab-cd-e", "extra": [1, {"k": null}]}'
    got = np.zeros(vocab.mask_words, dtype=np.int32)
    want = np.zeros(vocab.mask_words, dtype=np.int32)
    p, d = pushdown.initial_state, deeper.initial_state
    for k, byte in enumerate(instance.encode()):
        pushdown.fill_mask(p, got)
        deeper.fill_mask(d, want)
        assert np.array_equal(got, want), k
        p, d = pushdown.next_state(p, byte + 1), deeper.next_state(d, byte + 1)
        assert p is not None and d is not None, k
    assert pushdown.is_accepting(p) and deeper.is_accepting(d)


def test_a_schema_with_no_unconstrained_value_is_the_lazy_index(
    llama3: tuple[vocabularies.Vocabulary, object],
) -> None:
    _, native = llama3
    closed = (
        '{"type": "object", "properties": {"a": {"type": "integer"}},'
        ' "additionalProperties": false}'
    )
    assert tokensdfa.schema_grammar(closed, DIALECT) is None
    pushdown = tokensdfa.PushdownIndex.from_schema(closed, native, DIALECT)
    lazy = tokensdfa.LazyIndex.from_schema(closed, native, DIALECT)
    assert sorted(pushdown.allowed(pushdown.initial_state)) == sorted(
        lazy.allowed(lazy.initial_state)
    )
    with pytest.raises(tokensdfa.PatternError, match="not JSON"):
        tokensdfa.PushdownIndex.from_schema("{", native, DIALECT)
