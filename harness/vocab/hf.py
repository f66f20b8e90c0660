"""Hugging Face `tokenizer.json` files as canonical vocabularies, read with the `tokenizers`
package (see `harness.vocab.files` for the dispatch, EOS and cache).

Token strings become bytes by the file's own convention:
- byte-level BPE (a `ByteLevel` pre-tokenizer or decoder): GPT-2's byte-to-unicode alphabet
  maps back to bytes; a string with a character outside it stands for its own UTF-8, as in
  the `tokenizers` decoder;
- SentencePiece style (`Metaspace`, a `"▁"` replacement, byte fallback, Unigram): the
  replacement character is a space and, with byte fallback, `<0xNN>` is that byte.
WordPiece and WordLevel are refused: their decoders put spaces between words, so a token's
bytes depend on its neighbours. Added tokens are their text; special ones (and the model's
unknown token) are special ids; ids in no table are empty special tokens.

The encoder is the file's own `tokenizers.Tokenizer` with every prefix space switched off
(`Prepend` normalizers removed, `Metaspace` prepend scheme "never", `ByteLevel` without
prefix space), truncation and padding removed, and special added tokens encoded as text.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from harness.errors import BadInput
from harness.vocab import builtin
from harness.vocab.cache import Parsed
from harness.vocab.model import Encoder, check_ids

BYTE_LEVEL, METASPACE = "byte-level", "metaspace"
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def parse(path: Path, data: bytes) -> Parsed:
    """The vocabulary of `data` (the bytes of `path`); `eos_id` is -1: the file names none."""
    config = read_config(path, data)
    form, replacement = token_form(path, config)
    model = config["model"]
    table = _model_vocab(path, model)
    size = max([*table.values(), *(t["id"] for t in config["added_tokens"])], default=-1) + 1
    check_ids(size, f"{path} (its largest id is {size - 1:,})")
    exact_tokenizer(path, config)  # the file must load in `tokenizers` (and the encoder too)
    byte_fallback = bool(model.get("byte_fallback"))
    tokens: list[bytes | None] = [None] * size
    for text, token_id in table.items():
        if form == BYTE_LEVEL:
            tokens[token_id] = byte_level_bytes(text)
        else:
            tokens[token_id] = _metaspace_bytes(text, replacement, byte_fallback)
    special = set()
    if isinstance(model.get("unk_token"), str) and model["unk_token"] in table:
        special.add(table[model["unk_token"]])
    if isinstance(model.get("unk_id"), int) and 0 <= model["unk_id"] < size:  # Unigram
        special.add(model["unk_id"])
    for added in config["added_tokens"]:
        tokens[added["id"]] = added["content"].encode()
        if added.get("special"):
            special.add(added["id"])
    holes = {i for i, token in enumerate(tokens) if token is None}
    return Parsed(
        tokens=[token or b"" for token in tokens],
        eos_id=-1,
        special_ids=frozenset(special | holes),
    )


def encoder(path: Path) -> Encoder:
    """The file's tokenizer, made exact: text -> ids, never a special added token."""
    tokenizer = exact_tokenizer(path, read_config(path, path.read_bytes()))
    return functools.partial(_encode, tokenizer)


def _encode(tokenizer: Any, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False).ids


# --- Reading the file ----------------------------------------------------------------------


