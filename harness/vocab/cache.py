"""The on-disk form of a parsed vocabulary: a small binary file (magic, JSON header, token
lengths, token bytes), never a pickle, so reading a shared cache can never run code.
Files live at `$TOKENSIEVE_CACHE/vocab/<name>-<package version>.vocab`.
"""

from __future__ import annotations

import io
import itertools
import json
import struct
import sys
from array import array
from dataclasses import dataclass
from pathlib import Path

from harness.cache import write_bytes_atomic


@dataclass(frozen=True)
class Parsed:
    """What a parser extracts from a package; everything a `Vocabulary` needs but the encoder."""

    tokens: list[bytes]
    eos_id: int
    special_ids: frozenset[int]


# Bump when a parser changes what it produces, so stale cache files are rebuilt.
CACHE_FORMAT = 1
_MAGIC = b"TSVOCAB\x00"
_HEADER = struct.Struct("<8sI")


def write(path: Path, name: str, parsed: Parsed) -> None:
    """Write `parsed` to `path` atomically (a concurrent reader sees no file or a whole one)."""
    header = json.dumps(
        {
            "format": CACHE_FORMAT,
            "name": name,
            "count": len(parsed.tokens),
            "eos_id": parsed.eos_id,
            "special_ids": sorted(parsed.special_ids),
        }
    ).encode()
    lengths = _little_endian(array("I", map(len, parsed.tokens)))
    out = io.BytesIO()
    out.write(_HEADER.pack(_MAGIC, len(header)))
    out.write(header)
    out.write(lengths.tobytes())
    out.write(b"".join(parsed.tokens))
    write_bytes_atomic(path, out.getvalue())


def read(path: Path, name: str) -> Parsed | None:
    """The cached vocabulary, or None if absent, stale or damaged (then it is rebuilt)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return _decode(data, name)
    except (ValueError, KeyError, TypeError, struct.error):
        return None


def _decode(data: bytes, name: str) -> Parsed | None:
    magic, header_len = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        return None
    start = _HEADER.size
    header = json.loads(data[start : start + header_len])
    if header["format"] != CACHE_FORMAT or header["name"] != name:
        return None
    count = header["count"]
    start += header_len
    lengths = array("I")
    lengths.frombytes(data[start : start + 4 * count])
    blob = data[start + 4 * count :]
    lengths = _little_endian(lengths)
    if len(lengths) != count or sum(lengths) != len(blob):
        return None
    offsets = itertools.accumulate(lengths, initial=0)
    tokens = [blob[a:b] for a, b in itertools.pairwise(offsets)]
    return Parsed(tokens, header["eos_id"], frozenset(header["special_ids"]))


def _little_endian(values: array) -> array:
    # The file is little-endian; swap in place on the rare big-endian host (an involution,
    # so the same call serves reading and writing).
    if values.itemsize != 4:
        raise ValueError("array('I') is not 32-bit on this platform")
    if sys.byteorder == "big":
        values.byteswap()
    return values
