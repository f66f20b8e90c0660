"""tiktoken rank files (`<base64 token> <rank>` per line, optionally gzip-compressed) as
canonical vocabularies (see `harness.vocab.files` for the dispatch, EOS and cache).

A rank file holds only the ordinary tokens: the special tokens come from a JSON file
(`{"<|endoftext|>": 100257, ...}`) and the pre-tokenizer split pattern from the caller. Ranks
are ids; ids in neither table (up to the largest) are empty special tokens. The encoder is
tiktoken's own `Encoding.encode_ordinary`, which never emits a special id.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from pathlib import Path

from harness.errors import BadInput
from harness.vocab.builtin import O200K_PAT_STR
from harness.vocab.cache import Parsed
from harness.vocab.model import Encoder, check_ids

# From tiktoken_ext/openai_public.py, cl100k_base() (local to that function, which downloads
# its ranks when called, so it is restated here; a test checks it still matches). o200k's
# pattern is restated in builtin.py the same way.
CL100K_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
    r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
# Rank counts of the OpenAI files (cl100k_base: ranks 0..100255, o200k_base: 0..199997); a
# file within 1% of one gets that encoding's pattern unless the caller gives another.
_DEFAULT_PATTERNS = ((100_256, CL100K_PAT_STR), (199_998, O200K_PAT_STR))


def text_of(path: Path, raw: bytes) -> bytes:
    """The rank lines of `raw`, decompressed when it is gzip data."""
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as error:
        raise BadInput(f"{path}: damaged gzip data: {error}") from None


def split_pattern(path: Path, text: bytes, given: str | None) -> str:
    """`given`, else the cl100k or o200k pattern for files of about their size."""
    if given is not None:
        if not given:
            raise BadInput(f"{path}: the split pattern is empty")
        return given
    count = sum(1 for line in text.splitlines() if line.strip())
    for size, pattern in _DEFAULT_PATTERNS:
        if abs(count - size) <= size // 100:
            return pattern
    raise BadInput(
        f"{path}: {count} ranks match neither cl100k_base nor o200k_base; give the "
        "pre-tokenizer's split pattern (--split-pattern REGEX)"
    )


def read_special_tokens(path: Path | None) -> dict[str, int]:
    """The JSON object {text: id} in `path` ({} for None), or BadInput naming the file."""
    if path is None:
        return {}
    try:
        specials = json.loads(path.read_bytes())
    except OSError as error:
        raise BadInput(f"{path}: cannot read special tokens: {error.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        where = f" at line {error.lineno}" if isinstance(error, json.JSONDecodeError) else ""
        raise BadInput(f"{path}: special tokens are not JSON{where}") from None
    if not isinstance(specials, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in specials.values()
    ):
        raise BadInput(f'{path}: special tokens must be a JSON object {{"text": id, ...}}')
    return specials


def ranks(path: Path, text: bytes) -> dict[bytes, int]:
    """token -> rank for every line, or BadInput naming the line that is wrong."""
    table: dict[bytes, int] = {}
    seen: set[int] = set()
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            shown = line[:60].decode("utf-8", "replace")
            raise BadInput(f"{path}:{lineno}: {shown!r} is not '<base64 token> <rank>'")
        try:
            token = base64.b64decode(fields[0], validate=True)
        except binascii.Error:
            raise BadInput(f"{path}:{lineno}: the token does not decode as base64") from None
        rank = int(fields[1])
        if rank in seen:
            raise BadInput(f"{path}:{lineno}: rank {rank} appears twice")
        if token in table:
            raise BadInput(f"{path}:{lineno}: token {token!r} appears twice")
        seen.add(rank)
        table[token] = rank
    if not table:
        raise BadInput(f"{path}: no rank lines")
    return table


def parse(path: Path, text: bytes, specials: dict[str, int], specials_path: Path | None) -> Parsed:
    """Ranks at their ids, specials at theirs; `eos_id` is -1: rank files name no EOS."""
    table = ranks(path, text)
    size = max([*table.values(), *specials.values()]) + 1
    check_ids(size, f"{path} (its largest rank or special id is {size - 1:,})")
    tokens: list[bytes | None] = [None] * size
    for token, rank in table.items():
        tokens[rank] = token
    for special, token_id in specials.items():
        if tokens[token_id] is not None:
            raise BadInput(
                f"{specials_path}: special token {special!r} has id {token_id}, which is a rank "
                f"in {path}"
            )
        tokens[token_id] = special.encode()
    holes = {i for i, token in enumerate(tokens) if token is None}
    return Parsed(
        tokens=[token or b"" for token in tokens],
        eos_id=-1,
        special_ids=frozenset(specials.values()) | holes,
    )


def check_split_pattern(pattern: str, where: str) -> None:
    """BadInput naming `where` unless tiktoken compiles `pattern` (checked on a one-token
    encoding, before any file is parsed: a pattern that does not compile would otherwise
    surface only when a token path is drawn, buried in a cell's metrics)."""
    import tiktoken

    if not pattern:
        raise BadInput(f"{where}: the split pattern is empty")
    try:
        tiktoken.Encoding(
            name="tokensieve-split-check",
            pat_str=pattern,
            mergeable_ranks={b"a": 0},
            special_tokens={},
        )
    except ValueError as error:
        message = " ".join(str(error).split())
        raise BadInput(f"{where}: the split pattern does not compile: {message}") from None


def encoder(path: Path, text: bytes, pattern: str) -> Encoder:
    """tiktoken's `encode_ordinary` over the ranks of `path` split by `pattern`."""
    import tiktoken

    try:
        encoding = tiktoken.Encoding(
            name=f"tokensieve-{path.name}",
            pat_str=pattern,
            mergeable_ranks=ranks(path, text),
            special_tokens={},
        )
    except ValueError as error:  # tiktoken's Rust core rejects the pattern
        message = " ".join(str(error).split())
        raise BadInput(f"{path}: the split pattern does not compile: {message}") from None
    return encoding.encode_ordinary
