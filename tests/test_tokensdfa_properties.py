"""TokensDFA against the naive reference on random regexes and random small vocabularies
(hypothesis; bounded by the `ci` profile, run far longer by `make fuzz`)."""

from __future__ import annotations

import re
from collections import deque

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import ALPHABET, many_literals, regexes, vocabularies

import tokensdfa


def _pairs(naive, fast, vocab_len: int, eos: int):
    """Reachable (naive state, TokensDFA state) pairs, walking allowed tokens."""
    seen = {(naive.initial_state, fast.initial_state)}
    queue = deque(seen)
    while queue:
        n, f = queue.popleft()
        yield n, f
        for t in naive.allowed(n):
            if t == eos:
                continue
            pair = (naive.next_state(n, t), fast.next_state(f, t))
            if None not in pair and pair not in seen:
                seen.add(pair)
                queue.append(pair)


@given(regexes(), vocabularies())
def test_exact_index_equals_naive(pattern: str, tokens: list[bytes]) -> None:
    vocab = tokensdfa.Vocabulary(tokens, 0, [])
    naive = tokensdfa.NaiveIndex(pattern, vocab)
    fast = tokensdfa.Index(pattern, vocab)
    assert fast.num_states == naive.num_states
    for n, f in _pairs(naive, fast, len(tokens), 0):
        assert fast.allowed(f) == naive.allowed(n), (pattern, n)
        assert fast.is_accepting(f) == naive.is_accepting(n)
        for t in naive.allowed(n):
            if t:
                assert fast.next_state(f, t) is not None


@given(regexes(), vocabularies(), st.booleans())
def test_lazy_index_equals_naive(pattern: str, tokens: list[bytes], slices: bool) -> None:
    """The lazy index, slice shortcut on or off, on every state reachable through
    allowed tokens; visiting states in walk order also exercises memoized revisits."""
    vocab = tokensdfa.Vocabulary(tokens, 0, [])
    naive = tokensdfa.NaiveIndex(pattern, vocab)
    lazy = tokensdfa.LazyIndex(pattern, vocab, slices=slices)
    for n, f in _pairs(naive, lazy, len(tokens), 0):
        assert lazy.allowed(f) == naive.allowed(n), (pattern, n)
        assert lazy.is_accepting(f) == naive.is_accepting(n)
        mask = np.zeros((len(tokens) + 31) // 32, dtype=np.int32)
        lazy.fill_mask(f, mask)
        bits = np.unpackbits(mask.view(np.uint8), bitorder="little")[: len(tokens)]
        assert list(np.flatnonzero(bits)) == lazy.allowed(f)


@given(regexes(), vocabularies())
def test_canonical_masks_are_subsets_of_naive(pattern: str, tokens: list[bytes]) -> None:
    vocab = tokensdfa.Vocabulary(tokens, 0, [])
    naive = tokensdfa.NaiveIndex(pattern, vocab)
    canon = tokensdfa.Index(pattern, vocab, mode="canonical_literals")
    seen = {(canon.initial_state, naive.initial_state)}
    queue = deque(seen)
    while queue:
        c, n = queue.popleft()
        allowed = set(naive.allowed(n))
        for t in canon.allowed(c):
            assert t in allowed, (pattern, t)
            if t == 0:
                continue
            pair = (canon.next_state(c, t), naive.next_state(n, t))
            if pair not in seen:
                seen.add(pair)
                queue.append(pair)


def _produces(ix, tokens: list[bytes], state: int, text: bytes, depth: int = 0) -> bool:
    if not text:
        return bool(ix.is_accepting(state))
    # the texts drawn are at most 12 characters of at most 4 bytes: 48 one-byte tokens
    return depth <= 48 and any(
        t
        and text.startswith(tokens[t])
        and _produces(ix, tokens, ix.next_state(state, t), text[len(tokens[t]) :], depth + 1)
        for t in ix.allowed(state)
    )


@given(st.data(), regexes(), vocabularies())
def test_canonical_mode_produces_every_string(data: st.DataObject, pattern: str, tokens) -> None:
    python_pattern = pattern.replace(r"\d", "[0-9]")
    text = data.draw(
        st.from_regex(re.compile(python_pattern, re.DOTALL), fullmatch=True).filter(
            lambda s: len(s) <= 12 and all(c in ALPHABET for c in s)
        )
    )
    vocab = tokensdfa.Vocabulary(tokens, 0, [])
    canon = tokensdfa.Index(pattern, vocab, mode="canonical_literals")
    assert _produces(canon, tokens, canon.initial_state, text.encode()), (pattern, text)


# Literal muting edge cases, each checked both ways: canonical masks are subsets of the
# naive ones, and every listed string is still produced in canonical_literals mode.
EDGE_CASES = [
    ("(abc)+", ["abc", "abcabc"]),
    ("(abc){2,3}d?", ["abcabc", "abcabcabcd"]),
    ("(cat|car)s?", ["cat", "cars"]),
    ("(ab|abc|abcd)e", ["abe", "abcde"]),
    ("(?i)abc", ["abc", "ABC", "aBc"]),
    (r"a\.b\(c\)", ["a.b(c)"]),
    ("中文é+", ["中文é", "中文éé"]),
    ("\x1c1|\x1c", ["\x1c", "\x1c1"]),
    ("a\x1cb(\x1c)*", ["a\x1cb", "a\x1cb\x1c\x1c"]),
    (many_literals(150), ["w000x", "w149x", "w075x"]),
]
EDGE_TOKENS = [
    b"</s>",
    b"a",
    b"b",
    b"c",
    b"ab",
    b"abc",
    b"bc",
    b"ca",
    b"cat",
    b"s",
    b"r",
    b"d",
    b"e",
    b"A",
    b"B",
    b"C",
    b".",
    b"(",
    b")",
    b"\x1c",
    b"\x1c1",
    b"1",
    b"w",
    b"x",
    b"0",
    b"2",
    b"3",
    b"4",
    b"5",
    b"6",
    b"7",
    b"8",
    b"9",
    b"w0",
    b"00x",
    "中".encode(),
    "文".encode(),
    "é".encode(),
    "中文".encode(),
    "é".encode()[:1],
    "é".encode()[1:],
]


@pytest.mark.parametrize(("pattern", "strings"), EDGE_CASES)
def test_canonical_literals_edge_cases(pattern: str, strings: list[str]) -> None:
    vocab = tokensdfa.Vocabulary(EDGE_TOKENS, 0, [])
    naive = tokensdfa.NaiveIndex(pattern, vocab)
    canon = tokensdfa.Index(pattern, vocab, mode="canonical_literals")
    seen = {(canon.initial_state, naive.initial_state)}
    queue = deque(seen)
    while queue:
        c, n = queue.popleft()
        allowed = set(naive.allowed(n))
        got = canon.allowed(c)
        assert got, (pattern, "dead end")
        for t in got:
            assert t in allowed, (pattern, EDGE_TOKENS[t])
            if t == 0:
                continue
            pair = (canon.next_state(c, t), naive.next_state(n, t))
            if pair not in seen:
                seen.add(pair)
                queue.append(pair)
    for text in strings:
        assert _produces(canon, EDGE_TOKENS, canon.initial_state, text.encode()), (pattern, text)
