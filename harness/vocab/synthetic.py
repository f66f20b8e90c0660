"""Small vocabularies made on purpose: `synthetic` (deterministic random, with the tokens
engines tend to get wrong) for tests, and `subset` (the first N ids of a real one) for
compile-time scaling studies. Both encode with `GreedyEncoder`.
"""

from __future__ import annotations

import functools
import random

from harness.vocab.model import GreedyEncoder, Vocabulary

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
