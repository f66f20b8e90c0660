"""The canonical vocabulary every engine adapter is fed from: token id -> bytes, special
ids (never matched as text), an EOS id and the real encoder; plus the greedy encoder of
vocabularies that have no tokenizer of their own, and `describe` for `tokensieve vocab`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.errors import BadInput, MissingData

Encoder = Callable[[str], list[int]]

# The most ids a vocabulary may have: 16x the largest in use (Gemma's 262,144), and what
# every engine's per-token tables (a mask bit, an automaton column, a trie node) stay
# within a few hundred MiB at. A file or option that declares an id past it is refused
# before anything is allocated for it, rather than building a table of billions of ids.
MAX_IDS = 1 << 22


def check_ids(count: int, where: str) -> int:
    """`count`, the ids a vocabulary would have, or BadInput naming `where` past
    `MAX_IDS`."""
    if count > MAX_IDS:
        raise BadInput(
            f"{where}: {count:,} ids, more than tokensieve takes ({MAX_IDS:,}; the largest "
            "vocabularies in use have about 262,000)"
        )
    return count


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
                raise MissingData(
                    f"vocabulary {self.name} has no encoder; token paths need its real tokenizer"
                )
            self._encoder = self.encoder_factory()
        return self._encoder(text)

    def decode(self, ids: Sequence[int]) -> bytes:
        return b"".join(self.tokens[i] for i in ids if i not in self.special_ids)


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
        "holes": holes(vocab.tokens, vocab.special_ids),
        "eos_id": vocab.eos_id,
        "eos_bytes": repr(vocab.tokens[vocab.eos_id]),
        "invalid_utf8_tokens": sum(1 for i in ordinary if not is_utf8(vocab.tokens[i])),
        "longest_token": None
        if longest is None
        else {
            "id": longest,
            "length": len(vocab.tokens[longest]),
            "bytes": repr(vocab.tokens[longest]),
        },
    }


def is_utf8(data: bytes) -> bool:
    """`data` decodes as UTF-8 on its own (a token holding part of a character does not)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def holes(tokens: Sequence[bytes], special_ids: Iterable[int]) -> int:
    """Ids that are padding: special, with no bytes (a file's ids in no table, or the
    ids `--vocab-size` adds)."""
    return sum(1 for i in special_ids if not tokens[i])
