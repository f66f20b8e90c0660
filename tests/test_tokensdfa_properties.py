"""TokensDFA against the naive reference on random regexes and random small vocabularies
(hypothesis; bounded by the `ci` profile, run far longer by `make fuzz`)."""

from __future__ import annotations

import re
from collections import deque

import tokensdfa
from hypothesis import given
from hypothesis import strategies as st

# Leaves of the dialect every engine shares: literals (incl. multi-byte UTF-8 and 0x1C),
# classes, escapes.
LEAVES = st.sampled_from(
    ["a", "b", "ab", "abc", "ca", "é", "中", "\x1c", "\x1c1", r"\.", "[a-c]", "[^b]", r"\d", "."]
)


def _regex() -> st.SearchStrategy[str]:
    return st.recursive(
        LEAVES,
        lambda inner: st.one_of(
            st.lists(inner, min_size=2, max_size=3).map("".join),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + "|".join(xs) + ")"),
            inner.map(lambda r: f"({r})*"),
            inner.map(lambda r: f"({r})?"),
            inner.map(lambda r: f"({r})+"),
            st.tuples(inner, st.integers(0, 2), st.integers(0, 2)).map(
                lambda t: f"({t[0]}){{{min(t[1], t[2])},{max(t[1], t[2])}}}"
            ),
        ),
        max_leaves=6,
    )


TOKEN = st.one_of(
    st.sampled_from([b"a", b"b", b"c", b"1", b".", b"ab", b"abc", b"ca", b"\x1c", b"\x1c1"]),
    st.sampled_from(["é".encode(), "中".encode(), "é".encode()[:1], "中".encode()[1:], b"a\xc3"]),
    st.binary(min_size=2, max_size=6).filter(lambda b: b != b"</s>"),
)


@st.composite
def vocabularies(draw: st.DrawFn) -> list[bytes]:
    tokens = draw(st.lists(TOKEN, min_size=1, max_size=14))
    # every single byte a string of the dialect needs, so every string is producible
    singles = [bytes([b]) for b in b"abc1.\x1c"] + [bytes([b]) for b in "é中".encode()]
    return [b"</s>", *tokens, *singles, tokens[0]]  # the last one duplicates a byte string


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


@given(_regex(), vocabularies())
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


@given(_regex(), vocabularies())
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
    return depth < 40 and any(
        t
        and text.startswith(tokens[t])
        and _produces(ix, tokens, ix.next_state(state, t), text[len(tokens[t]) :], depth + 1)
        for t in ix.allowed(state)
    )


@given(st.data(), _regex(), vocabularies())
def test_canonical_mode_produces_every_string(data: st.DataObject, pattern: str, tokens) -> None:
    python_pattern = pattern.replace(r"\d", "[0-9]")
    text = data.draw(
        st.from_regex(re.compile(python_pattern, re.DOTALL), fullmatch=True).filter(
            lambda s: len(s) <= 12 and all(c in "abc1.\x1cé中" for c in s)
        )
    )
    vocab = tokensdfa.Vocabulary(tokens, 0, [])
    canon = tokensdfa.Index(pattern, vocab, mode="canonical_literals")
    assert _produces(canon, tokens, canon.initial_state, text.encode()), (pattern, text)
