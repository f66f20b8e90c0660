"""Synthetic vocabularies (`synthetic`, `subset` of one), the greedy longest-match
encoder they use, and `describe` on them: no package and no cache involved, unlike the
real vocabularies of tests/test_vocab.py.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.vocab import GreedyEncoder, describe, subset, synthetic


def test_synthetic_is_deterministic() -> None:
    assert synthetic(2000, 7).tokens == synthetic(2000, 7).tokens
    assert synthetic(2000, 7).tokens != synthetic(2000, 8).tokens


@pytest.mark.parametrize("size", [320, 1000, 5000])
def test_synthetic_contents(size: int) -> None:
    vocab = synthetic(size, 3)
    assert vocab.size == size
    assert vocab.tokens[vocab.eos_id] == b"</s>"
    assert vocab.eos_id in vocab.special_ids
    assert len(vocab.special_ids) >= 3
    ordinary = [t for i, t in enumerate(vocab.tokens) if i not in vocab.special_ids]
    assert {t for t in ordinary if len(t) == 1} == {bytes([b]) for b in range(256)}
    assert any(b"\x1c" in t and len(t) > 1 for t in ordinary)
    assert max(Counter(ordinary).values()) >= 2  # two ids share bytes
    assert max(map(len, ordinary)) >= 64
    assert any(_valid_multibyte(t) for t in ordinary)
    assert describe(vocab)["invalid_utf8_tokens"] > 0  # fragments of multi-byte characters


def _valid_multibyte(token: bytes) -> bool:
    try:
        return any(ord(c) > 0x7F for c in token.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def test_synthetic_rejects_tiny_size() -> None:
    with pytest.raises(ValueError, match="320"):
        synthetic(100, 0)


_SYNTHETIC = synthetic(3000, 11)


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cs",)), max_size=60))
def test_synthetic_round_trip(text: str) -> None:
    ids = _SYNTHETIC.encode(text)
    assert _SYNTHETIC.decode(ids) == text.encode()
    assert not set(ids) & _SYNTHETIC.special_ids


def test_greedy_prefers_longest_then_lowest_id() -> None:
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b"abc", b"</s>"]
    encoder = GreedyEncoder(tokens, frozenset({259}))
    assert encoder("abcab") == [257, 256]
    assert encoder("</s>") == [ord("<"), ord("/"), ord("s"), ord(">")]


def test_greedy_reports_uncovered_byte() -> None:
    encoder = GreedyEncoder([b"a"], frozenset())
    with pytest.raises(ValueError, match="0x62"):
        encoder("ab")


def test_describe_synthetic() -> None:
    vocab = synthetic(400, 0)
    info = describe(vocab)
    assert info["name"] == "synthetic-400-0"
    assert info["size"] == 400
    assert info["eos_id"] == 257
    assert info["eos_bytes"] == repr(b"</s>")
    assert info["special_ids"] == 3
    assert info["longest_token"]["length"] == max(
        len(t) for i, t in enumerate(vocab.tokens) if i not in vocab.special_ids
    )


def test_subset_of_synthetic() -> None:
    base = synthetic(1000, 5)
    small = subset(base, 500)
    assert small.size == 500  # bytes and EOS (257) are already below 500
    assert small.eos_id == base.eos_id
    assert small.special_ids == {256, 257}
    assert subset(base, 2000).tokens == base.tokens
    with pytest.raises(ValueError):
        subset(base, 0)
