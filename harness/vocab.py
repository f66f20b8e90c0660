"""Canonical vocabularies: token id -> bytes, special ids, EOS id, and a real encoder.

Every engine adapter is fed from this one type, so all engines see exactly the same
vocabulary. `load` gives the real vocabularies shipped in PyPI packages (implemented in
`harness.vocab_loaders`); `synthetic` and `subset` make small ones for tests and scaling
studies; `describe` summarises any of them.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Encoder = Callable[[str], list[int]]


@dataclass(eq=False)
class Vocabulary:
    """Token id -> bytes. Special ids are never matched as text; `eos_id` ends generation.

    `encoder_factory` builds the real tokenizer lazily (text -> ids), so loading a cached
    vocabulary does not pay for building an encoder nobody asks for.
    """

    name: str
    tokens: list[bytes]
    eos_id: int
    special_ids: frozenset[int]
    encoder_factory: Callable[[], Encoder] | None = field(default=None, repr=False)
    _encoder: Encoder | None = field(default=None, init=False, repr=False)

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def mask_words(self) -> int:
        """Length of the int32 bitmask: bit i % 32 of word i // 32 is token i."""
        return (len(self.tokens) + 31) // 32

    def encode(self, text: str) -> list[int]:
        if self._encoder is None:
            if self.encoder_factory is None:
                raise ValueError(f"vocabulary {self.name} has no encoder")
            self._encoder = self.encoder_factory()
        return self._encoder(text)

    def decode(self, ids: Sequence[int]) -> bytes:
        return b"".join(self.tokens[i] for i in ids if i not in self.special_ids)


# --- Loading -----------------------------------------------------------------------------
# The real loaders live in `harness.vocab_loaders`; they pull in tiktoken and friends, so
# they are imported on first use rather than by everything that only needs the dataclass.


def load(name: str) -> Vocabulary:
    """A real vocabulary shipped in a PyPI package, parsed once and cached on disk."""
    from harness import vocab_loaders

    return vocab_loaders.load(name)


def names() -> list[str]:
    """The names `load` accepts."""
    from harness import vocab_loaders

    return vocab_loaders.names()


# --- Greedy encoder ----------------------------------------------------------------------


class GreedyEncoder:
    """Longest-match-first tokenizer over the non-special tokens of a vocabulary.

    Only for synthetic and subset vocabularies, which have no real tokenizer: it is not
    what any model's tokenizer does, but it is deterministic and, as long as every single
    byte is a token, it can encode any text. Among ids with identical bytes the lowest wins.
    """

    def __init__(self, tokens: Sequence[bytes], special_ids: frozenset[int]) -> None:
        self._ids: dict[bytes, int] = {}
        for token_id, token in enumerate(tokens):
            if token and token_id not in special_ids:
                self._ids.setdefault(token, token_id)
        self._lengths = sorted({len(token) for token in self._ids}, reverse=True)

    def __call__(self, text: str) -> list[int]:
        data = text.encode()
        ids: list[int] = []
        pos = 0
        while pos < len(data):
            token_id, length = self._longest_at(data, pos)
            ids.append(token_id)
            pos += length
        return ids

    def _longest_at(self, data: bytes, pos: int) -> tuple[int, int]:
        remaining = len(data) - pos
        for length in self._lengths:
            if length > remaining:
                continue
            token_id = self._ids.get(data[pos : pos + length])
            if token_id is not None:
                return token_id, length
        raise ValueError(f"no token covers byte {data[pos]:#04x} at offset {pos}")


# --- Synthetic vocabularies --------------------------------------------------------------

SYNTHETIC_MIN_SIZE = 320
_ASCII_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_PUNCTUATION = "{}[]():,.;\"'\\/-_+=*&^%$#@!?<>|~`"
# Code point ranges that encode to 2, 3 and 4 UTF-8 bytes (Latin-1, Greek, Cyrillic, CJK,
# Hangul, emoji), so multi-byte characters and their fragments are all represented.
_CODE_POINT_RANGES = (
    (0x00C0, 0x00FF),
    (0x0391, 0x03C9),
    (0x0410, 0x044F),
    (0x4E00, 0x4FFF),
    (0xAC00, 0xAD00),
    (0x1F600, 0x1F64F),
)


def synthetic(size: int, seed: int) -> Vocabulary:
    """A deterministic random vocabulary of exactly `size` ids, for tests.

    Layout: ids 0-255 are the single bytes; 256 is `<s>` and 257 is EOS `</s>` (both
    special); the last id is the special `<pad>`. In between come fixed awkward tokens
    (byte 0x1C, UTF-8 fragments, duplicates, long tokens) and then random tokens drawn
    from `random.Random(seed)`. The encoder is `GreedyEncoder`.
    """
    if size < SYNTHETIC_MIN_SIZE:
        raise ValueError(f"synthetic vocabulary size must be >= {SYNTHETIC_MIN_SIZE}, got {size}")
    rng = random.Random(seed)
    tokens = [bytes([b]) for b in range(256)]
    tokens += [b"<s>", b"</s>"]
    tokens += _awkward_tokens()
    while len(tokens) < size - 1:
        tokens.append(_random_token(rng))
    tokens.append(b"<pad>")
    special_ids = frozenset({256, 257, size - 1})
    return Vocabulary(
        name=f"synthetic-{size}-{seed}",
        tokens=tokens,
        eos_id=257,
        special_ids=special_ids,
        encoder_factory=functools.partial(GreedyEncoder, tokens, special_ids),
    )