def read_config(path: Path, data: bytes) -> dict[str, Any]:
    """The parsed JSON, checked for the parts this module reads."""
    try:
        config = json.loads(data.removeprefix(b"\xef\xbb\xbf"))
    except UnicodeDecodeError as error:
        raise BadInput(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise BadInput(
            f"{path}: not JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    if not isinstance(config, dict) or not isinstance(config.get("model"), dict):
        raise BadInput(f'{path}: not a Hugging Face tokenizer.json (no "model" object)')
    added = config.setdefault("added_tokens", [])
    if not isinstance(added, list) or not all(_is_added_token(t) for t in added):
        raise BadInput(f'{path}: "added_tokens" must be a list of {{id, content}} objects')
    return config


def _is_added_token(token: Any) -> bool:
    return (
        isinstance(token, dict)
        and type(token.get("id")) is int
        and token["id"] >= 0
        and isinstance(token.get("content"), str)
    )


def model_type(model: dict[str, Any]) -> str:
    """The model's "type", inferred from its keys for files old enough to omit it."""
    if isinstance(model.get("type"), str):
        return model["type"]
    if "merges" in model:
        return "BPE"
    if isinstance(model.get("vocab"), list):
        return "Unigram"
    return "WordPiece" if "max_input_chars_per_word" in model else "WordLevel"


def token_form(path: Path, config: dict[str, Any]) -> tuple[str, str]:
    """(BYTE_LEVEL or METASPACE, the space replacement character), or BadInput."""
    model = config["model"]
    kind = model_type(model)
    if kind in ("WordPiece", "WordLevel"):
        raise BadInput(
            f"{path}: {kind} tokenizers are not supported: their decoding inserts spaces "
            "between words, so a token's bytes are not context-free"
        )
    if kind not in ("BPE", "Unigram"):
        raise BadInput(f"{path}: unknown model type {kind!r} (expected BPE or Unigram)")
    if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        raise BadInput(
            f"{path}: BPE with a subword prefix or end-of-word suffix is not supported: "
            "a token's bytes would depend on its position in a word"
        )
    parts = [
        *_components(config.get("normalizer"), "normalizers"),
        *_components(config.get("pre_tokenizer"), "pretokenizers"),
        *_components(config.get("decoder"), "decoders"),
    ]
    kinds = {part.get("type") for part in parts}
    if "ByteLevel" in kinds:
        return BYTE_LEVEL, "\u2581"
    for part in parts:
        if part.get("type") == "Metaspace":
            return METASPACE, part.get("replacement", "\u2581")
    marks = [p for p in parts if p.get("type") in ("Prepend", "Replace") and "\u2581" in str(p)]
    if marks or "ByteFallback" in kinds or kind == "Unigram":
        return METASPACE, "\u2581"
    raise BadInput(
        f"{path}: {kind} model with neither byte-level nor \u2581 (Metaspace) tokens: "
        "token bytes are not context-free"
    )


def _components(component: Any, key: str) -> list[dict[str, Any]]:
    """A normalizer, pre-tokenizer or decoder with its `Sequence` members flattened."""
    if not isinstance(component, dict):
        return []
    if component.get("type") == "Sequence":
        members = component.get(key) or []
        return [part for member in members for part in _components(member, key)]
    return [component]


def _model_vocab(path: Path, model: dict[str, Any]) -> dict[str, int]:
    vocab = model.get("vocab")
    if isinstance(vocab, dict):
        return _one_token_per_id(path, vocab)
    if isinstance(vocab, list):  # Unigram: [[piece, score], ...] indexed by id
        table: dict[str, int] = {}
        for token_id, entry in enumerate(vocab):
            table.setdefault(entry[0], token_id)
        return table
    raise BadInput(f'{path}: the model has no "vocab"')


def _one_token_per_id(path: Path, vocab: dict[str, Any]) -> dict[str, int]:
    """The model's {token: id}, each id a whole number >= 0 held by one token only (two
    tokens of one id would leave one of them out of every mask), or BadInput naming the
    first that is not."""
    holder: dict[int, str] = {}
    for text, token_id in vocab.items():
        if type(token_id) is not int or token_id < 0:
            raise BadInput(f"{path}: token {text!r} has id {token_id!r}, not a whole number >= 0")
        first = holder.setdefault(token_id, text)
        if first != text:
            raise BadInput(f"{path}: tokens {first!r} and {text!r} both have id {token_id}")
    return vocab


# --- Token bytes -------------------------------------------------------------------------


@functools.cache
def _byte_decoder() -> dict[str, int]:
    return builtin._gpt2_byte_decoder()


def byte_level_bytes(text: str) -> bytes:
    """A byte-level token string as bytes; outside the alphabet, its own UTF-8."""
    decoder = _byte_decoder()
    try:
        return bytes(decoder[char] for char in text)
    except KeyError:
        return text.encode()


def _metaspace_bytes(text: str, replacement: str, byte_fallback: bool) -> bytes:
    match = _BYTE_PIECE.fullmatch(text) if byte_fallback else None
    if match:
        return bytes([int(match.group(1), 16)])
    return text.replace(replacement, " ").encode()


# --- Exact encoder -----------------------------------------------------------------------


def exact_tokenizer(path: Path, config: dict[str, Any]) -> Any:
    """A `tokenizers.Tokenizer` for `config` with prefix spaces, truncation and padding off
    and special added tokens encoded as text (`config` is edited in place)."""
    from tokenizers import Tokenizer

    config["truncation"] = None
    config["padding"] = None
    config["normalizer"] = _without_prepend(config.get("normalizer"))
    _no_prefix_space(config.get("pre_tokenizer"))
    try:
        tokenizer = Tokenizer.from_str(json.dumps(config))
    except BaseException as error:
        # tokenizers raises a plain Exception for a malformed file, and its Rust core can
        # panic (pyo3's PanicException derives from BaseException) on inconsistent ones.
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        raise BadInput(f"{path}: tokenizers cannot load it: {_one_line(error)}") from None
    tokenizer.encode_special_tokens = True
    return tokenizer


def _without_prepend(normalizer: Any) -> Any:
    if not isinstance(normalizer, dict):
        return normalizer
    if normalizer.get("type") == "Prepend":
        return None
    if normalizer.get("type") == "Sequence":
        members = [_without_prepend(m) for m in normalizer.get("normalizers") or []]
        normalizer["normalizers"] = [m for m in members if m is not None]
    return normalizer


def _no_prefix_space(pre_tokenizer: Any) -> None:
    for part in _components(pre_tokenizer, "pretokenizers"):
        if part.get("type") == "Metaspace":
            part["prepend_scheme"] = "never"
            if "add_prefix_space" in part:
                part["add_prefix_space"] = False
        elif part.get("type") == "ByteLevel":
            part["add_prefix_space"] = False


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__
