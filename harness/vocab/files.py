"""Vocabularies from the files models ship: a Hugging Face `tokenizer.json`, a tiktoken rank
file, a SentencePiece `.model` or a llama.cpp GGUF (`detect` tells which, by content first,
then by extension), each with its real encoder (see `hf`, `tiktoken_file`, `sentencepiece`
and `gguf_file` for how each format's tokens become bytes).

`load` resolves the EOS id (the `eos` argument, an id or a token's text, wins; then the
file's own metadata; then `generation_config.json` or `tokenizer_config.json` beside the
file), parses once and caches the result by content: a hash of the file's bytes (for a GGUF,
its metadata section), the options and those two neighbours. Every problem with a file is a
one-line `BadInput` naming the file. The vocabulary's name is the file's name.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cache import cache_root
from harness.errors import BadInput
from harness.vocab import cache, gguf_file, hf, sentencepiece, tiktoken_file
from harness.vocab.cache import Parsed
from harness.vocab.model import Encoder, Vocabulary, holes

FORMATS = ("tokenizer.json", "tiktoken", "sentencepiece", "gguf")
_EXTENSIONS = dict(zip((".json", ".tiktoken", ".model", ".gguf"), FORMATS, strict=True))
_RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} \d+")
_SIDECARS = ("generation_config.json", "tokenizer_config.json")
# Part of every cache key: bump when a parser changes what it produces.
_KEY_VERSION = b"files-1"


@dataclass(frozen=True)
class _Plan:
    """What `load` needs of one format: the bytes that key the cache, the parser (whose
    `eos_id` is -1 when the file names no EOS) and the encoder factory (picklable)."""

    content: bytes
    parse: Callable[[], Parsed]
    encoder: Callable[[], Encoder]


def detect(path: Path) -> str:
    """One of FORMATS for the file at `path`, or BadInput when it is none of them."""
    head = _head(path)
    if head[:4] == b"GGUF":
        return "gguf"
    if head[:2] == b"\x1f\x8b":  # gzip: only rank files come compressed
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head)
        except zlib.error:
            raise BadInput(f"{path}: damaged gzip data") from None
        if _RANK_LINE.fullmatch(_first_line(head)):
            return "tiktoken"
        raise BadInput(f"{path}: gzip data that is not a tiktoken rank file")
    if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
        return "tokenizer.json"
    if _RANK_LINE.fullmatch(_first_line(head)):
        return "tiktoken"
    by_extension = _EXTENSIONS.get(path.suffix.lower())
    if by_extension is not None:
        return by_extension
    if head[0] == 0x0A:  # protobuf field 1, length-delimited: ModelProto.pieces
        return "sentencepiece"
    raise BadInput(
        f"{path}: unknown vocabulary file format (expected a tokenizer.json, a tiktoken rank "
        "file, a SentencePiece .model or a GGUF)"
    )


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as file:
            head = file.read(4096)
    except OSError as error:
        raise BadInput(f"{path}: cannot read it: {error.strerror}") from None
    if not head:
        raise BadInput(f"{path}: the file is empty")
    return head


def _first_line(head: bytes) -> bytes:
    return head.split(b"\n", 1)[0].rstrip(b"\r")


def load(
    path: Path,
    *,
    eos: str | None = None,
    special_tokens: Path | None = None,
    split_pattern: str | None = None,
) -> Vocabulary:
    """The vocabulary in the file at `path`, from the cache or parsed (then cached).

    `special_tokens` (a JSON file {text: id}) applies to tiktoken rank files only;
    `split_pattern` (the pre-tokenizer's regex) to rank files and byte-level GGUFs.
    """
    path = Path(path)
    kind = detect(path)
    plan = _plan(kind, path, special_tokens, split_pattern)
    specials = b"" if special_tokens is None else _read(special_tokens)
    key = _cache_key(kind, path, plan.content, eos, specials, split_pattern)
    where = cache_root() / "vocab" / "files" / f"{key}.vocab"
    parsed = cache.read(where, path.name)
    if parsed is None:
        parsed = _parse(kind, path, plan, eos)
        _say_if_sparse(path, parsed)
        try:
            cache.write(where, path.name, parsed)
        except OSError as error:
            warnings.warn(f"could not cache vocabulary {path} at {where}: {error}", stacklevel=2)
    return Vocabulary(
        name=path.name,
        tokens=parsed.tokens,
        eos_id=parsed.eos_id,
        special_ids=parsed.special_ids,
        encoder_factory=functools.partial(_build_encoder, path, plan.encoder),
    )


def _plan(kind: str, path: Path, special_tokens: Path | None, split_pattern: str | None) -> _Plan:
    if kind != "tiktoken" and special_tokens is not None:
        raise BadInput(f"{path}: --special-tokens applies only to tiktoken rank files")
    if kind == "tiktoken":
        raw = _read(path)
        text = tiktoken_file.text_of(path, raw)
        pattern = tiktoken_file.split_pattern(path, text, split_pattern)
        specials = tiktoken_file.read_special_tokens(special_tokens)
        parse = functools.partial(tiktoken_file.parse, path, text, specials, special_tokens)
        return _Plan(raw, parse, functools.partial(_tiktoken_encoder, path, pattern))
    if kind == "gguf":
        content, strings = gguf_file.metadata(path)
        pattern, ignore_merges = gguf_file.split_settings(path, strings, split_pattern)
        build = functools.partial(gguf_file.encoder, path, pattern, ignore_merges)
        return _Plan(content, functools.partial(gguf_file.parse, path), build)
    if split_pattern is not None:
        raise BadInput(f"{path}: --split-pattern applies only to tiktoken files and GGUF BPE")
    data = _read(path)
    if kind == "tokenizer.json":
        build = functools.partial(hf.encoder, path)
        return _Plan(data, functools.partial(hf.parse, path, data), build)
    return _Plan(
        data,
        functools.partial(_spm_parse, path),
        functools.partial(sentencepiece.encoder, [path]),
    )


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise BadInput(f"{path}: cannot read it: {error.strerror}") from None


def _build_encoder(path: Path, build: Callable[[], Encoder]) -> Encoder:
    try:
        return build()
    except OSError as error:  # the file went away since it was loaded
        raise BadInput(f"{path}: cannot read it: {error.strerror}") from None


def _tiktoken_encoder(path: Path, pattern: str) -> Encoder:
    return tiktoken_file.encoder(path, tiktoken_file.text_of(path, _read(path)), pattern)


def _spm_parse(path: Path) -> Parsed:
    try:
        return sentencepiece.parse([path])
    except (RuntimeError, OSError) as error:
        message = " ".join(str(error).split())
        raise BadInput(f"{path}: not a SentencePiece model ({message})") from None


def _cache_key(
    kind: str, path: Path, content: bytes, eos: str | None, specials: bytes, pattern: str | None
) -> str:
    digest = hashlib.sha256()
    sidecars = [_optional_bytes(path.parent / name) for name in _SIDECARS]
    parts = [_KEY_VERSION, kind.encode(), path.name.encode(), specials, *sidecars]
    parts += [b"" if eos is None else b"+" + eos.encode()]
    parts += [b"" if pattern is None else b"+" + pattern.encode(), content]
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()[:32]


def _optional_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _parse(kind: str, path: Path, plan: _Plan, eos: str | None) -> Parsed:
    try:
        parsed = plan.parse()
    except BadInput:
        raise
    except (ValueError, KeyError, IndexError, TypeError, RuntimeError) as error:
        message = " ".join(str(error).split()) or type(error).__name__
        raise BadInput(f"{path}: not a valid {kind} file ({message})") from None
    return Parsed(parsed.tokens, _eos_id(path, parsed, eos), parsed.special_ids)


# --- EOS ---------------------------------------------------------------------------------


def _eos_id(path: Path, parsed: Parsed, eos: str | None) -> int:
    if eos is not None:
        if eos.isascii() and eos.isdigit():
            return _by_id(path, parsed, int(eos), "--eos")
        return _by_text(path, parsed, eos, "--eos")
    if parsed.eos_id >= 0:
        return parsed.eos_id
    generation = path.parent / "generation_config.json"
    if generation.is_file():
        value = _json_object(generation).get("eos_token_id")
        value = value[0] if isinstance(value, list) and value else value
        if isinstance(value, int) and not isinstance(value, bool):
            return _by_id(generation, parsed, value, "eos_token_id")
    config = path.parent / "tokenizer_config.json"
    if config.is_file():
        value = _json_object(config).get("eos_token")
        value = value.get("content") if isinstance(value, dict) else value
        if isinstance(value, str) and value:
            return _by_text(config, parsed, value, "eos_token")
    raise BadInput(
        f"{path}: the file names no EOS token and no generation_config.json or "
        "tokenizer_config.json beside it does; give one with --eos ID|TEXT"
    )


def _by_id(origin: Path, parsed: Parsed, token_id: int, what: str) -> int:
    last = len(parsed.tokens) - 1
    if not 0 <= token_id <= last:
        raise BadInput(f"{origin}: {what} {token_id} is not a token id (0..{last})")
    return token_id


def _by_text(origin: Path, parsed: Parsed, text: str, what: str) -> int:
    """The id whose bytes are `text`: a special one first, then the lowest."""
    wanted = text.encode()
    found = [i for i, token in enumerate(parsed.tokens) if token == wanted]
    if not found or not wanted:
        raise BadInput(f"{origin}: {what} {text!r} names no token")
    special = [i for i in found if i in parsed.special_ids]
    return (special or found)[0]


def _json_object(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_bytes())
    except OSError as error:
        raise BadInput(f"{path}: cannot read it: {error.strerror}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise BadInput(f"{path}: not JSON at line {error.lineno}: {error.msg}") from None
    if not isinstance(value, dict):
        raise BadInput(f"{path}: not a JSON object")
    return value


def _say_if_sparse(path: Path, parsed: Parsed) -> None:
    """One warning line when more than 1% of the file's ids are in none of its tables:
    they become padding (empty special ids no engine may allow), which is right for a
    model whose logits are wider than its tokenizer and a sign of a damaged file
    otherwise. Said when the file is parsed, not on every load from the cache."""
    padding = holes(parsed.tokens, parsed.special_ids)
    if padding * 100 > len(parsed.tokens):
        print(
            f"tokensieve: warning: {path}: {padding:,} of its {len(parsed.tokens):,} ids are in "
            "no table of the file; they are padding, which no engine may allow",
            file=sys.stderr,
        )
