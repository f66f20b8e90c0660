"""Hypothesis strategies shared by the property suites: regexes of the dialect every
engine supports, built from an AST, and small awkward vocabularies."""

from __future__ import annotations

from hypothesis import strategies as st

# Leaves: literals (ASCII, escaped metacharacters, multi-byte UTF-8, 0x1C), classes,
# negated classes, `\d`, and `.`.
LITERALS = ["a", "b", "ab", "abc", "ca", "1", r"\.", r"\-", r"\(", "é", "中", "🙂", "\x1c", "\x1c1"]
CLASSES = ["[a-c]", "[^b]", "[0-9]", r"\d", ".", "[é中a]"]
LEAVES = st.sampled_from(LITERALS + CLASSES)


def _repeat(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(inner, st.integers(0, 2), st.integers(0, 3)).map(
        lambda t: f"({t[0]}){{{min(t[1], t[2])},{max(t[1], t[2])}}}"
    )


def regexes(max_leaves: int = 6) -> st.SearchStrategy[str]:
    """Random regexes over LEAVES with concatenation, alternation, groups, `? * +` and
    `{m,n}` — the dialect outlines-core, llguidance, xgrammar and TokensDFA all accept."""
    return st.recursive(
        LEAVES,
        lambda inner: st.one_of(
            st.lists(inner, min_size=2, max_size=3).map("".join),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + "|".join(xs) + ")"),
            inner.map(lambda r: f"({r})*"),
            inner.map(lambda r: f"({r})?"),
            inner.map(lambda r: f"({r})+"),
            _repeat(inner),
        ),
        max_leaves=max_leaves,
    )


# Every byte a string of the dialect's leaves can need, as single-byte tokens, so every
# string stays producible whatever else the vocabulary holds.
ALPHABET = "abc1.-(\x1cé中🙂"
SINGLE_BYTES = sorted({bytes([b]) for b in ALPHABET.encode()} | {b"0", b"2", b"x"})

TOKEN = st.one_of(
    st.sampled_from([b"a", b"b", b"c", b"1", b".", b"ab", b"abc", b"ca", b"\x1c", b"\x1c1"]),
    # UTF-8 fragments: lead bytes alone, continuation bytes alone, a lead glued to ASCII
    st.sampled_from(["é".encode(), "中".encode(), "é".encode()[:1], "中".encode()[1:], b"a\xc3"]),
    st.sampled_from(["🙂".encode()[:2], "🙂".encode()[2:], "a中b".encode()]),
    # long tokens
    st.lists(st.sampled_from(["a", "b", "c", "1", "."]), min_size=4, max_size=9).map(
        lambda xs: "".join(xs).encode()
    ),
    st.binary(min_size=2, max_size=6),
)
EOS = b"</s>"


@st.composite
def vocabularies(draw: st.DrawFn) -> list[bytes]:
    """Token id -> bytes; id 0 is EOS. Random tokens, every single byte the dialect needs,
    and a duplicate of the first random token (two ids, same bytes)."""
    tokens = [t for t in draw(st.lists(TOKEN, min_size=1, max_size=14)) if t != EOS]
    if not tokens:
        tokens = [b"ab"]
    return [EOS, *tokens, *SINGLE_BYTES, tokens[0]]


def many_literals(count: int) -> str:
    """An alternation of `count` distinct multi-character literals."""
    return "(" + "|".join(f"w{i:03d}x" for i in range(count)) + ")"