def _awkward_tokens() -> list[bytes]:
    """Tokens engines tend to get wrong; fixed so every synthetic vocabulary has them."""
    zhong = "中".encode()
    smile = "🙂".encode()
    return [
        b"\x1c",  # a second id for the file-separator byte, which some engines mangle
        b"\x1c\x1c",
        b"a\x1cb",
        b" the",
        b" the",  # duplicate bytes under two ids
        b"a",  # duplicate of a single-byte token
        zhong[:2],  # UTF-8 fragments: invalid on their own, valid in sequence
        zhong[2:],
        smile[:1],
        smile[1:],
        smile[:3],
        "é".encode(),
        smile,
        b" " * 64,  # long tokens
        b"-" * 100,
        ("中文" * 20).encode(),
        b" the quick brown fox jumps over the lazy dog" * 3,
        b'{"',
        b'":',
        b'"}',
        b"\n\n",
        b"\t",
    ]


def _random_token(rng: random.Random) -> bytes:
    kind = rng.choice(("word", "word", "word", "digits", "punct", "utf8", "fragment", "mixed"))
    space = b" " if rng.random() < 0.5 else b""
    if kind == "word":
        word = "".join(rng.choice(_ASCII_LETTERS) for _ in range(rng.randint(1, 10)))
        return space + (word.capitalize() if rng.random() < 0.2 else word).encode()
    if kind == "digits":
        return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 3))).encode()
    if kind == "punct":
        return space + "".join(rng.choice(_PUNCTUATION) for _ in range(rng.randint(1, 4))).encode()
    if kind == "utf8":
        return space + "".join(_random_char(rng) for _ in range(rng.randint(1, 3))).encode()
    if kind == "fragment":
        encoded = _random_char(rng).encode()
        cut = rng.randint(1, len(encoded) - 1)
        return encoded[:cut] if rng.random() < 0.5 else encoded[cut:]
    return _random_token(rng).rstrip() + _random_char(rng).encode()


def _random_char(rng: random.Random) -> str:
    low, high = rng.choice(_CODE_POINT_RANGES)
    return chr(rng.randint(low, high))


# --- Subsets -----------------------------------------------------------------------------


def subset(vocab: Vocabulary, n: int) -> Vocabulary:
    """The first `n` ids of `vocab`, for compile-time scaling studies.

    Ids below `n` keep their id, bytes and special status. Two kinds of ids are appended
    after them (in this order) so the subset stays usable: any single-byte token of the
    base vocabulary whose byte no kept non-special token covers (lowest base id per byte),
    so every byte the base can produce stays reachable; then EOS, if its id is >= `n`.
    The size can therefore exceed `n` by up to 257. The encoder is `GreedyEncoder`,
    not the base vocabulary's tokenizer, since the real tokenizer may need dropped ids.
    """
    if n <= 0:
        raise ValueError(f"subset size must be positive, got {n}")
    tokens = list(vocab.tokens[:n])
    special_ids = {i for i in vocab.special_ids if i < n}
    tokens += _missing_single_bytes(vocab, tokens, special_ids)
    eos_id = vocab.eos_id
    if eos_id >= n:
        eos_id = len(tokens)
        tokens.append(vocab.tokens[vocab.eos_id])
        special_ids.add(eos_id)
    frozen = frozenset(special_ids)
    return Vocabulary(
        name=f"{vocab.name}[:{n}]",
        tokens=tokens,
        eos_id=eos_id,
        special_ids=frozen,
        encoder_factory=functools.partial(GreedyEncoder, tokens, frozen),
    )


def _missing_single_bytes(
    vocab: Vocabulary, kept: list[bytes], kept_special: set[int]
) -> list[bytes]:
    covered = {t[0] for i, t in enumerate(kept) if len(t) == 1 and i not in kept_special}
    extra: list[bytes] = []
    for token_id, token in enumerate(vocab.tokens):
        if len(token) == 1 and token_id not in vocab.special_ids and token[0] not in covered:
            covered.add(token[0])
            extra.append(token)
    return extra


# --- Description -------------------------------------------------------------------------


def describe(vocab: Vocabulary) -> dict[str, Any]:
    """Summary facts for `tokensieve vocab NAME`; byte strings are given as their repr.

    The longest token and the invalid-UTF-8 count consider non-special tokens only: the
    special ids' bytes are their names, which no engine ever matches against text.
    """
    ordinary = [i for i in range(vocab.size) if i not in vocab.special_ids]
    longest = max(ordinary, key=lambda i: (len(vocab.tokens[i]), -i), default=None)
    return {
        "name": vocab.name,
        "size": vocab.size,
        "special_ids": len(vocab.special_ids),
        "eos_id": vocab.eos_id,
        "eos_bytes": repr(vocab.tokens[vocab.eos_id]),
        "invalid_utf8_tokens": sum(1 for i in ordinary if not _is_utf8(vocab.tokens[i])),
        "longest_token": None
        if longest is None
        else {
            "id": longest,
            "length": len(vocab.tokens[longest]),
            "bytes": repr(vocab.tokens[longest]),
        },
    }


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
